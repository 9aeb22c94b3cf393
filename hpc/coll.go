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
// for rank 0's reply, so every collective synchronizes, but for Gather
// in-process and with one rank per process: its root coordinates it, and
// the other members send their data and go on without a reply
// (collective). Rank 0 names the communicators made by Create (see
// worldID).

// collKind is the kind of a collective call.
type collKind uint8

const (
	kAllreduce collKind = iota + 1
	kScan
	kBcast
	kCreate
	kAllreduceFloats
	kReduceFloats
	kGather
	kSplit
	numCollKinds
)

var collNames = [...]string{kAllreduce: "Allreduce", kScan: "Scan", kBcast: "Bcast", kCreate: "Create",
	kAllreduceFloats: "AllreduceFloats", kReduceFloats: "ReduceFloats", kGather: "Gather", kSplit: "Split"}

// contrib is one member's call of a collective.
type contrib struct {
	kind    collKind
	root    int // Bcast, ReduceFloats, Gather; -1 otherwise
	op      Op
	vec     []TimeRank // Allreduce, Scan
	fvec    []float64  // AllreduceFloats, ReduceFloats
	data    []byte     // Bcast (root), Gather
	members []int      // Create
	color   int        // Split: the member's own color (need not agree)
}

// sig is the part of the call that every member must agree on.
func (ct *contrib) sig() string {
	s := collNames[ct.kind]
	switch ct.kind {
	case kBcast, kGather:
		s += fmt.Sprintf("(root=%d)", ct.root)
	case kAllreduce, kScan:
		s += fmt.Sprintf("(%v, TimeRanks[%d])", ct.op, len(ct.vec))
	case kAllreduceFloats:
		s += fmt.Sprintf("(%v, Floats[%d])", ct.op, len(ct.fvec))
	case kReduceFloats:
		s += fmt.Sprintf("(root=%d, %v, Floats[%d])", ct.root, ct.op, len(ct.fvec))
	case kCreate:
		s += fmt.Sprintf("(members=%v)", ct.members)
	}
	return s
}

func (ct *contrib) String() string { return ct.sig() }

// sameCall reports whether two members called the same collective.
func sameCall(a, b *contrib) bool {
	return a.kind == b.kind && a.root == b.root && a.op == b.op &&
		len(a.vec) == len(b.vec) && len(a.fvec) == len(b.fvec) && sameInts(a.members, b.members)
}

// sameInts reports whether a and b hold the same ints; the common case
// of members passing one shared list takes no time.
func sameInts(a, b []int) bool {
	if len(a) == len(b) && len(a) > 0 && &a[0] == &b[0] {
		return true
	}
	return slices.Equal(a, b)
}

// validate checks the caller's own call.
func (c *comm) validate(ct *contrib) error {
	n := len(c.info.members)
	switch ct.kind {
	case kAllreduce, kScan:
		if ct.op != MaxLoc && ct.op != MinLoc {
			return fmt.Errorf("operation %v does not apply to TimeRanks", ct.op)
		}
	case kAllreduceFloats, kReduceFloats:
		if !floatOp(ct.op) {
			return fmt.Errorf("operation %v does not apply to floats", ct.op)
		}
		if ct.kind == kReduceFloats && (ct.root < 0 || ct.root >= n) {
			return fmt.Errorf("root %d out of range [0, %d)", ct.root, n)
		}
	case kBcast, kGather:
		if ct.root < 0 || ct.root >= n {
			return fmt.Errorf("root %d out of range [0, %d)", ct.root, n)
		}
	case kCreate:
		// Every member's list must equal rank 0's (sameCall), so rank 0
		// alone checks its own: O(members) per Create, not O(members²).
		if c.rank != 0 {
			break
		}
		seen := make([]bool, n)
		for _, m := range ct.members {
			if m < 0 || m >= n || seen[m] {
				return fmt.Errorf("member %d out of range [0, %d) or listed twice", m, n)
			}
			seen[m] = true
		}
	}
	return nil
}

// Internal tags of collectives: contributions go up to rank 0, replies
// down. User tags are non-negative, so internal messages never match a
// user receive; and as messages between two ranks are received in the
// order they were sent, and every member calls the collectives of a
// communicator in the same order, the n-th message up from a member is
// its n-th call.
const (
	tagUp   = -1
	tagDown = -2
)

// collective runs one collective call; it returns the coordinator's
// result and the caller's rank (see reply.member).
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
	if c.meets() {
		return c.meet(ct, seq, callErr)
	}
	n := len(c.info.members)
	// A Gather is coordinated by its root, and its other members do not
	// wait: they hand their data over (a copy, as they may reuse theirs
	// at once) and go on. Nothing comes back to them, so a replay whose
	// root alone needs the result (bwc's delay costs) runs ahead instead
	// of in lockstep; a failed gather fails on the root (and the run).
	// Every gatherCredit-th Gather on a communicator waits for the root
	// all the same, so that its members run at most that many calls
	// ahead and the root holds at most that many of their contributions.
	// (Without that bound, members far ahead made bwc 3-4 times slower
	// with hosted ranks, 1 < M < N, which then synchronised every
	// Gather: the HPCG-like trace's full analysis at M = 2 took 3.5-3.7 s
	// that way, 2.9-3.0 s with one-way Gathers and the credit.)
	coord, oneWay := 0, false
	if ct.kind == kGather && callErr == "" {
		coord, oneWay = ct.root, seq%gatherCredit != gatherCredit-1
	}
	if c.rank != coord {
		if oneWay {
			up := c.oneWayCall(ct, seq)
			return nil, c.postColl(coord, tagUp, message{kind: msgContrib, ct: up},
				func() []byte { c.wire = encodeContrib(c.wire[:0], ct, ""); return c.wire })
		}
		if err := c.postColl(coord, tagUp, message{kind: msgContrib, ct: ct, err: errString(callErr)},
			func() []byte { c.wire = encodeContrib(c.wire[:0], ct, callErr); return c.wire }); err != nil {
			return nil, err
		}
		m, err := c.awaitColl(coord, tagDown, ct, seq)
		if err != nil {
			return nil, err
		}
		if m.kind == msgReply {
			return m.out, m.err
		}
		res, err := decodeReply(ct.kind, c.rank, m.data, &c.got)
		w.reuse(m) // decoding copied what it needs
		if err == nil && res.comm != nil {
			res.comm = w.sharedComm(res.comm)
		}
		return res, err
	}
	if len(c.in) != n {
		c.in, c.errs, c.dec = make([]*contrib, n), make([]string, n), make([]contrib, n)
	}
	in, errs := c.in, c.errs
	in[coord], errs[coord] = ct, callErr
	for i := range n {
		if i == coord {
			continue
		}
		m, err := c.awaitColl(i, tagUp, ct, seq)
		if err != nil {
			return nil, err
		}
		if m.kind == msgContrib {
			in[i], errs[i] = m.ct, ""
			if m.err != nil {
				errs[i] = m.err.Error()
			}
		} else {
			in[i], errs[i], err = decodeContrib(m.data, ct.members, &c.dec[i])
			w.reuse(m) // decoding copied what it needs
			if err != nil {
				return nil, fmt.Errorf("hpc: rank %d: %v on comm %s (call %d): from rank %d: %w", c.me.id, ct, c.info.name, seq, c.info.members[i], err)
			}
		}
	}
	var out *reply
	err := c.admit(in, errs, seq)
	if err == nil {
		out = c.finish(&c.out, in, seq, c.me)
	}
	clear(in) // the members' calls may be reused once they have the reply
	if oneWay {
		return out, err
	}
	// On an error the members of this process get it at once, after the
	// others (deliverAll): one that returns it fails the run, and a
	// member told after that would return the abort instead.
	var local []wakeMember
	for i := range n {
		if i == coord {
			continue
		}
		if r := w.ranks[c.info.members[i]]; r != nil && err != nil {
			local = append(local, wakeMember{r, key{comm: c.info.id, src: c.me.id, tag: tagDown}})
			continue
		}
		encode := func() []byte {
			if err != nil {
				c.wire = encodeReplyErr(c.wire[:0], err)
			} else {
				c.wire = encodeReply(c.wire[:0], ct.kind, i, out)
			}
			return c.wire
		}
		if perr := c.postColl(i, tagDown, message{kind: msgReply, out: out, err: err}, encode); perr != nil {
			return nil, perr
		}
	}
	if len(local) > 0 {
		w.deliverAll(local, message{kind: msgReply, err: err})
	}
	return out, err
}

// gatherCredit is how many one-way Gathers on a communicator a member
// may run ahead of the root (see collective).
const gatherCredit = 64

// oneWayCall returns a copy of the rank's one-way Gather call seq (ct),
// which the caller may reuse at once, in the slot of seq modulo
// gatherCredit: the call that used the slot before (seq − gatherCredit)
// is complete, and its coordinator done with it, since the call of the
// credit between them waited for the coordinator's reply and calls
// complete in order. (A copy of its own for every call cost two
// allocations a Gather: bwc makes one per member of every collective.)
func (c *comm) oneWayCall(ct *contrib, seq int) *contrib {
	k := seq % gatherCredit
	for len(c.ahead) <= k {
		// (grown as used, for the many ranks that gather little: a
		// call in flight keeps the old array's slot, whose data is
		// written again only after that call is complete)
		c.ahead = append(c.ahead, contrib{})
	}
	up := &c.ahead[k]
	up.kind, up.root = kGather, ct.root
	up.data = append(up.data[:0], ct.data...)
	return up
}

// errString is s as an error, nil for "".
func errString(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}

// postColl sends a collective's message to member i: m itself if the
// member is a rank of this process, else its encoding.
func (c *comm) postColl(i, tag int, m message, encode func() []byte) error {
	dst := c.info.members[i]
	if r := c.w.ranks[dst]; r != nil {
		c.w.deliver(r, key{comm: c.info.id, src: c.me.id, tag: tag}, m)
		return nil
	}
	return c.post(dst, tag, encode())
}

// share returns member i's share of a result: its prefix of a Scan, its
// communicator of a Create, the result of the others. A reply decoded
// from the wire holds the member's share only (member).
func (out *reply) share(kind collKind, i int) (vec []TimeRank, comm *commInfo, rank int) {
	switch {
	case out.member:
		return out.vec, out.comm, out.rank
	case kind == kScan:
		return out.vecs[i], nil, 0
	case kind == kCreate || kind == kSplit:
		return nil, out.comms[i], out.newRank[i]
	}
	return out.vec, nil, 0
}

// awaitColl waits for the next message of collective call seq from
// member i.
func (c *comm) awaitColl(i, tag int, ct *contrib, seq int) (message, error) {
	return c.w.await(c.me, wait{key: key{comm: c.info.id, src: c.info.members[i], tag: tag}, c: c, peer: i, tag: tag, ct: ct, seq: seq}, nil)
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
	fvec    []float64    // AllreduceFloats, ReduceFloats (a member's share: nil but on the root)
	root    int          // ReduceFloats: the member that gets fvec
	vecs    [][]TimeRank // Scan: by rank (coordinator)
	data    []byte       // Bcast
	datas   [][]byte     // Gather: by rank (the root's share), slices of gbuf
	gbuf    []byte
	comms   []*commInfo // Create: by rank (coordinator)
	newRank []int       // Create: by rank, the rank in the new communicator
	comm    *commInfo   // Create: a member's new communicator, nil for none
	rank    int         // Create: the member's rank in it
	// member: the reply holds one member's share only (vec, comm,
	// rank), as decoded from the wire.
	member bool
}

// finish computes the result of an admitted collective.
//
// The result lives in the coordinator's reply buffer, reused by the next
// call: when rank 0 computes call k+1, every member has called it, so
// none still reads the result of call k (results are valid until the
// member's next collective on the communicator).
func (c *comm) finish(out *reply, in []*contrib, seq int, namer *rank) *reply {
	first := in[0]
	out.member = false
	switch first.kind {
	case kAllreduce:
		out.vec = append(out.vec[:0], first.vec...)
		for _, ct := range in[1:] {
			combine(first.op, out.vec, ct.vec)
		}
	case kScan:
		for len(out.vecs) < len(in) {
			out.vecs = append(out.vecs, nil)
		}
		out.vecs = out.vecs[:len(in)]
		out.vecs[0] = append(out.vecs[0][:0], first.vec...)
		for i := 1; i < len(in); i++ {
			out.vecs[i] = append(out.vecs[i][:0], out.vecs[i-1]...)
			combine(first.op, out.vecs[i], in[i].vec)
		}
	case kAllreduceFloats, kReduceFloats:
		out.root = first.root
		out.fvec = append(out.fvec[:0], first.fvec...)
		for _, ct := range in[1:] {
			out.fvec = combineFloats(first.op, out.fvec, ct.fvec)
		}
	case kBcast:
		out.data = append(out.data[:0], in[first.root].data...) // the root may reuse its buffer
	case kGather:
		// copied: the members may reuse their buffers once they have
		// the reply, the root reads the result until its next call
		out.root = first.root
		out.gbuf = out.gbuf[:0]
		for _, ct := range in {
			out.gbuf = append(out.gbuf, ct.data...)
		}
		out.datas = out.datas[:0]
		at := 0
		for _, ct := range in {
			out.datas = append(out.datas, out.gbuf[at:at+len(ct.data):at+len(ct.data)])
			at += len(ct.data)
		}
	case kSplit:
		// one communicator per color ≥ 0, members in rank order
		out.comms, out.newRank = make([]*commInfo, len(in)), make([]int, len(in))
		byColor := map[int]*commInfo{}
		for i, ct := range in {
			if ct.color < 0 {
				continue
			}
			nc := byColor[ct.color]
			if nc == nil {
				nc = &commInfo{id: (uint64(namer.id)+1)<<32 | uint64(namer.named), name: fmt.Sprintf("%s.%d.%d", c.info.name, seq, ct.color)}
				namer.named++
				byColor[ct.color] = nc
			}
			out.comms[i], out.newRank[i] = nc, len(nc.members)
			nc.members = append(nc.members, c.info.members[i])
		}
	case kCreate:
		nc := &commInfo{id: (uint64(namer.id)+1)<<32 | uint64(namer.named), name: fmt.Sprintf("%s.%d", c.info.name, seq)}
		namer.named++
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
// The result is shared by the members: read it, do not change it; it is
// valid until the caller's next collective on the communicator.
func (c *comm) Allreduce(op Op, v []TimeRank) ([]TimeRank, error) {
	c.cur = contrib{kind: kAllreduce, root: -1, op: op, vec: v}
	res, err := c.collective(&c.cur)
	if err != nil {
		return nil, err
	}
	vec, _, _ := res.share(kAllreduce, c.rank)
	return vec, nil
}

// Scan returns the inclusive prefix combination up to the caller. The
// result is shared by the members: read it, do not change it.
func (c *comm) Scan(op Op, v []TimeRank) ([]TimeRank, error) {
	c.cur = contrib{kind: kScan, root: -1, op: op, vec: v}
	res, err := c.collective(&c.cur)
	if err != nil {
		return nil, err
	}
	vec, _, _ := res.share(kScan, c.rank)
	return vec, nil
}

// AllreduceFloats returns the element-wise combination of every
// member's v, added or compared in rank order. The result is shared by
// the members: read it, do not change it.
func (c *comm) AllreduceFloats(op Op, v []float64) ([]float64, error) {
	c.cur = contrib{kind: kAllreduceFloats, root: -1, op: op, fvec: v}
	res, err := c.collective(&c.cur)
	if err != nil {
		return nil, err
	}
	return res.fvec, nil
}

// ReduceFloats returns the element-wise combination of every member's v
// on root, nil on the other members.
func (c *comm) ReduceFloats(op Op, root int, v []float64) ([]float64, error) {
	c.cur = contrib{kind: kReduceFloats, root: root, op: op, fvec: v}
	res, err := c.collective(&c.cur)
	if err != nil || c.rank != root {
		return nil, err
	}
	return res.fvec, nil
}

// Gather returns on root every member's data, by rank, nil on the
// others; the result is the root's until its next collective on the
// communicator.
func (c *comm) Gather(root int, data []byte) ([][]byte, error) {
	c.cur = contrib{kind: kGather, root: root, data: data}
	res, err := c.collective(&c.cur)
	if err != nil || c.rank != root {
		return nil, err
	}
	return res.datas, nil
}

// Bcast returns root's data on every member, shared by the members:
// read it, do not change it.
func (c *comm) Bcast(root int, data []byte) ([]byte, error) {
	c.cur = contrib{kind: kBcast, root: root}
	if root == c.rank {
		c.cur.data = data
	}
	res, err := c.collective(&c.cur)
	if err != nil {
		return nil, err
	}
	return res.data, nil
}

// Create makes a communicator of members (ranks here, in new rank order);
// ranks not listed get nil.
func (c *comm) Create(members []int) (Comm, error) {
	// members is read during the call only (every member waits for the
	// reply), so it needs no copy: in the replay all ranks pass one
	// shared list.
	c.cur = contrib{kind: kCreate, root: -1, members: members}
	res, err := c.collective(&c.cur)
	if err != nil {
		return nil, err
	}
	return c.made(res, kCreate), nil
}

// Split makes one communicator of the members of each color (MPI_Comm_split
// with the rank as key).
func (c *comm) Split(color int) (Comm, error) {
	c.cur = contrib{kind: kSplit, root: -1, color: color}
	res, err := c.collective(&c.cur)
	if err != nil {
		return nil, err
	}
	return c.made(res, kSplit), nil
}

// made returns the caller's communicator of a Create or Split, nil for
// none.
func (c *comm) made(res *reply, kind collKind) Comm {
	_, nc, rank := res.share(kind, c.rank)
	if nc == nil {
		return nil
	}
	return &comm{w: c.w, me: c.me, info: nc, rank: rank}
}
