//go:build mpi

package main

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"os"
	"sort"
	"strconv"
	"syscall"

	"scout/combine"
	"scout/hpc/mpi"
	"scout/localtrace"
	"scout/localtrace/otf2"
	"scout/patterns"
	"scout/replay"
)

// mpiBuild tells whether this binary can run under mpirun.
const mpiBuild = true

func init() { gob.Register(replay.Violations{}) }

// faultInjection kills this process when SCOUT_FAULT_KILL_RANK names its
// rank: the tests use it to check that a rank dying mid-analysis fails
// the whole job and leaves no report behind.
func faultInjection(rank int) {
	if v := os.Getenv("SCOUT_FAULT_KILL_RANK"); v != "" && v == strconv.Itoa(rank) {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
}

// wireResult is a location's result as sent to rank 0.
type wireResult struct {
	Loc       uint64
	Callpaths []localtrace.Callpath
	Events    int
	Values    map[string][]float64
	CCV       replay.Violations
	Instances []patterns.Instance
}

// runMPI analyzes the trace with one MPI process per application rank;
// rank 0 merges the results and returns the report, others return nil.
func runMPI(o options, prog *progress) (*combine.Report, error) {
	mpi.Init()
	defer mpi.Finalize()
	w := mpi.World()
	me := w.Rank()
	if me != 0 {
		prog = newProgress(prog.w, true)
	}
	fail := func(err error) (*combine.Report, error) {
		fmt.Fprintf(os.Stderr, "scout: rank %d: %v\n", me, err)
		mpi.Abort(1)
		return nil, err
	}
	a, err := otf2.Open(o.trace)
	if err != nil {
		return fail(err)
	}
	defs, err := a.ReadGlobalDefs()
	if err != nil {
		return fail(err)
	}
	pl, err := localtrace.Placements(defs)
	if err != nil {
		return fail(err)
	}
	env, err := replay.NewEnv(defs)
	if err != nil {
		return fail(err)
	}
	var mine []uint64 // this process's locations, master first
	ranks := 0
	for _, l := range defs.Locations {
		p := pl[l.Self]
		if p.Thread == 0 {
			ranks++
		}
		if p.Rank == me {
			mine = append(mine, l.Self)
		}
	}
	if w.Size() != ranks {
		return fail(fmt.Errorf("the trace has %d MPI ranks, but scout runs with %d processes: start it with mpirun -np %d", ranks, w.Size(), ranks))
	}
	sort.Slice(mine, func(i, j int) bool { return pl[mine[i]].Thread < pl[mine[j]].Thread })
	prog.printf("analyzing %d ranks with %d MPI processes", ranks, w.Size())
	faultInjection(me)
	var results []wireResult
	h := w.Comm()
	world := replay.OverHPC(h)
	for k, loc := range mine {
		var r locResult
		if k == 0 {
			r, err = analyzeRank(a, defs, env, loc, world)
		} else {
			r, err = profileOnly(a, defs, loc)
		}
		if err != nil {
			return fail(err)
		}
		results = append(results, wireResult{r.loc, r.callpaths, r.events, r.values, r.ccv, r.instances})
	}
	if err := h.Finish(); err != nil {
		return fail(err)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(results); err != nil {
		return fail(err)
	}
	parts, err := w.Gather(0, buf.Bytes())
	if err != nil {
		return fail(err)
	}
	if me != 0 {
		return nil, nil
	}
	var all []locResult
	for _, p := range parts {
		var rs []wireResult
		if err := gob.NewDecoder(bytes.NewReader(p)).Decode(&rs); err != nil {
			return fail(fmt.Errorf("decoding results: %w", err))
		}
		for _, r := range rs {
			all = append(all, locResult{loc: r.Loc, callpaths: r.Callpaths, events: r.Events, values: r.Values, ccv: r.CCV, instances: r.Instances})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].loc < all[j].loc })
	rep, events, err := merge(defs, pl, all)
	if err != nil {
		return fail(err)
	}
	rep.Events = events
	warnCCV(prog, all)
	return rep, nil
}
