package cube

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// reportOpts compares reports without following the back-pointers (they
// are checked by Validate) and without the Add* helpers' caches.
var reportOpts = cmp.Options{
	cmpopts.IgnoreUnexported(Report{}),
	cmpopts.IgnoreFields(Metric{}, "Parent"),
	cmpopts.IgnoreFields(Cnode{}, "Parent"),
	cmpopts.IgnoreFields(SystemNode{}, "Parent"),
	cmpopts.IgnoreFields(LocationGroup{}, "Node"),
	cmpopts.IgnoreFields(Location{}, "Group"),
	cmp.Comparer(bytes.Equal), // misc members: fast, and a short diff
}

// synthReport builds a report with ncnodes call-tree nodes (node i's
// parent is (i-1)/fanout; fanout 0 makes a chain; a second root is added
// when ncnodes > 2), nranks process groups with nthreads locations each
// on two system nodes of one machine, and no metrics.
func synthReport(ncnodes, fanout, nranks, nthreads int) *Report {
	r := &Report{Attrs: []Attr{{"Creator", "cube test"}, {"CUBE_CT_AGGR", "SUM"}}}
	regions := make([]*Region, 0, 16)
	for i := range min(ncnodes, 16) {
		regions = append(regions, r.AddRegion(&Region{
			Name: fmt.Sprintf("region_%d", i), MangledName: fmt.Sprintf("_Z8region_%dv", i), Mod: "/src/app.c", Begin: 10 * i, End: 10*i + 9,
			Paradigm: "user", Role: "function",
		}))
	}
	cnodes := make([]*Cnode, 0, ncnodes)
	for i := range ncnodes {
		var parent *Cnode
		switch {
		case i == 0 || (ncnodes > 2 && i == ncnodes-1):
		case fanout == 0:
			parent = cnodes[i-1]
		default:
			parent = cnodes[(i-1)/fanout]
		}
		c := r.AddCnode(parent, regions[i%len(regions)])
		c.Line = i
		cnodes = append(cnodes, c)
	}
	machine := r.AddSystemNode(nil, "machine Linux", "machine")
	nodes := []*SystemNode{r.AddSystemNode(machine, "node a", "node"), r.AddSystemNode(machine, "node b", "node")}
	for rank := range nranks {
		g := r.AddGroup(nodes[rank*2/max(nranks, 1)], "MPI Rank "+strconv.Itoa(rank), rank)
		for t := range nthreads {
			name := "Master thread"
			if t > 0 {
				name = "OMP thread " + strconv.Itoa(t)
			}
			r.AddLocation(g, name, t)
		}
	}
	return r
}

// addMetric adds a metric and fills its values with fill(cnode ID,
// location ID); fill returns the value and whether it is set (unset
// values are empty). A nil fill leaves the metric without values.
func addMetric(r *Report, parent *Metric, name string, typ MetricType, dt DataType, fill func(c, l int) (float64, bool)) *Metric {
	m := r.AddMetric(parent, &Metric{UniqName: name, DispName: "Metric " + name, DataType: dt, Type: typ,
		Unit: "sec", URL: "@mirror@patterns.html#" + name, Descr: "test metric " + name})
	if fill == nil || !typ.HasData() {
		return m
	}
	if r.Values == nil {
		r.Values = map[int]*Severity{}
	}
	nc, nl := len(r.AllCnodes()), len(r.Locations())
	sev := &Severity{}
	if dt.IsFloat() {
		sev.Float = make([][]float64, nc)
	} else {
		sev.Uint = make([][]uint64, nc)
	}
	for c := range nc {
		var frow []float64
		var urow []uint64
		for l := range nl {
			v, ok := fill(c, l)
			if !ok {
				v = dt.Empty()
			}
			if !ok && frow == nil && urow == nil {
				continue
			}
			if dt.IsFloat() {
				if frow == nil {
					frow = make([]float64, nl)
					for i := range l {
						frow[i] = dt.Empty()
					}
				}
				frow[l] = v
			} else {
				if urow == nil {
					urow = make([]uint64, nl)
				}
				urow[l] = uint64(int64(v))
			}
		}
		if frow != nil {
			sev.Float[c] = frow
		}
		if urow != nil {
			sev.Uint[c] = urow
		}
	}
	r.Values[m.ID] = sev
	return m
}

// randomFill returns a fill function setting a fraction of cells to
// random values (integers when integer is set).
func randomFill(seed uint64, fraction float64, integer bool) func(c, l int) (float64, bool) {
	rng := rand.New(rand.NewPCG(seed, 1))
	return func(c, l int) (float64, bool) {
		if rng.Float64() >= fraction {
			return 0, false
		}
		if integer {
			return float64(rng.IntN(2000) - 500), true
		}
		return rng.ExpFloat64(), true
	}
}

// normalize sets rows that are entirely empty to nil and drops metrics
// without rows, as ReadFile does, so that reports can be compared.
func normalize(r *Report) *Report {
	byID := map[int]*Metric{}
	for _, m := range r.AllMetrics() {
		byID[m.ID] = m
	}
	for id, s := range r.Values {
		empty := byID[id].DataType.Empty()
		some := false
		for i, row := range s.Float {
			if row != nil && !allEqual(row, empty) {
				some = true
			} else {
				s.Float[i] = nil
			}
		}
		for i, row := range s.Uint {
			if row != nil && !allEqual(row, 0) {
				some = true
			} else {
				s.Uint[i] = nil
			}
		}
		if !some {
			delete(r.Values, id)
		}
	}
	if len(r.Values) == 0 {
		r.Values = nil
	}
	return r
}

func allEqual[T comparable](row []T, v T) bool {
	for _, x := range row {
		if x != v {
			return false
		}
	}
	return true
}

// writeRead writes r to a new file and reads it back.
func writeRead(t *testing.T, r *Report) (*Report, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.cubex")
	if err := WriteFile(path, r); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	back, err := ReadFile(path)
	if err != nil {
		t.Fatalf("ReadFile: %v", err)
	}
	return back, path
}

// archive returns the members of a .cubex file by name.
func archive(t *testing.T, path string) map[string][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := readTar(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, m := range ms {
		out[m.name] = b[m.off : m.off+m.size]
	}
	return out
}

// cellMap turns cells into a map for comparison.
func cellMap(cells []Cell) map[string]float64 {
	out := make(map[string]float64, len(cells))
	for _, c := range cells {
		k := c.Metric + "," + c.Callpath + "," + c.Rank
		out[k] += c.Value
	}
	return out
}

// dump renders a report as lines: every definition with its fields and
// tree position, and every value as its bit pattern. Comparing dumps is
// much faster than a structural cmp.Diff of large reports.
func dump(r *Report) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	add("attrs %q mirrors %q", r.Attrs, r.Mirrors)
	for _, m := range r.AllMetrics() {
		parent := -1
		if m.Parent != nil {
			parent = m.Parent.ID
		}
		add("metric %d parent %d %q %q %s %s %q %q %q %q %q %q %q %q %q", m.ID, parent, m.UniqName, m.DispName, m.DataType,
			m.Type, m.Viz, m.Unit, m.Val, m.URL, m.Descr, m.Expression, m.InitExpression, m.AggrExpression, m.Attrs)
	}
	for _, g := range r.Regions {
		add("region %d %q %q %q %q %q %d %d %q %q %q", g.ID, g.Name, g.MangledName, g.Descr, g.URL, g.Mod, g.Begin, g.End,
			g.Paradigm, g.Role, g.Attrs)
	}
	for _, c := range r.AllCnodes() {
		parent := -1
		if c.Parent != nil {
			parent = c.Parent.ID
		}
		add("cnode %d parent %d region %d line %d %q %v %q", c.ID, parent, c.Region.ID, c.Line, c.Mod, c.Params, c.Attrs)
	}
	for _, n := range r.AllSystemNodes() {
		parent := -1
		if n.Parent != nil {
			parent = n.Parent.ID
		}
		add("stn %d parent %d %q %q %q %q", n.ID, parent, n.Name, n.Class, n.Descr, n.Attrs)
		for _, g := range n.Groups {
			add("  group %d %q %d %s %q", g.ID, g.Name, g.Rank, g.Type, g.Attrs)
			for _, l := range g.Locations {
				add("    location %d %q %d %s %q", l.ID, l.Name, l.Rank, l.Type, l.Attrs)
			}
		}
	}
	for _, c := range r.Topologies {
		add("cart %q %v %v", c.Name, c.Dims, c.Coords)
	}
	for _, f := range r.Misc {
		add("misc %q %d %x", f.Name, len(f.Data), sha256.Sum256(f.Data))
	}
	ids := slices.Sorted(maps.Keys(r.Values))
	for _, id := range ids {
		s := r.Values[id]
		add("values %d: %d float rows, %d uint rows", id, len(s.Float), len(s.Uint))
		for c, row := range s.Float {
			if row != nil {
				bits := make([]uint64, len(row))
				for i, v := range row {
					bits[i] = math.Float64bits(v)
				}
				add("  %d %x", c, bits)
			}
		}
		for c, row := range s.Uint {
			if row != nil {
				add("  %d %x", c, row)
			}
		}
	}
	return out
}

// diffReports returns a diff of two reports' dumps, "" if they are equal.
func diffReports(want, got *Report) string {
	a, b := dump(want), dump(got)
	if slices.Equal(a, b) {
		return ""
	}
	return cmp.Diff(a, b)
}

// diffCells compares cell maps with tolerance tol (absolute or relative;
// 0: exact) and returns a go-cmp diff of the differing cells (at most
// 50), "" if they are equal. Large maps are compared directly first: a
// structural diff of 10^5 cells takes seconds.
func diffCells(want, got map[string]float64, tol float64) string {
	close := func(a, b float64) bool {
		return a == b || math.Abs(a-b) <= tol || math.Abs(a-b) <= tol*math.Min(math.Abs(a), math.Abs(b))
	}
	w, g := map[string]float64{}, map[string]float64{}
	for k, v := range want {
		if gv, ok := got[k]; !ok || !close(v, gv) {
			w[k] = v
			if ok {
				g[k] = gv
			}
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			g[k] = v
		}
	}
	if len(w) == 0 && len(g) == 0 {
		return ""
	}
	trim := func(m map[string]float64) {
		for _, k := range slices.Sorted(maps.Keys(m))[min(len(m), 50):] {
			delete(m, k)
		}
	}
	n := len(w) + len(g)
	trim(w)
	trim(g)
	return fmt.Sprintf("%d differences, first ones:\n%s", n, cmp.Diff(w, g))
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
