package replay

import "scout/localtrace/otf2"

// Cart is a Cartesian topology over an MPI communicator, as the trace
// defines it (OTF2 CartTopology, its CartDimensions and the
// CartCoordinates of its ranks).
type Cart struct {
	Name     string
	Dims     []int  // the size of each dimension
	Periodic []bool // whether each dimension is periodic
	coords   [][]int
	at       map[int]int // row-major position → communicator rank
}

// Coords returns the coordinates of communicator rank r (nil when the
// trace defines none).
func (c *Cart) Coords(r int) []int {
	if r < 0 || r >= len(c.coords) {
		return nil
	}
	return c.coords[r]
}

// RankAt returns the communicator rank at the given coordinates, or -1
// when no rank sits there (or they are outside the grid).
func (c *Cart) RankAt(coords ...int) int {
	p, ok := c.position(coords)
	if !ok {
		return -1
	}
	if r, ok := c.at[p]; ok {
		return r
	}
	return -1
}

// position is the row-major index of coordinates (the last dimension
// varying fastest).
func (c *Cart) position(coords []int) (int, bool) {
	if len(coords) != len(c.Dims) {
		return 0, false
	}
	p := 0
	for k, x := range coords {
		if x < 0 || x >= c.Dims[k] {
			return 0, false
		}
		p = p*c.Dims[k] + x
	}
	return p, true
}

// maxGridSize bounds the number of positions of a topology kept (the
// definitions of a damaged trace may claim anything).
const maxGridSize = 1 << 40

// CartTopologies returns the Cartesian topologies of defs that lie over
// MPI communicators (of a group of world ranks), by communicator: the
// first one defined over each. Topologies over other communicators
// (Score-P's "Process x Thread" over its locations, say) are left out,
// and so are those whose dimensions are not all defined or make more
// than 2^40 positions. A coordinate that does not fit its topology (of
// a rank beyond the communicator, outside a dimension, or on a position
// or rank already placed) is ignored.
func CartTopologies(defs *otf2.Defs) map[uint32]*Cart {
	if len(defs.CartTopologies) == 0 {
		return nil
	}
	dims := make(map[uint32]*otf2.CartDimension, len(defs.CartDimensions))
	for i := range defs.CartDimensions {
		d := &defs.CartDimensions[i]
		if _, ok := dims[d.Self]; !ok {
			dims[d.Self] = d
		}
	}
	byTopo := map[uint32]*Cart{}
	out := map[uint32]*Cart{}
topologies:
	for _, t := range defs.CartTopologies {
		if _, ok := out[t.Comm]; ok || len(t.Dims) == 0 {
			continue
		}
		comm, ok := defs.Comm(t.Comm)
		if !ok {
			continue
		}
		g, ok := defs.Group(comm.Group)
		if !ok || g.Paradigm != otf2.ParadigmMPI || g.Type != otf2.GroupTypeCommGroup {
			continue
		}
		c := &Cart{Name: defs.Str(t.Name), coords: make([][]int, len(g.Members)), at: map[int]int{}}
		size := 1
		for _, id := range t.Dims {
			d, ok := dims[id]
			if !ok || d.Size == 0 || size > maxGridSize/int(d.Size) {
				continue topologies
			}
			size *= int(d.Size)
			c.Dims = append(c.Dims, int(d.Size))
			c.Periodic = append(c.Periodic, d.Periodic != 0)
		}
		out[t.Comm], byTopo[t.Self] = c, c
	}
	for _, k := range defs.CartCoordinates {
		c, ok := byTopo[k.Topology]
		if !ok || int64(k.Rank) >= int64(len(c.coords)) || c.coords[k.Rank] != nil {
			continue
		}
		xs := make([]int, len(k.Coords))
		for i, x := range k.Coords {
			xs[i] = int(x)
		}
		p, ok := c.position(xs)
		if _, taken := c.at[p]; !ok || taken {
			continue
		}
		c.coords[k.Rank], c.at[p] = xs, int(k.Rank)
	}
	return out
}
