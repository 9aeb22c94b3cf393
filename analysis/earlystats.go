package analysis

import (
	"context"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"

	"scout/combine"
	"scout/patterns"
	"scout/replay"
)

// The statistics file summarises the wait-state instances, which the
// forward and backward passes find; the root-cause passes that follow
// add none. In-process, those passes leave processors idle: a location
// of their backward pass (bwc) waits for the one it depends on, and with
// a chain of such dependencies about a third of each worker's time went
// idle in bwc of the root-cause bench trace (0.25-0.28 of 0.67-0.78 s),
// while the statistics took 0.2 s after the replay (0.37 s of processor
// time, most of it aggregating the collective operations). So once every
// location is done with its wait-state passes, the statistics are
// computed beside the replay, on a thread of their own at the lowest
// priority (nice 19) and on a processor of Go's added for them: they
// take the time the workers leave idle and yield to the workers
// otherwise. The result is the same (combine.StatsOn equals StatsOf),
// and so is the peak memory: StatsOn aggregates the collective
// operations in groups, one after the other (all at once, they took 48
// MiB more at the peak, which is in the root-cause passes). Alternating
// runs of the full analysis in-process: root-cause bench trace 1.79 ->
// 1.65 s, HPCG-like 1.25 -> 1.13 s; peaks unchanged (230 and 174 MiB).

// earlyStats computes the statistics of an in-process analysis while the
// root-cause passes replay.
type earlyStats struct {
	s     *session
	ls    []*located
	index map[*located]int
	mu    sync.Mutex
	sts   []*patterns.Statistics // by location, as they are done
	left  int                    // locations not done with their wait-state passes
	done  chan struct{}          // closed when stats is set
	// stats are the statistics, set before done is closed
	stats []combine.PatternStats
}

// newEarlyStats returns the early statistics of an in-process analysis
// of the locations ls, nil when they would gain nothing: without
// root-cause passes (nothing replays after the wait states) or with
// threads (their teams keep the workers busy).
func (s *session) newEarlyStats(ls []*located) *earlyStats {
	rootCause := slices.ContainsFunc(s.plan.Patterns, func(p patterns.Pattern) bool { return p.Part != 0 })
	if !rootCause || len(s.others) > 0 || len(ls) == 0 {
		return nil
	}
	e := &earlyStats{s: s, ls: ls, index: make(map[*located]int, len(ls)), sts: make([]*patterns.Statistics, len(ls)),
		left: len(ls), done: make(chan struct{})}
	for i, l := range ls {
		e.index[l] = i
	}
	return e
}

// watch makes location l report its statistics st when its last
// wait-state pass is done: the backward pass, or the forward pass when
// the backward pass does not run.
func (e *earlyStats) watch(bus *replay.Bus, l *located, st *patterns.Statistics) {
	i, ok := e.index[l]
	if !ok {
		return
	}
	last := replay.Forward
	if bus.Runs(replay.Backward) {
		last = replay.Backward
	}
	bus.On(replay.Finished, func(c *replay.Ctx) error {
		if c.Pass == last {
			e.ready(i, st)
		}
		return nil
	})
}

// ready takes location i's statistics; the last location to come
// starts their computation.
func (e *earlyStats) ready(i int, st *patterns.Statistics) {
	e.mu.Lock()
	e.sts[i] = st
	e.left--
	start := e.left == 0
	e.mu.Unlock()
	if !start {
		return
	}
	addProc()
	go func() {
		defer removeProc()
		// the thread ends with the goroutine, its priority with it
		runtime.LockOSThread()
		lowerPriority()
		// (the goroutine would carry the labels of the pass that
		// started it: a profile tells the statistics apart)
		pprof.Do(context.Background(), pprof.Labels("pass", "statistics"), func(context.Context) {
			srcs := make([]combine.StatSource, len(e.ls))
			for i, l := range e.ls {
				srcs[i] = e.s.statSource(l, e.sts[i])
			}
			e.stats = combine.StatsOn(srcs)
		})
		close(e.done)
	}()
}

// result returns the statistics, waiting for them; false when they were
// not started (a location did not report), and the caller computes them.
func (e *earlyStats) result() ([]combine.PatternStats, bool) {
	if e == nil {
		return nil, false
	}
	e.mu.Lock()
	started := e.left == 0
	e.mu.Unlock()
	if !started {
		return nil, false
	}
	<-e.done
	return e.stats, true
}

// addedProcs counts the processors added for early statistics (addProc)
// over the base number (GOMAXPROCS before the first).
var addedProcs struct {
	sync.Mutex
	added, base int
}

// addProc adds a processor to Go's for a goroutine at low priority, so
// that the workers keep theirs.
func addProc() {
	addedProcs.Lock()
	defer addedProcs.Unlock()
	if addedProcs.added == 0 {
		addedProcs.base = runtime.GOMAXPROCS(0)
	}
	addedProcs.added++
	runtime.GOMAXPROCS(addedProcs.base + addedProcs.added)
}

// removeProc takes back a processor that addProc added.
func removeProc() {
	addedProcs.Lock()
	defer addedProcs.Unlock()
	addedProcs.added--
	runtime.GOMAXPROCS(addedProcs.base + addedProcs.added)
}
