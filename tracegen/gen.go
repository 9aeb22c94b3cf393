package tracegen

import (
	"errors"
	"fmt"
	"slices"
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

// Extra MPI regions: defined only when a scenario uses them, after the
// phase regions, in this order (so that scenarios of the first kinds keep
// their definitions).
const (
	exIsend = iota
	exIrecv
	exWait
	exWaitall
	exReduce
	exGather
	exScatter
	exScan
	exAllgather
	exAlltoall
	exDimsCreate
	exCartCreate
	exCommSplit
	exCommFree
	numExtra
)

// Communicators (global = local identifiers: no mapping tables); those of
// the grid kinds follow (commSetup).
const (
	commWorld = 0
	commSelf  = 1
)

// Groups; the row groups of split communicators follow.
const (
	groupLocations = 0
	groupWorld     = 1
	groupSelf      = 2
)

const (
	tagLateSender = 11
	tagRing       = 15
	tagWavefront  = 20
	tagHalo       = 21
	tagTask       = 22
	tagResult     = 23
	tagChain      = 24
	msgBytes      = 4    // one MPI_INT
	collBytes     = 8    // one MPI_DOUBLE per rank
	haloBytes     = 1024 // 128 MPI_DOUBLEs
)

// phaseInfo is a phase with its per-rank compute times and its iteration
// length, in ticks.
type phaseInfo struct {
	Phase
	region uint32
	c      []uint64 // compute ticks per rank
	cmax   uint64
	length uint64 // ticks from one iteration's start to the next's
	// grid kinds: the process grid and the communicator(s)
	dims []int
	comm *commSetup
	// aux holds times the timelines derive (ticks from the iteration
	// start; see iterLength): Scan the prefix maximum of c; RowAllreduce
	// the maximum of c per row; Halo2D/3D the first completion in
	// MPI_Waitall (D); Wavefront and MasterWorker the end of compute (F).
	aux []uint64
	// Wavefront, Wavefront3D: the timelines of the corners it sweeps
	// from, by mirroring (Corner.mirror; nil: unused; waves[0] is the
	// phase itself), in mirrored places (see mirror)
	waves [numMirrors]*phaseInfo
	// OpenMP kinds (c is nil): the compute ticks and the timelines per
	// location (index r×threads + t) and per rank (ompTimelines)
	ct []uint64
	tl []ompLoc
	rk []ompRank
}

type gen struct {
	s       Scenario
	n       int    // ranks
	nt      int    // threads per rank
	gap     uint64 // ticks between records
	phases  []phaseInfo
	names   []string         // phase region names, by region - regPhase0
	extra   [numExtra]uint32 // global ids of the extra MPI regions (Undef32: unused)
	extras  []int            // the extra regions used, in id order
	setup   []*commSetup     // communicators made after MPI_Comm_size
	phStart uint64           // start of the first phase iteration
	end     uint64           // time of ProgramEnd
	global  *ids             // the global definitions' identifiers
	canon   *otf2.Defs       // the global definitions (only with Scenario.LocalDefs)
	// OpenMP (omp.go): the global ids of the OpenMP regions (Undef32:
	// unused) and the regions used, in id order; the group of all thread
	// locations (the ranks' thread-team groups follow) and rank 0's
	// thread-team communicator (the other ranks' follow)
	hasOmp   bool
	omp      [numOmp]uint32
	omps     []int
	ompGroup uint32
	teamComm uint32
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
	if s.Threads == 0 {
		s.Threads = 1
	}
	switch {
	case s.Locations < 1 || s.Locations > maxRanks:
		return nil, fmt.Errorf("tracegen: %d locations (want 1 to %d)", s.Locations, maxRanks)
	case s.Threads < 1 || s.Threads > maxThreads:
		return nil, fmt.Errorf("tracegen: %d threads per rank (want 1 to %d)", s.Threads, maxThreads)
	case s.Locations*s.Threads > maxRanks:
		return nil, fmt.Errorf("tracegen: %d ranks × %d threads: more than %d locations", s.Locations, s.Threads, maxRanks)
	case s.Iterations < 0:
		return nil, fmt.Errorf("tracegen: %d iterations", s.Iterations)
	case s.Gap < 0:
		return nil, fmt.Errorf("tracegen: negative gap %v", s.Gap)
	case s.ClockOffset < 0 || s.ClockDrift < 0 || s.ClockDrift >= 1:
		return nil, fmt.Errorf("tracegen: clock skew %v, drift %g: want an offset of 0 or more and a drift in [0, 1)", s.ClockOffset, s.ClockDrift)
	}
	g := &gen{s: s, n: s.Locations, nt: s.Threads, gap: uint64(s.Gap)}
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
		pi := phaseInfo{Phase: p, region: reg}
		if p.Kind.omp() {
			g.ompCompute(&pi, i)
		} else {
			pi.c = make([]uint64, g.n)
		}
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
		if err := g.prepare(&pi); err != nil {
			return nil, fmt.Errorf("tracegen: phase %d: %w", i, err)
		}
		pi.length = g.iterLength(&pi)
		g.phases = append(g.phases, pi)
	}
	g.useExtras()
	g.useOmp()
	setup, _ := g.setupTimes()
	free, _ := g.freeTimes()
	g.phStart = startTicks + 11*g.gap + setup
	g.end = g.phStart
	for _, p := range g.phases {
		g.end += uint64(s.Iterations) * p.length
	}
	g.end += free + 6*g.gap
	nComms := commSelf + 1
	if n := len(g.setup); n > 0 {
		nComms = int(g.setup[n-1].comm) + g.setup[n-1].rows()
	}
	if g.hasOmp {
		g.teamComm = uint32(nComms)
		nComms += g.n
	}
	g.global = &ids{region: make([]uint32, regPhase0+len(g.names)+len(g.extras)+len(g.omps)), world: commWorld, self: commSelf,
		comm: make([]uint32, nComms), progPath: strProgPath, arg: strArg}
	for i := range g.global.region {
		g.global.region[i] = uint32(i)
	}
	for i := range g.global.comm {
		g.global.comm[i] = uint32(i)
	}
	return g, nil
}

func checkPhase(p Phase, n int) error {
	if p.Kind < 0 || p.Kind >= numKinds {
		return fmt.Errorf("unknown kind %d", int(p.Kind))
	}
	if p.Work < 0 || p.Imbalance < 0 || p.Delay < 0 || p.Jitter < 0 || p.Lag < 0 {
		return errors.New("negative duration")
	}
	if p.Lag > 0 && !p.Kind.omp() {
		return fmt.Errorf("%v is no OpenMP kind: lag %v", p.Kind, p.Lag)
	}
	switch p.Kind {
	case LateSender, Ring, LateSenderNB, Halo2D, Halo3D, Wavefront, Wavefront3D, MasterWorker, DelayChain:
		if n < 2 {
			return fmt.Errorf("%v needs at least 2 locations", p.Kind)
		}
	}
	if len(p.Dims) > 0 && !p.Kind.grid() {
		return fmt.Errorf("%v has no process grid: dims %s", p.Kind, gridName(p.Dims))
	}
	if len(p.Sweeps) > 0 && !p.Kind.wavefront() {
		return fmt.Errorf("%v has no sweeps: sweeps %s", p.Kind, sweepsName(p.Sweeps))
	}
	for _, k := range p.Sweeps {
		if !k.valid() {
			return fmt.Errorf("sweeps: unknown corner %d", k)
		}
		if d := p.Kind.gridDims(); k.dims() != d {
			return fmt.Errorf("sweeps %s: %v sweeps from the corners of a %d-D grid (%s), %v is none", sweepsName(p.Sweeps), p.Kind, d,
				sweepsName(cornersOf(d)), k)
		}
	}
	return nil
}

// grid reports whether phases of kind k run on a Cartesian grid.
func (k Kind) grid() bool {
	return k == Halo2D || k == Halo3D || k.wavefront() || k == RowAllreduce
}

// wavefront reports whether phases of kind k are wavefront sweeps.
func (k Kind) wavefront() bool { return k == Wavefront || k == Wavefront3D }

// gridDims is the number of dimensions of the grid of a grid kind.
func (k Kind) gridDims() int {
	if k == Halo3D || k == Wavefront3D {
		return 3
	}
	return 2
}

// prepare sets up what a phase needs besides its compute times: its grid
// and communicators, and the times in aux.
func (g *gen) prepare(p *phaseInfo) error {
	if p.Kind.omp() {
		g.ompTimelines(p)
		return nil
	}
	if p.Kind.grid() {
		dims, err := gridDims(p.Phase, g.n)
		if err != nil {
			return err
		}
		p.dims, p.comm = dims, g.commFor(p.Kind, dims)
	}
	gp := g.gap
	switch p.Kind {
	case Scan:
		p.aux = make([]uint64, g.n)
		var m uint64
		for r, c := range p.c {
			m = max(m, c)
			p.aux[r] = m
		}
	case RowAllreduce:
		p.aux = make([]uint64, p.dims[0])
		for r, c := range p.c {
			row := r / p.dims[1]
			p.aux[row] = max(p.aux[row], c)
		}
	case Halo2D, Halo3D:
		p.aux = make([]uint64, g.n)
		var buf [6]int
		for r := range g.n {
			nb := neighbours(p.dims, r, buf[:0])
			d := g.haloWaitall(p, r, len(nb)) + gp
			for _, n := range nb {
				d = max(d, g.haloSendEnter(p, n, r)+2*gp)
			}
			p.aux[r] = d
		}
	case Wavefront, Wavefront3D:
		g.prepareSweeps(p)
	case MasterWorker:
		p.aux = make([]uint64, g.n)
		for w := 1; w < g.n; w++ {
			p.aux[w] = g.taskSend(p, w) + 4*gp + p.c[w]
		}
	case DelayChain:
		p.aux = make([]uint64, g.n)
		for r := 1; r < g.n; r++ {
			p.aux[r] = max(3*gp+p.c[r], g.chainSend(p, r-1)+2*gp)
		}
	}
	return nil
}

// chainSend is the Enter of rank r's MPI_Send in a DelayChain iteration
// (r < n-1).
func (g *gen) chainSend(p *phaseInfo, r int) uint64 {
	if r == 0 {
		return 2*g.gap + p.c[0]
	}
	return p.aux[r] + 2*g.gap
}

// chainLeave is the Leave of rank r's phase region in a DelayChain
// iteration.
func (g *gen) chainLeave(p *phaseInfo, r int) uint64 {
	if r == g.n-1 {
		return p.aux[r] + 2*g.gap
	}
	return g.chainSend(p, r) + 3*g.gap
}

// haloWaitall is the Enter of MPI_Waitall on rank r with k neighbours.
func (g *gen) haloWaitall(p *phaseInfo, r, k int) uint64 {
	return 2*g.gap + p.c[r] + 6*g.gap*uint64(k)
}

// haloSendEnter is the Enter of rank n's MPI_Isend to rank r.
func (g *gen) haloSendEnter(p *phaseInfo, n, r int) uint64 {
	var buf [6]int
	nb := neighbours(p.dims, n, buf[:0])
	return 2*g.gap + p.c[n] + 3*g.gap*uint64(len(nb)+slices.Index(nb, r))
}

// taskSend is the Enter of the master's MPI_Send of worker w's task.
func (g *gen) taskSend(p *phaseInfo, w int) uint64 {
	return 2*g.gap + p.c[0] + 3*g.gap*uint64(w-1)
}

// useExtras numbers the extra MPI regions the phases and communicators
// need, after the phase regions.
func (g *gen) useExtras() {
	var used [numExtra]bool
	for _, p := range g.phases {
		for _, x := range extrasOf(p.Kind) {
			used[x] = true
		}
	}
	for _, c := range g.setup {
		if c.split {
			used[exCommSplit] = true
		} else {
			used[exDimsCreate], used[exCartCreate] = true, true
		}
		used[exCommFree] = true
	}
	for x := range g.extra {
		g.extra[x] = otf2.Undef32
		if used[x] {
			g.extra[x] = uint32(regPhase0 + len(g.names) + len(g.extras))
			g.extras = append(g.extras, x)
		}
	}
}

// extrasOf lists the extra MPI regions a phase of kind k enters.
func extrasOf(k Kind) []int {
	switch k {
	case Reduce:
		return []int{exReduce}
	case Gather:
		return []int{exGather}
	case Scatter:
		return []int{exScatter}
	case Scan:
		return []int{exScan}
	case Allgather:
		return []int{exAllgather}
	case Alltoall:
		return []int{exAlltoall}
	case LateSenderNB:
		return []int{exIsend, exIrecv, exWait}
	case Halo2D, Halo3D:
		return []int{exIsend, exIrecv, exWaitall}
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
//	            (except the p2p kinds below that communicate first)
//	Compute     Leave(phase) 2g+c_r
//	LateSender  sender: Enter(Send) S=2g+c_0, MpiSend S+g, Leave S+2g, Leave(phase) S+3g
//	            receiver: Enter(Recv) R=2g+c_1, MpiRecv M=max(R+g, S+2g), Leave M+g, Leave(phase) M+2g
//	Ring        Enter(Sendrecv) S_r=2g+c_r, MpiSend S_r+g, MpiRecv Q_r=max(S_r,S_left)+2g,
//	            Leave Q_r+g, Leave(phase) Q_r+2g
//	Allreduce,  Enter+CollBegin A_r=2g+c_r, CollEnd Amax+g, Leave Amax+2g, Leave(phase) Amax+3g
//	Barrier,    (Amax = 2g+max c)
//	Allgather,
//	Alltoall
//	Bcast,      Enter+CollBegin B_r=2g+c_r, CollEnd max(B_r,B_0)+g, Leave +2g, Leave(phase) +3g
//	Scatter
//	Reduce,     Enter+CollBegin A_r=2g+c_r; CollEnd E_0=Amax+g on the root 0, E_r=A_r+g on the
//	Gather      others (they need not wait); Leave E_r+g, Leave(phase) E_r+2g
//	Scan        Enter+CollBegin A_r=2g+c_r, CollEnd E_r=max(A_0..A_r)+g, Leave E_r+g, Leave(phase) E_r+2g
//	RowAllreduce  Allreduce on the row communicator: CollEnd max(A_k, k in r's row)+g
//	DelayBarrier, DelayNxN  as Barrier and Allreduce
//	DelayChain  rank 0: Enter(Send) X_0=2g+c_0, MpiSend X_0+g, Leave X_0+2g, Leave(phase) X_0+3g
//	            rank r>0: Enter(Recv) R_r=2g+c_r, MpiRecv M_r=max(R_r+g, X_{r-1}+2g), Leave M_r+g;
//	            then, if r<n-1: Enter(Send) X_r=M_r+2g, MpiSend X_r+g, Leave X_r+2g,
//	            Leave(phase) X_r+3g; on the last rank Leave(phase) M_r+2g (M_r in aux)
//
// The p2p kinds below: every call is Enter t, one event t+g, Leave t+2g,
// and the next call enters one gap after the previous one left; "ev" is
// a message's send event (Enter of the send call + g).
//
//	LateSenderNB  sender 0: compute, Enter(Isend) S=2g+c_0, MpiIsend S+g, Leave S+2g,
//	              Enter(Wait) S+3g, MpiIsendComplete S+4g, Leave S+5g, Leave(phase) S+6g
//	              receiver 1: Enter(Irecv) g, MpiIrecvRequest 2g, Leave 3g, Enter(compute) 4g,
//	              Leave 4g+c_1, Enter(Wait) W=5g+c_1, MpiIrecv M=max(W+g, S+2g), Leave M+g,
//	              Leave(phase) M+2g; other ranks compute only
//	Halo2D/3D   rank r with k neighbours n_0..n_{k-1} (neighbours: per dimension lower, upper)
//	            compute; MPI_Irecv from n_j at P_r+3gj (P_r=2g+c_r); MPI_Isend to n_j at
//	            P_r+3g(k+j); Enter(Waitall) W_r=P_r+6gk; MpiIrecv from n_j at D_r+gj, then
//	            MpiIsendComplete of the send to n_j at D_r+g(k+j), with
//	            D_r=max(W_r+g, max_j ev(n_j→r)+g); Leave D_r+2gk, Leave(phase) D_r+(2k+1)g
//	Wavefront   rank (i,j) of grid d0×d1: x=g; if i>0: MPI_Recv from (i-1,j) entered at x,
//	            MpiRecv m=max(x+g, ev+g), x=m+2g; if j>0: the same from (i,j-1);
//	            Enter(compute) x, Leave F_r=x+c_r; if i<d0-1: MPI_Send to (i+1,j) at F_r+g;
//	            if j<d1-1: MPI_Send to (i,j+1) at the next call; Leave(phase) one gap after
//	Wavefront3D  rank (i,j,k) of grid d0×d1×d2: as Wavefront with a third receive, from
//	            (i,j,k-1), after the others, and a third send, to (i,j,k+1), after the others
//	            (both kinds: the sweeps from other corners run on the mirrored grid, refill.go)
//	MasterWorker  master 0: compute; MPI_Send of worker w's task at P+3g(w-1) (P=2g+c_0);
//	            MPI_Recv of w's result (w=1..n-1 in rank order) entered at x_1=P+3g(n-1),
//	            MpiRecv m_w=max(x_w+g, ev_w+g), x_{w+1}=m_w+2g; Leave(phase) m_{n-1}+2g
//	            worker w: Enter(Recv) g, MpiRecv a_w=ev(task)+g, Leave a_w+g, Enter(compute) a_w+2g,
//	            Leave F_w=a_w+2g+c_w, Enter(Send) F_w+g, MpiSend ev_w=F_w+2g, Leave F_w+3g,
//	            Leave(phase) F_w+4g
//
// The next iteration starts one gap after the last rank left the phase.
func (g *gen) iterLength(p *phaseInfo) uint64 {
	gp := g.gap
	switch p.Kind {
	case OmpParallel, OmpBarrier, OmpCritical, OmpLock:
		return g.ompLength(p)
	case LateSender:
		s, r := 2*gp+p.c[0], 2*gp+p.c[1]
		m := max(r+gp, s+2*gp)
		return max(s+3*gp, m+2*gp, 2*gp+p.cmax) + gp
	case Ring:
		return p.cmax + 7*gp
	case Allreduce, Barrier, Bcast, Reduce, Gather, Scatter, Scan, Allgather, Alltoall, RowAllreduce, DelayBarrier, DelayNxN:
		return p.cmax + 6*gp
	case DelayChain:
		var end uint64
		for r := range g.n {
			end = max(end, g.chainLeave(p, r))
		}
		return end + gp
	case LateSenderNB:
		s, w := 2*gp+p.c[0], 5*gp+p.c[1]
		m := max(w+gp, s+2*gp)
		return max(s+6*gp, m+2*gp, 2*gp+p.cmax) + gp
	case Halo2D, Halo3D:
		var end uint64
		var buf [6]int
		for r, d := range p.aux {
			k := uint64(len(neighbours(p.dims, r, buf[:0])))
			end = max(end, d+(2*k+1)*gp)
		}
		return end + gp
	case Wavefront, Wavefront3D:
		// the longest of the sweeps' iterations
		var end uint64
		w := newWaveGrid(p.dims)
		for _, k := range p.corners() {
			for r, f := range p.waves[k.mirror()].aux {
				end = max(end, f+3*gp*w.sends(r, w.n)+gp)
			}
		}
		return end + gp
	case MasterWorker:
		end := g.masterEnd(p)
		for w := 1; w < g.n; w++ {
			end = max(end, p.aux[w]+4*gp)
		}
		return end + gp
	}
	return p.cmax + 3*gp
}

// masterEnd is the master's Leave(phase) in a MasterWorker iteration.
func (g *gen) masterEnd(p *phaseInfo) uint64 {
	gp := g.gap
	x := g.taskSend(p, g.n) // Enter of the first MPI_Recv
	for w := 1; w < g.n; w++ {
		x = max(x+gp, p.aux[w]+3*gp) + 2*gp
	}
	return x
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
	w.MpiCollectiveEnd(t+5*gp, otf2.CollCreateHandle, id.world, otf2.Undef32, 0, 0)
	w.Leave(t+6*gp, id.region[regInit])
	w.Enter(t+7*gp, id.region[regCommRank])
	w.Leave(t+8*gp, id.region[regCommRank])
	w.Enter(t+9*gp, id.region[regCommSize])
	if err := w.Leave(t+10*gp, id.region[regCommSize]); err != nil { // errors are sticky
		return err
	}
	t += 11 * gp
	for _, c := range g.setup {
		g.create(w, c, r, t, id)
		t += c.gaps() * gp
	}
	var req uint64 // the last request id
	var st ompState
	for i := range g.phases {
		p := &g.phases[i]
		for it := range g.s.Iterations {
			var err error
			if p.Kind.omp() {
				err = g.ompIteration(w, p, r, 0, t, id, &st)
			} else {
				err = g.iteration(w, p, r, it, t, id, &req)
			}
			if err != nil {
				return err
			}
			t += p.length
		}
	}
	for i := len(g.setup) - 1; i >= 0; i-- {
		comm := id.comm[g.setup[i].commOf(r)]
		w.Enter(t, id.region[g.extra[exCommFree]])
		w.MpiCollectiveBegin(t)
		w.CommDestroy(t+gp, comm)
		w.MpiCollectiveEnd(t+2*gp, otf2.CollDestroyHandle, comm, otf2.Undef32, 0, 0)
		w.Leave(t+3*gp, id.region[g.extra[exCommFree]])
		t += freeGaps * gp
	}
	w.Enter(t, id.region[regFinalize])
	w.MpiCollectiveBegin(t)
	w.CommDestroy(t+gp, id.world)
	w.CommDestroy(t+2*gp, id.self)
	w.MpiCollectiveEnd(t+3*gp, otf2.CollDestroyHandle, id.world, otf2.Undef32, 0, 0)
	w.Leave(t+4*gp, id.region[regFinalize])
	w.Leave(t+5*gp, id.region[regMain])
	pe := otf2.Event{Type: otf2.EvProgramEnd, Time: t + 6*gp, Args: [otf2.MaxArgs]uint64{1 << 63}}
	return w.Write(&pe)
}

// create writes the calls of rank r that make communicator c, starting
// at t (see commSetup).
func (g *gen) create(w *otf2.EventWriter, c *commSetup, r int, t uint64, id *ids) {
	gp := g.gap
	call := exCommSplit
	if !c.split {
		w.Enter(t, id.region[g.extra[exDimsCreate]])
		w.Leave(t+gp, id.region[g.extra[exDimsCreate]])
		call, t = exCartCreate, t+2*gp
	}
	w.Enter(t, id.region[g.extra[call]])
	w.MpiCollectiveBegin(t)
	w.CommCreate(t+gp, id.comm[c.commOf(r)])
	w.MpiCollectiveEnd(t+2*gp, otf2.CollCreateHandle, id.world, otf2.Undef32, 0, 0)
	w.Leave(t+3*gp, id.region[g.extra[call]])
}

// iteration writes iteration it of phase p on rank r, starting at t,
// with the identifiers of id; *req is the last request id used.
func (g *gen) iteration(w *otf2.EventWriter, p *phaseInfo, r, it int, t uint64, id *ids, req *uint64) error {
	switch p.Kind {
	case LateSenderNB, Halo2D, Halo3D, Wavefront, Wavefront3D, MasterWorker:
		return g.p2pIteration(w, p, r, it, t, id, req)
	}
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
	case DelayChain:
		end = s - gp // Leave(compute)
		if r > 0 {
			m := t + p.aux[r]
			w.Enter(s, id.region[regRecv])
			w.MpiRecv(m, uint32(r-1), id.world, tagChain, msgBytes)
			end = m + gp
			w.Leave(end, id.region[regRecv])
		}
		if r < g.n-1 {
			x := end + gp
			w.Enter(x, id.region[regSend])
			w.MpiSend(x+gp, uint32(r+1), id.world, tagChain, msgBytes)
			end = x + 2*gp
			w.Leave(end, id.region[regSend])
		}
	case Allreduce, Barrier, DelayBarrier, DelayNxN:
		reg, op, bytes := id.region[regAllreduce], uint8(otf2.CollAllreduce), uint64(collBytes)*uint64(n)
		if p.Kind == Barrier || p.Kind == DelayBarrier {
			reg, op, bytes = id.region[regBarrier], otf2.CollBarrier, 0
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
		w.MpiCollectiveEnd(e, otf2.CollBcast, id.world, 0, sent, collBytes)
		end = e + gp
		w.Leave(end, id.region[regBcast])
	default:
		end = g.collective(w, p, r, t, id)
	}
	return w.Leave(end+gp, id.region[p.region])
}

// collective writes the collective call of the collective kinds added
// after Bcast, entered at t+2g+c_r, and returns the time of its Leave.
func (g *gen) collective(w *otf2.EventWriter, p *phaseInfo, r int, t uint64, id *ids) uint64 {
	gp, n := g.gap, uint64(g.n)
	s := t + 2*gp + p.c[r]
	reg, comm, root := uint32(0), id.world, uint32(0)
	var op uint8
	var e, sent, recvd uint64 // CollEnd time, bytes
	switch p.Kind {
	case Reduce, Gather:
		reg, op = g.extra[exReduce], otf2.CollReduce
		if p.Kind == Gather {
			reg, op = g.extra[exGather], otf2.CollGather
		}
		e, sent = s+gp, collBytes
		if r == 0 {
			e, recvd = t+2*gp+p.cmax+gp, collBytes*n
		}
	case Scatter:
		reg, op = g.extra[exScatter], otf2.CollScatter
		e, recvd = max(s, t+2*gp+p.c[0])+gp, collBytes
		if r == 0 {
			sent = collBytes * n
		}
	case Scan:
		reg, op, root = g.extra[exScan], otf2.CollScan, otf2.Undef32
		e, sent, recvd = t+2*gp+p.aux[r]+gp, collBytes*(n-uint64(r)), collBytes*uint64(r+1)
	case Allgather, Alltoall:
		reg, op, root = g.extra[exAllgather], otf2.CollAllgather, otf2.Undef32
		if p.Kind == Alltoall {
			reg, op = g.extra[exAlltoall], otf2.CollAlltoall
		}
		e, sent, recvd = t+2*gp+p.cmax+gp, collBytes*n, collBytes*n
	case RowAllreduce:
		reg, op, root = regAllreduce, otf2.CollAllreduce, otf2.Undef32
		row, size := r/p.dims[1], uint64(p.dims[1])
		comm = id.comm[p.comm.commOf(r)]
		e, sent, recvd = t+2*gp+p.aux[row]+gp, collBytes*size, collBytes*size
	}
	w.Enter(s, id.region[reg])
	w.MpiCollectiveBegin(s)
	w.MpiCollectiveEnd(e, op, comm, root, sent, recvd)
	w.Leave(e+gp, id.region[reg])
	return e + gp
}
