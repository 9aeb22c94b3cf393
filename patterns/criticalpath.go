package patterns

import (
	"fmt"
	"math"
	"slices"

	"scout/replay"
)

// criticalPath is the critical path (critical_path) and the performance
// impact metrics derived from it, found in the cpath pass (pathwalk.go):
//
//	walk:     the path starts at the Leave of MPI_Finalize of the last
//	          rank to enter it and runs back in time. A location on the
//	          path stays on it until it meets a wait state (a Late Sender
//	          receive, a Late Receiver send completion, a waiting
//	          collective end); the interval from that wait state to the
//	          point it joined the path (its time map, minus the wait at
//	          the wait state's call path) is its share, and the path moves
//	          to the partner that caused the wait: the sender (at its
//	          send), the receiver (at its receive request), or the
//	          collective's delayer (root of a 1-to-N, else the latest).
//	          The path ends at MPI_Init's Leave.
//	severity: the location's share per call path (critical_path; any
//	          sign)
//
// Then, with gcp the sum over ranks of the shares and
// lt the location's exclusive time per call path minus the waits of its
// synchpoints:
//
//	critical_path_activities:     min(gcp, lt) where gcp > 0
//	non_critical_path_activities: lt − gcp where positive
//	critical_imbalance_impact:    each rank's excess of the critical path
//	                              over its own time, scaled so that its
//	                              sum is the rank's waiting time, summed
//	                              over ranks and shared out by the
//	                              rank's share of the path
//	inter_partition_imbalance:    the same with the headroom of the call
//	                              paths on the path that the rank does not
//	                              execute at all
//
// A division by zero in the scaling (a rank without excess or headroom)
// makes the sum NaN and the metric absent, as in Scalasca.
type criticalPath struct {
	lcp []float64 // share by local call path
	seg cpvec     // scratch
	wm  cpvec
}

// registerPath subscribes the critical path's pass (pathwalk.go).
func (rc *rootCause) registerPath(bus *replay.Bus) {
	bus.On(CpathSolve, rc.solvePath)
}

// pathShare adds the segment from synchpoint from to event to (where
// the location joined the path) to its share, less the wait at from.
func (rc *rootCause) pathShare(c *replay.Ctx, from, to int) {
	p := &rc.path
	rc.tm.runtimes(c.Trace, from, to, &p.seg)
	if n := len(c.Trace.Callpaths); len(p.lcp) < n {
		p.lcp = slices.Grow(p.lcp, n-len(p.lcp))[:n]
	}
	for k, cp := range p.seg.cp {
		p.lcp[cp] += p.seg.v[k]
	}
	cp := c.Trace.Callpath(from)
	p.lcp[cp] -= math.Min(rc.sp.waitOf(from), p.seg.get(cp))
}

// finishPath computes the metrics of the critical path from the
// location's share (two sums over all locations).
func (rc *rootCause) finishPath(c *replay.Ctx) error {
	p := &rc.path
	if c.Loc.Global == nil && (c.Loc.Team != nil || c.Loc.World.Size() > 1) {
		return fmt.Errorf("root cause: the critical path needs the unified call tree (replay.Location.Global)")
	}
	n, global := c.Loc.GlobalPaths()
	ncp := len(c.Trace.Callpaths)
	lcp := make([]float64, n)
	for k, v := range p.lcp {
		lcp[global(uint32(k))] += v
	}
	sum, err := c.AllLocationsSum(lcp)
	if err != nil {
		return err
	}
	gcp := slices.Clone(sum)
	// lt: the local time without the waits of the synchpoints
	rc.tm.runtimes(c.Trace, -1, -1, &p.seg)
	rc.waitMap(c.Trace, rc.sp.every(), &p.wm)
	lt := make([]float64, n)
	for k, cp := range p.seg.cp {
		v := p.seg.v[k]
		if j, ok := p.wm.find(cp); ok {
			v -= math.Min(v, p.wm.v[j])
		}
		lt[global(cp)] += v
	}
	for k := range ncp {
		g := int(global(uint32(k)))
		if k < len(p.lcp) && p.lcp[k] != 0 {
			c.Add(CriticalPath, uint32(k), p.lcp[k])
		}
		if gcp[g] > 0 {
			if v := math.Min(gcp[g], lt[g]); v != 0 {
				c.Add(CriticalPathActivities, uint32(k), v)
			}
		}
		if v := lt[g] - gcp[g]; v > 0 {
			c.Add(NonCriticalPathActivities, uint32(k), v)
		}
	}
	// imbalance: excess over the local time, and headroom of the call
	// paths not executed here, each scaled to the local waiting time
	var sumG, sumL, sumExc, sumHR, lp float64
	for g := range n {
		sumG += gcp[g]
		sumL += lt[g]
	}
	vec := make([]float64, 2*n)
	exc, hr := vec[:n], vec[n:]
	for g := range n {
		exc[g] = math.Max(gcp[g]-lt[g], 0)
		sumExc += exc[g]
		hr[g] = gcp[g]
		if lt[g] > 0 {
			lp += lt[g] + (hr[g] - math.Min(lt[g], hr[g]))
			hr[g] = 0
		}
	}
	for g := range n {
		sumHR += hr[g]
	}
	f, fh := (sumG-sumL)/sumExc, (sumG-lp)/sumHR // IEEE: x/0 is ±Inf or NaN, which poisons the sums
	for g := range n {
		exc[g] *= f
		hr[g] *= fh
	}
	red, err := c.AllLocationsSum(vec)
	if err != nil {
		return err
	}
	for k := range ncp {
		g := int(global(uint32(k)))
		if !(lcp[g] > 0) {
			continue
		}
		if v := lcp[g] / gcp[g] * red[g]; v > 0 {
			c.Add(CriticalImbalanceImpact, uint32(k), v)
		}
		if v := lcp[g] / gcp[g] * red[n+g]; v > 0 {
			c.Add(InterPartitionImbalance, uint32(k), v)
		}
	}
	return nil
}
