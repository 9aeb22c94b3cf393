package analysis_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/analysis"
	"scout/combine"
	"scout/internal/tracetest"
	"scout/patterns"
	"scout/replay"
)

// A toy pattern, declared in this file only: it counts the Late Sender
// instances that waited longer than 1 µs, refining the Late Sender
// events the real pattern publishes. Adding it takes its metric, its
// register function and its entry in the plan's pattern table.
var lateOverMicro = patterns.Declare(patterns.Metric{Name: "toy_late_over_micro", Display: "Late by over 1 µs",
	Unit: "occ", Integer: true, Descr: "Count of Late Sender instances that idled longer than a microsecond."})

func registerLateOverMicro(bus *replay.Bus) {
	replay.Subscribe(bus, patterns.LateSenderFound, func(c *replay.Ctx, ls *patterns.LateSenderInfo) error {
		if ls.Idle > 1e-6 {
			c.Add(lateOverMicro, c.Callpath(ls.Recv), 1)
		}
		return nil
	})
}

// cells returns the report's values of the named metrics, by call path
// and rank.
func cells(rep *combine.Report, metrics ...string) map[[2]string]float64 {
	out := map[[2]string]float64{}
	for _, c := range rep.Cells() {
		if slices.Contains(metrics, c.Metric) {
			out[[2]string{c.Callpath, c.Rank}] += c.Value
		}
	}
	return out
}

// TestToyPattern: a pattern added by a test runs in the replay and its
// values reach the report; on a trace whose Late Sender waits all exceed
// a microsecond it counts what mpi_sls_count and mpi_cls_count count.
func TestToyPattern(t *testing.T) {
	trace := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender")
	table := append(slices.Clone(patterns.Patterns), patterns.Pattern{Name: "late by over 1 µs",
		Metrics: []replay.Metric{lateOverMicro}, Register: registerLateOverMicro})
	rep, err := analysis.Run(context.Background(), analysis.Plan{Trace: trace, Patterns: table})
	if err != nil {
		t.Fatal(err)
	}
	got, want := cells(rep, "toy_late_over_micro"), cells(rep, "mpi_sls_count", "mpi_cls_count")
	if len(want) == 0 {
		t.Fatal("the trace has no Late Sender instances: the test checks nothing")
	}
	for _, c := range rep.Cells() {
		if c.Metric == "mpi_latesender" && c.Value <= 1e-6 {
			t.Fatalf("a Late Sender cell of %v s: the closed form does not hold", c.Value)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("toy pattern counts (-want +got):\n%s", diff)
	}
	// Without the toy pattern, its metric stays empty.
	rep, err = analysis.Run(context.Background(), analysis.Plan{Trace: trace})
	if err != nil {
		t.Fatal(err)
	}
	if got := cells(rep, "toy_late_over_micro"); len(got) != 0 {
		t.Errorf("metric of a pattern not in the plan has values: %v", got)
	}
}

// TestRunStopsWhenCancelled: a cancelled context stops the analysis
// before the replay, with the context's error.
func TestRunStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	trace := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_mixed_np8")
	if _, err := analysis.Run(ctx, analysis.Plan{Trace: trace}); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

// TestMissingLocationsNamedOnce: locations that cannot be loaded are
// reported each with its rank, in rank order, once.
func TestMissingLocationsNamedOnce(t *testing.T) {
	src := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_mixed_np8")
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{"6", "2"} {
		if err := os.Remove(filepath.Join(dir, "traces", loc+".evt")); err != nil {
			t.Fatal(err)
		}
	}
	_, err := analysis.Run(context.Background(), analysis.Plan{Trace: dir})
	want := "rank 2: otf2: location 2: event file " + filepath.Join(dir, "traces", "2.evt") + " is missing\n" +
		"rank 6: otf2: location 6: event file " + filepath.Join(dir, "traces", "6.evt") + " is missing"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}

// logLines collects what an analysis logs.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logLines) Warnf(format string, args ...any) { l.Printf(format, args...) }

// TestStatisticsDuringRootCause: in-process, the statistics of a full
// analysis are made while the root-cause passes replay, and they equal
// those of the wait states alone, made after the replay.
func TestStatisticsDuringRootCause(t *testing.T) {
	const early = "summarized the wait states while the root-cause passes replayed"
	for _, name := range []string{"ps_mixed_np8", "ps_wait_nxn", "ps_late_receiver"} {
		t.Run(name, func(t *testing.T) {
			trace := filepath.Join(tracetest.Root(), "testdata", "traces", name)
			if _, err := os.Stat(trace); err != nil {
				trace = filepath.Join(tracetest.SharedDir(), name)
			}
			var full, alone logLines
			rep, err := analysis.Run(context.Background(), analysis.Plan{Trace: trace, Log: &full})
			if err != nil {
				t.Fatal(err)
			}
			want, err := analysis.Run(context.Background(), analysis.Plan{Trace: trace, Log: &alone, Skip: patterns.AllParts})
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Statistics) == 0 {
				t.Fatal("no statistics: the test checks nothing")
			}
			if diff := cmp.Diff(want.Statistics, rep.Statistics); diff != "" {
				t.Errorf("statistics (-wait states alone +full analysis):\n%s", diff)
			}
			if got := []bool{slices.Contains(full.lines, early), slices.Contains(alone.lines, early)}; !slices.Equal(got, []bool{true, false}) {
				t.Errorf("made during the root-cause passes (full analysis, wait states alone): %v, want [true false]", got)
			}
		})
	}
}
