//go:build mpi

package main

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"scout/combine"
	"scout/hpc/mpi"
	"scout/localtrace"
	"scout/localtrace/otf2"
	"scout/patterns"
	"scout/replay"
	"scout/unify"
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

// wireResult is a location's result as sent to rank 0, with global call
// paths.
type wireResult struct {
	Result    combine.Result
	Events    int
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
	var results []locResult
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
		results = append(results, r)
	}
	if err := h.Finish(); err != nil {
		return fail(err)
	}
	// Unify the call trees in parallel: this process's locations first,
	// then a reduction over the processes.
	locals := make([][]localtrace.Callpath, len(results))
	for i, r := range results {
		locals[i] = r.callpaths
	}
	mineTree, _, err := unify.Unify(locals)
	if err != nil {
		return fail(err)
	}
	tree, err := unify.Reduce(h, mineTree)
	if err != nil {
		return fail(err)
	}
	wire := make([]wireResult, len(results))
	for i, r := range results {
		m, err := tree.MapLocal(r.callpaths)
		if err != nil {
			return fail(err)
		}
		wire[i] = wireResult{toGlobal(r, m, len(tree.Nodes)), r.events, r.ccv, r.instances}
	}
	// Peak memory of every process, for the progress report.
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	rss, err := h.Gather(0, binary.LittleEndian.AppendUint64(nil, uint64(ru.Maxrss)<<10))
	if err != nil {
		return fail(err)
	}
	if me == 0 {
		var b strings.Builder
		for r, v := range rss {
			fmt.Fprintf(&b, " %d:%.1f", r, float64(binary.LittleEndian.Uint64(v))/(1<<20))
		}
		prog.printf("peak memory per process before combining (rank:MiB):%s", b.String())
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(wire); err != nil {
		return fail(err)
	}
	parts, err := w.Gather(0, buf.Bytes())
	if err != nil {
		return fail(err)
	}
	if me != 0 {
		return nil, nil
	}
	rep := combine.New(defs, tree, pl, patterns.Catalog)
	var all []locResult // for the clock-condition summary
	events := 0
	for p, part := range parts {
		var rs []wireResult
		if err := gob.NewDecoder(bytes.NewReader(part)).Decode(&rs); err != nil {
			return fail(fmt.Errorf("decoding the results of rank %d: %w", p, err))
		}
		for _, r := range rs {
			if err := rep.Add(r.Result); err != nil {
				return fail(err)
			}
			rep.Instances = append(rep.Instances, r.Instances...)
			events += r.Events
			all = append(all, locResult{loc: r.Result.Location, ccv: r.CCV})
		}
	}
	rep.Events = events
	warnCCV(prog, all)
	return rep, nil
}
