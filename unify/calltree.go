// Package unify turns location-local identifiers into global ones: it
// merges the call trees that each location builds from its ENTER and
// LEAVE events into one global call tree and gives every location a
// mapping from its local call paths to the global ones. Before that,
// Definitions unifies the definitions of an archive written with local
// definitions only, as a measurement system writes it before its own
// unification step.
package unify

import (
	"fmt"
	"strings"

	"scout/localtrace"
)

// None marks the absent parent of a root call path.
const None = localtrace.None

// Node is one call path of a call tree.
type Node struct {
	Region   uint32   // global region id
	Parent   uint32   // parent node, or None
	Children []uint32 // child nodes in first-seen order
}

// CallTree is a call tree whose nodes are identified by their index.
// Roots are kept in first-seen order.
type CallTree struct {
	Nodes []Node
	Roots []uint32
	// wide finds the children of parents of many children, indexed
	// (parent, region) → child, for the parents in indexed.
	wide    map[uint64]uint32
	indexed map[uint32]bool
}

// fewKids is the number of children of a node that child scans; a node
// with more gets an index.
const fewKids = 8

func wideKey(parent, region uint32) uint64 { return uint64(parent)<<32 | uint64(region) }

// FromLocal builds a call tree from a location's call paths (parents
// precede their children in cps, as localtrace creates them).
func FromLocal(cps []localtrace.Callpath) *CallTree {
	t := &CallTree{Nodes: make([]Node, len(cps))}
	for i, c := range cps {
		t.Nodes[i] = Node{Region: c.Region, Parent: c.Parent}
		if c.Parent == None {
			t.Roots = append(t.Roots, uint32(i))
		} else {
			p := &t.Nodes[c.Parent]
			p.Children = append(p.Children, uint32(i))
		}
	}
	return t
}

func (t *CallTree) children(parent uint32) []uint32 {
	if parent == None {
		return t.Roots
	}
	return t.Nodes[parent].Children
}

// child returns parent's child for region, or None.
func (t *CallTree) child(parent, region uint32) uint32 {
	kids := t.children(parent)
	if len(kids) <= fewKids {
		for _, c := range kids {
			if t.Nodes[c].Region == region {
				return c
			}
		}
		return None
	}
	if !t.indexed[parent] {
		if t.wide == nil {
			t.wide, t.indexed = map[uint64]uint32{}, map[uint32]bool{}
		}
		for _, c := range kids {
			t.wide[wideKey(parent, t.Nodes[c].Region)] = c
		}
		t.indexed[parent] = true
	}
	if c, ok := t.wide[wideKey(parent, region)]; ok {
		return c
	}
	return None
}

func (t *CallTree) addChild(parent, region uint32) uint32 {
	id := uint32(len(t.Nodes))
	t.Nodes = append(t.Nodes, Node{Region: region, Parent: parent})
	if parent == None {
		t.Roots = append(t.Roots, id)
	} else {
		t.Nodes[parent].Children = append(t.Nodes[parent].Children, id)
	}
	if t.indexed[parent] {
		t.wide[wideKey(parent, region)] = id
	}
	return id
}

// Merge adds the call paths of o that t lacks, numbering them after
// t's in the order of o's ids (o's parents precede their children, as
// in every tree built here). Merge is associative, so merging location
// trees pairwise in a reduction tree gives the same ids as merging them
// one after another; with location 0's tree first, its ids (the order
// in which its call paths were first entered) are kept.
func (t *CallTree) Merge(o *CallTree) {
	m := make([]uint32, len(o.Nodes))
	for i, n := range o.Nodes {
		p := None
		if n.Parent != None {
			p = m[n.Parent]
		}
		c := t.child(p, n.Region)
		if c == None {
			c = t.addChild(p, n.Region)
		}
		m[i] = c
	}
}

// MapLocal maps a location's call paths to the ids of t, which must
// contain them all (it is the union of all location trees).
func (t *CallTree) MapLocal(cps []localtrace.Callpath) ([]uint32, error) {
	m := make([]uint32, len(cps))
	for i, c := range cps {
		p := None
		if c.Parent != None {
			p = m[c.Parent]
		}
		g := t.child(p, c.Region)
		if g == None {
			return nil, fmt.Errorf("unify: call path %d (region %d) of a location is missing from the global call tree", i, c.Region)
		}
		m[i] = g
	}
	return m, nil
}

// Unify merges the call trees of all locations, in order, into one
// global tree and returns it with each location's mapping from local to
// global call-path ids. Ids are deterministic: location 0's call paths in
// the order it first entered them, then each further location's new
// ones in its order.
func Unify(locals [][]localtrace.Callpath) (*CallTree, [][]uint32, error) {
	g := &CallTree{}
	for _, l := range locals {
		g.Merge(FromLocal(l))
	}
	maps := make([][]uint32, len(locals))
	for i, l := range locals {
		m, err := g.MapLocal(l)
		if err != nil {
			return nil, nil, err
		}
		maps[i] = m
	}
	return g, maps, nil
}

// Path returns node n's path of region names joined by '/', using name
// to turn a region id into its name.
func (t *CallTree) Path(n uint32, name func(region uint32) string) string {
	var parts []string
	for ; n != None; n = t.Nodes[n].Parent {
		parts = append(parts, name(t.Nodes[n].Region))
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, "/")
}
