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
	// The waiter's side: at every receive (after the critical-path flag),
	// and at Late Receiver send completions (before the inverse message
	// leaves: sendCompletion calls shipWait).
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
	// The delayer's sides are in the critical path's callbacks, in
	// Scalasca's order: p2pDelay at a send (after the critical-path flag)
	// and at a receive request (after the inverse message arrived).
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
