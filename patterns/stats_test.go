package patterns_test

import (
	"iter"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/patterns"
)

// TestStatisticsAdd: a location keeps the waits of its instances by
// pattern, in order, and in full only the collective instances and the
// most severe point-to-point instance of each call path (the first of
// equals), with its place among the point-to-point instances; the
// collective instances' waits join the others at Seal.
func TestStatisticsAdd(t *testing.T) {
	ls := uint8(slices.Index(patterns.StatPatterns, "mpi_latesender"))
	nxn := uint8(slices.Index(patterns.StatPatterns, "mpi_wait_nxn"))
	p2p := patterns.CollKey{Seq: -1}
	in := func(p uint8, cp uint32, d, at float64, coll patterns.CollKey) patterns.Instance {
		return patterns.Instance{Pattern: p, Callpath: cp, Enter: at, Exit: at + 1, Duration: d, Coll: coll}
	}
	ins := []patterns.Instance{
		in(ls, 1, 0.5, 0, p2p),
		in(ls, 2, 0, 1, p2p), // no wait: neither an observation nor a candidate
		in(ls, 1, 0.7, 2, p2p),
		in(nxn, 3, 0.1, 3, patterns.CollKey{Comm: 1, Seq: 0}),
		in(ls, 1, 0.7, 4, p2p), // ties with the earlier one, which stays
		in(nxn, 3, 0, 5, patterns.CollKey{Comm: 1, Seq: 1}),
		in(ls, 2, 0.2, 6, p2p),
	}
	s := patterns.NewStatistics()
	for _, x := range ins {
		s.Add(x)
	}
	if len(s.Waits[nxn]) != 0 {
		t.Errorf("collective waits before Seal: %v", s.Waits[nxn])
	}
	s.Seal()
	s.Seal() // once only
	got := struct {
		LS, NxN []float64
		Colls   []patterns.Instance
		Severe  []patterns.Ranked
	}{slices.Concat(s.Waits[ls]...), slices.Concat(s.Waits[nxn]...), slices.Collect(iter.Seq[patterns.Instance](s.Colls.All)), s.Severe[ls]}
	want := got
	want.LS = []float64{0.5, 0.7, 0.7, 0.2}
	want.NxN = []float64{0.1}
	want.Colls = []patterns.Instance{ins[3], ins[5]}
	want.Severe = []patterns.Ranked{{Instance: ins[2], Index: 2}, {Instance: ins[6], Index: 4}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("collected (-want +got):\n%s", d)
	}
	if len(s.Severe[nxn]) != 0 {
		t.Errorf("collective instances among the point-to-point candidates: %v", s.Severe[nxn])
	}
}

// TestCollInstances: the instances come back as they were added, in
// order, whether they share a row (an operation's end, call path, key
// and rank) or not, across chunks and beyond 255 instances of a row;
// Select picks those of some operations; MapCallpaths maps them and
// Drain empties the collection.
func TestCollInstances(t *testing.T) {
	var want []patterns.Instance
	for i := range 20_000 {
		op := i / 3 // mostly three instances an operation
		if i%7 == 0 {
			op = i // some alone
		}
		in := patterns.Instance{Pattern: uint8(i % 5), Enter: float64(i), Exit: float64(op) + 0.5, Duration: float64(i%11) * 1e-3,
			Callpath: uint32(op % 13), Rank: int32(op % 2), Coll: patterns.CollKey{Comm: uint32(op % 3), Seq: int32(op)}}
		want = append(want, in)
	}
	for range 600 { // one operation's row with more than 255 instances
		in := want[len(want)-1]
		in.Enter++
		want = append(want, in)
	}
	var c patterns.CollInstances
	for _, in := range want {
		c.Add(in)
	}
	all := func() []patterns.Instance { return slices.Collect(iter.Seq[patterns.Instance](c.All)) }
	if d := cmp.Diff(want, all()); d != "" || c.Len() != len(want) {
		t.Fatalf("%d instances, want %d (-want +got):\n%s", c.Len(), len(want), d)
	}
	// Select yields the instances of the operations kept, with their
	// places in All's order
	for _, every := range []int32{1, 2, 5} {
		keep := func(k patterns.CollKey) bool { return k.Seq%every == 0 }
		var wantAt, gotAt []int
		var wantSel, gotSel []patterns.Instance
		for i, in := range want {
			if keep(in.Coll) {
				wantAt, wantSel = append(wantAt, i), append(wantSel, in)
			}
		}
		for i, in := range c.Select(keep) {
			gotAt, gotSel = append(gotAt, i), append(gotSel, in)
		}
		if d := cmp.Diff(wantSel, gotSel); d != "" {
			t.Errorf("every %d-th operation selected (-want +got):\n%s", every, d)
		}
		if d := cmp.Diff(wantAt, gotAt); d != "" {
			t.Errorf("every %d-th operation selected: places (-want +got):\n%s", every, d)
		}
	}
	c.MapCallpaths(func(cp uint32) uint32 { return cp + 100 })
	for i := range want {
		want[i].Callpath += 100
	}
	got := slices.Collect(iter.Seq[patterns.Instance](c.Drain))
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("mapped (-want +got):\n%s", d)
	}
	if c.Len() != 0 || len(all()) != 0 {
		t.Errorf("%d instances (%d yielded) after Drain", c.Len(), len(all()))
	}
}
