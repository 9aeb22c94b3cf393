package combine

import (
	"fmt"
	"math"
	"sort"

	"scout/cube"
	"scout/localtrace/otf2"
)

// cubeMirrors are the documentation mirrors that metric URLs of the form
// "@mirror@scalasca_patterns.html#NAME" resolve against in the Cube GUI.
var cubeMirrors = []string{
	"http://apps.fz-juelich.de/scalasca/releases/scalasca/2.6/help/",
	"http://perftools.pages.jsc.fz-juelich.de/cicd/scalasca/tags/latest/patterns/",
}

// paradigmNames and roleNames are Cube's names of the OTF2 paradigms and
// region roles, by OTF2 enum value.
var (
	paradigmNames = []string{"unknown", "user", "compiler", "openmp", "mpi", "cuda", "measurement", "pthread",
		"hmpp", "ompss", "hardware", "gaspi", "upc", "shmem", "winthread", "qtthread", "acethread", "tbbthread",
		"openacc", "opencl", "mtapi", "sampling", "none", "hip", "kokkos"}
	roleNames = []string{"unknown", "function", "wrapper", "loop", "code", "parallel", "sections", "section",
		"workshare", "single", "single sblock", "master", "critical", "critical sblock", "atomic", "barrier",
		"implicit barrier", "flush", "ordered", "ordered sblock", "task", "task create", "task wait", "one2all",
		"all2one", "all2all", "other collective", "file io", "point2point", "rma", "data transfer", "artificial",
		"thread create", "thread wait", "task untied", "allocate", "deallocate", "reallocate", "file io metadata"}
)

func enumName(names []string, v uint8) string {
	if int(v) < len(names) {
		return names[v]
	}
	return "unknown"
}

// Cube builds the CUBE4 report of an analysis: the full user-facing
// metric tree (see Derive) over the global call tree and the trace's
// system tree, with every value stored, so that the Cube GUI needs no
// post-processing step.
func (r *Report) Cube() (*cube.Report, error) {
	prof := r.Profile()
	d := Derive(prof)
	return r.cubeOf(prof, d)
}

func (r *Report) cubeOf(prof *Profile, d *Derived) (*cube.Report, error) {
	c := &cube.Report{
		Attrs:   []cube.Attr{{Key: "Creator", Value: "scout (Go)"}, {Key: "CUBE_CT_AGGR", Value: "SUM"}},
		Mirrors: cubeMirrors,
		Values:  map[int]*cube.Severity{},
	}
	// Regions: every defined region, in definition order.
	regions := make(map[uint32]*cube.Region, len(r.Defs.Regions))
	for _, reg := range r.Defs.Regions {
		name := r.Defs.Str(reg.Name)
		g := &cube.Region{Name: name, MangledName: r.Defs.Str(reg.Canonical), Descr: r.Defs.Str(reg.Description),
			Begin: -1, End: -1, Paradigm: enumName(paradigmNames, reg.Paradigm), Role: enumName(roleNames, reg.Role)}
		if reg.File != otf2.Undef32 {
			g.Mod = r.Defs.Str(reg.File)
		}
		if reg.Begin > 0 && reg.Begin != otf2.Undef32 {
			g.Begin = int(reg.Begin)
		}
		if reg.End > 0 && reg.End != otf2.Undef32 {
			g.End = int(reg.End)
		}
		if g.MangledName == "" {
			g.MangledName = name
		}
		regions[reg.Self] = c.AddRegion(g)
	}
	regionOf := func(id uint32) *cube.Region {
		if g, ok := regions[id]; ok {
			return g
		}
		g := c.AddRegion(&cube.Region{Name: fmt.Sprintf("region%d", id), MangledName: fmt.Sprintf("region%d", id),
			Begin: -1, End: -1, Paradigm: "unknown", Role: "unknown"})
		regions[id] = g
		return g
	}
	// Call tree in depth-first pre-order, so cnode ids follow document
	// order as CubeLib expects; rowOf maps our call paths to them.
	rowOf := make([]int, len(r.Tree.Nodes))
	var walk func(parent *cube.Cnode, n uint32)
	walk = func(parent *cube.Cnode, n uint32) {
		node := &r.Tree.Nodes[n]
		cn := c.AddCnode(parent, regionOf(node.Region))
		rowOf[n] = cn.ID
		for _, k := range node.Children {
			walk(cn, k)
		}
	}
	for _, root := range r.Tree.Roots {
		walk(nil, root)
	}
	// System tree; colOf maps the report's location index to the cube's.
	colOf, err := r.cubeSystem(c)
	if err != nil {
		return nil, err
	}
	if err := r.cubeTopologies(c, colOf); err != nil {
		return nil, err
	}
	// Metrics and values.
	nloc := len(colOf)
	byName := map[string]*cube.Metric{}
	for _, m := range d.Metrics {
		cm := &cube.Metric{UniqName: m.Unique, DispName: m.Display, DataType: cube.Float, Type: cube.Exclusive,
			Unit: m.Unit, Descr: m.Descr, URL: "@mirror@scalasca_patterns.html#" + m.Unique}
		if m.Integer {
			cm.DataType = cube.Uint64
		}
		c.AddMetric(byName[m.Parent], cm)
		byName[m.Unique] = cm
		sev := &cube.Severity{}
		rows := d.Values[m.Unique]
		if m.Integer {
			sev.Uint = make([][]uint64, len(rowOf))
		} else {
			sev.Float = make([][]float64, len(rowOf))
		}
		for cp, row := range rows {
			if row == nil {
				continue
			}
			if m.Integer {
				out := make([]uint64, nloc)
				for l, x := range row {
					if x < 0 || x != math.Trunc(x) {
						return nil, fmt.Errorf("combine: metric %s: count %v is not a non-negative integer", m.Unique, x)
					}
					out[colOf[l]] = uint64(x)
				}
				sev.Uint[rowOf[cp]] = out
			} else {
				out := make([]float64, nloc)
				for l, x := range row {
					out[colOf[l]] = x
				}
				sev.Float[rowOf[cp]] = out
			}
		}
		c.Values[cm.ID] = sev
	}
	return c, nil
}

// cubeSystem adds the system tree: the trace's system-tree nodes with
// their location groups (MPI ranks) and locations (threads). It returns
// the cube location id of each of the report's locations.
func (r *Report) cubeSystem(c *cube.Report) ([]int, error) {
	d := r.Defs
	index := map[uint64]int{} // location → report column
	for l, res := range r.Results {
		index[res.Location] = l
	}
	colOf := make([]int, len(r.Results))
	placed := 0
	kids := map[uint32][]int{}
	var roots []int
	for i, n := range d.SystemTreeNodes {
		if n.Parent == otf2.Undef32 {
			roots = append(roots, i)
		} else {
			kids[n.Parent] = append(kids[n.Parent], i)
		}
	}
	groupsOf := map[uint32][]int{}
	for i, g := range d.LocationGroups {
		groupsOf[g.Parent] = append(groupsOf[g.Parent], i)
	}
	locsOf := map[uint32][]int{}
	for i, l := range d.Locations {
		if _, ok := index[l.Self]; ok {
			locsOf[l.Group] = append(locsOf[l.Group], i)
		}
	}
	addGroups := func(node *cube.SystemNode, gs []int) {
		// Groups in rank order, locations in thread order.
		sort.SliceStable(gs, func(i, j int) bool {
			return r.groupRank(d.LocationGroups[gs[i]].Self, locsOf) < r.groupRank(d.LocationGroups[gs[j]].Self, locsOf)
		})
		for _, gi := range gs {
			g := d.LocationGroups[gi]
			ls := locsOf[g.Self]
			if len(ls) == 0 {
				continue
			}
			sort.SliceStable(ls, func(i, j int) bool {
				return r.Placements[d.Locations[ls[i]].Self].Thread < r.Placements[d.Locations[ls[j]].Self].Thread
			})
			rank := r.Placements[d.Locations[ls[0]].Self].Rank
			name := d.Str(g.Name)
			if name == "" {
				name = fmt.Sprintf("MPI Rank %d", rank)
			}
			cg := c.AddGroup(node, name, rank)
			for _, li := range ls {
				l := d.Locations[li]
				lname := d.Str(l.Name)
				if lname == "" {
					lname = fmt.Sprintf("Thread %d", r.Placements[l.Self].Thread)
				}
				cl := c.AddLocation(cg, lname, r.Placements[l.Self].Thread)
				colOf[index[l.Self]] = cl.ID
				placed++
			}
		}
	}
	var walk func(parent *cube.SystemNode, i int)
	walk = func(parent *cube.SystemNode, i int) {
		n := d.SystemTreeNodes[i]
		class := d.Str(n.Class)
		if class == "" {
			class = "node"
		}
		node := c.AddSystemNode(parent, d.Str(n.Name), class)
		if class == "machine" || class == "node" {
			node.Name = class + " " + node.Name
		}
		addGroups(node, groupsOf[n.Self])
		for _, k := range kids[n.Self] {
			walk(node, k)
		}
	}
	for _, i := range roots {
		walk(nil, i)
	}
	if placed != len(r.Results) {
		return nil, fmt.Errorf("combine: %d of %d locations are not in the trace's system tree", len(r.Results)-placed, len(r.Results))
	}
	return colOf, nil
}

// groupRank is the MPI rank of a location group's locations.
func (r *Report) groupRank(g uint32, locsOf map[uint32][]int) int {
	if ls := locsOf[g]; len(ls) > 0 {
		return r.Placements[r.Defs.Locations[ls[0]].Self].Rank
	}
	return math.MaxInt
}

// cubeTopologies adds the trace's Cartesian topologies (cartesians):
// for MPI grids the ranks' master threads, for Score-P's "Process x
// Thread" every thread.
func (r *Report) cubeTopologies(c *cube.Report, colOf []int) error {
	cs, err := cartesians(r.Defs, r.Placements)
	if err != nil {
		return err
	}
	col := map[uint64]int{} // location → cube location
	for l, res := range r.Results {
		col[res.Location] = colOf[l]
	}
	for _, t := range cs {
		ct := &cube.Cartesian{Name: t.name, Dims: t.dims}
		for _, cell := range t.cells {
			if loc, ok := col[cell.loc]; ok {
				ct.Coords = append(ct.Coords, cube.Coord{Kind: cube.CoordLocation, ID: loc, Pos: cell.pos})
			}
		}
		c.Topologies = append(c.Topologies, ct)
	}
	return nil
}
