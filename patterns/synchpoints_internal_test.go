package patterns

import (
	"math/rand/v2"
	"slices"
	"testing"

	"scout/localtrace"
	"scout/replay"
)

// TestSynchpointIndex registers synchpoints as the passes do, forward,
// backward and in no order, with duplicates (the first registration
// wins), and checks every query against a map after each registration
// and each order: the sorted part is found through the bit sets, the
// pending tail by its search.
func TestSynchpointIndex(t *testing.T) {
	const n = 40000 // beyond the growing chunks of the pending ones
	c := &replay.Ctx{Trace: &localtrace.Trace{Events: make([]localtrace.Event, n)}}
	rng := rand.New(rand.NewPCG(5, 6))
	var s synchpoints
	want := map[int]float64{} // event → wait of its first registration
	check := func(stage string) {
		t.Helper()
		for ev := -1; ev <= n+64; ev++ {
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
		check("before order " + string(rune('1'+i)))
		s.order()
		check("after order " + string(rune('1'+i)))
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
		if got := s.between(a, b); !slices.Equal(got, in) {
			t.Fatalf("between(%d, %d) = %v, want %v", a, b, got, in)
		}
	}
}

// TestPendPos: pendPos finds every entry where appendChunked put it,
// in chunks that grow from minInstanceChunk to maxInstanceChunk entries
// and then stay.
func TestPendPos(t *testing.T) {
	var list [][]int
	for j := range 100_000 {
		list = appendChunked(list, j)
	}
	if got := cap(list[pendGrowing]); got != maxInstanceChunk || cap(list[pendGrowing-1]) != maxInstanceChunk || cap(list[pendGrowing-2]) == maxInstanceChunk {
		t.Fatalf("chunk %d of %d entries: pendGrowing does not match appendChunked", pendGrowing, got)
	}
	for j := range 100_000 {
		if k, o := pendPos(j); list[k][o] != j {
			t.Fatalf("pendPos(%d) = %d, %d: entry %d", j, k, o, list[k][o])
		}
	}
}
