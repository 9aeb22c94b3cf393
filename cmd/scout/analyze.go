package main

import (
	"fmt"
	"runtime"
	"sort"
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

// locResult is one location's analysis before unification.
type locResult struct {
	loc       uint64
	callpaths []localtrace.Callpath
	events    int
	values    map[string][]float64 // by local call path
	ccv       replay.Violations
	instances []patterns.Instance // local call paths
}

// analyze loads every location of the trace in-process, replays the
// communication, computes the metrics and merges them into a report.
func analyze(o options, prog *progress) (*combine.Report, error) {
	start := time.Now()
	prog.printf("opening %s", o.trace)
	a, err := otf2.Open(o.trace)
	if err != nil {
		return nil, err
	}
	defs, err := a.ReadGlobalDefs()
	if err != nil {
		return nil, err
	}
	pl, err := localtrace.Placements(defs)
	if err != nil {
		return nil, err
	}
	env, err := replay.NewEnv(defs)
	if err != nil {
		return nil, err
	}
	n := len(defs.Locations)
	if n == 0 {
		return nil, fmt.Errorf("%s defines no locations", a.GlobalDefPath())
	}
	// Master threads replay the MPI communication, one per world rank.
	masters, others, err := localtrace.Ranks(defs, pl)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.GlobalDefPath(), err)
	}
	prog.printf("read definitions: %d locations (%d ranks), %d regions", n, len(masters), len(defs.Regions))
	results := make([]locResult, 0, n)
	var mu sync.Mutex
	var done atomic.Int64
	report := func(r locResult) {
		mu.Lock()
		results = append(results, r)
		mu.Unlock()
		if k := done.Add(1); k == int64(n) || k%64 == 0 {
			prog.printf("analyzed %d/%d locations", k, n)
		}
	}
	if _, err := replayInProcess(a, defs, env, masters, report, nil); err != nil {
		return nil, err
	}
	if err := forEach(others, o.jobs, func(loc uint64) error {
		r, err := profileOnly(a, defs, loc)
		if err == nil {
			report(r)
		}
		return err
	}); err != nil {
		return nil, err
	}
	sort.Slice(results, func(i, j int) bool { return results[i].loc < results[j].loc })
	rep, events, err := merge(defs, pl, results)
	if err != nil {
		return nil, err
	}
	rep.Events = events
	warnCCV(prog, results)
	prog.printf("analyzed %d events of %d locations, %d call paths, in %.2fs", events, n, len(rep.Tree.Nodes), time.Since(start).Seconds())
	return rep, nil
}

// replayInProcess replays the master locations masters[r] of ranks
// 0..len(masters)-1, each in a goroutine, over the in-process transport,
// calls done (if not nil) with each result as it completes, and returns
// the results in rank order.
//
// When the replay fails, errs (if not nil) holds the error of each rank.
func replayInProcess(a *otf2.Archive, defs *otf2.Defs, env *replay.Env, masters []uint64, done func(locResult), errs []error) ([]locResult, error) {
	results := make([]locResult, len(masters))
	if errs == nil {
		errs = make([]error, len(masters))
	}
	err := hpc.RunInProcess(len(masters), func(c hpc.Comm) error {
		r, err := analyzeRank(a, defs, env, masters[c.Rank()], c)
		if err != nil {
			errs[c.Rank()] = err
			return err
		}
		results[c.Rank()] = r
		if done != nil {
			done(r)
		}
		return nil
	})
	if err != nil {
		if fs := rankFailures(0, errs); len(fs) > 0 {
			return nil, explainFailure(fs)
		}
		return nil, err
	}
	return results, nil
}

// warnCCV prints the number of clock-condition violations, if any.
func warnCCV(prog *progress, results []locResult) {
	var ccv replay.Violations
	for _, r := range results {
		ccv.P2P += r.ccv.P2P
		ccv.Coll += r.ccv.Coll
	}
	if ccv.P2P+ccv.Coll > 0 {
		prog.warnf("%d clock condition violations detected (point-to-point: %d, collective: %d); wait states near them are clamped and may be inaccurate",
			ccv.P2P+ccv.Coll, ccv.P2P, ccv.Coll)
	}
}

// analyzeRank loads a master location, computes its profile and replays
// its communication as world rank w.Rank().
func analyzeRank(a *otf2.Archive, defs *otf2.Defs, env *replay.Env, loc uint64, w hpc.Comm) (locResult, error) {
	t, err := localtrace.Load(a, defs, loc)
	if err != nil {
		return locResult{}, err
	}
	l, err := replay.NewLocation(env, t, w.Rank(), w)
	if err != nil {
		return locResult{}, err
	}
	bus := &replay.Bus{}
	patterns.Register(bus)
	stats := patterns.RegisterStatistics(bus)
	if err := replay.NewReplayer(bus, l).Run(); err != nil {
		return locResult{}, err
	}
	vals := patterns.Named(l.Sev)
	addProfile(t, vals)
	return locResult{loc: loc, callpaths: t.Callpaths, events: len(t.Events), values: vals, ccv: l.CCV,
		instances: stats.Instances}, nil
}

// profileOnly handles a location that takes no part in the replay.
func profileOnly(a *otf2.Archive, defs *otf2.Defs, loc uint64) (locResult, error) {
	t, err := localtrace.Load(a, defs, loc)
	if err != nil {
		return locResult{}, err
	}
	vals := map[string][]float64{}
	addProfile(t, vals)
	return locResult{loc: loc, callpaths: t.Callpaths, events: len(t.Events), values: vals}, nil
}

func addProfile(t *localtrace.Trace, vals map[string][]float64) {
	tm, vs := patterns.Profile(t)
	v := make([]float64, len(vs))
	for i, x := range vs {
		v[i] = float64(x)
	}
	vals["time"], vals["visits"] = tm, v
}

// merge unifies the call trees and maps every location's values to the
// global call paths.
func merge(defs *otf2.Defs, pl map[uint64]localtrace.Placement, results []locResult) (*combine.Report, int, error) {
	locals := make([][]localtrace.Callpath, len(results))
	events := 0
	for i, r := range results {
		locals[i] = r.callpaths
		events += r.events
	}
	tree, maps, err := unify.Unify(locals)
	if err != nil {
		return nil, 0, err
	}
	rep := combine.New(defs, tree, pl, patterns.Catalog)
	ninst := 0
	for _, r := range results {
		ninst += len(r.instances)
	}
	rep.Instances = make([]patterns.Instance, 0, ninst)
	for i, r := range results {
		if err := rep.Add(toGlobal(r, maps[i], len(tree.Nodes))); err != nil {
			return nil, 0, err
		}
		rep.Instances = append(rep.Instances, r.instances...)
	}
	return rep, events, nil
}

// toGlobal maps a location's values and instances to the global call
// paths (m maps its local call paths to global ones, of which there are
// n). The instances are mapped in place.
func toGlobal(r locResult, m []uint32, n int) combine.Result {
	res := combine.Result{Location: r.loc, Values: make(map[string][]float64, len(r.values))}
	for metric, local := range r.values {
		g := make([]float64, n)
		for l, v := range local {
			g[m[l]] += v
		}
		res.Values[metric] = g
	}
	for i := range r.instances {
		r.instances[i].Callpath = m[r.instances[i].Callpath]
	}
	return res
}

// forEach runs fn on every item with at most jobs at once (default: CPUs)
// and returns the first error.
func forEach(items []uint64, jobs int, fn func(uint64) error) error {
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  atomic.Int64
	)
	for w := 0; w < min(jobs, len(items)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(items) {
					return
				}
				if err := fn(items[i]); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}
