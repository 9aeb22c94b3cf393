package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/cube"
	"scout/internal/tracetest"
	"scout/patterns"
)

// rootCauseMetric and criticalPathMetric tell whether a metric of the
// report (the analysis's or the derived tree's) belongs to the root-cause
// analysis or to the critical path: computed by it, or derived only from
// what it computes.
func rootCauseMetric(m string) bool {
	for _, p := range []string{"delay", "mpi_wait_indirect", "mpi_wait_propagating", "mpi_wait_direct",
		"mpi_wait_terminal", "waitstates_"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

func criticalPathMetric(m string) bool {
	for _, p := range []string{"critical_", "non_critical_path", "performance_impact", "inter_partition", "intra_partition"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// partsRun is the outputs of one analysis of a trace with flags.
type partsRun struct {
	csv     []string // the CSV's rows
	cells   tracetest.Cells
	metrics []string // the report's metrics, in report order
	cube    tracetest.Cells
	stat    []byte
}

func analyzeWithFlags(t *testing.T, dir string, flags ...string) partsRun {
	t.Helper()
	out := t.TempDir()
	csvPath := filepath.Join(out, "scout.csv")
	var stderr bytes.Buffer
	if err := run(append(append([]string{"-q", "-o", out, "--csv", csvPath}, flags...), dir), &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("scout %v: %v\n%s", flags, err, stderr.String())
	}
	var r partsRun
	r.csv = strings.Split(strings.TrimSpace(string(readFile(t, csvPath))), "\n")[1:]
	var err error
	if r.cells, err = tracetest.ReadCSV(csvPath); err != nil {
		t.Fatal(err)
	}
	rep, err := cube.ReadFile(filepath.Join(out, "scout.cubex"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.AllMetrics() {
		r.metrics = append(r.metrics, m.UniqName)
	}
	r.cube = cubeCells(t, filepath.Join(out, "scout.cubex"))
	r.stat = readFile(t, filepath.Join(out, "trace.stat"))
	return r
}

// TestSkipParts analyzes a reference trace with each selection of the
// optional parts: a variant's wait-state cells are the full run's, row
// for row; it has the metrics of the parts it ran, with the reference's
// values, and none of the others, in the CSV and in the report, whose
// remaining metrics hold the full run's values.
func TestSkipParts(t *testing.T) {
	tr := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_mixed_np4")
	want, err := tracetest.ReadCSV(filepath.Join(tr, "expected", "scout.csv"))
	if err != nil {
		t.Fatal(err)
	}
	full := analyzeWithFlags(t, tr)
	waitStates := func(rows []string) []string {
		var out []string
		for _, r := range rows {
			m, _, _ := strings.Cut(r, ",")
			if mm, ok := patterns.Lookup(m); ok && mm.Part == 0 {
				out = append(out, r)
			}
		}
		return out
	}
	tests := []struct {
		flags        []string
		rootCause    bool // has the root-cause metrics
		criticalPath bool // has the critical-path metrics
	}{
		{nil, true, true},
		{[]string{"--single-pass"}, false, false},
		{[]string{"--no-rootcause", "--no-critical-path"}, false, false},
		{[]string{"--no-rootcause"}, false, true},
		{[]string{"--no-critical-path"}, true, false},
		{[]string{"--rootcause", "--critical-path"}, true, true},
	}
	for _, tc := range tests {
		t.Run(strings.Join(append([]string{"flags"}, tc.flags...), " "), func(t *testing.T) {
			got := analyzeWithFlags(t, tr, tc.flags...)
			if d := cmp.Diff(waitStates(full.csv), waitStates(got.csv)); d != "" {
				t.Errorf("wait-state rows differ from the full run's (-full +got):\n%s", d)
			}
			if !bytes.Equal(got.stat, full.stat) {
				t.Errorf("trace.stat differs from the full run's")
			}
			// the computed metrics: the reference's values, nothing else
			// (but scout's own metrics, which the reference does not have)
			var computed []string
			for _, m := range patterns.Catalog {
				if (!rootCauseMetric(m.Name) || tc.rootCause) && (!criticalPathMetric(m.Name) || tc.criticalPath) {
					computed = append(computed, m.Name)
				}
			}
			if d := tracetest.Diff(got.cells.Without(ownMetrics()...), want.Only(computed...), 20); len(d) > 0 {
				t.Errorf("%d differences from expected/scout.csv:\n%s", len(d), strings.Join(d, "\n"))
			}
			// the report: the full run's metrics but the skipped parts',
			// with the full run's values
			var metrics []string
			for _, m := range full.metrics {
				if (!rootCauseMetric(m) || tc.rootCause) && (!criticalPathMetric(m) || tc.criticalPath) {
					metrics = append(metrics, m)
				}
			}
			if d := cmp.Diff(metrics, got.metrics); d != "" {
				t.Errorf("report metrics (-want +got):\n%s", d)
			}
			if d := tracetest.Diff(got.cube, full.cube.Only(metrics...), 20); len(d) > 0 {
				t.Errorf("%d differences from the full report:\n%s", len(d), strings.Join(d, "\n"))
			}
			// and there is something to lose: the parts' metrics have values
			for _, c := range []struct {
				has  bool
				name string
			}{{tc.rootCause, "delay_latesender"}, {tc.rootCause, "delay_barrier_longterm"}, {tc.rootCause, "mpi_wait_propagating_ls"},
				{tc.criticalPath, "critical_path"}, {tc.criticalPath, "critical_imbalance_impact"}} {
				if n := len(got.cells.Only(c.name)); (n > 0) != c.has {
					t.Errorf("%d cells of %s in the CSV, want them: %v", n, c.name, c.has)
				}
				if n := slices.Contains(got.metrics, c.name); n != c.has {
					t.Errorf("%s in the report: %v, want %v", c.name, n, c.has)
				}
			}
		})
	}
}

// TestSkipPartsContradictions: a part asked for and left out at once is
// a usage error.
func TestSkipPartsContradictions(t *testing.T) {
	dir := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender")
	for _, flags := range [][]string{
		{"--rootcause", "--no-rootcause"},
		{"--critical-path", "--single-pass"},
		{"--rootcause", "--single-pass"},
	} {
		err := run(append(append([]string{"-q", "-o", t.TempDir()}, flags...), dir), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "contradicts") {
			t.Errorf("%v: got %v, want a usage error", flags, err)
		}
	}
}

// TestHelpExplainsParts: -h names the flags of the optional parts.
func TestHelpExplainsParts(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-h"}, &out, os.Stderr); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"--no-rootcause", "--no-critical-path", "--single-pass", "root causes", "critical path"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("-h does not mention %q", s)
		}
	}
}

// TestMPISkipParts: under mpirun (two processes for four ranks) each
// selection of the optional parts gives the in-process run's CSV,
// statistics and report.
func TestMPISkipParts(t *testing.T) {
	bin := buildMPI(t)
	dir := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_mixed_np4")
	for _, flag := range []string{"--single-pass", "--no-rootcause", "--no-critical-path"} {
		t.Run(flag, func(t *testing.T) {
			want, got := t.TempDir(), t.TempDir()
			if err := run([]string{"-q", "-o", want, "--csv", filepath.Join(want, "scout.csv"), flag, dir}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
				t.Fatal(err)
			}
			if b, err := mpirun(2, bin, "-q", "-o", got, "--csv", filepath.Join(got, "scout.csv"), flag, dir).CombinedOutput(); err != nil {
				t.Fatalf("mpirun -np 2: %v\n%s", err, b)
			}
			for _, f := range []string{"scout.csv", "trace.stat"} {
				if !bytes.Equal(readFile(t, filepath.Join(got, f)), readFile(t, filepath.Join(want, f))) {
					t.Errorf("%s differs from the in-process run's", f)
				}
			}
			g, w := cubeCells(t, filepath.Join(got, "scout.cubex")), cubeCells(t, filepath.Join(want, "scout.cubex"))
			if !cmp.Equal(g, w) {
				t.Errorf("scout.cubex differs from the in-process report: %v", tracetest.Diff(g, w, 5))
			}
			if flag == "--single-pass" && len(w.Only("delay_latesender", "critical_path")) > 0 {
				t.Errorf("--single-pass report has root-cause cells")
			}
		})
	}
}

// TestSummaryRootCauses checks the root-cause and critical-path lines of
// the end-of-run summary and of `scout report` (on our report and on the
// reference analyzer's, when at hand) against sums of the reference's
// values, and that a report without those metrics shows none.
func TestSummaryRootCauses(t *testing.T) {
	tr := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_mixed_np4")
	want, err := tracetest.ReadCSV(filepath.Join(tr, "expected", "scout.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// the key lines, from the reference's values
	var length, imbalance float64
	short, long := map[string]float64{}, map[string]float64{}
	for k, v := range want {
		switch {
		case k.Metric == "critical_path":
			length += v
		case k.Metric == "critical_imbalance_impact":
			imbalance += v
		case strings.HasPrefix(k.Metric, "delay_") && strings.HasSuffix(k.Metric, "_longterm"):
			long[k.Callpath] += v
		case strings.HasPrefix(k.Metric, "delay_"):
			short[k.Callpath] += v
		}
	}
	top := ""
	for cp := range short {
		if top == "" || short[cp]+long[cp] > short[top]+long[top] {
			top = cp
		}
	}
	lines := []string{
		"Top root causes (delay that made others wait, share of total time):",
		fmt.Sprintf("%s  %.6g s (short-term %.6g s, long-term %.6g s), causing mostly", top, short[top]+long[top], short[top], long[top]),
		fmt.Sprintf("Critical path %.6g s, imbalance impact %.6g s", length, imbalance),
	}
	check := func(what, out string, rootCauses, path bool) {
		t.Helper()
		for i, l := range lines {
			if has := i < 2 && rootCauses || i == 2 && path; strings.Contains(out, l) != has {
				t.Errorf("%s: has %q: %v, want %v:\n%s", what, l, !has, has, out)
			}
		}
		if !strings.Contains(out, "Top wait states") || strings.Contains(out, "Activity impact") || strings.Contains(out, "Short-term") {
			t.Errorf("%s: wait states:\n%s", what, out)
		}
	}
	for _, tc := range []struct {
		flags            []string
		rootCauses, path bool
	}{
		{nil, true, true},
		{[]string{"--single-pass"}, false, false},
		{[]string{"--no-rootcause"}, false, true},
		{[]string{"--no-critical-path"}, true, false},
	} {
		out := t.TempDir()
		var stderr bytes.Buffer
		if err := run(append(append([]string{"-o", out}, tc.flags...), tr), &bytes.Buffer{}, &stderr); err != nil {
			t.Fatalf("scout %v: %v\n%s", tc.flags, err, stderr.String())
		}
		check(fmt.Sprintf("scout %v", tc.flags), stderr.String(), tc.rootCauses, tc.path)
		var stdout bytes.Buffer
		if err := run([]string{"report", filepath.Join(out, "scout.cubex")}, &stdout, io.Discard); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("scout report of scout %v", tc.flags), stdout.String(), tc.rootCauses, tc.path)
	}
	if dir := tracetest.SharedDir(); dir != "" {
		if ref := filepath.Join(dir, "ps_mixed_np4", "expected", "scout.cubex"); fileExists(ref) {
			var stdout bytes.Buffer
			if err := run([]string{"report", ref}, &stdout, io.Discard); err != nil {
				t.Fatal(err)
			}
			check("scout report of the reference's report", stdout.String(), true, true)
		}
	}
}
