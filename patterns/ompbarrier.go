package patterns

import (
	"math"

	"scout/localtrace"
	"scout/replay"
)

// OmpWaitInfo describes an OpenMP wait state (at a barrier or a lock) for
// the patterns that refine it.
type OmpWaitInfo struct {
	Metric      replay.Metric // OmpEBarrierWait, OmpIBarrierWait, OmpLockContention*
	Enter, Exit float64       // the wait's region instance: its Enter; its Leave, or the lock's acquisition
	Idle        float64
	// Team and Seq identify a barrier instance (the team's communicator
	// and the barrier's number in it); Seq is -1 for a lock.
	Team uint32
	Seq  int32
	// Latest is the thread that entered a barrier last (of equal
	// times the lowest), at Latest.Time.
	Latest replay.TimeRank
}

// OmpWaitFound is an OpenMP wait state.
var OmpWaitFound = replay.NewEvent[OmpWaitInfo]("OmpWait")

// ompBarrier is Wait at OpenMP Barrier (omp_ebarrier_wait,
// omp_ibarrier_wait):
//
//	root:        a thread's Leave of an OpenMP barrier inside a parallel
//	             region; the k-th barrier of every thread of the rank
//	             (explicit and implicit ones counted together) is one
//	             instance
//	constituents: the Enter of the barrier on every thread of the team
//	constraint:  the thread entered before the last one:
//	             idle = latest enter − enter > 0
//	severity:    idle
//	attribution: omp_ebarrier_wait for an explicit barrier ("!$omp
//	             barrier"), omp_ibarrier_wait for an implicit one (at the
//	             end of a worksharing construct or parallel region), at
//	             the barrier's call path
//
// A barrier outside every parallel region synchronises no team and is
// left alone.
type ompBarrier struct {
	parallel int // parallel regions open on this thread
	seq      int32
	team     uint32 // the team's communicator (see teamOf)
	info     OmpWaitInfo
	enter    [1]replay.TimeRank
}

func registerOmpBarrier(bus *replay.Bus) {
	if !mayHaveOmp(bus) {
		return
	}
	p := &ompBarrier{team: localtrace.None}
	bus.On(replay.FwEnter, func(c *replay.Ctx) error {
		if c.RegionClass(c.Index)&replay.ClassOmpParallel != 0 {
			p.parallel++
		}
		return nil
	})
	bus.On(replay.FwLeave, func(c *replay.Ctx) error {
		cls := c.RegionClass(c.Index)
		if cls&replay.ClassOmpParallel != 0 {
			p.parallel--
		}
		if cls&replay.ClassOmpBarrier == 0 || p.parallel == 0 {
			return nil
		}
		enter := c.EnterTime(c.Index)
		p.enter[0] = replay.TimeRank{Time: enter, Rank: c.Loc.Thread}
		latest, err := c.TeamMaxLoc(p.enter[:])
		if err != nil {
			return err
		}
		if p.team == localtrace.None {
			p.team = teamOf(c)
		}
		p.seq++
		m := barrierMetric(cls)
		idle := max(latest[0].Time-enter, 0)
		if idle > 0 {
			c.Add(m, c.Callpath(c.Index), idle)
		}
		// published also without a wait: the barrier instance of the
		// statistics spans every thread's
		p.info = OmpWaitInfo{Metric: m, Enter: enter, Exit: c.Time(), Idle: idle, Team: p.team, Seq: p.seq - 1, Latest: latest[0]}
		return replay.Emit(bus, OmpWaitFound, c, &p.info)
	})
}

// teamOf returns the communicator of the location's thread team: that of
// its first TeamBegin event, or for a trace without one a number of the
// rank's own (from the top of the id space, which definitions do not
// reach).
func teamOf(c *replay.Ctx) uint32 {
	for _, e := range c.Trace.Events {
		if e.Kind == localtrace.KindTeamBegin {
			return e.Arg
		}
	}
	return math.MaxUint32 - 1 - uint32(c.Loc.Rank)
}

// barrierMetric is the wait metric of a barrier region of classes cls:
// an implicit barrier's, or an explicit one's.
func barrierMetric(cls replay.RegionClass) replay.Metric {
	if cls&replay.ClassOmpIBarrier != 0 {
		return OmpIBarrierWait
	}
	return OmpEBarrierWait
}
