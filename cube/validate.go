package cube

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Validate checks that r can be written as a report that CubeLib reads
// correctly, and returns an error naming the first violation found:
//   - at least one metric, region, cnode, system-tree node and location;
//   - metric IDs unique and >= 0, unique non-empty unique names, a
//     supported scalar data type for metrics that store data, no
//     MINDOUBLE/MAXDOUBLE data type for Inclusive metrics;
//   - Regions[i].ID == i; cnode IDs dense 0..C-1, every cnode's Region
//     one of Regions;
//   - system-tree nodes with a class, groups with >= 1 location, location
//     IDs dense 0..L-1, ranks >= 0, known group and location types;
//   - fewer than 2^32 values per metric (cnodes × locations);
//   - Parent and Group/Node back-pointers consistent with the trees;
//   - topology dimensions of size >= 1, coordinates of existing
//     entities with one position per dimension, inside the grid;
//   - misc member names that do not clash with anchor.xml or metric
//     members;
//   - Values keyed by data metrics, with one row per cnode and one value
//     per location in non-nil rows, in the field matching the data type.
func (r *Report) Validate() error {
	if err := r.validateDefs(); err != nil {
		return err
	}
	return r.checkValues()
}

// validateDefs is Validate without the check of Values.
func (r *Report) validateDefs() error {
	if len(r.Metrics) == 0 || len(r.Regions) == 0 || len(r.Cnodes) == 0 || len(r.System) == 0 || len(r.Locations()) == 0 {
		return errors.New("cube: a report needs at least one metric, region, cnode, system-tree node and location")
	}
	for _, check := range []func() error{r.checkMetrics, r.checkProgram, r.checkSystem, r.checkTopologies, r.checkMisc} {
		if err := check(); err != nil {
			return err
		}
	}
	if n := uint64(r.countCnodes()) * uint64(len(r.Locations())); n >= 1<<32 {
		return fmt.Errorf("cube: %d cnodes × %d locations = %d values per metric, CUBE4 allows fewer than 2^32", r.countCnodes(), len(r.Locations()), n)
	}
	return nil
}

func (r *Report) checkMetrics() error {
	ids := map[int]bool{}
	names := map[string]bool{}
	var walk func(parent *Metric, ms []*Metric) error
	walk = func(parent *Metric, ms []*Metric) error {
		for _, m := range ms {
			switch {
			case m == nil:
				return errors.New("cube: nil metric")
			case m.Parent != parent:
				return fmt.Errorf("cube: metric %q: Parent does not match the metric tree", m.UniqName)
			case m.ID < 0 || ids[m.ID]:
				return fmt.Errorf("cube: metric %q: ID %d is negative or used twice", m.UniqName, m.ID)
			case m.UniqName == "" || names[m.UniqName]:
				return fmt.Errorf("cube: metric ID %d: unique name %q is empty or used twice", m.ID, m.UniqName)
			case m.Type.HasData() && m.DataType.Size() == 0:
				return fmt.Errorf("cube: metric %q: unsupported data type %q", m.UniqName, m.DataType)
			case m.Type == "":
				return fmt.Errorf("cube: metric %q: no metric type", m.UniqName)
			case m.Type.callTreeInclusive() && m.DataType.isMinMax():
				return fmt.Errorf("cube: metric %q: data type %s needs an EXCLUSIVE metric", m.UniqName, m.DataType)
			}
			ids[m.ID], names[m.UniqName] = true, true
			if err := walk(m, m.Children); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(nil, r.Metrics)
}

func (r *Report) checkProgram() error {
	for i, g := range r.Regions {
		if g == nil || g.ID != i {
			return fmt.Errorf("cube: Regions[%d] is nil or has another ID", i)
		}
	}
	all := r.AllCnodes()
	seen := make([]bool, len(all))
	for _, c := range all {
		switch {
		case c.ID < 0 || c.ID >= len(all) || seen[c.ID]:
			return fmt.Errorf("cube: cnode ID %d is out of range [0,%d) or used twice", c.ID, len(all))
		case c.Region == nil || c.Region.ID < 0 || c.Region.ID >= len(r.Regions) || r.Regions[c.Region.ID] != c.Region:
			return fmt.Errorf("cube: cnode %d: region is not one of Report.Regions", c.ID)
		}
		seen[c.ID] = true
		for _, k := range c.Children {
			if k.Parent != c {
				return fmt.Errorf("cube: cnode %d: Parent does not match the call tree", k.ID)
			}
		}
	}
	for _, c := range r.Cnodes {
		if c.Parent != nil {
			return fmt.Errorf("cube: root cnode %d has a Parent", c.ID)
		}
	}
	return nil
}

func (r *Report) checkSystem() error {
	nlocs := len(r.Locations())
	seen := make([]bool, nlocs)
	var walk func(parent *SystemNode, ns []*SystemNode) error
	walk = func(parent *SystemNode, ns []*SystemNode) error {
		for _, n := range ns {
			if n.Parent != parent || n.Class == "" {
				return fmt.Errorf("cube: system-tree node %q: empty class or Parent not matching the tree", n.Name)
			}
			for _, g := range n.Groups {
				if err := checkGroup(n, g, seen); err != nil {
					return err
				}
			}
			if err := walk(n, n.Children); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(nil, r.System)
}

func checkGroup(n *SystemNode, g *LocationGroup, seen []bool) error {
	switch {
	case g.Node != n:
		return fmt.Errorf("cube: location group %q: Node does not match the system tree", g.Name)
	case g.Rank < 0 || len(g.Locations) == 0:
		return fmt.Errorf("cube: location group %q: negative rank or no locations", g.Name)
	case g.Type != GroupProcess && g.Type != GroupMetrics && g.Type != GroupAccelerator:
		return fmt.Errorf("cube: location group %q: unknown type %q", g.Name, g.Type)
	}
	for _, l := range g.Locations {
		switch {
		case l.Group != g:
			return fmt.Errorf("cube: location %d: Group does not match the system tree", l.ID)
		case l.ID < 0 || l.ID >= len(seen) || seen[l.ID]:
			return fmt.Errorf("cube: location %d: ID out of range [0,%d) or used twice", l.ID, len(seen))
		case l.Rank < 0:
			return fmt.Errorf("cube: location %d: negative rank", l.ID)
		case l.Type != LocationThread && l.Type != LocationGPU && l.Type != LocationAccelerator && l.Type != LocationMetric:
			return fmt.Errorf("cube: location %d: unknown type %q", l.ID, l.Type)
		}
		seen[l.ID] = true
	}
	return nil
}

func (r *Report) checkTopologies() error {
	limit := map[CoordKind]int{
		CoordLocation: len(r.Locations()),
		CoordGroup:    len(r.groups()),
		CoordNode:     len(r.AllSystemNodes()),
	}
	for i, t := range r.Topologies {
		for _, d := range t.Dims {
			if d.Size < 1 {
				return fmt.Errorf("cube: topology %d (%q): dimension %q has size %d", i, t.Name, d.Name, d.Size)
			}
		}
		for _, c := range t.Coords {
			n, ok := limit[c.Kind]
			switch {
			case !ok:
				return fmt.Errorf("cube: topology %d (%q): unknown coordinate kind %q", i, t.Name, c.Kind)
			case c.ID < 0 || c.ID >= n:
				return fmt.Errorf("cube: topology %d (%q): %s %d does not exist", i, t.Name, c.Kind, c.ID)
			case len(c.Pos) != len(t.Dims):
				return fmt.Errorf("cube: topology %d (%q): coordinate of %s %d has %d positions, want %d", i, t.Name, c.Kind, c.ID, len(c.Pos), len(t.Dims))
			}
			for k, p := range c.Pos {
				if p < 0 || p >= t.Dims[k].Size {
					return fmt.Errorf("cube: topology %d (%q): coordinate of %s %d is outside dimension %d", i, t.Name, c.Kind, c.ID, k)
				}
			}
		}
	}
	return nil
}

func (r *Report) checkMisc() error {
	seen := map[string]bool{}
	for _, f := range r.Misc {
		if f.Name == "" || len(f.Name) >= 100 || seen[f.Name] || isReservedMember(f.Name) || strings.ContainsRune(f.Name, 0) {
			return fmt.Errorf("cube: misc file %q: empty, too long, duplicate or reserved name", f.Name)
		}
		seen[f.Name] = true
	}
	return nil
}

// isReservedMember reports whether name is anchor.xml or looks like a
// metric's data or index member.
func isReservedMember(name string) bool {
	if name == anchorName {
		return true
	}
	base, ok := strings.CutSuffix(name, ".data")
	if !ok {
		base, ok = strings.CutSuffix(name, ".index")
	}
	base = strings.TrimPrefix(base, "ghost_")
	_, err := strconv.Atoi(base)
	return ok && err == nil
}

func (r *Report) checkValues() error {
	if len(r.Values) == 0 {
		return nil
	}
	byID := map[int]*Metric{}
	for _, m := range r.AllMetrics() {
		byID[m.ID] = m
	}
	nc, nl := r.countCnodes(), len(r.Locations())
	for id, s := range r.Values {
		m := byID[id]
		if m == nil || !m.Type.HasData() || s == nil {
			return fmt.Errorf("cube: Values[%d]: no such data metric, or nil", id)
		}
		if err := s.check(m, nc, nl); err != nil {
			return err
		}
	}
	return nil
}

func (s *Severity) check(m *Metric, ncnodes, nlocs int) error {
	n, rows := len(s.Uint), len(s.Float)
	if m.DataType.IsFloat() {
		n, rows = rows, n
	}
	if rows != 0 || (n != 0 && n != ncnodes) {
		return fmt.Errorf("cube: values of metric %q: want %d rows in Severity.%s and none in the other field", m.UniqName, ncnodes, s.field(m))
	}
	for c := 0; c < n; c++ {
		if l := s.rowLen(m, c); l != 0 && l != nlocs {
			return fmt.Errorf("cube: values of metric %q, cnode %d: %d values, want %d", m.UniqName, c, l, nlocs)
		}
	}
	return nil
}

func (s *Severity) field(m *Metric) string {
	if m.DataType.IsFloat() {
		return "Float"
	}
	return "Uint"
}

func (s *Severity) rowLen(m *Metric, c int) int {
	if m.DataType.IsFloat() {
		return len(s.Float[c])
	}
	return len(s.Uint[c])
}
