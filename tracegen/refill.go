package tracegen

import (
	"fmt"
	"strings"
)

// Corner is a corner of a 2-D process grid, where a Wavefront sweep
// starts: west is coordinate 0 of dimension 0, north coordinate 0 of
// dimension 1, as the analysis's refill metrics (and the HTML report's
// topology view, dimension 0 across and dimension 1 down) have it.
type Corner uint8

// The corners. Bit 0 mirrors dimension 0 (from the east), bit 1
// dimension 1 (from the south).
const (
	NW Corner = iota
	NE
	SW
	SE
	numCorners
)

var cornerNames = [numCorners]string{"nw", "ne", "sw", "se"}

// String returns the corner's name, "nw", "ne", "sw" or "se".
func (k Corner) String() string {
	if k >= numCorners {
		return fmt.Sprintf("Corner(%d)", uint8(k))
	}
	return cornerNames[k]
}

// refillMetric is the metric of the Late Sender waits when a wavefront
// from corner k refills the pipeline.
func (k Corner) refillMetric() string { return "mpi_latesender_refill_" + k.String() }

// ParseSweeps parses a sweep order such as "nw+se+ne+sw": the corners
// the iterations of a Wavefront phase sweep from, in turn.
func ParseSweeps(s string) ([]Corner, error) {
	var out []Corner
	for _, f := range strings.Split(s, "+") {
		k := Corner(0)
		for k < numCorners && cornerNames[k] != strings.ToLower(strings.TrimSpace(f)) {
			k++
		}
		if k == numCorners {
			return nil, fmt.Errorf("sweeps %q: %q is no corner (nw, ne, sw, se; joined by +)", s, f)
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
// A sweep from corner k is the sweep from the north-west corner on the
// grid mirrored so that k becomes its north-west corner: rank r has the
// place mirror(k, r) in it (an involution), receives first from its
// upstream neighbour in dimension 0, then in dimension 1, and sends in
// the same order downstream. Its timeline is that of the north-west
// sweep (see iterLength) over the mirrored places, whose compute times
// are the ranks' own: the phase's per-corner phaseInfo (waves) holds
// them and the times derived from them (aux) by mirrored place, and its
// messages go to the ranks at the mirrored places.

// cornerOf returns the corner iteration it of Wavefront phase p sweeps
// from.
func (p *phaseInfo) cornerOf(it int) Corner {
	if len(p.Sweeps) == 0 {
		return NW
	}
	return p.Sweeps[it%len(p.Sweeps)]
}

// corners returns the corners Wavefront phase p sweeps from, in the
// order of p.Sweeps (NW without them).
func (p *phaseInfo) corners() []Corner {
	if len(p.Sweeps) == 0 {
		return []Corner{NW}
	}
	return p.Sweeps
}

// mirror returns the place of rank r in a sweep from corner k over grid
// dims (and the rank at place r).
func mirror(k Corner, dims []int, r int) int {
	d0, d1 := dims[0], dims[1]
	i, j := r/d1, r%d1
	if k&1 != 0 {
		i = d0 - 1 - i
	}
	if k&2 != 0 {
		j = d1 - 1 - j
	}
	return i*d1 + j
}

// prepareSweeps sets up the timelines of the corners Wavefront phase p
// sweeps from (p.waves); the north-west one is p itself.
func (g *gen) prepareSweeps(p *phaseInfo) {
	g.waveAux(p)
	p.waves[NW] = p
	for _, k := range p.corners() {
		if p.waves[k] != nil {
			continue
		}
		pv := *p
		pv.waves = [numCorners]*phaseInfo{}
		pv.c = make([]uint64, g.n)
		for v := range g.n {
			pv.c[v] = p.c[mirror(k, p.dims, v)]
		}
		g.waveAux(&pv)
		p.waves[k] = &pv
	}
}

// waveAux computes the ends of compute (F) of a north-west sweep with p's
// compute times.
func (g *gen) waveAux(p *phaseInfo) {
	gp := g.gap
	p.aux = make([]uint64, g.n)
	d0, d1 := p.dims[0], p.dims[1]
	for r := range g.n {
		i, j := r/d1, r%d1
		x := gp // Enter of the first receive (or of compute)
		if i > 0 {
			x = max(x+gp, p.aux[r-d1]+3*gp) + 2*gp
		}
		if j > 0 {
			x = max(x+gp, g.waveSendRight(p, r-1, i+1 < d0)+2*gp) + 2*gp
		}
		p.aux[r] = x + p.c[r]
	}
}

// sweepCounts returns how many of n iterations of phase p sweep from
// each corner.
func (p *phaseInfo) sweepCounts(n uint64) [numCorners]uint64 {
	var out [numCorners]uint64
	if len(p.Sweeps) == 0 {
		out[NW] = n
		return out
	}
	l := uint64(len(p.Sweeps))
	for i, k := range p.Sweeps {
		out[k] += n / l
		if uint64(i) < n%l {
			out[k]++
		}
	}
	return out
}

// refills adds the closed form of the wavefront refill metrics
// (mpi_latesender_refill_*) of the Wavefront phases, after the rule of
// the analysis (patterns/refill.go): on a grid of at least 2×2 ranks,
// every rank's part of an iteration is one wavefront step of the
// iteration's corner (it receives from each upstream neighbour it has,
// then sends to each downstream one, and so does every sender; one
// iteration's messages end before the next one's begin, and the next
// step starts with a receive from a side already received from, a send
// to a side already sent to, or a send against a receive of the step).
// An iteration whose corner differs from that of the previous Wavefront
// iteration on the same communicator (in this phase or an earlier one)
// is a refill: each rank's Late Sender time in it (the waits of its
// receives, waveRecvs) counts for the refill metric of the iteration's
// corner, at its MPI_Recv. The first Wavefront iteration on a
// communicator is no refill. Halo2D phases on the same grid in between
// change nothing: every rank sends to and receives from all its
// neighbours, and the corners, which look like origins when they send,
// receive from neighbours that sent against a receive still missing (or,
// on a 2×2 grid, from another corner), which are no wavefront messages.
func (g *gen) refills(s *Summary) {
	last := map[*commSetup]Corner{}
	main := g.regionName(regProgram) + "/main"
	for i := range g.phases {
		p := &g.phases[i]
		if p.Kind != Wavefront || g.s.Iterations == 0 || p.dims[0] < 2 || p.dims[1] < 2 {
			continue
		}
		prev, ok := last[p.comm]
		// refills[k]: iterations from corner k that refill
		var refills [numCorners]uint64
		if l := len(p.Sweeps); l <= 1 {
			k := p.cornerOf(0)
			if ok && prev != k {
				refills[k] = 1
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
						refills[k]++
					}
					if before != k {
						refills[k] += runs - 1
					}
				} else if before != k {
					refills[k] += runs
				}
			}
		}
		last[p.comm] = p.cornerOf(g.s.Iterations - 1)
		path := main + "/" + p.Name + "/MPI_Recv"
		for k, n := range refills {
			if n == 0 {
				continue
			}
			pv := p.waves[k]
			for r := range g.n {
				s.wait(Corner(k).refillMetric(), path, r, n*g.waveLateSender(pv, mirror(Corner(k), p.dims, r)))
			}
		}
	}
}
