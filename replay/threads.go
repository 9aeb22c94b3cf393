package replay

import (
	"errors"
	"fmt"
	"math"

	"scout/hpc"
	"scout/localtrace"
)

// LockTable holds when the locks of one rank's threads were released:
// by lock and acquisition order (the n-th acquisition of a lock by any
// thread of the rank). It is built once from the traces of all the
// rank's threads, before their replay, and only read then.
type LockTable struct {
	release map[lockKey]float64
}

type lockKey struct{ lock, order uint32 }

// NewLockTable collects the lock releases of the traces of one rank's
// threads; it returns nil when they release no lock.
func NewLockTable(threads []*localtrace.Trace) *LockTable {
	var lt *LockTable
	for _, t := range threads {
		for i := range t.Events {
			e := &t.Events[i]
			if e.Kind != localtrace.KindLockRelease {
				continue
			}
			if lt == nil {
				lt = &LockTable{release: map[lockKey]float64{}}
			}
			l := t.Lock(i)
			lt.release[lockKey{l.Lock, l.Order}] = t.Time(i)
		}
	}
	return lt
}

// Released returns when the acquisition of lock with the given order
// ended, by the release of that order, and whether it was released.
func (lt *LockTable) Released(lock, order uint32) (float64, bool) {
	if lt == nil {
		return 0, false
	}
	t, ok := lt.release[lockKey{lock, order}]
	return t, ok
}

// TeamMax returns the element-wise maximum of the threads' v over the
// rank's team (Location.Team), in every thread; the result is shared:
// read it only. Every thread of the rank must call it at the same point
// of its replay (at the k-th barrier, say), with vectors of the same
// length; a thread that has nothing to contribute passes -Inf. On a rank
// of one thread it returns v.
func (c *Ctx) TeamMax(v []float64) ([]float64, error) {
	if c.Loc.Team == nil {
		return v, nil
	}
	out, err := c.Loc.Team.AllreduceFloats(hpc.Max, v)
	if err != nil {
		return nil, c.teamErr(err)
	}
	return out, nil
}

// teamErr explains an error of a team collective: when the threads called
// different ones, their traces do not match.
func (c *Ctx) teamErr(err error) error {
	if errors.Is(err, hpc.ErrMismatch) {
		return fmt.Errorf("replay: thread %d of rank %d: the rank's threads reached different OpenMP synchronisations here (a barrier, a parallel region): their traces do not match: %w",
			c.Loc.Thread, c.Loc.Rank, err)
	}
	return fmt.Errorf("replay: thread team of rank %d: %w", c.Loc.Rank, err)
}

// TeamMaxLoc returns the element-wise MaxLoc of the threads' v over the
// rank's team (the latest time, and of equal times the lowest Rank), in
// every thread; called like TeamMax.
func (c *Ctx) TeamMaxLoc(v []TimeRank) ([]TimeRank, error) {
	if c.Loc.Team == nil {
		return v, nil
	}
	out, err := c.Loc.Team.Allreduce(hpc.MaxLoc, v)
	if err != nil {
		return nil, c.teamErr(err)
	}
	return out, nil
}

// TeamGatherFields is GatherFields over the rank's team: thread root
// gets the fields every thread put, by thread, for UseGathered.
func (c *Ctx) TeamGatherFields(root int) (int, error) {
	n, err := c.gatherFields(c.Loc.Team, root)
	if err != nil {
		return 0, c.teamErr(err)
	}
	return n, nil
}

// TeamSize returns the number of threads of the rank.
func (c *Ctx) TeamSize() int {
	if c.Loc.Team == nil {
		return 1
	}
	return c.Loc.Team.Size()
}

// AllLocationsSum returns on every location the element-wise sum of v
// over all locations of the program: the threads of each rank in thread
// order, then the ranks in rank order. Every location must call it at
// the same point of its replay, with vectors of the same length; the
// result is shared: read it only.
func (c *Ctx) AllLocationsSum(v []float64) ([]float64, error) {
	if c.Loc.Team == nil {
		return c.WorldAllreduceSum(v)
	}
	team, err := c.Loc.Team.AllreduceFloats(hpc.Sum, v)
	if err != nil {
		return nil, c.teamErr(err)
	}
	// the masters sum over the ranks, then hand the result to their threads
	var mine []float64
	if c.Loc.World != nil {
		if mine, err = c.WorldAllreduceSum(team); err != nil {
			return nil, err
		}
	}
	out, err := c.Loc.Team.Bcast(0, Float64sCodec.Append(nil, mine))
	if err != nil {
		return nil, c.teamErr(err)
	}
	var sum []float64
	if err := Float64sCodec.Decode(out, &sum); err != nil || len(sum) != len(v) {
		return nil, fmt.Errorf("replay: thread team of rank %d: %d sums for %d values (%v)", c.Loc.Rank, len(sum), len(v), err)
	}
	return sum, nil
}

// NoValue is what a thread contributes to TeamMax when it has nothing to
// contribute.
var NoValue = math.Inf(-1)
