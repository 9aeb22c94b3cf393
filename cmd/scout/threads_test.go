package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"scout/localtrace/otf2"
)

// TestThreadTeamErrors checks the traces with threads scout cannot
// analyze: a thread that calls MPI, teams of varying sizes, threads whose
// barriers do not match. The analysis stops with an error naming the
// thread and writes no report.
func TestThreadTeamErrors(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "traces-hybrid", "omp_barrier_imbalance_np2t2")
	const (
		worker   = 1 << 32 // thread 1 of rank 0 (thread<<32 | rank)
		parallel = 243     // "!$omp parallel @ompsuite.c:53"
		ompBar   = 245     // "!$omp barrier @ompsuite.c:56"
		work     = 6       // "work"
		barrier  = 19      // "MPI_Barrier"
	)
	// retag renames the region of the first instance of region from in
	// the worker's trace to region to.
	retag := func(from, to uint64) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			depth, done := -1, false
			rewriteEvents(t, dir, worker, func(ev *otf2.Event, w *otf2.EventWriter) error {
				if !done && (ev.Type == otf2.EvEnter || ev.Type == otf2.EvLeave) && ev.Args[0] == from {
					if ev.Type == otf2.EvEnter && depth < 0 {
						depth = 0
					}
					if depth >= 0 {
						ev.Args[0] = to
						if ev.Type == otf2.EvEnter {
							depth++
						} else if depth--; depth == 0 {
							done = true
						}
					}
				}
				return w.Write(ev)
			})
		}
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string
	}{
		{"thread calls MPI", retag(work, barrier), "rank 0: thread 1 (location 4294967296) calls MPI"},
		{"varying team", retag(parallel, work), "rank 0: thread 1 (location 4294967296) takes part in 2 OpenMP parallel regions, the master thread in 3: teams of varying sizes are not supported"},
		{"barriers differ", retag(ompBar, work), "thread 1 of rank 0: the rank's threads reached different OpenMP synchronisations here"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "trace")
			copyDir(t, src, dir)
			tc.damage(t, dir)
			out := filepath.Join(t.TempDir(), "out")
			var stderr bytes.Buffer
			err := run([]string{"-q", "-o", out, dir}, io.Discard, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
			if ents, _ := os.ReadDir(out); len(ents) != 0 {
				t.Errorf("the failed analysis wrote %d files into %s", len(ents), out)
			}
		})
	}
}

// TestTimeCorrectThreads checks that the timestamp correction, which does
// not correct threads yet, refuses traces with several threads per rank
// instead of mixing corrected and uncorrected times.
func TestTimeCorrectThreads(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "traces-hybrid", "omp_lock_np2t2")
	for _, args := range [][]string{
		{"-q", "--time-correct", "-o", filepath.Join(t.TempDir(), "out"), src},
		{"correct", "-q", "-o", filepath.Join(t.TempDir(), "corrected"), src},
	} {
		err := run(args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "the timestamp correction does not support traces with several threads per rank") {
			t.Errorf("%v: error %v", args, err)
		}
		if ents, _ := os.ReadDir(args[len(args)-2]); len(ents) != 0 {
			t.Errorf("%v: the failed run wrote %d files", args, len(ents))
		}
	}
}

// TestOmpTasksWarned: OpenMP task events, which scout does not analyze,
// are counted and named in a warning.
func TestOmpTasksWarned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trace")
	copyDir(t, filepath.Join("..", "..", "testdata", "traces-hybrid", "omp_barrier_imbalance_np2t2"), dir)
	n := 0
	rewriteEvents(t, dir, 1<<32, func(ev *otf2.Event, w *otf2.EventWriter) error {
		if err := w.Write(ev); err != nil {
			return err
		}
		if ev.Type == otf2.EvThreadTeamBegin && n < 2 { // a task created and completed in the first two teams
			n++
			for _, typ := range []uint8{otf2.EvThreadTaskCreate, otf2.EvThreadTaskComplete} {
				task := otf2.Event{Type: typ, Time: ev.Time}
				task.Args[0], task.Args[1], task.Args[2] = ev.Args[0], 1, uint64(n)
				if err := w.Write(&task); err != nil {
					return err
				}
			}
		}
		return nil
	})
	var stderr bytes.Buffer
	if err := run([]string{"-o", t.TempDir(), dir}, io.Discard, &stderr); err != nil {
		t.Fatal(err)
	}
	if want := "the trace has 4 OpenMP task events, which scout does not analyze"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
}
