// Package fifo provides a first-in first-out queue whose memory follows
// its backlog: the transports' mailboxes and the replay's inboxes of
// payloads shipped ahead use it.
package fifo

// Queue is a first-in first-out queue in a list of blocks. Its memory
// follows the backlog, not the number of values that ever passed: a
// queue whose consumer lags its producer by a few values is never empty,
// and one that only reset when it ran empty would keep every value
// pushed since (a root's one-way gather contributions, a whole pass's
// worth). A growing backlog takes new blocks and never moves a value: a
// queue in one slice copied itself, pointers and all, at every doubling,
// which in the message-by-message passes of an 8 M-event analysis, where
// a rank may run 100 000 messages ahead of its partner, took 0.4 s.
// Blocks grow from a few values to maxBlock; a block taken in full is
// kept for reuse while the queue has fewer spares than it may keep (one,
// unless KeepSpares said more). The zero value is an empty queue.
type Queue[T any] struct {
	head, tail *block[T] // head: the oldest values; tail: where Push writes
	first      int       // head.vals[:first] are taken (zeroed)
	n          int       // values in the queue
	spare      *block[T] // free blocks of maxBlock values, a list
	spares     int       // blocks in spare
	keep       int       // spares kept at most, beyond the first
}

// KeepSpares lets q keep up to n blocks taken in full for reuse (at
// least one, the default). A queue that fills in bursts and drains
// between them, such as the spans of the chunks a partner ships ahead,
// then takes no new blocks after its first burst; a transport's mailbox
// keeps one, so that the memory of a backlog goes when the backlog does.
func (q *Queue[T]) KeepSpares(n int) { q.keep = max(n-1, 0) }

// block is one block of a Queue: vals[:len(vals)] are written.
type block[T any] struct {
	vals []T
	next *block[T]
}

// Block sizes, in values.
const (
	minBlock = 8
	maxBlock = 256
)

// Len returns the number of values in q.
func (q *Queue[T]) Len() int { return q.n }

// Push appends v.
func (q *Queue[T]) Push(v T) {
	if q.tail == nil || len(q.tail.vals) == cap(q.tail.vals) {
		q.grow()
	}
	q.tail.vals = append(q.tail.vals, v)
	q.n++
}

// grow appends a block to the queue: twice the size of the last one, up
// to maxBlock (the spare, if any).
func (q *Queue[T]) grow() {
	size := minBlock
	if q.tail != nil {
		size = min(2*cap(q.tail.vals), maxBlock)
	}
	var b *block[T]
	if size == maxBlock && q.spare != nil {
		b, q.spare = q.spare, q.spare.next
		b.next = nil
		q.spares--
	} else {
		b = &block[T]{vals: make([]T, 0, size)}
	}
	if q.tail == nil {
		q.head, q.tail, q.first = b, b, 0
	} else {
		q.tail.next = b
		q.tail = b
	}
}

// Peek returns the first value of a non-empty queue.
func (q *Queue[T]) Peek() T { return q.head.vals[q.first] }

// Pop takes the first value of a non-empty queue.
func (q *Queue[T]) Pop() T {
	var zero T
	h := q.head
	v := h.vals[q.first]
	h.vals[q.first] = zero
	q.first++
	q.n--
	if q.first < len(h.vals) {
		return v
	}
	if h == q.tail {
		// empty: the block starts over
		h.vals, q.first = h.vals[:0], 0
		return v
	}
	if q.head, q.first = h.next, 0; cap(h.vals) == maxBlock && q.spares <= q.keep {
		h.vals, h.next = h.vals[:0], q.spare
		q.spare = h
		q.spares++
	}
	return v
}

// held returns how many values the blocks of q hold room for.
func (q *Queue[T]) held() int {
	n := 0
	for b := q.head; b != nil; b = b.next {
		n += cap(b.vals)
	}
	for b := q.spare; b != nil; b = b.next {
		n += cap(b.vals)
	}
	return n
}
