package patterns

import (
	"slices"

	"scout/replay"
)

// Long-term delay costs (delay_*_longterm): a wait state that a delay
// caused may itself delay others further on; its share in those later
// waits, by type, is its cost. Each location keeps, per wait type, a
// cost for each of its wait states (the part of that wait state that ends
// up causing waits of the type downstream). In the bwc pass:
//
//	at a delay: the waiter ships its cost of each type with its wait; the
//	          delayer books cost/den · d (den as in the short-term delay)
//	          to the type's long-term metric, and passes the cost on to its
//	          own wait states in the interval (cost · their wait), seeding
//	          the costs of the delay's own type with the short-term scale
//	collective: the same per member, with the scales summed over the
//	          members, and on the delayer the members it synchronised with
//	          later taking their own scale out of the wait states before
//	          that later synchpoint (Scalasca's sum-scales, kept with its
//	          off-by-one)
const (
	costLS = iota
	costLR
	costBarrier
	costNxN
	costOneToN
	costNToOne
	costOmpBarrier // waits at OpenMP barriers
	costOmpIdle    // worker threads idle while their master runs alone
	numCostTypes
)

// longTermMetrics are the long-term delay metrics by cost type.
var longTermMetrics = [numCostTypes]replay.Metric{DelayLateSenderLT, DelayLateReceiverLT, DelayBarrierLT,
	DelayNxNLT, DelayOneToNLT, DelayNToOneLT, DelayOmpBarrierLT, DelayOmpIdleLT}

// WaitCosts are a wait state's costs by type, shipped with its wait.
var WaitCosts = replay.NewField("wait costs", replay.Float64sCodec)

type costs struct {
	byType [numCostTypes]spValues // by wait state
	out    []float64              // scratch of WaitCosts
}

func (k *costs) init() { k.byType = [numCostTypes]spValues{} }

// of returns the costs of ev (in k.out), which sp may hold.
func (k *costs) of(sp *synchpoints, ev int) []float64 {
	k.out = slices.Grow(k.out[:0], numCostTypes)[:numCostTypes]
	i := sp.index(ev)
	for t := range k.byType {
		k.out[t] = k.byType[t].at(i)
	}
	return k.out
}

// addCosts adds x · wait to the cost of type t of every wait state among
// the synchpoints props.
func (rc *rootCause) addCosts(t int, props spRange, x float64) {
	if !(x > 0) {
		return
	}
	for i := props.lo; i < props.hi; i++ {
		if w := rc.sp.sps[i].wait; w > 0 {
			rc.costs.byType[t].add(&rc.sp, i, x*w)
		}
	}
}

// p2pLongTerm books the long-term costs of a point-to-point delay of
// type typ (d in rc.dl.d, over the interval of props).
func (rc *rootCause) p2pLongTerm(c *replay.Ctx, typ, ev int, rwait, den, wsum float64, props spRange) {
	rcost, _ := replay.Get(c, WaitCosts)
	if !(den > 0) || len(rcost) != numCostTypes {
		return
	}
	scaleW := min(rwait/den, 1)
	rc.recordPropagation(typ, ev, scaleW, wsum, props)
	d := &rc.dl.d
	for t := range numCostTypes {
		sc := rcost[t] / den
		if sc > 0 {
			for k, cp := range d.cp {
				c.Add(longTermMetrics[t], cp, sc*d.v[k])
			}
		}
		if t == typ {
			rc.addCosts(t, props, scaleW+sc)
		} else {
			rc.addCosts(t, props, sc)
		}
	}
}

// addCostsScaled adds to the costs of type t of the wait states among
// props their wait times the scale of ss (event → scale) in force: that
// of the latest key not after the wait state, the first key's before.
func (rc *rootCause) addCostsScaled(t int, props spRange, keys []int, vals []float64) {
	if props.hi <= props.lo || len(keys) == 0 {
		return
	}
	x := vals[0]
	for i := props.lo; i < props.hi; i++ {
		if k, ok := slices.BinarySearch(keys, int(rc.sp.events[i])); ok {
			x = vals[k]
		}
		if w := rc.sp.sps[i].wait; x > 0 && w > 0 {
			rc.costs.byType[t].add(&rc.sp, i, x*w)
		}
	}
}
