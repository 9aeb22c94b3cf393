package patterns

import (
	"scout/localtrace"
	"scout/replay"
)

// Wait-state propagation (mpi_wait_indirect_latesender/latereceiver,
// mpi_wait_propagating_ls/lr), found with the point-to-point delays in
// bwc and booked on the waiting side in the fwc pass:
//
//	indirect:    of a Late Sender (Late Receiver) wait state, the part
//	             caused by the delayer's own wait states in the interval
//	             of the delay (scale · their waits): the delayer was late
//	             because it waited itself. The delayer ships it to the
//	             waiter (a message, or an inverse one to the Late
//	             Receiver's send completion); attribution: the call path of
//	             the wait state
//	propagating: of a wait state, the largest part of it that caused a
//	             later Late Sender or Late Receiver wait state elsewhere
//	             (scale · wait); attribution: its call path
type propagation struct {
	indirect [2]spValues // by costLS (send events), costLR (receive requests)
	prop     spValues    // by wait state: its largest propagated part (> 0), 0 for none
}

func (pr *propagation) init() { *pr = propagation{} }

// record notes, at the delayer's event ev of a delay of type typ, the
// waits of its wait states among props that propagated, with scale.
func (rc *rootCause) recordPropagation(typ, ev int, scale, wsum float64, props spRange) {
	if !(wsum > 0) {
		return
	}
	pr := &rc.prop
	sp := &rc.sp
	pr.indirect[typ].add(sp, sp.index(ev), scale*wsum)
	if !(scale > 0) {
		return
	}
	for i := props.lo; i < props.hi; i++ {
		if w := sp.sps[i].wait; w > 0 && scale*w > pr.prop.at(i) {
			pr.prop.set(sp, i, scale*w)
		}
	}
}

// Topics and pass of the wait-state propagation.
var (
	FwcPreSend      = replay.NewTopic("FwcPreSend")
	FwcPostSend     = replay.NewTopic("FwcPostSend")
	FwcPostRecv     = replay.NewTopic("FwcPostRecv")
	FwcSendComplete = replay.NewTopic("FwcSendComplete")
	FwcRecvRequest  = replay.NewTopic("FwcRecvRequest")
	// Fwc walks forward; a message carries the indirect Late Sender wait
	// to the receiver, an inverse message the indirect Late Receiver wait
	// from the receive request to the send completion.
	Fwc = replay.DefinePass(replay.PassSpec{Name: "fwc", Order: replay.TimeOrder, Inverse: true,
		Topics: []replay.Topic{FwcPreSend, FwcPostSend, FwcPostRecv, FwcSendComplete, FwcRecvRequest},
		Steps: []replay.Step{
			{Kind: localtrace.KindSend, Do: replay.Ship, Pre: FwcPreSend, Post: FwcPostSend},
			{Kind: localtrace.KindIsend, Do: replay.Ship, Pre: FwcPreSend, Post: FwcPostSend},
			{Kind: localtrace.KindRecv, Do: replay.Take, Post: FwcPostRecv},
			{Kind: localtrace.KindIrecv, Do: replay.Take, Post: FwcPostRecv},
			{Kind: localtrace.KindIsendComplete, Do: replay.Publish, Pre: FwcSendComplete},
			{Kind: localtrace.KindIrecvRequest, Do: replay.Publish, Pre: FwcRecvRequest},
		}})
)

// IndirectWait is the indirect part of a wait state, shipped to it (fwc).
var IndirectWait = replay.NewField("indirect wait", replay.Float64Codec)

func (rc *rootCause) registerPropagation(bus *replay.Bus) {
	pr := &rc.prop
	sp := &rc.sp
	// the Late Receiver side: its send completion receives its indirect part
	sendCompletion := func(c *replay.Ctx, cmp, req int) error {
		if sp.isWait(cmp) {
			if err := c.RecvInverseOf(req); err != nil {
				return err
			}
			if pw, _ := replay.Get(c, IndirectWait); pw > 0 {
				c.Add(IndirectLR, c.Callpath(cmp), pw)
			}
		}
		if v := pr.prop.at(sp.index(cmp)); v > 0 {
			c.Add(PropagatingLR, c.Callpath(cmp), v)
		}
		return nil
	}
	// the indirect parts are bwc's results: fwc ships ahead (its inverse
	// messages, of Late Receivers only, go at the events)
	bus.OnAhead(FwcPreSend, func(c *replay.Ctx) error {
		replay.Put(c, IndirectWait, pr.indirect[costLS].at(sp.index(c.Index)))
		return nil
	})
	bus.On(FwcPostSend, func(c *replay.Ctx) error {
		if c.Event().Kind == localtrace.KindSend {
			return sendCompletion(c, c.Index, c.Index)
		}
		return nil
	})
	bus.On(FwcSendComplete, func(c *replay.Ctx) error {
		if l := c.Trace.Link(c.Index); l != localtrace.None {
			return sendCompletion(c, c.Index, int(l))
		}
		return nil
	})
	// the receive request a Late Receiver waited for ships its indirect part
	recvRequest := func(c *replay.Ctx, q, msg int) error {
		if !sp.has(q) || sp.isWait(q) {
			return nil
		}
		replay.Put(c, IndirectWait, pr.indirect[costLR].at(sp.index(q)))
		return c.SendInverseOf(msg)
	}
	bus.On(FwcPostRecv, func(c *replay.Ctx) error {
		if pw, _ := replay.Get(c, IndirectWait); pw > 0 {
			c.Add(IndirectLS, c.Callpath(c.Index), pw)
		}
		if c.Event().Kind == localtrace.KindRecv {
			if err := recvRequest(c, c.Index, c.Index); err != nil {
				return err
			}
		}
		if v := pr.prop.at(sp.index(c.Index)); v > 0 {
			c.Add(PropagatingLS, c.Callpath(c.Index), v)
		}
		return nil
	})
	bus.On(FwcRecvRequest, func(c *replay.Ctx) error {
		if l := c.Trace.Link(c.Index); l != localtrace.None {
			return recvRequest(c, c.Index, int(l))
		}
		return nil
	})
}
