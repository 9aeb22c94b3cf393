package hpc

import (
	"cmp"
	"fmt"
	"slices"
)

// Collectives. The n-th collective call of every member of a communicator
// meets in slot n of that communicator: each member deposits its
// contribution, checked against the first one's signature; the last to
// arrive computes the result once, in rank order, and wakes the others.
// Results are immutable once computed, so members copy their share out
// after leaving the lock.

// collKind is the kind of a collective call.
type collKind uint8

const (
	kBarrier collKind = iota + 1
	kBcast
	kGather
	kAllgather
	kReduce
	kAllreduce
	kScan
	kExscan
	kSplit
	kCreate
)

var collNames = [...]string{
	kBarrier: "Barrier", kBcast: "Bcast", kGather: "Gather", kAllgather: "Allgather",
	kReduce: "Reduce", kAllreduce: "Allreduce", kScan: "Scan", kExscan: "Exscan",
	kSplit: "Split", kCreate: "Create",
}

// contrib is one member's call of a collective.
type contrib struct {
	kind       collKind
	root       int // -1 if the collective has none
	op         Op
	vec        Vector // reductions: private copy
	data       []byte // Bcast (root), Gather, Allgather: private copy
	color, key int    // Split
	members    []int  // Create: private copy
}

// sig is the part of the call that every member must agree on.
func (ct *contrib) sig() string {
	s := collNames[ct.kind]
	switch ct.kind {
	case kBcast, kGather:
		s += fmt.Sprintf("(root=%d)", ct.root)
	case kReduce:
		s += fmt.Sprintf("(root=%d, %v, %s[%d])", ct.root, ct.op, typeName(ct.vec), lenOf(ct.vec))
	case kAllreduce, kScan, kExscan:
		s += fmt.Sprintf("(%v, %s[%d])", ct.op, typeName(ct.vec), lenOf(ct.vec))
	case kCreate:
		s += "(members=" + intList(ct.members) + ")"
	}
	return s
}

// String describes the call including the arguments that may differ
// between members.
func (ct *contrib) String() string {
	if ct.kind == kSplit {
		return fmt.Sprintf("Split(color=%d, key=%d)", ct.color, ct.key)
	}
	return ct.sig()
}

func lenOf(v Vector) int {
	if v == nil {
		return 0
	}
	return v.Len()
}

// intList formats a list of ranks, shortening long ones.
func intList(rs []int) string {
	const maxShown = 16
	if len(rs) <= maxShown {
		return fmt.Sprint(rs)
	}
	head := fmt.Sprint(rs[:maxShown])
	return fmt.Sprintf("%s ...] (%d ranks)", head[:len(head)-1], len(rs))
}

// slot is one collective call of all members of a communicator.
type slot struct {
	seq      int
	in       []*contrib // by communicator rank, nil until arrived
	first    int        // communicator rank of the first to arrive
	arrived  int
	taken    int   // members that left with the result
	err      error // invalid or mismatched call, seen by every member
	out      any   // result, immutable once set
	complete bool
}

// collective deposits ct in the caller's next slot and waits until every
// member has arrived. It returns the completed slot.
func (c *handle) collective(ct *contrib) (*slot, error) {
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := c.usable(ct, true); err != nil {
		return nil, err
	}
	n := len(c.c.members)
	seq := c.seq
	c.seq++
	s := c.c.slots[seq]
	if s == nil {
		s = &slot{seq: seq, in: make([]*contrib, n), first: c.rank}
		c.c.slots[seq] = s
	}
	s.in[c.rank] = ct
	s.arrived++
	if s.err == nil {
		s.err = c.admit(s, ct)
		if s.err == nil && s.arrived == n {
			s.out = c.finish(s)
			s.complete = true
		}
		if s.err != nil || s.complete {
			for _, m := range c.c.members {
				h.wake(h.ranks[m])
			}
		}
	}
	if err := h.block(c.me, &collWait{c: c, s: s, ct: ct}); err != nil {
		return nil, err
	}
	s.taken++
	if s.taken == n {
		delete(c.c.slots, seq)
	}
	return s, s.err
}

// checkContrib validates the arguments of one rank's collective call:
// the root, the reduction operation and the members of a new
// communicator, with the communicator's check of a rank.
func checkContrib(ct *contrib, checkRank func(what string, r int) error) error {
	switch ct.kind {
	case kBcast, kGather:
		return checkRank("root", ct.root)
	case kReduce:
		if err := checkRank("root", ct.root); err != nil {
			return err
		}
		return checkOp(ct.op, ct.vec)
	case kAllreduce, kScan, kExscan:
		return checkOp(ct.op, ct.vec)
	case kCreate:
		return checkMembers(ct.members, checkRank)
	}
	return nil
}

// admit validates ct and checks it against the first member's call.
func (c *handle) admit(s *slot, ct *contrib) error {
	if err := checkContrib(ct, c.checkRank); err != nil {
		return fmt.Errorf("hpc: rank %d called %v on comm %s (call %d): %w", c.me.rank, ct, c.name, s.seq, err)
	}
	ref := s.in[s.first]
	if !sameCall(ref, ct) {
		return &opError{kind: ErrMismatch, rank: -1, msg: fmt.Sprintf(
			"hpc: collective mismatch on comm %s (call %d): %s called %s, %s called %s",
			c.name, s.seq, c.who(s.first), ref.sig(), c.who(c.rank), ct.sig())}
	}
	return nil
}

// sameCall reports whether a and b agree on everything every member must
// pass alike.
func sameCall(a, b *contrib) bool {
	return a.kind == b.kind && a.root == b.root && a.op == b.op &&
		typeName(a.vec) == typeName(b.vec) && lenOf(a.vec) == lenOf(b.vec) &&
		slices.Equal(a.members, b.members)
}

// checkMembers validates the member list of Create: valid ranks, each
// once.
func checkMembers(ms []int, checkRank func(what string, r int) error) error {
	seen := make(map[int]bool, len(ms))
	for _, m := range ms {
		if err := checkRank("member", m); err != nil {
			return err
		}
		if seen[m] {
			return fmt.Errorf("member %d listed twice", m)
		}
		seen[m] = true
	}
	return nil
}

// finish computes the result of a slot every member has joined.
func (c *handle) finish(s *slot) any {
	in := s.in
	first := in[0]
	switch first.kind {
	case kBcast:
		return in[first.root].data
	case kGather, kAllgather:
		out := make([][]byte, len(in))
		for i, ct := range in {
			out[i] = ct.data
		}
		return out
	case kReduce, kAllreduce:
		acc := cloneVector(first.vec)
		for _, ct := range in[1:] {
			combine(first.op, acc, ct.vec)
		}
		return acc
	case kScan:
		return prefixes(first.op, vecs(in))
	case kExscan:
		return append([]Vector{nil}, prefixes(first.op, vecs(in[:len(in)-1]))...)
	case kSplit:
		return c.splitResult(s)
	case kCreate:
		ms := make([]int, len(first.members))
		for i, m := range first.members {
			ms[i] = c.c.members[m]
		}
		return newCommState(fmt.Sprintf("%s.%d", c.c.name, s.seq), ms)
	}
	return nil
}

func vecs(in []*contrib) []Vector {
	out := make([]Vector, len(in))
	for i, ct := range in {
		out[i] = ct.vec
	}
	return out
}

// collWait is a rank blocked in a collective.
type collWait struct {
	c  *handle
	s  *slot
	ct *contrib
}

func (w *collWait) ready() bool { return w.s.err != nil || w.s.complete }

func (w *collWait) hopeless() (int, bool) {
	for r, ct := range w.s.in {
		if m := w.c.c.members[r]; ct == nil && w.c.h.ranks[m].exited {
			return m, true
		}
	}
	return -1, false
}

func (w *collWait) String() string {
	var missing []int
	for r, ct := range w.s.in {
		if ct == nil {
			missing = append(missing, w.c.c.members[r])
		}
	}
	s := fmt.Sprintf("%v on %s (call %d)", w.ct, w.c.where(), w.s.seq)
	if len(missing) > 0 {
		s += " waiting for rank " + rankList(missing)
	}
	return s
}

// Barrier waits until every member has called it.
func (c *handle) Barrier() error {
	_, err := c.collective(&contrib{kind: kBarrier, root: -1})
	return err
}

// Bcast returns a copy of root's data on every member.
func (c *handle) Bcast(root int, data []byte) ([]byte, error) {
	ct := &contrib{kind: kBcast, root: root}
	if root == c.rank {
		ct.data = clone(data)
	}
	s, err := c.collective(ct)
	if err != nil {
		return nil, err
	}
	return clone(s.out.([]byte)), nil
}

// Gather returns every member's data on root, nil on the others.
func (c *handle) Gather(root int, data []byte) ([][]byte, error) {
	s, err := c.collective(&contrib{kind: kGather, root: root, data: clone(data)})
	if err != nil || c.rank != root {
		return nil, err
	}
	return s.out.([][]byte), nil // only root reads it
}

// Allgather returns every member's data on every member.
func (c *handle) Allgather(data []byte) ([][]byte, error) {
	s, err := c.collective(&contrib{kind: kAllgather, root: -1, data: clone(data)})
	if err != nil {
		return nil, err
	}
	shared := s.out.([][]byte)
	total := 0
	for _, d := range shared {
		total += len(d)
	}
	buf := make([]byte, 0, total)
	out := make([][]byte, len(shared))
	for i, d := range shared {
		buf = append(buf, d...)
		out[i] = buf[len(buf)-len(d) : len(buf) : len(buf)]
	}
	return out, nil
}

// Reduce returns the element-wise combination of every member's v on
// root, nil on the others.
func (c *handle) Reduce(root int, op Op, v Vector) (Vector, error) {
	s, err := c.collective(&contrib{kind: kReduce, root: root, op: op, vec: cloneVector(v)})
	if err != nil || c.rank != root {
		return nil, err
	}
	return s.out.(Vector), nil // only root reads it
}

// Allreduce returns the element-wise combination of every member's v.
func (c *handle) Allreduce(op Op, v Vector) (Vector, error) {
	s, err := c.collective(&contrib{kind: kAllreduce, root: -1, op: op, vec: cloneVector(v)})
	if err != nil {
		return nil, err
	}
	return cloneVector(s.out.(Vector)), nil
}

// Scan returns the combination of ranks 0..Rank()'s v.
func (c *handle) Scan(op Op, v Vector) (Vector, error) {
	return c.scan(kScan, op, v)
}

// Exscan returns the combination of ranks 0..Rank()-1's v, nil on rank 0.
func (c *handle) Exscan(op Op, v Vector) (Vector, error) {
	return c.scan(kExscan, op, v)
}

func (c *handle) scan(kind collKind, op Op, v Vector) (Vector, error) {
	s, err := c.collective(&contrib{kind: kind, root: -1, op: op, vec: cloneVector(v)})
	if err != nil {
		return nil, err
	}
	return s.out.([]Vector)[c.rank], nil // each rank reads its own
}

// splitResult is the outcome of Split: each member's new communicator
// (nil for Undefined) and rank in it.
type splitResult struct {
	comms []*commState
	ranks []int
}

// splitGroups groups the ranks of a Split by color, in ascending color
// order, each group ordered by key and then by rank; ranks with a
// negative color (MPI_UNDEFINED) are in no group.
func splitGroups(in []*contrib) (colors []int, groups [][]int) {
	byColor := map[int][]int{}
	for r, ct := range in {
		if ct.color < 0 {
			continue
		}
		if byColor[ct.color] == nil {
			colors = append(colors, ct.color)
		}
		byColor[ct.color] = append(byColor[ct.color], r)
	}
	slices.Sort(colors)
	for _, color := range colors {
		rs := byColor[color] // ascending rank; stable sort keeps it for equal keys
		slices.SortStableFunc(rs, func(a, b int) int { return cmp.Compare(in[a].key, in[b].key) })
		groups = append(groups, rs)
	}
	return colors, groups
}

func (c *handle) splitResult(s *slot) *splitResult {
	n := len(s.in)
	res := &splitResult{comms: make([]*commState, n), ranks: make([]int, n)}
	colors, groups := splitGroups(s.in)
	for k, color := range colors {
		rs := groups[k]
		ms := make([]int, len(rs))
		for i, r := range rs {
			ms[i] = c.c.members[r]
		}
		cs := newCommState(fmt.Sprintf("%s.%d[color %d]", c.c.name, s.seq, color), ms)
		for i, r := range rs {
			res.comms[r], res.ranks[r] = cs, i
		}
	}
	return res
}
