package patterns

import "scout/replay"

// statMetrics are the metrics of the statistics file, in its order.
var statMetrics = []replay.Metric{LateSender, LateSenderWO, LateReceiver, WaitNxN, BarrierWait,
	EarlyReduce, EarlyScan, LateBroadcast, BarrierCompletion, NxNCompletion}

// StatPatterns lists the names of the patterns of the statistics file, in
// its order; Instance.Pattern indexes it.
var StatPatterns = func() []string {
	names := make([]string, len(statMetrics))
	for i, m := range statMetrics {
		names[i] = catalog[m].Name
	}
	return names
}()

// statIndex is the index of each metric in StatPatterns, -1 for none.
var statIndex = func() (idx [numMetrics]int8) {
	for m := range idx {
		idx[m] = -1
	}
	for i, m := range statMetrics {
		idx[m] = int8(i)
	}
	return idx
}()

// stat returns the index of metric m in StatPatterns.
func stat(m replay.Metric) int {
	if int(m) >= len(statIndex) {
		return -1
	}
	return int(statIndex[m])
}

// Instance is one occurrence of a wait state, for the statistics file.
// Fields are ordered for a compact layout (48 bytes): a trace holds about
// one instance per five events.
type Instance struct {
	Enter    float64 // begin of the instance
	Exit     float64 // end of the instance
	Duration float64 // the wait time
	Callpath uint32  // local call path (global once combined)
	Rank     int32   // world rank
	// Coll identifies a collective operation instance (communicator and
	// sequence number on it); the instances of all its participants are
	// aggregated. Point-to-point instances have Coll.Seq == -1.
	Coll    CollKey
	Pattern uint8 // index into StatPatterns
}

// CollKey identifies one collective operation: the n-th analysed one on
// a communicator.
type CollKey struct {
	Comm uint32
	Seq  int32
}

// Statistics collects the wait-state instances of one location.
type Statistics struct {
	Instances []Instance
	seq       map[uint32]int32
}

// RegisterStatistics subscribes a collector of wait-state instances to
// bus. Register it after the patterns.
func RegisterStatistics(bus *replay.Bus) *Statistics {
	s := &Statistics{seq: map[uint32]int32{}}
	p2p := CollKey{Seq: -1}
	replay.Subscribe(bus, LateSenderFound, func(c *replay.Ctx, info *LateSenderInfo) error {
		s.add(Instance{Pattern: uint8(stat(LateSender)), Callpath: c.Callpath(info.Recv), Enter: c.EnterTime(info.Recv), Exit: c.Trace.Events[info.Recv].Time, Duration: info.Idle, Rank: int32(c.Loc.Rank), Coll: p2p})
		return nil
	})
	replay.Subscribe(bus, LateSenderWrongOrder, func(c *replay.Ctx, info *LateSenderInfo) error {
		send, _ := replay.Get(c, SendEvent)
		s.add(Instance{Pattern: uint8(stat(LateSenderWO)), Callpath: c.Callpath(info.Recv), Enter: send.Time, Exit: c.Event().Time, Duration: info.Idle, Rank: int32(c.Loc.Rank), Coll: p2p})
		return nil
	})
	replay.Subscribe(bus, LateReceiverFound, func(c *replay.Ctx, lr *LateReceiverInfo) error {
		cmp := lr.Completion
		recv, _ := replay.Get(c, RecvTime)
		s.add(Instance{Pattern: uint8(stat(LateReceiver)), Callpath: c.Callpath(cmp), Enter: c.EnterTime(cmp), Exit: recv, Duration: lr.Idle, Rank: int32(c.Loc.Rank), Coll: p2p})
		return nil
	})
	coll := func(topic replay.Topic, idle, completion int, syncOnly bool) {
		bus.On(topic, func(c *replay.Ctx) error {
			comm := c.Trace.Collective(c.Index).Comm
			key := CollKey{comm, s.seq[comm]}
			s.seq[comm]++
			if syncOnly && !c.Coll.SyncPoint {
				return nil
			}
			cp := c.Callpath(c.Index)
			// An instance begins at the collective's begin event, but a
			// Wait at N×N at its region's Enter, as in the reference (they
			// differ after a timestamp correction, which keeps events
			// at least 1 ns apart).
			enter := c.Coll.My.Time
			if idle >= 0 && (topic != replay.FwNToOne || c.Idle > 0) {
				in := enter
				if topic == replay.FwNxN {
					in = c.EnterTime(c.Index)
				}
				s.add(Instance{Pattern: uint8(idle), Callpath: cp, Enter: in, Exit: c.Coll.End, Duration: c.Idle, Rank: int32(c.Loc.Rank), Coll: key})
			}
			if completion >= 0 {
				s.add(Instance{Pattern: uint8(completion), Callpath: cp, Enter: enter, Exit: c.Coll.End, Duration: c.Completion, Rank: int32(c.Loc.Rank), Coll: key})
			}
			return nil
		})
	}
	coll(replay.FwBarrier, stat(BarrierWait), stat(BarrierCompletion), false)
	coll(replay.FwNxN, stat(WaitNxN), stat(NxNCompletion), true)
	coll(replay.FwOneToN, stat(LateBroadcast), -1, false)
	coll(replay.FwNToOne, stat(EarlyReduce), -1, false) // only the root waits
	coll(replay.FwScan, stat(EarlyScan), -1, false)
	return s
}

func (s *Statistics) add(in Instance) { s.Instances = append(s.Instances, in) }
