package patterns

import (
	"slices"

	"scout/localtrace/otf2"
	"scout/replay"
)

// refill is Late Sender, wavefront refill (on 2-D grids
// mpi_latesender_refill_nw, _ne, _sw, _se; on 3-D grids _nwf, _nef,
// _swf, _sef, _nwb, _neb, _swb, _seb): the Late Sender waits of a
// pipelined wavefront (a SWEEP3D-like sweep over a process grid) at the
// moment its direction changes and the pipeline fills again, by the
// corner the new wavefront comes from, after the KOJAK line of work on
// virtual topologies (one pattern per direction, each wavefront
// direction with one component per grid dimension). They are metrics
// of scout's own: the reference analyzer does not compute them.
//
//	grid:         a Cartesian topology over an MPI communicator with two
//	              or three non-periodic dimensions of at least two ranks
//	              each (WavefrontGrid); dimension 0 runs from west
//	              (coordinate 0) to east, dimension 1 from north (0) to
//	              south and dimension 2 from front (0) to back, as the
//	              topology view of the HTML report (and Cube's) draws
//	              them (dimension 0 across, 1 down, 2 as the sequence of
//	              slices, the first in front), so that a corner's metric
//	              colours the picture from that corner. A rank's
//	              neighbours are the ranks one step away in one dimension
//	              (north, south, west, east, and front and back on a 3-D
//	              grid; border ranks have fewer). Only the messages on
//	              the grid's communicator between a rank and a neighbour
//	              (grid messages) count: messages on other communicators
//	              or between non-neighbours leave everything alone.
//	component:    a grid message tells where a wavefront comes from on its
//	              axis: a receive from the west, or a send to the east,
//	              belongs to a wavefront from the west (W); a receive
//	              from the east or a send to the west, E; likewise N and
//	              S on dimension 1, F and B on dimension 2.
//	steps:        each rank divides its grid messages, in trace order, into
//	              steps (one pipeline stage: receive from the upstream
//	              neighbours, compute, send to the downstream ones). A
//	              message starts a new step when it is a receive after a
//	              send of the step, a receive from a neighbour the step
//	              already received from, a send to a neighbour the step
//	              already sent to, or a send whose component contradicts
//	              a receive of the step (the sink of one wavefront
//	              starting the next). The end of the trace ends the last.
//	wavefront step of corner (v, h) on a 2-D grid, v ∈ {N, S}, h ∈ {W, E},
//	or of octant corner (v, h, d) on a 3-D grid, d ∈ {F, B}:
//	              - its components are h on dimension 0, v on dimension 1
//	                and d on dimension 2: every axis of the grid has one,
//	                and only one;
//	              - it is complete on every axis: it received from each
//	                neighbour the rank has upstream (north for v = N,
//	                ...) and sent to each it has downstream. A border rank
//	                decides from its position: a rank of the top row
//	                receives nothing from the north in a wavefront from
//	                the north, its N comes from its send to the south, and
//	                a corner that only sends is the origin of the
//	                wavefront;
//	              - each of its receives is a wavefront message that
//	                agrees: when it was sent, the sender's own step was so
//	                far free of contradictions, had received from its
//	                upstream neighbours on the axes it had components for,
//	                had received only wavefront messages, and its
//	                components so far (which the message carries,
//	                WavefrontDir) are those of the corner.
//	              Other steps (halo exchanges, say, where a rank sends to
//	              and receives from both sides) are no wavefront steps
//	              and leave the rank's direction alone.
//	direction:    each rank keeps, per grid, the corner of its last
//	              wavefront step (none at first). A wavefront step without
//	              receives (the rank is where the wavefront starts, a
//	              corner) becomes the last only when the rank's next step
//	              on the grid is a wavefront step too (or the trace ends):
//	              a corner rank of a halo exchange first sends to all its
//	              neighbours, as an origin does, and then receives from
//	              them in a step that is no wavefront step.
//	refill:       a wavefront step with receives whose corner differs from
//	              the last: the Late Sender idle of each of its receives
//	              (at most one per axis, the potential wait states of a
//	              direction change, one per component; all count when
//	              only some components changed, since the pipeline
//	              upstream on the other axes refills too) is added to the
//	              refill metric of the step's corner at the receive's
//	              call path: one of the four corner metrics on a 2-D
//	              grid, of the eight octant metrics on a 3-D one. A
//	              rank's first wavefront step on a grid is no refill
//	              (there is no earlier direction), nor is a step of the
//	              last corner (the pipelined blocks of one sweep). Each
//	              Late Sender instance counts at most once (a message is
//	              on one communicator, which has at most one grid), so
//	              all twelve metrics sum to at most Late Sender per rank
//	              and call path.
//
// Every rank decides alone, but for the directions its grid messages
// carry, so the analysis is the same in-process and under MPI. Traces
// without a grid get none of these metrics, and a trace gets the four
// corner metrics only when it defines a 2-D grid and the eight octant
// metrics only when it defines a 3-D one (both when it defines both;
// combine: Profile.Grid2D, Profile.Grid3D); without a grid the
// pattern's callbacks return at once.
//
// Limits: one message per neighbour and step is assumed, as SWEEP3D
// sends one per block (several make steps that are not complete, which
// refill nothing); and on a grid two ranks wide, where every rank is at
// a border, some exchanges that are no wavefronts (shifts by MPI_Sendrecv
// along every dimension, say) can look like wavefront steps.
type refill struct {
	grids []*gridRank // the rank's grids (nil: none, nothing to do)
	done  []closedStep
	// the Late Sender published for a receive before this pattern saw
	// the receive (at the same event)
	earlyIdx  int
	earlyIdle float64
}

// WavefrontDir is the direction of the sender's step when it sent a
// grid message (see refill): 0 when the message is no wavefront message,
// else dirValid | the components so far (axis a in bits 2a and 2a+1).
var WavefrontDir = replay.NewField("wavefront direction", replay.Uint64Codec)

// Components of a wavefront direction on one axis (bit masks: a step
// with both has contradicting components).
const (
	compLow  = 1 // from west (dimension 0), north (1) or front (2)
	compHigh = 2 // from east, south or back
	dirValid = 64
)

// maxAxes is the largest number of dimensions of a grid.
const maxAxes = 3

// gridRank is one rank's state on one grid.
type gridRank struct {
	comm uint32
	axes int             // dimensions of the grid, 2 or 3
	nb   [maxAxes][2]int // communicator ranks of the neighbours by axis and side (0 low, 1 high); -1: none
	last uint8           // corner of the last wavefront step (components: axis a in bits 2a and 2a+1); 0: none
	// origin is the corner of a wavefront step without receives that
	// the next step has yet to confirm; 0: none
	origin uint8
	cur    gridStep
}

// gridStep is a step being gathered.
type gridStep struct {
	comps   [maxAxes]uint8 // per axis, the components of its messages
	in      [maxAxes]uint8 // per axis, the components of its receives
	carried [maxAxes]uint8 // per axis, the components the senders' steps had
	recvd   uint8          // sides received from (bit 2×axis + side)
	sent    uint8          // sides sent to
	bad     bool           // a receive was no wavefront message
	n       int            // receives
	recvs   [2 * maxAxes]refillRecv
}

// corner returns the components of st as a corner (axis a in bits 2a
// and 2a+1).
func (st *gridStep) corner() uint8 {
	return st.comps[0] | st.comps[1]<<2 | st.comps[2]<<4
}

type refillRecv struct {
	idx   int // receive event
	ready int // the Leave of its call, by which its Late Sender is known
	idle  float64
}

// closedStep is a step whose Late Senders may still come.
type closedStep struct {
	g     *gridRank
	s     gridStep
	ready int
}

// WavefrontGrid reports whether c is a grid the refill patterns analyze:
// two or three non-periodic dimensions of at least two ranks each.
func WavefrontGrid(c *replay.Cart) bool {
	if len(c.Dims) != 2 && len(c.Dims) != maxAxes {
		return false
	}
	for k, n := range c.Dims {
		if n < 2 || c.Periodic[k] {
			return false
		}
	}
	return true
}

// anyWavefrontGrid reports whether env defines a grid the refill
// patterns analyze. A rank's direction travels with its messages and
// depends on what it received, so with a grid the forward pass replays
// message by message (the pattern's FwPreSend callback is no
// replay.Bus.OnAhead one); the decision is the same on every location.
func anyWavefrontGrid(env *replay.Env) bool {
	for _, c := range env.Carts {
		if WavefrontGrid(c) {
			return true
		}
	}
	return false
}

// HasWavefrontGrid reports whether defs define a grid of dims dimensions
// (2 or 3) the refill patterns analyze, and so whether the refill
// metrics of such grids (the four corner metrics of 2-D grids, the
// eight octant metrics of 3-D ones) exist.
func HasWavefrontGrid(defs *otf2.Defs, dims int) bool {
	if defs == nil {
		return false
	}
	for _, c := range replay.CartTopologies(defs) {
		if len(c.Dims) == dims && WavefrontGrid(c) {
			return true
		}
	}
	return false
}

// refillMetrics are the metrics of the refill pattern: the corners of
// 2-D grids, then the octant corners of 3-D grids.
var refillMetrics = []replay.Metric{RefillNW, RefillNE, RefillSW, RefillSE,
	RefillNWF, RefillNEF, RefillSWF, RefillSEF, RefillNWB, RefillNEB, RefillSWB, RefillSEB}

func registerRefill(bus *replay.Bus) {
	if bus.Env != nil && !anyWavefrontGrid(bus.Env) {
		return // nothing to refine, and the forward pass may ship ahead
	}
	p := &refill{earlyIdx: -1}
	bus.On(replay.Started, func(c *replay.Ctx) error {
		if c.Pass == replay.Forward {
			p.start(c)
		}
		return nil
	})
	bus.On(replay.FwPreSend, p.send)
	bus.On(replay.FwPostRecv, p.recv)
	replay.Subscribe(bus, LateSenderFound, p.lateSender)
	bus.On(replay.Finished, func(c *replay.Ctx) error {
		if c.Pass != replay.Forward || p.grids == nil {
			return nil
		}
		for _, g := range p.grids {
			p.close(g)
		}
		p.flush(c, true)
		return nil
	})
}

// start finds the grids of the rank.
func (p *refill) start(c *replay.Ctx) {
	p.grids, p.done = nil, nil
	for comm, cart := range c.Env.Carts {
		if !WavefrontGrid(cart) {
			continue
		}
		me := slices.Index(c.Env.CommMembers[comm], c.Loc.Rank)
		xs := cart.Coords(me)
		if xs == nil {
			continue
		}
		g := &gridRank{comm: comm, axes: len(xs)}
		for a := range g.axes {
			for side, d := range [2]int{-1, 1} {
				at := slices.Clone(xs)
				at[a] += d
				g.nb[a][side] = cart.RankAt(at...)
			}
		}
		p.grids = append(p.grids, g)
	}
	slices.SortFunc(p.grids, func(a, b *gridRank) int { return int(a.comm) - int(b.comm) })
}

// neighbour returns the grid of the current message's communicator and
// the side (2×axis + side) of its partner, or nil when the message is
// no grid message.
func (p *refill) neighbour(c *replay.Ctx) (*gridRank, int) {
	m := c.Trace.Message(c.Index)
	for _, g := range p.grids {
		if g.comm != m.Comm {
			continue
		}
		for a := range g.axes {
			for side := range 2 {
				if g.nb[a][side] == int(m.Peer) {
					return g, 2*a + side
				}
			}
		}
		return nil, 0
	}
	return nil, 0
}

func (p *refill) send(c *replay.Ctx) error {
	if p.grids == nil {
		return nil
	}
	p.flush(c, false)
	g, s := p.neighbour(c)
	if g == nil {
		return nil
	}
	a, comp := s/2, uint8(compLow) // a send to the high side: from the low one
	if s%2 == 0 {
		comp = compHigh
	}
	if g.cur.sent&(1<<s) != 0 || g.cur.in[a]&^comp != 0 {
		p.close(g)
	}
	st := &g.cur
	st.sent |= 1 << s
	st.comps[a] |= comp
	var d uint64
	if g.valid() {
		d = dirValid | uint64(st.corner())
	}
	replay.Put(c, WavefrontDir, d)
	return nil
}

// valid reports whether the messages the rank sends now are wavefront
// messages: its step so far has no contradicting components, received
// from the upstream neighbours of its components and received only
// wavefront messages.
func (g *gridRank) valid() bool {
	st := &g.cur
	if st.bad {
		return false
	}
	for a := range g.axes {
		switch st.comps[a] {
		case compLow:
			if g.nb[a][0] >= 0 && st.recvd&(1<<(2*a)) == 0 {
				return false
			}
		case compHigh:
			if g.nb[a][1] >= 0 && st.recvd&(1<<(2*a+1)) == 0 {
				return false
			}
		case compLow | compHigh:
			return false
		}
	}
	return true
}

func (p *refill) recv(c *replay.Ctx) error {
	if p.grids == nil {
		return nil
	}
	p.flush(c, false)
	g, s := p.neighbour(c)
	if g == nil {
		return nil
	}
	a, comp := s/2, uint8(compLow) // a receive from the low side: from the low one
	if s%2 == 1 {
		comp = compHigh
	}
	if g.cur.sent != 0 || g.cur.recvd&(1<<s) != 0 {
		p.close(g)
	}
	st := &g.cur
	st.recvd |= 1 << s
	st.comps[a] |= comp
	st.in[a] |= comp
	if d, ok := replay.Get(c, WavefrontDir); ok && d&dirValid != 0 {
		for a := range g.axes {
			st.carried[a] |= uint8(d>>(2*a)) & 3
		}
	} else {
		st.bad = true
	}
	r := refillRecv{idx: c.Index, ready: int(c.Trace.LeaveOf(c.Index))}
	if p.earlyIdx == c.Index {
		r.idle, p.earlyIdx = p.earlyIdle, -1
	}
	st.recvs[st.n] = r // at most one receive per side
	st.n++
	return nil
}

// lateSender records the idle time of a Late Sender instance for the
// step of its receive.
func (p *refill) lateSender(c *replay.Ctx, info *LateSenderInfo) error {
	if p.grids == nil {
		return nil
	}
	if r := p.find(info.Recv); r != nil {
		r.idle = info.Idle
	} else if info.Recv == c.Index { // published before recv sees the receive
		p.earlyIdx, p.earlyIdle = info.Recv, info.Idle
	}
	p.flush(c, false)
	return nil
}

// find returns the record of receive event i in a step, or nil.
func (p *refill) find(i int) *refillRecv {
	for _, g := range p.grids {
		for k := range g.cur.n {
			if g.cur.recvs[k].idx == i {
				return &g.cur.recvs[k]
			}
		}
	}
	for j := range p.done {
		s := &p.done[j].s
		for k := range s.n {
			if s.recvs[k].idx == i {
				return &s.recvs[k]
			}
		}
	}
	return nil
}

// close ends g's current step; it is judged once the Late Senders of its
// receives are known (flush).
func (p *refill) close(g *gridRank) {
	st := g.cur
	g.cur = gridStep{}
	if st.recvd == 0 && st.sent == 0 {
		return
	}
	cs := closedStep{g: g, s: st}
	for _, r := range st.recvs[:st.n] {
		cs.ready = max(cs.ready, r.ready)
	}
	p.done = append(p.done, cs)
}

// flush judges the closed steps whose Late Senders are known: all when
// force is set (at the end of the trace), else those whose receives'
// calls ended before the current event (or with it).
func (p *refill) flush(c *replay.Ctx, force bool) {
	k := 0
	for ; k < len(p.done) && (force || c.Index >= p.done[k].ready); k++ {
		p.judge(c, p.done[k].g, &p.done[k].s)
	}
	if k > 0 {
		p.done = append(p.done[:0], p.done[k:]...)
	}
}

// cornerMetric is the metric of a corner (components of axis a in bits
// 2a and 2a+1): those of 2-D grids have no components on axis 2, those
// of 3-D grids one.
var cornerMetric = map[uint8]replay.Metric{
	compLow | compLow<<2:                 RefillNW,
	compHigh | compLow<<2:                RefillNE,
	compLow | compHigh<<2:                RefillSW,
	compHigh | compHigh<<2:               RefillSE,
	compLow | compLow<<2 | compLow<<4:    RefillNWF,
	compHigh | compLow<<2 | compLow<<4:   RefillNEF,
	compLow | compHigh<<2 | compLow<<4:   RefillSWF,
	compHigh | compHigh<<2 | compLow<<4:  RefillSEF,
	compLow | compLow<<2 | compHigh<<4:   RefillNWB,
	compHigh | compLow<<2 | compHigh<<4:  RefillNEB,
	compLow | compHigh<<2 | compHigh<<4:  RefillSWB,
	compHigh | compHigh<<2 | compHigh<<4: RefillSEB,
}

// judge decides whether step st of grid g is a wavefront step, and a
// refill, and adds the refill's Late Sender time.
func (p *refill) judge(c *replay.Ctx, g *gridRank, st *gridStep) {
	corner := g.wavefront(st)
	if corner == 0 {
		g.origin = 0 // an origin step followed by no wavefront step
		return
	}
	if g.origin != 0 {
		g.last, g.origin = g.origin, 0
	}
	if st.recvd == 0 {
		g.origin = corner // confirmed by the next step
		return
	}
	if g.last != 0 && g.last != corner {
		m := cornerMetric[corner]
		for _, r := range st.recvs[:st.n] {
			if r.idle > 0 {
				c.Add(m, c.Callpath(r.idx), r.idle)
			}
		}
	}
	g.last = corner
}

// wavefront returns the corner of step st if it is a wavefront step of
// g, else 0.
func (g *gridRank) wavefront(st *gridStep) uint8 {
	if st.bad {
		return 0
	}
	for a := range g.axes {
		k := st.comps[a]
		if k != compLow && k != compHigh {
			return 0
		}
		up, down := 0, 1
		if k == compHigh {
			up, down = 1, 0
		}
		if g.nb[a][up] >= 0 && st.recvd&(1<<(2*a+up)) == 0 ||
			g.nb[a][down] >= 0 && st.sent&(1<<(2*a+down)) == 0 ||
			st.carried[a]&^k != 0 {
			return 0
		}
	}
	return st.corner()
}
