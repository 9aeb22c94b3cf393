// Package tracetest finds the reference traces the tests use and compares
// analysis results with the reference analyzer's.
package tracetest

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Trace is one reference analysis: a trace, the flags it is analyzed
// with and the reference's results for them.
type Trace struct {
	Name string // directory name, e.g. "ps_late_sender" ("+tc" added for a corrected analysis)
	Dir  string // directory holding traces.otf2
	// Flags are the analysis's command-line flags besides the outputs:
	// --time-correct for the corrected analysis of a trace with clock
	// violations (whose results are in expected-tc/).
	Flags []string
	// Threads: the trace has ranks with several threads (a hybrid
	// MPI+OpenMP trace, from a traces-hybrid folder).
	Threads bool
	// expect is the folder of the expected results (default expected)
	expect string
}

// Expected returns the path of file name in the trace's expected-results
// folder (expected/, or expected-tc/ for a corrected analysis).
func (t Trace) Expected(name string) string {
	e := t.expect
	if e == "" {
		e = "expected"
	}
	return filepath.Join(t.Dir, e, name)
}

// Args returns the command line of the analysis: flags, then the trace's
// Flags and directory.
func (t Trace) Args(flags ...string) []string {
	return append(append(flags, t.Flags...), t.Dir)
}

// Corrected reports whether the analysis corrects the timestamps.
func (t Trace) Corrected() bool { return t.expect == "expected-tc" }

// Root is the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// SharedDir is ../shared/traces beside the repository, or "" when absent.
// (../shared/traces-clc and ../shared/traces-hybrid sit beside it.)
func SharedDir() string { return shared("traces") }

func shared(name string) string {
	d := filepath.Join(Root(), "..", "shared", name)
	if st, err := os.Stat(d); err == nil && st.IsDir() {
		return d
	}
	return ""
}

// All lists the reference analyses: of the bundled traces (testdata/traces,
// testdata/traces-clc and testdata/traces-hybrid) and, when ../shared is
// present, of the third-party traces there that are not bundled
// (../shared/traces, ../shared/traces-clc and ../shared/traces-hybrid). A trace with clock-condition violations (in a
// traces-clc folder) is analyzed twice: as recorded (expected/) and
// with --time-correct (expected-tc/, Name with "+tc").
func All(t testing.TB) []Trace {
	var out []Trace
	for _, tr := range Archives(t) {
		out = append(out, tr)
		if _, err := os.Stat(filepath.Join(tr.Dir, "expected-tc")); err == nil {
			out = append(out, Trace{Name: tr.Name + "+tc", Dir: tr.Dir, Flags: []string{"--time-correct"}, Threads: tr.Threads, expect: "expected-tc"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Archives lists the reference traces of All once each, analyzed as
// recorded.
func Archives(t testing.TB) []Trace {
	var out []Trace
	seen := map[string]bool{}
	add := func(dir string) {
		if dir == "" {
			return
		}
		threads := filepath.Base(dir) == "traces-hybrid"
		m, _ := filepath.Glob(filepath.Join(dir, "*", "traces.otf2"))
		for _, a := range m {
			d := filepath.Dir(a)
			n := filepath.Base(d)
			if !seen[n] {
				seen[n] = true
				out = append(out, Trace{Name: n, Dir: d, Threads: threads})
			}
		}
	}
	add(filepath.Join(Root(), "testdata", "traces"))
	add(filepath.Join(Root(), "testdata", "traces-clc"))
	add(filepath.Join(Root(), "testdata", "traces-hybrid"))
	if s := SharedDir(); s != "" {
		add(s)
		add(shared("traces-clc"))
		add(shared("traces-hybrid"))
	} else {
		t.Logf("../shared/traces is absent: third-party traces are skipped")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) == 0 {
		t.Fatal("no reference traces found")
	}
	return out
}

// Key identifies one cell of a result: metric, call path and rank.
type Key struct{ Metric, Callpath, Rank string }

// Cells is a set of result values.
type Cells map[Key]float64

// ReadCSV reads a canonical result CSV (metric,callpath,rank,value).
func ReadCSV(path string) (Cells, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 || strings.Join(rows[0], ",") != "metric,callpath,rank,value" {
		return nil, fmt.Errorf("%s: missing header", path)
	}
	c := Cells{}
	for i, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[3], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, i+2, err)
		}
		c[Key{r[0], r[1], r[2]}] = v
	}
	return c, nil
}

// Only returns the cells of the given metrics.
func (c Cells) Only(metrics ...string) Cells {
	keep := map[string]bool{}
	for _, m := range metrics {
		keep[m] = true
	}
	o := Cells{}
	for k, v := range c {
		if keep[k.Metric] {
			o[k] = v
		}
	}
	return o
}

// Without returns the cells of the metrics other than the given ones.
func (c Cells) Without(metrics ...string) Cells {
	drop := map[string]bool{}
	for _, m := range metrics {
		drop[m] = true
	}
	o := Cells{}
	for k, v := range c {
		if !drop[k.Metric] {
			o[k] = v
		}
	}
	return o
}

// Close reports whether a and b agree within 1e-9, absolute or relative.
func Close(a, b float64) bool {
	d := math.Abs(a - b)
	return d <= 1e-9 || d <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// Diff lists the cells that differ between got and want: missing, extra
// (beyond rounding of 0) and unequal ones, at most max lines.
func Diff(got, want Cells, max int) []string {
	var d []string
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok && !Close(0, w):
			// (an absent cell is 0: a reference value within rounding of 0,
			// such as a difference of equal sums, may be absent)
			d = append(d, fmt.Sprintf("missing %v = %v", k, w))
		case ok && !Close(g, w):
			d = append(d, fmt.Sprintf("%v: got %v, want %v (diff %g)", k, g, w, g-w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok && !Close(g, 0) {
			d = append(d, fmt.Sprintf("extra %v = %v", k, g))
		}
	}
	sort.Strings(d)
	if len(d) > max {
		d = append(d[:max], fmt.Sprintf("... and %d more", len(d)-max))
	}
	return d
}
