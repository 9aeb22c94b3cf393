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
// (ranks numbered row-major: rank r has the coordinates (r/d1, r%d1);
// dimension 0 runs from west to east, dimension 1 from north to south).

// corner names the corners of a grid as the refill metrics do.
var corner = [4]string{"nw", "ne", "sw", "se"}

// topology describes the Cartesian topology a test trace defines.
type topology struct {
	dims     []int
	periodic bool
	comm     uint32 // 0: MPI_COMM_WORLD; 1: a second communicator over all ranks
}

// withTopology returns defs with topo (and communicator 1) added.
func withTopology(t *testing.T, d *otf2.Defs, topo *topology) *otf2.Defs {
	t.Helper()
	d.Comms = append(d.Comms, otf2.Comm{Self: 1, Name: 0, Group: 0, Parent: otf2.Undef32})
	if topo != nil {
		var ids []uint32
		size := 1
		for k, n := range topo.dims {
			p := uint8(0)
			if topo.periodic {
				p = 1
			}
			d.CartDimensions = append(d.CartDimensions, otf2.CartDimension{Self: uint32(k), Name: 0, Size: uint32(n), Periodic: p})
			ids = append(ids, uint32(k))
			size *= n
		}
		d.CartTopologies = append(d.CartTopologies, otf2.CartTopology{Self: 0, Name: 0, Comm: topo.comm, Dims: ids})
		for r := range size {
			xs := make([]uint32, len(topo.dims))
			for k, x := len(topo.dims)-1, r; k >= 0; k-- {
				xs[k], x = uint32(x%topo.dims[k]), x/topo.dims[k]
			}
			d.CartCoordinates = append(d.CartCoordinates, otf2.CartCoordinate{Topology: 0, Rank: uint32(r), Coords: xs})
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

// analyzeGrid is analyze on a trace with topology topo (nil: none).
func analyzeGrid(t *testing.T, topo *topology, progs ...[]step) map[string]float64 {
	t.Helper()
	return analyzeDefs(t, func(d *otf2.Defs) *otf2.Defs { return withTopology(t, d, topo) }, patterns.Register, progs...)
}

// grid is a test program over a d0×d1 grid: each rank's steps, added to
// phase by phase.
type grid struct {
	d0, d1 int
	comm   uint32
	progs  [][]step
	req    []uint64 // the last request id of each rank
}

func newGrid(d0, d1 int, comm uint32) *grid {
	return &grid{d0: d0, d1: d1, comm: comm, progs: make([][]step, d0*d1), req: make([]uint64, d0*d1)}
}

func (g *grid) send(ms float64, dst int) step {
	return tinytrace.Raw(ms, otf2.EvMpiSend, uint64(dst), uint64(g.comm), 20, 4)
}

func (g *grid) recv(ms float64, src int) step {
	return tinytrace.Raw(ms, otf2.EvMpiRecv, uint64(src), uint64(g.comm), 20, 4)
}

// place returns the place of rank r in a sweep from corner k: its
// coordinates on the grid mirrored so that k is the north-west corner
// (bit 0 of k mirrors dimension 0, bit 1 dimension 1); rank returns the
// rank at a place.
func (g *grid) place(k, r int) (i, j int) {
	return g.mirror(k, r/g.d1, r%g.d1)
}

func (g *grid) rank(k, i, j int) int {
	i, j = g.mirror(k, i, j)
	return i*g.d1 + j
}

func (g *grid) mirror(k, i, j int) (int, int) {
	if k&1 != 0 {
		i = g.d0 - 1 - i
	}
	if k&2 != 0 {
		j = g.d1 - 1 - j
	}
	return i, j
}

// sweep adds a sweep from corner k starting at t (lasting 10 ms per
// anti-diagonal): the rank at place (i, j), on anti-diagonal L = i+j,
// receives from (i-1, j) in MPI_Recv [t+10(L-1), +1.8], then from
// (i, j-1) in [t+10(L-1)+1.9, +3.0]; it sends down in MPI_Send
// [t+10L+1, +1] and right in [t+10L+2, +1]. The first receive waits 1
// ms, the second 0.1 ms (Late Sender). It returns each rank's Late
// Sender time in ms.
func (g *grid) sweep(k int, t float64) []float64 {
	ls := make([]float64, len(g.progs))
	for r := range g.progs {
		i, j := g.place(k, r)
		base := t + 10*float64(i+j-1)
		var s []step
		if i > 0 {
			s = append(s, call("MPI_Recv", base, base+1.8, g.recv(base+1.7, g.rank(k, i-1, j)))...)
			ls[r]++
		}
		if j > 0 {
			s = append(s, call("MPI_Recv", base+1.9, base+3, g.recv(base+2.9, g.rank(k, i, j-1)))...)
			ls[r] += 0.1
		}
		out := t + 10*float64(i+j)
		if i < g.d0-1 {
			s = append(s, call("MPI_Send", out+1, out+2, g.send(out+1.5, g.rank(k, i+1, j)))...)
		}
		if j < g.d1-1 {
			s = append(s, call("MPI_Send", out+2, out+3, g.send(out+2.5, g.rank(k, i, j+1)))...)
		}
		g.progs[r] = append(g.progs[r], s...)
	}
	return ls
}

// neighbours returns the neighbours of rank r, per dimension the lower
// then the upper one.
func (g *grid) neighbours(r int) []int {
	i, j := r/g.d1, r%g.d1
	var nb []int
	for _, n := range [][2]int{{i - 1, j}, {i + 1, j}, {i, j - 1}, {i, j + 1}} {
		if n[0] >= 0 && n[0] < g.d0 && n[1] >= 0 && n[1] < g.d1 {
			nb = append(nb, n[0]*g.d1+n[1])
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

// refills returns the refill cells a sequence of sweeps gives: every
// sweep whose corner differs from the previous one's adds each rank's
// Late Sender time (ls, in ms) to its corner's metric.
func refills(corners []int, ls [][]float64) map[string]float64 {
	want := map[string]float64{}
	for s := 1; s < len(corners); s++ {
		if corners[s] == corners[s-1] {
			continue
		}
		for r, v := range ls[s] {
			if v > 0 {
				want[fmt.Sprintf("mpi_latesender_refill_%s main/MPI_Recv %d", corner[corners[s]], r)] += seconds(v)
			}
		}
	}
	return want
}

var refillNames = []string{"mpi_latesender_refill_nw", "mpi_latesender_refill_ne", "mpi_latesender_refill_sw", "mpi_latesender_refill_se"}

func TestRefill(t *testing.T) {
	tests := []struct {
		name    string
		d0, d1  int
		topo    *topology
		corners []int // sweeps; -1: a halo exchange
		comm    uint32
		// noRefill: the analysis finds none (else the closed form of
		// the sweeps, halo exchanges leaving the directions alone)
		noRefill bool
	}{
		{name: "2x2: first sweep none, repeats none, changes refill", d0: 2, d1: 2, corners: []int{0, 0, 3, 1, 1, 2, 0}},
		{name: "3x3: every corner after every other", d0: 3, d1: 3, corners: []int{0, 1, 0, 2, 0, 3, 1, 2, 1, 3, 2, 3, 3, 0}},
		{name: "4x2: one component changes", d0: 4, d1: 2, corners: []int{0, 2, 3, 1, 0}},
		{name: "2x3", d0: 2, d1: 3, corners: []int{3, 0, 2, 1}},
		{name: "3x3: halo exchanges leave the direction alone", d0: 3, d1: 3, corners: []int{-1, 0, -1, 0, 3, -1, -1, 3, 1}},
		{name: "2x2: halo exchanges", d0: 2, d1: 2, corners: []int{-1, -1, 1, -1, 1, 2}},
		{name: "3x3: halo exchanges only", d0: 3, d1: 3, corners: []int{-1, -1, -1}, noRefill: true},
		{name: "no topology", d0: 3, d1: 3, topo: &topology{}, corners: []int{0, 3, 1}, noRefill: true},
		{name: "periodic grid", d0: 3, d1: 3, topo: &topology{dims: []int{3, 3}, periodic: true}, corners: []int{0, 3, 1}, noRefill: true},
		{name: "3-D grid", d0: 2, d1: 2, topo: &topology{dims: []int{2, 2, 1}}, corners: []int{0, 3, 1}, noRefill: true},
		{name: "4x1 grid", d0: 4, d1: 1, corners: []int{0, 3, 1}, noRefill: true},
		{name: "messages on another communicator", d0: 2, d1: 2, topo: &topology{dims: []int{2, 2}, comm: 1}, corners: []int{0, 3, 1}, noRefill: true},
		{name: "topology on the communicator of the sweeps", d0: 2, d1: 2, topo: &topology{dims: []int{2, 2}, comm: 1}, comm: 1, corners: []int{0, 3, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newGrid(tc.d0, tc.d1, tc.comm)
			topo := tc.topo
			if topo == nil {
				topo = &topology{dims: []int{tc.d0, tc.d1}}
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
			got := analyzeGrid(t, topo, g.programs(100*float64(len(tc.corners)+1))...)
			want := refills(sweeps, ls)
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

// TestRefillWaitall: receives completed in MPI_Waitall (whose Late
// Sender, the largest wait of the call, is known only when it ends)
// refill like blocking ones; a message between ranks that are no
// neighbours leaves the directions alone.
func TestRefillWaitall(t *testing.T) {
	g := newGrid(2, 2, 0)
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
	got := analyzeGrid(t, &topology{dims: []int{2, 2}}, g.programs(200)...)
	want := map[string]float64{
		"mpi_latesender_refill_se main/MPI_Waitall 1": seconds(2), // 103 - 101
		"mpi_latesender_refill_se main/MPI_Waitall 2": seconds(3), // 104 - 101
		"mpi_latesender_refill_se main/MPI_Waitall 0": seconds(5), // 108 - 103, rank 2's send
	}
	if d := cmp.Diff(want, only(got, refillNames...), approx); d != "" {
		t.Errorf("refill (-want +got):\n%s", d)
	}
}
