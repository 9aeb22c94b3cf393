package main

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"scout/combine"
	"scout/localtrace"
	"scout/localtrace/otf2"
	"scout/patterns"
	"scout/unify"
)

// locResult is one location's analysis before unification.
type locResult struct {
	loc       uint64
	callpaths []localtrace.Callpath
	events    int
	time      []float64
	visits    []uint64
}

// analyze loads every location of the trace in-process, computes the
// metrics and merges them into a report.
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
	n := len(defs.Locations)
	if n == 0 {
		return nil, fmt.Errorf("%s defines no locations", a.GlobalDefPath())
	}
	prog.printf("read definitions: %d locations, %d regions", n, len(defs.Regions))
	results := make([]locResult, n)
	jobs := o.jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		done  atomic.Int64
		next  atomic.Int64
	)
	for w := 0; w < min(jobs, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				r, err := analyzeLocation(a, defs, defs.Locations[i].Self)
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				results[i] = r
				if k := done.Add(1); k == int64(n) || k%64 == 0 {
					prog.printf("analyzed %d/%d locations", k, n)
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	locals := make([][]localtrace.Callpath, n)
	var events int
	for i, r := range results {
		locals[i] = r.callpaths
		events += r.events
	}
	tree, maps, err := unify.Unify(locals)
	if err != nil {
		return nil, err
	}
	rep := combine.New(defs, tree, pl, patterns.Catalog)
	for i, r := range results {
		res := combine.Result{Location: r.loc, Values: map[string][]float64{
			"time":   make([]float64, len(tree.Nodes)),
			"visits": make([]float64, len(tree.Nodes)),
		}}
		for l, g := range maps[i] {
			res.Values["time"][g] += r.time[l]
			res.Values["visits"][g] += float64(r.visits[l])
		}
		if err := rep.Add(res); err != nil {
			return nil, err
		}
	}
	el := time.Since(start)
	prog.printf("analyzed %d events of %d locations, %d call paths, in %.2fs", events, n, len(tree.Nodes), el.Seconds())
	return rep, nil
}

func analyzeLocation(a *otf2.Archive, defs *otf2.Defs, loc uint64) (locResult, error) {
	t, err := localtrace.Load(a, defs, loc)
	if err != nil {
		return locResult{}, err
	}
	tm, vs := patterns.Profile(t)
	return locResult{loc: loc, callpaths: t.Callpaths, events: len(t.Events), time: tm, visits: vs}, nil
}
