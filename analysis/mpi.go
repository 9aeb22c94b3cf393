//go:build mpi

package analysis

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"scout/combine"
	"scout/hpc"
	"scout/hpc/mpi"
	"scout/localtrace/otf2"
	"scout/replay"
	"scout/unify"
)

// MPIBuild tells whether this binary can run under mpirun.
const MPIBuild = true

func init() { gob.Register(replay.Violations{}) }

// faultInjection kills this process when SCOUT_FAULT_KILL_RANK names its
// rank, and panics when SCOUT_FAULT_PANIC_RANK does: the tests use them
// to check that a rank dying mid-analysis, or failing with a bug, fails
// the whole job at once and leaves no report behind.
func faultInjection(rank int) {
	if v := os.Getenv("SCOUT_FAULT_KILL_RANK"); v != "" && v == strconv.Itoa(rank) {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	if v := os.Getenv("SCOUT_FAULT_PANIC_RANK"); v != "" && v == strconv.Itoa(rank) {
		panic("fault injection (SCOUT_FAULT_PANIC_RANK)")
	}
}

// opening is what a process of RunMPI does before it needs MPI: open
// the trace, place its ranks on the job's procs processes, and load the
// locations of this one, rank.
type opening struct {
	rank, procs int
	s           *session
	place       []int    // application rank → process
	masters     []uint64 // this process's master threads, by rank
	threads     []uint64 // and its other threads
	loaded      bool
	mine        []*located
	failures    []rankFailure
	err         error // opening, or loading (a canceled context)
}

// open opens the trace and places its ranks; with more processes than
// ranks it places none (RunMPI explains).
func (o *opening) open(p Plan) {
	if o.rank != 0 {
		p.Log = nil // rank 0 speaks for all
	}
	if o.s, o.err = open(p); o.err != nil {
		return
	}
	s, ranks, procs := o.s, len(o.s.masters), o.procs
	if procs > ranks {
		return
	}
	// A process's heap is small beside its tables and the libraries,
	// and the replay waits on its partners more than on the collector:
	// collecting at a quarter's growth, not at half as in-process
	// (cmd/scout), took 1-3 MB off the peak of the bench traces at M = 4
	// at no measurable cost in time (in process it cost 6-10 %).
	tuneGC(procs, 25)
	// Application rank r is analyzed by process place[r]: one rank per
	// process when there are as many processes as ranks, else blocks of
	// consecutive ranks, whose messages stay in memory.
	o.place = hpc.BlockPlacement(ranks, procs)
	for r, l := range s.masters {
		if o.place[r] == o.rank {
			o.masters = append(o.masters, l)
		}
	}
	for _, l := range s.others {
		if o.place[s.pl[l].Rank] == o.rank {
			o.threads = append(o.threads, l)
		}
	}
	if procs == ranks {
		s.log.Printf("analyzing %d ranks with %d MPI processes", ranks, procs)
	} else {
		s.log.Printf("analyzing %d ranks with %d MPI processes (up to %d ranks per process)", ranks, procs, (ranks+procs-1)/procs)
	}
	if h := bindingHint(len(o.masters)+len(o.threads), runtime.NumCPU(), onlineCPUs()); h != "" {
		s.log.Printf("%s", h)
	}
}

// tuneGC sets the collector's percentage (GOGC) of a process of an MPI
// job of procs processes, unless the user set GOGC or the process is
// the job's only one (it then collects as in-process, cmd/scout).
func tuneGC(procs, percent int) {
	if procs > 1 && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(percent)
	}
}

// load loads the process's locations (after open, which placed them).
func (o *opening) load(ctx context.Context) {
	if o.place == nil {
		return // more processes than ranks
	}
	o.loaded = true
	o.mine, o.failures, o.err = o.s.loadAll(ctx, o.masters, o.threads)
}

// finalize ends MPI when RunMPI returns. When it returns by a panic (a
// bug), MPI_Finalize would wait for the other processes, which wait for
// this one: the job would hang until the batch system's time limit.
// The panic is reported with its stack instead, and the job aborted
// (exit status 1, as for any failed analysis).
func finalize(rank int) {
	if p := recover(); p != nil {
		fmt.Fprintf(os.Stderr, "scout: rank %d: internal error: %v\n%s", rank, p, debug.Stack())
		mpi.Abort(1)
	}
	mpi.Finalize()
}

// RunMPI analyzes the trace with the processes of the MPI job (mpirun
// -np M, M at most the number of traced ranks): each process loads and
// replays a block of consecutive ranks, the call trees are unified by a
// reduction over the processes, and rank 0 collects the results location
// by location and returns the report; the other processes return nil.
// A failed replay is reported once, by rank 0; every process then
// returns an error (ErrReported on the others).
func RunMPI(ctx context.Context, p Plan) (*combine.Report, error) {
	// Opening the trace and loading the process's locations need no
	// MPI. Where the launcher announced the process's rank and the
	// job's size (launcherRank), they run while MPI_Init does: under
	// mpirun -np 4 on the test machine MPI_Init takes 0.2-0.25 s of a
	// process's time, most of it waiting for the other processes, and
	// loading 2 M events takes 0.2-0.4 s.
	var early chan *opening
	if rank, procs, ok := launcherRank(); ok {
		early = make(chan *opening, 1)
		go func() {
			o := &opening{rank: rank, procs: procs}
			if o.open(p); o.err == nil {
				o.load(ctx)
			}
			early <- o
		}()
	}
	mpi.Init()
	w := mpi.World()
	me, procs := w.Rank(), w.Size()
	defer finalize(me)
	if me != 0 {
		p.Log = nil // rank 0 speaks for all
	}
	fail := func(err error) (*combine.Report, error) {
		fmt.Fprintf(os.Stderr, "scout: rank %d: %v\n", me, err)
		mpi.Abort(1)
		return nil, err
	}
	var o *opening
	if early != nil {
		if o = <-early; o.rank != me || o.procs != procs {
			// the launcher's word was not MPI's: start over
			if me == 0 && p.Log != nil {
				p.Log.Printf("the launcher announced this process as rank %d of %d, MPI as rank %d of %d: opening the trace again", o.rank, o.procs, me, procs)
			}
			o = nil
			releaseTraces()
		}
	}
	if o == nil {
		o = &opening{rank: me, procs: procs}
		o.open(p)
	}
	if o.err != nil {
		return fail(o.err)
	}
	s, place := o.s, o.place
	if ranks := len(s.masters); procs > ranks {
		return fail(fmt.Errorf("the trace has %d MPI ranks, but scout runs with %d processes: start it with at most %d (mpirun -np %d)", ranks, procs, ranks, ranks))
	}
	faultInjection(me)
	if err := sameArchive(w, s.archive); err != nil {
		return nil, reportOnce(w, err)
	}
	// Load this process's locations (unless done while MPI started); a
	// failure to load is the process's failure, explained by rank 0
	// with the others'.
	if !o.loaded {
		o.load(ctx)
	}
	if o.err != nil {
		return fail(o.err)
	}
	mine, failures := o.mine, o.failures
	if failures == nil {
		var err error
		if mine, err = s.teams(mine); err != nil {
			failures = []rankFailure{{Rank: firstRank(place, me), Kind: failCause, Msg: err.Error()}}
		}
	}
	if stop, err := settle(w, failures); err != nil {
		return fail(err)
	} else if stop != nil {
		return nil, stop
	}
	// Unify the call trees: this process's locations first, then a
	// reduction over the processes; every process maps its locations to
	// the global tree before the replay.
	local, err := s.unifyLocal(mine)
	if err != nil {
		return fail(err)
	}
	tree, err := unify.Reduce(w, local)
	if err != nil {
		return fail(err)
	}
	s.nglobal = len(tree.Nodes)
	for _, l := range mine {
		if l.global, err = tree.MapLocal(l.callpaths); err != nil {
			return fail(err)
		}
	}
	failures, err = s.replayHosted(mine, place, w)
	if err != nil {
		return fail(err)
	}
	releaseTraces()
	// The peak is behind: it comes at the end of the replay, and the
	// trace's tables are gone now (the HPCG-like bench trace at M = 4:
	// 55 MiB at the end of the replay, 25-33 MiB from then on). What
	// follows (the statistics, the results) allocates on a heap of a
	// few MiB, which at a quarter's growth (open) was collected every
	// few hundred KiB: 37 collections after the replay, 16 at doubling,
	// at some 7 ms of processor time each with two processes per core
	// (the collector's stops wait for threads the other processes hold
	// off the processor).
	tuneGC(procs, 100)
	if stop, err := settle(w, failures); err != nil {
		return fail(err)
	} else if stop != nil {
		return nil, stop
	}
	// Peak memory of every process, for the progress report.
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	rss, err := w.Gather(0, binary.LittleEndian.AppendUint64(nil, uint64(ru.Maxrss)<<10))
	if err != nil {
		return fail(err)
	}
	if me == 0 {
		var b strings.Builder
		for r, v := range rss {
			fmt.Fprintf(&b, " %d:%.1f", r, float64(binary.LittleEndian.Uint64(v))/(1<<20))
		}
		s.log.Printf("peak memory per process before combining (rank:MiB):%s", b.String())
	}
	stats, err := s.statisticsMPI(w, mine)
	if err != nil {
		return fail(err)
	}
	// Rank 0 collects the results location by location, process after
	// process, so that besides the report it holds one location's
	// encoded result at a time.
	if me != 0 {
		if err := w.Send(0, resultTag, binary.AppendUvarint(nil, uint64(len(mine)))); err != nil {
			return fail(err)
		}
		for _, l := range mine {
			b, err := toGob(l.result(len(tree.Nodes)))
			if err != nil {
				return fail(err)
			}
			if err := w.Send(0, resultTag, b); err != nil {
				return fail(err)
			}
		}
		if err := w.Finish(); err != nil {
			return fail(err)
		}
		return nil, nil
	}
	rep := s.report(tree)
	rep.Statistics = stats
	for _, l := range mine {
		if err := add(rep, l.result(len(tree.Nodes))); err != nil {
			return fail(err)
		}
	}
	mine = nil
	for proc := 1; proc < procs; proc++ {
		b, err := w.Recv(proc, resultTag)
		if err != nil {
			return fail(err)
		}
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(s.defs.Locations)) {
			return fail(fmt.Errorf("process %d announced a bad number of results (%d)", proc, n))
		}
		for range n {
			b, err := w.Recv(proc, resultTag)
			if err != nil {
				return fail(err)
			}
			var r result
			if err := fromGob(b, &r, "a result", proc); err != nil {
				return fail(err)
			}
			if err := add(rep, r); err != nil {
				return fail(err)
			}
		}
	}
	if err := w.Finish(); err != nil {
		return fail(err)
	}
	if _, quiet := s.log.(silent); !quiet {
		// What rank 0 holds once it has every result: it grows with the
		// locations and call paths, not with the other processes'
		// wait-state instances (statisticsMPI).
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s.log.Printf("rank 0 holds %.1f MiB of heap after combining the results", float64(ms.HeapAlloc)/(1<<20))
	}
	rep.Sort()
	s.warnCCV(rep)
	return rep, nil
}

// statisticsMPI computes the statistics of the locations of all
// processes (combine.StatPart) from mine, this process's: rank 0 gets
// them, the others nil. The processes agree on the basis (an
// Allgather), exchange the partial aggregates of every collective
// operation with its owner (combine.ExchangeCollParts, pairwise), and
// send their parts to rank 0, which
// merges them as they come: it holds parts, never the instances of
// other processes.
func (s *session) statisticsMPI(w *mpi.Comm, mine []*located) ([]combine.PatternStats, error) {
	srcs := s.statSources(mine)
	basis := combine.NewStatBasis(srcs)
	b, err := toGob(basis)
	if err != nil {
		return nil, err
	}
	all, err := w.Allgather(b)
	if err != nil {
		return nil, err
	}
	me, procs := w.Rank(), w.Size()
	for proc, b := range all {
		if proc == me {
			continue
		}
		var o combine.StatBasis
		if err := fromGob(b, &o, "the statistics", proc); err != nil {
			return nil, err
		}
		basis.Merge(o)
	}
	var got []byte // received chunks, reused
	colls, err := combine.ExchangeCollParts(srcs, procs, me, func(to, from int, b []byte) ([]byte, error) {
		var err error
		got, err = w.ExchangeInto(to, from, statsTag, b, got)
		return got, err
	})
	if err != nil {
		return nil, err
	}
	part := combine.SummarizeStats(srcs, [][]combine.CollPart{colls}, basis)
	if me != 0 {
		b, err := toGob(part)
		if err != nil {
			return nil, err
		}
		return nil, w.Send(0, statsTag, b)
	}
	for proc := 1; proc < procs; proc++ {
		b, err := w.Recv(proc, statsTag)
		if err != nil {
			return nil, err
		}
		var o combine.StatPart
		if err := fromGob(b, &o, "the statistics", proc); err != nil {
			return nil, err
		}
		part.Merge(o)
	}
	return part.Stats(basis), nil
}

// toGob encodes v for another process.
func toGob(v any) ([]byte, error) {
	var buf bytes.Buffer
	err := gob.NewEncoder(&buf).Encode(v)
	return buf.Bytes(), err
}

// fromGob decodes into v what process proc encoded (toGob); what names
// it in the error.
func fromGob(b []byte, v any, what string, proc int) error {
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(v); err != nil {
		return fmt.Errorf("decoding %s of process %d: %w", what, proc, err)
	}
	return nil
}

// firstRank is the first application rank process proc hosts.
func firstRank(place []int, proc int) int {
	for r, p := range place {
		if p == proc {
			return r
		}
	}
	return 0
}

// settle ends the run on every process when some rank failed: rank 0
// explains all failures once, and every process gets the error to
// return (stop); err is for failures of MPI itself.
func settle(w *mpi.Comm, failures []rankFailure) (stop, err error) {
	all, err := agreeFailures(w, failures)
	if err != nil || all == nil {
		return nil, err
	}
	return reportOnce(w, explainFailure(all)), nil
}

// agreeFailures tells every process whether some process failed: if
// any did, rank 0 gets the failures of all ranks (in rank order) and the
// others an empty non-nil list; else every process gets nil.
func agreeFailures(w *mpi.Comm, mine []rankFailure) ([]rankFailure, error) {
	var flag [1]byte
	if mine != nil {
		flag[0] = 1
	}
	flags, err := w.Allgather(flag[:])
	if err != nil {
		return nil, err
	}
	for _, f := range flags {
		if len(f) == 1 && f[0] == 1 {
			all, err := gatherFailures(w, mine)
			if all == nil && err == nil {
				all = []rankFailure{}
			}
			return all, err
		}
	}
	return nil, nil
}

// hostedTag is the MPI tag of the link between processes that host
// several application ranks each (on a communicator of its own).
const hostedTag = 4242

// resultTag is the MPI tag of the results sent to rank 0.
const resultTag = 4243

// statsTag is the MPI tag of the statistics' exchanges (statisticsMPI).
const statsTag = 4244

// replayHosted replays the locations this process hosts: the threads of
// its ranks, in the order of the replay (session.order). With one
// process for all ranks it replays in-process; otherwise each location
// replays in a goroutine and the locations of all processes talk through
// a hosted run over an MPI link (with one location per process as with
// several: the hosted run checks the collectives and finds deadlocks,
// which plain MPI calls would hang in). place gives the process of each
// MPI rank; a rank's threads stay with it. When the replay fails, every
// process returns the failures of its ranks (possibly none: the cause was
// elsewhere, so the list is empty but not nil); err is for failures of
// MPI itself.
func (s *session) replayHosted(mine []*located, place []int, w *mpi.Comm) (failures []rankFailure, err error) {
	if w.Size() == 1 {
		return s.replayInProcess(mine), nil
	}
	// the replay's ranks are the locations of session.order
	lplace := make([]int, len(s.order))
	first := -1
	for i, loc := range s.order {
		lplace[i] = place[s.pl[loc].Rank]
		if lplace[i] == w.Rank() && first < 0 {
			first = i
		}
	}
	errs := make([]error, len(mine))
	lc, err := w.Split(0, w.Rank())
	if err != nil {
		return nil, fmt.Errorf("creating the communicator for hosted ranks: %w", err)
	}
	link := mpi.NewLink(lc, hostedTag)
	err = hpc.RunHosted(link, lplace, func(c hpc.Comm) error {
		k := c.Rank() - first
		if k < 0 || k >= len(mine) || mine[k].loc != s.order[c.Rank()] {
			return fmt.Errorf("internal error: process %d was given location %d of the replay", w.Rank(), c.Rank())
		}
		errs[k] = s.replay(mine[k], c)
		return errs[k]
	})
	if cerr := link.Close(); err == nil && cerr != nil {
		err = cerr
	}
	switch {
	case errors.Is(err, hpc.ErrLinkFailed):
		return nil, err
	case err != nil:
		return append([]rankFailure{}, rankFailures(mine, errs)...), nil
	}
	return nil, lc.Free()
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
	return ErrReported
}

// gatherFailures collects the failures of every process's ranks on rank
// 0, in rank order (processes host consecutive ranks); the others get nil.
func gatherFailures(h *mpi.Comm, mine []rankFailure) ([]rankFailure, error) {
	b, err := toGob(mine)
	if err != nil {
		return nil, err
	}
	parts, err := h.Gather(0, b)
	if err != nil || h.Rank() != 0 {
		return nil, err
	}
	var all []rankFailure
	for p, b := range parts {
		var fs []rankFailure
		if err := fromGob(b, &fs, "the failures", p); err != nil {
			return nil, err
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
