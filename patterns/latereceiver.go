package patterns

import (
	"scout/localtrace"
	"scout/replay"
)

// lateReceiver is Late Receiver (mpi_latereceiver), found in the backward
// replay where receivers ship their data to the senders:
//
//	root:        a send event, met backwards (the message's data arrives)
//	constituents: Enter/Leave of the receive request region (remote: the
//	             MPI_Recv or MPI_Irecv call), Enter/Leave of the send
//	             completion region (local: MPI_Send/Ssend itself, or the
//	             MPI_Wait* completing an MPI_Isend)
//	constraint:  the sender was blocked: its completion region left after
//	             the receiver posted the receive, and began earlier:
//	             idle = enter_recvreq − enter_sendcmp > 0
//	severity:    idle; for MPI_Waitall/Waitsome the largest idle of the
//	             call, and nothing if that call already had a Late Sender
//	attribution: call path of the send completion region
//
// Only blocking standard and synchronous sends and single or multiple
// waits count (not Bsend, Rsend, Sendrecv or Test*). mpi_slr_count /
// mpi_clr_count count the instances by message size.
type lateReceiver struct {
	// multi-wait calls (by Enter index) that had a Late Sender
	hadLS map[uint32]bool
	// per multi-wait call (Enter index): sends still to be seen, largest idle
	pending map[uint32]*multiLR
	// spare holds the entries of calls done, for the next calls: an
	// HPCG-like rank has some 60 000 multi-wait calls, a few pending at
	// a time
	spare []*multiLR
	cur   LateReceiverInfo // the instance being published
}

// LateReceiverInfo describes a Late Receiver instance.
type LateReceiverInfo struct {
	Completion int // the send completion event (local index)
	Idle       float64
	Bytes      uint64
	// Finish is the completion part for the root-cause analysis:
	// leave_sendcmp − leave_recvreq, when the sender left before the
	// receive request's region did (≤ 0, as Scalasca computes it), else 0.
	Finish float64
	Dest   int // world rank of the receiver
}

// Fields the backward pass carries from the receiver to the sender.
var (
	// RecvTime is the time of a message's receive event.
	RecvTime = replay.NewField("recv", replay.Float64Codec)
	// RecvEnter is the time the receive request region (MPI_Recv,
	// MPI_Irecv) was entered.
	RecvEnter = replay.NewField("recv enter", replay.Float64Codec)
	// RecvReqLeave is the time the receive request region was left.
	RecvReqLeave = replay.NewField("recv request leave", replay.Float64Codec)
)

// LateReceiverFound is a Late Receiver instance.
var LateReceiverFound = replay.NewEvent[LateReceiverInfo]("LateReceiver")

type multiLR struct {
	left   int
	idle   float64
	bytes  uint64
	cmp    int     // completion event of the largest idle
	finish float64 // its completion part
	dest   int
}

func registerLateReceiver(bus *replay.Bus) {
	p := &lateReceiver{hadLS: map[uint32]bool{}, pending: map[uint32]*multiLR{}}
	replay.Subscribe(bus, MultiWaitLateSender, func(_ *replay.Ctx, enter *uint32) error {
		p.hadLS[*enter] = true
		return nil
	})
	bus.OnAhead(replay.BwPreRecv, func(c *replay.Ctx) error {
		i := c.Index
		req := i
		if l := c.Trace.Link(i); c.Event().Kind == localtrace.KindIrecv && l != localtrace.None {
			req = int(l) // the MPI_Irecv call posted the receive
		}
		replay.Put(c, RecvTime, c.Time())
		replay.Put(c, RecvEnter, c.EnterTime(req))
		replay.Put(c, RecvReqLeave, c.LeaveTime(req))
		return nil
	})
	bus.On(replay.BwSendComplete, func(c *replay.Ctx) error {
		en := c.Trace.EnterOf(c.Index)
		if en == localtrace.None || c.RegionClass(c.Index)&replay.ClassWaitMulti == 0 || p.hadLS[en] {
			return nil
		}
		m := p.pending[en]
		if m == nil {
			if k := len(p.spare); k > 0 {
				m, p.spare = p.spare[k-1], p.spare[:k-1]
			} else {
				m = &multiLR{}
			}
			p.pending[en] = m
		}
		m.left++
		return nil
	})
	bus.On(replay.BwPostSend, func(c *replay.Ctx) error {
		i := c.Index
		cmp := i // the send completion event
		if c.Event().Kind == localtrace.KindIsend {
			l := c.Trace.Link(i)
			if l == localtrace.None {
				return nil
			}
			cmp = int(l)
		}
		enterCmp, leaveCmp := c.EnterTime(cmp), c.LeaveTime(cmp)
		enterReq, _ := replay.Get(c, RecvEnter)
		idle := 0.0
		if leaveCmp > enterReq {
			idle = enterReq - enterCmp
		}
		finish := 0.0
		if leaveReq, _ := replay.Get(c, RecvReqLeave); idle > 0 && !(leaveCmp > leaveReq) {
			finish = leaveCmp - leaveReq
		}
		msg := c.Trace.Message(i)
		bytes, dest := c.Trace.MessageBytes(i), worldRank(c, msg.Comm, int(msg.Peer))
		cls := c.RegionClass(cmp)
		switch {
		case cls&(replay.ClassBlockSend|replay.ClassWaitSingle) != 0:
			if idle > 0 {
				return p.found(bus, c, LateReceiverInfo{Completion: cmp, Idle: idle, Bytes: bytes, Finish: finish, Dest: dest})
			}
		case cls&replay.ClassWaitMulti != 0:
			en := c.Trace.EnterOf(cmp)
			m := p.pending[en]
			if m == nil {
				return nil // the call had a Late Sender
			}
			if idle > m.idle {
				m.idle, m.bytes, m.cmp, m.finish, m.dest = idle, bytes, cmp, finish, dest
			}
			if m.left--; m.left == 0 {
				delete(p.pending, en)
				done := *m
				*m = multiLR{}
				p.spare = append(p.spare, m)
				if done.idle > 0 {
					return p.found(bus, c, LateReceiverInfo{Completion: done.cmp, Idle: done.idle, Bytes: done.bytes, Finish: done.finish, Dest: done.dest})
				}
			}
		}
		return nil
	})
}

func (p *lateReceiver) found(bus *replay.Bus, c *replay.Ctx, info LateReceiverInfo) error {
	cp := c.Callpath(info.Completion)
	c.Add(LateReceiver, cp, info.Idle)
	count := CLRCount
	if info.Bytes == 0 {
		count = SLRCount
	}
	c.Add(count, cp, 1)
	c.Idle = info.Idle
	p.cur = info
	return replay.Emit(bus, LateReceiverFound, c, &p.cur)
}
