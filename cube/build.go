package cube

// This file holds helpers that build a Report with valid IDs and walk its
// trees. The Add* helpers number new objects after the ones already in
// the report; objects added to the trees by hand after the first
// AddCnode or AddLocation call are not taken into account (Validate
// reports the resulting ID clashes).

// AddMetric appends m as a child of parent (a root if parent is nil),
// assigns m.ID = one more than the largest metric ID in the report (0
// for the first metric), sets m.Parent, and returns m.
func (r *Report) AddMetric(parent, m *Metric) *Metric {
	m.ID = 0
	for _, o := range r.AllMetrics() {
		m.ID = max(m.ID, o.ID+1)
	}
	m.Parent = parent
	if parent == nil {
		r.Metrics = append(r.Metrics, m)
	} else {
		parent.Children = append(parent.Children, m)
	}
	return m
}

// AddRegion appends g to Regions, sets g.ID to its index and returns g.
func (r *Report) AddRegion(g *Region) *Region {
	g.ID = len(r.Regions)
	r.Regions = append(r.Regions, g)
	return g
}

// AddCnode creates a call-tree node for region g below parent (a root if
// parent is nil), with the next free cnode ID, and returns it.
func (r *Report) AddCnode(parent *Cnode, g *Region) *Cnode {
	if r.nextCnode == 0 {
		r.nextCnode = r.countCnodes() + 1
	}
	c := &Cnode{ID: r.nextCnode - 1, Region: g, Parent: parent}
	r.nextCnode++
	if parent == nil {
		r.Cnodes = append(r.Cnodes, c)
	} else {
		parent.Children = append(parent.Children, c)
	}
	return c
}

// AddSystemNode creates a system-tree node below parent (a root if parent
// is nil) and returns it.
func (r *Report) AddSystemNode(parent *SystemNode, name, class string) *SystemNode {
	n := &SystemNode{ID: len(r.AllSystemNodes()), Name: name, Class: class, Parent: parent}
	if parent == nil {
		r.System = append(r.System, n)
	} else {
		parent.Children = append(parent.Children, n)
	}
	return n
}

// AddGroup creates a location group of type [GroupProcess] on node n and
// returns it.
func (r *Report) AddGroup(n *SystemNode, name string, rank int) *LocationGroup {
	g := &LocationGroup{ID: len(r.groups()), Name: name, Rank: rank, Type: GroupProcess, Node: n}
	n.Groups = append(n.Groups, g)
	return g
}

// AddLocation creates a location of type [LocationThread] in group g, with
// the next free location ID, and returns it.
func (r *Report) AddLocation(g *LocationGroup, name string, rank int) *Location {
	if r.nextLoc == 0 {
		r.nextLoc = len(r.Locations()) + 1
	}
	l := &Location{ID: r.nextLoc - 1, Name: name, Rank: rank, Type: LocationThread, Group: g}
	r.nextLoc++
	g.Locations = append(g.Locations, l)
	return l
}

// AllMetrics returns every metric in document (depth-first pre-) order.
func (r *Report) AllMetrics() []*Metric {
	var out []*Metric
	var walk func([]*Metric)
	walk = func(ms []*Metric) {
		for _, m := range ms {
			out = append(out, m)
			walk(m.Children)
		}
	}
	walk(r.Metrics)
	return out
}

// AllCnodes returns every cnode in document (depth-first pre-) order.
func (r *Report) AllCnodes() []*Cnode {
	out := make([]*Cnode, 0, r.countCnodes())
	stack := make([]*Cnode, 0, 64)
	for i := len(r.Cnodes) - 1; i >= 0; i-- {
		stack = append(stack, r.Cnodes[i])
	}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		out = append(out, c)
		for i := len(c.Children) - 1; i >= 0; i-- {
			stack = append(stack, c.Children[i])
		}
	}
	return out
}

func (r *Report) countCnodes() int {
	n := 0
	stack := append([]*Cnode(nil), r.Cnodes...)
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = append(stack[:len(stack)-1], c.Children...)
		n++
	}
	return n
}

// AllSystemNodes returns every system-tree node in document order.
func (r *Report) AllSystemNodes() []*SystemNode {
	var out []*SystemNode
	var walk func([]*SystemNode)
	walk = func(ns []*SystemNode) {
		for _, n := range ns {
			out = append(out, n)
			walk(n.Children)
		}
	}
	walk(r.System)
	return out
}

// groups returns every location group in document order.
func (r *Report) groups() []*LocationGroup {
	var out []*LocationGroup
	for _, n := range r.AllSystemNodes() {
		out = append(out, n.Groups...)
	}
	return out
}

// Locations returns every location in document order. Reports built with
// AddLocation (and all CubeW reports) have them in ID order too.
func (r *Report) Locations() []*Location {
	var out []*Location
	for _, g := range r.groups() {
		out = append(out, g.Locations...)
	}
	return out
}

// RowOrder returns the cnodes in the order in which rows of metric m are
// stored. For [Exclusive] metrics it is depth-first pre-order. For
// [Inclusive] (and [Simple]) metrics it is CubeLib's "wide" order: each
// root, then for every node first all its children, then the subtrees of
// those children in turn. For A→{B→{D→{F}}, C→{E}} that is A B C D F E.
// Derived metrics store no rows; RowOrder returns nil for them.
func (r *Report) RowOrder(m *Metric) []*Cnode {
	switch {
	case !m.Type.HasData():
		return nil
	case !m.Type.callTreeInclusive():
		return r.AllCnodes()
	}
	out := make([]*Cnode, 0, r.countCnodes())
	var wide func(c *Cnode)
	wide = func(c *Cnode) {
		out = append(out, c.Children...)
		for _, k := range c.Children {
			wide(k)
		}
	}
	for _, root := range r.Cnodes {
		out = append(out, root)
		wide(root)
	}
	return out
}

// CallPath returns the region names from the root to c joined by "/".
func (c *Cnode) CallPath() string {
	n := 0
	for p := c; p != nil; p = p.Parent {
		n++
	}
	names := make([]string, n)
	for p := c; p != nil; p = p.Parent {
		n--
		names[n] = p.Region.Name
	}
	size := len(names) - 1
	for _, s := range names {
		size += len(s)
	}
	b := make([]byte, 0, size)
	for i, s := range names {
		if i > 0 {
			b = append(b, '/')
		}
		b = append(b, s...)
	}
	return string(b)
}
