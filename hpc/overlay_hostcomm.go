package hpc

import "fmt"

// hostShared is what the members of a hosted communicator agree on; it
// never changes.
type hostShared struct {
	id      uint64
	name    string // the name every member starts with
	members []int  // virtual world rank by communicator rank
	world   bool
	self    bool
}

// hostComm is one virtual rank's view of a communicator of a hosted run;
// it implements Comm.
type hostComm struct {
	h     *hostRun
	me    *hostRank
	s     *hostShared
	rank  int
	name  string // guarded by h.mu
	freed bool   // guarded by h.mu
	seq   int    // collectives called so far; the owning goroutine only
}

var _ Comm = (*hostComm)(nil)

func (h *hostRun) newComm(me *hostRank, s *hostShared, rank int) *hostComm {
	return &hostComm{h: h, me: me, s: s, rank: rank, name: s.name}
}

// Rank returns the calling rank's number in the communicator.
func (c *hostComm) Rank() int { return c.rank }

// Size returns the number of ranks in the communicator.
func (c *hostComm) Size() int { return len(c.s.members) }

// Name returns the communicator's name.
func (c *hostComm) Name() string {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	return c.name
}

// SetName names the communicator in this rank's error messages.
func (c *hostComm) SetName(name string) {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	c.name = name
}

// Self returns the rank's size-1 communicator.
func (c *hostComm) Self() Comm {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	if c.me.self == nil {
		s := &hostShared{id: selfID, name: "SELF", members: []int{c.me.vrank}, self: true}
		c.me.self = c.h.newComm(c.me, s, 0)
	}
	return c.me.self
}

// Free marks the communicator as released.
func (c *hostComm) Free() error {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	switch {
	case c.s.world || c.s.self:
		return fmt.Errorf("hpc: rank %d: Free of %s: not allowed", c.me.vrank, c.where())
	case c.freed:
		return &opError{kind: ErrFreed, rank: c.me.vrank,
			msg: fmt.Sprintf("hpc: rank %d: Free of %s: already freed", c.me.vrank, c.where())}
	}
	c.freed = true
	return nil
}

// usable returns an error if the call op cannot start (see
// handle.usable). The caller holds h.mu.
func (c *hostComm) usable(op fmt.Stringer, blocking bool) error {
	if c.freed {
		return &opError{kind: ErrFreed, rank: c.me.vrank,
			msg: fmt.Sprintf("hpc: rank %d: %v on %s: communicator freed", c.me.vrank, op, c.where())}
	}
	if !blocking && c.h.failure != nil {
		return c.h.failed(c.me, fmt.Sprintf("%v on %s", op, c.where()), false)
	}
	return nil
}

// where describes the communicator for messages. The caller holds h.mu.
func (c *hostComm) where() string {
	if c.s.world {
		return "comm " + c.name
	}
	return fmt.Sprintf("comm %s (rank %d of %d)", c.name, c.rank, len(c.s.members))
}

// who names communicator rank r by its world rank.
func (c *hostComm) who(r int) string { return fmt.Sprintf("rank %d", c.s.members[r]) }

func (c *hostComm) checkRank(what string, r int) error {
	if r < 0 || r >= len(c.s.members) {
		return fmt.Errorf("%s %d out of range [0, %d)", what, r, len(c.s.members))
	}
	return nil
}

func (c *hostComm) checkP2P(op p2pOp) error {
	err := c.checkRank(op.peer, op.rank)
	if err == nil && op.tag < 0 {
		err = fmt.Errorf("negative tag")
	}
	if err != nil {
		return fmt.Errorf("hpc: rank %d: %v on comm %s: %w", c.me.vrank, op, c.Name(), err)
	}
	return nil
}

// Send sends a copy of data to dest; it never waits for the receiver.
func (c *hostComm) Send(dest, tag int, data []byte) error {
	return c.send(p2pOp{"Send", "dest", dest, tag}, data)
}

// Isend is Send returning a request that is already complete: the
// payload has been copied.
func (c *hostComm) Isend(dest, tag int, data []byte) (Request, error) {
	if err := c.send(p2pOp{"Isend", "dest", dest, tag}, data); err != nil {
		return nil, err
	}
	return doneRequest{}, nil
}

func (c *hostComm) send(op p2pOp, data []byte) error {
	if err := c.checkP2P(op); err != nil {
		return err
	}
	c.h.mu.Lock()
	err := c.usable(op, false)
	c.h.mu.Unlock()
	if err != nil {
		return err
	}
	if err := c.post(c.s.members[op.rank], op.tag, data); err != nil {
		c.h.mu.Lock()
		defer c.h.mu.Unlock()
		return c.h.failed(c.me, fmt.Sprintf("%v on %s", op, c.where()), false)
	}
	return nil
}

// post sends a copy of data to virtual rank dst with tag: into its queue
// if it is local, over the link otherwise. A link error fails the run.
func (c *hostComm) post(dst, tag int, data []byte) error {
	h := c.h
	k := hostKey{comm: c.s.id, src: c.me.vrank, dst: dst, tag: tag}
	proc := h.place[dst]
	if proc == h.me {
		buf := clone(data)
		h.mu.Lock()
		h.deliver(k, buf)
		h.mu.Unlock()
		return nil
	}
	h.sent.Add(1)
	err := h.link.Send(proc, encodeData(k, data))
	if err == nil && h.poller != nil {
		err = h.poller.Progress() // this rank drives the link
	}
	if err != nil {
		h.mu.Lock()
		h.linkFailed(err)
		h.mu.Unlock()
	}
	return err
}

// Recv waits for the next message from src with tag.
func (c *hostComm) Recv(src, tag int) ([]byte, error) {
	op := p2pOp{"Recv", "src", src, tag}
	if err := c.checkP2P(op); err != nil {
		return nil, err
	}
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	if err := c.usable(op, true); err != nil {
		return nil, err
	}
	desc := func() string {
		s := fmt.Sprintf("%v on %s", op, c.where())
		if !c.s.world {
			s += " from " + c.who(src)
		}
		return s
	}
	return c.await(c.s.members[src], tag, desc)
}

// await waits for and takes the next message from virtual rank src with
// tag. The caller holds h.mu.
func (c *hostComm) await(src, tag int, desc func() string) ([]byte, error) {
	w := &hostWait{key: hostKey{comm: c.s.id, src: src, dst: c.me.vrank, tag: tag}, desc: desc}
	if err := c.h.block(c.me, w); err != nil {
		return nil, err
	}
	return c.h.take(w.key), nil
}
