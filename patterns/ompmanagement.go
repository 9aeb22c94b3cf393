package patterns

import (
	"math"

	"scout/localtrace"
	"scout/replay"
)

// ompManagement is OpenMP thread management (omp_management, omp_fork):
//
//	root:        a thread's Enter and Leave of a parallel region
//	constituents: the master's last fork before its Enter of the region
//	             (FORK), its first join after its Leave of it (JOIN); the
//	             k-th parallel region of every thread of the rank is one
//	             instance
//	severity:    fork = max(0, enter − FORK), join = max(0, JOIN − leave)
//	             on every thread of the team, the master included
//	attribution: omp_fork gets fork, omp_management fork + join, at the
//	             thread's call path of the parallel region
//
// The management time belongs to the parallel region: time moves there,
// on the master out of the call path that forked the team; a worker's
// time then runs from the fork to the join.
type ompManagement struct {
	info OmpTeamInfo
	bus  *replay.Bus
}

// OmpTeamInfo describes a thread's Enter or Leave of a parallel region
// (the current event) for the patterns that refine it: the fork or join
// time (at least 0) and, at the Enter, the team's earliest Enter.
type OmpTeamInfo struct {
	Fork     bool // the Enter (else the Leave)
	Amount   float64
	Earliest float64
}

// OmpTeamFound is a thread's Enter or Leave of a parallel region.
var OmpTeamFound = replay.NewEvent[OmpTeamInfo]("OmpTeam")

func registerOmpManagement(bus *replay.Bus) {
	if !mayHaveOmp(bus) {
		return
	}
	p := &ompManagement{bus: bus}
	var v [2]float64
	bus.On(replay.FwEnter, func(c *replay.Ctx) error {
		if c.RegionClass(c.Index)&replay.ClassOmpParallel == 0 {
			return nil
		}
		enter := c.Time()
		v[0] = replay.NoValue
		if c.Loc.Thread == 0 {
			v[0] = lastBefore(c.Trace, c.Index, localtrace.KindFork)
		}
		v[1] = -enter // the team's earliest Enter
		out, err := c.TeamMax(v[:])
		if err != nil {
			return err
		}
		return p.manage(c, enter-out[0], -out[1], true)
	})
	bus.On(replay.FwLeave, func(c *replay.Ctx) error {
		if c.RegionClass(c.Index)&replay.ClassOmpParallel == 0 {
			return nil
		}
		v[0] = replay.NoValue
		if c.Loc.Thread == 0 {
			v[0] = firstAfter(c.Trace, c.Index, localtrace.KindJoin)
		}
		join, err := c.TeamMax(v[:1])
		if err != nil {
			return err
		}
		return p.manage(c, join[0]-c.Time(), 0, false)
	})
}

// manage books the management time d (clipped at 0) of the current
// parallel region event, the fork at its Enter, the join at its Leave
// (omp_fork counts in omp_management too), moves it into the region's
// time and publishes it.
func (p *ompManagement) manage(c *replay.Ctx, d, earliest float64, fork bool) error {
	if math.IsInf(d, 0) || math.IsNaN(d) || d < 0 {
		d = 0 // no fork or join recorded, or none before/after
	}
	if d > 0 {
		cp := c.Callpath(c.Index)
		if fork {
			c.Add(OmpFork, cp, d)
		}
		c.Add(OmpManagement, cp, d)
		c.Add(Time, cp, d)
		if parent := c.Trace.Callpaths[cp].Parent; c.Loc.Thread == 0 && parent != localtrace.None {
			c.Add(Time, parent, -d)
		}
	}
	p.info = OmpTeamInfo{Fork: fork, Amount: d, Earliest: earliest}
	return replay.Emit(p.bus, OmpTeamFound, c, &p.info)
}

// lastBefore returns the time of the last event of kind k before event i
// with no region entered or left in between, -Inf for none (a fork comes
// right before the parallel region).
func lastBefore(t *localtrace.Trace, i int, k localtrace.Kind) float64 {
	for j := i - 1; j >= 0; j-- {
		switch t.Events[j].Kind {
		case k:
			return t.Time(j)
		case localtrace.KindEnter, localtrace.KindLeave:
			return math.Inf(-1)
		}
	}
	return math.Inf(-1)
}

// firstAfter returns the time of the first event of kind k after event i
// with no region entered or left in between, +Inf for none (a join comes
// right after the parallel region).
func firstAfter(t *localtrace.Trace, i int, k localtrace.Kind) float64 {
	for j := i + 1; j < len(t.Events); j++ {
		switch t.Events[j].Kind {
		case k:
			return t.Time(j)
		case localtrace.KindEnter, localtrace.KindLeave:
			return math.Inf(1)
		}
	}
	return math.Inf(1)
}
