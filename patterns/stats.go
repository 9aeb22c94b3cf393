package patterns

import (
	"scout/localtrace"
	"scout/replay"
)

// StatPatterns lists the patterns of the statistics file, in its order.
var StatPatterns = []string{
	"mpi_latesender", "mpi_latesender_wo", "mpi_latereceiver", "mpi_wait_nxn", "mpi_barrier_wait",
	"mpi_earlyreduce", "mpi_earlyscan", "mpi_latebroadcast", "mpi_barrier_completion", "mpi_nxn_completion",
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

const (
	statLS = iota
	statLSWO
	statLR
	statNxN
	statBarrier
	statEarlyReduce
	statEarlyScan
	statLateBcast
	statBarrierCompl
	statNxNCompl
)

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
	bus.On(replay.LateSender, func(c *replay.Ctx) error {
		info := c.Aux.(*LateSenderInfo)
		s.add(Instance{Pattern: statLS, Callpath: c.Callpath(info.Recv), Enter: c.EnterTime(info.Recv), Exit: c.Trace.Events[info.Recv].Time, Duration: info.Idle, Rank: int32(c.Loc.Rank), Coll: p2p})
		return nil
	})
	bus.On(replay.LateSenderWO, func(c *replay.Ctx) error {
		info := c.Aux.(*LateSenderInfo)
		s.add(Instance{Pattern: statLSWO, Callpath: c.Callpath(info.Recv), Enter: c.Remote[replay.RoleSend].Time, Exit: c.Event().Time, Duration: info.Idle, Rank: int32(c.Loc.Rank), Coll: p2p})
		return nil
	})
	bus.On(replay.LateReceiver, func(c *replay.Ctx) error {
		cmp := c.Index
		if e := c.Event(); e.Kind == localtrace.KindIsend && e.C != localtrace.None {
			cmp = int(e.C)
		}
		s.add(Instance{Pattern: statLR, Callpath: c.Callpath(cmp), Enter: c.EnterTime(cmp), Exit: c.Remote[replay.RoleRecv].Time, Duration: c.Idle, Rank: int32(c.Loc.Rank), Coll: p2p})
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
			enter := c.Coll.My.Time
			if idle >= 0 && (topic != replay.FwNToOne || c.Idle > 0) {
				s.add(Instance{Pattern: uint8(idle), Callpath: cp, Enter: enter, Exit: c.Coll.End, Duration: c.Idle, Rank: int32(c.Loc.Rank), Coll: key})
			}
			if completion >= 0 {
				s.add(Instance{Pattern: uint8(completion), Callpath: cp, Enter: enter, Exit: c.Coll.End, Duration: c.Completion, Rank: int32(c.Loc.Rank), Coll: key})
			}
			return nil
		})
	}
	coll(replay.FwBarrier, statBarrier, statBarrierCompl, false)
	coll(replay.FwNxN, statNxN, statNxNCompl, true)
	coll(replay.FwOneToN, statLateBcast, -1, false)
	coll(replay.FwNToOne, statEarlyReduce, -1, false) // only the root waits
	coll(replay.FwScan, statEarlyScan, -1, false)
	return s
}

func (s *Statistics) add(in Instance) { s.Instances = append(s.Instances, in) }
