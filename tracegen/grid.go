package tracegen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Cartesian process grids and the communicators the grid kinds use.
//
// A grid has 2 or 3 dimensions, is not periodic, and numbers its ranks
// row-major (the last dimension varies fastest), as MPI_Cart_create
// without reordering does. The communicators are made once, after
// MPI_Comm_size, by every rank (see commSetup), and freed before
// MPI_Finalize, so that the definitions do not grow with the iterations.

// dimsCreate returns d grid sizes whose product is n, in non-increasing
// order and as close to each other as possible, as MPI_Dims_create does:
// the lexicographically smallest such list.
func dimsCreate(n, d int) []int {
	dims := make([]int, d)
	var fill func(m, k, maxd int) bool // fills dims[d-k:], each at most maxd
	fill = func(m, k, maxd int) bool {
		if k == 1 {
			dims[d-1] = m
			return m <= maxd
		}
		for a := 1; a <= min(maxd, m); a++ {
			if m%a != 0 || pow(a, k) < m { // a is the largest of the k sizes
				continue
			}
			dims[d-k] = a
			if fill(m/a, k-1, a) {
				return true
			}
		}
		return false
	}
	fill(n, d, n)
	return dims
}

func pow(a, k int) int {
	p := 1
	for range k {
		p *= a
	}
	return p
}

// gridName is "4x2" for dims [4 2].
func gridName(dims []int) string {
	s := make([]string, len(dims))
	for i, d := range dims {
		s[i] = strconv.Itoa(d)
	}
	return strings.Join(s, "x")
}

// gridDims returns the grid of a grid kind's phase on n ranks: p.Dims,
// checked, or dimsCreate's choice.
func gridDims(p Phase, n int) ([]int, error) {
	d := p.Kind.gridDims()
	if len(p.Dims) == 0 {
		return dimsCreate(n, d), nil
	}
	if len(p.Dims) != d {
		return nil, fmt.Errorf("%v needs a %d-D grid, dims %s has %d dimensions", p.Kind, d, gridName(p.Dims), len(p.Dims))
	}
	size := 1
	for _, x := range p.Dims {
		if x < 1 || x > maxRanks {
			return nil, fmt.Errorf("grid %s: sizes must be 1 to %d", gridName(p.Dims), maxRanks)
		}
		size *= x
		if size > maxRanks {
			break
		}
	}
	if size != n {
		return nil, fmt.Errorf("grid %s has %d ranks, the scenario %d", gridName(p.Dims), size, n)
	}
	return slices.Clone(p.Dims), nil
}

// neighbours appends to nb the neighbours of rank r in the grid dims, in
// the order of MPI_Cart_shift: per dimension the lower, then the upper
// neighbour, where they exist.
func neighbours(dims []int, r int, nb []int) []int {
	stride := 1
	for k := len(dims) - 1; k >= 0; k-- {
		stride *= dims[k]
	}
	for _, d := range dims {
		stride /= d
		x := r / stride % d
		if x > 0 {
			nb = append(nb, r-stride)
		}
		if x < d-1 {
			nb = append(nb, r+stride)
		}
	}
	return nb
}

// coords returns the grid coordinates of rank r.
func coords(dims []int, r int) []uint32 {
	c := make([]uint32, len(dims))
	for k := len(dims) - 1; k >= 0; k-- {
		c[k] = uint32(r % dims[k])
		r /= dims[k]
	}
	return c
}

// commSetup is a communicator (or a set of them) that every rank makes
// once, after MPI_Comm_size:
//
//	Cartesian: Enter(MPI_Dims_create) s, Leave s+g,
//	           Enter(MPI_Cart_create)+MpiCollectiveBegin s+2g, CommCreate s+3g,
//	           MpiCollectiveEnd(CREATE_HANDLE, MPI_COMM_WORLD) s+4g, Leave s+5g; next item s+6g
//	split:     Enter(MPI_Comm_split)+MpiCollectiveBegin s, CommCreate(the rank's row) s+g,
//	           MpiCollectiveEnd(CREATE_HANDLE, MPI_COMM_WORLD) s+2g, Leave s+3g; next item s+4g
//
// and frees before MPI_Finalize, in reverse order:
//
//	Enter(MPI_Comm_free)+MpiCollectiveBegin s, CommDestroy s+g,
//	MpiCollectiveEnd(DESTROY_HANDLE, the communicator) s+2g, Leave s+3g; next s+4g
//
// All ranks enter at the same time: there are no waits.
type commSetup struct {
	split bool  // MPI_Comm_split into the rows of the grid, else MPI_Cart_create
	dims  []int // the grid
	comm  uint32
	group uint32 // split: the global group of row 0; rows follow
	topo  uint32 // Cartesian: the global topology id
}

// Setup durations (in gaps) and event counts.
const (
	cartGaps, cartEvents   = 6, 7
	splitGaps, splitEvents = 4, 5
	freeGaps, freeEvents   = 4, 5
)

// commOf is the global communicator rank r uses: the Cartesian one, or
// the one of its row.
func (c *commSetup) commOf(r int) uint32 {
	if c.split {
		return c.comm + uint32(r/c.dims[1])
	}
	return c.comm
}

// rows is the number of communicators: the grid's rows when split.
func (c *commSetup) rows() int {
	if c.split {
		return c.dims[0]
	}
	return 1
}

// gaps is the duration of the creating call(s) in gaps, with the gap
// after them.
func (c *commSetup) gaps() uint64 {
	if c.split {
		return splitGaps
	}
	return cartGaps
}

// events is the number of event records that create the communicator.
func (c *commSetup) events() uint64 {
	if c.split {
		return splitEvents
	}
	return cartEvents
}

// commFor returns the communicator setup of a grid kind's phase, adding
// a new one (global communicator, group and topology identifiers in
// order of first use) unless an earlier phase made the same.
func (g *gen) commFor(kind Kind, dims []int) *commSetup {
	split := kind == RowAllreduce
	for _, c := range g.setup {
		if c.split == split && slices.Equal(c.dims, dims) {
			return c
		}
	}
	c := &commSetup{split: split, dims: dims, comm: commSelf + 1}
	if n := len(g.setup); n > 0 {
		last := g.setup[n-1]
		c.comm = last.comm + uint32(last.rows())
	}
	c.group = groupSelf + 1
	for _, o := range g.setup {
		if o.split {
			c.group += uint32(o.rows())
		}
		if !o.split {
			c.topo++
		}
	}
	g.setup = append(g.setup, c)
	return c
}

// setupTimes returns the setup's duration and its events per rank.
func (g *gen) setupTimes() (ticks, events uint64) {
	for _, c := range g.setup {
		ticks += c.gaps() * g.gap
		events += c.events()
	}
	return
}

// freeTimes returns the duration of the MPI_Comm_free calls and their
// events per rank.
func (g *gen) freeTimes() (ticks, events uint64) {
	n := uint64(len(g.setup))
	return n * freeGaps * g.gap, n * freeEvents
}
