package patterns_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/internal/tinytrace"
	"scout/localtrace/otf2"
	"scout/patterns"
)

// The wavefront refill tests replay hand-built sweeps over small grids
// of two or three dimensions (ranks numbered row-major, the last
// dimension varying fastest: on a d0×d1 grid rank r has the coordinates
// (r/d1, r%d1); dimension 0 runs from west to east, dimension 1 from
// north to south, dimension 2 from front to back).

// corner names the corners of a 2-D grid as the refill metrics do (bit
// 0 mirrors dimension 0, bit 1 dimension 1), octant the octant corners
// of a 3-D grid (bit 2 mirrors dimension 2).
var (
	corner = [4]string{"nw", "ne", "sw", "se"}
	octant = [8]string{"nwf", "nef", "swf", "sef", "nwb", "neb", "swb", "seb"}
)

// topology describes the Cartesian topology a test trace defines.
type topology struct {
	dims     []int
	periodic bool
	comm     uint32 // 0: MPI_COMM_WORLD; 1: a second communicator over all ranks
}

// withTopology returns defs with the topologies (and communicators 1
// and 2, each over all ranks) added, the first topology's dimensions
// first.
func withTopology(t *testing.T, d *otf2.Defs, topos ...*topology) *otf2.Defs {
	t.Helper()
	d.Comms = append(d.Comms, otf2.Comm{Self: 1, Name: 0, Group: 0, Parent: otf2.Undef32},
		otf2.Comm{Self: 2, Name: 0, Group: 0, Parent: otf2.Undef32})
	dim := uint32(0)
	for ti, topo := range topos {
		if topo == nil {
			continue
		}
		self := uint32(ti)
		var ids []uint32
		size := 1
		for _, n := range topo.dims {
			p := uint8(0)
			if topo.periodic {
				p = 1
			}
			d.CartDimensions = append(d.CartDimensions, otf2.CartDimension{Self: dim, Name: 0, Size: uint32(n), Periodic: p})
			ids = append(ids, dim)
			dim++
			size *= n
		}
		d.CartTopologies = append(d.CartTopologies, otf2.CartTopology{Self: self, Name: 0, Comm: topo.comm, Dims: ids})
		for r := range size {
			xs := make([]uint32, len(topo.dims))
			for k, x := len(topo.dims)-1, r; k >= 0; k-- {
				xs[k], x = uint32(x%topo.dims[k]), x/topo.dims[k]
			}
			d.CartCoordinates = append(d.CartCoordinates, otf2.CartCoordinate{Topology: self, Rank: uint32(r), Coords: xs})
		}
	}
	// through the encoder and decoder, which index the definitions
	var b bytes.Buffer
	if _, err := otf2.EncodeGlobalDefs(&b, d, 1<<20); err != nil {
		t.Fatal(err)
	}
	out, err := otf2.DecodeGlobalDefs(&b, "defs", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// analyzeGrid is analyze on a trace with the topologies topos (none, or
// nil: none).
func analyzeGrid(t *testing.T, progs [][]step, topos ...*topology) map[string]float64 {
	t.Helper()
	return analyzeDefs(t, func(d *otf2.Defs) *otf2.Defs { return withTopology(t, d, topos...) }, patterns.Register, progs...)
}

// grid is a test program over a grid of 2 or 3 dimensions: each rank's
// steps, added to phase by phase.
type grid struct {
	dims  []int
	comm  uint32
	progs [][]step
	req   []uint64 // the last request id of each rank
}

func newGrid(dims []int, comm uint32) *grid {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return &grid{dims: dims, comm: comm, progs: make([][]step, n), req: make([]uint64, n)}
}

func (g *grid) send(ms float64, dst int) step {
	return tinytrace.Raw(ms, otf2.EvMpiSend, uint64(dst), uint64(g.comm), 20, 4)
}

func (g *grid) recv(ms float64, src int) step {
	return tinytrace.Raw(ms, otf2.EvMpiRecv, uint64(src), uint64(g.comm), 20, 4)
}

// coords returns the coordinates of rank r, and rank the rank at
// coordinates xs (-1 outside the grid).
func (g *grid) coords(r int) []int {
	xs := make([]int, len(g.dims))
	for k := len(g.dims) - 1; k >= 0; k-- {
		xs[k], r = r%g.dims[k], r/g.dims[k]
	}
	return xs
}

func (g *grid) rank(xs []int) int {
	r := 0
	for k, x := range xs {
		if x < 0 || x >= g.dims[k] {
			return -1
		}
		r = r*g.dims[k] + x
	}
	return r
}

// mirror returns the coordinates xs mirrored so that corner k is the
// north-west(-front) corner (bit a of k mirrors dimension a): the place
// of a rank in a sweep from k, and the rank's coordinates at a place.
func (g *grid) mirror(k int, xs []int) []int {
	out := slices.Clone(xs)
	for a := range out {
		if k&(1<<a) != 0 {
			out[a] = g.dims[a] - 1 - out[a]
		}
	}
	return out
}

// The times of a step of a sweep (ms from the start of its
// anti-diagonal): per dimension of its grid, the MPI_Recv from the
// upstream neighbour (Enter, Leave, receive event) and the MPI_Send to
// the downstream one (Enter, Leave, send event; the sender is on the
// anti-diagonal before the receiver's).
var (
	recvSlots = map[int][][3]float64{2: {{0, 1.8, 1.7}, {1.9, 3, 2.9}}, 3: {{0, 1.8, 1.7}, {1.9, 2.9, 2.8}, {2.95, 3.9, 3.8}}}
	sendSlots = map[int][][3]float64{2: {{1, 2, 1.5}, {2, 3, 2.5}}, 3: {{1, 1.5, 1.2}, {2, 2.5, 2.2}, {3, 3.5, 3.2}}}
)

// sweep adds a sweep from corner k starting at t (lasting 10 ms per
// anti-diagonal): the rank at a place of anti-diagonal L (the sum of
// its coordinates) receives from each upstream neighbour it has, in
// the order of the dimensions, in the MPI_Recv slots of anti-diagonal
// L-1 (from t+10(L-1)), and sends to each downstream one in the MPI_Send
// slots of its own anti-diagonal. On a 2-D grid the first receive waits
// 1 ms, the second 0.1 ms (Late Sender); on a 3-D grid the third 0.05
// ms. It returns each rank's Late Sender time in ms.
func (g *grid) sweep(k int, t float64) []float64 {
	ls := make([]float64, len(g.progs))
	rs, ss := recvSlots[len(g.dims)], sendSlots[len(g.dims)]
	for r := range g.progs {
		at := g.mirror(k, g.coords(r))
		l := 0
		for _, x := range at {
			l += x
		}
		base, out := t+10*float64(l-1), t+10*float64(l)
		var s []step
		for a := range at {
			if at[a] == 0 {
				continue
			}
			from := slices.Clone(at)
			from[a]--
			sl := rs[a]
			s = append(s, call("MPI_Recv", base+sl[0], base+sl[1], g.recv(base+sl[2], g.rank(g.mirror(k, from))))...)
			ls[r] += ss[a][0] - sl[0]
		}
		for a := range at {
			if at[a] == g.dims[a]-1 {
				continue
			}
			to := slices.Clone(at)
			to[a]++
			sl := ss[a]
			s = append(s, call("MPI_Send", out+sl[0], out+sl[1], g.send(out+sl[2], g.rank(g.mirror(k, to))))...)
		}
		g.progs[r] = append(g.progs[r], s...)
	}
	return ls
}

// neighbours returns the neighbours of rank r, per dimension the lower
// then the upper one.
func (g *grid) neighbours(r int) []int {
	xs := g.coords(r)
	var nb []int
	for a := range xs {
		for _, d := range []int{-1, 1} {
			at := slices.Clone(xs)
			at[a] += d
			if n := g.rank(at); n >= 0 {
				nb = append(nb, n)
			}
		}
	}
	return nb
}

// halo adds a halo exchange starting at t (lasting 50 ms): rank r posts
// a receive from each neighbour, computes 0.5r ms, sends to each
// (MPI_Isend) and waits for all in MPI_Waitall; later ranks send late.
func (g *grid) halo(t float64) {
	for r := range g.progs {
		nb := g.neighbours(r)
		var s []step
		first := g.req[r] + 1
		for n := range nb {
			s = append(s, call("MPI_Irecv", t+0.01*float64(n), t+0.01*float64(n)+0.005, irecvRequest(t+0.01*float64(n)+0.001, first+uint64(n)))...)
		}
		x := t + 0.1 + 0.5*float64(r)
		s = append(s, call("work", t+0.1, x)...)
		for n, dst := range nb {
			at := x + 0.1*float64(n)
			s = append(s, call("MPI_Isend", at, at+0.05,
				tinytrace.Raw(at+0.02, otf2.EvMpiIsend, uint64(dst), uint64(g.comm), 20, 4, first+uint64(len(nb)+n)))...)
		}
		var inner []step
		for n, src := range nb {
			inner = append(inner, tinytrace.Raw(t+49+0.01*float64(n), otf2.EvMpiIrecv, uint64(src), uint64(g.comm), 20, 4, first+uint64(n)))
		}
		for n := range nb {
			inner = append(inner, isendComplete(t+49.5+0.01*float64(n), first+uint64(len(nb)+n)))
		}
		s = append(s, call("MPI_Waitall", x+0.1*float64(len(nb)), t+50, inner...)...)
		g.req[r] += 2 * uint64(len(nb))
		g.progs[r] = append(g.progs[r], s...)
	}
}

// programs returns the ranks' programs, ending at end ms.
func (g *grid) programs(end float64) [][]step {
	out := make([][]step, len(g.progs))
	for r, s := range g.progs {
		out[r] = program(end, s)
	}
	return out
}

// refills returns the refill cells a sequence of sweeps over a grid of
// dims dimensions gives: every sweep whose corner differs from the
// previous one's adds each rank's Late Sender time (ls, in ms) to its
// corner's metric.
func refills(dims int, corners []int, ls [][]float64) map[string]float64 {
	want := map[string]float64{}
	for s := 1; s < len(corners); s++ {
		if corners[s] == corners[s-1] {
			continue
		}
		name := corner[:]
		if dims == 3 {
			name = octant[:]
		}
		for r, v := range ls[s] {
			if v > 0 {
				want[fmt.Sprintf("mpi_latesender_refill_%s main/MPI_Recv %d", name[corners[s]], r)] += seconds(v)
			}
		}
	}
	return want
}

// refillNames are the refill metrics: of 2-D grids, then of 3-D ones.
var refillNames = func() []string {
	var out []string
	for _, k := range append(corner[:], octant[:]...) {
		out = append(out, "mpi_latesender_refill_"+k)
	}
	return out
}()

func TestRefill(t *testing.T) {
	tests := []struct {
		name    string
		dims    []int
		topo    *topology
		corners []int // sweeps; -1: a halo exchange
		comm    uint32
		// noRefill: the analysis finds none (else the closed form of
		// the sweeps, halo exchanges leaving the directions alone)
		noRefill bool
	}{
		{name: "2x2: first sweep none, repeats none, changes refill", dims: []int{2, 2}, corners: []int{0, 0, 3, 1, 1, 2, 0}},
		{name: "3x3: every corner after every other", dims: []int{3, 3}, corners: []int{0, 1, 0, 2, 0, 3, 1, 2, 1, 3, 2, 3, 3, 0}},
		{name: "4x2: one component changes", dims: []int{4, 2}, corners: []int{0, 2, 3, 1, 0}},
		{name: "2x3", dims: []int{2, 3}, corners: []int{3, 0, 2, 1}},
		{name: "3x3: halo exchanges leave the direction alone", dims: []int{3, 3}, corners: []int{-1, 0, -1, 0, 3, -1, -1, 3, 1}},
		{name: "2x2: halo exchanges", dims: []int{2, 2}, corners: []int{-1, -1, 1, -1, 1, 2}},
		{name: "3x3: halo exchanges only", dims: []int{3, 3}, corners: []int{-1, -1, -1}, noRefill: true},
		{name: "no topology", dims: []int{3, 3}, topo: &topology{}, corners: []int{0, 3, 1}, noRefill: true},
		{name: "periodic grid", dims: []int{3, 3}, topo: &topology{dims: []int{3, 3}, periodic: true}, corners: []int{0, 3, 1}, noRefill: true},
		{name: "3-D grid with a dimension of one rank", dims: []int{2, 2}, topo: &topology{dims: []int{2, 2, 1}}, corners: []int{0, 3, 1}, noRefill: true},
		{name: "4x1 grid", dims: []int{4, 1}, corners: []int{0, 3, 1}, noRefill: true},
		{name: "messages on another communicator", dims: []int{2, 2}, topo: &topology{dims: []int{2, 2}, comm: 1}, corners: []int{0, 3, 1}, noRefill: true},
		{name: "topology on the communicator of the sweeps", dims: []int{2, 2}, topo: &topology{dims: []int{2, 2}, comm: 1}, comm: 1, corners: []int{0, 3, 1}},
		// 3-D grids: the octant corners (bit 2: from the back)
		{name: "2x2x2: first sweep none, repeats none, changes refill", dims: []int{2, 2, 2}, corners: []int{0, 0, 7, 1, 1, 6, 2, 4, 0, 5, 3}},
		{name: "3x2x2: every octant after others", dims: []int{3, 2, 2}, corners: []int{0, 1, 2, 3, 4, 5, 6, 7, 0, 7, 6, 5, 4, 3, 2, 1, 0}},
		{name: "2x3x2: one component changes", dims: []int{2, 3, 2}, corners: []int{0, 4, 5, 1, 3, 7, 6, 2}},
		{name: "2x2x3: halo exchanges leave the direction alone", dims: []int{2, 2, 3}, corners: []int{-1, 0, -1, 0, 7, -1, -1, 7, 1}},
		{name: "2x2x2: halo exchanges", dims: []int{2, 2, 2}, corners: []int{-1, -1, 1, -1, 1, 6}},
		{name: "3x2x2: halo exchanges only", dims: []int{3, 2, 2}, corners: []int{-1, -1, -1}, noRefill: true},
		{name: "periodic 3-D grid", dims: []int{2, 2, 2}, topo: &topology{dims: []int{2, 2, 2}, periodic: true}, corners: []int{0, 7, 1}, noRefill: true},
		{name: "3-D topology on the communicator of the sweeps", dims: []int{2, 3, 2}, topo: &topology{dims: []int{2, 3, 2}, comm: 1}, comm: 1, corners: []int{2, 5, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newGrid(tc.dims, tc.comm)
			topo := tc.topo
			if topo == nil {
				topo = &topology{dims: tc.dims}
			} else if topo.dims == nil {
				topo = nil
			}
			var sweeps []int
			var ls [][]float64
			var total float64
			for s, k := range tc.corners {
				at := 100 * float64(s)
				if k < 0 {
					g.halo(at)
					continue
				}
				sweeps = append(sweeps, k)
				ls = append(ls, g.sweep(k, at))
				for _, v := range ls[len(ls)-1] {
					total += v
				}
			}
			got := analyzeGrid(t, g.programs(100*float64(len(tc.corners)+1)), topo)
			want := refills(len(tc.dims), sweeps, ls)
			if tc.noRefill {
				want = map[string]float64{}
			}
			if d := cmp.Diff(want, only(got, refillNames...), approx); d != "" {
				t.Errorf("refill (-want +got):\n%s", d)
			}
			// the sweeps (and halo exchanges) do wait
			var late, halo float64
			for k, v := range only(got, "mpi_latesender") {
				late += v
				if strings.Contains(k, "MPI_Waitall") {
					halo += v
				}
			}
			if late < seconds(total)*(1-1e-9) {
				t.Errorf("Late Sender %g s, the sweeps alone have %g ms", late, total)
			}
			if slices.Contains(tc.corners, -1) && !(halo > 0) {
				t.Errorf("the halo exchanges have no Late Sender")
			}
		})
	}
}

// TestRefillTwoGrids: sweeps over a 2-D and a 3-D grid of the same
// ranks (on two communicators) alternate; each grid keeps its own
// direction, and its refills count for the metrics of its kind (the
// corners of the 2-D grid, the octant corners of the 3-D one).
func TestRefillTwoGrids(t *testing.T) {
	g2, g3 := newGrid([]int{4, 2}, 1), newGrid([]int{2, 2, 2}, 2)
	g2.progs = g3.progs // one program per rank
	sweeps2, sweeps3 := []int{0, 3, 3, 1}, []int{7, 0, 2, 2}
	var ls2, ls3 [][]float64
	for s := range sweeps2 {
		ls2 = append(ls2, g2.sweep(sweeps2[s], 200*float64(s)))
		ls3 = append(ls3, g3.sweep(sweeps3[s], 200*float64(s)+100))
	}
	got := analyzeGrid(t, g3.programs(200*float64(len(sweeps2))), &topology{dims: []int{4, 2}, comm: 1},
		&topology{dims: []int{2, 2, 2}, comm: 2})
	want := refills(2, sweeps2, ls2)
	for k, v := range refills(3, sweeps3, ls3) {
		want[k] = v
	}
	if d := cmp.Diff(want, only(got, refillNames...), approx); d != "" {
		t.Errorf("refill (-want +got):\n%s", d)
	}
}

// TestRefillWaitall: receives completed in MPI_Waitall (whose Late
// Sender, the largest wait of the call, is known only when it ends)
// refill like blocking ones; a message between ranks that are no
// neighbours leaves the directions alone.
func TestRefillWaitall(t *testing.T) {
	g := newGrid([]int{2, 2}, 0)
	g.sweep(0, 0)
	// a message from rank 0 to rank 3 (diagonal: no neighbours)
	g.progs[0] = append(g.progs[0], call("MPI_Send", 60, 61, send(60.5, 3, 7, 8))...)
	g.progs[3] = append(g.progs[3], call("MPI_Recv", 59, 62, recv(61.5, 0, 7, 8))...)
	// a sweep from the south-east: rank 3 sends to ranks 1 and 2, which
	// receive in MPI_Waitall; rank 0 receives from both in one
	// MPI_Waitall (the largest wait, 5 ms for rank 2's message, counts)
	g.progs[3] = append(g.progs[3], call("MPI_Send", 103, 104, send(103.5, 1, 20, 4))...)
	g.progs[3] = append(g.progs[3], call("MPI_Send", 104, 105, send(104.5, 2, 20, 4))...)
	for _, r := range []int{1, 2} {
		g.progs[r] = append(g.progs[r], call("MPI_Irecv", 100, 100.1, irecvRequest(100.05, 1))...)
		g.progs[r] = append(g.progs[r], call("MPI_Waitall", 101, 106, irecv(105.5, 3, 20, 4, 1))...)
		g.progs[r] = append(g.progs[r], call("MPI_Send", 106+float64(r), 106.5+float64(r), send(106.2+float64(r), 0, 20, 4))...)
	}
	g.progs[0] = append(g.progs[0], call("MPI_Irecv", 100, 100.1, irecvRequest(100.05, 1))...)
	g.progs[0] = append(g.progs[0], call("MPI_Irecv", 100.2, 100.3, irecvRequest(100.25, 2))...)
	g.progs[0] = append(g.progs[0], call("MPI_Waitall", 103, 110, irecv(109, 2, 20, 4, 2), irecv(109.5, 1, 20, 4, 1))...)
	got := analyzeGrid(t, g.programs(200), &topology{dims: []int{2, 2}})
	want := map[string]float64{
		"mpi_latesender_refill_se main/MPI_Waitall 1": seconds(2), // 103 - 101
		"mpi_latesender_refill_se main/MPI_Waitall 2": seconds(3), // 104 - 101
		"mpi_latesender_refill_se main/MPI_Waitall 0": seconds(5), // 108 - 103, rank 2's send
	}
	if d := cmp.Diff(want, only(got, refillNames...), approx); d != "" {
		t.Errorf("refill (-want +got):\n%s", d)
	}
}
