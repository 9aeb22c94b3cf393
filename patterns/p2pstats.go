package patterns

import "scout/replay"

// SendEvent is the send event of a message (time, bytes), which the
// forward pass carries to the receiver.
var SendEvent = replay.NewField("send", replay.EventRefCodec)

// Point-to-point message statistics.
//
//	root:        a send event (sender) / a received message (receiver)
//	constituents: the sender's send event, shipped in the message
//	severity:    1 per message (syncs_* for 0 bytes, comms_* otherwise),
//	             bytes_sent / bytes_rcvd: the sent byte count
//	attribution: the call path of the send / receive event
//
// A clock-condition violation is counted when a message is received
// before it was sent.
func registerP2PStats(bus *replay.Bus) {
	bus.OnAhead(replay.FwPreSend, func(c *replay.Ctx) error {
		n := c.Trace.MessageBytes(c.Index)
		replay.Put(c, SendEvent, replay.EventRef{Time: c.Time(), Bytes: n})
		cp := c.Callpath(c.Index)
		if n == 0 {
			c.Add(SyncsSend, cp, 1)
		} else {
			c.Add(CommsSend, cp, 1)
			c.Add(BytesSent, cp, float64(n))
		}
		return nil
	})
	bus.On(replay.FwPostRecv, func(c *replay.Ctx) error {
		send, _ := replay.Get(c, SendEvent)
		if send.Time > c.Time() {
			c.Loc.CCV.P2P++
		}
		cp := c.Callpath(c.Index)
		if send.Bytes == 0 {
			c.Add(SyncsRecv, cp, 1)
		} else {
			c.Add(CommsRecv, cp, 1)
			c.Add(BytesRcvd, cp, float64(send.Bytes))
		}
		return nil
	})
}

// isTest reports whether event i completes in an MPI_Test* call.
func isTest(c *replay.Ctx, i int) bool { return c.RegionClass(i)&replay.ClassTest != 0 }
