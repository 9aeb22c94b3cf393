package patterns

import (
	"fmt"
	"math"
	"slices"

	"scout/localtrace"
	"scout/replay"
)

// criticalPath is the critical path (critical_path) and the performance
// impact metrics derived from it, found in the bwc pass:
//
//	walk:     the path starts at the Leave of MPI_Finalize of the last
//	          rank to enter it and runs back in time. A location on the
//	          path stays on it until it meets a wait state (a Late Sender
//	          receive, a Late Receiver send completion, a waiting
//	          collective end); the interval from that wait state to the
//	          point it joined the path (its time map, minus the wait at
//	          the wait state's call path) is its share, and the path moves
//	          to the partner that caused the wait: the sender (by the
//	          message), the receiver (by an inverse message to its
//	          receive request), or the collective's delayer (root of a
//	          1-to-N, else the latest). The path ends at MPI_Init's Leave.
//	severity: the location's share per call path (critical_path; any
//	          sign)
//
// At the end of the pass, with gcp the sum over ranks of the shares and
// lt the location's exclusive time per call path minus the waits of its
// synchpoints:
//
//	critical_path_activities:     min(gcp, lt) where gcp > 0
//	non_critical_path_activities: lt − gcp where positive
//	critical_imbalance_impact:    each rank's excess of the critical path
//	                              over its own time, scaled so that its
//	                              sum is the rank's waiting time, summed
//	                              over ranks and shared out by the
//	                              rank's share of the path
//	inter_partition_imbalance:    the same with the headroom of the call
//	                              paths on the path that the rank does not
//	                              execute at all
//
// A division by zero in the scaling (a rank without excess or headroom)
// makes the sum NaN and the metric absent, as in Scalasca.
type criticalPath struct {
	onCP  bool
	endEv int
	lcp   []float64 // share by local call path
	seg   cpvec     // scratch
	wm    cpvec
}

// OnCriticalPath: the critical path continues at the partner of this
// message (bwc, either direction).
var OnCriticalPath = replay.NewField("on critical path", replay.BoolCodec)

// registerBwc subscribes the walk of the bwc pass that the critical path
// and the delay costs share: at each synchpoint the critical path's step
// (when rc.withPath), then the delayer's side of a delay (when
// rc.withDelay, delay.go), in Scalasca's order; the messages and inverse
// messages carry what either part needs.
func (rc *rootCause) registerBwc(bus *replay.Bus) {
	p := &rc.path
	sp := &rc.sp
	// A message whose receive was no wait state carries nothing the
	// sender uses (the critical path does not cross it, there is no
	// wait to charge): both sides skip it, the receiver by its wait
	// states, the sender by what the backward pass told it.
	bus.On(BwcPreRecv, func(c *replay.Ctx) error {
		if !sp.isWait(c.Index) {
			c.SkipMessage()
		}
		return nil
	})
	bus.On(BwcPreSend, func(c *replay.Ctx) error {
		if !rc.lsWaited(c.Index) {
			c.SkipMessage()
		}
		return nil
	})
	bus.On(BwcLeave, func(c *replay.Ctx) error {
		if !rc.withPath {
			return nil
		}
		switch {
		case c.Index == rc.finLeave:
			if rc.finLatest {
				p.onCP, p.endEv = true, c.Index
			}
		case c.Index == rc.initLeave && p.onCP:
			return rc.updatePath(c, c.Index)
		}
		return nil
	})
	bus.On(BwcPostSend, func(c *replay.Ctx) error {
		if sp.has(c.Index) {
			if on, _ := replay.Get(c, OnCriticalPath); on && rc.withPath {
				p.onCP, p.endEv = true, c.Index
			}
			if rc.withDelay {
				m := c.Trace.Message(c.Index)
				if err := rc.p2pDelay(c, c.Index, worldRank(c, m.Comm, int(m.Peer)), costLS); err != nil {
					return err
				}
			}
		}
		if c.Event().Kind == localtrace.KindSend && sp.isWait(c.Index) {
			return rc.sendCompletion(c, c.Index, c.Index)
		}
		return nil
	})
	bus.On(BwcSendComplete, func(c *replay.Ctx) error {
		if l := c.Trace.Link(c.Index); sp.isWait(c.Index) && l != localtrace.None {
			return rc.sendCompletion(c, c.Index, int(l))
		}
		return nil
	})
	bus.On(BwcPreRecv, func(c *replay.Ctx) error {
		if !rc.withPath {
			return nil
		}
		on := false
		if p.onCP && sp.isWait(c.Index) {
			if err := rc.updatePath(c, c.Index); err != nil {
				return err
			}
			on, p.onCP = true, false
		}
		replay.Put(c, OnCriticalPath, on)
		return nil
	})
	bus.On(BwcPostRecv, func(c *replay.Ctx) error {
		if c.Event().Kind == localtrace.KindRecv && sp.has(c.Index) && !sp.isWait(c.Index) {
			return rc.recvRequest(c, c.Index, c.Index)
		}
		return nil
	})
	bus.On(BwcRecvRequest, func(c *replay.Ctx) error {
		if l := c.Trace.Link(c.Index); sp.has(c.Index) && !sp.isWait(c.Index) && l != localtrace.None {
			return rc.recvRequest(c, c.Index, int(l))
		}
		return nil
	})
	bus.On(BwcCollEnd, func(c *replay.Ctx) error {
		rec, ok := rc.colls.get(c.Index)
		if !ok {
			return nil
		}
		// The delay's reduction to the delayer carries the path's
		// hand-over when both run; the path alone reduces a flag.
		handOver, err := rc.leavePath(c)
		if err != nil {
			return err
		}
		if rc.withDelay {
			taken, err := rc.collDelay(c, rec, handOver)
			if taken && rc.withPath {
				rc.path.onCP, rc.path.endEv = true, c.Index
			}
			return err
		}
		if rc.withPath {
			return rc.collPath(c, rec, handOver)
		}
		return nil
	})
	bus.On(replay.Finished, func(c *replay.Ctx) error {
		if c.Pass == Bwc && rc.withPath {
			return rc.finishPath(c)
		}
		return nil
	})
}

// leavePath hands the critical path over at the collective end c.Index
// if it is here and the collective is a wait state.
func (rc *rootCause) leavePath(c *replay.Ctx) (bool, error) {
	p := &rc.path
	if !rc.withPath || !p.onCP || !rc.sp.isWait(c.Index) {
		return false, nil
	}
	if err := rc.updatePath(c, c.Index); err != nil {
		return false, err
	}
	p.onCP = false
	return true, nil
}

// collPath passes the critical path on to the delayer of the collective
// when some member handed it over (the path without the delay costs).
// The members' flags are gathered to the delayer, which alone needs
// them: the others hand theirs over and go on, as with the delay costs'
// gather (an allreduce, which kept every member in lockstep, made the
// path alone cost more than the path with the delay costs under mpirun).
func (rc *rootCause) collPath(c *replay.Ctx, rec collRecord, handOver bool) error {
	p := &rc.path
	replay.Put(c, MemberOnPath, handOver)
	n, err := c.GatherFields(int(rec.delayer))
	if err != nil {
		return err
	}
	me, _, err := c.CollMember()
	if err != nil || me != int(rec.delayer) {
		return err
	}
	for r := range n {
		if err := c.UseGathered(r); err != nil {
			return err
		}
		if on, _ := replay.Get(c, MemberOnPath); on {
			p.onCP, p.endEv = true, c.Index
			break
		}
	}
	return nil
}

// sendCompletion handles a Late Receiver's send completion cmp (of the
// message of event req): the path moves to the receiver if it is here,
// and the wait goes to the receiver for its delay.
func (rc *rootCause) sendCompletion(c *replay.Ctx, cmp, req int) error {
	if p := &rc.path; rc.withPath {
		on := false
		if p.onCP {
			if err := rc.updatePath(c, cmp); err != nil {
				return err
			}
			on, p.onCP = true, false
		}
		replay.Put(c, OnCriticalPath, on)
	}
	if rc.withDelay {
		m := c.Trace.Message(req)
		if err := rc.shipWait(c, cmp, worldRank(c, m.Comm, int(m.Peer))); err != nil {
			return err
		}
	}
	return c.SendInverseOf(req)
}

// recvRequest handles the receive request q (of the message of event
// msg) that a Late Receiver waited for.
func (rc *rootCause) recvRequest(c *replay.Ctx, q, msg int) error {
	if err := c.RecvInverseOf(msg); err != nil {
		return err
	}
	if on, _ := replay.Get(c, OnCriticalPath); on && rc.withPath {
		rc.path.onCP, rc.path.endEv = true, q
	}
	if !rc.withDelay {
		return nil
	}
	m := c.Trace.Message(msg)
	return rc.p2pDelay(c, q, worldRank(c, m.Comm, int(m.Peer)), costLR)
}

// updatePath adds the interval from synchpoint from to the point the
// location joined the path to its share, less the wait at from.
func (rc *rootCause) updatePath(c *replay.Ctx, from int) error {
	p := &rc.path
	rc.tm.runtimes(c.Trace, from, p.endEv, &p.seg)
	if n := len(c.Trace.Callpaths); len(p.lcp) < n {
		p.lcp = slices.Grow(p.lcp, n-len(p.lcp))[:n]
	}
	for k, cp := range p.seg.cp {
		p.lcp[cp] += p.seg.v[k]
	}
	cp := c.Trace.Callpath(from)
	p.lcp[cp] -= math.Min(rc.sp.waitOf(from), p.seg.get(cp))
	return nil
}

// finishPath computes the metrics of the critical path at the end of
// the bwc pass (two sums over all ranks).
func (rc *rootCause) finishPath(c *replay.Ctx) error {
	p := &rc.path
	if c.Loc.Global == nil && (c.Loc.Team != nil || c.Loc.World.Size() > 1) {
		return fmt.Errorf("root cause: the critical path needs the unified call tree (replay.Location.Global)")
	}
	n, global := c.Loc.GlobalPaths()
	ncp := len(c.Trace.Callpaths)
	lcp := make([]float64, n)
	for k, v := range p.lcp {
		lcp[global(uint32(k))] += v
	}
	sum, err := c.AllLocationsSum(lcp)
	if err != nil {
		return err
	}
	gcp := slices.Clone(sum)
	// lt: the local time without the waits of the synchpoints
	rc.tm.runtimes(c.Trace, -1, -1, &p.seg)
	rc.waitMap(c.Trace, rc.sp.every(), &p.wm)
	lt := make([]float64, n)
	for k, cp := range p.seg.cp {
		v := p.seg.v[k]
		if j, ok := p.wm.find(cp); ok {
			v -= math.Min(v, p.wm.v[j])
		}
		lt[global(cp)] += v
	}
	for k := range ncp {
		g := int(global(uint32(k)))
		if k < len(p.lcp) && p.lcp[k] != 0 {
			c.Add(CriticalPath, uint32(k), p.lcp[k])
		}
		if gcp[g] > 0 {
			if v := math.Min(gcp[g], lt[g]); v != 0 {
				c.Add(CriticalPathActivities, uint32(k), v)
			}
		}
		if v := lt[g] - gcp[g]; v > 0 {
			c.Add(NonCriticalPathActivities, uint32(k), v)
		}
	}
	// imbalance: excess over the local time, and headroom of the call
	// paths not executed here, each scaled to the local waiting time
	var sumG, sumL, sumExc, sumHR, lp float64
	for g := range n {
		sumG += gcp[g]
		sumL += lt[g]
	}
	vec := make([]float64, 2*n)
	exc, hr := vec[:n], vec[n:]
	for g := range n {
		exc[g] = math.Max(gcp[g]-lt[g], 0)
		sumExc += exc[g]
		hr[g] = gcp[g]
		if lt[g] > 0 {
			lp += lt[g] + (hr[g] - math.Min(lt[g], hr[g]))
			hr[g] = 0
		}
	}
	for g := range n {
		sumHR += hr[g]
	}
	f, fh := (sumG-sumL)/sumExc, (sumG-lp)/sumHR // IEEE: x/0 is ±Inf or NaN, which poisons the sums
	for g := range n {
		exc[g] *= f
		hr[g] *= fh
	}
	red, err := c.AllLocationsSum(vec)
	if err != nil {
		return err
	}
	for k := range ncp {
		g := int(global(uint32(k)))
		if !(lcp[g] > 0) {
			continue
		}
		if v := lcp[g] / gcp[g] * red[g]; v > 0 {
			c.Add(CriticalImbalanceImpact, uint32(k), v)
		}
		if v := lcp[g] / gcp[g] * red[n+g]; v > 0 {
			c.Add(InterPartitionImbalance, uint32(k), v)
		}
	}
	return nil
}
