package hpc

import (
	"errors"
	"fmt"
)

// Collectives of hosted runs, on the virtual point-to-point layer. The
// n-th collective call on a communicator (its sequence number seq) is
// coordinated by rank 0 of the communicator:
//
//  1. every other member validates its call and sends it, with the
//     validation error if any, to rank 0 with the internal tag -1-2*seq;
//  2. rank 0 receives the calls in rank order, checks them as
//     RunInProcess does (the first invalid or mismatched call in rank
//     order fails the collective for every member), computes the result
//     exactly as RunInProcess does (combine and prefixes in rank order,
//     so floating-point results are bit-identical), and
//  3. sends every member its share with the internal tag -2-2*seq.
//
// User tags are non-negative, so internal messages never match a user
// receive, and each collective has its own tags. Every member waits for
// rank 0's reply, so every collective synchronizes like RunInProcess's.
// Rank 0 names the communicators made by Split and Create (see worldID),
// which needs no further messages.

// collective runs one collective call and returns the caller's result.
func (c *hostComm) collective(ct *contrib) (*collResult, error) {
	h := c.h
	h.mu.Lock()
	if err := c.usable(ct, true); err != nil {
		h.mu.Unlock()
		return nil, err
	}
	name := c.name
	h.mu.Unlock()
	seq := c.seq
	c.seq++
	callErr := c.validate(ct, seq, name)
	up, down := -1-2*seq, -2-2*seq
	n := len(c.s.members)
	coord := c.s.members[0]
	if c.rank != 0 {
		if err := c.post(coord, up, encodeContrib(ct, callErr)); err != nil {
			return nil, c.linkError(ct, seq)
		}
		h.mu.Lock()
		msg, err := c.awaitColl(coord, down, ct, seq, 0)
		h.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return decodeReply(ct.kind, ct.root, c.rank, msg)
	}

	in := make([]*contrib, n)
	errs := make([]string, n)
	in[0], errs[0] = ct, callErr
	for i := 1; i < n; i++ {
		h.mu.Lock()
		msg, err := c.awaitColl(c.s.members[i], up, ct, seq, i)
		h.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if in[i], errs[i], err = decodeContrib(msg); err != nil {
			return nil, fmt.Errorf("hpc: rank %d: %v on comm %s (call %d): from %s: %w", c.me.vrank, ct, name, seq, c.who(i), err)
		}
	}
	if err := c.admit(in, errs, seq, name); err != nil {
		reply := encodeReplyErr(err)
		for i := 1; i < n; i++ {
			if c.post(c.s.members[i], down, reply) != nil {
				return nil, c.linkError(ct, seq)
			}
		}
		return nil, err
	}
	out := c.finish(in, seq)
	for i := 1; i < n; i++ {
		if c.post(c.s.members[i], down, encodeReply(ct.kind, ct.root, i, out)) != nil {
			return nil, c.linkError(ct, seq)
		}
	}
	return decodeReply(ct.kind, ct.root, 0, encodeReply(ct.kind, ct.root, 0, out))
}

// awaitColl waits for the next message of collective call seq from
// member i. The caller holds h.mu.
func (c *hostComm) awaitColl(src, tag int, ct *contrib, seq, i int) ([]byte, error) {
	head := func() string { return fmt.Sprintf("%v on %s (call %d)", ct, c.where(), seq) }
	w := &hostWait{key: hostKey{comm: c.s.id, src: src, dst: c.me.vrank, tag: tag},
		desc: func() string { return head() + " waiting for " + c.who(i) },
		coll: &collNote{comm: c.s.id, seq: seq, members: c.s.members, head: head}}
	if err := c.h.block(c.me, w); err != nil {
		return nil, err
	}
	return c.h.take(w.key), nil
}

// linkError is the error of a collective whose message the link did not
// take.
func (c *hostComm) linkError(ct *contrib, seq int) error {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	return c.h.failed(c.me, fmt.Sprintf("%v on %s (call %d)", ct, c.where(), seq), false)
}

// validate checks the caller's own call as RunInProcess's admit does and
// returns the error message, "" if the call is valid.
func (c *hostComm) validate(ct *contrib, seq int, name string) string {
	err := checkContrib(ct, c.checkRank)
	if err == nil {
		return ""
	}
	return fmt.Sprintf("hpc: rank %d called %v on comm %s (call %d): %v", c.me.vrank, ct, name, seq, err)
}

// admit checks every member's call, in rank order, against rank 0's.
func (c *hostComm) admit(in []*contrib, errs []string, seq int, name string) error {
	for i, ct := range in {
		if errs[i] != "" {
			return errors.New(errs[i])
		}
		if !sameCall(in[0], ct) {
			return &opError{kind: ErrMismatch, rank: -1, msg: fmt.Sprintf(
				"hpc: collective mismatch on comm %s (call %d): %s called %s, %s called %s",
				name, seq, c.who(0), in[0].sig(), c.who(i), ct.sig())}
		}
	}
	return nil
}

// finish computes the result of an admitted collective, as
// handle.finish does.
func (c *hostComm) finish(in []*contrib, seq int) *collOut {
	first := in[0]
	out := &collOut{}
	switch first.kind {
	case kBcast:
		out.data = in[first.root].data
	case kGather, kAllgather:
		out.parts = make([][]byte, len(in))
		for i, ct := range in {
			out.parts[i] = ct.data
		}
	case kReduce, kAllreduce:
		acc := cloneVector(first.vec)
		for _, ct := range in[1:] {
			combine(first.op, acc, ct.vec)
		}
		out.vec = acc
	case kScan:
		out.vecs = prefixes(first.op, vecs(in))
	case kExscan:
		out.vecs = append([]Vector{nil}, prefixes(first.op, vecs(in[:len(in)-1]))...)
	case kSplit:
		out.comms = c.split(in, seq)
	case kCreate:
		ms := make([]int, len(first.members))
		for i, m := range first.members {
			ms[i] = c.s.members[m]
		}
		id, name := c.nextID(), fmt.Sprintf("%s.%d", c.s.name, seq)
		out.comms = make([]*newComm, len(in))
		for i, m := range first.members {
			out.comms[m] = &newComm{id: id, rank: i, name: name, members: ms}
		}
	}
	return out
}

// split makes the communicators of a Split (see splitGroups).
func (c *hostComm) split(in []*contrib, seq int) []*newComm {
	comms := make([]*newComm, len(in))
	colors, groups := splitGroups(in)
	for k, color := range colors {
		rs := groups[k]
		ms := make([]int, len(rs))
		for i, r := range rs {
			ms[i] = c.s.members[r]
		}
		id, name := c.nextID(), fmt.Sprintf("%s.%d[color %d]", c.s.name, seq, color)
		for i, r := range rs {
			comms[r] = &newComm{id: id, rank: i, name: name, members: ms}
		}
	}
	return comms
}

// nextID returns a communicator id no other rank makes.
func (c *hostComm) nextID() uint64 {
	id := (uint64(c.me.vrank)+1)<<32 | uint64(c.me.named)
	c.me.named++
	return id
}

// adopt makes the caller's handle of a communicator made by Split or
// Create; nil stays nil.
func (c *hostComm) adopt(nc *newComm) Comm {
	if nc == nil {
		return nil
	}
	return c.h.newComm(c.me, &hostShared{id: nc.id, name: nc.name, members: nc.members}, nc.rank)
}

// Barrier waits until every member has called it.
func (c *hostComm) Barrier() error {
	_, err := c.collective(&contrib{kind: kBarrier, root: -1})
	return err
}

// Bcast returns a copy of root's data on every member.
func (c *hostComm) Bcast(root int, data []byte) ([]byte, error) {
	ct := &contrib{kind: kBcast, root: root}
	if root == c.rank {
		ct.data = data
	}
	res, err := c.collective(ct)
	if err != nil {
		return nil, err
	}
	return res.data, nil
}

// Gather returns every member's data on root, nil on the others.
func (c *hostComm) Gather(root int, data []byte) ([][]byte, error) {
	res, err := c.collective(&contrib{kind: kGather, root: root, data: data})
	if err != nil || c.rank != root {
		return nil, err
	}
	return res.parts, nil
}

// Allgather returns every member's data on every member.
func (c *hostComm) Allgather(data []byte) ([][]byte, error) {
	res, err := c.collective(&contrib{kind: kAllgather, root: -1, data: data})
	if err != nil {
		return nil, err
	}
	return res.parts, nil
}

// Reduce returns the element-wise combination of every member's v on
// root, nil on the others.
func (c *hostComm) Reduce(root int, op Op, v Vector) (Vector, error) {
	res, err := c.collective(&contrib{kind: kReduce, root: root, op: op, vec: v})
	if err != nil || c.rank != root {
		return nil, err
	}
	return res.vec, nil
}

// Allreduce returns the element-wise combination of every member's v.
func (c *hostComm) Allreduce(op Op, v Vector) (Vector, error) {
	res, err := c.collective(&contrib{kind: kAllreduce, root: -1, op: op, vec: v})
	if err != nil {
		return nil, err
	}
	return res.vec, nil
}

// Scan returns the combination of ranks 0..Rank()'s v.
func (c *hostComm) Scan(op Op, v Vector) (Vector, error) {
	res, err := c.collective(&contrib{kind: kScan, root: -1, op: op, vec: v})
	if err != nil {
		return nil, err
	}
	return res.vec, nil
}

// Exscan returns the combination of ranks 0..Rank()-1's v, nil on rank 0.
func (c *hostComm) Exscan(op Op, v Vector) (Vector, error) {
	res, err := c.collective(&contrib{kind: kExscan, root: -1, op: op, vec: v})
	if err != nil {
		return nil, err
	}
	return res.vec, nil
}

// Split partitions the communicator by color, ordering each part by key
// and then by rank; a negative color yields nil.
func (c *hostComm) Split(color, key int) (Comm, error) {
	res, err := c.collective(&contrib{kind: kSplit, root: -1, color: color, key: key})
	if err != nil {
		return nil, err
	}
	return c.adopt(res.comm), nil
}

// Create makes a communicator of members (ranks here, in new rank
// order); ranks not listed get nil.
func (c *hostComm) Create(members []int) (Comm, error) {
	res, err := c.collective(&contrib{kind: kCreate, root: -1, members: members})
	if err != nil {
		return nil, err
	}
	return c.adopt(res.comm), nil
}
