package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/analysis"
	"scout/internal/tracetest"
	"scout/patterns"
)

// TestMatchesReference runs scout on every reference trace and checks
// every cell of every metric scout computes against the reference
// analyzer's (but for the metrics of scout's own, patterns.Metric.Own,
// which the reference does not have), and the time profile against the
// metric values (checkTimeProfile).
func TestMatchesReference(t *testing.T) {
	for _, tr := range tracetest.All(t) {
		t.Run(tr.Name, func(t *testing.T) {
			tmp := t.TempDir()
			out, prof := filepath.Join(tmp, "out.csv"), filepath.Join(tmp, "profile.csv")
			var stderr bytes.Buffer
			if err := run(tr.Args("-q", "-o", tmp, "--csv", out, "--profile-csv", prof), &bytes.Buffer{}, &stderr); err != nil {
				t.Fatalf("scout: %v\n%s", err, stderr.String())
			}
			got, err := tracetest.ReadCSV(out)
			if err != nil {
				t.Fatal(err)
			}
			want, err := tracetest.ReadCSV(tr.Expected("scout.csv"))
			if err != nil {
				t.Fatal(err)
			}
			var metrics []string
			for _, m := range patterns.Catalog {
				if !m.Own {
					metrics = append(metrics, m.Name)
				}
			}
			if d := tracetest.Diff(got.Only(metrics...), want.Only(metrics...), 20); len(d) > 0 {
				t.Errorf("%d differences:\n%s", len(d), strings.Join(d, "\n"))
			}
			if len(want.Only("time", "visits")) == 0 {
				t.Errorf("reference has no time/visits cells")
			}
			checkTimeProfile(t, readProfileCSV(t, prof), got)
		})
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no trace", nil, "expected one trace argument"},
		{"two traces", []string{"a", "b"}, "expected one trace argument"},
		{"bad flag", []string{"--nope", "x"}, "unknown flag"},
		{"missing trace", []string{"-q", "/nonexistent/trace"}, "no trace archive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := run(tc.args, &bytes.Buffer{}, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// csvOf runs scout on a trace and returns its CSV output.
func csvOf(t *testing.T, dir string) string {
	t.Helper()
	var out, stderr bytes.Buffer
	if err := run([]string{"-q", "-o", t.TempDir(), "--csv", "-", dir}, &out, &stderr); err != nil {
		t.Fatalf("scout: %v\n%s", err, stderr.String())
	}
	return out.String()
}

// csvIn analyzes the trace in dir, writing the report into dir, and
// returns the CSV.
func csvIn(t *testing.T, dir string) []byte {
	t.Helper()
	var out, stderr bytes.Buffer
	if err := run([]string{"-q", "-o", dir, "--csv", "-", dir}, &out, &stderr); err != nil {
		t.Fatalf("scout: %v\n%s", err, stderr.String())
	}
	return out.Bytes()
}

// TestDeterministic checks that repeated runs, with any number of
// threads, give identical results.
func TestDeterministic(t *testing.T) {
	dir := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_mixed_np8")
	first := csvOf(t, dir)
	for i := 0; i < 10; i++ {
		if got := csvOf(t, dir); got != first {
			t.Fatalf("run %d differs from the first", i+2)
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if got := csvOf(t, dir); got != first {
		t.Fatal("GOMAXPROCS=1 run differs")
	}
}

// BenchmarkAnalyze runs the whole in-process analysis (load, replay,
// patterns, unify, merge) on the largest bundled trace.
func BenchmarkAnalyze(b *testing.B) {
	dir := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_mixed_np8")
	events := benchAnalyze(b, dir)
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// benchAnalyze runs the in-process analysis of dir b.N times, reports
// the heap allocations per trace event and returns the number of events.
func benchAnalyze(b *testing.B, dir string) int {
	var events int
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		rep, err := analysis.Run(context.Background(), analysis.Plan{Trace: dir})
		if err != nil {
			b.Fatal(err)
		}
		events = rep.Events
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N)/float64(events), "allocs/event")
	return events
}

// TestStatisticsMatchReference compares trace.stat with the reference's,
// line by line as printed: the patterns, counts, mean, median, minimum,
// maximum, sum, variance and quartiles (estimated as the reference does,
// combine.Report.Stats), and the most severe instances.
func TestStatisticsMatchReference(t *testing.T) {
	for _, tr := range tracetest.All(t) {
		t.Run(tr.Name, func(t *testing.T) {
			tmp := t.TempDir()
			if err := run(tr.Args("-q", "-o", tmp), &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
				t.Fatal(err)
			}
			got := strings.Split(string(readFile(t, filepath.Join(tmp, "trace.stat"))), "\n")
			want := strings.Split(string(readFile(t, tr.Expected("trace.stat"))), "\n")
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("trace.stat differs from the reference's (-want +got):\n%s", d)
			}
		})
	}
}

// BenchmarkAnalyzeGenerated runs the whole in-process analysis on a
// generated 4-rank trace of about 5 M events with every kind of phase,
// and reports events/s overall and per location.
func BenchmarkAnalyzeGenerated(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "trace")
	args := []string{"tracegen", "-q", "-o", dir, "--ranks", "4", "--events", "5000000",
		"--phase", "compute:imbalance=1ms", "--phase", "late_sender:delay=1ms", "--phase", "ring:jitter=1ms",
		"--phase", "allreduce:imbalance=1ms", "--phase", "barrier:jitter=1ms", "--phase", "bcast:delay=1ms"}
	if err := run(args, io.Discard, io.Discard); err != nil {
		b.Fatal(err)
	}
	events := benchAnalyze(b, dir)
	rate := float64(events) * float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "events/s")
	b.ReportMetric(rate/4, "events/s/location")
}

// TestFlagValidation: every flag is checked when the command line is
// read, with a clear message, before anything is read or written.
func TestFlagValidation(t *testing.T) {
	out := filepath.Join(t.TempDir(), "gen")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-j", "-2", "x"}, "-j/--jobs -2"},
		{[]string{"report", "-n", "-1", "x.cubex"}, "-n/--top -1"},
		{[]string{"tracegen", "-o", out, "-n", "0"}, "--ranks 0: must be at least 1"},
		{[]string{"tracegen", "-o", out, "-i", "0"}, "--iterations 0: must be at least 1"},
		{[]string{"tracegen", "-o", out, "--events", "0"}, "--events 0: must be at least 1"},
		{[]string{"tracegen", "-o", out, "--program", "a/b"}, `program name "a/b"`},
		{[]string{"tracegen", "-o", out, "--events", "18446744073709551615"}, "too many"},
		{[]string{"tracegen", "-o", out, "-n", "4", "-i", "100000000000"}, "more than"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			err := run(tc.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 2 {
				t.Errorf("error %v (exit %d), want a usage error containing %q", err, exitCode(err), tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a rejected command wrote %s", out)
			}
		})
	}
}

// TestHelpFlags: help lists boolean flags as GNU tools do.
func TestHelpFlags(t *testing.T) {
	for _, cmd := range [][]string{{"-h"}, {"report", "-h"}, {"tracegen", "-h"}, {"combine", "-h"}, {"unify", "-h"}} {
		var out bytes.Buffer
		if err := run(cmd, &out, io.Discard); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
		if strings.Contains(out.String(), "[=true|false]") || !strings.Contains(out.String(), "--help") {
			t.Errorf("%v:\n%s", cmd, out.String())
		}
	}
}

// TestReportTopZero: report -n 0 prints the total time only.
func TestReportTopZero(t *testing.T) {
	dir := t.TempDir()
	if err := run([]string{"-q", "-o", dir, filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender")}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run([]string{"report", "-n", "0", filepath.Join(dir, "scout.cubex")}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "Total time") || strings.Contains(s, "wait states") || strings.Contains(s, "Wait") {
		t.Errorf("report -n 0:\n%s", s)
	}
}
