package patterns

import "scout/replay"

// wrongOrderCapacity is how many Late Sender instances a location
// remembers for the wrong-order check (the reference analyzer's buffer).
const wrongOrderCapacity = 100

// wrongOrder refines Late Sender into Late Sender, wrong order
// (mpi_latesender_wo) and its two kinds:
//
//	root:        a received message (POST_RECV)
//	constituents: an earlier Late Sender instance of this location
//	constraint:  the earlier instance's message was sent after the current
//	             message: the current message was available but received
//	             later, so the earlier wait was caused by the order of the
//	             receives
//	severity:    the earlier instance's idle time
//	attribution: call path of the earlier receive
//	kinds:       mpi_lswo_same when both messages come from the same
//	             sender, mpi_lswo_different otherwise
//
// mpi_slswo_count / mpi_clswo_count count the instances by the earlier
// message's size.
type wrongOrder struct {
	// buf holds the remembered instances, oldest first: a window of
	// store, which is twice the capacity, so that the window moves to
	// the front once per wrongOrderCapacity instances, where dropping
	// the oldest by reslicing made append copy the buffer to a new array
	// as often (a location of a ring has a Late Sender for every other
	// receive).
	buf, store []LateSenderInfo
	// maxSend bounds the send times in buf from above, so that most
	// receives need not scan it.
	maxSend float64
}

// LateSenderWrongOrder is a Late Sender instance in wrong order.
var LateSenderWrongOrder = replay.NewEvent[LateSenderInfo]("LateSenderWO")

func registerWrongOrder(bus *replay.Bus) {
	p := &wrongOrder{}
	replay.Subscribe(bus, LateSenderFound, func(c *replay.Ctx, in *LateSenderInfo) error {
		if len(p.buf) == wrongOrderCapacity {
			p.buf = p.buf[1:]
		}
		if len(p.buf) == cap(p.buf) { // the window reached the end of store
			if p.store == nil {
				p.store = make([]LateSenderInfo, 2*wrongOrderCapacity)
			}
			p.buf = p.store[:copy(p.store, p.buf)]
		}
		p.buf = append(p.buf, *in)
		p.maxSend = max(p.maxSend, in.SendTime)
		return nil
	})
	bus.On(replay.FwPostRecv, func(c *replay.Ctx) error {
		send, _ := replay.Get(c, SendEvent)
		cur := send.Time
		if len(p.buf) == 0 || p.maxSend <= cur {
			return nil // no remembered instance was sent later
		}
		m := c.Trace.Message(c.Index)
		src := worldRank(c, m.Comm, int(m.Peer))
		kept := p.buf[:0]
		var found []LateSenderInfo
		for _, it := range p.buf {
			if it.SendTime > cur {
				found = append(found, it)
			} else {
				kept = append(kept, it)
			}
		}
		p.buf = kept
		p.maxSend = 0
		for _, it := range kept {
			p.maxSend = max(p.maxSend, it.SendTime)
		}
		for i := range found {
			it := &found[i]
			cp := c.Callpath(it.Recv)
			c.Add(LateSenderWO, cp, it.Idle)
			kind := WrongOrderDifferent
			if it.Source == src {
				kind = WrongOrderSame
			}
			c.Add(kind, cp, it.Idle)
			count := CLSWOCount
			if it.SendBytes == 0 {
				count = SLSWOCount
			}
			c.Add(count, cp, 1)
			c.Idle = it.Idle
			if err := replay.Emit(bus, LateSenderWrongOrder, c, it); err != nil {
				return err
			}
		}
		return nil
	})
}
