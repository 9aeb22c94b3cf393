package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"scout/tracegen"
)

const tracegenLong = `Writes a synthetic OTF2 trace of an MPI (or MPI+OpenMP) program whose
wait states are known in closed form. Without phase flags it writes a default scenario
with one phase of each of the first six kinds (with --threads T > 1: of
each OpenMP kind and an MPI_Allreduce). A phase is
KIND[:key=value,...] with keys work, imbalance (added per rank: rank r
computes work + r*imbalance; in the omp_* kinds per thread: thread t
computes work + t*imbalance), delay (extra work of rank 0), jitter
(seeded random extra work), lag (omp_* kinds: thread t joins the team
t*lag after the master and leaves its implicit barrier t*lag later),
name (the phase's region), dims (the process grid of halo_2d,
halo_3d, wavefront_2d, wavefront_3d and subcomm_nxn, e.g. 4x2 or 2x2x2;
default as MPI_Dims_create chooses) and sweeps (wavefront_2d: the
corners its iterations sweep from in turn, e.g. nw+se+ne+sw; default
nw; wavefront_3d: the octant corners as SWEEP3D's octants, f front and
b back on dimension 2, e.g. nwf+seb+neb+swf; default nwf; a change of
corner refills the pipeline, the mpi_latesender_refill_* metrics of the
closed form). With --threads T every rank has T OpenMP
threads: the omp_* kinds fork a team of all of them (OpenMP metrics in
the closed form), the MPI kinds run on the master thread. The closed
form of scenarios made of the delay kinds (delay_chain last, every
receive of the chain waiting, one thread per rank) also has their root
causes (delay costs, indirect and propagating waits). Kinds:
%s
Example:
  scout tracegen -o ls --ranks 8 --phase late_sender:work=1ms,delay=10ms
  scout tracegen -o big --ranks 64 --events 100000000 --phase sendrecv_ring:jitter=1ms
  scout tracegen -o halo --ranks 12 --phase halo_3d:jitter=1ms --phase wavefront_2d:dims=4x3,imbalance=100us
  scout tracegen -o sweep --ranks 16 -i 8 --phase wavefront_2d:imbalance=100us,sweeps=nw+se+ne+sw --expect sweep.csv
  scout tracegen -o sweep3d --ranks 12 -i 8 --phase wavefront_3d:dims=3x2x2,sweeps=nwf+seb+nef+swb --expect sweep3d.csv
  scout tracegen -o chain --ranks 3 --phase delay_chain:work=1ms,delay=10ms --expect chain.csv
  scout tracegen -o hybrid --ranks 2 --threads 4 --phase omp_barrier:imbalance=1ms,lag=10us --phase omp_critical
`

// tracegenCmd declares the flags of "scout tracegen" on fs and returns what the
// command runs.
func tracegenCmd(fs *pflag.FlagSet) func(e *cmdEnv, args []string) error {
	out := fs.StringP("output", "o", "", "write the archive into `DIR` (required; created if missing)")
	ranks := fs.IntP("ranks", "n", 0, "number of MPI ranks (default 4)")
	threads := fs.Int("threads", 0, "OpenMP threads (locations) per rank (default 1)")
	iters := fs.IntP("iterations", "i", 0, "iterations of every phase (default 3)")
	events := fs.Uint64("events", 0, "choose the iterations so that the trace has at least `N` events in total")
	var phases []string
	fs.StringArrayVarP(&phases, "phase", "p", nil, "add a phase `KIND[:key=value,...]` (repeatable, in order)")
	scenario := fs.String("scenario", "", "read the scenario from `FILE` (lines: program, ranks, threads, iterations, seed, gap, phase)")
	seed := fs.Uint64("seed", 0, "seed of the jitter (default 1)")
	program := fs.String("program", "", "program name, the root of every call path (default tracegen)")
	expect := fs.String("expect", "", "write the closed-form analysis results as CSV to `FILE` (- for stdout)")
	skew := fs.String("clock-skew", "", "skew the ranks' clocks: rank r's clock reads t + r*`OFFSET[,DRIFT]`*(1, t-t0), e.g. 20us,1e-5 (violations for --time-correct)")
	localDefs := fs.Bool("local-defs", false, "write only per-location definitions, as before unification (see scout unify)")
	force := fs.Bool("force", false, "replace a trace in DIR (without it, DIR must be empty or missing)")
	quiet := fs.BoolP("quiet", "q", false, "print no progress messages")
	return func(e *cmdEnv, args []string) error {
		stdout, stderr := e.stdout, e.stderr
		if len(args) != 0 {
			return usageError{fmt.Sprintf("tracegen takes no arguments, got %q", args)}
		}
		if *out == "" {
			return usageError{"tracegen: -o DIR is required"}
		}
		s := tracegen.DefaultScenario()
		if *threads > 1 {
			s = tracegen.DefaultHybridScenario(*threads)
		}
		if *scenario != "" {
			f, err := os.Open(*scenario)
			if err != nil {
				return err
			}
			s, err = tracegen.ParseScenario(f, *scenario)
			f.Close()
			if err != nil {
				return usageError{err.Error()}
			}
		}
		if len(phases) > 0 {
			s.Phases = nil
			for _, p := range phases {
				ph, err := tracegen.ParsePhase(p)
				if err != nil {
					return usageError{"--phase: " + err.Error()}
				}
				s.Phases = append(s.Phases, ph)
			}
		}
		for _, f := range []struct {
			name string
			v    int
		}{{"ranks", *ranks}, {"threads", *threads}, {"iterations", *iters}} {
			if fs.Changed(f.name) && f.v < 1 {
				return usageError{fmt.Sprintf("--%s %d: must be at least 1", f.name, f.v)}
			}
		}
		if fs.Changed("events") && *events == 0 {
			return usageError{"--events 0: must be at least 1"}
		}
		if *program != "" {
			if err := tracegen.CheckProgram(*program); err != nil {
				return usageError{"--program: " + err.Error()}
			}
		}
		if fs.Changed("ranks") || s.Locations == 0 {
			s.Locations = *ranks
			if s.Locations == 0 {
				s.Locations = 4
			}
		}
		if fs.Changed("threads") {
			s.Threads = *threads
		}
		if fs.Changed("iterations") || s.Iterations == 0 {
			s.Iterations = *iters
			if s.Iterations == 0 {
				s.Iterations = 3
			}
		}
		if fs.Changed("seed") {
			s.Seed = *seed
		}
		if *program != "" {
			s.Program = *program
		}
		s.LocalDefs = *localDefs
		if *skew != "" {
			off, drift, err := parseSkew(*skew)
			if err != nil {
				return usageError{"--clock-skew: " + err.Error()}
			}
			s.ClockOffset, s.ClockDrift = off, drift
		}
		if *events > 0 {
			if fs.Changed("iterations") {
				return usageError{"--events and --iterations exclude each other"}
			}
			it, err := tracegen.IterationsFor(s, *events)
			if err != nil {
				return usageError{err.Error()}
			}
			s.Iterations = it
		}
		prog := newProgress(stderr, *quiet)
		n, err := tracegen.CountEvents(s)
		if err != nil {
			return usageError{err.Error()}
		}
		if err := checkSpace(*out, n); err != nil {
			return err
		}
		if err := checkGenDir(*out, *force); err != nil {
			return err
		}
		ranksOf := fmt.Sprintf("%d ranks", s.Locations)
		if s.Threads > 1 {
			ranksOf += fmt.Sprintf(" × %d threads", s.Threads)
		}
		prog.Printf("writing %s × %d iterations of %d phases (%d events) to %s", ranksOf, s.Iterations, len(s.Phases), n, *out)
		start := time.Now()
		sum, err := generate(*out, s)
		if err != nil {
			return err
		}
		el := time.Since(start).Seconds()
		prog.Printf("wrote %d events in %.2fs (%.1f M events/s)", sum.TotalEvents(), el, float64(sum.TotalEvents())/el/1e6)
		if *expect != "" {
			outs := &outputSet{}
			if err := outs.add(*expect); err != nil {
				return fmt.Errorf("--expect: %w", err)
			}
			if err := outs.writeAll(func() error { return outs.write(*expect, stdout, sum.WriteCSV) }); err != nil {
				return fmt.Errorf("writing closed-form results: %w", err)
			}
			prog.Printf("wrote closed-form results to %s", *expect)
		}
		return nil
	}
}

// archiveEntries are the names of the archive tracegen writes in its
// directory.
var archiveEntries = []string{"traces.otf2", "traces.def", "traces"}

// checkGenDir refuses to write a trace into a directory that holds
// anything, unless force, and then only replaces a trace there.
func checkGenDir(dir string, force bool) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(ents) == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("tracegen: %w", err)
	}
	if !force {
		return usageError{fmt.Sprintf("tracegen: %s is not empty (it holds %s, …); use --force to replace a trace there", dir, ents[0].Name())}
	}
	return nil
}

// generate writes the trace of s into a hidden directory inside dir and
// moves it into place when it is complete: a failed or stopped run (a
// full disk, a signal) leaves no partial archive, and a trace that was
// there (--force) is replaced whole, stale location files included.
func generate(dir string, s tracegen.Scenario) (*tracegen.Summary, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("tracegen: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".tracegen-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("tracegen: %w", err)
	}
	outs := &outputSet{tmpDirs: []string{tmp}}
	outs.start()
	sum, err := tracegen.Generate(tmp, s)
	if err == nil {
		err = outs.commitDir(tmp, dir, archiveEntries)
	}
	if err != nil {
		outs.abort()
		return nil, err
	}
	sum.Dir = dir
	return sum, nil
}

// Bounds of a generated trace: events in all, and bytes per event on
// disk, at least (the smallest records; most traces need more).
const (
	maxGenEvents  = 1 << 40
	minEventBytes = 12
)

// checkSpace refuses a trace of n events that is absurdly large or
// cannot fit into the free space of the file system of dir (or of its
// nearest existing parent).
func checkSpace(dir string, n uint64) error {
	if n > maxGenEvents {
		return usageError{fmt.Sprintf("tracegen: the scenario has %d events, more than the %d a trace may have", n, uint64(maxGenEvents))}
	}
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		var st syscall.Statfs_t
		if err := syscall.Statfs(d, &st); err == nil {
			if free := st.Bavail * uint64(st.Bsize); n*minEventBytes > free {
				return fmt.Errorf("tracegen: %d events need at least %.1f GB, but %s has %.1f GB free", n, float64(n*minEventBytes)/1e9, d, float64(free)/1e9)
			}
			return nil
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// parseSkew parses OFFSET[,DRIFT] (a duration and seconds per second).
func parseSkew(v string) (time.Duration, float64, error) {
	o, d, hasDrift := strings.Cut(v, ",")
	off, err := time.ParseDuration(o)
	if err != nil || off < 0 {
		return 0, 0, fmt.Errorf("offset %q: want a duration of 0 or more, like 20us", o)
	}
	var drift float64
	if hasDrift {
		if drift, err = strconv.ParseFloat(d, 64); err != nil || drift < 0 || drift >= 1 {
			return 0, 0, fmt.Errorf("drift %q: want seconds per second in [0, 1), like 1e-5", d)
		}
	}
	return off, drift, nil
}
