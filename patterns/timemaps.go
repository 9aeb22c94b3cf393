package patterns

import (
	"fmt"
	"math"
	"slices"

	"scout/localtrace"
	"scout/replay"
)

// timemaps is a location's exclusive time per call path, cut into
// intervals at its synchpoints (Scalasca's time-map cache), built in the
// fws pass:
//
//	Enter e: the time since the last Enter or Leave goes to the parent
//	         call path of e's (none for a root)
//	Leave e: the time since the last Enter or Leave goes to e's call path
//	cut at:  a send, receive or send completion that is a synchpoint
//	         (after the fws exchange), a collective's end that is one, the
//	         Leave of MPI_Init and MPI_Finalize (before its own time is
//	         added), and every receive request (whose cut is forgotten
//	         when its receive completes and it is still no synchpoint)
//
// A cut does not move the time of the last boundary: the region
// around a synchpoint lands in the interval after it. runtimes(a, b)
// sums the intervals from the cut at a to the cut at b.
type timemaps struct {
	acc  accumulator
	last float64
	// the intervals' times, interval after interval: call path and time
	recCP []uint32
	recT  []float64
	// the cuts, in event order: event, and end of its interval in recs
	// (-1: forgotten)
	cutEv, cutAt []int32
	sumTo        accumulator // scratch of runtimes
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

func (rc *rootCause) registerTimemaps(bus *replay.Bus) {
	tm := &rc.tm
	sp := &rc.sp
	cutIf := func(c *replay.Ctx) error {
		if sp.has(c.Index) {
			tm.cut(c.Index)
		}
		return nil
	}
	bus.On(FwsEnter, func(c *replay.Ctx) error {
		e := c.Event()
		if p := c.Trace.Callpaths[e.C].Parent; p != localtrace.None {
			tm.acc.add(p, e.Time-tm.last)
		}
		tm.last = e.Time
		return nil
	})
	bus.On(FwsLeave, func(c *replay.Ctx) error {
		e := c.Event()
		if c.Index == rc.initLeave || c.Index == rc.finLeave {
			_ = cutIf(c)
		}
		tm.acc.add(e.C, e.Time-tm.last)
		tm.last = e.Time
		return nil
	})
	bus.On(FwsPostSend, cutIf)
	bus.On(FwsPostRecv, func(c *replay.Ctx) error {
		_ = cutIf(c)
		if q := requestOf(c.Trace, c.Index); q != c.Index && !sp.has(q) {
			tm.forget(q)
		}
		return nil
	})
	bus.On(FwsSendComplete, cutIf)
	bus.On(FwsCollEnd, cutIf)
	bus.On(FwsRecvRequest, func(c *replay.Ctx) error {
		tm.cut(c.Index)
		return nil
	})
	bus.On(replay.Finished, func(c *replay.Ctx) error {
		if c.Pass == Fws {
			tm.cut(-1)
		}
		return nil
	})
}

// cut closes the current interval at event ev (-1: the last interval,
// with no event).
func (tm *timemaps) cut(ev int) {
	slices.Sort(tm.acc.touched)
	for _, cp := range tm.acc.touched {
		tm.recCP = append(tm.recCP, cp)
		tm.recT = append(tm.recT, tm.acc.v[cp])
		tm.acc.v[cp], tm.acc.seen[cp] = 0, false
	}
	tm.acc.touched = tm.acc.touched[:0]
	if ev >= 0 {
		// the pass walks forward: cuts come in event order
		tm.cutEv = append(tm.cutEv, int32(ev))
		tm.cutAt = append(tm.cutAt, int32(len(tm.recCP)))
	}
}

// at returns the end of the interval of the cut at event ev.
func (tm *timemaps) at(ev int) (int, bool) {
	k, ok := slices.BinarySearch(tm.cutEv, int32(ev))
	if !ok || tm.cutAt[k] < 0 {
		return 0, false
	}
	return int(tm.cutAt[k]), true
}

// forget drops the cut at event ev.
func (tm *timemaps) forget(ev int) {
	if k, ok := slices.BinarySearch(tm.cutEv, int32(ev)); ok {
		tm.cutAt[k] = -1
	}
}

// runtimes sums into out the exclusive times per call path from the cut
// at a to the cut at b (a < 0: from the start; b < 0: to the end).
func (tm *timemaps) runtimes(a, b int, out *cpvec) error {
	from, to := 0, len(tm.recCP)
	var ok bool
	if a >= 0 {
		if from, ok = tm.at(a); !ok {
			return fmt.Errorf("root cause: no time-map cut at event %d", a)
		}
	}
	if b >= 0 {
		if to, ok = tm.at(b); !ok {
			return fmt.Errorf("root cause: no time-map cut at event %d", b)
		}
	}
	for k := from; k < max(from, to); k++ {
		tm.sumTo.add(tm.recCP[k], tm.recT[k])
	}
	out.reset()
	tm.sumTo.flush(out)
	return nil
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
		total, completion = p.total, p.completion
	}
	cp := t.Callpath(from)
	x := out.get(cp)
	out.set(cp, math.Max(x-total+completion, 0))
	out.sum -= math.Min(total-completion, x)
}
