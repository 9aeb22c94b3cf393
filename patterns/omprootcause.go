package patterns

import (
	"fmt"
	"math"
	"slices"

	"scout/localtrace"
	"scout/replay"
)

// The root causes and the critical path of OpenMP threads (the
// reference's hybrid analysis; doc/openmp/rootcause.md). The threads of
// a rank synchronise at two kinds of synchpoints of their own, which
// name no rank (so that MPI intervals never start there, but their waits
// count in every interval):
//
//	fork:    a thread's Enter of a parallel region (wait 0; completion:
//	         its Enter − the team's earliest; its region: the fork time)
//	barrier: a thread's Leave of an OpenMP barrier in a parallel region
//	         (wait: the latest Enter of the team − its own, if positive)
//
// In the bwc pass:
//
//	delay_ompbarrier: at a barrier, each thread's pruned times since its
//	         previous OpenMP synchpoint go to the latest thread, which
//	         charges the differences of its own times over each thread's,
//	         scaled by that thread's wait / (Σ differences + the latest
//	         thread's own waits in its interval), to its call paths; the
//	         threads' long-term costs travel along with the same scales
//	         (delay_*_longterm on the latest thread, costs to its wait
//	         states: of the OpenMP barrier type for the waits)
//	delay_ompidle: on the master, the time it runs alone between the
//	         join of a team and the next fork (or the end), less its
//	         waits, times the number of worker threads left idle; its
//	         waits in that time get the idle type's long-term cost
//
// The critical path (walked at location 0, pathwalk.go) moves at a
// barrier from the threads that hold it to those that did not wait, at a
// fork back to the master.
type ompRootCause struct {
	sps    []int                   // the OpenMP synchpoints, in event order
	latest map[int]replay.TimeRank // barrier Leave → latest Enter of the team and its thread
	joins  []int                   // the master's THREAD_JOIN events
	// scratch
	gamma   []float64
	mine    replay.Timemap
	theirs  []float64 // by call path of mine: a thread's times
	d       []float64
	delay   []float64 // by key and call path
	scales  []float64 // by key
	times   cpvec
	waits   cpvec
	diffs   cpvec
	spansOK bool
}

// The keys of the OpenMP barrier delay: the wait, then the incoming
// long-term costs by type (all but the OpenMP barrier's own).
var ompBarrierKeys = [...]int{-1, costLS, costLR, costBarrier, costNxN, costOneToN, costNToOne, costOmpIdle}

// Fields of the OpenMP barrier delay (gathered to the latest thread).
var (
	// ThreadGammas are a thread's wait key and incoming long-term costs
	// at a barrier (ompBarrierKeys).
	ThreadGammas = replay.NewField("thread gammas", replay.Float64sCodec)
	// ThreadTimes are a thread's pruned times since its previous OpenMP
	// synchpoint (global call paths).
	ThreadTimes = replay.NewField("thread times", replay.TimemapCodec)
)

// registerOmp subscribes the OpenMP synchpoints (forward pass).
func (rc *rootCause) registerOmp(bus *replay.Bus) {
	o := &rc.omp
	o.latest = map[int]replay.TimeRank{}
	// forward pass: the synchpoints
	replay.Subscribe(bus, OmpTeamFound, func(c *replay.Ctx, info *OmpTeamInfo) error {
		tm := &rc.tm
		if tm.fork == nil {
			tm.fork, tm.join, tm.worker = map[int]float64{}, map[int]float64{}, c.Loc.Thread != 0
		}
		if !info.Fork {
			tm.join[c.Index] = info.Amount
			return nil
		}
		tm.fork[c.Index] = info.Amount
		rc.sp.add(c, c.Index, synchpoint{completion: positive(c.Time(), info.Earliest), one: withThreads}, nil)
		o.sps = append(o.sps, c.Index)
		return nil
	})
	replay.Subscribe(bus, OmpWaitFound, func(c *replay.Ctx, w *OmpWaitInfo) error {
		if w.Seq < 0 {
			return nil // a lock
		}
		rc.sp.add(c, c.Index, synchpoint{wait: w.Idle, one: withThreads}, nil)
		o.sps = append(o.sps, c.Index)
		o.latest[c.Index] = w.Latest
		return nil
	})
}

// registerOmpBwc subscribes the OpenMP parts of the delay costs in bwc.
func (rc *rootCause) registerOmpBwc(bus *replay.Bus) {
	o := &rc.omp
	bus.On(replay.Started, func(c *replay.Ctx) error {
		if c.Pass != Bwc || rc.tm.fork == nil {
			return nil
		}
		rc.ompSpans(c.Trace)
		if c.Loc.Thread == 0 {
			return rc.ompIdle(c, -1) // the master alone after the last join
		}
		return nil
	})
	bus.On(BwcEnter, func(c *replay.Ctx) error {
		if rc.tm.fork == nil {
			return nil // no parallel region
		}
		if _, ok := rc.tm.fork[c.Index]; ok {
			return rc.ompFork(c)
		}
		return nil
	})
	bus.On(BwcLeave, func(c *replay.Ctx) error {
		if len(o.latest) == 0 {
			return nil
		}
		if lat, ok := o.latest[c.Index]; ok {
			return rc.ompBarrier(c, lat)
		}
		return nil
	})
}

// ompSpans finds a worker thread's kept spans: from each fork to the
// last barrier of the team in its parallel region.
func (rc *rootCause) ompSpans(t *localtrace.Trace) {
	o := &rc.omp
	if o.spansOK {
		return
	}
	o.spansOK = true
	for i := range t.Events {
		if t.Events[i].Kind == localtrace.KindJoin {
			o.joins = append(o.joins, i)
		}
	}
	if !rc.tm.worker {
		return
	}
	for k, f := range o.sps {
		if _, ok := rc.tm.fork[f]; !ok {
			continue
		}
		last := -1
		for _, b := range o.sps[k+1:] {
			if _, fork := rc.tm.fork[b]; fork {
				break
			}
			last = b
		}
		if last >= 0 {
			rc.tm.spans = append(rc.tm.spans, [2]int{f, last})
		}
	}
}

// prevOmp returns the last OpenMP synchpoint before event ev (ev < 0:
// the last of all), -1 for none.
func (o *ompRootCause) prevOmp(ev int) int {
	k := len(o.sps)
	if ev >= 0 {
		k, _ = slices.BinarySearch(o.sps, ev)
	}
	if k == 0 {
		return -1
	}
	return o.sps[k-1]
}

// ompFork is the bwc step at the fork f (a parallel region's Enter): the
// master's idle delay of the serial time before it.
func (rc *rootCause) ompFork(c *replay.Ctx) error {
	if c.Loc.Thread == 0 {
		return rc.ompIdle(c, c.Index)
	}
	return nil
}

// ompIdle charges the master's serial time before fork f (f < 0: after
// the last join) as delay_ompidle: from the join after its previous
// OpenMP synchpoint (or the start), less its waits, times the worker
// threads; its waits there get the idle type's cost.
func (rc *rootCause) ompIdle(c *replay.Ctx, f int) error {
	workers := c.TeamSize() - 1
	if workers < 1 {
		return nil
	}
	o := &rc.omp
	prev := o.prevOmp(f)
	from := -1
	if prev >= 0 {
		from = prev
		if k, _ := slices.BinarySearch(o.joins, prev); k < len(o.joins) {
			from = o.joins[k]
		}
	}
	props := rc.sp.between(prev, f)
	rc.waitMap(c.Trace, props, &o.waits)
	rc.tm.runtimes(c.Trace, from, f, &o.times)
	diff(&o.times, &o.waits, &o.diffs)
	if !(o.diffs.sum+o.waits.sum > 0) {
		return nil
	}
	scale := float64(workers)
	for k, cp := range o.diffs.cp {
		if v := scale * o.diffs.v[k]; v != 0 {
			c.Add(DelayOmpIdle, cp, v)
		}
	}
	if o.waits.sum > 0 {
		rc.addCosts(costOmpIdle, props, scale)
	}
	return nil
}

// ompBarrier is the bwc step at barrier b (a thread's Leave of it), whose
// latest thread is lat: the delay goes to the latest thread.
func (rc *rootCause) ompBarrier(c *replay.Ctx, lat replay.TimeRank) error {
	b := c.Index
	o := &rc.omp
	// this thread's interval since its previous OpenMP synchpoint
	dl := &rc.dl
	prev := o.prevOmp(b)
	if err := rc.intervalTimes(c.Trace, prev, b, &dl.pruned); err != nil {
		return err
	}
	omega := dl.waits.sum
	costs := rc.costs.of(&rc.sp, b)
	o.gamma = append(o.gamma[:0], lat.Time-c.EnterTime(b))
	for _, k := range ompBarrierKeys[1:] {
		o.gamma = append(o.gamma, costs[k])
	}
	toGlobal(c, &dl.pruned, &o.mine)
	replay.Put(c, ThreadGammas, o.gamma)
	replay.Put(c, ThreadTimes, o.mine)
	n, err := c.TeamGatherFields(lat.Rank)
	if err != nil || c.Loc.Thread != lat.Rank {
		return err
	}
	// the latest thread: each thread's delay against its own times
	cps := o.mine.CP // the global call paths of the latest thread's interval, sorted
	nk, nc := len(ompBarrierKeys), len(cps)
	o.delay = slices.Grow(o.delay[:0], nk*nc)[:nk*nc]
	clear(o.delay)
	o.scales = slices.Grow(o.scales[:0], nk)[:nk]
	clear(o.scales)
	o.d = slices.Grow(o.d[:0], nc)[:nc]
	o.theirs = slices.Grow(o.theirs[:0], nc)[:nc]
	for t := range n {
		if err := c.UseGathered(t); err != nil {
			return err
		}
		gamma, _ := replay.Get(c, ThreadGammas)
		times, _ := replay.Get(c, ThreadTimes)
		if len(gamma) != nk {
			return fmt.Errorf("root cause: thread %d sent %d costs, want %d", t, len(gamma), nk)
		}
		times.Lookup(cps, o.theirs)
		dsum := 0.0
		for i := range cps {
			o.d[i] = math.Max(o.mine.T[i]-o.theirs[i], 0)
			dsum += o.d[i]
		}
		den := dsum + omega
		if !(den > 0) {
			continue
		}
		for k := range nk {
			s := gamma[k] / den
			o.scales[k] += s
			for i, d := range o.d {
				o.delay[k*nc+i] += s * d
			}
		}
	}
	dl.ensureLocal(c)
	for k, typ := range ompBarrierKeys {
		seg := o.delay[k*nc : (k+1)*nc]
		total := 0.0
		for _, v := range seg {
			total += v
		}
		if total > 0 {
			m := DelayOmpBarrier
			if typ >= 0 {
				m = longTermMetrics[typ]
			}
			for i, g := range cps {
				if l, ok := dl.g2l[g]; ok && seg[i] != 0 {
					c.Add(m, l, seg[i])
				}
			}
		}
	}
	props := rc.sp.between(prev, b)
	for k, typ := range ompBarrierKeys {
		if typ < 0 {
			typ = costOmpBarrier
		}
		rc.addCosts(typ, props, o.scales[k])
	}
	return nil
}
