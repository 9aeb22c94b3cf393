package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"scout/analysis"
	"scout/localtrace/otf2"
)

const reduceLong = `Writes a reduced copy of the OTF2 trace TRACE into the new directory
OUT for what-if predictions (scout whatif): the events that no prediction
scaling the kept regions can tell apart from computation are left out, so
that the predictions of the reduced trace equal the original's (Ino et
al.'s trace reduction; doc/whatif.md). The kept regions are those named
with --keep and those outside MPI whose exclusive time, over all ranks,
reaches --keep-time; they keep every instance and its exclusive time. A
message stays unless its receive ends exactly as its own progress does
under every such prediction; a collective likewise for every member. Then
every instance of a region that is not kept and holds nothing left is
dropped (its time goes to its parent) or emptied.

Predictions of the reduced trace equal the original's for --shrink of
kept regions by factors from 0 to 1, on any ranks, with the same
--eager-limit (messages from that size on stay). Events keep their
recorded times.
`

// reduceCmd declares the flags of "scout reduce" on fs and returns what
// the command runs.
func reduceCmd(fs *pflag.FlagSet) func(e *cmdEnv, args []string) error {
	out := fs.StringP("output", "o", "", "write the reduced archive into the new directory `OUT` (required)")
	keep := fs.StringArray("keep", nil, "keep the region `NAME` (repeatable)")
	keepTime := fs.String("keep-time", "1%", "also keep the regions outside MPI with at least this exclusive time over all ranks: a `SHARE%` of the total or a time (10ms); 0: none")
	eager := fs.String("eager-limit", "64KiB", "keep the messages of at least `BYTES` (those of whatif's rendezvous mode); 0: none")
	quiet := fs.BoolP("quiet", "q", false, "print no progress messages")
	jobs := fs.IntP("jobs", "j", 0, "load at most `N` locations at once (default: number of CPUs)")
	return func(e *cmdEnv, args []string) error {
		if len(args) != 1 {
			e.usage()
			return usageError{fmt.Sprintf("expected one trace argument, got %d", len(args))}
		}
		if *out == "" {
			return usageError{"-o/--output OUT is required: the reduced archive goes into a new directory"}
		}
		if err := checkJobs(*jobs); err != nil {
			return err
		}
		spec := analysis.ReduceSpec{Keep: *keep}
		var err error
		if spec.KeepShare, spec.KeepTime, err = parseKeepTime(*keepTime); err != nil {
			return usageError{"--keep-time: " + err.Error()}
		}
		if spec.EagerLimit, err = parseBytes(*eager); err != nil {
			return usageError{"--eager-limit: " + err.Error()}
		}
		if underMPILauncher() {
			return fmt.Errorf("scout reduce runs as one process: run it without mpirun")
		}
		prog := newProgress(e.stderr, *quiet)
		if err := unifyIfNeeded(args[0], prog); err != nil {
			return err
		}
		res, err := analysis.Reduce(context.Background(), analysis.Plan{Trace: args[0], Jobs: *jobs, Log: prog}, spec, *out)
		if err != nil {
			return err
		}
		before, after := archiveSize(args[0]), archiveSize(*out)
		fmt.Fprintf(e.stdout, "kept regions: %s\n", strings.Join(res.Kept, ", "))
		fmt.Fprintf(e.stdout, "events: %d -> %d (%.1f %% fewer)\n", res.Events, res.Events-res.Dropped, percentOf(res.Dropped, res.Events))
		fmt.Fprintf(e.stdout, "archive: %d -> %d bytes\n", before, after)
		return nil
	}
}

func percentOf(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// parseKeepTime parses --keep-time: a share ("1%") or a time ("10ms",
// "0.5s", "0").
func parseKeepTime(s string) (share, secs float64, err error) {
	t := strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(t, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || v < 0 || v > 100 {
			return 0, 0, fmt.Errorf("%q is not a share from 0%% to 100%%", s)
		}
		return v / 100, 0, nil
	}
	if v, err := strconv.ParseFloat(t, 64); err == nil && v >= 0 {
		return 0, v, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil || d < 0 {
		return 0, 0, fmt.Errorf("%q is neither a share (1%%) nor a time (10ms)", s)
	}
	return 0, d.Seconds(), nil
}

// archiveSize returns the bytes of the OTF2 archive of trace: its
// anchor and definitions files and its folder of local files.
func archiveSize(trace string) int64 {
	a, err := otf2.Open(trace)
	if err != nil {
		return 0
	}
	dir := traceDir(trace)
	var n int64
	for _, f := range []string{a.Name + ".otf2", a.Name + ".def"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil {
			n += st.Size()
		}
	}
	filepath.WalkDir(filepath.Join(dir, a.Name), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
