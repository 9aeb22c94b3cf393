package patterns

import (
	"testing"

	"scout/replay"
)

// TestCatalog checks the registry: every metric declared once, with a
// name, a known unit and a parent declared before it; every metric of
// the statistics file in it.
func TestCatalog(t *testing.T) {
	if len(Catalog) < int(numMetrics) {
		t.Fatalf("catalog has %d metrics, ids %d", len(Catalog), numMetrics)
	}
	seen := map[string]bool{}
	for id, m := range Catalog {
		switch {
		case m.Name == "" || m.Display == "" || m.Descr == "":
			t.Errorf("metric %d: incomplete declaration %+v", id, m)
		case seen[m.Name]:
			t.Errorf("metric %s declared twice", m.Name)
		case m.Unit != "sec" && m.Unit != "occ" && m.Unit != "bytes":
			t.Errorf("metric %s: unit %q", m.Name, m.Unit)
		case m.Parent != "" && !seen[m.Parent]:
			t.Errorf("metric %s: parent %q not declared before it", m.Name, m.Parent)
		}
		seen[m.Name] = true
		if got, ok := Lookup(m.Name); !ok || got != m {
			t.Errorf("Lookup(%s) = %+v, %v", m.Name, got, ok)
		}
	}
	for i, name := range StatPatterns {
		if m, ok := Lookup(name); !ok || stat(statMetrics[i]) != i || m.Name != name {
			t.Errorf("statistics pattern %d (%s) is not in the catalog", i, name)
		}
	}
}

// TestNamed: values stored by id come out by name.
func TestNamed(t *testing.T) {
	s := replay.NewSeverities(2)
	s.Add(LateSender, 1, 0.5)
	s.Add(BytesCin, 0, 8)
	got := Named(s)
	if len(got) != 2 || got["mpi_latesender"][1] != 0.5 || got["bytes_cin"][0] != 8 {
		t.Errorf("Named: %v", got)
	}
}

// TestPatternTable: every metric of the catalog but the profile's is
// computed by exactly one pattern of the table.
func TestPatternTable(t *testing.T) {
	by := map[replay.Metric]string{Time: "profile", Visits: "profile"}
	for _, p := range Patterns {
		for _, m := range p.Metrics {
			if other, ok := by[m]; ok {
				t.Errorf("%s: metric %s is computed by %s too", p.Name, Catalog[m].Name, other)
			}
			by[m] = p.Name
		}
	}
	for id, m := range Catalog {
		if _, ok := by[replay.Metric(id)]; !ok {
			t.Errorf("no pattern computes %s", m.Name)
		}
	}
}
