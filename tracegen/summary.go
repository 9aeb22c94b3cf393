package tracegen

// summary computes the event counts and the expected analysis results in
// closed form from the phase parameters (see the timelines at
// iterLength), independently of the event writer.
func (g *gen) summary() *Summary {
	s := &Summary{Events: make([]uint64, g.n*g.nt), Threads: g.nt, Resolution: resolution, Time: map[string][]float64{},
		Visits: map[string][]uint64{}, Waits: map[string]map[string][]float64{}}
	gp := g.gap
	iters := uint64(g.s.Iterations)
	root := g.regionName(regProgram)
	main := root + "/main"
	_, setupEvents := g.setupTimes()
	_, freeEvents := g.freeTimes()
	for r := range g.n {
		// program, main, MPI_Init with 4 inner records, Comm_rank, Comm_size;
		// MPI_Finalize with 4 inner records, Leave(main), ProgramEnd.
		s.Events[r*g.nt] = 12 + 8 + setupEvents + freeEvents
		s.add(r, root, 2*gp, 1)
		s.add(r, root+"/main", 5*gp, 1) // plus the idle time in each iteration, below
		s.add(r, main+"/MPI_Init", 4*gp, 1)
		s.add(r, main+"/MPI_Comm_rank", gp, 1)
		s.add(r, main+"/MPI_Comm_size", gp, 1)
		for _, c := range g.setup { // see commSetup
			if c.split {
				s.add(r, main+"/MPI_Comm_split", 3*gp, 1)
				s.add(r, main, gp, 0)
			} else {
				s.add(r, main+"/MPI_Dims_create", gp, 1)
				s.add(r, main+"/MPI_Cart_create", 3*gp, 1)
				s.add(r, main, 2*gp, 0)
			}
		}
	}
	for i := len(g.setup) - 1; i >= 0; i-- {
		for r := range g.n {
			s.add(r, main+"/MPI_Comm_free", 3*gp, 1)
			s.add(r, main, gp, 0)
		}
	}
	for r := range g.n {
		s.add(r, main+"/MPI_Finalize", 4*gp, 1)
	}
	for i := range g.phases {
		p := &g.phases[i]
		path := main + "/" + p.Name
		if p.Kind.omp() {
			g.ompSummary(s, p, path)
			continue
		}
		for r := range g.n {
			c := p.c[r]
			s.add(r, path+"/compute", iters*c, iters)
			if p.Kind.wavefront() { // the iterations' corners differ: totals
				incl, events := g.wavefrontSummary(s, p, r, path)
				s.Events[r*g.nt] += events
				s.add(r, main, iters*p.length-incl, 0)
				continue
			}
			var incl uint64 // inclusive time of the phase region per iteration
			events := uint64(8)
			switch p.Kind {
			case Compute:
				s.add(r, path, iters*2*gp, iters)
				incl, events = 2*gp+c, 4
			case LateSender:
				incl, events = g.lateSender(s, p, r, path)
			case Ring:
				left := (r + g.n - 1) % g.n
				wait := sub(p.c[left], c)
				s.add(r, path, iters*3*gp, iters)
				s.add(r, path+"/MPI_Sendrecv", iters*(wait+3*gp), iters)
				s.wait("mpi_latesender", path+"/MPI_Sendrecv", r, iters*wait)
				incl = max(c, p.c[left]) + 6*gp
			case DelayChain:
				incl, events = g.chainSummary(s, p, r, path)
			case Allreduce, Barrier, DelayBarrier, DelayNxN:
				call, metric := "/MPI_Allreduce", "mpi_wait_nxn"
				if p.Kind == Barrier || p.Kind == DelayBarrier {
					call, metric = "/MPI_Barrier", "mpi_barrier_wait"
				}
				wait := p.cmax - c
				s.add(r, path, iters*3*gp, iters)
				s.add(r, path+call, iters*(wait+2*gp), iters)
				s.wait(metric, path+call, r, iters*wait)
				incl = p.cmax + 5*gp
			case Bcast:
				wait := sub(p.c[0], c)
				s.add(r, path, iters*3*gp, iters)
				s.add(r, path+"/MPI_Bcast", iters*(wait+2*gp), iters)
				if r != 0 {
					s.wait("mpi_latebroadcast", path+"/MPI_Bcast", r, iters*wait)
				}
				incl = max(c, p.c[0]) + 5*gp
			case LateSenderNB, Halo2D, Halo3D, MasterWorker:
				incl, events = g.p2pSummary(s, p, r, path)
			default:
				incl = g.collSummary(s, p, r, path)
			}
			s.Events[r*g.nt] += iters * events
			s.add(r, main, iters*(p.length-incl), 0)
		}
	}
	g.refills(s)
	if g.nt == 1 && g.delayExact() { // (with threads: no closed form of the root causes)
		g.delays(s)
	}
	return s
}

// chainSummary adds the closed form of the times and wait states of a
// DelayChain phase on rank r and returns the phase region's inclusive
// time and event count per iteration (the delay costs: delays).
func (g *gen) chainSummary(s *Summary, p *phaseInfo, r int, path string) (incl, events uint64) {
	gp, iters := g.gap, uint64(g.s.Iterations)
	phase, events := 2*gp, uint64(4)
	if r > 0 {
		recv, send := 2*gp+p.c[r], g.chainSend(p, r-1)
		s.add(r, path+"/MPI_Recv", iters*(p.aux[r]+gp-recv), iters)
		s.wait("mpi_latesender", path+"/MPI_Recv", r, iters*sub(send, recv))
		if recv > send && recv < send+2*gp { // entered while the send ran
			s.wait("mpi_latereceiver", path+"/MPI_Send", r-1, iters*(recv-send))
		}
		phase, events = phase+gp, events+3
	}
	if r < g.n-1 {
		s.add(r, path+"/MPI_Send", iters*2*gp, iters)
		phase, events = phase+gp, events+3
	}
	s.add(r, path, iters*phase, iters)
	return g.chainLeave(p, r), events
}

// collSummary adds the closed form of the collective kinds added after
// Bcast on rank r and returns the phase region's inclusive time per
// iteration (8 events). The wait is the time from the rank's
// MpiCollectiveBegin to the begin it waits for, which the call's
// CollEnd follows by one gap:
//
//	Reduce, Gather  mpi_earlyreduce on the root 0: max c - c_0 (the last sender; all ranks send)
//	Scatter         mpi_latebroadcast on the others: c_0 - c_r if positive
//	Scan            mpi_earlyscan: max(c_0..c_r) - c_r
//	Allgather,      mpi_wait_nxn: max c - c_r
//	Alltoall
//	RowAllreduce    mpi_wait_nxn: max c of the row - c_r (rows of one rank: none, the
//	                analysis skips collectives on single-rank communicators)
func (g *gen) collSummary(s *Summary, p *phaseInfo, r int, path string) uint64 {
	gp, iters, c := g.gap, uint64(g.s.Iterations), p.c[r]
	var call, metric string
	var until uint64 // compute time of the rank waited for
	switch p.Kind {
	case Reduce, Gather:
		call, metric, until = "/MPI_Reduce", "mpi_earlyreduce", c
		if p.Kind == Gather {
			call = "/MPI_Gather"
		}
		if r == 0 {
			until = p.cmax
		}
	case Scatter:
		call, metric, until = "/MPI_Scatter", "mpi_latebroadcast", max(c, p.c[0])
	case Scan:
		call, metric, until = "/MPI_Scan", "mpi_earlyscan", p.aux[r]
	case Allgather, Alltoall:
		call, metric, until = "/MPI_Allgather", "mpi_wait_nxn", p.cmax
		if p.Kind == Alltoall {
			call = "/MPI_Alltoall"
		}
	case RowAllreduce:
		call, metric, until = "/MPI_Allreduce", "mpi_wait_nxn", p.aux[r/p.dims[1]]
	}
	wait := until - c
	s.add(r, path, iters*3*gp, iters)
	s.add(r, path+call, iters*(wait+2*gp), iters)
	s.wait(metric, path+call, r, iters*wait)
	return until + 5*gp
}

// lateSender adds the closed form of a LateSender phase on rank r and
// returns the phase region's inclusive time and event count per iteration.
func (g *gen) lateSender(s *Summary, p *phaseInfo, r int, path string) (incl, events uint64) {
	gp, iters := g.gap, uint64(g.s.Iterations)
	c0, c1 := p.c[0], p.c[1]
	switch r {
	case 0:
		// Late Receiver: rank 1 enters MPI_Recv while MPI_Send (S to S+2g) runs
		send, recv := 2*gp+c0, 2*gp+c1
		s.add(r, path, iters*3*gp, iters)
		s.add(r, path+"/MPI_Send", iters*2*gp, iters)
		if recv > send && recv < send+2*gp {
			s.wait("mpi_latereceiver", path+"/MPI_Send", r, iters*(recv-send))
		}
		return 5*gp + c0, 7
	case 1:
		// MpiRecv at M = max(R+g, S+2g), one gap before the Leave
		send, recv := 2*gp+c0, 2*gp+c1
		wait := sub(send, recv)
		inRecv := max(recv+gp, send+2*gp) - recv + gp
		s.add(r, path, iters*3*gp, iters)
		s.add(r, path+"/MPI_Recv", iters*inRecv, iters)
		s.wait("mpi_latesender", path+"/MPI_Recv", r, iters*wait)
		return 2*gp + c1 + inRecv + gp, 7
	}
	s.add(r, path, iters*2*gp, iters)
	return 2*gp + p.c[r], 4
}

// sub is a - b, or 0 if b >= a.
func sub(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return 0
}

// add adds ticks of exclusive time and visits to call path cp of rank r
// (its master thread).
func (s *Summary) add(r int, cp string, ticks, visits uint64) {
	s.addLoc(r*s.Threads, cp, ticks, visits)
}

// addLoc adds ticks of exclusive time and visits to call path cp of
// location index i (see Summary).
func (s *Summary) addLoc(i int, cp string, ticks, visits uint64) {
	t, ok := s.Time[cp]
	if !ok {
		t = make([]float64, len(s.Events))
		s.Time[cp] = t
		s.Visits[cp] = make([]uint64, len(s.Events))
		s.Callpaths = append(s.Callpaths, cp)
	}
	t[i] += float64(ticks) / float64(s.Resolution)
	s.Visits[cp][i] += visits
}

// wait adds ticks of waiting time of metric at call path cp of rank r
// (its master thread).
func (s *Summary) wait(metric, cp string, r int, ticks uint64) {
	s.waitLoc(metric, cp, r*s.Threads, ticks)
}

// waitLoc adds ticks of metric at call path cp of location index i.
func (s *Summary) waitLoc(metric, cp string, i int, ticks uint64) {
	if ticks != 0 {
		s.addValue(metric, cp, i, float64(ticks)/float64(s.Resolution))
	}
}

// addValue adds v to metric at call path cp of location index i.
func (s *Summary) addValue(metric, cp string, i int, v float64) {
	m := s.Waits[metric]
	if m == nil {
		m = map[string][]float64{}
		s.Waits[metric] = m
	}
	if m[cp] == nil {
		m[cp] = make([]float64, len(s.Events))
	}
	m[cp][i] += v
}
