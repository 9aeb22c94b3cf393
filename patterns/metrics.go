package patterns

// Metric describes one metric of the analysis report.
type Metric struct {
	Name    string // unique name, e.g. "mpi_latesender"
	Display string // display name
	Unit    string // "sec", "occ" or "bytes"
	Integer bool   // values are counts
	Parent  string // parent metric's unique name, "" for a root
	Descr   string
}

// Catalog lists the metrics this analysis computes, parents before
// children.
var Catalog = []Metric{
	{Name: "time", Display: "Time", Unit: "sec", Descr: "Total CPU allocation time"},
	{Name: "visits", Display: "Visits", Unit: "occ", Integer: true, Descr: "Number of visits"},
}

// Lookup returns the catalog entry of a metric.
func Lookup(name string) (Metric, bool) {
	for _, m := range Catalog {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}
