package cube

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestValidate breaks a valid report in one way per case and checks the
// error, and that WriteFile refuses the report without creating a file.
func TestValidate(t *testing.T) {
	build := func() *Report {
		r := synthReport(5, 2, 2, 2)
		tm := addMetric(r, nil, "time", Inclusive, Double, randomFill(1, 1, false))
		addMetric(r, tm, "wait", Exclusive, Double, randomFill(2, 0.5, false))
		addMetric(r, nil, "derived", PostDerived, Double, nil)
		r.Topologies = []*Cartesian{{Dims: []Dim{{Size: 2}, {Size: 2}}, Coords: []Coord{{CoordLocation, 3, []int{1, 1}}}}}
		return r
	}
	if err := build().Validate(); err != nil {
		t.Fatalf("valid report: %v", err)
	}
	for _, tc := range []struct {
		name  string
		spoil func(r *Report)
		want  string
	}{
		{"no metrics", func(r *Report) { r.Metrics = nil }, "at least one metric"},
		{"duplicate metric ID", func(r *Report) { r.Metrics[0].Children[0].ID = 0 }, "used twice"},
		{"duplicate unique name", func(r *Report) { r.Metrics[1].UniqName = "time" }, "used twice"},
		{"unsupported data type", func(r *Report) { r.Metrics[0].DataType = "TAU_ATOMIC" }, "unsupported data type"},
		{"wrong metric parent", func(r *Report) { r.Metrics[0].Children[0].Parent = nil }, "Parent"},
		{"inclusive maxdouble", func(r *Report) { r.Metrics[0].DataType = MaxDouble; r.Values = nil }, "needs an EXCLUSIVE"},
		{"region ID", func(r *Report) { r.Regions[1].ID = 7 }, "Regions[1]"},
		{"foreign region", func(r *Report) { r.Cnodes[0].Region = &Region{ID: 0} }, "not one of Report.Regions"},
		{"cnode ID clash", func(r *Report) { r.AllCnodes()[2].ID = 1 }, "used twice"},
		{"no class", func(r *Report) { r.System[0].Class = "" }, "empty class"},
		{"empty group", func(r *Report) { r.System[0].Children[0].Groups[0].Locations = nil }, "no locations"},
		{"location ID gap", func(r *Report) { r.Locations()[1].ID = 9 }, "location 9"},
		{"location type", func(r *Report) { r.Locations()[0].Type = "fiber" }, "unknown type"},
		{"coordinate outside", func(r *Report) { r.Topologies[0].Coords[0].Pos[1] = 2 }, "outside dimension 1"},
		{"coordinate of nothing", func(r *Report) { r.Topologies[0].Coords[0].ID = 4 }, "does not exist"},
		{"reserved misc name", func(r *Report) { r.Misc = []MiscFile{{Name: "0.index"}} }, "reserved"},
		{"values of a derived metric", func(r *Report) { r.Values[2] = &Severity{} }, "no such data metric"},
		{"short row", func(r *Report) { r.Values[0].Float[1] = []float64{1} }, "1 values, want 4"},
		{"integer rows for a float metric", func(r *Report) {
			r.Values[1] = &Severity{Uint: make([][]uint64, 5)}
		}, "Severity.Float"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := build()
			tc.spoil(r)
			err := r.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v, want an error containing %q", err, tc.want)
			}
			dir := t.TempDir()
			if err := WriteFile(filepath.Join(dir, "x.cubex"), r); err == nil {
				t.Error("WriteFile accepted the report")
			}
			if got := dirEntries(t, dir); len(got) != 0 {
				t.Errorf("directory holds %q", got)
			}
		})
	}
}

// TestAddAfterRead checks that the Add* helpers number new objects after
// those of a report read from a file.
func TestAddAfterRead(t *testing.T) {
	r, _ := writeRead(t, roundTripCases[6].build()) // all data types
	m := r.AddMetric(r.Metrics[0], &Metric{UniqName: "extra", DataType: Double, Type: Exclusive})
	c := r.AddCnode(r.Cnodes[0], r.Regions[0])
	l := r.AddLocation(r.System[0].Children[0].Groups[0], "extra thread", 9)
	if m.ID != 16 || c.ID != 30 || l.ID != 6 {
		t.Errorf("new IDs: metric %d, cnode %d, location %d; want 16, 30, 6", m.ID, c.ID, l.ID)
	}
	r.Values = nil
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	back, _ := writeRead(t, r)
	if diff := diffReports(r, back); diff != "" {
		t.Error(diff)
	}
}
