package unify

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"scout/localtrace/otf2"
)

// merger builds global definitions from the local definitions of the
// locations, added one after another. Global identifiers are given in
// order of first appearance: the first location's definitions in its file
// order (referenced definitions before the ones referring to them), then
// what the next location adds, and so on. Definitions are matched by
// content: strings by value, regions, attributes, parameters, system tree
// nodes and location groups by all their fields (references compared as
// global identifiers), groups by their fields and member lists, and
// communicators (and RMA windows) by name, group(s), parent and flags
// plus their position among the location's communicators of equal
// content, so that two communicators a location created alike stay two.
type merger struct {
	g otf2.Defs

	strs    map[string]uint32
	nodes   map[otf2.SystemTreeNode]uint32
	domains map[otf2.SystemTreeNodeDomain]bool
	lgs     map[otf2.LocationGroup]uint32
	locs    map[uint64]int // location → index in g.Locations
	locFile []string       // file defining each of g.Locations
	regions map[otf2.Region]uint32
	groups  map[string]uint32
	comms   map[commKey]uint32
	nComms  uint32 // Comm and InterComm share one identifier space
	attrs   map[otf2.Attribute]uint32
	params  map[otf2.Parameter]uint32
	wins    map[winKey]uint32
	dims    map[otf2.CartDimension]uint32
	topos   map[string]uint32 // by name, communicator and dimensions
	coords  map[[2]uint32]int // (topology, rank) → index in g.CartCoordinates

	clock      bool // some location had clock offsets
	begin, end uint64
}

type commKey struct {
	comm  otf2.Comm      // Self 0, references global
	inter otf2.InterComm // for an inter-communicator
	isInt bool
	nth   int // 0 for the location's first communicator of this content, 1 for the second, ...
}

type winKey struct {
	win otf2.RmaWin
	nth int
}

func newMerger() *merger {
	return &merger{strs: map[string]uint32{}, nodes: map[otf2.SystemTreeNode]uint32{},
		domains: map[otf2.SystemTreeNodeDomain]bool{}, lgs: map[otf2.LocationGroup]uint32{}, locs: map[uint64]int{},
		regions: map[otf2.Region]uint32{}, groups: map[string]uint32{}, comms: map[commKey]uint32{},
		attrs: map[otf2.Attribute]uint32{}, params: map[otf2.Parameter]uint32{}, wins: map[winKey]uint32{},
		dims: map[otf2.CartDimension]uint32{}, topos: map[string]uint32{}, coords: map[[2]uint32]int{}}
}

// local holds one location's local → global tables while it is merged.
type local struct {
	file                                                 string
	str, node, lg, region, group, comm, attr, param, win map[uint32]uint32
}

// ref maps local reference id of a kind through m; Undef32 stays
// undefined, an unknown id is an error.
func (l *local) ref(m map[uint32]uint32, kind string, id uint32, what string, args ...any) (uint32, error) {
	if id == otf2.Undef32 {
		return id, nil
	}
	if g, ok := m[id]; ok {
		return g, nil
	}
	return 0, fmt.Errorf("%s: %s refers to undefined %s %d", l.file, fmt.Sprintf(what, args...), kind, id)
}

func (l *local) s(id uint32, what string, args ...any) (uint32, error) {
	return l.ref(l.str, "string", id, what, args...)
}

// define records local id → global g in m, rejecting a second definition.
func (l *local) define(m map[uint32]uint32, kind string, id, g uint32) error {
	if _, dup := m[id]; dup {
		return fmt.Errorf("%s: %s %d is defined twice", l.file, kind, id)
	}
	m[id] = g
	return nil
}

// add merges the local definitions ld of location loc, read from file,
// and returns the location's mapping tables.
func (m *merger) add(file string, loc uint64, ld *otf2.LocalDefs) ([otf2.NumMappingTypes]*otf2.IDMap, error) {
	var maps [otf2.NumMappingTypes]*otf2.IDMap
	d := &ld.Defs
	if err := unsupported(file, d); err != nil {
		return maps, err
	}
	l := &local{file: file, str: map[uint32]uint32{}, node: map[uint32]uint32{}, lg: map[uint32]uint32{},
		region: map[uint32]uint32{}, group: map[uint32]uint32{}, comm: map[uint32]uint32{}, attr: map[uint32]uint32{},
		param: map[uint32]uint32{}, win: map[uint32]uint32{}}
	for _, s := range d.Strings {
		g := intern(m.strs, &m.g.Strings, s.Value, func(id uint32) otf2.String { return otf2.String{Self: id, Value: s.Value} })
		if err := l.define(l.str, "string", s.Self, g); err != nil {
			return maps, err
		}
	}
	steps := []func(*local, *otf2.Defs) error{m.systemTree, m.locationGroups, m.regionDefs, m.groupDefs,
		m.commDefs, m.attributes, m.parameters, m.rmaWins, m.cartDefs}
	for _, step := range steps {
		if err := step(l, d); err != nil {
			return maps, err
		}
	}
	if err := m.locations(l, loc, d, ld); err != nil {
		return maps, err
	}
	if n := len(ld.ClockOffsets); n > 0 {
		b, e := corrected(ld.ClockOffsets[0]), corrected(ld.ClockOffsets[n-1])
		if !m.clock {
			m.begin, m.end, m.clock = b, e, true
		}
		m.begin, m.end = min(m.begin, b), max(m.end, e)
	}
	for t, tab := range map[int]map[uint32]uint32{otf2.MapString: l.str, otf2.MapLocationGroup: l.lg,
		otf2.MapRegion: l.region, otf2.MapGroup: l.group, otf2.MapComm: l.comm, otf2.MapAttribute: l.attr,
		otf2.MapParameter: l.param, otf2.MapRmaWin: l.win} {
		maps[t] = idMap(tab)
	}
	return maps, nil
}

// intern returns the global identifier of the definition with content
// key, appending mk(identifier) to *list under the next identifier if the
// content is new.
func intern[K comparable, T any](ids map[K]uint32, list *[]T, key K, mk func(id uint32) T) uint32 {
	if g, ok := ids[key]; ok {
		return g
	}
	g := uint32(len(*list))
	ids[key] = g
	*list = append(*list, mk(g))
	return g
}

// corrected is the global time of a clock offset's measurement point.
func corrected(o otf2.ClockOffset) uint64 { return o.Time + uint64(o.Offset) }

// unsupported rejects the local definitions the merger cannot unify.
func unsupported(file string, d *otf2.Defs) error {
	for _, k := range []struct {
		n    int
		what string
	}{{len(d.Callpaths), "Callpath"}, {len(d.MetricMembers), "MetricMember"}, {len(d.MetricClasses), "MetricClass"},
		{len(d.MetricInstances), "MetricInstance"}} {
		if k.n > 0 {
			return fmt.Errorf("%s: %d %s definitions, which unification does not support", file, k.n, k.what)
		}
	}
	if len(d.Other) > 0 {
		return fmt.Errorf("%s: definition record of type %d, which unification does not support", file, d.Other[0].Type)
	}
	return nil
}

// resolver resolves definitions that refer to others of their kind
// (parents) in dependency order, detecting cycles.
type resolver struct {
	state []uint8 // 0 new, 1 in progress, 2 done
	fn    func(i int) error
	name  func(i int) string // for the error message of a cycle
}

func (r *resolver) do(i int) error {
	switch r.state[i] {
	case 1:
		return fmt.Errorf("the parent references of %s form a cycle", r.name(i))
	case 2:
		return nil
	}
	r.state[i] = 1
	if err := r.fn(i); err != nil {
		return err
	}
	r.state[i] = 2
	return nil
}

// byLocalID indexes definitions by their local identifier.
func byLocalID[T any](l *local, kind string, defs []T, self func(*T) uint32) (map[uint32]int, error) {
	idx := make(map[uint32]int, len(defs))
	for i := range defs {
		id := self(&defs[i])
		if _, dup := idx[id]; dup {
			return nil, fmt.Errorf("%s: %s %d is defined twice", l.file, kind, id)
		}
		idx[id] = i
	}
	return idx, nil
}

func (m *merger) systemTree(l *local, d *otf2.Defs) error {
	idx, err := byLocalID(l, "system tree node", d.SystemTreeNodes, func(n *otf2.SystemTreeNode) uint32 { return n.Self })
	if err != nil {
		return err
	}
	r := &resolver{state: make([]uint8, len(d.SystemTreeNodes)),
		name: func(i int) string { return fmt.Sprintf("%s: system tree node %d", l.file, d.SystemTreeNodes[i].Self) }}
	r.fn = func(i int) error {
		n := d.SystemTreeNodes[i]
		k := otf2.SystemTreeNode{Parent: otf2.Undef32}
		if n.Parent != otf2.Undef32 {
			p, ok := idx[n.Parent]
			if !ok {
				return fmt.Errorf("%s: system tree node %d refers to undefined parent %d", l.file, n.Self, n.Parent)
			}
			if err := r.do(p); err != nil {
				return err
			}
			k.Parent = l.node[n.Parent]
		}
		var err error
		if k.Name, err = l.s(n.Name, "system tree node %d", n.Self); err != nil {
			return err
		}
		if k.Class, err = l.s(n.Class, "system tree node %d (class)", n.Self); err != nil {
			return err
		}
		g := intern(m.nodes, &m.g.SystemTreeNodes, k, func(id uint32) otf2.SystemTreeNode { k.Self = id; return k })
		l.node[n.Self] = g
		return nil
	}
	for i := range d.SystemTreeNodes {
		if err := r.do(i); err != nil {
			return err
		}
	}
	for _, x := range d.NodeDomains {
		g, err := l.ref(l.node, "system tree node", x.Node, "a system tree node domain")
		if err != nil {
			return err
		}
		k := otf2.SystemTreeNodeDomain{Node: g, Domain: x.Domain}
		if !m.domains[k] {
			m.domains[k] = true
			m.g.NodeDomains = append(m.g.NodeDomains, k)
		}
	}
	return nil
}

func (m *merger) locationGroups(l *local, d *otf2.Defs) error {
	idx, err := byLocalID(l, "location group", d.LocationGroups, func(g *otf2.LocationGroup) uint32 { return g.Self })
	if err != nil {
		return err
	}
	r := &resolver{state: make([]uint8, len(d.LocationGroups)),
		name: func(i int) string { return fmt.Sprintf("%s: location group %d", l.file, d.LocationGroups[i].Self) }}
	r.fn = func(i int) error {
		lg := d.LocationGroups[i]
		k := otf2.LocationGroup{Type: lg.Type, Creator: otf2.Undef32}
		if lg.Creator != otf2.Undef32 {
			c, ok := idx[lg.Creator]
			if !ok {
				return fmt.Errorf("%s: location group %d refers to undefined creating location group %d", l.file, lg.Self, lg.Creator)
			}
			if err := r.do(c); err != nil {
				return err
			}
			k.Creator = l.lg[lg.Creator]
		}
		var err error
		if k.Name, err = l.s(lg.Name, "location group %d", lg.Self); err != nil {
			return err
		}
		if k.Parent, err = l.ref(l.node, "system tree node", lg.Parent, "location group %d", lg.Self); err != nil {
			return err
		}
		g := intern(m.lgs, &m.g.LocationGroups, k, func(id uint32) otf2.LocationGroup { k.Self = id; return k })
		l.lg[lg.Self] = g
		return nil
	}
	for i := range d.LocationGroups {
		if err := r.do(i); err != nil {
			return err
		}
	}
	return nil
}

// locations merges the Location definitions; the file of location loc
// must define loc. Location identifiers are global already.
func (m *merger) locations(l *local, loc uint64, d *otf2.Defs, ld *otf2.LocalDefs) error {
	own := false
	for _, x := range d.Locations {
		k := otf2.Location{Self: x.Self, Type: x.Type, NumEvents: x.NumEvents}
		var err error
		if k.Name, err = l.s(x.Name, "location %d", x.Self); err != nil {
			return err
		}
		if k.Group, err = l.ref(l.lg, "location group", x.Group, "location %d", x.Self); err != nil {
			return err
		}
		own = own || x.Self == loc
		if i, ok := m.locs[x.Self]; ok {
			if m.g.Locations[i] != k {
				return fmt.Errorf("%s: location %d differs from its definition in %s", l.file, x.Self, m.locFile[i])
			}
			continue
		}
		m.locs[x.Self] = len(m.g.Locations)
		m.locFile = append(m.locFile, l.file)
		m.g.Locations = append(m.g.Locations, k)
	}
	if !own {
		hint := ""
		for _, mp := range ld.Maps {
			if mp != nil {
				hint = " (it holds mapping tables only: the archive was unified before and has lost its global definition file)"
				break
			}
		}
		return fmt.Errorf("%s does not define its location %d%s", l.file, loc, hint)
	}
	return nil
}

func (m *merger) regionDefs(l *local, d *otf2.Defs) error {
	for _, r := range d.Regions {
		k := r
		k.Self = 0
		for _, f := range []struct {
			p    *uint32
			what string
		}{{&k.Name, "name"}, {&k.Description, "description"}, {&k.File, "source file"}, {&k.Canonical, "canonical name"}} {
			var err error
			if *f.p, err = l.s(*f.p, "region %d (%s)", r.Self, f.what); err != nil {
				return err
			}
		}
		g := intern(m.regions, &m.g.Regions, k, func(id uint32) otf2.Region { k.Self = id; return k })
		if err := l.define(l.region, "region", r.Self, g); err != nil {
			return err
		}
	}
	return nil
}

// commLocationsLast is 0 for COMM_LOCATIONS groups and 1 for others.
func commLocationsLast(t uint8) int {
	if t == otf2.GroupTypeCommLocations {
		return 0
	}
	return 1
}

// Group types whose members are identifiers.
const (
	groupTypeLocations = 1
	groupTypeRegions   = 2
	groupTypeMetric    = 3
)

// groupDefs merges the groups, the COMM_LOCATIONS groups first (the
// COMM_GROUP groups of a paradigm are defined relative to them).
func (m *merger) groupDefs(l *local, d *otf2.Defs) error {
	var key []byte
	groups := slices.Clone(d.Groups)
	slices.SortStableFunc(groups, func(a, b otf2.Group) int {
		return cmp.Compare(commLocationsLast(a.Type), commLocationsLast(b.Type))
	})
	for _, gr := range groups {
		name, err := l.s(gr.Name, "group %d", gr.Self)
		if err != nil {
			return err
		}
		members := gr.Members
		switch gr.Type {
		case groupTypeRegions:
			members = make([]uint64, len(gr.Members))
			for i, r := range gr.Members {
				g, ok := l.region[uint32(r)]
				if r > otf2.Undef32 || !ok {
					return fmt.Errorf("%s: group %d has undefined region %d as member", l.file, gr.Self, r)
				}
				members[i] = uint64(g)
			}
		case groupTypeMetric:
			return fmt.Errorf("%s: group %d is a metric group, which unification does not support", l.file, gr.Self)
		}
		// groups of (COMM_)LOCATIONS list global location ids, COMM_GROUPs world ranks
		key = binary.AppendUvarint(key[:0], uint64(name))
		key = append(key, gr.TypePre12, gr.Type, gr.Paradigm)
		key = binary.AppendUvarint(key, uint64(gr.Flags))
		key = binary.AppendUvarint(key, uint64(len(members)))
		for _, x := range members {
			key = binary.AppendUvarint(key, x)
		}
		g := intern(m.groups, &m.g.Groups, string(key), func(id uint32) otf2.Group {
			return otf2.Group{Self: id, Name: name, TypePre12: gr.TypePre12, Members: members, Type: gr.Type,
				Paradigm: gr.Paradigm, Flags: gr.Flags}
		})
		if err := l.define(l.group, "group", gr.Self, g); err != nil {
			return err
		}
	}
	return nil
}

// commDefs merges communicators and inter-communicators (one identifier
// space), parents before children: in order of depth in the parent
// relation, then in file order, so equal communicators are told apart
// by the order the location defined them in.
func (m *merger) commDefs(l *local, d *otf2.Defs) error {
	n := len(d.Comms) + len(d.InterComms)
	self := func(i int) uint32 {
		if i < len(d.Comms) {
			return d.Comms[i].Self
		}
		return d.InterComms[i-len(d.Comms)].Self
	}
	parent := func(i int) uint32 {
		if i < len(d.Comms) {
			return d.Comms[i].Parent
		}
		return d.InterComms[i-len(d.Comms)].Common
	}
	idx := make(map[uint32]int, n)
	for i := range n {
		if _, dup := idx[self(i)]; dup {
			return fmt.Errorf("%s: communicator %d is defined twice", l.file, self(i))
		}
		idx[self(i)] = i
	}
	depth := make([]int, n)
	r := &resolver{state: make([]uint8, n),
		name: func(i int) string { return fmt.Sprintf("%s: communicator %d", l.file, self(i)) }}
	r.fn = func(i int) error {
		p := parent(i)
		if p == otf2.Undef32 {
			return nil
		}
		j, ok := idx[p]
		if !ok {
			return fmt.Errorf("%s: communicator %d refers to undefined parent communicator %d", l.file, self(i), p)
		}
		if err := r.do(j); err != nil {
			return err
		}
		depth[i] = depth[j] + 1
		return nil
	}
	order := make([]int, n)
	for i := range n {
		if err := r.do(i); err != nil {
			return err
		}
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(depth[a], depth[b]) })
	seen := map[commKey]int{}
	for _, i := range order {
		k, err := m.commKey(l, d, i)
		if err != nil {
			return err
		}
		k.nth = seen[k]
		seen[k]++
		g, ok := m.comms[k]
		if !ok {
			g = m.nComms
			m.nComms++
			m.comms[k] = g
			if k.isInt {
				c := k.inter
				c.Self = g
				m.g.InterComms = append(m.g.InterComms, c)
			} else {
				c := k.comm
				c.Self = g
				m.g.Comms = append(m.g.Comms, c)
			}
		}
		l.comm[self(i)] = g
	}
	return nil
}

// commKey is the content of communicator i (nth 0), with references
// mapped; its parent is mapped already.
func (m *merger) commKey(l *local, d *otf2.Defs, i int) (commKey, error) {
	var err error
	if i < len(d.Comms) {
		c := d.Comms[i]
		k := otf2.Comm{Parent: otf2.Undef32, Flags: c.Flags}
		if k.Name, err = l.s(c.Name, "communicator %d", c.Self); err != nil {
			return commKey{}, err
		}
		if k.Group, err = l.ref(l.group, "group", c.Group, "communicator %d", c.Self); err != nil {
			return commKey{}, err
		}
		if c.Parent != otf2.Undef32 {
			k.Parent = l.comm[c.Parent]
		}
		return commKey{comm: k}, nil
	}
	c := d.InterComms[i-len(d.Comms)]
	k := otf2.InterComm{Common: otf2.Undef32, Flags: c.Flags}
	if k.Name, err = l.s(c.Name, "inter-communicator %d", c.Self); err != nil {
		return commKey{}, err
	}
	if k.GroupA, err = l.ref(l.group, "group", c.GroupA, "inter-communicator %d", c.Self); err != nil {
		return commKey{}, err
	}
	if k.GroupB, err = l.ref(l.group, "group", c.GroupB, "inter-communicator %d", c.Self); err != nil {
		return commKey{}, err
	}
	if c.Common != otf2.Undef32 {
		k.Common = l.comm[c.Common]
	}
	return commKey{inter: k, isInt: true}, nil
}

func (m *merger) attributes(l *local, d *otf2.Defs) error {
	for _, a := range d.Attributes {
		k := otf2.Attribute{Type: a.Type}
		var err error
		if k.Name, err = l.s(a.Name, "attribute %d", a.Self); err != nil {
			return err
		}
		if k.Description, err = l.s(a.Description, "attribute %d (description)", a.Self); err != nil {
			return err
		}
		g := intern(m.attrs, &m.g.Attributes, k, func(id uint32) otf2.Attribute { k.Self = id; return k })
		if err := l.define(l.attr, "attribute", a.Self, g); err != nil {
			return err
		}
	}
	return nil
}

func (m *merger) parameters(l *local, d *otf2.Defs) error {
	for _, p := range d.Parameters {
		k := otf2.Parameter{Type: p.Type}
		var err error
		if k.Name, err = l.s(p.Name, "parameter %d", p.Self); err != nil {
			return err
		}
		g := intern(m.params, &m.g.Parameters, k, func(id uint32) otf2.Parameter { k.Self = id; return k })
		if err := l.define(l.param, "parameter", p.Self, g); err != nil {
			return err
		}
	}
	return nil
}

func (m *merger) rmaWins(l *local, d *otf2.Defs) error {
	seen := map[winKey]int{}
	for _, w := range d.RmaWins {
		k := winKey{win: otf2.RmaWin{Flags: w.Flags}}
		var err error
		if k.win.Name, err = l.s(w.Name, "RMA window %d", w.Self); err != nil {
			return err
		}
		if k.win.Comm, err = l.ref(l.comm, "communicator", w.Comm, "RMA window %d", w.Self); err != nil {
			return err
		}
		k.nth = seen[k]
		seen[k]++
		g := intern(m.wins, &m.g.RmaWins, k, func(id uint32) otf2.RmaWin { c := k.win; c.Self = id; return c })
		if err := l.define(l.win, "RMA window", w.Self, g); err != nil {
			return err
		}
	}
	return nil
}

// cartDefs merges Cartesian topologies: dimensions by name, size and
// periodicity, topologies by name, communicator and dimensions;
// coordinates are kept once per (topology, rank), and two locations
// placing one rank differently are an error.
func (m *merger) cartDefs(l *local, d *otf2.Defs) error {
	dims := map[uint32]uint32{}
	for _, cd := range d.CartDimensions {
		k := otf2.CartDimension{Size: cd.Size, Periodic: cd.Periodic}
		var err error
		if k.Name, err = l.s(cd.Name, "Cartesian dimension %d", cd.Self); err != nil {
			return err
		}
		g := intern(m.dims, &m.g.CartDimensions, k, func(id uint32) otf2.CartDimension { k.Self = id; return k })
		if err := l.define(dims, "Cartesian dimension", cd.Self, g); err != nil {
			return err
		}
	}
	topos := map[uint32]uint32{}
	for _, t := range d.CartTopologies {
		k := otf2.CartTopology{Dims: make([]uint32, len(t.Dims))}
		var err error
		if k.Name, err = l.s(t.Name, "Cartesian topology %d", t.Self); err != nil {
			return err
		}
		if k.Comm, err = l.ref(l.comm, "communicator", t.Comm, "Cartesian topology %d", t.Self); err != nil {
			return err
		}
		for i, dim := range t.Dims {
			if k.Dims[i], err = l.ref(dims, "Cartesian dimension", dim, "Cartesian topology %d", t.Self); err != nil {
				return err
			}
		}
		key := fmt.Sprint(k.Name, k.Comm, k.Dims)
		g := intern(m.topos, &m.g.CartTopologies, key, func(id uint32) otf2.CartTopology { k.Self = id; return k })
		if err := l.define(topos, "Cartesian topology", t.Self, g); err != nil {
			return err
		}
	}
	for _, c := range d.CartCoordinates {
		top, err := l.ref(topos, "Cartesian topology", c.Topology, "the coordinates of rank %d", c.Rank)
		if err != nil {
			return err
		}
		if top == otf2.Undef32 {
			return fmt.Errorf("%s: coordinates of rank %d without a topology", l.file, c.Rank)
		}
		k := [2]uint32{top, c.Rank}
		if i, ok := m.coords[k]; ok {
			if prev := m.g.CartCoordinates[i].Coords; !slices.Equal(prev, c.Coords) {
				return fmt.Errorf("%s: rank %d is at %v in Cartesian topology %d, another location placed it at %v", l.file, c.Rank, c.Coords, top, prev)
			}
			continue
		}
		m.coords[k] = len(m.g.CartCoordinates)
		m.g.CartCoordinates = append(m.g.CartCoordinates, otf2.CartCoordinate{Topology: top, Rank: c.Rank, Coords: slices.Clone(c.Coords)})
	}
	return nil
}

// global returns the merged definitions with ClockProperties of the given
// timer resolution: the time from the earliest to the latest clock
// synchronisation point (first and last ClockOffset of each location,
// in global time), or offset and length 0 if no location has offsets.
// Locations come in identifier order.
func (m *merger) global(resolution uint64) *otf2.Defs {
	d := m.g
	d.HasClock = true
	d.Clock = otf2.ClockProperties{TimerResolution: resolution, Realtime: otf2.Undef64}
	if m.clock {
		d.Clock.GlobalOffset, d.Clock.TraceLength = m.begin, m.end-m.begin
	}
	d.Groups = slices.Clone(m.g.Groups) // written in slice order: COMM_LOCATIONS groups first
	slices.SortStableFunc(d.Groups, func(a, b otf2.Group) int {
		return cmp.Compare(commLocationsLast(a.Type), commLocationsLast(b.Type))
	})
	d.Locations = slices.Clone(m.g.Locations)
	slices.SortFunc(d.Locations, func(a, b otf2.Location) int { return cmp.Compare(a.Self, b.Self) })
	return &d
}

// idMap turns a local → global table into a mapping table as Score-P
// writes them: none for the identity, sparse (the pairs that move) when
// that is smaller than dense (one entry per local id up to the largest).
func idMap(tab map[uint32]uint32) *otf2.IDMap {
	var moved []uint32
	var top uint32
	for l, g := range tab {
		top = max(top, l)
		if l != g {
			moved = append(moved, l)
		}
	}
	if len(moved) == 0 {
		return nil
	}
	slices.Sort(moved)
	if 2*uint64(len(moved)) < uint64(top)+1 {
		pairs := make([]uint64, 0, 2*len(moved))
		for _, l := range moved {
			pairs = append(pairs, uint64(l), uint64(tab[l]))
		}
		return otf2.NewSparseIDMap(pairs)
	}
	m := &otf2.IDMap{Dense: make([]uint64, top+1)}
	for i := range m.Dense {
		m.Dense[i] = uint64(i)
	}
	for l, g := range tab {
		m.Dense[l] = uint64(g)
	}
	return m
}
