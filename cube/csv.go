package cube

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"io"
	"slices"
	"strconv"
)

// Cell is one value of a report in scout's canonical form: call-path
// exclusive and metric inclusive.
type Cell struct {
	// Metric is the metric's unique name.
	Metric string
	// Callpath is the region names from the call-tree root, joined by "/".
	Callpath string
	// Rank is the location's label: the MPI rank "r" of its group, or
	// "r.t" for thread t > 0 of rank r.
	Rank string
	// Value is the value; integer metrics have integral values.
	Value float64
	// Integer is set for metrics of an integer data type.
	Integer bool
}

// Cells returns the values of r in scout's canonical form, one cell per
// metric, cnode and location whose value is neither zero nor the data
// type's empty value, sorted by metric name, call path and rank
// (numerically). Values are
//   - call-path exclusive: for [Inclusive] metrics, whose stored values
//     include the callees, a cnode's value is its stored value minus the
//     stored values of its children (as CubeLib computes it);
//   - metric inclusive: the stored values, which along the metric tree
//     already include the child metrics.
//
// Derived metrics, which store nothing, have no cells. Call paths are
// keyed as PathKeys says: siblings of one name are told apart.
func (r *Report) Cells() []Cell {
	all := r.AllCnodes() // parents before their children
	pos := make(map[*Cnode]int, len(all))
	parent, name := make([]int, len(all)), make([]string, len(all))
	for i, c := range all {
		pos[c] = i
		parent[i], name[i] = -1, c.Region.Name
		if c.Parent != nil {
			parent[i] = pos[c.Parent]
		}
	}
	keys := PathKeys(parent, name)
	paths := make([]string, len(all))
	for i, c := range all {
		paths[c.ID] = keys[i]
	}
	locs := r.Locations()
	ranks := make([]string, len(locs))
	for _, l := range locs {
		ranks[l.ID] = rankLabel(l)
	}
	var cells []Cell
	for _, m := range r.AllMetrics() {
		sev := r.Values[m.ID]
		if sev == nil || !m.Type.HasData() {
			continue
		}
		incl := m.Type.callTreeInclusive()
		empty := m.DataType.Empty()
		if m.DataType.IsFloat() {
			excl := make([]float64, len(locs))
			for _, c := range all {
				if !exclusiveFloat(excl, sev.Float, c, incl) {
					continue
				}
				for l, v := range excl {
					if v != 0 && v != empty {
						cells = append(cells, Cell{m.UniqName, paths[c.ID], ranks[l], v, false})
					}
				}
			}
			continue
		}
		excl := make([]int64, len(locs))
		unsigned := !m.DataType.IsSigned()
		for _, c := range all {
			if !exclusiveInt(excl, sev.Uint, c, incl) {
				continue
			}
			for l, v := range excl {
				if v == 0 {
					continue
				}
				f := float64(v)
				if unsigned && !incl {
					f = float64(uint64(v))
				}
				cells = append(cells, Cell{m.UniqName, paths[c.ID], ranks[l], f, true})
			}
		}
	}
	slices.SortStableFunc(cells, func(a, b Cell) int {
		return cmp.Or(cmp.Compare(a.Metric, b.Metric), cmp.Compare(a.Callpath, b.Callpath), compareRanks(a.Rank, b.Rank))
	})
	return cells
}

// exclusiveFloat sets excl to the call-path exclusive values of c and
// reports whether any stored row contributed. For inclusive metrics it is
// the stored value minus the sum of the children's stored values, summed
// in child order first (as CubeLib does).
func exclusiveFloat(excl []float64, rows [][]float64, c *Cnode, incl bool) bool {
	own := rows[c.ID]
	some := own != nil
	if !incl {
		if own != nil {
			copy(excl, own)
		}
		return some
	}
	clear(excl)
	for _, k := range c.Children {
		if kr := rows[k.ID]; kr != nil {
			some = true
			for l, v := range kr {
				excl[l] += v
			}
		}
	}
	for l := range excl {
		o := 0.0
		if own != nil {
			o = own[l]
		}
		excl[l] = o - excl[l]
	}
	return some
}

// exclusiveInt is exclusiveFloat for integer values.
func exclusiveInt(excl []int64, rows [][]uint64, c *Cnode, incl bool) bool {
	own := rows[c.ID]
	some := own != nil
	for l := range excl {
		excl[l] = 0
		if own != nil {
			excl[l] = int64(own[l])
		}
	}
	if !incl {
		return some
	}
	for _, k := range c.Children {
		if kr := rows[k.ID]; kr != nil {
			some = true
			for l, v := range kr {
				excl[l] -= int64(v)
			}
		}
	}
	return some
}

// rankLabel returns "r" for the first location of a rank and "r.t" for
// thread t > 0.
func rankLabel(l *Location) string {
	if l.Rank == 0 {
		return strconv.Itoa(l.Group.Rank)
	}
	return strconv.Itoa(l.Group.Rank) + "." + strconv.Itoa(l.Rank)
}

// compareRanks orders rank labels "r" and "r.t" numerically.
func compareRanks(a, b string) int {
	ra, ta := splitRank(a)
	rb, tb := splitRank(b)
	return cmp.Or(cmp.Compare(ra, rb), cmp.Compare(ta, tb))
}

func splitRank(s string) (rank, thread int) {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			rank, _ = strconv.Atoi(s[:i])
			thread, _ = strconv.Atoi(s[i+1:])
			return rank, thread
		}
	}
	rank, _ = strconv.Atoi(s)
	return rank, 0
}

// formatValue prints a value the canonical way: integers without a
// fraction, other values in the shortest form that reads back exactly.
func formatValue(v float64, integer bool) string {
	if integer {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// CSV writes the canonical CSV of r: the header
// "metric,callpath,rank,value" and one RFC 4180 row per cell of
// [Report.Cells].
func (r *Report) CSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	cw := csv.NewWriter(bw)
	if err := cw.Write([]string{"metric", "callpath", "rank", "value"}); err != nil {
		return err
	}
	for _, c := range r.Cells() {
		if err := cw.Write([]string{c.Metric, c.Callpath, c.Rank, formatValue(c.Value, c.Integer)}); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}
