package cube

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// dirEntries lists the names in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// streamReport writes r's values row by row through the streaming
// Writer, metrics in reverse document order (any metric order is fine).
func streamReport(t *testing.T, path string, r *Report) {
	t.Helper()
	w, err := Create(path, r)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ms := r.AllMetrics()
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		sev := r.Values[m.ID]
		if sev == nil {
			continue
		}
		for _, c := range r.RowOrder(m) {
			switch {
			case sev.Float != nil && sev.Float[c.ID] != nil:
				err = w.WriteRow(m, c, sev.Float[c.ID])
			case sev.Uint != nil && sev.Uint[c.ID] != nil:
				err = w.WriteRowUint(m, c, sev.Uint[c.ID])
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestStreamingWriter checks that rows written one by one give the same
// report as WriteFile, and that only the final file remains.
func TestStreamingWriter(t *testing.T) {
	for _, tc := range roundTripCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "stream.cubex")
			streamReport(t, path, tc.build())
			back, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := diffReports(normalize(tc.build()), back); diff != "" {
				t.Errorf("read back (-want +got):\n%s", diff)
			}
			if got := dirEntries(t, dir); len(got) != 1 || got[0] != "stream.cubex" {
				t.Errorf("directory holds %q, want only stream.cubex", got)
			}
		})
	}
}

// TestWriterArgumentErrors checks that bad calls fail with a clear error
// and leave the Writer usable.
func TestWriterArgumentErrors(t *testing.T) {
	r := synthReport(6, 2, 2, 1)
	excl := addMetric(r, nil, "excl", Exclusive, Double, nil)
	incl := addMetric(r, nil, "incl", Inclusive, Integer, nil)
	derived := addMetric(r, nil, "derived", PostDerived, Double, nil)
	other := synthReport(6, 2, 2, 1)
	otherMetric := addMetric(other, nil, "excl", Exclusive, Double, nil)
	cn := r.AllCnodes()
	row := []float64{1, 2}
	path := filepath.Join(t.TempDir(), "args.cubex")
	w, err := Create(path, r)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.WriteRow(excl, cn[2], row); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"derived metric", func() error { return w.WriteRow(derived, cn[0], row) }, "not a data metric"},
		{"metric of another report", func() error { return w.WriteRow(otherMetric, cn[0], row) }, "not a data metric"},
		{"cnode of another report", func() error { return w.WriteRow(excl, other.AllCnodes()[3], row) }, "cnode is not part"},
		{"nil cnode", func() error { return w.WriteRow(excl, nil, row) }, "cnode is not part"},
		{"short row", func() error { return w.WriteRow(excl, cn[3], row[:1]) }, "1 values, want one per location (2)"},
		{"row out of order", func() error { return w.WriteRow(excl, cn[1], row) }, "out of order"},
		{"same row twice", func() error { return w.WriteRow(excl, cn[2], row) }, "out of order"},
		{"uint row of a float metric", func() error { return w.WriteRowUint(excl, cn[4], []uint64{1, 2}) }, "floating-point"},
		{"switch metric", func() error { return w.WriteRowUint(incl, cn[0], []uint64{1, 2}) }, ""},
		{"finished metric", func() error { return w.WriteRow(excl, cn[5], row) }, "already finished"},
	} {
		err := tc.call()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatalf("Commit after argument errors: %v", err)
	}
	back, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Values[excl.ID].Float[cn[2].ID]; len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("excl at cnode 2: %v, want [1 2]", got)
	}
	if got := back.Values[incl.ID].Uint[cn[0].ID]; len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("incl at cnode 0: %v, want [1 2]", got)
	}
	if err := w.WriteRow(excl, cn[5], row); err == nil {
		t.Error("WriteRow after Commit succeeded")
	}
	if _, err := Create(filepath.Join(t.TempDir(), "report.cube"), r); err == nil || !strings.Contains(err.Error(), ".cubex") {
		t.Errorf("Create without .cubex: %v", err)
	}
	bad := synthReport(2, 1, 1, 1)
	addMetric(bad, nil, "min", Inclusive, MinDouble, nil)
	if _, err := Create(filepath.Join(t.TempDir(), "bad.cubex"), bad); err == nil {
		t.Error("Create accepted an INCLUSIVE MINDOUBLE metric")
	}
}

// TestWriterAtomic checks that an abandoned or failed write leaves
// neither the final file nor a temporary file, and that a successful
// one replaces an existing file.
func TestWriterAtomic(t *testing.T) {
	build := func() *Report {
		r := synthReport(200, 3, 4, 2)
		addMetric(r, nil, "time", Inclusive, Double, randomFill(9, 0.8, false))
		addMetric(r, nil, "visits", Exclusive, Integer, randomFill(10, 0.8, true))
		return r
	}
	// writeHalf writes the first half of the first metric's rows.
	writeHalf := func(t *testing.T, w *Writer, r *Report) {
		m := r.Metrics[0]
		order := r.RowOrder(m)
		for _, c := range order[:len(order)/2] {
			if row := r.Values[m.ID].Float[c.ID]; row != nil {
				if err := w.WriteRow(m, c, row); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, tc := range []struct {
		name string
		// run writes into dir/out.cubex and returns Commit's error
		// (nil when it does not commit).
		run     func(t *testing.T, w *Writer, r *Report) error
		wantErr string
	}{
		{"closed midway", func(t *testing.T, w *Writer, r *Report) error {
			writeHalf(t, w, r)
			return w.Close()
		}, ""},
		{"closed before any row", func(t *testing.T, w *Writer, r *Report) error {
			return w.Close()
		}, ""},
		{"I/O error while writing", func(t *testing.T, w *Writer, r *Report) error {
			writeHalf(t, w, r)
			w.f.Close() // inject: every later write fails
			return w.Commit()
		}, "file already closed"},
		{"I/O error before commit", func(t *testing.T, w *Writer, r *Report) error {
			w.f.Close()
			writeHalf(t, w, r) // buffered: no error yet
			return w.Commit()
		}, "file already closed"},
		{"rename fails", func(t *testing.T, w *Writer, r *Report) error {
			if err := os.Mkdir(w.path, 0o755); err != nil { // a directory is in the way
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(w.path, "x"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return w.Commit()
		}, "rename"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := build()
			w, err := Create(filepath.Join(dir, "out.cubex"), r)
			if err != nil {
				t.Fatal(err)
			}
			err = tc.run(t, w, r)
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
			if err := w.Close(); err != nil {
				t.Errorf("Close after failure: %v", err)
			}
			got := dirEntries(t, dir)
			if tc.name == "rename fails" {
				if len(got) != 1 || got[0] != "out.cubex" || dirEntries(t, filepath.Join(dir, "out.cubex"))[0] != "x" {
					t.Errorf("directory holds %q, want only the directory that was in the way", got)
				}
			} else if len(got) != 0 {
				t.Errorf("directory holds %q after a failed write, want nothing", got)
			}
		})
	}
	t.Run("replaces an existing file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "out.cubex")
		writeFile(t, path, []byte("old content"))
		if err := WriteFile(path, build()); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFile(path); err != nil {
			t.Fatal(err)
		}
		if got := dirEntries(t, filepath.Dir(path)); len(got) != 1 {
			t.Errorf("directory holds %q", got)
		}
	})
	t.Run("WriteFile with invalid values", func(t *testing.T) {
		dir := t.TempDir()
		r := build()
		r.Values[0].Float[3] = []float64{1} // one value instead of 8
		if err := WriteFile(filepath.Join(dir, "out.cubex"), r); err == nil {
			t.Error("WriteFile accepted a short row")
		}
		if got := dirEntries(t, dir); len(got) != 0 {
			t.Errorf("directory holds %q", got)
		}
	})
}

// mallocs returns the number of heap allocations so far.
func mallocs() uint64 {
	var st runtime.MemStats
	runtime.ReadMemStats(&st)
	return st.Mallocs
}

// TestWriterConstantMemory checks that writing rows allocates nothing:
// the allocations of writing two metrics (including finishing them and
// switching between them) do not depend on the number of rows.
func TestWriterConstantMemory(t *testing.T) {
	allocs := func(ncnodes int) uint64 {
		r := synthReport(ncnodes, 4, 8, 1)
		a := addMetric(r, nil, "a", Inclusive, Double, nil)
		b := addMetric(r, nil, "b", Exclusive, Integer, nil)
		w, err := Create(filepath.Join(t.TempDir(), "mem.cubex"), r)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		orderA, orderB := r.RowOrder(a), r.RowOrder(b)
		frow := []float64{1, 2, 3, 4, 5, 6, 7, 8}
		urow := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
		before := mallocs()
		for i, c := range orderA {
			if i%3 != 0 { // some rows omitted: sparse
				if err := w.WriteRow(a, c, frow); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, c := range orderB {
			if err := w.WriteRowUint(b, c, urow); err != nil {
				t.Fatal(err)
			}
		}
		n := mallocs() - before
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		return n
	}
	small, large := allocs(1000), allocs(100000)
	t.Logf("allocations while writing rows: %d for 1000 cnodes, %d for 100000", small, large)
	if large > small+4 { // a few for sync.Pool refills after a GC
		t.Errorf("allocations grow with the number of rows: %d for 1000 cnodes, %d for 100000", small, large)
	}
	// And a single row allocates nothing.
	r := synthReport(10, 2, 4, 1)
	m := addMetric(r, nil, "m", Exclusive, Double, nil)
	w, err := Create(filepath.Join(t.TempDir(), "one.cubex"), r)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cn := r.AllCnodes()
	if err := w.WriteRow(m, cn[0], []float64{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	i := 1
	row := []float64{1, 2, 3, 4}
	if n := testing.AllocsPerRun(5, func() {
		if err := w.WriteRow(m, cn[i], row); err != nil {
			t.Fatal(err)
		}
		i++
	}); n != 0 {
		t.Errorf("WriteRow allocates %v times per row", n)
	}
}

// BenchmarkWrite streams 1000 call paths × 1000 locations × 80 metrics
// (640 MB of values) through the Writer and commits the file.
func BenchmarkWrite(b *testing.B) {
	const ncnodes, nlocs, nmetrics = 1000, 1000, 80
	r := synthReport(ncnodes, 4, nlocs, 1)
	time := addMetric(r, nil, "time", Inclusive, Float, nil)
	for i := 1; i < nmetrics; i++ {
		parent := time
		if i%10 == 0 {
			parent = nil
		}
		dt := Float
		if i%4 == 0 {
			dt = Integer
		}
		typ := Exclusive
		if i%7 == 0 {
			typ = Inclusive
		}
		addMetric(r, parent, "metric_"+string(rune('a'+i%26))+strings.Repeat("x", i/26), typ, dt, nil)
	}
	metrics := r.AllMetrics()
	orders := map[MetricType][]*Cnode{Exclusive: r.RowOrder(&Metric{Type: Exclusive}), Inclusive: r.RowOrder(&Metric{Type: Inclusive})}
	frow := make([]float64, nlocs)
	urow := make([]uint64, nlocs)
	for i := range frow {
		frow[i], urow[i] = float64(i)+0.25, uint64(i+1)
	}
	dir := b.TempDir()
	b.SetBytes(ncnodes * nlocs * nmetrics * 8)
	b.ReportAllocs()
	for b.Loop() {
		w, err := Create(filepath.Join(dir, "bench.cubex"), r)
		if err != nil {
			b.Fatal(err)
		}
		for k, m := range metrics {
			for i, c := range orders[m.Type] {
				if (i+k)%10 == 0 {
					continue // 10% of the rows are empty: sparse metrics
				}
				if m.DataType.IsFloat() {
					err = w.WriteRow(m, c, frow)
				} else {
					err = w.WriteRowUint(m, c, urow)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := w.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "bench.cubex")); err == nil {
		b.ReportMetric(float64(st.Size())/1e6, "file-MB")
	}
	if err := os.Remove(filepath.Join(dir, "bench.cubex")); err != nil && !errors.Is(err, os.ErrNotExist) {
		b.Fatal(err)
	}
}
