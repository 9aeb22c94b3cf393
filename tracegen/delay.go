package tracegen

// The closed form of the root-cause analysis (Scalasca's delay costs
// and wait-state propagation, doc/rootcause/spec.md) for scenarios made
// of the delay kinds. It needs every interval between two
// synchronisation points to be known exactly, which holds when:
//
//   - every phase is DelayBarrier, DelayNxN or DelayChain, and a
//     DelayChain phase is the last one (so that each phase's first
//     iteration starts after a synchronisation of all ranks, MPI_Init
//     or a collective, which all ranks leave at the same time: what
//     came before it cancels out of every difference of time maps);
//   - in a DelayChain phase every receive waits (a Late Sender on every
//     rank r > 0): then every receive is a synchronisation point, no
//     send is a Late Receiver, and the waits add up along the chain.
//
// Other scenarios get no root-cause metrics in their closed form.

// delayExact reports whether the scenario's root causes have the closed
// form of delays.
func (g *gen) delayExact() bool {
	if len(g.phases) == 0 {
		return false
	}
	for i, p := range g.phases {
		switch p.Kind {
		case DelayBarrier, DelayNxN:
		case DelayChain:
			if i != len(g.phases)-1 {
				return false
			}
			for r := 1; r < g.n; r++ {
				if g.chainSend(&g.phases[i], r-1) <= 2*g.gap+p.c[r] {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// delays adds the closed-form root-cause metrics of the delay kinds.
//
// DelayBarrier, DelayNxN: the delayer of every instance is the last rank
// D to enter (the lowest one if several enter last). Its previous
// synchronisation point with every other rank is the previous collective
// end (or MPI_Init), which all ranks left at the same time, and nobody
// waits in between; so the time maps since then differ only in the
// compute times, every waiting rank r puts dd = c_D − c_r on D's
// "compute", with scale wait/dd = 1, and delay_barrier (delay_n2n) on
// D's compute is the sum of the waits, Σ_r (c_D − c_r), per iteration.
// There are no propagating waits, so no long-term costs.
//
// DelayChain: see chainDelays.
func (g *gen) delays(s *Summary) {
	root := g.regionName(regProgram)
	iters := uint64(g.s.Iterations)
	for i := range g.phases {
		p := &g.phases[i]
		path := root + "/main/" + p.Name
		switch p.Kind {
		case DelayBarrier, DelayNxN:
			metric := "delay_barrier"
			if p.Kind == DelayNxN {
				metric = "delay_n2n"
			}
			d := 0
			for r, c := range p.c {
				if c > p.c[d] {
					d = r
				}
			}
			var sum uint64
			for _, c := range p.c {
				sum += p.c[d] - c
			}
			if g.n > 1 { // collectives on one rank are not analysed
				s.wait(metric, path+"/compute", d, iters*sum)
			}
		case DelayChain:
			if iters > 0 {
				g.chainDelays(s, p, path, true, 1)
				g.chainDelays(s, p, path, false, float64(iters-1))
			}
		}
	}
}

// chainDelays adds the root-cause metrics of times iterations of a
// DelayChain phase, the first one (first) or a later one.
//
// Rank j's message to rank j+1 is a Late Sender of w_{j+1} = X_j − R_{j+1}
// (the timelines at iterLength). At rank j's send (spec §7.1), the
// previous synchronisation point with rank j+1 is, in the first
// iteration, the one before the phase (all ranks' time maps agree up to
// there), later rank j's previous send to j+1 (pruned to its completion
// 0); on the receiver it is the same point, later the previous receive
// from j (pruned to its completion g). The sender's time map A since then
// (its own wait w_j subtracted) and the receiver's B are, per call path:
//
//	                first iteration       later iterations
//	A  phase        (2 + [j>0])g          (3 + [j>0])g
//	   compute      c_j                   c_j
//	   MPI_Recv     [j>0] 3g              [j>0] 3g    (M_j+g−R_j − w_j)
//	   main         —                     idle_j = length − leave_j
//	B  phase        2g                    (3 + [j+1<n−1])g
//	   compute      c_{j+1}               c_{j+1}
//	   MPI_Recv     —                     g           (its completion)
//	   MPI_Send     —                     [j+1<n−1] 2g
//	   main         —                     idle_{j+1}
//
// d = A − B where positive; den = Σd + w_j (rank j's own wait, which
// propagates); scale_j = min(w_{j+1}/den, 1). Then:
//
//	delay_latesender on rank j            scale_j·d
//	delay_latesender_longterm on rank j   sc_j·d, sc_j = cost_{j+1}/den
//	mpi_wait_propagating_ls on rank j     scale_j·w_j at its MPI_Recv (j > 0)
//	mpi_wait_indirect_latesender, j+1     scale_j·w_j at its MPI_Recv (j > 0)
//
// where cost_{j+1} = (scale_{j+1} + sc_{j+1})·w_{j+1} is the long-term
// cost rank j+1's wait carries (0 for the last rank, whose wait
// propagates nowhere), computed from the end of the chain backwards.
func (g *gen) chainDelays(s *Summary, p *phaseInfo, path string, first bool, times float64) {
	if times == 0 {
		return
	}
	gp, n := float64(g.gap), g.n
	sec := func(ticks float64) float64 { return ticks / float64(resolution) }
	wait := func(r int) float64 { // w_r, r > 0
		return float64(g.chainSend(p, r-1) - (2*g.gap + p.c[r]))
	}
	idle := func(r int) float64 { return float64(p.length - g.chainLeave(p, r)) }
	type tmap map[string]float64
	add := func(metric, cp string, r int, v float64) {
		if v != 0 {
			s.addValue(metric, cp, r, times*sec(v))
		}
	}
	var cost float64 // cost_{j+1}
	var scaleNext, scNext float64
	for j := n - 2; j >= 0; j-- {
		if j+1 <= n-2 {
			cost = (scaleNext + scNext) * wait(j+1)
		}
		a, b := tmap{}, tmap{}
		mid := 0.0 // [j > 0]
		if j > 0 {
			mid = 1
			a["/MPI_Recv"] = 3 * gp
		}
		a["/compute"], b["/compute"] = float64(p.c[j]), float64(p.c[j+1])
		if first {
			a[""], b[""] = (2+mid)*gp, 2*gp
		} else {
			a[""], a["main"], b["main"], b["/MPI_Recv"] = (3+mid)*gp, idle(j), idle(j+1), gp
			b[""] = 3 * gp
			if j+1 < n-1 {
				b[""] += gp
				b["/MPI_Send"] = 2 * gp
			}
		}
		d := tmap{}
		var dsum float64
		for k, v := range a {
			if x := v - b[k]; x > 0 {
				d[k] = x
				dsum += x
			}
		}
		var wj float64 // w_j, propagating
		if j > 0 {
			wj = wait(j)
		}
		den := dsum + wj
		scale, sc := 0.0, 0.0
		if den > 0 {
			scale, sc = min(wait(j+1)/den, 1), cost/den
		}
		cp := func(k string) string {
			if k == "main" {
				return path[:len(path)-len(p.Name)-1]
			}
			return path + k
		}
		for k, v := range d {
			add("delay_latesender", cp(k), j, scale*v)
			if sc > 0 {
				add("delay_latesender_longterm", cp(k), j, sc*v)
			}
		}
		if wj > 0 && scale > 0 {
			add("mpi_wait_propagating_ls", path+"/MPI_Recv", j, scale*wj)
			add("mpi_wait_indirect_latesender", path+"/MPI_Recv", j+1, scale*wj)
		}
		scaleNext, scNext = scale, sc
	}
}
