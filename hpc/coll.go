package hpc

import (
	"errors"
	"fmt"
	"slices"
)

// Collectives, on the point-to-point layer. The n-th collective call on a
// communicator (its sequence number seq) is coordinated by its rank 0:
//
//  1. every other member checks its own call and sends it, with the
//     error of that check if any, to rank 0 with the internal tag
//     -1-2*seq;
//  2. rank 0 receives the calls in rank order, fails the collective for
//     every member at the first invalid or mismatched call in rank order,
//     or computes the result (combining in rank order, so that results
//     are bit-identical wherever the ranks run), and
//  3. sends every member its share with the internal tag -2-2*seq.
//
// User tags are non-negative, so internal messages never match a user
// receive, and each collective has tags of its own. Every member waits
// for rank 0's reply, so every collective synchronizes. Rank 0 names the
// communicators made by Create (see worldID).

// collKind is the kind of a collective call.
type collKind uint8

const (
	kAllreduce collKind = iota + 1
	kScan
	kBcast
	kCreate
)

var collNames = [...]string{kAllreduce: "Allreduce", kScan: "Scan", kBcast: "Bcast", kCreate: "Create"}

// contrib is one member's call of a collective.
type contrib struct {
	kind    collKind
	root    int // Bcast; -1 otherwise
	op      Op
	vec     []TimeRank // Allreduce, Scan
	data    []byte     // Bcast (root)
	members []int      // Create
}

// sig is the part of the call that every member must agree on.
func (ct *contrib) sig() string {
	s := collNames[ct.kind]
	switch ct.kind {
	case kBcast:
		s += fmt.Sprintf("(root=%d)", ct.root)
	case kAllreduce, kScan:
		s += fmt.Sprintf("(%v, TimeRanks[%d])", ct.op, len(ct.vec))
	case kCreate:
		s += fmt.Sprintf("(members=%v)", ct.members)
	}
	return s
}

func (ct *contrib) String() string { return ct.sig() }

// sameCall reports whether two members called the same collective.
func sameCall(a, b *contrib) bool {
	return a.kind == b.kind && a.root == b.root && a.op == b.op &&
		len(a.vec) == len(b.vec) && slices.Equal(a.members, b.members)
}

// validate checks the caller's own call.
func (c *comm) validate(ct *contrib) error {
	n := len(c.info.members)
	switch ct.kind {
	case kAllreduce, kScan:
		if ct.op != MaxLoc && ct.op != MinLoc {
			return fmt.Errorf("operation %v does not apply to TimeRanks", ct.op)
		}
	case kBcast:
		if ct.root < 0 || ct.root >= n {
			return fmt.Errorf("root %d out of range [0, %d)", ct.root, n)
		}
	case kCreate:
		seen := make(map[int]bool, len(ct.members))
		for _, m := range ct.members {
			if m < 0 || m >= n || seen[m] {
				return fmt.Errorf("member %d out of range [0, %d) or listed twice", m, n)
			}
			seen[m] = true
		}
	}
	return nil
}

// collective runs one collective call and returns the caller's result.
func (c *comm) collective(ct *contrib) (*reply, error) {
	w := c.w
	if f := w.failure.Load(); f != nil {
		return nil, w.failed(c.me, f, fmt.Sprintf("%v on %s", ct, c.where()), false)
	}
	seq := c.seq
	c.seq++
	callErr := ""
	if err := c.validate(ct); err != nil {
		callErr = fmt.Sprintf("hpc: rank %d called %v on comm %s (call %d): %v", c.me.id, ct, c.info.name, seq, err)
	}
	up, down := -1-2*seq, -2-2*seq
	n := len(c.info.members)
	if c.rank != 0 {
		if err := c.postColl(0, up, &contribMsg{ct, callErr}, func() []byte { return encodeContrib(ct, callErr) }); err != nil {
			return nil, err
		}
		m, err := c.awaitColl(0, down, ct, seq)
		if err != nil {
			return nil, err
		}
		if rm, ok := m.obj.(replyMsg); ok {
			return rm.out.share(ct.kind, c.rank), rm.err
		}
		return decodeReply(ct.kind, c.rank, m.data)
	}
	in := make([]*contrib, n)
	errs := make([]string, n)
	in[0], errs[0] = ct, callErr
	for i := 1; i < n; i++ {
		m, err := c.awaitColl(i, up, ct, seq)
		if err != nil {
			return nil, err
		}
		if cm, ok := m.obj.(*contribMsg); ok {
			in[i], errs[i] = cm.ct, cm.callErr
		} else if in[i], errs[i], err = decodeContrib(m.data); err != nil {
			return nil, fmt.Errorf("hpc: rank %d: %v on comm %s (call %d): from rank %d: %w", c.me.id, ct, c.info.name, seq, c.info.members[i], err)
		}
	}
	var out *reply
	err := c.admit(in, errs, seq)
	if err == nil {
		out = c.finish(in, seq)
	}
	for i := 1; i < n; i++ {
		encode := func() []byte {
			if err != nil {
				return encodeReplyErr(err)
			}
			return encodeReply(ct.kind, i, out)
		}
		if perr := c.postColl(i, down, replyMsg{out, err}, encode); perr != nil {
			return nil, perr
		}
	}
	if err != nil {
		return nil, err
	}
	return out.share(ct.kind, 0), nil
}

// contribMsg is a contribution to a collective between ranks of one
// process; replyMsg is the coordinator's reply.
type contribMsg struct {
	ct      *contrib
	callErr string
}

type replyMsg struct {
	out *reply
	err error
}

// postColl sends a collective's message to member i: obj itself if the
// member is a rank of this process, else its encoding.
func (c *comm) postColl(i, tag int, obj any, encode func() []byte) error {
	dst := c.info.members[i]
	if r := c.w.ranks[dst]; r != nil {
		c.w.deliver(r, key{comm: c.info.id, src: c.me.id, tag: tag}, message{obj: obj})
		return nil
	}
	return c.post(dst, tag, encode())
}

// share returns member i's own copy of its share of a result.
func (out *reply) share(kind collKind, i int) *reply {
	if out == nil {
		return nil
	}
	switch kind {
	case kAllreduce:
		return &reply{vec: slices.Clone(out.vec)}
	case kScan:
		return &reply{vec: slices.Clone(out.vecs[i])}
	case kBcast:
		return &reply{data: append([]byte{}, out.data...)}
	case kCreate:
		return &reply{comm: out.comms[i], rank: out.newRank[i]}
	}
	return nil
}

// awaitColl waits for the next message of collective call seq from
// member i.
func (c *comm) awaitColl(i, tag int, ct *contrib, seq int) (message, error) {
	return c.w.await(c.me, wait{key: key{comm: c.info.id, src: c.info.members[i], tag: tag}, c: c, peer: i, tag: tag, ct: ct, seq: seq})
}

// admit checks every member's call, in rank order, against rank 0's.
func (c *comm) admit(in []*contrib, errs []string, seq int) error {
	for i, ct := range in {
		if errs[i] != "" {
			return errors.New(errs[i])
		}
		if !sameCall(in[0], ct) {
			return &opError{kind: ErrMismatch, rank: -1, msg: fmt.Sprintf(
				"hpc: collective mismatch on comm %s (call %d): rank %d called %s, rank %d called %s",
				c.info.name, seq, c.info.members[0], in[0].sig(), c.info.members[i], ct.sig())}
		}
	}
	return nil
}

// reply is a collective's result: as the coordinator computes it, and a
// member's share of it.
type reply struct {
	vec     []TimeRank   // Allreduce, a member's Scan prefix
	vecs    [][]TimeRank // Scan: by rank (coordinator)
	data    []byte       // Bcast
	comms   []*commInfo  // Create: by rank (coordinator)
	newRank []int        // Create: by rank, the rank in the new communicator
	comm    *commInfo    // Create: a member's new communicator, nil for none
	rank    int          // Create: the member's rank in it
}

// finish computes the result of an admitted collective.
func (c *comm) finish(in []*contrib, seq int) *reply {
	first := in[0]
	out := &reply{}
	switch first.kind {
	case kAllreduce:
		out.vec = slices.Clone(first.vec)
		for _, ct := range in[1:] {
			combine(first.op, out.vec, ct.vec)
		}
	case kScan:
		out.vecs = make([][]TimeRank, len(in))
		out.vecs[0] = slices.Clone(first.vec)
		for i := 1; i < len(in); i++ {
			out.vecs[i] = slices.Clone(out.vecs[i-1])
			combine(first.op, out.vecs[i], in[i].vec)
		}
	case kBcast:
		out.data = in[first.root].data
	case kCreate:
		nc := &commInfo{id: (uint64(c.me.id)+1)<<32 | uint64(c.me.named), name: fmt.Sprintf("%s.%d", c.info.name, seq)}
		c.me.named++
		for _, m := range first.members {
			nc.members = append(nc.members, c.info.members[m])
		}
		out.comms, out.newRank = make([]*commInfo, len(in)), make([]int, len(in))
		for i, m := range first.members {
			out.comms[m], out.newRank[m] = nc, i
		}
	}
	return out
}

// Allreduce returns the element-wise combination of every member's v.
func (c *comm) Allreduce(op Op, v []TimeRank) ([]TimeRank, error) {
	res, err := c.collective(&contrib{kind: kAllreduce, root: -1, op: op, vec: v})
	if err != nil {
		return nil, err
	}
	return res.vec, nil
}

// Scan returns the inclusive prefix combination up to the caller.
func (c *comm) Scan(op Op, v []TimeRank) ([]TimeRank, error) {
	res, err := c.collective(&contrib{kind: kScan, root: -1, op: op, vec: v})
	if err != nil {
		return nil, err
	}
	return res.vec, nil
}

// Bcast returns a copy of root's data on every member.
func (c *comm) Bcast(root int, data []byte) ([]byte, error) {
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

// Create makes a communicator of members (ranks here, in new rank order);
// ranks not listed get nil.
func (c *comm) Create(members []int) (Comm, error) {
	res, err := c.collective(&contrib{kind: kCreate, root: -1, members: slices.Clone(members)})
	if err != nil || res.comm == nil {
		return nil, err
	}
	return &comm{w: c.w, me: c.me, info: res.comm, rank: res.rank}, nil
}
