package patterns

import (
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
type timemaps struct {
	sumTo accumulator // scratch of runtimes
}

// accumulator sums times by local call path, remembering the call paths
// touched.
type accumulator struct {
	v       []float64
	touched []uint32
	seen    []bool
}

func (a *accumulator) add(cp uint32, t float64) {
	if int(cp) >= len(a.v) {
		n := int(cp) + 1
		a.v = slices.Grow(a.v, n-len(a.v))[:n]
		a.seen = slices.Grow(a.seen, n-len(a.seen))[:n]
	}
	if !a.seen[cp] {
		a.seen[cp] = true
		a.touched = append(a.touched, cp)
	}
	a.v[cp] += t
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
	last := 0.0 // the time of the last Enter or Leave before lo
	for k := lo - 1; k >= 0; k-- {
		if e := &t.Events[k]; e.Kind == localtrace.KindEnter || e.Kind == localtrace.KindLeave {
			last = e.Time
			break
		}
	}
	acc := &tm.sumTo
	for k := lo; k < hi; k++ {
		switch e := &t.Events[k]; e.Kind {
		case localtrace.KindEnter:
			if p := t.Callpaths[e.C].Parent; p != localtrace.None {
				acc.add(p, e.Time-last)
			}
			last = e.Time
		case localtrace.KindLeave:
			acc.add(e.C, e.Time-last)
			last = e.Time
		}
	}
	out.reset()
	acc.flush(out)
}

// waitMap sums the waits of the wait states among events into out, by
// call path, and their total into out.sum.
func (rc *rootCause) waitMap(t *localtrace.Trace, events []int, out *cpvec) {
	acc := &rc.tm.sumTo
	sum := 0.0
	for _, ev := range events {
		if w := rc.sp.waitOf(ev); w > 0 {
			acc.add(t.Callpath(ev), w)
			sum += w
		}
	}
	out.reset()
	acc.flush(out)
	out.sum = sum
}

// diff sets out to the positive differences a − b by call path of a,
// and out.sum to their sum.
func diff(a, b, out *cpvec) {
	out.reset()
	for k, cp := range a.cp {
		if d := a.v[k] - b.get(cp); d > 0 {
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
		enter := t.Events[t.EnterOf(from)].Time
		total, completion = t.Events[t.LeaveOf(from)].Time-enter, p.completion
	}
	cp := t.Callpath(from)
	x := out.get(cp)
	out.set(cp, math.Max(x-total+completion, 0))
	out.sum -= math.Min(total-completion, x)
}
