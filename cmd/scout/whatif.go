package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"scout/analysis"
	"scout/combine"
	"scout/patterns"
)

const whatifLong = `Predicts how long the traced run would have taken if some of its
activities had taken less (or more) time: "how much faster if this took
no time?". scout replays the trace with the selected activities scaled
and lets the communication re-time itself: every event keeps the time
by which it happens earlier than measured, and the messages and
collectives carry it to their partners (a receive ends at the later of
its own progress and its send's predicted time, a collective as its
slowest member whose data it needs; doc/whatif.md). It prints the
measured run time T, the predicted T' and the gain.

A selection scales the exclusive time of a region or call path:
--shrink compute=0 (takes no time), --shrink 'solve/compute=0.5' (every
call path ending with solve/compute, half its time). --remove
mpi_latesender lets every receive find its message on time (likewise
the other wait-state metrics of the list below). --ranks restricts the
change to some ranks. All given selections form one hypothesis.

--rank N predicts, in the same replay, each of the N call paths outside
MPI with the largest exclusive time taking no time, and each class of
wait states removed, and lists them by gain: the candidates whose gain
exceeds their share of the time shorten chains of waits on other ranks.

Removable wait-state metrics: %s.

Example:
  scout whatif --shrink compute=0 --ranks 0 TRACE
  scout whatif --rank 10 TRACE
`

// whatifCmd declares the flags of "scout whatif" on fs and returns what
// the command runs.
func whatifCmd(fs *pflag.FlagSet) func(e *cmdEnv, args []string) error {
	shrinks := fs.StringArray("shrink", nil, "scale the exclusive time of region or call path `NAME[=F]` by F (default 0: no time; repeatable)")
	remove := fs.StringSlice("remove", nil, "remove the wait states of `METRIC[,...]` (mpi_latesender, ...)")
	ranks := fs.String("ranks", "", "change only these ranks, e.g. `3,5-7` (default: all)")
	rank := fs.Int("rank", 0, "predict the `N` call paths with the largest exclusive time taking no time, and each wait class removed, and rank them by gain")
	sources := fs.Int("sources", 0, "also rank the `N` delay sources of the root-cause analysis (a call path on a rank whose delay made others wait) taking no time (runs the analysis first, in one process)")
	eager := fs.String("eager-limit", "64KiB", "messages of at least `BYTES` (e.g. 4096, 64KiB, 1MiB) are sent in rendezvous mode when their receive was posted before the send completed; 0: all eager")
	write := fs.String("write", "", "write the predicted trace as an OTF2 archive into the new directory `DIR`")
	timeCorrect := fs.Bool("time-correct", false, "correct the timestamps (controlled logical clock) before the prediction")
	quiet := fs.BoolP("quiet", "q", false, "print no progress messages")
	jobs := fs.IntP("jobs", "j", 0, "load at most `N` locations at once (default: number of CPUs)")
	return func(e *cmdEnv, args []string) error {
		if len(args) != 1 {
			e.usage()
			return usageError{fmt.Sprintf("expected one trace argument, got %d", len(args))}
		}
		if err := checkJobs(*jobs); err != nil {
			return err
		}
		limit, err := parseBytes(*eager)
		if err != nil {
			return usageError{"--eager-limit: " + err.Error()}
		}
		w := &analysis.WhatIf{Rank: *rank, EagerLimit: limit}
		h := analysis.Hypothesis{}
		for _, s := range *shrinks {
			name, f, hasF := strings.Cut(s, "=")
			sh := analysis.Shrink{Name: strings.TrimSpace(name)}
			if sh.Name == "" {
				return usageError{fmt.Sprintf("--shrink %q: no region or call path", s)}
			}
			if hasF {
				v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
				if err != nil || v < 0 {
					return usageError{fmt.Sprintf("--shrink %q: the factor must be a number of at least 0", s)}
				}
				sh.Factor = v
			}
			h.Shrinks = append(h.Shrinks, sh)
		}
		for _, m := range *remove {
			c, ok := patterns.WaitClassByName(strings.TrimSpace(m))
			if !ok {
				return usageError{fmt.Sprintf("--remove %q: not a removable wait-state metric (%s)", m, strings.Join(patterns.WaitClassNames(), ", "))}
			}
			h.Remove |= c
		}
		var rs []int
		if fs.Changed("ranks") {
			if rs, err = analysis.ParseRanks(*ranks); err != nil {
				return usageError{"--ranks: " + err.Error()}
			}
		}
		var labels []string
		switch {
		case *rank < 0 || *sources < 0:
			return usageError{fmt.Sprintf("--rank %d, --sources %d: the number of candidates must be at least 1", *rank, *sources)}
		case *rank > 0 || *sources > 0:
			if len(h.Shrinks) > 0 || h.Remove != 0 {
				return usageError{"--rank and --sources rank their own candidates: they take no --shrink or --remove"}
			}
			w.RankRanks = rs
		default:
			if len(h.Shrinks) == 0 && h.Remove == 0 {
				return usageError{"nothing to predict: give --shrink, --remove or --rank"}
			}
			h.Ranks = rs
			w.Hypotheses = []analysis.Hypothesis{h}
			labels = []string{h.String()}
		}
		if *write != "" && (*rank > 0 || *sources > 0) {
			return usageError{"--write writes the prediction of one hypothesis: it takes no --rank or --sources"}
		}
		prog := newProgress(e.stderr, *quiet)
		plan := analysis.Plan{Trace: args[0], Jobs: *jobs, Log: prog, TimeCorrect: *timeCorrect, WhatIf: w, Patterns: []patterns.Pattern{}}
		if *sources > 0 {
			if underMPILauncher() {
				return fmt.Errorf("scout whatif --sources runs as one process: run it without mpirun")
			}
			if err := unifyIfNeeded(args[0], prog); err != nil {
				return err
			}
			full, err := analysis.Run(context.Background(), analysis.Plan{Trace: args[0], Jobs: *jobs, Log: prog, TimeCorrect: *timeCorrect})
			if err != nil {
				return err
			}
			for _, src := range full.DelaySources(*sources) {
				if rs != nil && !slices.Contains(rs, src.Rank) {
					continue
				}
				w.Hypotheses = append(w.Hypotheses, analysis.Hypothesis{Callpaths: []uint32{src.Callpath}, Ranks: []int{src.Rank}})
				labels = append(labels, fmt.Sprintf("%s on rank %d (delay cost %.6f s)", full.CallpathName(src.Callpath), src.Rank, src.Cost))
			}
		}
		if *write != "" {
			if underMPILauncher() {
				return fmt.Errorf("scout whatif --write runs as one process: run it without mpirun")
			}
			if err := unifyIfNeeded(args[0], prog); err != nil {
				return err
			}
			p, err := analysis.WritePrediction(context.Background(), plan, *write)
			if err != nil {
				return err
			}
			rep := &combine.Report{Prediction: p}
			return rep.WritePrediction(e.stdout, labels, false)
		}
		start := time.Now()
		var rep *combine.Report
		if underMPILauncher() {
			rep, err = analysis.RunMPI(context.Background(), plan)
			if err == nil && rep == nil {
				return nil // an MPI rank other than 0: rank 0 prints
			}
		} else {
			if err := unifyIfNeeded(args[0], prog); err != nil {
				return err
			}
			rep, err = analysis.Run(context.Background(), plan)
		}
		if err != nil {
			return err
		}
		if n := len(rep.Prediction.Ends); n > 1 {
			s := time.Since(start).Seconds()
			prog.Printf("%d predictions in %.2fs (%.1f per second)", n, s, float64(n)/s)
		}
		return rep.WritePrediction(e.stdout, labels, *rank > 0 || *sources > 0)
	}
}

// parseBytes parses a byte count: a number with an optional unit (k, K,
// KB, KiB: 1024; M, MB, MiB: 1024²; G, GB, GiB: 1024³).
func parseBytes(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	mult := uint64(1)
	for _, u := range []struct {
		suffix []string
		m      uint64
	}{{[]string{"KiB", "KB", "K", "k"}, 1 << 10}, {[]string{"MiB", "MB", "M"}, 1 << 20}, {[]string{"GiB", "GB", "G"}, 1 << 30}} {
		for _, suf := range u.suffix {
			if strings.HasSuffix(t, suf) {
				t, mult = strings.TrimSpace(strings.TrimSuffix(t, suf)), u.m
				break
			}
		}
		if mult != 1 {
			break
		}
	}
	v, err := strconv.ParseUint(t, 10, 64)
	if err != nil || v > (1<<63)/mult {
		return 0, fmt.Errorf("%q is not a number of bytes", s)
	}
	return v * mult, nil
}
