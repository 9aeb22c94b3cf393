package patterns

import (
	"math"

	"scout/replay"
)

// LateSenderInfo describes a Late Sender instance for the patterns that
// refine it.
type LateSenderInfo struct {
	Recv      int     // receive event (local index)
	SendTime  float64 // time of the remote send event
	SendBytes uint64
	Source    int // world rank of the sender
	Idle      float64
	SendLeave float64 // time the send region was left
}

// lateSender is Late Sender (mpi_latesender):
//
//	root:        a received message (POST_RECV)
//	constituents: Enter of the receive region (local), Enter of the send
//	             region (remote)
//	constraint:  the receiver entered before the sender: idle =
//	             min(enter_send, leave_recv) − enter_recv > 0
//	severity:    idle; in MPI_Waitall/Waitsome only the largest idle of
//	             the call counts; receives completed in MPI_Test* never
//	attribution: call path of the receive event
//
// Each instance is published as LateSenderFound; mpi_sls_count /
// mpi_cls_count count them. A multi-wait call with a Late Sender is
// published as MultiWaitLateSender (Late Receiver leaves those alone).
type lateSender struct {
	multi     LateSenderInfo // largest wait in the current multi-wait call
	haveMulti bool
	bus       *replay.Bus
	// the payloads being published (fields: no allocation per event)
	cur   LateSenderInfo
	enter uint32
}

// Events of Late Sender.
var (
	// LateSenderFound is a Late Sender instance.
	LateSenderFound = replay.NewEvent[LateSenderInfo]("LateSender")
	// MultiWaitLateSender is a multi-wait call (the index of its Enter
	// event) in which a receive had a Late Sender.
	MultiWaitLateSender = replay.NewEvent[uint32]("MultiWaitLateSender")
)

// SendEnter is the time a message's send region was entered, which the
// forward pass carries to the receiver.
var SendEnter = replay.NewField("send enter", replay.Float64Codec)

// SendLeave is the time a message's send region was left, which the
// forward pass carries to the receiver (the completion of a Late Sender
// synchpoint).
var SendLeave = replay.NewField("send leave", replay.Float64Codec)

func registerLateSender(bus *replay.Bus) {
	p := &lateSender{}
	bus.OnAhead(replay.FwPreSend, func(c *replay.Ctx) error {
		replay.Put(c, SendEvent, replay.EventRef{Time: c.Time(), Bytes: c.Trace.MessageBytes(c.Index)})
		replay.Put(c, SendEnter, c.EnterTime(c.Index))
		replay.Put(c, SendLeave, c.LeaveTime(c.Index))
		return nil
	})
	bus.On(replay.FwPostRecv, p.postRecv)
	bus.On(replay.FwLeave, func(c *replay.Ctx) error {
		if !p.haveMulti || c.RegionClass(c.Index)&replay.ClassWaitMulti == 0 {
			return nil
		}
		p.haveMulti = false
		info := p.multi
		return p.found(bus, c, info)
	})
	replay.Subscribe(bus, LateSenderFound, func(c *replay.Ctx, info *LateSenderInfo) error {
		metric := CLSCount
		if info.SendBytes == 0 {
			metric = SLSCount
		}
		c.Add(metric, c.Callpath(info.Recv), 1)
		return nil
	})
	p.bus = bus
}

func (p *lateSender) postRecv(c *replay.Ctx) error {
	i := c.Index
	if isTest(c, i) {
		return nil
	}
	enterSend, _ := replay.Get(c, SendEnter)
	leaveSend, _ := replay.Get(c, SendLeave)
	send, _ := replay.Get(c, SendEvent)
	enterRecv := c.EnterTime(i)
	idle := math.Min(enterSend, c.LeaveTime(i)) - enterRecv
	if !(idle > 0) {
		return nil
	}
	m := c.Trace.Message(i)
	info := LateSenderInfo{Recv: i, SendTime: send.Time, SendBytes: send.Bytes,
		Source: worldRank(c, m.Comm, int(m.Peer)), Idle: idle, SendLeave: leaveSend}
	if c.RegionClass(i)&replay.ClassWaitMulti != 0 {
		p.enter = c.Trace.EnterOf(i)
		if err := replay.Emit(p.bus, MultiWaitLateSender, c, &p.enter); err != nil {
			return err
		}
		if !p.haveMulti || idle > p.multi.Idle {
			p.multi, p.haveMulti = info, true
		}
		return nil
	}
	return p.found(p.bus, c, info)
}

// found records a Late Sender instance and publishes it.
func (p *lateSender) found(bus *replay.Bus, c *replay.Ctx, info LateSenderInfo) error {
	c.Add(LateSender, c.Callpath(info.Recv), info.Idle)
	c.Idle = info.Idle
	p.cur = info
	return replay.Emit(bus, LateSenderFound, c, &p.cur)
}

// worldRank maps a communicator rank to a world rank.
func worldRank(c *replay.Ctx, comm uint32, rank int) int {
	w, err := c.Env.WorldRank(comm, rank, c.Loc.Rank)
	if err != nil {
		return c.Loc.Rank // as for a self communicator
	}
	return w
}
