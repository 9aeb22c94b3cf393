package tracegen

import (
	"fmt"

	"scout/localtrace/otf2"
)

// The OpenMP kinds (OmpParallel, OmpBarrier, OmpCritical, OmpLock): a
// parallel region per iteration, forked by every rank's master thread
// for a team of all Scenario.Threads threads of the rank, recorded as
// Score-P 8 records OPARI2-instrumented OpenMP: THREAD_FORK and
// THREAD_JOIN (model OpenMP) on the master, THREAD_TEAM_BEGIN/END with
// the rank's thread-team communicator on every thread, the constructs as
// regions of paradigm OpenMP named "!$omp parallel @tracegen.c:100" and
// so on, the lock-API calls as wrappers of source file "OMP", and
// THREAD_ACQUIRE_LOCK/RELEASE_LOCK with the lock's acquisition order.

// OpenMP regions: defined only when a scenario uses them, after the
// extra MPI regions, in this order.
const (
	oxParallel     = iota // OmpParallel's parallel region
	oxParallelIBar        // ... and its implicit barrier
	oxBarrierPar          // OmpBarrier's parallel region
	oxBarrier             // ... its explicit barrier
	oxBarrierIBar         // ... its implicit barrier
	oxCriticalPar         // OmpCritical's parallel region
	oxCritical            // ... the critical section
	oxSblock              // ... its structured block
	oxCriticalIBar        // ... the implicit barrier
	oxLockPar             // OmpLock's parallel region
	oxLockIBar            // ... its implicit barrier
	oxInitLock            // the lock API
	oxDestroyLock
	oxSetLock
	oxUnsetLock
	numOmp
)

// Region roles and attic region types of the OpenMP regions, as Score-P
// defines them.
const (
	roleWrapper = 2
	typeWrapper = 19
)

// ompRegions are the OpenMP regions: the construct (an OPARI2 name
// without its " @file:line"; empty for a lock-API wrapper, named by api),
// the source lines, the role and the attic region type.
var ompRegions = [numOmp]struct {
	construct, api string
	begin, end     uint32
	role, typ      uint8
}{
	{"parallel", "", 100, 103, otf2.RoleParallel, 5}, {"implicit barrier", "", 103, 103, otf2.RoleImplicitBarrier, 15},
	{"parallel", "", 110, 116, otf2.RoleParallel, 5}, {"barrier", "", 113, 113, otf2.RoleBarrier, 14},
	{"implicit barrier", "", 116, 116, otf2.RoleImplicitBarrier, 15},
	{"parallel", "", 120, 126, otf2.RoleParallel, 5}, {"critical", "", 122, 124, otf2.RoleCritical, 12},
	{"critical sblock", "", 122, 124, otf2.RoleCriticalSblock, 17},
	{"implicit barrier", "", 126, 126, otf2.RoleImplicitBarrier, 15},
	{"parallel", "", 130, 136, otf2.RoleParallel, 5}, {"implicit barrier", "", 136, 136, otf2.RoleImplicitBarrier, 15},
	{"", "omp_init_lock", 0, 0, roleWrapper, typeWrapper}, {"", "omp_destroy_lock", 0, 0, roleWrapper, typeWrapper},
	{"", "omp_set_lock", 0, 0, roleWrapper, typeWrapper}, {"", "omp_unset_lock", 0, 0, roleWrapper, typeWrapper},
}

// ompName is the name of OpenMP region x in program prog.
func ompName(x int, prog string) string {
	o := ompRegions[x]
	if o.api != "" {
		return o.api
	}
	return fmt.Sprintf("!$omp %s @%s.c:%d", o.construct, prog, o.begin)
}

// omp reports whether k is an OpenMP kind.
func (k Kind) omp() bool { return k >= OmpParallel && k <= OmpLock }

// ompOf lists the OpenMP regions a phase of kind k enters: the parallel
// region first, its implicit barrier second, then those inside, then
// those only the master enters (outside the parallel region).
func ompOf(k Kind) []int {
	switch k {
	case OmpParallel:
		return []int{oxParallel, oxParallelIBar}
	case OmpBarrier:
		return []int{oxBarrierPar, oxBarrierIBar, oxBarrier}
	case OmpCritical:
		return []int{oxCriticalPar, oxCriticalIBar, oxCritical, oxSblock}
	case OmpLock:
		return []int{oxLockPar, oxLockIBar, oxSetLock, oxUnsetLock, oxInitLock, oxDestroyLock}
	}
	return nil
}

// masterOnly reports whether OpenMP region x is entered by the master
// alone (outside the parallel region).
func masterOnly(x int) bool { return x == oxInitLock || x == oxDestroyLock }

// useOmp numbers the OpenMP regions the phases need, after the extra MPI
// regions, and the thread-team groups and communicators.
func (g *gen) useOmp() {
	var used [numOmp]bool
	for _, p := range g.phases {
		for _, x := range ompOf(p.Kind) {
			used[x], g.hasOmp = true, true
		}
	}
	for x := range g.omp {
		g.omp[x] = otf2.Undef32
		if used[x] {
			g.omp[x] = uint32(regPhase0 + len(g.names) + len(g.extras) + len(g.omps))
			g.omps = append(g.omps, x)
		}
	}
	g.ompGroup = groupSelf + 1
	for _, c := range g.setup {
		if c.split {
			g.ompGroup += uint32(c.rows())
		}
	}
}

// ompCompute sets the compute times of the threads of an OpenMP phase
// (phase number i): thread t of rank r computes Work + t×Imbalance, plus
// Delay on rank 0, plus a jitter drawn from the seed, the phase, the
// rank and the thread (the master's as a rank's in the other kinds).
func (g *gen) ompCompute(p *phaseInfo, i int) {
	p.ct = make([]uint64, g.n*g.nt)
	for r := range g.n {
		for t := range g.nt {
			c := uint64(p.Work) + uint64(t)*uint64(p.Imbalance)
			if r == 0 {
				c += uint64(p.Delay)
			}
			if p.Jitter > 0 {
				h := splitmix(g.s.Seed ^ uint64(i)<<40 ^ uint64(r))
				if t > 0 {
					h = splitmix(h ^ uint64(t))
				}
				c += h % uint64(p.Jitter)
			}
			p.ct[r*g.nt+t] = c
		}
	}
}

// ompLoc holds the times of one thread in an iteration of an OpenMP
// phase, in ticks from the iteration's start (see ompTimelines).
type ompLoc struct {
	S, E, A, R, I, X uint64
}

// ompRank holds the times of one rank's team in an iteration.
type ompRank struct {
	F, Emax, Imax, J, End uint64
}

// ompTimelines computes the iteration timelines of an OpenMP phase, in
// ticks from the iteration start, with gap g, lag L, T threads and
// compute time c_t of thread t (of the rank):
//
//	master      Enter(phase) 0; OmpLock: Enter(omp_init_lock) g, Leave 2g;
//	            THREAD_FORK F (g; OmpLock 3g)
//	thread t    THREAD_TEAM_BEGIN F+g+tL, Enter(parallel) F+2g+tL, then from
//	            S_t = F+3g+tL:
//	OmpParallel Enter(compute) S_t, Leave S_t+c_t; I_t = S_t+c_t+g
//	OmpBarrier  Enter(compute) S_t, Leave S_t+c_t, Enter(barrier) E_t = S_t+c_t+g,
//	            Leave Emax+g (Emax = max E), Enter(compute) Emax+2g,
//	            Leave Emax+2g+c_{T-1-t}; I_t = Emax+3g+c_{T-1-t}
//	OmpCritical Enter(critical) S_t, THREAD_ACQUIRE_LOCK A_t = max(S_t+g, R_{t-1}+g)
//	            (A_0 = S_0+g), Enter(sblock) A_t+g, Enter(compute) A_t+2g,
//	            Leave(compute) A_t+2g+c_t, Leave(sblock) A_t+3g+c_t,
//	            THREAD_RELEASE_LOCK R_t = A_t+4g+c_t, Leave(critical) R_t+g; I_t = R_t+2g
//	OmpLock     Enter(omp_set_lock) S_t, THREAD_ACQUIRE_LOCK A_t (as above),
//	            Leave(omp_set_lock) A_t+g, Enter(compute) A_t+2g, Leave A_t+2g+c_t,
//	            Enter(omp_unset_lock) A_t+3g+c_t, THREAD_RELEASE_LOCK R_t = A_t+4g+c_t,
//	            Leave(omp_unset_lock) R_t+g; I_t = R_t+2g
//	thread t    Enter(implicit barrier) I_t, Leave X_t = Imax+g+tL (Imax = max I),
//	            Leave(parallel) X_t+g, THREAD_TEAM_END X_t+2g
//	master      THREAD_JOIN J = X_{T-1}+3g; OmpLock: Enter(omp_destroy_lock) J+g,
//	            Leave J+2g; Leave(phase) End = J+g (OmpLock J+3g)
//
// The critical section's lock is lock 0 of the rank, acquired in thread
// order in every iteration, its acquisition order counting on across
// iterations and phases; OmpLock makes a new lock per iteration (ids 1,
// 2, ... in order), acquired in thread order (orders 1..T). The next
// iteration starts one gap after the last rank left the phase.
func (g *gen) ompTimelines(p *phaseInfo) {
	gp, lag, nt := g.gap, uint64(p.Lag), g.nt
	p.tl, p.rk = make([]ompLoc, g.n*nt), make([]ompRank, g.n)
	for r := range g.n {
		k := &p.rk[r]
		k.F = gp
		if p.Kind == OmpLock {
			k.F = 3 * gp
		}
		tl, c := p.tl[r*nt:(r+1)*nt], p.ct[r*nt:(r+1)*nt]
		for t := range tl {
			x := &tl[t]
			x.S = k.F + 3*gp + uint64(t)*lag
			switch p.Kind {
			case OmpParallel:
				x.I = x.S + c[t] + gp
			case OmpBarrier:
				x.E = x.S + c[t] + gp
				k.Emax = max(k.Emax, x.E)
			case OmpCritical, OmpLock:
				x.A = x.S + gp
				if t > 0 {
					x.A = max(x.A, tl[t-1].R+gp)
				}
				x.R = x.A + 4*gp + c[t]
				x.I = x.R + 2*gp
			}
		}
		for t := range tl {
			if p.Kind == OmpBarrier {
				tl[t].I = k.Emax + 3*gp + c[nt-1-t]
			}
			k.Imax = max(k.Imax, tl[t].I)
		}
		for t := range tl {
			tl[t].X = k.Imax + gp + uint64(t)*lag
		}
		k.J = tl[nt-1].X + 3*gp
		k.End = k.J + gp
		if p.Kind == OmpLock {
			k.End += 2 * gp
		}
	}
}

// ompLength is the iteration length of an OpenMP phase.
func (g *gen) ompLength(p *phaseInfo) uint64 {
	var end uint64
	for _, k := range p.rk {
		end = max(end, k.End)
	}
	return end + g.gap
}

// ompState is what a location's OpenMP iterations carry over from one to
// the next: the acquisitions of the critical section's lock so far (by
// the rank's team) and the locks made so far.
type ompState struct {
	critical uint32
	locks    uint32
	ev       otf2.Event
}

const (
	modelOpenMP    = otf2.ParadigmOpenMP // the model of the thread events
	lockCritical   = 0                   // the critical section's lock
	classForkJoin  = 1                   // OTF2_PARADIGM_CLASS_THREAD_FORK_JOIN
	ompLocsName    = "OpenMP"            // paradigm and the thread locations' group
	threadNameForm = "OMP thread %d"
)

// record writes a thread event of type typ with the given fields.
func (st *ompState) record(w *otf2.EventWriter, typ uint8, t uint64, args ...uint64) error {
	st.ev = otf2.Event{Type: typ, Time: t}
	copy(st.ev.Args[:], args)
	return w.Write(&st.ev)
}

// ompIteration writes one iteration of OpenMP phase p on thread th of
// rank r, starting at t, with the identifiers of id.
func (g *gen) ompIteration(w *otf2.EventWriter, p *phaseInfo, r, th int, t uint64, id *ids, st *ompState) error {
	gp, nt := g.gap, g.nt
	k, x, c := &p.rk[r], &p.tl[r*nt+th], p.ct[r*nt+th]
	regs := ompOf(p.Kind)
	reg := func(i int) uint32 { return id.region[g.omp[regs[i]]] }
	team := id.comm[g.teamComm+uint32(r)]
	if th == 0 {
		w.Enter(t, id.region[p.region])
		if p.Kind == OmpLock {
			w.Enter(t+gp, reg(4))
			w.Leave(t+2*gp, reg(4))
		}
		st.record(w, otf2.EvThreadFork, t+k.F, modelOpenMP, uint64(nt))
	}
	begin := t + k.F + gp + uint64(th)*uint64(p.Lag)
	st.record(w, otf2.EvThreadTeamBegin, begin, uint64(team))
	w.Enter(begin+gp, reg(0))
	s := t + x.S
	switch p.Kind {
	case OmpParallel:
		w.Enter(s, id.region[regCompute])
		w.Leave(s+c, id.region[regCompute])
	case OmpBarrier:
		w.Enter(s, id.region[regCompute])
		w.Leave(s+c, id.region[regCompute])
		w.Enter(t+x.E, reg(2))
		w.Leave(t+k.Emax+gp, reg(2))
		w.Enter(t+k.Emax+2*gp, id.region[regCompute])
		w.Leave(t+k.Emax+2*gp+p.ct[r*nt+nt-1-th], id.region[regCompute])
	case OmpCritical, OmpLock:
		lock, order := uint64(lockCritical), uint64(st.critical)+uint64(th)+1
		if p.Kind == OmpLock {
			lock, order = uint64(st.locks)+1, uint64(th)+1
		}
		a := t + x.A
		w.Enter(s, reg(2))
		st.record(w, otf2.EvThreadAcquireLock, a, modelOpenMP, lock, order)
		if p.Kind == OmpCritical {
			w.Enter(a+gp, reg(3))
		} else {
			w.Leave(a+gp, reg(2))
		}
		w.Enter(a+2*gp, id.region[regCompute])
		w.Leave(a+2*gp+c, id.region[regCompute])
		if p.Kind == OmpCritical {
			w.Leave(a+3*gp+c, reg(3))
		} else {
			w.Enter(a+3*gp+c, reg(3))
		}
		st.record(w, otf2.EvThreadReleaseLock, t+x.R, modelOpenMP, lock, order)
		if p.Kind == OmpCritical {
			w.Leave(t+x.R+gp, reg(2))
		} else {
			w.Leave(t+x.R+gp, reg(3))
		}
		if p.Kind == OmpCritical {
			st.critical += uint32(nt)
		} else {
			st.locks++
		}
	}
	w.Enter(t+x.I, reg(1))
	w.Leave(t+x.X, reg(1))
	w.Leave(t+x.X+gp, reg(0))
	err := st.record(w, otf2.EvThreadTeamEnd, t+x.X+2*gp, uint64(team))
	if th != 0 {
		return err // errors are sticky: the last record's tells
	}
	st.record(w, otf2.EvThreadJoin, t+k.J, modelOpenMP)
	if p.Kind == OmpLock {
		w.Enter(t+k.J+gp, reg(5))
		w.Leave(t+k.J+2*gp, reg(5))
	}
	return w.Leave(t+k.End, id.region[p.region])
}

// thread writes the events of thread th > 0 of rank r: its parts in the
// teams of the OpenMP phases, nothing else.
func (g *gen) thread(w *otf2.EventWriter, r, th int, id *ids) error {
	t := g.phStart
	var st ompState
	for i := range g.phases {
		p := &g.phases[i]
		for range g.s.Iterations {
			if p.Kind.omp() {
				if err := g.ompIteration(w, p, r, th, t, id, &st); err != nil {
					return err
				}
			}
			t += p.length
		}
	}
	return nil
}

// ompSummary adds the closed form of OpenMP phase p (call path path) on
// every thread (timelines at ompTimelines). Per iteration, on thread t
// of rank r (J, F, X_t, ... of ompTimelines):
//
//	omp_fork        Enter(parallel) − FORK = 2g + tL
//	omp_management  omp_fork + JOIN − Leave(parallel) = 2g + tL + 2g + (T−1−t)L
//	time            the parallel region's inclusive time is J − F on every
//	                thread (the fork and join amounts moved into it; the
//	                master's phase region keeps 2g, with OmpLock 4g); a
//	                worker has no time outside it
//	omp_ibarrier_wait  Imax − I_t at the implicit barrier
//	omp_ebarrier_wait  Emax − E_t at the explicit barrier (OmpBarrier)
//	omp_lock_contention_critical  R_{t−1} − S_t (release of the previous
//	                acquisition − Enter of the critical section) if positive,
//	                at the critical section (OmpCritical); the first
//	                acquisition of an iteration follows a release of the
//	                previous iteration, long before: no wait
//	omp_lock_contention_api  the same at omp_set_lock (OmpLock)
func (g *gen) ompSummary(s *Summary, p *phaseInfo, path string) {
	gp, iters, nt, lag := g.gap, uint64(g.s.Iterations), g.nt, uint64(p.Lag)
	main := path[:len(path)-len(p.Name)-1]
	prog := g.s.Program
	regs := ompOf(p.Kind)
	par := path + "/" + ompName(regs[0], prog)
	ib := par + "/" + ompName(regs[1], prog)
	body := map[Kind]uint64{OmpParallel: 2, OmpBarrier: 6, OmpCritical: 8, OmpLock: 8}[p.Kind]
	for r := range g.n {
		k, m := &p.rk[r], r*nt
		phase, events := 2*gp, uint64(4)
		if p.Kind == OmpLock {
			phase, events = 4*gp, 8
			s.addLoc(m, path+"/"+ompName(regs[4], prog), iters*gp, iters)
			s.addLoc(m, path+"/"+ompName(regs[5], prog), iters*gp, iters)
		}
		s.addLoc(m, path, iters*phase, iters)
		s.addLoc(m, main, iters*(p.length-k.End), 0)
		s.Events[m] += iters * events
		for t := range nt {
			i, x, c := m+t, &p.tl[m+t], p.ct[m+t]
			fork := 2*gp + uint64(t)*lag
			join := k.J - (x.X + gp)
			children := x.X - x.I // the implicit barrier
			s.addLoc(i, ib, iters*children, iters)
			s.waitLoc("omp_ibarrier_wait", ib, i, iters*(k.Imax-x.I))
			var wait uint64 // lock contention
			if t > 0 {
				wait = sub(p.tl[i-1].R, x.S)
			}
			switch p.Kind {
			case OmpParallel:
				s.addLoc(i, par+"/compute", iters*c, iters)
				children += c
			case OmpBarrier:
				c2 := p.ct[m+nt-1-t]
				eb := par + "/" + ompName(regs[2], prog)
				s.addLoc(i, par+"/compute", iters*(c+c2), 2*iters)
				s.addLoc(i, eb, iters*(k.Emax+gp-x.E), iters)
				s.waitLoc("omp_ebarrier_wait", eb, i, iters*(k.Emax-x.E))
				children += c + c2 + k.Emax + gp - x.E
			case OmpCritical:
				crit := par + "/" + ompName(regs[2], prog)
				sblock := crit + "/" + ompName(regs[3], prog)
				incl := x.R + gp - x.S
				s.addLoc(i, crit, iters*(incl-2*gp-c), iters)
				s.addLoc(i, sblock, iters*2*gp, iters)
				s.addLoc(i, sblock+"/compute", iters*c, iters)
				s.waitLoc("omp_lock_contention_critical", crit, i, iters*wait)
				children += incl
			case OmpLock:
				set := par + "/" + ompName(regs[2], prog)
				s.addLoc(i, set, iters*(x.A+gp-x.S), iters)
				s.addLoc(i, par+"/compute", iters*c, iters)
				s.addLoc(i, par+"/"+ompName(regs[3], prog), iters*2*gp, iters)
				s.waitLoc("omp_lock_contention_api", set, i, iters*wait)
				children += x.A + gp - x.S + c + 2*gp
			}
			s.addLoc(i, par, iters*(k.J-k.F-children), iters)
			s.waitLoc("omp_fork", par, i, iters*fork)
			s.waitLoc("omp_management", par, i, iters*(fork+join))
			s.Events[i] += iters * (6 + body)
		}
	}
}
