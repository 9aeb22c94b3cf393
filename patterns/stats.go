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
type Instance struct {
	Pattern  uint8   // index into StatPatterns
	Callpath uint32  // local call path (global once combined)
	Enter    float64 // begin of the instance
	Exit     float64 // end of the instance
	Duration float64 // the wait time
	Rank     int     // world rank
	// Coll identifies a collective operation instance (communicator and
	// sequence number on it); the instances of all its participants are
	// aggregated. Point-to-point instances have Coll.Seq == -1.
	Coll CollKey
}

// CollKey identifies one collective operation: the n-th analysed one on
// a communicator.
type CollKey struct {
	Comm uint32
	Seq  int
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
	seq       map[uint32]int
}

// RegisterStatistics subscribes a collector of wait-state instances to
// bus. Register it after the patterns.
func RegisterStatistics(bus *replay.Bus) *Statistics {
	s := &Statistics{seq: map[uint32]int{}}
	p2p := CollKey{Seq: -1}
	bus.On(replay.LateSender, func(c *replay.Ctx) error {
		info := c.Aux.(*LateSenderInfo)
		s.add(Instance{statLS, c.Callpath(info.Recv), c.EnterTime(info.Recv), c.Trace.Events[info.Recv].Time, info.Idle, c.Loc.Rank, p2p})
		return nil
	})
	bus.On(replay.LateSenderWO, func(c *replay.Ctx) error {
		info := c.Aux.(*LateSenderInfo)
		s.add(Instance{statLSWO, c.Callpath(info.Recv), c.Remote[replay.RoleSend].Time, c.Event().Time, info.Idle, c.Loc.Rank, p2p})
		return nil
	})
	bus.On(replay.LateReceiver, func(c *replay.Ctx) error {
		cmp := c.Index
		if e := c.Event(); e.Kind == localtrace.KindIsend && e.C != localtrace.None {
			cmp = int(e.C)
		}
		s.add(Instance{statLR, c.Callpath(cmp), c.EnterTime(cmp), c.Remote[replay.RoleRecv].Time, c.Idle, c.Loc.Rank, p2p})
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
				s.add(Instance{uint8(idle), cp, enter, c.Coll.End, c.Idle, c.Loc.Rank, key})
			}
			if completion >= 0 {
				s.add(Instance{uint8(completion), cp, enter, c.Coll.End, c.Completion, c.Loc.Rank, key})
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
