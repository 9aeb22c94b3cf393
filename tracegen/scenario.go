package tracegen

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// KindByName returns the phase kind with the given name (see Kind.String),
// also accepting the short names compute, ring, allreduce, barrier, bcast,
// reduce, gather, scatter, scan, allgather, alltoall, isend, halo2d,
// halo3d, wavefront, wavefront3d, sweep3d, master, subcomm, chain, parallel, ompbarrier,
// critical and lock.
func KindByName(name string) (Kind, bool) {
	for k := Kind(0); k < numKinds; k++ {
		if name == k.String() {
			return k, true
		}
	}
	k, ok := map[string]Kind{"compute": Compute, "ring": Ring, "sendrecv": Ring, "allreduce": Allreduce, "nxn": Allreduce,
		"barrier": Barrier, "bcast": Bcast, "broadcast": Bcast, "reduce": Reduce, "gather": Gather, "scatter": Scatter,
		"scan": Scan, "allgather": Allgather, "alltoall": Alltoall, "isend": LateSenderNB, "nonblocking": LateSenderNB,
		"halo2d": Halo2D, "halo": Halo2D, "halo3d": Halo3D, "wavefront": Wavefront, "sweep": Wavefront,
		"wavefront3d": Wavefront3D, "sweep3d": Wavefront3D,
		"master": MasterWorker, "masterworker": MasterWorker, "subcomm": RowAllreduce, "row_allreduce": RowAllreduce,
		"chain": DelayChain, "parallel": OmpParallel, "ompbarrier": OmpBarrier, "critical": OmpCritical,
		"lock": OmpLock}[name]
	return k, ok
}

// gridKinds lists the names of the kinds that run on a process grid.
func gridKinds() []string {
	var names []string
	for k := Kind(0); k < numKinds; k++ {
		if k.grid() {
			names = append(names, k.String())
		}
	}
	return names
}

// KindUsage describes the phase kinds, one indented line per kind:
// its name and what its ranks do, with the wait states it makes.
func KindUsage() string {
	var b strings.Builder
	for k := Kind(0); k < numKinds; k++ {
		fmt.Fprintf(&b, "  %-16s %s\n", k, kindHelp[k])
	}
	return b.String()
}

var kindHelp = [numKinds]string{
	"computation only (imbalance shows as different compute times)",
	"rank 0 sends to rank 1: MPI_Send, MPI_Recv (Late Sender)",
	"MPI_Sendrecv to rank+1 from rank-1 (Late Sender)",
	"MPI_Allreduce (Wait at N x N)",
	"MPI_Barrier (Wait at Barrier)",
	"MPI_Bcast from rank 0 (Late Broadcast)",
	"MPI_Reduce to rank 0 (Early Reduce)",
	"MPI_Gather to rank 0 (Early Reduce)",
	"MPI_Scatter from rank 0 (Late Broadcast)",
	"MPI_Scan (Early Scan)",
	"MPI_Allgather (Wait at N x N)",
	"MPI_Alltoall (Wait at N x N)",
	"late_sender with MPI_Isend, MPI_Irecv and MPI_Wait (Late Sender)",
	"halo exchange on a 2-D grid: MPI_Irecv, MPI_Isend, MPI_Waitall (Late Sender)",
	"halo exchange on a 3-D grid (Late Sender)",
	"wavefront sweep over a 2-D grid: MPI_Recv, MPI_Send (Late Sender, wrong order, Late Receiver)",
	"wavefront sweep over a 3-D grid: MPI_Recv, MPI_Send (Late Sender, wrong order, Late Receiver)",
	"rank 0 sends tasks, collects results in rank order (Late Sender, wrong order, Late Receiver)",
	"MPI_Allreduce on the row communicators of a 2-D grid, from MPI_Comm_split (Wait at N x N)",
	"rank r receives from r-1, then sends to r+1: waits propagate (root causes in the closed form)",
	"MPI_Barrier with its delay costs in the closed form (delay_barrier)",
	"MPI_Allreduce with its delay costs in the closed form (delay_n2n)",
	"OpenMP parallel region, thread t computes work + t*imbalance (omp_ibarrier_wait, omp_fork, omp_management)",
	"parallel region with an explicit barrier between two imbalanced computations (omp_ebarrier_wait)",
	"every thread holds one critical section for its work, in thread order (omp_lock_contention_critical)",
	"every thread holds one lock (omp_set_lock/omp_unset_lock) for its work, in thread order (omp_lock_contention_api)",
}

// KindNames lists the phase kind names ParsePhase accepts.
func KindNames() []string {
	var names []string
	for k := Kind(0); k < numKinds; k++ {
		names = append(names, k.String())
	}
	return names
}

// DefaultScenario is the scenario `scout tracegen` writes without flags:
// 4 ranks, 3 iterations of a phase of each of the first six kinds
// (Compute to Bcast), each with a wait state of known size.
func DefaultScenario() Scenario {
	const ms = time.Millisecond
	return Scenario{Program: "tracegen", Locations: 4, Iterations: 3, Seed: 1, Phases: []Phase{
		{Kind: Compute, Work: 2 * ms, Imbalance: ms / 2},
		{Kind: LateSender, Work: ms, Delay: 10 * ms},
		{Kind: Ring, Work: ms, Delay: 2 * ms},
		{Kind: Allreduce, Work: ms, Imbalance: ms},
		{Kind: Barrier, Work: ms, Imbalance: ms},
		{Kind: Bcast, Work: ms, Delay: 4 * ms},
	}}
}

// DefaultHybridScenario is the scenario `scout tracegen --threads T`
// writes without phase flags: 4 ranks of T threads, 3 iterations of a
// phase of each OpenMP kind and an MPI_Allreduce, each with waits of
// known size.
func DefaultHybridScenario(threads int) Scenario {
	const ms, us = time.Millisecond, time.Microsecond
	return Scenario{Program: "tracegen", Locations: 4, Threads: threads, Iterations: 3, Seed: 1, Phases: []Phase{
		{Kind: OmpParallel, Work: ms, Imbalance: ms / 2, Lag: 10 * us},
		{Kind: OmpBarrier, Work: ms, Imbalance: ms / 4},
		{Kind: OmpCritical, Work: ms / 2, Lag: 20 * us},
		{Kind: OmpLock, Work: ms / 2, Imbalance: 50 * us},
		{Kind: Allreduce, Work: ms, Imbalance: ms},
	}}
}

// ParsePhase parses a phase description "KIND[:key=value,...]" with keys
// work, imbalance, delay, jitter, lag (durations such as 1ms or 250us;
// lag only for the OpenMP kinds), name (the phase's region name), dims
// (the process grid of the grid kinds, e.g. 4x2 or 2x2x2) and sweeps
// (wavefront_2d: the corners its iterations sweep from in turn, e.g.
// nw+se+ne+sw; wavefront_3d: the octant corners, e.g. nwf+seb+neb+swf),
// e.g. "late_sender:work=1ms,delay=10ms" or
// "omp_critical:work=1ms,lag=10us".
func ParsePhase(s string) (Phase, error) {
	kind, rest, _ := strings.Cut(strings.TrimSpace(s), ":")
	k, ok := KindByName(strings.TrimSpace(kind))
	if !ok {
		return Phase{}, fmt.Errorf("unknown phase kind %q (known: %s)", kind, strings.Join(KindNames(), ", "))
	}
	p := Phase{Kind: k, Work: time.Millisecond}
	if strings.TrimSpace(rest) == "" {
		return p, nil
	}
	for _, kv := range strings.FieldsFunc(rest, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		key, val, ok := strings.Cut(kv, "=")
		if !ok {
			return Phase{}, fmt.Errorf("phase %q: %q is not key=value", s, kv)
		}
		if key == "name" {
			if val == "" || strings.ContainsAny(val, "/,") {
				return Phase{}, fmt.Errorf("phase %q: bad region name %q", s, val)
			}
			p.Name = val
			continue
		}
		if key == "sweeps" {
			if !k.wavefront() {
				return Phase{}, fmt.Errorf("phase %q: sweeps are for %v and %v only", s, Wavefront, Wavefront3D)
			}
			ks, err := ParseSweeps(val)
			if err != nil {
				return Phase{}, fmt.Errorf("phase %q: %v", s, err)
			}
			if d := k.gridDims(); ks[0].dims() != d {
				return Phase{}, fmt.Errorf("phase %q: %v sweeps from the corners of a %d-D grid (%s)", s, k, d, sweepsName(cornersOf(d)))
			}
			p.Sweeps = ks
			continue
		}
		if key == "dims" {
			if !k.grid() {
				return Phase{}, fmt.Errorf("phase %q: %v has no process grid (dims: %s)", s, k, strings.Join(gridKinds(), ", "))
			}
			p.Dims = nil
			for _, f := range strings.Split(val, "x") {
				d, err := strconv.Atoi(f)
				if err != nil || d < 1 || d > maxRanks {
					return Phase{}, fmt.Errorf("phase %q: dims %q: want sizes such as 4x2 or 2x2x2", s, val)
				}
				p.Dims = append(p.Dims, d)
			}
			continue
		}
		d, err := time.ParseDuration(val)
		if err != nil {
			return Phase{}, fmt.Errorf("phase %q: %s: %v", s, key, err)
		}
		if d < 0 {
			return Phase{}, fmt.Errorf("phase %q: %s is negative", s, key)
		}
		switch key {
		case "work":
			p.Work = d
		case "imbalance":
			p.Imbalance = d
		case "delay":
			p.Delay = d
		case "jitter":
			p.Jitter = d
		case "lag":
			if !k.omp() {
				return Phase{}, fmt.Errorf("phase %q: lag is for the OpenMP kinds only (omp_*)", s)
			}
			p.Lag = d
		default:
			return Phase{}, fmt.Errorf("phase %q: unknown key %q (known: work, imbalance, delay, jitter, lag, name, dims, sweeps)", s, key)
		}
	}
	return p, nil
}

// ParseScenario reads a scenario file: one setting per line, "#" starts
// a comment.
//
//	program   NAME
//	ranks     N
//	threads   T                      (OpenMP threads per rank)
//	iterations K
//	seed      S
//	gap       DURATION
//	phase     KIND[:key=value,...]   (one line per phase, in order)
//
// name is used in error messages.
func ParseScenario(r io.Reader, name string) (Scenario, error) {
	var s Scenario
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
		}
		if len(f) < 2 {
			return s, bad("%q needs a value", f[0])
		}
		arg := strings.Join(f[1:], " ")
		var err error
		switch f[0] {
		case "program":
			s.Program, err = arg, CheckProgram(arg)
		case "ranks", "locations":
			s.Locations, err = strconv.Atoi(arg)
		case "threads":
			s.Threads, err = strconv.Atoi(arg)
		case "iterations":
			s.Iterations, err = strconv.Atoi(arg)
		case "seed":
			s.Seed, err = strconv.ParseUint(arg, 10, 64)
		case "gap":
			s.Gap, err = time.ParseDuration(arg)
		case "phase":
			var p Phase
			p, err = ParsePhase(arg)
			s.Phases = append(s.Phases, p)
		default:
			return s, bad("unknown setting %q (known: program, ranks, threads, iterations, seed, gap, phase)", f[0])
		}
		if err != nil {
			return s, bad("%s: %v", f[0], err)
		}
	}
	if err := sc.Err(); err != nil {
		return s, fmt.Errorf("%s: %w", name, err)
	}
	if len(s.Phases) == 0 {
		return s, fmt.Errorf("%s: no phase lines", name)
	}
	return s, nil
}

// WriteCSV writes the closed-form results in the canonical CSV form
// (metric,callpath,rank,value; non-zero cells; the rank label "r", or
// "r.t" for thread t > 0): time, visits and the wait-state metrics an
// analysis of the trace must report.
func (s *Summary) WriteCSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "metric,callpath,rank,value")
	row := func(metric, cp string, i int, v string) {
		if strings.ContainsAny(cp, ",\"") {
			cp = `"` + strings.ReplaceAll(cp, `"`, `""`) + `"`
		}
		fmt.Fprintf(bw, "%s,%s,%s,%s\n", metric, cp, s.Label(i), v)
	}
	for _, cp := range s.Callpaths {
		for r, v := range s.Time[cp] {
			if v != 0 {
				row("time", cp, r, strconv.FormatFloat(v, 'g', 17, 64))
			}
		}
	}
	for _, cp := range s.Callpaths {
		for r, v := range s.Visits[cp] {
			if v != 0 {
				row("visits", cp, r, strconv.FormatUint(v, 10))
			}
		}
	}
	metrics := make([]string, 0, len(s.Waits))
	for m := range s.Waits {
		metrics = append(metrics, m)
	}
	sort.Strings(metrics)
	for _, m := range metrics {
		for _, cp := range s.Callpaths {
			for r, v := range s.Waits[m][cp] {
				if v != 0 && !math.IsNaN(v) {
					row(m, cp, r, strconv.FormatFloat(v, 'g', 17, 64))
				}
			}
		}
	}
	return bw.Flush()
}

// CountEvents returns the number of event records Generate would write
// for s, without writing anything.
func CountEvents(s Scenario) (uint64, error) {
	g, err := newGen(s)
	if err != nil {
		return 0, err
	}
	return g.summary().TotalEvents(), nil
}

// CheckProgram checks a program name: the root region of every call
// path and the base name of the program's path, so it must be a plain
// name (no '/', no control characters).
func CheckProgram(name string) error {
	if name == "" || strings.ContainsAny(name, "/\x00") || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return fmt.Errorf("program name %q: want a plain name without '/' or control characters", name)
	}
	return nil
}

// IterationsFor returns the number of iterations that makes s write at
// least total event records (at least 1).
func IterationsFor(s Scenario, total uint64) (int, error) {
	s.Iterations = 0
	base, err := CountEvents(s)
	if err != nil {
		return 0, err
	}
	s.Iterations = 1
	one, err := CountEvents(s)
	if err != nil {
		return 0, err
	}
	per := one - base
	if per == 0 {
		return 0, fmt.Errorf("tracegen: the scenario's phases write no events")
	}
	if total <= base+per {
		return 1, nil
	}
	it := (total - base) / per // no overflow for any total
	if (total-base)%per != 0 {
		it++
	}
	if it > math.MaxInt32 {
		return 0, fmt.Errorf("tracegen: %d events need %d iterations, too many", total, it)
	}
	return int(it), nil
}
