package cube

import (
	"strconv"
	"strings"
)

// This file parses the <system> section of anchor.xml: the system tree
// and the Cartesian topologies.

func (p *anchorParser) system(n *xnode) error {
	for _, k := range n.kids {
		switch k.name {
		case "systemtreenode":
			if err := p.systemNode(nil, k); err != nil {
				return err
			}
		case "topologies":
			for _, t := range k.kids {
				if t.name != "cart" {
					continue
				}
				c, err := p.cart(t)
				if err != nil {
					return err
				}
				p.r.Topologies = append(p.r.Topologies, c)
			}
		}
	}
	locs := p.r.Locations()
	seen := make([]bool, len(locs))
	for _, l := range locs {
		if l.ID < 0 || l.ID >= len(locs) || seen[l.ID] {
			return n.errorf("location ID %d out of range [0,%d) or used twice", l.ID, len(locs))
		}
		seen[l.ID] = true
	}
	if len(p.r.System) == 0 {
		return n.errorf("no system-tree node")
	}
	return nil
}

func (p *anchorParser) systemNode(parent *SystemNode, n *xnode) error {
	id, err := n.intAttr(nil, "Id", "id")
	if err != nil {
		return err
	}
	s := &SystemNode{ID: id, Parent: parent}
	s.Name, _ = n.childText("name")
	s.Descr, _ = n.childText("descr")
	var ok bool
	if s.Class, ok = n.childText("class"); !ok {
		return n.errorf("system-tree node %d has no <class>", id)
	}
	if parent == nil {
		p.r.System = append(p.r.System, s)
	} else {
		parent.Children = append(parent.Children, s)
	}
	for _, k := range n.kids {
		switch k.name {
		case "attr":
			s.Attrs = append(s.Attrs, p.attr(k))
		case "locationgroup":
			if err := p.group(s, k); err != nil {
				return err
			}
		case "systemtreenode":
			if err := p.systemNode(s, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// nameRankType reads the <name>, <rank> and <type> children that location
// groups and locations share.
func nameRankType(n *xnode) (name string, rank int, typ string, err error) {
	name, _ = n.childText("name")
	typ, _ = n.childText("type")
	r, ok := n.childText("rank")
	if !ok {
		return "", 0, "", n.errorf("no <rank>")
	}
	if rank, err = strconv.Atoi(r); err != nil || rank < 0 {
		return "", 0, "", n.errorf("rank %q is not a non-negative integer", r)
	}
	return name, rank, typ, nil
}

func (p *anchorParser) group(s *SystemNode, n *xnode) error {
	id, err := n.intAttr(nil, "Id", "id")
	if err != nil {
		return err
	}
	name, rank, typ, err := nameRankType(n)
	if err != nil {
		return err
	}
	g := &LocationGroup{ID: id, Name: name, Rank: rank, Type: GroupType(typ), Node: s}
	for _, k := range n.kids {
		switch k.name {
		case "attr":
			g.Attrs = append(g.Attrs, p.attr(k))
		case "location":
			l, err := p.location(g, k)
			if err != nil {
				return err
			}
			g.Locations = append(g.Locations, l)
		}
	}
	if len(g.Locations) == 0 {
		return n.errorf("location group %d has no locations", id)
	}
	s.Groups = append(s.Groups, g)
	return nil
}

func (p *anchorParser) location(g *LocationGroup, n *xnode) (*Location, error) {
	id, err := n.intAttr(nil, "Id", "id")
	if err != nil {
		return nil, err
	}
	name, rank, typ, err := nameRankType(n)
	if err != nil {
		return nil, err
	}
	l := &Location{ID: id, Name: name, Rank: rank, Type: LocationType(typ), Group: g}
	for _, k := range n.kids {
		if k.name == "attr" {
			l.Attrs = append(l.Attrs, p.attr(k))
		}
	}
	return l, nil
}

func (p *anchorParser) cart(n *xnode) (*Cartesian, error) {
	c := &Cartesian{}
	c.Name, _ = n.attr("name")
	ndims, err := n.intAttr(nil, "ndims")
	if err != nil {
		return nil, err
	}
	for _, k := range n.kids {
		switch k.name {
		case "dim":
			d := Dim{}
			d.Name, _ = k.attr("name")
			if d.Size, err = k.intAttr(nil, "size"); err != nil {
				return nil, err
			}
			per, _ := k.attr("periodic")
			d.Periodic = strings.EqualFold(per, "true")
			c.Dims = append(c.Dims, d)
		case "coord":
			co, err := coord(k)
			if err != nil {
				return nil, err
			}
			c.Coords = append(c.Coords, co)
		}
	}
	if len(c.Dims) != ndims {
		return nil, n.errorf("ndims=%d but %d <dim> elements", ndims, len(c.Dims))
	}
	for _, co := range c.Coords {
		if len(co.Pos) != ndims {
			return nil, n.errorf("coordinate of %s %d has %d positions, want %d", co.Kind, co.ID, len(co.Pos), ndims)
		}
	}
	return c, nil
}

func coord(n *xnode) (Coord, error) {
	var co Coord
	for _, kind := range []CoordKind{CoordLocation, CoordGroup, CoordNode} {
		if _, ok := n.attr(string(kind)); ok {
			co.Kind = kind
		}
	}
	if co.Kind == "" {
		return co, n.errorf("coordinate without locId, lgId or stnId")
	}
	var err error
	if co.ID, err = n.intAttr(nil, string(co.Kind)); err != nil {
		return co, err
	}
	for _, f := range strings.Fields(string(n.text)) {
		v, err := strconv.Atoi(f)
		if err != nil {
			return co, n.errorf("coordinate %q is not an integer", f)
		}
		co.Pos = append(co.Pos, v)
	}
	return co, nil
}
