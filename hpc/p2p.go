package hpc

import "fmt"

// p2pKey identifies a message queue of a communicator: messages from src
// to dst with tag, in communicator ranks. One FIFO queue per key gives
// MPI's non-overtaking order.
type p2pKey struct {
	src, dst, tag int
}

// msgQueue is a FIFO of payloads.
type msgQueue struct {
	msgs [][]byte
	head int
}

func (q *msgQueue) len() int { return len(q.msgs) - q.head }

func (q *msgQueue) push(m []byte) { q.msgs = append(q.msgs, m) }

func (q *msgQueue) pop() []byte {
	m := q.msgs[q.head]
	q.msgs[q.head] = nil
	q.head++
	if q.head == len(q.msgs) {
		q.msgs, q.head = q.msgs[:0], 0
	}
	return m
}

// p2pOp describes a point-to-point call for messages.
type p2pOp struct {
	name string // Send, Isend, Recv
	peer string // dest or src
	rank int
	tag  int
}

func (o p2pOp) String() string {
	return fmt.Sprintf("%s(%s=%d, tag=%d)", o.name, o.peer, o.rank, o.tag)
}

// Send delivers a copy of data to dest's queue; it never blocks.
func (c *handle) Send(dest, tag int, data []byte) error {
	return c.send(p2pOp{"Send", "dest", dest, tag}, data)
}

// Isend is Send returning a request that is already complete.
func (c *handle) Isend(dest, tag int, data []byte) (Request, error) {
	if err := c.send(p2pOp{"Isend", "dest", dest, tag}, data); err != nil {
		return nil, err
	}
	return doneRequest{}, nil
}

func (c *handle) send(op p2pOp, data []byte) error {
	if err := c.checkP2P(op); err != nil {
		return err
	}
	buf := clone(data)
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := c.usable(op, false); err != nil {
		return err
	}
	k := p2pKey{src: c.rank, dst: op.rank, tag: op.tag}
	q := c.c.queues[k]
	if q == nil {
		q = &msgQueue{}
		c.c.queues[k] = q
	}
	q.push(buf)
	h.wake(h.ranks[c.c.members[op.rank]])
	return nil
}

// Recv waits for the next message from src with tag.
func (c *handle) Recv(src, tag int) ([]byte, error) {
	op := p2pOp{"Recv", "src", src, tag}
	if err := c.checkP2P(op); err != nil {
		return nil, err
	}
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := c.usable(op, true); err != nil {
		return nil, err
	}
	w := &recvWait{c: c, op: op, key: p2pKey{src: src, dst: c.rank, tag: tag}}
	if err := h.block(c.me, w); err != nil {
		return nil, err
	}
	return c.c.queues[w.key].pop(), nil
}

// checkP2P validates the arguments of a point-to-point call.
func (c *handle) checkP2P(op p2pOp) error {
	err := c.checkRank(op.peer, op.rank)
	if err == nil && op.tag < 0 {
		err = fmt.Errorf("negative tag")
	}
	if err != nil {
		return fmt.Errorf("hpc: rank %d: %v on comm %s: %w", c.me.rank, op, c.Name(), err)
	}
	return nil
}

// recvWait is a rank blocked in Recv.
type recvWait struct {
	c   *handle
	op  p2pOp
	key p2pKey
}

func (w *recvWait) ready() bool {
	q := w.c.c.queues[w.key]
	return q != nil && q.len() > 0
}

func (w *recvWait) hopeless() (int, bool) {
	src := w.c.c.members[w.key.src]
	return src, w.key.src == w.c.rank || w.c.h.ranks[src].exited
}

func (w *recvWait) String() string {
	s := fmt.Sprintf("%v on %s", w.op, w.c.where())
	if !w.c.c.world {
		s += fmt.Sprintf(" from %s", w.c.who(w.key.src))
	}
	return s
}

// doneRequest is a completed request: in-process sends are eager.
type doneRequest struct{}

// Wait returns nil at once: the send has completed.
func (doneRequest) Wait() error { return nil }

// Test reports true: the send has completed.
func (doneRequest) Test() (bool, error) { return true, nil }
