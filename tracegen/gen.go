package tracegen

import (
	"errors"
	"fmt"
	"time"

	"scout/localtrace/otf2"
)

// Region identifiers; phase regions follow from regPhase0 on.
const (
	regProgram = iota
	regMain
	regCompute
	regInit
	regFinalize
	regCommRank
	regCommSize
	regSend
	regRecv
	regSendrecv
	regAllreduce
	regBarrier
	regBcast
	regPhase0
)

// Communicators (global = local identifiers: no mapping tables).
const (
	commWorld = 0
	commSelf  = 1
)

// MPI collective operations (OTF2_CollectiveOp).
const (
	opBarrier       = 0
	opBcast         = 1
	opAllreduce     = 11
	opCreateHandle  = 17
	opDestroyHandle = 18
)

const (
	tagLateSender = 11
	tagRing       = 15
	msgBytes      = 4 // one MPI_INT
	collBytes     = 8 // one MPI_DOUBLE per rank
)

// phaseInfo is a phase with its per-rank compute times and its iteration
// length, in ticks.
type phaseInfo struct {
	Phase
	region uint32
	c      []uint64 // compute ticks per rank
	cmax   uint64
	length uint64 // ticks from one iteration's start to the next's
}

type gen struct {
	s       Scenario
	n       int    // ranks
	gap     uint64 // ticks between records
	phases  []phaseInfo
	names   []string   // phase region names, by region - regPhase0
	phStart uint64     // start of the first phase iteration
	end     uint64     // time of ProgramEnd
	global  *ids       // the global definitions' identifiers
	canon   *otf2.Defs // the global definitions (only with Scenario.LocalDefs)
}

func newGen(s Scenario) (*gen, error) {
	if s.Program == "" {
		s.Program = "tracegen"
	}
	if s.Gap == 0 {
		s.Gap = time.Microsecond
	}
	if s.ChunkSize == 0 {
		s.ChunkSize = otf2.DefaultChunkSizeEvents
	}
	switch {
	case s.Locations < 1 || s.Locations > maxRanks:
		return nil, fmt.Errorf("tracegen: %d locations (want 1 to %d)", s.Locations, maxRanks)
	case s.Iterations < 0:
		return nil, fmt.Errorf("tracegen: %d iterations", s.Iterations)
	case s.Gap < 0:
		return nil, fmt.Errorf("tracegen: negative gap %v", s.Gap)
	}
	g := &gen{s: s, n: s.Locations, gap: uint64(s.Gap)}
	regions := map[string]uint32{}
	for i, p := range s.Phases {
		if err := checkPhase(p, s.Locations); err != nil {
			return nil, fmt.Errorf("tracegen: phase %d: %w", i, err)
		}
		if p.Name == "" {
			p.Name = p.Kind.String()
		}
		reg, ok := regions[p.Name]
		if !ok {
			reg = uint32(regPhase0 + len(g.names))
			regions[p.Name] = reg
			g.names = append(g.names, p.Name)
		}
		pi := phaseInfo{Phase: p, region: reg, c: make([]uint64, g.n)}
		for r := range pi.c {
			pi.c[r] = uint64(p.Work) + uint64(r)*uint64(p.Imbalance)
			if r == 0 {
				pi.c[r] += uint64(p.Delay)
			}
			if p.Jitter > 0 {
				pi.c[r] += splitmix(s.Seed^uint64(i)<<40^uint64(r)) % uint64(p.Jitter)
			}
			pi.cmax = max(pi.cmax, pi.c[r])
		}
		pi.length = g.iterLength(&pi)
		g.phases = append(g.phases, pi)
	}
	g.phStart = startTicks + 11*g.gap
	g.end = g.phStart
	for _, p := range g.phases {
		g.end += uint64(s.Iterations) * p.length
	}
	g.end += 6 * g.gap
	g.global = &ids{region: make([]uint32, regPhase0+len(g.names)), world: commWorld, self: commSelf,
		progPath: strProgPath, arg: strArg}
	for i := range g.global.region {
		g.global.region[i] = uint32(i)
	}
	return g, nil
}

func checkPhase(p Phase, n int) error {
	if p.Kind < 0 || p.Kind >= numKinds {
		return fmt.Errorf("unknown kind %d", int(p.Kind))
	}
	if p.Work < 0 || p.Imbalance < 0 || p.Delay < 0 || p.Jitter < 0 {
		return errors.New("negative duration")
	}
	if (p.Kind == LateSender || p.Kind == Ring) && n < 2 {
		return fmt.Errorf("%v needs at least 2 locations", p.Kind)
	}
	return nil
}

// splitmix is the SplitMix64 mixing function: a deterministic hash.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// Iteration timelines, in ticks from the iteration start T, with gap g
// and compute time c_r of rank r (S: enter of the communication call):
//
//	all kinds   Enter(phase) 0, Enter(compute) g, Leave(compute) g+c_r
//	Compute     Leave(phase) 2g+c_r
//	LateSender  sender: Enter(Send) S=2g+c_0, MpiSend S+g, Leave S+2g, Leave(phase) S+3g
//	            receiver: Enter(Recv) R=2g+c_1, MpiRecv M=max(R+g, S+2g), Leave M+g, Leave(phase) M+2g
//	Ring        Enter(Sendrecv) S_r=2g+c_r, MpiSend S_r+g, MpiRecv Q_r=max(S_r,S_left)+2g,
//	            Leave Q_r+g, Leave(phase) Q_r+2g
//	Allreduce,  Enter+CollBegin A_r=2g+c_r, CollEnd Amax+g, Leave Amax+2g, Leave(phase) Amax+3g
//	Barrier     (Amax = 2g+max c)
//	Bcast       Enter+CollBegin B_r=2g+c_r, CollEnd max(B_r,B_0)+g, Leave +2g, Leave(phase) +3g
//
// The next iteration starts one gap after the last rank left the phase.
func (g *gen) iterLength(p *phaseInfo) uint64 {
	gp := g.gap
	switch p.Kind {
	case LateSender:
		s, r := 2*gp+p.c[0], 2*gp+p.c[1]
		m := max(r+gp, s+2*gp)
		return max(s+3*gp, m+2*gp, 2*gp+p.cmax) + gp
	case Ring:
		return p.cmax + 7*gp
	case Allreduce, Barrier, Bcast:
		return p.cmax + 6*gp
	}
	return p.cmax + 3*gp
}

// rank writes the events of rank r, with the identifiers of id.
func (g *gen) rank(w *otf2.EventWriter, r int, id *ids) error {
	gp := g.gap
	t := uint64(startTicks)
	pb := otf2.Event{Type: otf2.EvProgramBegin, Time: t, Args: [otf2.MaxArgs]uint64{uint64(id.progPath), 1},
		Array: []uint64{uint64(id.arg)}, Attrs: []otf2.AttrValue{{Attr: id.attr, Type: 4, Value: 1000 + uint64(r)}}}
	w.Write(&pb)
	w.Enter(t+gp, id.region[regMain])
	// MPI_Init as Score-P 8 records it
	w.Enter(t+2*gp, id.region[regInit])
	w.MpiCollectiveBegin(t + 2*gp)
	w.CommCreate(t+3*gp, id.world)
	w.CommCreate(t+4*gp, id.self)
	w.MpiCollectiveEnd(t+5*gp, opCreateHandle, id.world, otf2.Undef32, 0, 0)
	w.Leave(t+6*gp, id.region[regInit])
	w.Enter(t+7*gp, id.region[regCommRank])
	w.Leave(t+8*gp, id.region[regCommRank])
	w.Enter(t+9*gp, id.region[regCommSize])
	if err := w.Leave(t+10*gp, id.region[regCommSize]); err != nil { // errors are sticky
		return err
	}
	t = g.phStart
	for i := range g.phases {
		p := &g.phases[i]
		for range g.s.Iterations {
			if err := g.iteration(w, p, r, t, id); err != nil {
				return err
			}
			t += p.length
		}
	}
	w.Enter(t, id.region[regFinalize])
	w.MpiCollectiveBegin(t)
	w.CommDestroy(t+gp, id.world)
	w.CommDestroy(t+2*gp, id.self)
	w.MpiCollectiveEnd(t+3*gp, opDestroyHandle, id.world, otf2.Undef32, 0, 0)
	w.Leave(t+4*gp, id.region[regFinalize])
	w.Leave(t+5*gp, id.region[regMain])
	pe := otf2.Event{Type: otf2.EvProgramEnd, Time: t + 6*gp, Args: [otf2.MaxArgs]uint64{1 << 63}}
	return w.Write(&pe)
}

// iteration writes one iteration of phase p on rank r, starting at t,
// with the identifiers of id.
func (g *gen) iteration(w *otf2.EventWriter, p *phaseInfo, r int, t uint64, id *ids) error {
	gp, c := g.gap, p.c[r]
	n := uint32(g.n)
	w.Enter(t, id.region[p.region])
	w.Enter(t+gp, id.region[regCompute])
	w.Leave(t+gp+c, id.region[regCompute])
	s := t + 2*gp + c // enter of the communication call
	var end uint64    // leave of the communication call
	switch p.Kind {
	case Compute:
		end = t + gp + c
	case LateSender:
		send := t + 2*gp + p.c[0]
		switch r {
		case 0:
			w.Enter(s, id.region[regSend])
			w.MpiSend(s+gp, 1, id.world, tagLateSender, msgBytes)
			end = s + 2*gp
			w.Leave(end, id.region[regSend])
		case 1:
			m := max(s+gp, send+2*gp)
			w.Enter(s, id.region[regRecv])
			w.MpiRecv(m, 0, id.world, tagLateSender, msgBytes)
			end = m + gp
			w.Leave(end, id.region[regRecv])
		default:
			end = t + gp + c
		}
	case Ring:
		left := (uint32(r) + n - 1) % n
		q := max(s, t+2*gp+p.c[left]) + 2*gp
		w.Enter(s, id.region[regSendrecv])
		w.MpiSend(s+gp, (uint32(r)+1)%n, id.world, tagRing, msgBytes)
		w.MpiRecv(q, left, id.world, tagRing, msgBytes)
		end = q + gp
		w.Leave(end, id.region[regSendrecv])
	case Allreduce, Barrier:
		reg, op, bytes := id.region[regAllreduce], uint8(opAllreduce), uint64(collBytes)*uint64(n)
		if p.Kind == Barrier {
			reg, op, bytes = id.region[regBarrier], opBarrier, 0
		}
		amax := t + 2*gp + p.cmax
		w.Enter(s, reg)
		w.MpiCollectiveBegin(s)
		w.MpiCollectiveEnd(amax+gp, op, id.world, otf2.Undef32, bytes, bytes)
		end = amax + 2*gp
		w.Leave(end, reg)
	case Bcast:
		sent := uint64(0)
		if r == 0 {
			sent = collBytes * uint64(n)
		}
		e := max(s, t+2*gp+p.c[0]) + gp
		w.Enter(s, id.region[regBcast])
		w.MpiCollectiveBegin(s)
		w.MpiCollectiveEnd(e, opBcast, id.world, 0, sent, collBytes)
		end = e + gp
		w.Leave(end, id.region[regBcast])
	}
	return w.Leave(end+gp, id.region[p.region])
}
