package tracegen

import "scout/localtrace/otf2"

// p2pIteration writes one iteration of the point-to-point kinds with
// their own call order (timelines at iterLength): LateSenderNB, Halo2D,
// Halo3D, Wavefront and MasterWorker; it is the iteration's number.
func (g *gen) p2pIteration(w *otf2.EventWriter, p *phaseInfo, r, it int, t uint64, id *ids, req *uint64) error {
	gp, c := g.gap, p.c[r]
	w.Enter(t, id.region[p.region])
	compute := func(at uint64) uint64 { // returns the Leave
		w.Enter(at, id.region[regCompute])
		w.Leave(at+c, id.region[regCompute])
		return at + c
	}
	call := func(at uint64, reg uint32, ev *otf2.Event) uint64 { // returns the Leave
		w.Enter(at, id.region[reg])
		ev.Time = at + gp
		w.Write(ev)
		w.Leave(at+2*gp, id.region[reg])
		return at + 2*gp
	}
	var end uint64 // Leave of the last call
	switch p.Kind {
	case LateSenderNB:
		switch r {
		case 0:
			s := compute(t+gp) + gp
			*req++
			end = call(s, g.extra[exIsend], isend(1, id.world, tagLateSender, msgBytes, *req))
			end = call(end+gp, g.extra[exWait], &otf2.Event{Type: otf2.EvMpiIsendComplete, Args: [otf2.MaxArgs]uint64{*req}})
		case 1:
			*req++
			call(t+gp, g.extra[exIrecv], &otf2.Event{Type: otf2.EvMpiIrecvRequest, Args: [otf2.MaxArgs]uint64{*req}})
			wait := compute(t+4*gp) + gp
			m := max(wait+gp, t+2*gp+p.c[0]+2*gp)
			w.Enter(wait, id.region[g.extra[exWait]])
			ev := irecv(0, id.world, tagLateSender, msgBytes, *req)
			ev.Time = m
			w.Write(ev)
			end = m + gp
			w.Leave(end, id.region[g.extra[exWait]])
		default:
			end = compute(t + gp)
		}
	case Halo2D, Halo3D:
		var buf [6]int
		nb := neighbours(p.dims, r, buf[:0])
		k := uint64(len(nb))
		comm := id.comm[p.comm.commOf(r)]
		first := *req + 1
		end = compute(t + gp)
		for j := range nb {
			end = call(end+gp, g.extra[exIrecv], &otf2.Event{Type: otf2.EvMpiIrecvRequest,
				Args: [otf2.MaxArgs]uint64{first + uint64(j)}})
		}
		for j, n := range nb {
			end = call(end+gp, g.extra[exIsend], isend(uint32(n), comm, tagHalo, haloBytes, first+k+uint64(j)))
		}
		w.Enter(end+gp, id.region[g.extra[exWaitall]])
		d := t + p.aux[r]
		for j, n := range nb {
			ev := irecv(uint32(n), comm, tagHalo, haloBytes, first+uint64(j))
			ev.Time = d + uint64(j)*gp
			w.Write(ev)
		}
		for j := range nb {
			ev := otf2.Event{Type: otf2.EvMpiIsendComplete, Time: d + (k+uint64(j))*gp,
				Args: [otf2.MaxArgs]uint64{first + k + uint64(j)}}
			w.Write(&ev)
		}
		end = d + 2*k*gp
		w.Leave(end, id.region[g.extra[exWaitall]])
		*req += 2 * k
	case Wavefront:
		// the sweep from corner k: the north-west sweep over the mirrored
		// places (refill.go), v being rank r's
		k := p.cornerOf(it)
		pv, v := p.waves[k], mirror(k, p.dims, r)
		rank := func(v int) uint32 { return uint32(mirror(k, p.dims, v)) }
		d0, d1 := p.dims[0], p.dims[1]
		i, j := v/d1, v%d1
		comm := id.comm[p.comm.commOf(r)]
		x := t + gp
		recv := func(from int, ev uint64) {
			m := max(x+gp, ev+gp)
			w.Enter(x, id.region[regRecv])
			w.MpiRecv(m, rank(from), comm, tagWavefront, msgBytes)
			w.Leave(m+gp, id.region[regRecv])
			x = m + 2*gp
		}
		if i > 0 {
			recv(v-d1, t+pv.aux[v-d1]+2*gp)
		}
		if j > 0 {
			recv(v-1, t+g.waveSendRight(pv, v-1, i+1 < d0)+gp)
		}
		end = compute(x)
		send := func(to int) {
			w.Enter(end+gp, id.region[regSend])
			w.MpiSend(end+2*gp, rank(to), comm, tagWavefront, msgBytes)
			w.Leave(end+3*gp, id.region[regSend])
			end += 3 * gp
		}
		if i < d0-1 {
			send(v + d1)
		}
		if j < d1-1 {
			send(v + 1)
		}
	case MasterWorker:
		if r == 0 {
			end = compute(t + gp)
			for wk := 1; wk < g.n; wk++ {
				w.Enter(end+gp, id.region[regSend])
				w.MpiSend(end+2*gp, uint32(wk), id.world, tagTask, msgBytes)
				w.Leave(end+3*gp, id.region[regSend])
				end += 3 * gp
			}
			for wk := 1; wk < g.n; wk++ {
				x := end + gp
				m := max(x+gp, t+p.aux[wk]+3*gp)
				w.Enter(x, id.region[regRecv])
				w.MpiRecv(m, uint32(wk), id.world, tagResult, msgBytes)
				end = m + gp
				w.Leave(end, id.region[regRecv])
			}
			break
		}
		a := t + g.taskSend(p, r) + 2*gp
		w.Enter(t+gp, id.region[regRecv])
		w.MpiRecv(a, 0, id.world, tagTask, msgBytes)
		w.Leave(a+gp, id.region[regRecv])
		f := compute(a + 2*gp)
		w.Enter(f+gp, id.region[regSend])
		w.MpiSend(f+2*gp, 0, id.world, tagResult, msgBytes)
		end = f + 3*gp
		w.Leave(end, id.region[regSend])
	}
	return w.Leave(end+gp, id.region[p.region])
}

// isend is an MpiIsend record (without time) of request req.
func isend(peer, comm, tag uint32, bytes, req uint64) *otf2.Event {
	return &otf2.Event{Type: otf2.EvMpiIsend, Args: [otf2.MaxArgs]uint64{uint64(peer), uint64(comm), uint64(tag), bytes, req}}
}

// irecv is an MpiIrecv record (without time) completing request req.
func irecv(peer, comm, tag uint32, bytes, req uint64) *otf2.Event {
	return &otf2.Event{Type: otf2.EvMpiIrecv, Args: [otf2.MaxArgs]uint64{uint64(peer), uint64(comm), uint64(tag), bytes, req}}
}

// p2pSummary adds the closed form of a phase of the kinds p2pIteration
// writes on rank r and returns the phase region's inclusive time and
// event count per iteration. The wait states follow the analysis rules:
//
//   - Late Sender (mpi_latesender) of a receive: the Enter of the send
//     call minus the Enter of the call completing the receive, if
//     positive (the message always arrives before that call leaves); in
//     MPI_Waitall only the largest of the call's receives counts.
//   - Wrong order (mpi_latesender_wo, here always mpi_lswo_different):
//     a Late Sender whose message was sent after a message that the rank
//     receives later counts again, at the call path of its receive, when
//     that later receive completes. Only receives of one iteration can be
//     in wrong order (every iteration sends after the previous one
//     ended); the analysis remembers the last 100 Late Senders, so the
//     closed form replays that buffer for an iteration (older entries
//     are always evicted first, so they do not matter).
//   - Late Receiver (mpi_latereceiver) of a blocking MPI_Send: the
//     Enter of the receive call minus the Enter of MPI_Send, if the
//     receive was entered while the send was in progress. Only Wavefront
//     and MasterWorker results can have it: every other receive is
//     posted before the send starts, and in Halo2D/3D a receive posted
//     during the sender's MPI_Waitall implies a Late Sender in that
//     call, which excludes Late Receivers there.
func (g *gen) p2pSummary(s *Summary, p *phaseInfo, r int, path string) (incl, events uint64) {
	gp, iters, c := g.gap, uint64(g.s.Iterations), p.c[r]
	add := func(call string, ticks, visits uint64) { s.add(r, path+call, iters*ticks, iters*visits) }
	switch p.Kind {
	case LateSenderNB:
		switch r {
		case 0:
			add("", 4*gp, 1)
			add("/MPI_Isend", 2*gp, 1)
			add("/MPI_Wait", 2*gp, 1)
			return 8*gp + c, 10
		case 1:
			send, wait := 2*gp+p.c[0], 5*gp+c
			m := max(wait+gp, send+2*gp)
			add("", 4*gp, 1)
			add("/MPI_Irecv", 2*gp, 1)
			add("/MPI_Wait", m+gp-wait, 1)
			s.wait("mpi_latesender", path+"/MPI_Wait", r, iters*sub(send, wait))
			return m + 2*gp, 10
		}
		add("", 2*gp, 1)
		return 2*gp + c, 4
	case Halo2D, Halo3D:
		var buf [6]int
		nb := neighbours(p.dims, r, buf[:0])
		k := uint64(len(nb))
		wait, d := g.haloWaitall(p, r, len(nb)), p.aux[r]
		var ls uint64 // the largest wait for a neighbour's MPI_Isend
		for _, n := range nb {
			ls = max(ls, sub(g.haloSendEnter(p, n, r), wait))
		}
		add("", (2*k+3)*gp, 1)
		add("/MPI_Irecv", 2*k*gp, k)
		add("/MPI_Isend", 2*k*gp, k)
		add("/MPI_Waitall", d+2*k*gp-wait, 1)
		s.wait("mpi_latesender", path+"/MPI_Waitall", r, iters*ls)
		return d + (2*k+1)*gp, 6 + 8*k
	case MasterWorker:
		return g.masterWorkerSummary(s, p, r, path)
	}
	return 0, 0
}

// wavefrontRecvLeft is the Enter of rank r's MPI_Recv from its left
// neighbour (rank r has one).
func (g *gen) wavefrontRecvLeft(p *phaseInfo, r int) uint64 {
	gp := g.gap
	if r < p.dims[1] {
		return gp
	}
	return max(2*gp, p.aux[r-p.dims[1]]+3*gp) + 2*gp
}

// wavefrontSummary adds the closed form of a Wavefront phase on rank r
// and returns the phase region's inclusive time and event count summed
// over the iterations (their corners differ); the refills: refills.
func (g *gen) wavefrontSummary(s *Summary, p *phaseInfo, r int, path string) (incl, events uint64) {
	for k, n := range p.sweepCounts(uint64(g.s.Iterations)) {
		if n > 0 {
			in, ev := g.wavefrontStep(s, p.waves[k], mirror(Corner(k), p.dims, r), r, path, n)
			incl, events = incl+n*in, events+n*ev
		}
	}
	return incl, events
}

// waveRecvs is the closed form of the receives of place v in an
// iteration of a north-west sweep with p's timeline: the Enter of
// compute after them, the time in MPI_Recv, the receives, their Late
// Sender time and its wrong-order part.
func (g *gen) waveRecvs(p *phaseInfo, v int) (x, inRecv, nrecv, ls, wo uint64) {
	gp := g.gap
	d0, d1 := p.dims[0], p.dims[1]
	i, j := v/d1, v%d1
	x = gp
	upLS, upSent := uint64(0), uint64(0) // the receive from above: its Late Sender and send event
	if i > 0 {
		f := p.aux[v-d1] // the sender's MPI_Send down is entered at f+g
		m := max(x+gp, f+3*gp)
		nrecv, inRecv, upLS, upSent = 1, m+gp-x, sub(f+gp, x), f+2*gp
		ls += upLS
		x = m + 2*gp
	}
	if j > 0 {
		send := g.waveSendRight(p, v-1, i+1 < d0)
		m := max(x+gp, send+2*gp)
		nrecv, inRecv = nrecv+1, inRecv+m+gp-x
		ls += sub(send, x)
		if upLS > 0 && upSent > send+gp {
			wo = upLS // the message from above was sent later than this one
		}
		x = m + 2*gp
	}
	return x, inRecv, nrecv, ls, wo
}

// waveLateSender is the Late Sender time of place v in an iteration of
// a north-west sweep with p's timeline.
func (g *gen) waveLateSender(p *phaseInfo, v int) uint64 {
	_, _, _, ls, _ := g.waveRecvs(p, v)
	return ls
}

// wavefrontStep adds the closed form of n iterations of a north-west
// sweep with p's timeline (a sweep's mirrored one) at place v, for rank
// r, and returns the phase region's inclusive time and event count per
// iteration.
func (g *gen) wavefrontStep(s *Summary, p *phaseInfo, v, r int, path string, n uint64) (incl, events uint64) {
	gp := g.gap
	d0, d1 := p.dims[0], p.dims[1]
	i, j := v/d1, v%d1
	x, inRecv, nrecv, ls, wo := g.waveRecvs(p, v)
	var nsend uint64
	f := x + p.c[v] // = p.aux[v]
	end := f
	if i < d0-1 {
		nsend, end = 1, end+3*gp
	}
	if j < d1-1 {
		// Late Receiver: the right neighbour enters its receive while this
		// MPI_Send (entered at end+g, left at end+3g) is in progress
		nsend, end = nsend+1, end+3*gp
		if recv := g.wavefrontRecvLeft(p, v+1); end > recv && recv > end-2*gp {
			s.wait("mpi_latereceiver", path+"/MPI_Send", r, n*(recv-(end-2*gp)))
		}
	}
	s.add(r, path, n*(nrecv+nsend+2)*gp, n)
	if nrecv > 0 {
		s.add(r, path+"/MPI_Recv", n*inRecv, n*nrecv)
		s.wait("mpi_latesender", path+"/MPI_Recv", r, n*ls)
		s.wait("mpi_latesender_wo", path+"/MPI_Recv", r, n*wo)
		s.wait("mpi_lswo_different", path+"/MPI_Recv", r, n*wo)
	}
	if nsend > 0 {
		s.add(r, path+"/MPI_Send", n*2*gp*nsend, n*nsend)
	}
	return end + gp, 4 + 3*(nrecv+nsend)
}

// wrongOrderCapacity is how many Late Sender instances the analysis
// remembers per location for the wrong-order check.
const wrongOrderCapacity = 100

func (g *gen) masterWorkerSummary(s *Summary, p *phaseInfo, r int, path string) (incl, events uint64) {
	gp, iters := g.gap, uint64(g.s.Iterations)
	if r > 0 {
		task := g.taskSend(p, r) // Enter of the master's MPI_Send; the worker waits from g
		s.add(r, path, iters*4*gp, iters)
		s.add(r, path+"/MPI_Recv", iters*(task+2*gp), iters)
		s.add(r, path+"/MPI_Send", iters*2*gp, iters)
		s.wait("mpi_latesender", path+"/MPI_Recv", r, iters*(task-gp))
		return p.aux[r] + 4*gp, 10
	}
	type lateSender struct{ sent, idle uint64 }
	var buf []lateSender // the analysis' Late Sender buffer, this iteration's entries
	workers := uint64(g.n - 1)
	var inRecv, ls, wo uint64
	x := g.taskSend(p, g.n)
	for w := 1; w < g.n; w++ {
		f := p.aux[w] // the worker's MPI_Send: Enter f+g, MpiSend f+2g, Leave f+3g
		m := max(x+gp, f+3*gp)
		inRecv += m + gp - x
		if idle := sub(f+gp, x); idle > 0 {
			ls += idle
			if len(buf) == wrongOrderCapacity {
				buf = buf[1:]
			}
			buf = append(buf, lateSender{f + 2*gp, idle})
		}
		kept := buf[:0]
		for _, e := range buf {
			if e.sent > f+2*gp {
				wo += e.idle
			} else {
				kept = append(kept, e)
			}
		}
		buf = kept
		if x > f+gp && x < f+3*gp {
			s.wait("mpi_latereceiver", path+"/MPI_Send", w, iters*(x-f-gp))
		}
		x = m + 2*gp
	}
	s.add(r, path, iters*(2*workers+2)*gp, iters)
	s.add(r, path+"/MPI_Send", iters*2*gp*workers, iters*workers)
	s.add(r, path+"/MPI_Recv", iters*inRecv, iters*workers)
	s.wait("mpi_latesender", path+"/MPI_Recv", r, iters*ls)
	s.wait("mpi_latesender_wo", path+"/MPI_Recv", r, iters*wo)
	s.wait("mpi_lswo_different", path+"/MPI_Recv", r, iters*wo)
	return x, 4 + 6*workers
}
