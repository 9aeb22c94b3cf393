// Package fifo provides a first-in first-out queue whose memory follows
// its backlog: the transports' mailboxes and the replay's inboxes of
// payloads shipped ahead use it.
package fifo

// Queue is a first-in first-out queue in one slice. Its memory follows
// the backlog, not the number of values that ever passed: a queue whose
// consumer lags its producer by a few values is never empty, and one
// that only reset when it ran empty would keep every value pushed since
// (a root's one-way gather contributions, a whole pass's worth); one
// that dropped its head by reslicing would copy itself to a new array
// whenever the array's end is reached. The zero value is an empty queue.
type Queue[T any] struct {
	vals []T
	head int // vals[:head] are taken (zeroed)
}

// Len returns the number of values in q.
func (q *Queue[T]) Len() int { return len(q.vals) - q.head }

// Push appends v. When the slice is full and at least half of it is
// taken, the backlog moves to the front instead of the slice growing.
func (q *Queue[T]) Push(v T) {
	if len(q.vals) == cap(q.vals) && q.head > 0 && 2*q.head >= len(q.vals) {
		n := copy(q.vals, q.vals[q.head:])
		clear(q.vals[n:])
		q.vals, q.head = q.vals[:n], 0
	}
	q.vals = append(q.vals, v)
}

// Pop takes the first value of a non-empty queue.
func (q *Queue[T]) Pop() T {
	var zero T
	v := q.vals[q.head]
	q.vals[q.head] = zero
	q.head++
	if q.head == len(q.vals) {
		q.vals, q.head = q.vals[:0], 0
	}
	return v
}
