package combine

import (
	"testing"

	"scout/patterns"
)

// TestTreeCopiesCatalog: the metrics the analysis computes (the patterns'
// catalog) and the metrics the report copies from it are the same, with
// one declaration each (the tree takes unit, display name and
// description from the catalog).
func TestTreeCopiesCatalog(t *testing.T) {
	copies := map[string]bool{}
	for _, m := range MetricTree() {
		if m.Origin != Copied {
			continue
		}
		copies[m.Unique] = true
		c, ok := patterns.Lookup(m.Unique)
		if !ok {
			t.Errorf("the tree copies %s, which no pattern computes", m.Unique)
			continue
		}
		if m.Display != c.Display || m.Descr != c.Descr || m.Unit != c.Unit {
			t.Errorf("%s: tree %q/%q/%s, catalog %q/%q/%s", m.Unique, m.Display, m.Descr, m.Unit, c.Display, c.Descr, c.Unit)
		}
	}
	for _, c := range patterns.Catalog {
		if !copies[c.Name] {
			t.Errorf("the report has no place for %s", c.Name)
		}
	}
}
