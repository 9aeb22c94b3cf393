//go:build mpi

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"scout/combine"
	"scout/hpc"
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
	allMasters, allThreads, err := localtrace.Ranks(defs, pl)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", a.GlobalDefPath(), err))
	}
	ranks := len(allMasters)
	procs := w.Size()
	if procs > ranks {
		return fail(fmt.Errorf("the trace has %d MPI ranks, but scout runs with %d processes: start it with at most %d (mpirun -np %d)", ranks, procs, ranks, ranks))
	}
	// Application rank r is analyzed by process place[r]: one rank per
	// process when there are as many processes as ranks, else blocks of
	// consecutive ranks, whose messages stay in memory.
	place := hpc.BlockPlacement(ranks, procs)
	var masters, threads []uint64 // this process's locations, masters by rank
	for r, l := range allMasters {
		if place[r] == me {
			masters = append(masters, l)
		}
	}
	for _, l := range allThreads {
		if place[pl[l].Rank] == me {
			threads = append(threads, l)
		}
	}
	if procs == ranks {
		prog.printf("analyzing %d ranks with %d MPI processes", ranks, procs)
	} else {
		prog.printf("analyzing %d ranks with %d MPI processes (up to %d ranks per process)", ranks, procs, (ranks+procs-1)/procs)
	}
	faultInjection(me)
	h := w
	if err := sameArchive(h, a); err != nil {
		return nil, reportOnce(h, err)
	}
	results, failures, err := analyzeMasters(a, defs, env, masters, place, w)
	if err != nil {
		return fail(err)
	}
	if failures != nil {
		// Every process's replay failed: rank 0 explains the failures
		// of all ranks at once, like the in-process analysis.
		all, err := gatherFailures(h, failures)
		if err != nil {
			return fail(err)
		}
		return nil, reportOnce(h, explainFailure(all))
	}
	for _, loc := range threads {
		r, err := profileOnly(a, defs, loc)
		if err != nil {
			return fail(err)
		}
		results = append(results, r)
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
	// Rank 0 collects the results location by location, process after
	// process, so that besides the report it holds one location's
	// encoded result at a time.
	if me != 0 {
		if err := h.Send(0, resultTag, binary.AppendUvarint(nil, uint64(len(wire)))); err != nil {
			return fail(err)
		}
		for _, r := range wire {
			var buf bytes.Buffer
			if err := gob.NewEncoder(&buf).Encode(r); err != nil {
				return fail(err)
			}
			if err := h.Send(0, resultTag, buf.Bytes()); err != nil {
				return fail(err)
			}
		}
		if err := h.Finish(); err != nil {
			return fail(err)
		}
		return nil, nil
	}
	rep := combine.New(defs, tree, pl, patterns.Catalog)
	var all []locResult // for the clock-condition summary
	events := 0
	add := func(r wireResult) error {
		if err := rep.Add(r.Result); err != nil {
			return err
		}
		rep.Instances = append(rep.Instances, r.Instances...)
		events += r.Events
		all = append(all, locResult{loc: r.Result.Location, ccv: r.CCV})
		return nil
	}
	for _, r := range wire {
		if err := add(r); err != nil {
			return fail(err)
		}
	}
	wire = nil
	for p := 1; p < procs; p++ {
		b, err := h.Recv(p, resultTag)
		if err != nil {
			return fail(err)
		}
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(defs.Locations)) {
			return fail(fmt.Errorf("process %d announced a bad number of results (%d)", p, n))
		}
		for range n {
			b, err := h.Recv(p, resultTag)
			if err != nil {
				return fail(err)
			}
			var r wireResult
			if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&r); err != nil {
				return fail(fmt.Errorf("decoding a result of process %d: %w", p, err))
			}
			if err := add(r); err != nil {
				return fail(err)
			}
		}
	}
	if err := h.Finish(); err != nil {
		return fail(err)
	}
	rep.Events = events
	warnCCV(prog, all)
	return rep, nil
}

// hostedTag is the MPI tag of the link between processes that host
// several application ranks each (on a communicator of its own).
const hostedTag = 4242

// resultTag is the MPI tag of the results sent to rank 0.
const resultTag = 4243

// analyzeMasters replays the master locations this process hosts (in
// rank order). With one process for all ranks it replays in-process;
// otherwise each rank replays in a goroutine and the ranks of all
// processes talk through a hosted run over an MPI link (with one rank per
// process as with several: the hosted run checks the collectives and
// finds deadlocks, which plain MPI calls would hang in). When the replay
// fails, every process returns the failures of its ranks (possibly none:
// the cause was elsewhere); err is for failures of MPI itself.
func analyzeMasters(a *otf2.Archive, defs *otf2.Defs, env *replay.Env, masters []uint64, place []int, w *mpi.Comm) (results []locResult, failures []rankFailure, err error) {
	if w.Size() == 1 {
		errs := make([]error, len(masters))
		results, err := replayInProcess(a, defs, env, masters, nil, errs)
		if err != nil {
			return nil, append([]rankFailure{}, rankFailures(0, errs)...), nil
		}
		return results, nil, nil
	}
	lc, err := w.Split(0, w.Rank())
	if err != nil {
		return nil, nil, fmt.Errorf("creating the communicator for hosted ranks: %w", err)
	}
	link := mpi.NewLink(lc, hostedTag)
	first := 0 // the first rank this process hosts
	for first < len(place) && place[first] != w.Rank() {
		first++
	}
	results = make([]locResult, len(masters))
	errs := make([]error, len(masters))
	err = hpc.RunHosted(link, place, func(c hpc.Comm) error {
		k := c.Rank() - first
		if k < 0 || k >= len(masters) {
			return fmt.Errorf("internal error: process %d was given rank %d", w.Rank(), c.Rank())
		}
		results[k], errs[k] = analyzeRank(a, defs, env, masters[k], c)
		return errs[k]
	})
	if cerr := link.Close(); err == nil && cerr != nil {
		err = cerr
	}
	switch {
	case errors.Is(err, hpc.ErrLinkFailed):
		return nil, nil, err
	case err != nil:
		return nil, append([]rankFailure{}, rankFailures(first, errs)...), nil
	}
	return results, nil, lc.Free()
}

// reportOnce ends a run that failed on every process alike: rank 0
// prints err, and only then (after a barrier) do the processes exit,
// with status 1 (mpirun may stop the job at the first process that exits
// with an error, which must not cut rank 0's message short).
func reportOnce(h *mpi.Comm, err error) error {
	if h.Rank() == 0 {
		fmt.Fprintf(os.Stderr, "scout: %v\n", err)
	}
	if berr := h.Barrier(); berr != nil {
		return berr
	}
	return errReported
}

// gatherFailures collects the failures of every process's ranks on rank
// 0, in rank order (processes host consecutive ranks); the others get nil.
func gatherFailures(h *mpi.Comm, mine []rankFailure) ([]rankFailure, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(mine); err != nil {
		return nil, err
	}
	parts, err := h.Gather(0, buf.Bytes())
	if err != nil || h.Rank() != 0 {
		return nil, err
	}
	var all []rankFailure
	for p, b := range parts {
		var fs []rankFailure
		if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&fs); err != nil {
			return nil, fmt.Errorf("decoding the failures of process %d: %w", p, err)
		}
		all = append(all, fs...)
	}
	return all, nil
}

// sameArchive checks that every process opened the same archive: the
// same anchor and global definitions, byte for byte (a digest of them).
// Processes given different traces would otherwise merge them silently.
func sameArchive(h *mpi.Comm, a *otf2.Archive) error {
	sum := sha256.New()
	for _, path := range []string{a.AnchorPath(), a.GlobalDefPath()} {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		_, err = io.Copy(sum, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
	}
	id := append(sum.Sum(nil), a.AnchorPath()...)
	all, err := h.Allgather(id)
	if err != nil {
		return err
	}
	for p, other := range all {
		if !bytes.Equal(other[:sha256.Size], id[:sha256.Size]) {
			return fmt.Errorf("the MPI processes were given different traces: process 0 reads %s, process %d reads %s, which differs; give every process the same trace", all[0][sha256.Size:], p, other[sha256.Size:])
		}
	}
	return nil
}
