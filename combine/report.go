// Package combine merges the per-location results of an analysis into one
// report and writes it out.
package combine

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"scout/cube"
	"scout/localtrace"
	"scout/localtrace/otf2"
	"scout/patterns"
	"scout/replay"
	"scout/unify"
)

// Result is what the analysis of one location contributes: for each
// metric, by its id (the index in patterns.Catalog), its values indexed
// by global call path (nil: none).
type Result struct {
	Location uint64
	Values   [][]float64
	// Timeline is the location's time profile (nil: none, as in a
	// report read from a CUBE file).
	Timeline *Timeline
}

// Row returns the values of metric id m (nil if none).
func (res *Result) Row(m int) []float64 {
	if m < len(res.Values) {
		return res.Values[m]
	}
	return nil
}

// Report is the merged result of an analysis.
type Report struct {
	Defs       *otf2.Defs
	Tree       *unify.CallTree
	Placements map[uint64]localtrace.Placement
	Metrics    []patterns.Metric // by metric id
	Results    []Result          // one per location, sorted by rank and thread (Sort)
	Events     int               // number of trace events analysed
	CCV        replay.Violations // clock-condition violations found
	// OmpTasks counts the OpenMP task events of the trace, which the
	// analysis does not analyze.
	OmpTasks uint64
	// Comm is the point-to-point traffic (communication matrix, message
	// sizes); nil when the report does not have it (one read from a
	// CUBE file).
	Comm *CommStats
	// Correction is what the timestamp correction did before the
	// analysis; nil without one.
	Correction *patterns.Correction
	// Prediction is what the what-if prediction found (nil without one).
	Prediction *patterns.Prediction
	// Statistics are the statistics of the wait-state instances, for
	// the statistics file (Stats).
	Statistics []PatternStats
	// Skipped are the parts of the analysis that did not run
	// (analysis.Plan.Skip): their metrics, and the metrics derived from
	// them, are not in the report.
	Skipped patterns.Parts
	added   map[uint64]bool // locations added
}

// New makes an empty report over the given definitions and call tree.
func New(defs *otf2.Defs, tree *unify.CallTree, pl map[uint64]localtrace.Placement, metrics []patterns.Metric) *Report {
	return &Report{Defs: defs, Tree: tree, Placements: pl, Metrics: metrics}
}

// Add merges one location's result; Sort must follow the last Add. A
// location added twice is an error.
func (r *Report) Add(res Result) error {
	if _, ok := r.Placements[res.Location]; !ok {
		return fmt.Errorf("combine: result for unknown location %d", res.Location)
	}
	if r.added == nil {
		r.added = map[uint64]bool{}
	}
	if r.added[res.Location] {
		return fmt.Errorf("combine: two results for location %d", res.Location)
	}
	if len(res.Values) > len(r.Metrics) {
		return fmt.Errorf("combine: location %d: %d metrics, the catalog has %d", res.Location, len(res.Values), len(r.Metrics))
	}
	for m, v := range res.Values {
		if len(v) > len(r.Tree.Nodes) {
			return fmt.Errorf("combine: location %d: metric %s has %d call paths, the call tree %d", res.Location, r.Metrics[m].Name, len(v), len(r.Tree.Nodes))
		}
	}
	r.added[res.Location] = true
	r.Results = append(r.Results, res)
	return nil
}

// Sort orders the results by rank and thread, once all are added.
func (r *Report) Sort() {
	sort.Slice(r.Results, func(i, j int) bool {
		a, b := r.Placements[r.Results[i].Location], r.Placements[r.Results[j].Location]
		if a.Rank != b.Rank {
			return a.Rank < b.Rank
		}
		return a.Thread < b.Thread
	})
}

// RegionName returns the name of a global region.
func (r *Report) RegionName(id uint32) string {
	if reg, ok := r.Defs.Region(id); ok {
		return r.Defs.Str(reg.Name)
	}
	return fmt.Sprintf("region%d", id)
}

// CallpathName returns the key of call path n (cube.PathKeys): its
// region names from the root, joined by '/'. It looks at n's ancestors
// and their siblings only.
func (r *Report) CallpathName(n uint32) string {
	var elems []string
	for ; n != unify.None; n = r.Tree.Nodes[n].Parent {
		node := r.Tree.Nodes[n]
		e := cube.KeyName(r.RegionName(node.Region))
		sibs := r.Tree.Roots
		if node.Parent != unify.None {
			sibs = r.Tree.Nodes[node.Parent].Children
		}
		k := 1
		for _, s := range sibs {
			if s == n {
				break
			}
			if cube.KeyName(r.RegionName(r.Tree.Nodes[s].Region)) == e {
				k++
			}
		}
		if k > 1 {
			e += "#" + strconv.Itoa(k)
		}
		elems = append(elems, e)
	}
	slices.Reverse(elems)
	return strings.Join(elems, "/")
}

// callpathKeys returns the key of every call path (cube.PathKeys).
func (r *Report) callpathKeys() []string {
	parent, name := make([]int, len(r.Tree.Nodes)), make([]string, len(r.Tree.Nodes))
	for i, n := range r.Tree.Nodes {
		parent[i], name[i] = -1, r.RegionName(n.Region)
		if n.Parent != unify.None {
			parent[i] = int(n.Parent)
		}
	}
	return cube.PathKeys(parent, name)
}
