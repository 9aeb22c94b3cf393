package analysis

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"scout/combine"
	"scout/hpc"
	"scout/localtrace"
	"scout/localtrace/otf2"
	"scout/patterns"
	"scout/replay"
	"scout/unify"
)

// Plan says what an analysis reads and how it runs.
type Plan struct {
	// Trace is the OTF2 anchor file or the directory holding it; the
	// archive must have global definitions (unify.Definitions makes them).
	Trace string
	// Jobs bounds how many locations are loaded at once (0: the number
	// of CPUs).
	Jobs int
	// Log receives progress messages and warnings; nil discards them.
	Log Log
	// Patterns is the pattern table; nil means patterns.Patterns.
	Patterns []patterns.Pattern
	// Skip leaves out optional parts of the analysis: their patterns do
	// not subscribe, so the passes only they need do not run, and their
	// metrics are not in the report (combine.Report.Skipped). The zero
	// Skip is the full analysis; patterns.AllParts the wait states alone
	// (the forward and backward passes).
	Skip patterns.Parts
	// TimeCorrect corrects the events' times with the controlled logical
	// clock before the analysis (patterns.RegisterTimeCorrection), so
	// that no message is received before it was sent; the report then
	// holds what the correction did (combine.Report.Correction).
	TimeCorrect bool
	// WhatIf predicts the run under its hypotheses (patterns.RegisterWhatIf)
	// after the timestamp correction, if any, and before the analysis;
	// the report then holds the prediction (combine.Report.Prediction).
	// With an empty pattern table the replay only predicts.
	WhatIf *WhatIf
}

// Log receives an analysis's messages.
type Log interface {
	// Printf reports progress (a phase begun or done).
	Printf(format string, args ...any)
	// Warnf reports a problem that does not stop the analysis.
	Warnf(format string, args ...any)
}

type silent struct{}

func (silent) Printf(string, ...any) {}
func (silent) Warnf(string, ...any)  {}

// session is an opened trace: what every phase of an analysis shares.
type session struct {
	plan    Plan
	log     Log
	archive *otf2.Archive
	defs    *otf2.Defs
	pl      map[uint64]localtrace.Placement
	env     *replay.Env
	// masters[r] is the master location of world rank r, which replays
	// the rank's MPI communication; others are the remaining (thread)
	// locations.
	masters, others []uint64
	// order lists every location in the order of the replay's ranks:
	// by rank, each master before its rank's other threads (by thread).
	order []uint64
	// nglobal is the number of call paths of the unified call tree.
	nglobal int
	// whatif is the plan's what-if prediction, resolved (nil: none)
	whatif *patterns.WhatIf
	// reduce is the trace reduction of Reduce (nil: none)
	reduce *patterns.Reduce
	// keep, if set, gets each master location after its replay, with
	// its trace
	keep func(l *located) error
	// early computes the statistics while the root-cause passes
	// replay (nil: after the replay)
	early *earlyStats
}

// open reads the trace's global definitions and what follows from them.
func open(p Plan) (*session, error) {
	s := &session{plan: p, log: p.Log}
	if s.log == nil {
		s.log = silent{}
	}
	if s.plan.Patterns == nil {
		s.plan.Patterns = patterns.Patterns
	}
	s.plan.Patterns = patterns.Without(s.plan.Patterns, p.Skip)
	var err error
	if s.archive, err = otf2.Open(p.Trace); err != nil {
		return nil, err
	}
	if s.defs, err = s.archive.ReadGlobalDefs(); err != nil {
		return nil, err
	}
	if s.pl, err = localtrace.Placements(s.defs); err != nil {
		return nil, err
	}
	if s.env, err = replay.NewEnv(s.defs); err != nil {
		return nil, err
	}
	if len(s.defs.Locations) == 0 {
		return nil, fmt.Errorf("%s defines no locations", s.archive.GlobalDefPath())
	}
	if s.masters, s.others, err = localtrace.Ranks(s.defs, s.pl); err != nil {
		return nil, fmt.Errorf("%s: %w", s.archive.GlobalDefPath(), err)
	}
	if p.TimeCorrect && len(s.others) > 0 {
		return nil, fmt.Errorf("%s: the timestamp correction does not support traces with several threads per rank yet (%d thread locations besides the %d master threads)",
			s.archive.GlobalDefPath(), len(s.others), len(s.masters))
	}
	if p.WhatIf != nil {
		if s.whatif, err = s.resolveWhatIf(p.WhatIf); err != nil {
			return nil, err
		}
	}
	s.order = append(slices.Clone(s.masters), s.others...)
	slices.SortStableFunc(s.order, func(a, b uint64) int { return s.byThread(a, b) })
	return s, nil
}

// byThread orders locations by rank, then thread.
func (s *session) byThread(a, b uint64) int {
	pa, pb := s.pl[a], s.pl[b]
	if c := cmp.Compare(pa.Rank, pb.Rank); c != 0 {
		return c
	}
	return cmp.Compare(pa.Thread, pb.Thread)
}

// located is one location in an analysis: its trace while it is needed
// (master locations until their replay), and its results.
type located struct {
	loc       uint64
	rank      int // MPI rank
	thread    int // thread in the rank (0: the master)
	trace     *localtrace.Trace
	callpaths []localtrace.Callpath
	events    int
	// values holds the metric values by metric id (patterns.Catalog),
	// each indexed by local call path; nil rows have no values.
	values [][]float64
	ccv    replay.Violations
	// stats are the wait-state instances for the statistics, with local
	// call paths
	stats  *patterns.Statistics
	global []uint32 // local call path → global call path
	// correction is what the timestamp correction did (nil without one)
	correction *patterns.Correction
	// prediction is what the what-if prediction found (nil without one)
	prediction *patterns.Prediction
	// reduction is what the trace reduction decided (nil without one)
	reduction *patterns.Reduction
	// locks are the lock releases of the rank's threads
	locks *replay.LockTable
	// tasks counts the location's OpenMP task events (not analyzed)
	tasks uint64
	// comm is the point-to-point traffic the location sent (nil when
	// the pattern table has no communication matrix, and on threads)
	comm *combine.CommStats
	// timeline is the location's time profile (nil when the pattern
	// table has none)
	timeline *combine.Timeline
}

// load reads location loc, whose trace is kept for the replay, which
// computes its profile (after the timestamp correction, if any).
func (s *session) load(loc uint64) (*located, error) {
	t, err := localtrace.Load(s.archive, s.defs, loc)
	if err != nil {
		return nil, err
	}
	l := &located{loc: loc, rank: s.pl[loc].Rank, thread: s.pl[loc].Thread, trace: t, callpaths: t.Callpaths, events: len(t.Events)}
	for _, typ := range []uint8{otf2.EvOmpTaskCreate, otf2.EvOmpTaskSwitch, otf2.EvOmpTaskComplete,
		otf2.EvThreadTaskCreate, otf2.EvThreadTaskSwitch, otf2.EvThreadTaskComplete} {
		l.tasks += t.Skipped[typ]
	}
	return l, nil
}

// teams returns the loaded locations ls (all threads of their ranks) in
// the order of the replay (session.order), and prepares the threads of
// each rank to replay together: the other threads continue their
// master's call tree (localtrace.AdoptThread), make no MPI calls (scout
// analyzes the MPI calls of master threads, as with MPI_THREAD_FUNNELED),
// enter as many parallel regions as their master (OpenMP teams of varying
// sizes are not supported), and share the lock releases of the rank.
func (s *session) teams(ls []*located) ([]*located, error) {
	out := slices.Clone(ls)
	slices.SortStableFunc(out, func(a, b *located) int { return s.byThread(a.loc, b.loc) })
	for lo := 0; lo < len(out); {
		hi := lo + 1
		for hi < len(out) && out[hi].rank == out[lo].rank {
			hi++
		}
		team := out[lo:hi]
		lo = hi
		if len(team) == 1 {
			continue
		}
		master := team[0]
		if master.thread != 0 {
			return nil, fmt.Errorf("rank %d has no master thread among the locations of this process", master.rank)
		}
		traces := make([]*localtrace.Trace, len(team))
		parallel := make([]int, len(team))
		for i, l := range team {
			if i > 0 {
				if err := localtrace.AdoptThread(l.trace, master.trace); err != nil {
					return nil, err
				}
				l.callpaths = l.trace.Callpaths
				if err := s.noMPI(l); err != nil {
					return nil, err
				}
			}
			traces[i] = l.trace
			for k, e := range l.trace.Events {
				if e.Kind == localtrace.KindEnter && s.env.Class(l.trace.Region(k))&replay.ClassOmpParallel != 0 {
					parallel[i]++
				}
			}
			if parallel[i] != parallel[0] {
				return nil, fmt.Errorf("rank %d: thread %d (location %d) takes part in %d OpenMP parallel regions, the master thread in %d: teams of varying sizes are not supported",
					l.rank, l.thread, l.loc, parallel[i], parallel[0])
			}
		}
		locks := replay.NewLockTable(traces)
		for _, l := range team {
			l.locks = locks
		}
	}
	return out, nil
}

// noMPI checks that thread location l calls no MPI function.
func (s *session) noMPI(l *located) error {
	for i, e := range l.trace.Events {
		mpi := false
		switch e.Kind {
		case localtrace.KindEnter:
			mpi = s.env.Class(l.trace.Region(i))&replay.ClassMPI != 0
		case localtrace.KindSend, localtrace.KindIsend, localtrace.KindRecv, localtrace.KindIrecv,
			localtrace.KindCollBegin, localtrace.KindCollEnd, localtrace.KindNbcRequest, localtrace.KindNbcComplete:
			mpi = true
		}
		if mpi {
			return fmt.Errorf("rank %d: thread %d (location %d) calls MPI (event %d, %v at %.9f s): scout analyzes the MPI calls of master threads only (MPI_THREAD_FUNNELED)",
				l.rank, l.thread, l.loc, i, e.Kind, l.trace.Time(i))
		}
	}
	return nil
}

// profile computes the time and visits of l's trace t.
func (l *located) profile(t *localtrace.Trace) {
	tm, vs := patterns.Profile(t)
	visits := make([]float64, len(vs))
	for i, v := range vs {
		visits[i] = float64(v)
	}
	l.setRow(patterns.Time, tm)
	l.setRow(patterns.Visits, visits)
}

func (l *located) setRow(m replay.Metric, row []float64) {
	for int(m) >= len(l.values) {
		l.values = append(l.values, nil)
	}
	l.values[m] = row
}

// replay runs the replay passes of l's trace as rank w.Rank() of the
// replay's world (session.order), with the patterns of the plan, and
// keeps what they found; the trace is then dropped. The masters of the
// ranks replay the MPI communication; when ranks have several threads,
// all threads of a rank replay as a team.
func (s *session) replay(l *located, w hpc.Comm) error {
	world, team := w, hpc.Comm(nil)
	if len(s.others) > 0 {
		color := -1 // the MPI world: the masters, in rank order
		if l.thread == 0 {
			color = 0
		}
		var err error
		if world, err = w.Split(color); err != nil {
			return err
		}
		if team, err = w.Split(l.rank); err != nil {
			return err
		}
	}
	loc, err := replay.NewLocation(s.env, l.trace, l.rank, world)
	if err != nil {
		return err
	}
	loc.Global, loc.NumGlobal = l.global, s.nglobal
	loc.Thread, loc.Team, loc.Locks = l.thread, team, l.locks
	master := l.thread == 0
	bus := &replay.Bus{Env: s.env}
	var corr *patterns.Correction
	if s.plan.TimeCorrect && master {
		corr = patterns.RegisterTimeCorrection(bus)
	}
	var pred *patterns.Prediction
	if s.whatif != nil && master {
		pred = patterns.RegisterWhatIf(bus, s.whatif)
	}
	var red *patterns.Reduction
	if s.reduce != nil && master {
		red = patterns.RegisterReduction(bus, s.reduce)
	}
	for _, p := range s.plan.Patterns {
		if master || p.Threads {
			p.Register(bus)
		}
	}
	stats := patterns.NewStatistics()
	if len(s.plan.Patterns) > 0 { // (none when the replay only retimes)
		stats = patterns.RegisterStatistics(bus)
		if s.early != nil {
			s.early.watch(bus, l, stats)
		}
	}
	if err := replay.NewReplayer(bus, loc).Run(); err != nil {
		return err
	}
	l.correction, l.prediction, l.reduction = corr, pred, red
	if s.keep != nil && master {
		if err := s.keep(l); err != nil {
			return err
		}
	}
	l.profile(l.trace)
	for m, row := range loc.Sev.Rows() {
		switch {
		case row == nil || m == int(patterns.Visits):
		case m == int(patterns.Time):
			// time the patterns moved between call paths (OpenMP
			// management time into the parallel region)
			for cp, v := range row {
				l.values[m][cp] += v
			}
		default:
			l.setRow(replay.Metric(m), row)
		}
	}
	l.ccv, l.stats, l.trace = loc.CCV, stats, nil
	if cc := patterns.CommCountsOf(bus); cc != nil {
		l.comm = commStats(l.rank, cc)
	}
	if tp := patterns.TimeProfileOf(bus); tp != nil {
		l.timeline = &combine.Timeline{Width: tp.Width, Bins: tp.Result()}
	}
	return nil
}

// commStats returns the traffic counted by the communication-matrix
// pattern on world rank rank's location, as the report holds it.
func commStats(rank int, cc *patterns.CommCounts) *combine.CommStats {
	peers := cc.Peers()
	c := &combine.CommStats{Pairs: make([]combine.CommPair, len(peers)), Sizes: cc.Sizes()}
	for i, p := range peers {
		c.Pairs[i] = combine.CommPair{From: int32(rank), To: p.To, Messages: p.Messages, Bytes: p.Bytes, Syncs: p.Syncs}
	}
	return c
}

// Run analyzes the trace in this process: it loads every location, unifies
// their call trees, replays the communication of the master locations
// (one goroutine per rank) with the plan's patterns and returns the
// report. A failed replay ends in one error that explains every rank's
// failure. Run stops between phases when ctx is done.
func Run(ctx context.Context, p Plan) (*combine.Report, error) {
	start := time.Now()
	s, err := open(p)
	if err != nil {
		return nil, err
	}
	all, err := s.loadInProcess(ctx)
	if err != nil {
		return nil, err
	}
	tree, err := s.unifyLocal(all)
	if err != nil {
		return nil, err
	}
	s.nglobal = len(tree.Nodes)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.early = s.newEarlyStats(all)
	if fs := s.replayInProcess(all); fs != nil {
		return nil, explainFailure(fs)
	}
	releaseTraces()
	rep := s.report(tree)
	if stats, ok := s.early.result(); ok {
		rep.Statistics = stats
		s.log.Printf("summarized the wait states while the root-cause passes replayed")
	} else {
		rep.Statistics = combine.StatsOf(s.statSources(all))
	}
	for _, l := range all {
		if err := add(rep, l.result(len(tree.Nodes))); err != nil {
			return nil, err
		}
	}
	rep.Sort()
	s.warnCCV(rep)
	s.log.Printf("analyzed %d events of %d locations, %d call paths, in %.2fs", rep.Events, len(all), len(tree.Nodes), time.Since(start).Seconds())
	return rep, nil
}

// loadInProcess loads every location of the trace in this process, in
// the order of the replay (session.order); a location that cannot be
// loaded fails the analysis with the failures of all.
func (s *session) loadInProcess(ctx context.Context) ([]*located, error) {
	s.log.Printf("read definitions of %s: %d locations (%d ranks), %d regions", s.plan.Trace, len(s.defs.Locations), len(s.masters), len(s.defs.Regions))
	all, failed, err := s.loadAll(ctx, s.masters, s.others)
	if err != nil {
		return nil, err
	}
	if failed != nil {
		return nil, explainFailure(failed)
	}
	return s.teams(all)
}

// releaseTraces returns the memory of the events to the operating system
// once the replay is over (the replay drops every location's trace): the
// collection it forces finds the traces unreachable, whose cleanups unmap
// their tables (localtrace keeps them off the heap), and it gives back
// the heap the passes used, which the collector would keep for the
// combining that follows; peak memory would be both plus what combining
// allocates.
func releaseTraces() { debug.FreeOSMemory() }

// replayInProcess replays the locations ls, in the order of the replay
// (session.order), as the ranks of an in-process run; when the replay
// fails, it returns the failures of the ranks (not nil).
func (s *session) replayInProcess(ls []*located) []rankFailure {
	var done atomic.Int64
	errs := make([]error, len(ls))
	err := hpc.RunInProcess(len(ls), func(c hpc.Comm) error {
		r := c.Rank()
		if errs[r] = s.replay(ls[r], c); errs[r] != nil {
			return errs[r]
		}
		if k := done.Add(1); k == int64(len(ls)) || k%64 == 0 {
			s.log.Printf("replayed %d/%d locations", k, len(ls))
		}
		return nil
	})
	if err != nil {
		return append([]rankFailure{}, rankFailures(ls, errs)...)
	}
	return nil
}

// loadAll loads the master locations (kept in rank order, first) and the
// other locations, at most plan.Jobs at once. When locations cannot be
// loaded, it loads the others all the same and returns the failures (by
// rank) of all that failed.
func (s *session) loadAll(ctx context.Context, masters, others []uint64) ([]*located, []rankFailure, error) {
	all := make([]*located, len(masters)+len(others))
	errs := make([]error, len(all))
	var loaded atomic.Int64
	err := forEach(ctx, len(all), s.plan.Jobs, func(i int) error {
		var loc uint64
		if i < len(masters) {
			loc = masters[i]
		} else {
			loc = others[i-len(masters)]
		}
		all[i], errs[i] = s.load(loc)
		if k := loaded.Add(1); k == int64(len(all)) || k%64 == 0 {
			s.log.Printf("loaded %d/%d locations", k, len(all))
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var fs []rankFailure
	for i, err := range errs {
		if err != nil {
			loc := masters
			if i >= len(masters) {
				loc, i = others, i-len(masters)
			}
			fs = append(fs, rankFailure{Rank: s.pl[loc[i]].Rank, Kind: failCause, Msg: err.Error()})
		}
	}
	slices.SortStableFunc(fs, func(a, b rankFailure) int { return a.Rank - b.Rank })
	return all, fs, nil
}

// unifyLocal unifies the call trees of locations (given in any order) in
// the order of their location ids, the order of every placement, and
// maps each location's call paths to the result.
func (s *session) unifyLocal(ls []*located) (*unify.CallTree, error) {
	byLoc := slices.Clone(ls)
	slices.SortFunc(byLoc, func(a, b *located) int { return cmp.Compare(a.loc, b.loc) })
	locals := make([][]localtrace.Callpath, len(byLoc))
	for i, l := range byLoc {
		locals[i] = l.callpaths
	}
	tree, maps, err := unify.Unify(locals)
	if err != nil {
		return nil, err
	}
	for i, l := range byLoc {
		l.global = maps[i]
	}
	return tree, nil
}

// report makes the empty report over the unified call tree.
func (s *session) report(tree *unify.CallTree) *combine.Report {
	rep := combine.New(s.defs, tree, s.pl, patterns.Catalog)
	rep.Skipped = s.plan.Skip
	return rep
}

// result is what one location contributes to the report, with global
// call paths; under MPI, rank 0 receives it from the other processes.
type result struct {
	Result     combine.Result
	Events     int
	CCV        replay.Violations
	Tasks      uint64
	Correction *patterns.Correction
	Prediction *patterns.Prediction
	// Comm is the location's point-to-point traffic (nil without the
	// communication matrix)
	Comm *combine.CommStats
}

// result returns l's contribution to a report over n global call paths.
func (l *located) result(n int) result {
	return result{Result: l.toGlobal(n), Events: l.events, CCV: l.ccv, Tasks: l.tasks, Correction: l.correction, Prediction: l.prediction, Comm: l.comm}
}

// add adds one location's contribution to rep.
func add(rep *combine.Report, r result) error {
	if err := rep.Add(r.Result); err != nil {
		return err
	}
	rep.Events += r.Events
	rep.OmpTasks += r.Tasks
	rep.CCV.P2P += r.CCV.P2P
	rep.CCV.Coll += r.CCV.Coll
	if r.Correction != nil {
		if rep.Correction == nil {
			rep.Correction = &patterns.Correction{}
		}
		rep.Correction.Add(*r.Correction)
	}
	if r.Prediction != nil {
		if rep.Prediction == nil {
			rep.Prediction = &patterns.Prediction{}
		}
		rep.Prediction.Add(r.Prediction)
	}
	if r.Comm != nil {
		if rep.Comm == nil {
			rep.Comm = &combine.CommStats{}
		}
		rep.Comm.Add(r.Comm)
	}
	return nil
}

// toGlobal returns l's values with global call paths (of which there
// are n).
func (l *located) toGlobal(n int) combine.Result {
	res := combine.Result{Location: l.loc, Values: make([][]float64, len(l.values)), Timeline: l.timeline}
	for m, local := range l.values {
		if local == nil {
			continue
		}
		g := make([]float64, n)
		for cp, v := range local {
			g[l.global[cp]] += v
		}
		res.Values[m] = g
	}
	return res
}

// statSources returns the wait-state instances of ls, with global call
// paths (mapped in place), for the statistics; the locations let go of
// them.
func (s *session) statSources(ls []*located) []combine.StatSource {
	srcs := make([]combine.StatSource, 0, len(ls))
	for _, l := range ls {
		srcs = append(srcs, s.statSource(l, l.stats))
		l.stats = nil
	}
	return srcs
}

// statSource returns the wait-state instances st of location l (nil:
// none), with global call paths (mapped in place).
func (s *session) statSource(l *located, st *patterns.Statistics) combine.StatSource {
	if st == nil {
		st = patterns.NewStatistics()
	}
	st.Colls.MapCallpaths(func(cp uint32) uint32 { return l.global[cp] })
	for _, cs := range st.Severe {
		for i := range cs {
			cs[i].Callpath = l.global[cs[i].Callpath]
		}
	}
	pl := s.pl[l.loc]
	return combine.StatSource{Rank: int32(pl.Rank), Thread: int32(pl.Thread), Statistics: st}
}

// warnCCV reports clock-condition violations, if any, and the OpenMP
// tasks the analysis leaves alone.
func (s *session) warnCCV(rep *combine.Report) {
	if rep.OmpTasks > 0 {
		s.log.Warnf("the trace has %d OpenMP task events, which scout does not analyze: the waits at barriers where tasks ran, their delay costs and the critical path through them are inaccurate", rep.OmpTasks)
	}
	if n := rep.CCV.P2P + rep.CCV.Coll; n > 0 {
		hint := " (correct the timestamps first with --time-correct)"
		if s.plan.TimeCorrect {
			hint = ""
		}
		s.log.Warnf("%d clock condition violations detected (point-to-point: %d, collective: %d); wait states near them are clamped and may be inaccurate%s",
			n, rep.CCV.P2P, rep.CCV.Coll, hint)
	}
}

// forEach runs fn(0..n-1) with at most jobs at once (0: the number of
// CPUs) and returns the first error; it stops starting calls when ctx is
// done.
func forEach(ctx context.Context, n, jobs int, fn func(i int) error) error {
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  atomic.Int64
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
	}
	for w := 0; w < min(jobs, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				if err := fn(i); err != nil {
					fail(err)
					next.Store(int64(n)) // start no more
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}
