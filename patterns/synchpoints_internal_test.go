package patterns

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"scout/internal/offheap"
	"scout/localtrace"
	"scout/replay"
)

// TestSynchpointIndex registers synchpoints as the passes do, forward,
// backward and in no order, with duplicates (the first registration
// wins), and checks every query against a map after each registration
// and each order: the sorted part is found through the bit sets, the
// pending tail by its search; at the end, between and prev. The tables are on the heap, or mappings
// of their own (a trace large enough, with init).
func TestSynchpointIndex(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		mapped bool
	}{{"heap", 40000, false}, {"mapped", 150000, true}} {
		t.Run(tc.name, func(t *testing.T) { testSynchpointIndex(t, tc.n, tc.mapped) })
	}
}

func testSynchpointIndex(t *testing.T, n int, mapped bool) {
	c := &replay.Ctx{Trace: &localtrace.Trace{Events: make([]localtrace.Event, n)}}
	rng := rand.New(rand.NewPCG(5, 6))
	var s synchpoints
	if mapped {
		// the owner's cleanup unmaps the tables: it must outlive their
		// use, as a rootCause outlives its passes
		owner := &rootCause{}
		s.init(owner)
		defer runtime.KeepAlive(owner)
	}
	want := map[int]float64{} // event → wait of its first registration
	// stride: before an order, a pending synchpoint is found by a
	// search from the latest; a large trace checks every 101st event
	check := func(stage string, stride int) {
		t.Helper()
		for ev := -1; ev <= n+64; ev += stride {
			w, ok := want[ev]
			if s.has(ev) != ok {
				t.Fatalf("%s: has(%d) = %v, want %v", stage, ev, !ok, ok)
			}
			p := s.get(ev)
			if (p != nil) != ok || (ok && p.wait != w) {
				t.Fatalf("%s: get(%d) = %+v, want wait %v (registered %v)", stage, ev, p, w, ok)
			}
		}
	}
	register := func(evs []int) {
		for _, ev := range evs {
			w := float64(rng.IntN(3))
			s.add(c, ev, synchpoint{wait: w, one: int32(ev % 4)}, nil)
			if _, ok := want[ev]; !ok {
				want[ev] = w
			}
			if !s.isWait(ev) == (want[ev] > 0) {
				t.Fatalf("isWait(%d) after registering it: %v, want %v", ev, !(want[ev] > 0), want[ev] > 0)
			}
		}
	}
	var fwd, bwd, any []int
	for ev := range n {
		switch rng.IntN(6) {
		case 0:
			fwd = append(fwd, ev)
		case 1:
			bwd = append(bwd, ev)
		case 2:
			any = append(any, ev)
		case 3: // registered twice
			fwd = append(fwd, ev)
			bwd = append(bwd, ev)
		}
	}
	slices.Reverse(bwd)
	rng.Shuffle(len(any), func(i, j int) { any[i], any[j] = any[j], any[i] })
	for i, evs := range [][]int{fwd, bwd, any} {
		register(evs)
		stride := 1
		if mapped {
			stride = 101
		}
		check("before order "+string(rune('1'+i)), stride)
		s.order()
		check("after order "+string(rune('1'+i)), 1)
		if mapped && !offheap.Owns(s.mem, s.sps) {
			t.Fatalf("order %d: the synchpoints are not a mapping", i+1)
		}
		if !slices.IsSorted(s.events) || len(s.events) != len(want) {
			t.Fatalf("order %d: %d events, sorted %v; want %d sorted", i+1, len(s.events), slices.IsSorted(s.events), len(want))
		}
	}
	// between: the synchpoints strictly inside an interval
	for range 100 {
		a, b := rng.IntN(n), rng.IntN(n)
		var in []int32
		for ev := a + 1; ev < b; ev++ {
			if _, ok := want[ev]; ok {
				in = append(in, int32(ev))
			}
		}
		r := s.between(a, b)
		if got := s.events[r.lo:r.hi]; !slices.Equal(got, in) {
			t.Fatalf("between(%d, %d) = %v, want %v", a, b, got, in)
		}
	}
	// prev: the latest synchpoint before an event with a rank (each
	// synchronised with rank ev % 4)
	for range 200 {
		ev, rank := rng.IntN(n+2)-1, rng.IntN(4)
		latest := -1
		for e := ev - 1; e >= 0; e-- {
			if _, ok := want[e]; ok && e%4 == rank {
				latest = e
				break
			}
		}
		if got := s.prev(ev, rank); got != latest {
			t.Fatalf("prev(%d, %d) = %d, want %d", ev, rank, got, latest)
		}
	}
}

// TestFinger asks finger, from wherever the last search ended, what
// slices.BinarySearch answers: in ascending and descending runs (the
// passes' order, a step at a time), with jumps far away, for values
// present and absent, below the first and above the last.
func TestFinger(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, 100} {
		xs := make([]int32, 0, n)
		v := int32(0)
		for range n {
			v += 1 + rng.Int32N(3)
			xs = append(xs, v)
		}
		var queries []int32
		for x := int32(-1); x <= v+1; x++ {
			queries = append(queries, x)
		}
		for x := v + 1; x >= -1; x-- {
			queries = append(queries, x)
		}
		for range 200 {
			queries = append(queries, rng.Int32N(v+3)-1)
		}
		at := 0
		for _, x := range queries {
			k, ok := finger(xs, x, &at)
			wk, wok := slices.BinarySearch(xs, x)
			if k != wk || ok != wok || at != k {
				t.Fatalf("n=%d: finger(%d) = %d, %v (at %d), want %d, %v", n, x, k, ok, at, wk, wok)
			}
		}
	}
}
