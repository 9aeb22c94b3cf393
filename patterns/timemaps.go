package patterns

import (
	"cmp"
	"math"
	"slices"

	"scout/localtrace"
)

// timemaps gives a location's exclusive time per call path between two
// of its events (Scalasca's time-map cache, computed from the events in
// memory instead of stored per interval):
//
//	Enter e: the time since the last Enter or Leave goes to the parent
//	         call path of e's (none for a root)
//	Leave e: the time since the last Enter or Leave goes to e's call path
//
// runtimes(a, b) sums what the Enter and Leave events from a up to but
// not including b contribute. A cut at an event therefore does not move
// the time of the last boundary: the region around a synchpoint lands in
// the interval after it, and the Leave of MPI_Init or MPI_Finalize as a
// cut opens the interval its own time belongs to.
//
// With OpenMP threads (omprootcause.go), the management time of a
// parallel region moves as in the profile: at the region's Enter, its
// fork time leaves the parent call path (before a cut there) and goes to
// the region (after it); at its Leave, the join time; the master's
// THREAD_JOIN is a boundary of its own (a cut there belongs after it).
// A worker thread keeps only its time from each fork to the last
// synchronisation of the team in the region (its kept spans); the rest
// (idle, waking up, the closing barrier) is dropped.
type timemaps struct {
	sumTo accumulator // scratch of runtimes
	// OpenMP: set when the location takes part in parallel regions
	fork   map[int]float64 // parallel region Enter → fork time
	join   map[int]float64 // parallel region Leave → join time
	worker bool            // a worker thread: only the spans count
	spans  [][2]int        // a worker's kept spans [from, to) of events
}

// accumulator sums times by local call path, remembering the call paths
// touched.
type accumulator struct {
	v       []float64
	touched []uint32
	seen    []bool
}

func (a *accumulator) add(cp uint32, t float64) {
	if int(cp) >= len(a.seen) || !a.seen[cp] {
		a.touch(cp)
	}
	a.v[cp] += t
}

// touch marks cp as touched, making room for it (add's first sight of
// a call path: a call of its own, so that add is inlined into the loops
// that sum times).
func (a *accumulator) touch(cp uint32) {
	if int(cp) >= len(a.v) {
		n := int(cp) + 1
		a.v = slices.Grow(a.v, n-len(a.v))[:n]
		a.seen = slices.Grow(a.seen, n-len(a.seen))[:n]
	}
	a.seen[cp] = true
	a.touched = append(a.touched, cp)
}

// flush moves the sums into out (sorted by call path) and empties a.
func (a *accumulator) flush(out *cpvec) {
	slices.Sort(a.touched)
	for _, cp := range a.touched {
		out.cp = append(out.cp, cp)
		out.v = append(out.v, a.v[cp])
		a.v[cp], a.seen[cp] = 0, false
	}
	a.touched = a.touched[:0]
}

// cpvec is a sparse vector of times by local call path, sorted.
type cpvec struct {
	cp  []uint32
	v   []float64
	sum float64
}

func (x *cpvec) reset() { x.cp, x.v, x.sum = x.cp[:0], x.v[:0], 0 }

func (x *cpvec) find(cp uint32) (int, bool) { return slices.BinarySearch(x.cp, cp) }

func (x *cpvec) get(cp uint32) float64 {
	if k, ok := x.find(cp); ok {
		return x.v[k]
	}
	return 0
}

// set sets cp's value, inserting it if absent.
func (x *cpvec) set(cp uint32, v float64) {
	k, ok := x.find(cp)
	if ok {
		x.v[k] = v
		return
	}
	x.cp = slices.Insert(x.cp, k, cp)
	x.v = slices.Insert(x.v, k, v)
}

// runtimes sums into out the exclusive times per call path of t from
// event a to event b (a < 0: from the start; b < 0: to the end).
func (tm *timemaps) runtimes(t *localtrace.Trace, a, b int, out *cpvec) {
	lo, hi := max(a, 0), len(t.Events)
	if b >= 0 {
		hi = b
	}
	if tm.worker {
		// the spans that overlap [lo, hi): from the first ending after lo
		k, _ := slices.BinarySearchFunc(tm.spans, lo, func(s [2]int, lo int) int { return cmp.Compare(s[1], lo+1) })
		for ; k < len(tm.spans) && tm.spans[k][0] < hi; k++ {
			if from, to := max(lo, tm.spans[k][0]), min(hi, tm.spans[k][1]); from < to {
				tm.span(t, from, to)
			}
		}
	} else {
		tm.span(t, lo, hi)
	}
	out.reset()
	tm.sumTo.flush(out)
}

// span accumulates the contributions of events lo up to hi.
func (tm *timemaps) span(t *localtrace.Trace, lo, hi int) {
	last := 0.0 // the time of the last boundary before lo
	for k := lo - 1; k >= 0; k-- {
		if e := &t.Events[k]; e.Kind == localtrace.KindEnter || e.Kind == localtrace.KindLeave || (e.Kind == localtrace.KindJoin && tm.join != nil) {
			last = t.Time(k)
			break
		}
	}
	acc := &tm.sumTo
	omp := tm.fork != nil
	for k := lo; k < hi; k++ {
		switch e := &t.Events[k]; e.Kind {
		case localtrace.KindEnter:
			tk := t.Time(k)
			if omp {
				if f, ok := tm.fork[k]; ok {
					if k > lo { // (an interval from the fork starts after its cut)
						tm.beforeFork(t, k, last)
					}
					acc.add(e.Arg, f)
					last = tk
					continue
				}
			}
			if p := t.Callpaths[e.Arg].Parent; p != localtrace.None {
				acc.add(p, tk-last)
			}
			last = tk
		case localtrace.KindLeave:
			if omp {
				if j, ok := tm.join[k]; ok {
					if p := t.Callpaths[e.Arg].Parent; p != localtrace.None {
						acc.add(p, -j)
					}
					acc.add(e.Arg, j)
				}
			}
			tk := t.Time(k)
			acc.add(e.Arg, tk-last)
			last = tk
		case localtrace.KindJoin:
			if omp {
				tk := t.Time(k)
				if k > lo {
					if cp := t.Callpath(k); cp != localtrace.None {
						acc.add(cp, tk-last)
					}
				}
				last = tk
			}
		}
	}
	if !omp || tm.worker || hi >= len(t.Events) {
		return
	}
	// an interval ending at a fork or a join holds their time up to the cut
	switch e := &t.Events[hi]; e.Kind {
	case localtrace.KindEnter:
		if _, ok := tm.fork[hi]; ok {
			tm.beforeFork(t, hi, last)
		}
	case localtrace.KindJoin:
		if cp := t.Callpath(hi); cp != localtrace.None {
			acc.add(cp, t.Time(hi)-last)
		}
	}
}

// beforeFork adds what the parallel region Enter k contributes before
// the cut at it: the time since the last boundary to the parent call
// path, less the fork time (which goes to the region after the cut).
func (tm *timemaps) beforeFork(t *localtrace.Trace, k int, last float64) {
	e := &t.Events[k]
	if p := t.Callpaths[e.Arg].Parent; p != localtrace.None {
		tm.sumTo.add(p, t.Time(k)-last-tm.fork[k])
	}
}

// waitMap sums the waits of the wait states among the synchpoints r
// into out, by call path, and their total into out.sum.
func (rc *rootCause) waitMap(t *localtrace.Trace, r spRange, out *cpvec) {
	acc := &rc.tm.sumTo
	sum := 0.0
	for i := r.lo; i < r.hi; i++ {
		if w := rc.sp.sps[i].wait; w > 0 {
			acc.add(t.Callpath(int(rc.sp.events[i])), w)
			sum += w
		}
	}
	out.reset()
	acc.flush(out)
	out.sum = sum
}

// diff sets out to the positive differences a − b by call path of a,
// and out.sum to their sum (b's values found by a walk along it: both
// are sorted).
func diff(a, b, out *cpvec) {
	out.reset()
	j := 0
	for k, cp := range a.cp {
		for j < len(b.cp) && b.cp[j] < cp {
			j++
		}
		bv := 0.0
		if j < len(b.cp) && b.cp[j] == cp {
			bv = b.v[j]
		}
		if d := a.v[k] - bv; d > 0 {
			out.cp = append(out.cp, cp)
			out.v = append(out.v, d)
			out.sum += d
		}
	}
}

// prune sets out to diff(times, waits) with the region of synchpoint
// from (if from ≥ 0) removed but for its completion part.
func (rc *rootCause) prune(t *localtrace.Trace, times, waits *cpvec, from int, out *cpvec) {
	diff(times, waits, out)
	if from < 0 {
		return
	}
	var total, completion float64
	if p := rc.sp.get(from); p != nil {
		if f, ok := rc.tm.fork[from]; ok && p.omp() {
			total = f // a fork: its time up to the region's Enter
		} else {
			enter := t.Time(int(t.EnterOf(from)))
			total = t.Time(int(t.LeaveOf(from))) - enter
		}
		completion = p.completion
	}
	cp := t.Callpath(from)
	x := out.get(cp)
	out.set(cp, math.Max(x-total+completion, 0))
	out.sum -= math.Min(total-completion, x)
}
