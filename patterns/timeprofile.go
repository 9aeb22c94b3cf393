package patterns

import (
	"math"

	"scout/localtrace"
	"scout/replay"
)

// The time profile: what a location did over the run's time.
//
//	root:        every Enter and Leave of the location (its activity
//	             between two events), and every wait state the other
//	             patterns found on it
//	severity:    per time bin, the seconds the location spent in each
//	             activity: computation (in a region that is neither MPI
//	             nor OpenMP synchronization), MPI, OpenMP
//	             synchronization (replay.ClassOmpSync), and waiting
//	attribution: the location and the time bin, not a call path: the
//	             pattern computes no metric of the catalog; its result
//	             is TimeProfileOf(bus), which the analysis keeps with
//	             the location's results
//
// A moment belongs to the activity of the innermost region entered, as
// the report's exclusive time does (computation, mpi, omp_time); time
// outside every region of the location (a worker thread between
// parallel regions, the time before its first event) belongs to none,
// so that the activities of a location add up to its time metric.
// The management of OpenMP thread teams (omp_management: a thread's
// fork before it enters a parallel region, its join after it leaves one)
// is OpenMP synchronization too, taken from the master's activity in the
// call path that forks the team, and added to a worker's time, as the
// time metric has it. Waiting is the time of the wait states: Late Sender, Late Receiver, the
// collective waits and completions (the metrics of the "collective wait
// states" pattern), the waits at OpenMP barriers and for OpenMP locks —
// each in the call where it occurred: a wait for a late partner from the
// call's Enter on, a completion up to the collective's end. It is taken
// from the activity of that call (MPI or OpenMP), so that the four
// activities still add up to the time in regions, and the waiting of a
// location adds up to its wait-state metrics (which its children, such
// as Late Sender, wrong order, only refine).
//
// Bins are TimeProfileWidth wide, from time 0 (the trace's global offset)
// on, as many as TimeProfileBinsFor the trace's locations allows; a
// location whose events reach beyond them doubles its bin width, merging
// pairs of bins, until they fit, so that every location's width is the
// first one times a power of two (the report brings them to the widest).
// The cost is one walk over the events at the end of the forward pass
// and a few bins per wait state; the memory at most 32 bytes per bin: 4
// kB per location up to 2 048 locations, and 8 MB in all up to 16 384.
func registerTimeProfile(bus *replay.Bus) {
	tp := timeProfile(bus)
	tp.on = true
	bus.On(replay.Started, func(c *replay.Ctx) error {
		if tp.Width == 0 {
			tp.bins = TimeProfileBinsFor(len(c.Env.Defs.Locations))
			tp.Width = TimeProfileWidth(c.Env.Defs.Clock.TimerResolution, c.Env.Defs.Clock.TraceLength, tp.bins)
			tp.Bins = make([]Activities, 0, tp.bins) // most locations fill them all
		}
		return nil
	})
	bus.On(replay.Finished, func(c *replay.Ctx) error {
		if c.Pass == replay.Forward {
			tp.timeline(c)
		}
		return nil
	})
	replay.Subscribe(bus, LateSenderFound, func(c *replay.Ctx, info *LateSenderInfo) error {
		t := enterTime(c, info.Recv)
		tp.wait(ActMPI, t, t+info.Idle)
		return nil
	})
	replay.Subscribe(bus, LateReceiverFound, func(c *replay.Ctx, lr *LateReceiverInfo) error {
		t := enterTime(c, lr.Completion)
		tp.wait(ActMPI, t, t+lr.Idle)
		return nil
	})
	for _, p := range collectivePatterns {
		bus.On(p.topic, func(c *replay.Ctx) error {
			if p.syncOnly && !c.Coll.SyncPoint {
				return nil
			}
			if p.completion {
				if v := c.Completion; v > 0 {
					end := c.Time()
					tp.wait(ActMPI, end-v, end)
				}
			} else if v := c.Idle; v > 0 {
				t := enterTime(c, c.Index)
				tp.wait(ActMPI, t, t+v)
			}
			return nil
		})
	}
	replay.Subscribe(bus, OmpWaitFound, func(c *replay.Ctx, w *OmpWaitInfo) error {
		tp.wait(ActOpenMP, w.Enter, w.Enter+w.Idle)
		return nil
	})
	replay.Subscribe(bus, OmpTeamFound, func(c *replay.Ctx, info *OmpTeamInfo) error {
		if info.Amount <= 0 {
			return nil
		}
		t0 := c.Time()
		if info.Fork {
			t0 -= info.Amount
		}
		t1 := t0 + info.Amount
		tp.add(ActOpenMP, t0, t1, 1)
		// the master manages the team in the call path that forks it, a
		// worker outside every region
		if cp := c.Callpath(c.Index); c.Loc.Thread == 0 {
			if parent := c.Trace.Callpaths[cp].Parent; parent != localtrace.None {
				tp.add(activityOf(c.Env.Class(c.Trace.Callpaths[parent].Region)), t0, t1, -1)
			}
		}
		return nil
	})
}

// enterTime is the Enter time of the call that holds event i (the
// event's own time for one outside every region).
func enterTime(c *replay.Ctx, i int) float64 {
	if en := c.Trace.EnterOf(i); en != localtrace.None {
		return c.Trace.Time(int(en))
	}
	return c.Trace.Time(i)
}

// Activity is what a location does at a moment, for the time profile.
type Activity int

// The activities of the time profile.
const (
	ActComputation Activity = iota // in a region neither MPI nor OpenMP synchronization
	ActMPI                         // in an MPI call, not waiting
	ActOpenMP                      // in OpenMP synchronization, not waiting
	ActWaiting                     // in a wait state (MPI or OpenMP)
	NumActivities
)

var activityNames = [NumActivities]string{"computation", "mpi", "openmp", "waiting"}

func (a Activity) String() string { return activityNames[a] }

// Activities are the seconds of each activity in one time bin.
type Activities [NumActivities]float64

// TimeProfileBins is the largest number of bins of a location's time
// profile.
const TimeProfileBins = 128

// TimeProfileBinsFor is the number of bins of each location's time
// profile in an analysis of n locations: TimeProfileBins up to 2 048
// locations, fewer beyond (a power of two, at least 16), so that the
// profiles of all locations together stay within 8 MB, or 512 bytes per
// location.
func TimeProfileBinsFor(n int) int {
	b := TimeProfileBins
	for b > 16 && n*b > 2048*TimeProfileBins {
		b /= 2
	}
	return b
}

// TimeProfileWidth is the first bin width of the time profiles, in
// seconds: the smallest of 1, 2 and 5 times a power of ten that spreads
// a trace of length ticks (at resolution ticks per second) over at most
// bins bins; one millisecond when the trace states no length.
func TimeProfileWidth(resolution, length uint64, bins int) float64 {
	if resolution == 0 || length == 0 || bins <= 0 {
		return 1e-3
	}
	need := float64(length) / float64(resolution) / float64(bins)
	p := math.Pow(10, math.Floor(math.Log10(need)))
	for _, f := range []float64{1, 2, 5, 10} {
		if w := f * p; w >= need {
			return w
		}
	}
	return 10 * p
}

// TimeProfile is one location's time profile: Bins[k] covers the time
// from k·Width to (k+1)·Width seconds (since the trace's global offset);
// bins after the last with activity are absent.
type TimeProfile struct {
	on    bool
	bins  int // the most bins (TimeProfileBinsFor)
	Width float64
	Bins  []Activities
	stack []Activity // the activities of the open regions, while walking
}

// timeProfile returns the time profile of the location bus replays.
func timeProfile(bus *replay.Bus) *TimeProfile {
	return replay.Shared(bus, func() *TimeProfile { return &TimeProfile{} })
}

// TimeProfileOf returns the time profile of bus's location after its
// replay, or nil when the pattern was not registered on bus.
func TimeProfileOf(bus *replay.Bus) *TimeProfile {
	if tp := timeProfile(bus); tp.on {
		return tp
	}
	return nil
}

// Result returns the location's bins once its replay is over: as Bins,
// with the rounding of the waits taken from the time in calls (a
// negative amount within 1e-9 of the width) set to 0.
func (tp *TimeProfile) Result() []Activities {
	for k := range tp.Bins {
		for a, v := range tp.Bins[k] {
			if v < 0 && v > -1e-9*tp.Width {
				tp.Bins[k][a] = 0
			}
		}
	}
	return tp.Bins
}

// activityOf is the activity in a region of class cls.
func activityOf(cls replay.RegionClass) Activity {
	switch {
	case cls&replay.ClassMPI != 0:
		return ActMPI
	case cls&replay.ClassOmpSync != 0:
		return ActOpenMP
	}
	return ActComputation
}

// timeline adds the activity between every two consecutive events of
// the location: that of the innermost region entered.
func (tp *TimeProfile) timeline(c *replay.Ctx) {
	t := c.Trace
	evs := t.Events
	stack := tp.stack[:0]
	prev := 0.0
	// the bin of the last interval added, [lo, hi): an interval within it
	// (most are) adds there without a division
	k, lo, hi := -1, 0.0, 0.0
	for i := range evs {
		e := &evs[i]
		if e.Kind != localtrace.KindEnter && e.Kind != localtrace.KindLeave {
			continue
		}
		ti := t.Time(i)
		if n := len(stack); n > 0 && ti > prev {
			if a := stack[n-1]; k >= 0 && prev >= lo && ti <= hi {
				tp.Bins[k][a] += ti - prev
			} else {
				tp.add(a, prev, ti, 1)
				if w := tp.Width; ti > 0 {
					k = min(int(ti/w), len(tp.Bins)-1)
					lo, hi = float64(k)*w, float64(k+1)*w
				}
			}
		}
		prev = ti
		if e.Kind == localtrace.KindEnter {
			stack = append(stack, activityOf(c.RegionClass(i)))
		} else if len(stack) > 0 {
			stack = stack[:len(stack)-1]
		}
	}
	tp.stack = nil
}

// wait moves the time from t0 to t1 from activity a to waiting.
func (tp *TimeProfile) wait(a Activity, t0, t1 float64) {
	tp.add(ActWaiting, t0, t1, 1)
	tp.add(a, t0, t1, -1)
}

// add adds sign × the time from t0 to t1 to activity a, over the bins
// it covers (times before 0 count at 0).
func (tp *TimeProfile) add(a Activity, t0, t1, sign float64) {
	t0, t1 = max(t0, 0), max(t1, 0)
	if !(t1 > t0) || math.IsInf(t1, 0) {
		return
	}
	if tp.Width == 0 {
		tp.Width = 1e-3 // a replay without Started: a test's
	}
	if tp.bins == 0 {
		tp.bins = TimeProfileBins
	}
	if last := t1 / tp.Width; last > float64(tp.bins) {
		// the smallest power of two that brings t1 into the last bin
		f := 1.0
		for last/f > float64(tp.bins) {
			f *= 2
		}
		tp.Width *= f
		tp.Bins = WidenBins(tp.Bins, f)
	}
	w := tp.Width
	// the bins of the first and the last instant of the interval
	k0, k1 := int(t0/w), int(t1/w)
	if k1 > k0 && float64(k1)*w >= t1 {
		k1-- // t1 is the end of bin k1 − 1
	}
	k1 = min(k1, tp.bins-1)
	k0 = min(k0, k1)
	for len(tp.Bins) <= k1 {
		tp.Bins = append(tp.Bins, Activities{})
	}
	if k0 >= k1 {
		tp.Bins[k1][a] += sign * (t1 - t0)
		return
	}
	tp.Bins[k0][a] += sign * (float64(k0+1)*w - t0)
	for k := k0 + 1; k < k1; k++ {
		tp.Bins[k][a] += sign * w
	}
	tp.Bins[k1][a] += sign * (t1 - float64(k1)*w)
}

// WidenBins returns the bins of a profile made f times as wide (f a
// power of two): bins [0, f) merged into bin 0, and so on, in place.
func WidenBins(bins []Activities, f float64) []Activities {
	if f <= 1 || len(bins) == 0 {
		return bins
	}
	g := int(min(f, float64(len(bins)))) // merging more bins than there are merges them all
	n := (len(bins) + g - 1) / g
	for k := range n {
		var sum Activities
		for _, b := range bins[k*g : min((k+1)*g, len(bins))] {
			for a := range sum {
				sum[a] += b[a]
			}
		}
		bins[k] = sum
	}
	return bins[:n]
}
