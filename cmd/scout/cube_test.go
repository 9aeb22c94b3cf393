package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/cube"
	"scout/internal/tracetest"
)

// cubeCells reads a report with our reader as canonical cells.
func cubeCells(t *testing.T, path string) tracetest.Cells {
	t.Helper()
	r, err := cube.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cells := tracetest.Cells{}
	for _, c := range r.Cells() {
		cells[tracetest.Key{Metric: c.Metric, Callpath: c.Callpath, Rank: c.Rank}] = c.Value
	}
	return cells
}

// TestCubeMatchesReference runs scout on every reference trace and
// checks that its scout.cubex, read back, holds exactly the cells of the
// reference's full user-facing tree (expected/trace.csv), derived
// metrics included, and has every metric of it (and besides them only
// the metrics of scout's own, which the reference does not compute);
// and that an independent reader (a small Python script) reads the same
// values.
func TestCubeMatchesReference(t *testing.T) {
	python, _ := exec.LookPath("python3")
	script := filepath.Join(tracetest.Root(), "cube", "testdata", "cubexcheck.py")
	if _, err := os.Stat(script); err != nil {
		python = ""
	}
	for _, tr := range tracetest.All(t) {
		t.Run(tr.Name, func(t *testing.T) {
			out := t.TempDir()
			var stderr bytes.Buffer
			if err := run(tr.Args("-q", "-o", out), io.Discard, &stderr); err != nil {
				t.Fatalf("scout: %v\n%s", err, stderr.String())
			}
			path := filepath.Join(out, "scout.cubex")
			got := cubeCells(t, path)
			want, err := tracetest.ReadCSV(tr.Expected("trace.csv"))
			if err != nil {
				t.Fatal(err)
			}
			ours := map[string]bool{}
			for k := range got {
				ours[k.Metric] = true
			}
			var metrics []string
			seen := map[string]bool{}
			for k := range want {
				if seen[k.Metric] {
					continue
				}
				seen[k.Metric] = true
				metrics = append(metrics, k.Metric)
				if !ours[k.Metric] {
					t.Errorf("metric %s of the reference tree is missing", k.Metric)
				}
			}
			for _, d := range tracetest.Diff(got.Without(ownMetrics()...), want.Only(metrics...), 20) {
				t.Error(d)
			}
			if python == "" {
				return
			}
			csvOut := filepath.Join(out, "independent.csv")
			cmd := exec.Command(python, script, path)
			b, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v", script, err)
			}
			os.WriteFile(csvOut, b, 0o644)
			ind, err := tracetest.ReadCSV(csvOut)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range tracetest.Diff(ind, got, 10) {
				t.Errorf("independent reader: %s", d)
			}
		})
	}
}

// TestReportCommand runs `scout report` on a reference report written by
// CubeW and on one of ours.
func TestReportCommand(t *testing.T) {
	tr := tracetest.All(t)[0]
	out := t.TempDir()
	if err := run([]string{"-q", "-o", out, tr.Dir}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(out, "scout.cubex")}
	if ref := tr.Expected("scout.cubex"); fileExists(ref) {
		files = append(files, ref)
	}
	for _, f := range files {
		var stdout bytes.Buffer
		if err := run([]string{"report", f}, &stdout, io.Discard); err != nil {
			t.Fatalf("scout report %s: %v", f, err)
		}
		if !strings.Contains(stdout.String(), "Total time") {
			t.Errorf("scout report %s printed no summary:\n%s", f, stdout.String())
		}
		csvPath := filepath.Join(out, "report.csv")
		if err := run([]string{"report", "--csv", csvPath, f}, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		got, err := tracetest.ReadCSV(csvPath)
		if err != nil {
			t.Fatal(err)
		}
		if d := tracetest.Diff(got, cubeCells(t, f), 5); len(d) > 0 {
			t.Errorf("scout report --csv %s differs from the report's cells: %v", f, d)
		}
	}
	if err := run([]string{"report", filepath.Join(out, "missing.cubex")}, io.Discard, io.Discard); err == nil {
		t.Error("no error for a missing report")
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// keepRanks removes the processes whose rank keep rejects from r, with
// their value columns.
func keepRanks(r *cube.Report, keep func(rank int) bool) {
	var walk func(n *cube.SystemNode)
	walk = func(n *cube.SystemNode) {
		gs := n.Groups[:0]
		for _, g := range n.Groups {
			if keep(g.Rank) {
				gs = append(gs, g)
			}
		}
		n.Groups = gs
		for _, k := range n.Children {
			walk(k)
		}
	}
	for _, n := range r.System {
		walk(n)
	}
	kept := r.Locations()
	cols := make([]int, len(kept)) // new id → old id
	for i, l := range kept {
		cols[i] = l.ID
		l.ID = i
	}
	newID := make(map[int]int, len(cols))
	for i, o := range cols {
		newID[o] = i
	}
	for _, t := range r.Topologies {
		cs := t.Coords[:0]
		for _, co := range t.Coords {
			if id, ok := newID[co.ID]; ok && co.Kind == cube.CoordLocation {
				co.ID = id
				cs = append(cs, co)
			}
		}
		t.Coords = cs
	}
	for _, s := range r.Values {
		for c, row := range s.Float {
			if row != nil {
				nr := make([]float64, len(cols))
				for i, o := range cols {
					nr[i] = row[o]
				}
				s.Float[c] = nr
			}
		}
		for c, row := range s.Uint {
			if row != nil {
				nr := make([]uint64, len(cols))
				for i, o := range cols {
					nr[i] = row[o]
				}
				s.Uint[c] = nr
			}
		}
	}
}

// TestCombineCommand splits a report into two partial reports by ranks
// and merges them back with `scout combine`.
func TestCombineCommand(t *testing.T) {
	tr := tracetest.All(t)[0]
	for _, cand := range tracetest.All(t) {
		if cand.Name == "ps_mixed_np8" {
			tr = cand
		}
	}
	dir := t.TempDir()
	if err := run([]string{"-q", "-o", dir, tr.Dir}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(dir, "scout.cubex")
	var parts []string
	for i, keep := range []func(int) bool{func(r int) bool { return r%2 == 0 }, func(r int) bool { return r%2 == 1 }} {
		r, err := cube.ReadFile(full)
		if err != nil {
			t.Fatal(err)
		}
		keepRanks(r, keep)
		p := filepath.Join(dir, "part"+string(rune('a'+i))+".cubex")
		if err := cube.WriteFile(p, r); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	merged := filepath.Join(dir, "merged.cubex")
	if err := run(append([]string{"combine", "-q", "-o", merged}, parts...), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if d := tracetest.Diff(cubeCells(t, merged), cubeCells(t, full), 10); len(d) > 0 {
		t.Errorf("merged report differs from the full one: %v", d)
	}
	if got, want := topologyCoords(t, merged), topologyCoords(t, full); !cmp.Equal(got, want) {
		t.Errorf("merged topologies differ from the full report's:\n%s", cmp.Diff(want, got))
	}
	err := run([]string{"combine", "-q", "-o", filepath.Join(dir, "dup.cubex"), parts[0], full}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "is in both") {
		t.Errorf("overlapping parts: error %v, want one naming the duplicate location", err)
	}
	if fileExists(filepath.Join(dir, "dup.cubex")) {
		t.Error("a failed combine left a report behind")
	}
}

// topologyCoords lists a report's topologies by name, each as its sorted
// "location: position" entries, locations named by rank and thread.
func topologyCoords(t *testing.T, path string) map[string][]string {
	t.Helper()
	r, err := cube.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	locs := r.Locations()
	out := map[string][]string{}
	for _, tp := range r.Topologies {
		var lines []string
		for _, co := range tp.Coords {
			l := locs[co.ID]
			lines = append(lines, fmt.Sprintf("rank %d thread %d: %v", l.Group.Rank, l.Rank, co.Pos))
		}
		sort.Strings(lines)
		out[tp.Name] = append(out[tp.Name], strings.Join(lines, "; "))
	}
	return out
}

// TestCombineSparseMetricIDs: metric ids are unique, not dense; a report
// whose metric has id 2^32-1 combines like any other (an array sized by
// the largest id took 32 GiB).
func TestCombineSparseMetricIDs(t *testing.T) {
	dir := t.TempDir()
	if err := run([]string{"-q", "-o", dir, filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender")}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(dir, "scout.cubex")
	r, err := cube.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	ms := r.AllMetrics()
	m := ms[len(ms)-1]
	const big = 1<<32 - 1
	r.Values[big] = r.Values[m.ID]
	delete(r.Values, m.ID)
	m.ID = big
	sparse := filepath.Join(dir, "sparse.cubex")
	if err := cube.WriteFile(sparse, r); err != nil {
		t.Fatal(err)
	}
	merged := filepath.Join(dir, "merged.cubex")
	if err := run([]string{"combine", "-q", "-o", merged, sparse}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if d := tracetest.Diff(cubeCells(t, merged), cubeCells(t, full), 10); len(d) > 0 {
		t.Errorf("combined report differs: %v", d)
	}
}

// TestTopologiesMatchReference checks the Cartesian topologies of
// scout.cubex against the reference's report, where ../shared has it:
// the same topologies, each placing the same locations (by rank and
// thread) at the same coordinates (for hybrid traces, Score-P's
// "Process x Thread" places every thread).
func TestTopologiesMatchReference(t *testing.T) {
	n := 0
	for _, tr := range tracetest.All(t) {
		ref := tr.Expected("scout.cubex")
		if s := tracetest.SharedDir(); !fileExists(ref) && s != "" {
			// the bundled copies leave the reports out: ../shared has them
			for _, folder := range []string{"traces", "traces-clc", "traces-hybrid"} {
				if p := filepath.Join(filepath.Dir(s), folder, filepath.Base(tr.Dir), "expected", "scout.cubex"); fileExists(p) {
					ref = p
				}
			}
		}
		if !fileExists(ref) || tr.Corrected() {
			continue
		}
		n++
		t.Run(tr.Name, func(t *testing.T) {
			out := t.TempDir()
			if err := run(tr.Args("-q", "--no-html", "-o", out), io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(topologyCoords(t, ref), topologyCoords(t, filepath.Join(out, "scout.cubex"))); d != "" {
				t.Errorf("topologies (-reference +scout):\n%s", d)
			}
		})
	}
	if n == 0 {
		t.Skip("no reference reports (../shared is absent)")
	}
}
