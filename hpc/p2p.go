package hpc

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"scout/internal/fifo"
)

// Point-to-point messages. A message to a rank of this process goes
// straight into its mailbox, under that rank's lock only; a message to
// a rank of another process goes over the link, and that process's
// router (or its rank, polling) puts it into the mailbox.

// commInfo is what the members of a communicator agree on.
type commInfo struct {
	id      uint64
	name    string
	members []int // world rank by communicator rank
	// values the members in this process share (Comm.Shared)
	mu     sync.Mutex
	shared map[any]any
	// where the members' collectives meet when all run here (meet)
	meeting meeting
}

// Shared returns the value that the members of the communicator in this
// process share under key, made by mk at the first call.
func (c *comm) Shared(key any, mk func() any) any {
	in := c.info
	in.mu.Lock()
	defer in.mu.Unlock()
	if v, ok := in.shared[key]; ok {
		return v
	}
	if in.shared == nil {
		in.shared = map[any]any{}
	}
	v := mk()
	in.shared[key] = v
	return v
}

// Unshare drops the value shared under key.
func (c *comm) Unshare(key any) {
	in := c.info
	in.mu.Lock()
	delete(in.shared, key)
	in.mu.Unlock()
}

// Communicator ids: the world is 0; the coordinator (rank 0) of a Create
// names the new communicator (its world rank + 1) << 32 | n, for the n-th
// communicator it named.
const worldID uint64 = 0

// comm is one rank's view of a communicator; it implements Comm.
type comm struct {
	w    *world
	me   *rank
	info *commInfo
	rank int
	seq  int // collectives called so far
	// The rank's current collective call, and rank 0's buffers for the
	// members' calls: reused, so that a collective allocates nothing
	// but its result.
	cur  contrib
	in   []*contrib
	errs []string
	out  reply // rank 0's result buffer (see finish)
	// Reused for messages over the link: the encoding of the rank's
	// calls and replies (the link copies what it sends), the members'
	// calls as the coordinator decodes them (read while it computes the
	// result), and a member's result as decoded (valid until its next
	// collective on the communicator).
	wire []byte
	dec  []contrib
	got  reply
	// local tells whether every member runs in this process: 0 not yet
	// known, 1 yes (the collectives meet), 2 no
	local uint8
	// ahead holds the rank's one-way Gather calls in this process, by
	// call number modulo gatherCredit (see oneWayCall)
	ahead []contrib
}

var _ Comm = (*comm)(nil)

// Rank returns the calling rank's number in the communicator.
func (c *comm) Rank() int { return c.rank }

// Size returns the number of ranks in the communicator.
func (c *comm) Size() int { return len(c.info.members) }

// Name returns the communicator's name.
func (c *comm) Name() string { return c.info.name }

// where describes the communicator for messages.
func (c *comm) where() string {
	if c.info.id == worldID {
		return "comm " + c.info.name
	}
	return fmt.Sprintf("comm %s (rank %d of %d)", c.info.name, c.rank, len(c.info.members))
}

func (c *comm) check(op, peer string, r, tag int) error {
	switch {
	case r < 0 || r >= len(c.info.members):
		return fmt.Errorf("hpc: rank %d: %s(%s=%d, tag=%d) on %s: %s out of range [0, %d)", c.me.id, op, peer, r, tag, c.where(), peer, len(c.info.members))
	case tag < 0:
		return fmt.Errorf("hpc: rank %d: %s(%s=%d, tag=%d) on %s: negative tag", c.me.id, op, peer, r, tag, c.where())
	}
	return nil
}

// Send sends a copy of data to dest; it never waits for the receiver.
func (c *comm) Send(dest, tag int, data []byte) error { return c.send("Send", dest, tag, data, false) }

// SendOwned sends data to dest, a copy only over the link.
func (c *comm) SendOwned(dest, tag int, data []byte) error {
	return c.send("SendOwned", dest, tag, data, true)
}

// send is Send (op) or, owned, SendOwned.
func (c *comm) send(op string, dest, tag int, data []byte, owned bool) error {
	if err := c.check(op, "dest", dest, tag); err != nil {
		return err
	}
	if f := c.w.failure.Load(); f != nil {
		return c.w.failed(c.me, f, fmt.Sprintf("%s(dest=%d, tag=%d) on %s", op, dest, tag, c.where()), false)
	}
	dst := c.info.members[dest]
	if r := c.w.ranks[dst]; owned && r != nil {
		c.w.deliver(r, key{comm: c.info.id, src: c.me.id, tag: tag}, message{data: data, local: true})
		return nil
	}
	return c.post(dst, tag, data)
}

// post sends a copy of data to world rank dst with tag. A link error
// fails the run.
func (c *comm) post(dst, tag int, data []byte) error {
	w := c.w
	k := key{comm: c.info.id, src: c.me.id, tag: tag}
	if r := w.ranks[dst]; r != nil {
		w.deliverCopy(r, k, data)
		return nil
	}
	w.sent.Add(1)
	var err error
	if r, ok := w.link.(Reuser); ok {
		err = r.SendSpare(w.place[dst], appendData(r.Buffer(dataHeader+len(data)), k, dst, data))
	} else {
		err = w.link.Send(w.place[dst], encodeData(k, dst, data))
	}
	if err == nil && w.poller != nil {
		err = w.poller.Progress() // this rank drives the link
		w.drain()
	}
	if err != nil {
		w.mu.Lock()
		w.linkFailed(err)
		w.mu.Unlock()
		return w.failed(c.me, w.failure.Load(), fmt.Sprintf("Send to rank %d on %s", dst, c.where()), false)
	}
	return nil
}

// Recv waits for the next message from src with tag.
func (c *comm) Recv(src, tag int) ([]byte, error) { return c.recv(src, tag, false) }

// RecvOwned is Recv for a message the caller keeps.
func (c *comm) RecvOwned(src, tag int) ([]byte, error) { return c.recv(src, tag, true) }

// Release hands buf to the link for later messages, if it reuses
// buffers.
func (c *comm) Release(buf []byte) { c.w.reuse(message{data: buf}) }

// reuse hands the buffer of m, a message received over the link, back
// to the link, if it reuses buffers.
func (w *world) reuse(m message) {
	if r, ok := w.link.(Reuser); ok && !m.local && m.data != nil {
		r.Reuse(m.data)
	}
}

func (c *comm) recv(src, tag int, owned bool) ([]byte, error) {
	if err := c.check("Recv", "src", src, tag); err != nil {
		return nil, err
	}
	r := c.me
	// the caller is done with the last message: await hands its buffer
	// back under the lock it takes anyway
	lent := r.lent
	r.lent = nil
	m, err := c.w.await(r, wait{key: key{comm: c.info.id, src: c.info.members[src], tag: tag}, c: c, peer: src, tag: tag}, lent)
	if m.local && !owned {
		r.lent = m.data
	}
	return m.data, err
}

// deliverCopy puts a copy of data into r's mailbox, in a buffer of r's
// that a Recv returned before (no allocation once the buffers exist).
// A small message is copied under r's lock, in one critical section
// with its delivery (r's lock is contended by r and every rank that
// sends to it: bwc's mutex operations took a fifth of its processor time
// on the root-cause benchmark trace in-process, with two per message).
func (w *world) deliverCopy(r *rank, k key, data []byte) {
	r.mu.Lock()
	var buf []byte
	if n := len(r.free); n > 0 {
		buf, r.free = r.free[n-1], r.free[:n-1]
	}
	if len(data) <= copyLocked {
		w.deliverLocked(r, k, message{data: append(buf, data...), local: true})
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	w.deliver(r, k, message{data: append(buf, data...), local: true})
}

// maxFree is the most buffers a rank keeps for later messages. More
// are made only while a sender runs far ahead of its receiver (a serial
// pass: tens of thousands of messages in flight), and keeping them all
// grew the list into fresh memory, at a page fault per 4 KiB here.
const maxFree = 256

// copyLocked is the size up to which deliverCopy copies a message under
// the receiver's lock; a larger copy would hold it too long.
const copyLocked = 4 << 10

// deliver puts a message into r's mailbox and wakes r if it waits for
// it.
func (w *world) deliver(r *rank, k key, payload message) {
	r.mu.Lock()
	w.deliverLocked(r, k, payload)
	r.mu.Unlock()
}

// deliverAll delivers payload to every rank of ws at once: it holds all
// their locks while it does (taken in the order of the ranks' ids, as
// lockRanks takes them), so that none of them sees its message, or a
// failure that another's message causes, before all have theirs (a
// waiting rank takes its message before it looks for a failure).
func (w *world) deliverAll(ws []wakeMember, payload message) {
	slices.SortFunc(ws, func(a, b wakeMember) int { return cmp.Compare(a.r.id, b.r.id) })
	for _, wm := range ws {
		wm.r.mu.Lock()
	}
	for _, wm := range ws {
		w.deliverLocked(wm.r, wm.k, payload)
	}
	for _, wm := range ws {
		wm.r.mu.Unlock()
	}
}

// deliverLocked is deliver; the caller holds r.mu.
func (w *world) deliverLocked(r *rank, k key, payload message) {
	q := r.queueVia(&r.in, k)
	q.Push(payload)
	if r.wait != nil && !r.woken && r.wait.q == q {
		r.woken = true
		w.blocked.Add(-1)
		wakeRank(r)
	}
}

// queue returns the queue of key k, made if there is none; it stays
// for the next message of its key. The caller holds r.mu.
func (r *rank) queue(k key) *msgQueue {
	q := r.queues[k]
	if q == nil {
		q = &msgQueue{}
		r.queues[k] = q
	}
	return q
}

// queueVia is queue, looking at last first and remembering the queue
// there. The caller holds r.mu.
func (r *rank) queueVia(last *lastQueue, k key) *msgQueue {
	if last.q == nil || last.k != k {
		last.k, last.q = k, r.queue(k)
	}
	return last.q
}

// take pops w's message. The caller holds r.mu.
func (r *rank) take(w *wait) message { return w.q.Pop() }

// ready reports whether w's message is there. The caller holds r.mu.
func (r *rank) ready(w *wait) bool { return w.q.Len() > 0 }

// await waits until a message for wt arrives and takes it. A message
// that is there is taken even after the run failed; otherwise the run's
// failure, or a deadlock found meanwhile, ends the wait with an error.
// lent, if not nil, is the buffer of r's last receive (deliverCopy),
// which goes back to r's free buffers.
func (w *world) await(r *rank, what wait, lent []byte) (message, error) {
	r.mu.Lock()
	if lent != nil && len(r.free) < maxFree {
		r.free = append(r.free, lent[:0])
	}
	what.q = r.queueVia(&r.out, what.key)
	if r.ready(&what) {
		m := r.take(&what)
		r.mu.Unlock()
		if w.poller != nil {
			w.drain()
		}
		return m, nil
	}
	r.buf = what
	wt := &r.buf
	r.wait, r.woken = wt, false
	blocked := w.blocked.Add(1)
	r.mu.Unlock()
	if blocked == w.alive.Load() {
		w.detect()
	}
	// Look before every sleep, the first included: a failure (or a
	// message) may have come before the wait was registered, and its
	// wake-up may have coalesced with one that an earlier wait consumed.
	for first := true; ; first = false {
		if !first {
			switch {
			case w.poller != nil:
				w.poll()
			case w.shared != nil && w.driving.CompareAndSwap(false, true):
				w.drive(r)
			default:
				w.sleep(r)
			}
		}
		r.mu.Lock()
		if r.woken || r.ready(wt) {
			if !r.woken {
				w.blocked.Add(-1)
			}
			m := r.take(wt)
			r.wait, r.woken = nil, false
			r.mu.Unlock()
			return m, nil
		}
		if f := w.failure.Load(); f != nil {
			r.wait = nil
			w.blocked.Add(-1)
			r.mu.Unlock()
			return message{}, w.failed(r, f, wt.desc(), true)
		}
		r.mu.Unlock()
	}
}

// failed returns the error of rank r, in (blocked) or calling op, after
// the run failed with f.
func (w *world) failed(r *rank, f *failure, op string, blocked bool) error {
	verb := "in"
	if blocked {
		verb = "blocked in"
	}
	if f.kind == ErrAborted {
		by := ""
		if f.rank >= 0 {
			by = fmt.Sprintf("rank %d failed: ", f.rank)
		}
		return &opError{kind: ErrAborted, rank: r.id, cause: f.cause,
			msg: fmt.Sprintf("hpc: aborted: rank %d %s %s: %s%s", r.id, verb, op, by, firstLine(f.cause.Error()))}
	}
	if blocked && r.id < len(f.state) {
		// The state names the members a collective waits for.
		if s, ok := strings.CutPrefix(f.state[r.id], fmt.Sprintf("rank %d blocked in ", r.id)); ok {
			op = s
		}
	}
	return deadlockError(r.id, f.rank, verb, op, f.state)
}

// deadlockError is the error of rank me, blocked (verb) in op, when a
// deadlock was found: it names the state of the other ranks (by rank;
// empty entries are skipped), the culprit first, then by rank.
func deadlockError(me, culprit int, verb, op string, state []string) error {
	const maxShown = 8
	order := make([]int, 0, min(len(state), maxShown+1))
	if culprit >= 0 && culprit != me && culprit < len(state) && state[culprit] != "" {
		order = append(order, culprit)
	}
	more := 0
	for r := range state {
		if r != me && r != culprit && state[r] != "" {
			if len(order) == maxShown {
				more++
				continue
			}
			order = append(order, r)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "hpc: deadlock: rank %d %s %s", me, verb, op)
	for _, r := range order {
		b.WriteString("; ")
		b.WriteString(state[r])
	}
	if more > 0 {
		fmt.Fprintf(&b, "; and %d more", more)
	}
	return &opError{kind: ErrDeadlock, rank: me, msg: b.String()}
}

// message is a message in a mailbox: bytes, or, between ranks of one
// process, a collective contribution or reply itself, which spares the
// wire encoding.
type message struct {
	kind  msgKind
	local bool     // data is a buffer of the receiving rank's (deliverCopy)
	data  []byte   // msgData
	ct    *contrib // msgContrib
	out   *reply   // msgReply
	err   error    // msgContrib: the call's own error; msgReply: the collective's
}

type msgKind uint8

const (
	msgData msgKind = iota
	msgContrib
	msgReply
)

// msgQueue is a FIFO of messages.
type msgQueue = fifo.Queue[message]
