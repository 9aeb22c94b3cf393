package patterns

import (
	"math"

	"scout/localtrace"
	"scout/replay"
)

// delay is the short-term delay cost of point-to-point wait states
// (delay_latesender, delay_latereceiver), found in the bwc pass on the
// location that caused the wait (the delayer):
//
//	root:     a Late Sender wait state, met at the sender's send event
//	          (the receiver ships its wait and its time map); a Late
//	          Receiver wait state, met at the receiver's receive request
//	          (the sender's send completion ships them by an inverse
//	          message)
//	interval: on both sides, from the previous synchpoint with the partner
//	          up to the event, with the waits of the synchpoints in between
//	          taken out, and the region of that previous synchpoint but for
//	          its completion part
//	delay:    d = the delayer's times per call path in excess of the
//	          waiter's (positive differences)
//	severity: d · min(wait / (Σd + the delayer's own waits in the interval),
//	          1), at the delayer's call paths
type delay struct {
	times, waits, pruned, remote, d cpvec
	out                             replay.Timemap
	g2l                             map[uint32]uint32 // global → local call path
}

// Fields of the delay exchanges in bwc.
var (
	// WaitTime is the wait of a wait state, shipped to its delayer.
	WaitTime = replay.NewField("wait time", replay.Float64Codec)
	// WaitTimemap is the waiter's time map of the interval before the
	// wait state (global call paths).
	WaitTimemap = replay.NewField("wait time map", replay.TimemapCodec)
)

func (rc *rootCause) registerDelay(bus *replay.Bus) {
	sp := &rc.sp
	// The waiter's side: at every receive, and at Late Receiver send
	// completions (before the inverse message leaves: sendCompletion
	// calls shipWait).
	bus.On(BwcPreRecv, func(c *replay.Ctx) error {
		if !rc.withDelay {
			return nil
		}
		w := sp.waitOf(c.Index)
		replay.Put(c, WaitTime, w)
		replay.Put(c, WaitCosts, rc.costs.of(&rc.sp, c.Index))
		if w > 0 {
			m := c.Trace.Message(c.Index)
			if err := rc.delayTimemap(c, c.Index, worldRank(c, m.Comm, int(m.Peer))); err != nil {
				return err
			}
			replay.Put(c, WaitTimemap, rc.dl.out)
		}
		return nil
	})
	// The delayer's sides are in bwc's callbacks (registerBwc), in
	// Scalasca's order: p2pDelay at a send and at a receive request
	// (after the inverse message arrived).
}

// registerBwc subscribes the walk of the bwc pass: at each synchpoint
// the delayer's side of a delay (delay.go), in Scalasca's order; the
// messages and inverse messages carry what it needs.
func (rc *rootCause) registerBwc(bus *replay.Bus) {
	sp := &rc.sp
	// A message whose receive was no wait state carries nothing the
	// sender uses (there is no wait to charge): both sides skip it, the
	// receiver by its wait states, the sender by what the backward pass
	// told it.
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
	bus.On(BwcPostSend, func(c *replay.Ctx) error {
		if sp.has(c.Index) {
			m := c.Trace.Message(c.Index)
			if err := rc.p2pDelay(c, c.Index, worldRank(c, m.Comm, int(m.Peer)), costLS); err != nil {
				return err
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
		if rec, ok := rc.colls.get(c.Index); ok {
			return rc.collDelay(c, rec)
		}
		return nil
	})
}

// sendCompletion handles a Late Receiver's send completion cmp (of the
// message of event req): the wait goes to the receiver for its delay.
func (rc *rootCause) sendCompletion(c *replay.Ctx, cmp, req int) error {
	m := c.Trace.Message(req)
	if err := rc.shipWait(c, cmp, worldRank(c, m.Comm, int(m.Peer))); err != nil {
		return err
	}
	return c.SendInverseOf(req)
}

// recvRequest handles the receive request q (of the message of event
// msg) that a Late Receiver waited for.
func (rc *rootCause) recvRequest(c *replay.Ctx, q, msg int) error {
	if err := c.RecvInverseOf(msg); err != nil {
		return err
	}
	m := c.Trace.Message(msg)
	return rc.p2pDelay(c, q, worldRank(c, m.Comm, int(m.Peer)), costLR)
}

// shipWait puts the wait and time map of the Late Receiver send
// completion cmp, whose receiver is world rank dst.
func (rc *rootCause) shipWait(c *replay.Ctx, cmp, dst int) error {
	replay.Put(c, WaitTime, rc.sp.waitOf(cmp))
	replay.Put(c, WaitCosts, rc.costs.of(&rc.sp, cmp))
	if err := rc.delayTimemap(c, cmp, dst); err != nil {
		return err
	}
	replay.Put(c, WaitTimemap, rc.dl.out)
	return nil
}

// delayTimemap sets rc.dl.out to the time map of the interval before
// wait state ev, back to its previous synchpoint with world rank partner,
// in global call paths.
func (rc *rootCause) delayTimemap(c *replay.Ctx, ev, partner int) error {
	dl := &rc.dl
	p := rc.sp.prev(ev, partner)
	if err := rc.intervalTimes(c.Trace, p, ev, &dl.pruned); err != nil {
		return err
	}
	toGlobal(c, &dl.pruned, &dl.out)
	return nil
}

// intervalTimes sets out to the pruned times of the interval (from, to)
// and returns the waits of its synchpoints in rc.dl.waits.
func (rc *rootCause) intervalTimes(t *localtrace.Trace, from, to int, out *cpvec) error {
	dl := &rc.dl
	rc.tm.runtimes(t, from, to, &dl.times)
	rc.waitMap(t, rc.sp.between(from, to), &dl.waits)
	rc.prune(t, &dl.times, &dl.waits, from, out)
	return nil
}

// p2pDelay is the delayer's side at synchpoint ev, whose partner (world
// rank) shipped a wait of type typ (costLS or costLR).
func (rc *rootCause) p2pDelay(c *replay.Ctx, ev, partner, typ int) error {
	m := DelayLateSender
	if typ == costLR {
		m = DelayLateReceiver
	}
	dl := &rc.dl
	rwait, _ := replay.Get(c, WaitTime)
	if !(rwait > 0) {
		return nil
	}
	p := rc.sp.prev(ev, partner)
	if err := rc.intervalTimes(c.Trace, p, ev, &dl.pruned); err != nil {
		return err
	}
	wsum := dl.waits.sum
	remote, _ := replay.Get(c, WaitTimemap)
	rc.toLocal(c, remote, &dl.remote)
	diff(&dl.pruned, &dl.remote, &dl.d)
	den := dl.d.sum + wsum
	scale := 0.0
	if den > 0 {
		scale = math.Min(rwait/den, 1)
	}
	if dl.d.sum > 0 {
		for k, cp := range dl.d.cp {
			c.Add(m, cp, scale*dl.d.v[k])
		}
	}
	rc.p2pLongTerm(c, typ, ev, rwait, den, wsum, rc.sp.between(p, ev))
	return nil
}

// toLocal converts a time map of global call paths into out, sorted by
// local call path, leaving out the call paths this location lacks.
func (rc *rootCause) toLocal(c *replay.Ctx, tm replay.Timemap, out *cpvec) {
	dl := &rc.dl
	dl.ensureLocal(c)
	acc := &rc.tm.sumTo
	for k, g := range tm.CP {
		if l, ok := dl.g2l[g]; ok {
			acc.add(l, tm.T[k])
		}
	}
	out.reset()
	acc.flush(out)
}

// ensureLocal makes the map from global to local call paths.
func (dl *delay) ensureLocal(c *replay.Ctx) {
	if dl.g2l != nil {
		return
	}
	dl.g2l = map[uint32]uint32{}
	_, global := c.Loc.GlobalPaths()
	for k := range c.Trace.Callpaths {
		dl.g2l[global(uint32(k))] = uint32(k)
	}
}
