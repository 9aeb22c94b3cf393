package unify

import (
	"encoding/binary"
	"fmt"
)

// AppendBinary appends t's nodes (region, parent+1 as uvarints, in id
// order) to b; DecodeCallTree reads them back.
func (t *CallTree) AppendBinary(b []byte) ([]byte, error) {
	b = binary.AppendUvarint(b, uint64(len(t.Nodes)))
	for _, n := range t.Nodes {
		b = binary.AppendUvarint(b, uint64(n.Region))
		b = binary.AppendUvarint(b, uint64(n.Parent+1)) // None+1 == 0
	}
	return b, nil
}

// DecodeCallTree reads a call tree written by AppendBinary.
func DecodeCallTree(b []byte) (*CallTree, error) {
	next := func() (uint64, error) {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return 0, fmt.Errorf("unify: truncated or corrupt call tree")
		}
		b = b[k:]
		return v, nil
	}
	n, err := next()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(b))/2 {
		return nil, fmt.Errorf("unify: corrupt call tree (%d nodes in %d bytes)", n, len(b))
	}
	t := &CallTree{Nodes: make([]Node, 0, n)}
	for i := range n {
		region, err := next()
		if err != nil {
			return nil, err
		}
		p1, err := next()
		if err != nil {
			return nil, err
		}
		if region > uint64(None) || p1 > i {
			return nil, fmt.Errorf("unify: corrupt call tree (node %d: region %d, parent %d)", i, region, int64(p1)-1)
		}
		parent := uint32(p1) - 1
		id := uint32(len(t.Nodes))
		t.Nodes = append(t.Nodes, Node{Region: uint32(region), Parent: parent})
		if parent == None {
			t.Roots = append(t.Roots, id)
		} else {
			t.Nodes[parent].Children = append(t.Nodes[parent].Children, id)
		}
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("unify: %d bytes after the call tree", len(b))
	}
	return t, nil
}

// Messenger is what Reduce needs of a communicator: point-to-point
// messages and a broadcast (an hpc.Comm, or the MPI world).
type Messenger interface {
	Rank() int
	Size() int
	Send(dest, tag int, data []byte) error
	Recv(src, tag int) ([]byte, error)
	Bcast(root int, data []byte) ([]byte, error)
}

// treeTag is the message tag of the call-tree reduction.
const treeTag = 1 << 20

// Reduce unifies the call trees of all members of c: each passes the
// merged tree of its own locations, and every member gets the global
// tree. The trees are merged pairwise in a binomial tree towards rank 0
// (in rank order, so the ids equal those of merging them one after
// another), and the result is broadcast. No rank ever holds more than
// two trees.
func Reduce(c Messenger, local *CallTree) (*CallTree, error) {
	me, n := c.Rank(), c.Size()
	t := local
	for step := 1; step < n; step *= 2 {
		if me%(2*step) != 0 {
			b, err := t.AppendBinary(nil)
			if err != nil {
				return nil, err
			}
			if err := c.Send(me-step, treeTag, b); err != nil {
				return nil, fmt.Errorf("unify: sending call tree to rank %d: %w", me-step, err)
			}
			break
		}
		if me+step < n {
			b, err := c.Recv(me+step, treeTag)
			if err != nil {
				return nil, fmt.Errorf("unify: receiving call tree from rank %d: %w", me+step, err)
			}
			o, err := DecodeCallTree(b)
			if err != nil {
				return nil, fmt.Errorf("call tree from rank %d: %w", me+step, err)
			}
			if t == local {
				t = t.clone() // do not modify the caller's tree
			}
			t.Merge(o)
		}
	}
	var b []byte
	if me == 0 {
		var err error
		if b, err = t.AppendBinary(nil); err != nil {
			return nil, err
		}
	}
	b, err := c.Bcast(0, b)
	if err != nil {
		return nil, fmt.Errorf("unify: broadcasting the call tree: %w", err)
	}
	return DecodeCallTree(b)
}

func (t *CallTree) clone() *CallTree {
	c := &CallTree{Nodes: make([]Node, len(t.Nodes)), Roots: append([]uint32(nil), t.Roots...)}
	for i, n := range t.Nodes {
		c.Nodes[i] = Node{Region: n.Region, Parent: n.Parent, Children: append([]uint32(nil), n.Children...)}
	}
	return c
}
