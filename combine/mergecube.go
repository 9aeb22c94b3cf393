package combine

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"scout/cube"
)

// MergeCubes merges partial CUBE reports (for example one per node, each
// covering some of the locations) into one: metric trees, regions, call
// trees and system trees are united (metrics by unique name, regions by
// their definition, call paths by their regions from the root, system
// nodes by name and class, processes by rank), and every value is kept.
// A location (MPI rank and thread) present in two parts is an error.
// Stored values are written call-path exclusive; derived metrics keep
// their expressions. names label the parts in error messages.
func MergeCubes(parts []*cube.Report, names []string) (*cube.Report, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("combine: no reports to merge")
	}
	m := &cubeMerger{out: &cube.Report{Attrs: parts[0].Attrs, Mirrors: parts[0].Mirrors, Values: map[int]*cube.Severity{}},
		metrics: map[string]*cube.Metric{}, regions: map[regionKey]*cube.Region{}, cnodes: map[cnodeKey]*cube.Cnode{},
		nodes: map[nodeKey]*cube.SystemNode{}, groups: map[int]*cube.LocationGroup{}, locs: map[[2]int]string{},
		misc: map[string]bool{}}
	maps := make([]partMap, len(parts))
	for i, p := range parts {
		pm, err := m.addDefs(p, names[i])
		if err != nil {
			return nil, err
		}
		maps[i] = pm
	}
	// Values: allocated once the definitions are complete.
	ncn, nloc := len(m.out.AllCnodes()), len(m.out.Locations())
	for _, om := range m.out.AllMetrics() {
		if !om.Type.HasData() {
			continue
		}
		sev := &cube.Severity{}
		if om.DataType.IsFloat() {
			sev.Float = make([][]float64, ncn)
		} else {
			sev.Uint = make([][]uint64, ncn)
		}
		m.out.Values[om.ID] = sev
	}
	for i, p := range parts {
		if err := m.addValues(p, maps[i], names[i], nloc); err != nil {
			return nil, err
		}
	}
	return m.out, nil
}

type regionKey struct {
	name, mangled, mod, paradigm, role string
	begin, end                         int
}

type cnodeKey struct {
	parent *cube.Cnode
	region *cube.Region
}

type nodeKey struct {
	parent      *cube.SystemNode
	name, class string
}

type cubeMerger struct {
	out     *cube.Report
	metrics map[string]*cube.Metric
	regions map[regionKey]*cube.Region
	cnodes  map[cnodeKey]*cube.Cnode
	nodes   map[nodeKey]*cube.SystemNode
	groups  map[int]*cube.LocationGroup
	locs    map[[2]int]string // (rank, thread) → part that holds it
	misc    map[string]bool
}

// partMap maps one part's ids to the merged report's.
type partMap struct {
	metric map[int]*cube.Metric // by part metric ID (unique, not dense)
	cnode  []*cube.Cnode        // by part cnode ID
	loc    []int                // by part location ID
}

func (m *cubeMerger) addDefs(p *cube.Report, name string) (partMap, error) {
	pm := partMap{metric: map[int]*cube.Metric{}}
	for _, mt := range p.AllMetrics() {
		om, ok := m.metrics[mt.UniqName]
		if !ok {
			var parent *cube.Metric
			if mt.Parent != nil {
				parent = m.metrics[mt.Parent.UniqName]
			}
			c := *mt
			c.Parent, c.Children = nil, nil
			if c.Type.HasData() {
				c.Type = cube.Exclusive
			}
			om = m.out.AddMetric(parent, &c)
			m.metrics[mt.UniqName] = om
		} else if om.DataType.IsFloat() != mt.DataType.IsFloat() || om.Type.HasData() != mt.Type.HasData() {
			return pm, fmt.Errorf("combine: %s: metric %s has type %s/%s, an earlier report %s/%s", name, mt.UniqName,
				mt.DataType, mt.Type, om.DataType, om.Type)
		}
		pm.metric[mt.ID] = om
	}
	for _, mf := range p.Misc {
		if !m.misc[mf.Name] {
			m.misc[mf.Name] = true
			m.out.Misc = append(m.out.Misc, mf)
		}
	}
	all := p.AllCnodes()
	pm.cnode = make([]*cube.Cnode, len(all))
	var walk func(parent *cube.Cnode, c *cube.Cnode)
	walk = func(parent *cube.Cnode, c *cube.Cnode) {
		g := c.Region
		rk := regionKey{g.Name, g.MangledName, g.Mod, g.Paradigm, g.Role, g.Begin, g.End}
		og, ok := m.regions[rk]
		if !ok {
			cp := *g
			og = m.out.AddRegion(&cp)
			m.regions[rk] = og
		}
		oc, ok := m.cnodes[cnodeKey{parent, og}]
		if !ok {
			oc = m.out.AddCnode(parent, og)
			oc.Line, oc.Mod, oc.Params, oc.Attrs = c.Line, c.Mod, c.Params, c.Attrs
			m.cnodes[cnodeKey{parent, og}] = oc
		}
		pm.cnode[c.ID] = oc
		for _, k := range c.Children {
			walk(oc, k)
		}
	}
	for _, root := range p.Cnodes {
		walk(nil, root)
	}
	// Regions no call path uses are kept too.
	for _, g := range p.Regions {
		rk := regionKey{g.Name, g.MangledName, g.Mod, g.Paradigm, g.Role, g.Begin, g.End}
		if _, ok := m.regions[rk]; !ok {
			cp := *g
			m.regions[rk] = m.out.AddRegion(&cp)
		}
	}
	pm.loc = make([]int, len(p.Locations()))
	var sys func(parent *cube.SystemNode, n *cube.SystemNode) error
	sys = func(parent *cube.SystemNode, n *cube.SystemNode) error {
		k := nodeKey{parent, n.Name, n.Class}
		on, ok := m.nodes[k]
		if !ok {
			on = m.out.AddSystemNode(parent, n.Name, n.Class)
			on.Descr, on.Attrs = n.Descr, n.Attrs
			m.nodes[k] = on
		}
		for _, g := range n.Groups {
			og, ok := m.groups[g.Rank]
			if !ok {
				og = m.out.AddGroup(on, g.Name, g.Rank)
				og.Type, og.Attrs = g.Type, g.Attrs
				m.groups[g.Rank] = og
			} else if og.Node != on {
				return fmt.Errorf("combine: %s: rank %d is on %s, in an earlier report on %s", name, g.Rank, n.Name, og.Node.Name)
			}
			for _, l := range g.Locations {
				key := [2]int{g.Rank, l.Rank}
				if other, dup := m.locs[key]; dup {
					label := strconv.Itoa(g.Rank)
					if l.Rank > 0 {
						label += "." + strconv.Itoa(l.Rank)
					}
					return fmt.Errorf("combine: location %s (rank %d, thread %d) is in both %s and %s", label, g.Rank, l.Rank, other, name)
				}
				m.locs[key] = name
				ol := m.out.AddLocation(og, l.Name, l.Rank)
				ol.Type, ol.Attrs = l.Type, l.Attrs
				pm.loc[l.ID] = ol.ID
			}
		}
		for _, k := range n.Children {
			if err := sys(on, k); err != nil {
				return err
			}
		}
		return nil
	}
	for _, n := range p.System {
		if err := sys(nil, n); err != nil {
			return pm, err
		}
	}
	seen := map[*cube.Cartesian]bool{}
	for _, t := range p.Topologies {
		// Parts split by process carry the same topologies, each with the
		// coordinates of its own locations: merge them, the k-th topology
		// of a name and shape in a part into the k-th of the result.
		ct := m.topology(t, seen)
		seen[ct] = true
		for _, co := range t.Coords {
			if co.Kind == cube.CoordLocation && co.ID >= 0 && co.ID < len(pm.loc) {
				ct.Coords = append(ct.Coords, cube.Coord{Kind: co.Kind, ID: pm.loc[co.ID], Pos: co.Pos})
			}
		}
	}
	return pm, nil
}

// topology returns the first merged topology with t's name and
// dimensions that the part has not used yet, adding an empty one if there
// is none.
func (m *cubeMerger) topology(t *cube.Cartesian, used map[*cube.Cartesian]bool) *cube.Cartesian {
	for _, o := range m.out.Topologies {
		if !used[o] && o.Name == t.Name && slices.Equal(o.Dims, t.Dims) {
			return o
		}
	}
	ct := &cube.Cartesian{Name: t.Name, Dims: t.Dims}
	m.out.Topologies = append(m.out.Topologies, ct)
	return ct
}

// addValues adds a part's stored values, made call-path exclusive.
func (m *cubeMerger) addValues(p *cube.Report, pm partMap, name string, nloc int) error {
	for _, mt := range p.AllMetrics() {
		sev := p.Values[mt.ID]
		if sev == nil || !mt.Type.HasData() {
			continue
		}
		out := m.out.Values[pm.metric[mt.ID].ID]
		inclusive := mt.Type == cube.Inclusive || mt.Type == cube.Simple
		for _, c := range p.AllCnodes() {
			oc := pm.cnode[c.ID].ID
			if out.Float != nil {
				row := rowFloat(sev, c.ID)
				if row == nil {
					continue
				}
				for l, x := range row {
					if inclusive {
						for _, k := range c.Children {
							if kr := rowFloat(sev, k.ID); kr != nil {
								x -= kr[l]
							}
						}
					}
					if x == 0 {
						continue
					}
					if out.Float[oc] == nil {
						out.Float[oc] = make([]float64, nloc)
					}
					out.Float[oc][pm.loc[l]] += x
				}
				continue
			}
			row := rowUint(sev, c.ID)
			if row == nil {
				continue
			}
			for l, x := range row {
				if inclusive {
					for _, k := range c.Children {
						if kr := rowUint(sev, k.ID); kr != nil {
							if kr[l] > x {
								return fmt.Errorf("combine: %s: metric %s: inclusive value of %s below its callees'", name, mt.UniqName, c.Region.Name)
							}
							x -= kr[l]
						}
					}
				}
				if x == 0 {
					continue
				}
				if out.Uint[oc] == nil {
					out.Uint[oc] = make([]uint64, nloc)
				}
				out.Uint[oc][pm.loc[l]] += x
			}
		}
	}
	return nil
}

// rowFloat returns a float metric's row (float or integer storage).
func rowFloat(s *cube.Severity, id int) []float64 {
	if id < len(s.Float) {
		return s.Float[id]
	}
	if id < len(s.Uint) && s.Uint[id] != nil {
		r := make([]float64, len(s.Uint[id]))
		for i, v := range s.Uint[id] {
			r[i] = float64(v)
		}
		return r
	}
	return nil
}

// rowUint returns an integer metric's row.
func rowUint(s *cube.Severity, id int) []uint64 {
	if id < len(s.Uint) {
		return s.Uint[id]
	}
	if id < len(s.Float) && s.Float[id] != nil {
		r := make([]uint64, len(s.Float[id]))
		for i, v := range s.Float[id] {
			r[i] = uint64(math.Round(v))
		}
		return r
	}
	return nil
}
