package tracegen

import "scout/localtrace/otf2"

// p2pIteration writes one iteration of the point-to-point kinds with
// their own call order (timelines at iterLength): LateSenderNB, Halo2D,
// Halo3D, Wavefront, Wavefront3D and MasterWorker; it is the
// iteration's number.
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
	case Wavefront, Wavefront3D:
		// the sweep from corner k: the north-west(-front) sweep over the
		// mirrored places (refill.go), v being rank r's
		m := p.cornerOf(it).mirror()
		pv, v := p.waves[m], mirror(m, p.dims, r)
		rank := func(v int) uint32 { return uint32(mirror(m, p.dims, v)) }
		wg := newWaveGrid(p.dims)
		comm := id.comm[p.comm.commOf(r)]
		x := t + gp
		for a := range wg.n {
			if !wg.up(v, a) {
				continue
			}
			from := v - wg.stride[a]
			mr := max(x+gp, t+g.waveSend(pv, &wg, from, a)+2*gp)
			w.Enter(x, id.region[regRecv])
			w.MpiRecv(mr, rank(from), comm, tagWavefront, msgBytes)
			w.Leave(mr+gp, id.region[regRecv])
			x = mr + 2*gp
		}
		end = compute(x)
		for a := range wg.n {
			if !wg.down(v, a) {
				continue
			}
			w.Enter(end+gp, id.region[regSend])
			w.MpiSend(end+2*gp, rank(v+wg.stride[a]), comm, tagWavefront, msgBytes)
			w.Leave(end+3*gp, id.region[regSend])
			end += 3 * gp
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
//     (Wavefront3D) and MasterWorker results can have it (wavefront
//     phases: wavefrontStep): every other receive is
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

// wavefrontSummary adds the closed form of a wavefront phase on rank r
// and returns the phase region's inclusive time and event count summed
// over the iterations (their corners differ); the refills: refills.
func (g *gen) wavefrontSummary(s *Summary, p *phaseInfo, r int, path string) (incl, events uint64) {
	for m, n := range p.sweepCounts(uint64(g.s.Iterations)) {
		if n > 0 {
			in, ev := g.wavefrontStep(s, p.waves[m], mirror(m, p.dims, r), r, path, n)
			incl, events = incl+n*in, events+n*ev
		}
	}
	return incl, events
}

// waveRecv is one receive of a place in a north-west(-front) sweep: the
// Enter of its MPI_Recv, its Late Sender time and the time of the
// message's send event, all from the iteration start.
type waveRecv struct {
	enter, ls, sent uint64
}

// waveRecvs is the closed form of the receives of place v in an
// iteration of a north-west(-front) sweep with p's timeline: the Enter
// of compute after them, the time in MPI_Recv, the receives by axis
// (only those of the axes with an upstream neighbour are set), their
// number, their Late Sender time and its wrong-order part. A receive's
// Late Sender counts in wrong order, once, at the first later receive
// whose message was sent before its own (the analysis keeps it until
// then).
func (g *gen) waveRecvs(p *phaseInfo, v int) (x, inRecv uint64, recvs [3]waveRecv, nrecv, ls, wo uint64) {
	gp := g.gap
	w := newWaveGrid(p.dims)
	x = gp
	var pending [3]bool // axes whose Late Sender may still be in wrong order
	for a := range w.n {
		if !w.up(v, a) {
			continue
		}
		send := g.waveSend(p, &w, v-w.stride[a], a)
		m := max(x+gp, send+2*gp)
		rc := waveRecv{enter: x, ls: sub(send, x), sent: send + gp}
		for b := range a {
			if pending[b] && recvs[b].sent > rc.sent {
				wo += recvs[b].ls
				pending[b] = false
			}
		}
		recvs[a], pending[a] = rc, rc.ls > 0
		nrecv, inRecv, ls = nrecv+1, inRecv+m+gp-x, ls+rc.ls
		x = m + 2*gp
	}
	return x, inRecv, recvs, nrecv, ls, wo
}

// waveLateSender is the Late Sender time of place v in an iteration of
// a north-west(-front) sweep with p's timeline.
func (g *gen) waveLateSender(p *phaseInfo, v int) uint64 {
	_, _, _, _, ls, _ := g.waveRecvs(p, v)
	return ls
}

// wavefrontStep adds the closed form of n iterations of a
// north-west(-front) sweep with p's timeline (a sweep's mirrored one) at
// place v, for rank r, and returns the phase region's inclusive time
// and event count per iteration.
func (g *gen) wavefrontStep(s *Summary, p *phaseInfo, v, r int, path string, n uint64) (incl, events uint64) {
	gp := g.gap
	w := newWaveGrid(p.dims)
	_, inRecv, _, nrecv, ls, wo := g.waveRecvs(p, v)
	var nsend, lr uint64
	end := p.aux[v]
	for a := range w.n {
		if !w.down(v, a) {
			continue
		}
		// Late Receiver: the downstream neighbour enters its receive
		// while this MPI_Send (entered at send, left at send+2g) is in
		// progress
		send := g.waveSend(p, &w, v, a)
		_, _, recvs, _, _, _ := g.waveRecvs(p, v+w.stride[a])
		if recv := recvs[a].enter; send < recv && recv < send+2*gp {
			lr += recv - send
		}
		nsend, end = nsend+1, end+3*gp
	}
	s.wait("mpi_latereceiver", path+"/MPI_Send", r, n*lr)
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
