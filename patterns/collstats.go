package patterns

import "scout/replay"

// Collective operation statistics, at every MPI collective's end:
//
//	syncs_coll: 1 if no data was sent or received
//	comms_cxch: 1 if data was both sent and received
//	comms_csrc: 1 if data was only sent
//	comms_cdst: 1 if data was only received
//	bytes_cout / bytes_cin: bytes sent / received
//
// attributed to the collective's call path.
func registerCollectiveStats(bus *replay.Bus) {
	bus.On(replay.FwCollective, func(c *replay.Ctx) error {
		info := c.Trace.Collective(c.Index)
		cp := c.Callpath(c.Index)
		switch s, r := info.Sent > 0, info.Received > 0; {
		case s && r:
			c.Add(CommsCxch, cp, 1)
		case s:
			c.Add(CommsCsrc, cp, 1)
		case r:
			c.Add(CommsCdst, cp, 1)
		default:
			c.Add(SyncsColl, cp, 1)
		}
		if info.Sent > 0 {
			c.Add(BytesCout, cp, float64(info.Sent))
		}
		if info.Received > 0 {
			c.Add(BytesCin, cp, float64(info.Received))
		}
		return nil
	})
}
