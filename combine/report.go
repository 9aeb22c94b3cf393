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
	"scout/unify"
)

// Result is what the analysis of one location contributes: for each
// metric, its values indexed by global call path.
type Result struct {
	Location uint64
	Values   map[string][]float64
}

// Report is the merged result of an analysis.
type Report struct {
	Defs       *otf2.Defs
	Tree       *unify.CallTree
	Placements map[uint64]localtrace.Placement
	Metrics    []patterns.Metric // in report order
	Results    []Result          // one per location, sorted by rank and thread
	Events     int               // number of trace events analysed
	// Instances are the wait-state instances for the statistics file,
	// with global call paths.
	Instances []patterns.Instance
}

// New makes an empty report over the given definitions and call tree.
func New(defs *otf2.Defs, tree *unify.CallTree, pl map[uint64]localtrace.Placement, metrics []patterns.Metric) *Report {
	return &Report{Defs: defs, Tree: tree, Placements: pl, Metrics: metrics}
}

// Add merges one location's result. A location added twice is an error.
func (r *Report) Add(res Result) error {
	if _, ok := r.Placements[res.Location]; !ok {
		return fmt.Errorf("combine: result for unknown location %d", res.Location)
	}
	for _, o := range r.Results {
		if o.Location == res.Location {
			return fmt.Errorf("combine: two results for location %d", res.Location)
		}
	}
	for m, v := range res.Values {
		if len(v) > len(r.Tree.Nodes) {
			return fmt.Errorf("combine: location %d: metric %s has %d call paths, the call tree %d", res.Location, m, len(v), len(r.Tree.Nodes))
		}
	}
	r.Results = append(r.Results, res)
	sort.Slice(r.Results, func(i, j int) bool {
		a, b := r.Placements[r.Results[i].Location], r.Placements[r.Results[j].Location]
		if a.Rank != b.Rank {
			return a.Rank < b.Rank
		}
		return a.Thread < b.Thread
	})
	return nil
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
