package tracegen

import (
	"fmt"
	"slices"
	"strings"
)

// Corner is a corner of a 2-D process grid, or an octant corner of a
// 3-D one, where a wavefront sweep starts: west is coordinate 0 of
// dimension 0, north coordinate 0 of dimension 1 and front coordinate 0
// of dimension 2, as the analysis's refill metrics (and the HTML
// report's topology view, dimension 0 across, dimension 1 down and
// dimension 2 as the sequence of slices) have it.
type Corner uint8

// The corners of 2-D grids (Wavefront). Bit 0 mirrors dimension 0 (from
// the east), bit 1 dimension 1 (from the south).
const (
	NW Corner = iota
	NE
	SW
	SE
)

// The octant corners of 3-D grids (Wavefront3D): octant (8) marks them,
// bits 0 and 1 mirror dimensions 0 and 1 as for the corners of 2-D
// grids, bit 2 dimension 2 (from the back).
const (
	NWF Corner = octant + iota
	NEF
	SWF
	SEF
	NWB
	NEB
	SWB
	SEB
	numCorners // 0-3 and 8-15 are corners
)

const (
	octant     = 8
	numMirrors = 8 // the mirrorings of a grid: bits 0-2 of a corner
)

var cornerNames = [numCorners]string{NW: "nw", NE: "ne", SW: "sw", SE: "se",
	NWF: "nwf", NEF: "nef", SWF: "swf", SEF: "sef", NWB: "nwb", NEB: "neb", SWB: "swb", SEB: "seb"}

// String returns the corner's name, "nw", "ne", "sw" or "se" on a 2-D
// grid, "nwf" … "seb" (f: front, b: back) on a 3-D one.
func (k Corner) String() string {
	if !k.valid() {
		return fmt.Sprintf("Corner(%d)", uint8(k))
	}
	return cornerNames[k]
}

// valid reports whether k is a corner.
func (k Corner) valid() bool { return k < numCorners && cornerNames[k] != "" }

// dims returns the number of dimensions of the grids k is a corner of.
func (k Corner) dims() int {
	if k&octant != 0 {
		return 3
	}
	return 2
}

// mirror returns the mirroring of a sweep from k (bit a: dimension a).
func (k Corner) mirror() int { return int(k &^ octant) }

// cornerAt returns the corner of a grid of dims dimensions that a sweep
// with mirroring m starts from.
func cornerAt(m, dims int) Corner {
	if dims == 3 {
		return Corner(m) | octant
	}
	return Corner(m)
}

// cornersOf returns the corners of a grid of dims dimensions.
func cornersOf(dims int) []Corner {
	out := make([]Corner, 1<<dims)
	for m := range out {
		out[m] = cornerAt(m, dims)
	}
	return out
}

// refillMetric is the metric of the Late Sender waits when a wavefront
// from corner k refills the pipeline.
func (k Corner) refillMetric() string { return "mpi_latesender_refill_" + k.String() }

// ParseSweeps parses a sweep order such as "nw+se+ne+sw" (corners of a
// 2-D grid) or "nwf+seb+nef" (octant corners of a 3-D grid): the corners
// the iterations of a Wavefront or Wavefront3D phase sweep from, in
// turn. All the corners must be of grids of one dimensionality.
func ParseSweeps(s string) ([]Corner, error) {
	var out []Corner
	for _, f := range strings.Split(s, "+") {
		k := Corner(0)
		for k < numCorners && (!k.valid() || cornerNames[k] != strings.ToLower(strings.TrimSpace(f))) {
			k++
		}
		if k == numCorners {
			return nil, fmt.Errorf("sweeps %q: %q is no corner (nw, ne, sw, se on a 2-D grid; nwf, nef, swf, sef, nwb, neb, swb, seb on a 3-D one; joined by +)", s, f)
		}
		if len(out) > 0 && k.dims() != out[0].dims() {
			return nil, fmt.Errorf("sweeps %q: %q and %q are corners of grids of different dimensions", s, out[0], k)
		}
		out = append(out, k)
	}
	return out, nil
}

// sweepsName is "nw+se" for the sweeps [NW SE].
func sweepsName(ks []Corner) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = k.String()
	}
	return strings.Join(s, "+")
}

// Wavefront sweeps from any corner.
//
// A sweep from corner k is the sweep from the north-west(-front) corner
// on the grid mirrored so that k becomes its north-west(-front) corner:
// rank r has the place mirror(k, r) in it (an involution), receives
// first from its upstream neighbour in dimension 0, then in dimension 1
// (then in dimension 2), and sends in the same order downstream. Its
// timeline is that of the north-west sweep (see iterLength) over the
// mirrored places, whose compute times are the ranks' own: the phase's
// per-mirroring phaseInfo (waves) holds them and the times derived from
// them (aux) by mirrored place, and its messages go to the ranks at the
// mirrored places.

// firstCorner is the corner a sweep of wavefront phase p starts from
// without Sweeps: NW, or NWF on a 3-D grid.
func (p *phaseInfo) firstCorner() Corner {
	if p.Kind == Wavefront3D {
		return NWF
	}
	return NW
}

// cornerOf returns the corner iteration it of wavefront phase p sweeps
// from.
func (p *phaseInfo) cornerOf(it int) Corner {
	if len(p.Sweeps) == 0 {
		return p.firstCorner()
	}
	return p.Sweeps[it%len(p.Sweeps)]
}

// corners returns the corners wavefront phase p sweeps from, in the
// order of p.Sweeps (firstCorner without them).
func (p *phaseInfo) corners() []Corner {
	if len(p.Sweeps) == 0 {
		return []Corner{p.firstCorner()}
	}
	return p.Sweeps
}

// waveGrid is the shape of a wavefront phase's grid of 2 or 3
// dimensions: the sizes and the row-major strides (the last dimension
// varying fastest).
type waveGrid struct {
	n            int
	size, stride [3]int
}

func newWaveGrid(dims []int) waveGrid {
	w := waveGrid{n: len(dims)}
	st := 1
	for a := len(dims) - 1; a >= 0; a-- {
		w.size[a], w.stride[a] = dims[a], st
		st *= dims[a]
	}
	return w
}

// at is the coordinate of place v on axis a.
func (w *waveGrid) at(v, a int) int { return v / w.stride[a] % w.size[a] }

// up and down report whether place v has an upstream (downstream)
// neighbour on axis a, v - stride (v + stride).
func (w *waveGrid) up(v, a int) bool   { return w.at(v, a) > 0 }
func (w *waveGrid) down(v, a int) bool { return w.at(v, a) < w.size[a]-1 }

// sends returns the number of downstream neighbours of place v on the
// axes before a.
func (w *waveGrid) sends(v, a int) uint64 {
	var n uint64
	for b := range a {
		if w.down(v, b) {
			n++
		}
	}
	return n
}

// mirror returns the place of rank r in a sweep with mirroring m over
// grid dims (and the rank at place r).
func mirror(m int, dims []int, r int) int {
	w := newWaveGrid(dims)
	v := 0
	for a := range w.n {
		x := w.at(r, a)
		if m&(1<<a) != 0 {
			x = w.size[a] - 1 - x
		}
		v += x * w.stride[a]
	}
	return v
}

// prepareSweeps sets up the timelines of the mirrorings wavefront
// phase p sweeps with (p.waves); the unmirrored one is p itself.
func (g *gen) prepareSweeps(p *phaseInfo) {
	g.waveAux(p)
	p.waves[0] = p
	for _, k := range p.corners() {
		m := k.mirror()
		if p.waves[m] != nil {
			continue
		}
		pv := *p
		pv.waves = [numMirrors]*phaseInfo{}
		pv.c = make([]uint64, g.n)
		for v := range g.n {
			pv.c[v] = p.c[mirror(m, p.dims, v)]
		}
		g.waveAux(&pv)
		p.waves[m] = &pv
	}
}

// waveAux computes the ends of compute (F) of a north-west(-front) sweep
// with p's compute times: a place receives from its upstream neighbours
// in the order of the axes, each receive entered one gap after the
// previous one left (the first at g).
func (g *gen) waveAux(p *phaseInfo) {
	gp := g.gap
	p.aux = make([]uint64, g.n)
	w := newWaveGrid(p.dims)
	for r := range g.n {
		x := gp // Enter of the first receive (or of compute)
		for a := range w.n {
			if w.up(r, a) {
				x = max(x+gp, g.waveSend(p, &w, r-w.stride[a], a)+2*gp) + 2*gp
			}
		}
		p.aux[r] = x + p.c[r]
	}
}

// waveSend is the Enter of the MPI_Send of place v to its downstream
// neighbour on axis a in a north-west(-front) sweep with p's timeline:
// its sends follow the end of compute, one per downstream neighbour in
// the order of the axes, each 3 gaps long.
func (g *gen) waveSend(p *phaseInfo, w *waveGrid, v, a int) uint64 {
	return p.aux[v] + g.gap + 3*g.gap*w.sends(v, a)
}

// sweepCounts returns how many of n iterations of phase p sweep with
// each mirroring.
func (p *phaseInfo) sweepCounts(n uint64) [numMirrors]uint64 {
	var out [numMirrors]uint64
	if len(p.Sweeps) == 0 {
		out[0] = n
		return out
	}
	l := uint64(len(p.Sweeps))
	for i, k := range p.Sweeps {
		out[k.mirror()] += n / l
		if uint64(i) < n%l {
			out[k.mirror()]++
		}
	}
	return out
}

// refills adds the closed form of the wavefront refill metrics
// (mpi_latesender_refill_*) of the Wavefront and Wavefront3D phases,
// after the rule of the analysis (patterns/refill.go): on a grid of at
// least two ranks in each dimension, every rank's part of an iteration
// is one wavefront step of the iteration's corner (it receives from each
// upstream neighbour it has, then sends to each downstream one, and so
// does every sender; one iteration's messages end before the next one's
// begin, and the next step starts with a receive from a side already
// received from, a send to a side already sent to, or a send against a
// receive of the step). An iteration whose corner differs from that of
// the previous wavefront iteration on the same communicator (in this
// phase or an earlier one) is a refill: each rank's Late Sender time in
// it (the waits of its receives, waveRecvs) counts for the refill metric
// of the iteration's corner (a corner of the 2-D grid, or an octant
// corner of the 3-D one), at its MPI_Recv. The first wavefront iteration
// on a communicator is no refill. Halo2D (Halo3D) phases on the same
// grid in between change nothing: every rank sends to and receives from
// all its neighbours, and the corners, which look like origins when they
// send, receive from neighbours that sent against a receive still
// missing (or, on a grid two ranks wide, from neighbours whose messages
// carry another direction), which are no wavefront messages.
func (g *gen) refills(s *Summary) {
	last := map[*commSetup]Corner{}
	main := g.regionName(regProgram) + "/main"
	for i := range g.phases {
		p := &g.phases[i]
		if !p.Kind.wavefront() || g.s.Iterations == 0 || slices.Min(p.dims) < 2 {
			continue
		}
		prev, ok := last[p.comm]
		// refills[m]: iterations with mirroring m (from the corner
		// cornerAt(m)) that refill
		var refills [numMirrors]uint64
		if l := len(p.Sweeps); l <= 1 {
			k := p.cornerOf(0)
			if ok && prev != k {
				refills[k.mirror()] = 1
			}
		} else {
			// the iterations of one round of the sweep order, each
			// after the previous corner (the first after prev, or, from
			// the second round on, after the round's last)
			n := uint64(g.s.Iterations)
			for j, k := range p.Sweeps {
				runs := n / uint64(l) // iterations at j
				if uint64(j) < n%uint64(l) {
					runs++
				}
				if runs == 0 {
					continue
				}
				before := p.Sweeps[(j+l-1)%l]
				if j == 0 {
					if ok && prev != k {
						refills[k.mirror()]++
					}
					if before != k {
						refills[k.mirror()] += runs - 1
					}
				} else if before != k {
					refills[k.mirror()] += runs
				}
			}
		}
		last[p.comm] = p.cornerOf(g.s.Iterations - 1)
		path := main + "/" + p.Name + "/MPI_Recv"
		for m, n := range refills {
			if n == 0 {
				continue
			}
			pv, k := p.waves[m], cornerAt(m, len(p.dims))
			for r := range g.n {
				s.wait(k.refillMetric(), path, r, n*g.waveLateSender(pv, mirror(m, p.dims, r)))
			}
		}
	}
}
