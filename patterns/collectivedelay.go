package patterns

import (
	"fmt"
	"math"
	"slices"

	"scout/replay"
)

// collectiveDelay is the short-term delay cost of collective wait states
// (delay_barrier, delay_n2n, delay_12n, delay_n21), found in the bwc pass
// at a collective's end, by all members of its communicator together:
//
//	delayer:  the root of a 1-to-N operation, else the member that
//	          entered last (the Latest of the forward pass)
//	interval: on the delayer, from its previous synchpoint that
//	          synchronised with every other member (members it synchronised
//	          with in between get their own interval, from that
//	          intermediate synchpoint); on the others, from their previous
//	          synchpoint with the delayer; waits and the starting
//	          synchpoint's region pruned as for point-to-point delays
//	delay:    each waiting member's excess of the delayer's times per call
//	          path over its own (positive differences, dd), scaled by its
//	          wait / (Σ dd + the delayer's waits in its interval)
//	severity: the sum over the members, on the delayer, at its call paths
//
// A collective end that is no synchpoint on a member contributes
// nothing; if it is none on the delayer, there is no delay at all.
type collectiveDelay struct {
	group, local cpvec
	groupMap     replay.Timemap
	localMap     replay.Timemap
	t0, remote   []float64 // by call path of groupMap: the delayer's and a member's times
	vec          []float64
	gamma        []float64
	sum, scales  []float64 // the delayer's sums and the members' scales
	prev         int       // the delayer's start of its interval
	inc          []incScale
	keys         []int
	vals         []float64
	remaining    []bool
	spmap        []int // by communicator rank: intermediate synchpoint, -1 for none
}

// Fields of the collective delay exchange (gathered to the delayer).
var (
	// MemberGammas are a member's wait at the collective and its
	// incoming long-term costs by type.
	MemberGammas = replay.NewField("member gammas", replay.Float64sCodec)
	// MemberSync: the collective's end is a synchpoint of the member.
	MemberSync = replay.NewField("member sync", replay.BoolCodec)
	// MemberTimes are a synchronised member's times since its previous
	// synchpoint with the delayer (global call paths).
	MemberTimes = replay.NewField("member times", replay.TimemapCodec)
)

// groupPrev finds, before synchpoint ev, the synchpoint from which the
// delayer (world rank delayer) synchronised with every other member of
// comm, and sets cd.spmap for the members it synchronised with later.
func (rc *rootCause) groupPrev(c *replay.Ctx, ev int, comm uint32, delayer int) int {
	cd := &rc.cd
	members := c.Env.CommMembers[comm]
	cd.remaining = slices.Grow(cd.remaining[:0], len(members))[:len(members)]
	cd.spmap = slices.Grow(cd.spmap[:0], len(members))[:len(members)]
	left := 0
	for r, w := range members {
		cd.remaining[r] = w != delayer
		cd.spmap[r] = -1
		if w != delayer {
			left++
		}
	}
	last := -1
	for k := rc.sp.rank(ev) - 1; k >= 0 && left > 0; k-- {
		e := int(rc.sp.events[k])
		p := &rc.sp.sps[k]
		if p.omp() {
			continue // the threads' synchronisation: no rank
		}
		last = e
		all := true
		for r, w := range members {
			if cd.remaining[r] && !rc.sp.contains(p, w) {
				all = false
				break
			}
		}
		if all {
			break
		}
		for r, w := range members {
			if cd.remaining[r] && rc.sp.contains(p, w) {
				cd.spmap[r] = e
				cd.remaining[r] = false
				left--
			}
		}
	}
	return last
}

// spTimes sets out to the pruned times of the interval (from, to) and
// out.sum to the waits of its synchpoints.
func (rc *rootCause) spTimes(c *replay.Ctx, from, to int, out *cpvec) error {
	if err := rc.intervalTimes(c.Trace, from, to, out); err != nil {
		return err
	}
	out.sum = rc.dl.waits.sum
	return nil
}

// toGlobal sets m to v with global call paths.
func toGlobal(c *replay.Ctx, v *cpvec, m *replay.Timemap) {
	m.Reset()
	_, global := c.Loc.GlobalPaths()
	for k, cp := range v.cp {
		m.Append(global(cp), v.v[k])
	}
	m.Sort()
}

// collDelay computes the collective delay at collective end c.Index,
// in one exchange: every member sends the delayer what its delay needs
// (its wait and incoming costs, and when the collective is a synchpoint
// here, its times since its previous synchpoint with the delayer), and
// the delayer computes each member's delay against its own interval, in
// rank order.
func (rc *rootCause) collDelay(c *replay.Ctx, rec collRecord) error {
	cd := &rc.cd
	me, size, err := c.CollMember()
	if err != nil {
		return err
	}
	defer cd.release(size)
	comm := c.Trace.Collective(c.Index).Comm
	members := c.Env.CommMembers[comm]
	delayer := members[rec.delayer]
	sync := rc.sp.has(c.Index)
	isDelayer := me == int(rec.delayer)
	const nk = 1 + numCostTypes
	// the wait (short term) and the incoming costs by type (long term)
	cd.gamma = append(cd.gamma[:0], math.Max(rc.sp.waitOf(c.Index), 0))
	cd.gamma = append(cd.gamma, rc.costs.of(&rc.sp, c.Index)...)
	replay.Put(c, MemberGammas, cd.gamma)
	replay.Put(c, MemberSync, sync)
	if sync && !isDelayer {
		if err := rc.delayTimemap(c, c.Index, delayer); err != nil {
			return err
		}
		replay.Put(c, MemberTimes, rc.dl.out)
	}
	n, err := c.GatherFields(int(rec.delayer))
	if err != nil || !isDelayer {
		return err
	}
	if n != size {
		return fmt.Errorf("root cause: fields of %d members gathered, want %d", n, size)
	}
	// The delayer's interval: back to where it synchronised with every
	// other member (for the members it synchronised with later, from
	// there: below).
	cd.group.reset()
	if sync {
		cd.prev = rc.groupPrev(c, c.Index, comm, delayer)
		if err := rc.spTimes(c, cd.prev, c.Index, &cd.group); err != nil {
			return err
		}
	}
	toGlobal(c, &cd.group, &cd.groupMap)
	cps := cd.groupMap.CP // the global call paths of the delayer's interval, sorted
	nc := len(cps)
	// Each member's scaled delays, summed over the members in rank order.
	width := nk * nc
	cd.sum = slices.Grow(cd.sum[:0], width)[:width]
	clear(cd.sum)
	cd.scales = slices.Grow(cd.scales[:0], nk*size)[:nk*size]
	cd.vec = slices.Grow(cd.vec[:0], nc)[:nc]
	cd.t0 = slices.Grow(cd.t0[:0], nc)[:nc]
	cd.remote = slices.Grow(cd.remote[:0], nc)[:nc]
	for r := range size {
		if err := c.UseGathered(r); err != nil {
			return err
		}
		mSync, _ := replay.Get(c, MemberSync)
		mGamma, _ := replay.Get(c, MemberGammas)
		if len(mGamma) != nk {
			return fmt.Errorf("root cause: member %d sent %d costs, want %d", r, len(mGamma), nk)
		}
		// the delayer's times (t0) and the member's (remote) on the
		// call paths of the delayer's interval
		pw, t0 := cd.group.sum, cd.groupMap.T
		if sync && cd.spmap[r] >= 0 {
			if err := rc.spTimes(c, cd.spmap[r], c.Index, &cd.local); err != nil {
				return err
			}
			toGlobal(c, &cd.local, &cd.localMap)
			cd.localMap.Lookup(cps, cd.t0)
			pw, t0 = cd.local.sum, cd.t0
		}
		clear(cd.remote)
		if mSync && r != int(rec.delayer) {
			local, _ := replay.Get(c, MemberTimes)
			local.Lookup(cps, cd.remote)
		}
		dsum := 0.0
		for i := range cps {
			d := 0.0
			if mSync {
				d = math.Max(t0[i]-cd.remote[i], 0)
			}
			cd.vec[i] = d
			dsum += d
		}
		var scale [nk]float64
		for k := range nk {
			if dsum+pw > 0 {
				scale[k] = mGamma[k] / (dsum + pw)
			}
			cd.scales[r*nk+k] = scale[k]
		}
		for k := range nk {
			if scale[k] == 0 {
				continue // (most cost types of most members)
			}
			for i, d := range cd.vec {
				cd.sum[k*nc+i] += d * scale[k]
			}
		}
	}
	if !sync {
		return nil
	}
	rc.dl.ensureLocal(c)
	for k := range nk {
		seg := cd.sum[k*nc : (k+1)*nc]
		total := 0.0
		for _, v := range seg {
			total += v
		}
		if !(total > 0) {
			continue
		}
		m := rec.metric
		if k > 0 {
			m = longTermMetrics[k-1]
		}
		for i, g := range cps {
			if l, ok := rc.dl.g2l[g]; ok {
				c.Add(m, l, seg[i])
			}
		}
	}
	// Scalasca's sum-scales: the scales summed over the members, less
	// those of the members synchronised with later, which count only
	// from the synchpoint after that later one on
	scales := cd.scales
	props := rc.sp.between(cd.prev, c.Index)
	cd.inc = cd.inc[:0]
	for r, e := range cd.spmap {
		if e >= 0 {
			cd.inc = append(cd.inc, incScale{ev: e, rank: r})
		}
	}
	slices.SortStableFunc(cd.inc, func(a, b incScale) int { return a.ev - b.ev })
	for k := range nk {
		total := 0.0
		for r := range size {
			total += scales[r*nk+k]
		}
		for _, x := range cd.inc {
			total -= scales[x.rank*nk+k]
		}
		cd.keys, cd.vals = append(cd.keys[:0], cd.prev), append(cd.vals[:0], total)
		for j := 0; j < len(cd.inc); {
			e, add := cd.inc[j].ev, 0.0
			for ; j < len(cd.inc) && cd.inc[j].ev == e; j++ {
				add += scales[cd.inc[j].rank*nk+k]
			}
			if !slices.Contains(cd.keys, e) {
				cd.keys, cd.vals = append(cd.keys, e), append(cd.vals, total)
			}
			total += add
		}
		if k == 0 {
			rc.addCostsScaled(int(rec.typ), props, cd.keys, cd.vals)
		} else {
			rc.addCostsScaled(k-1, props, cd.keys, cd.vals)
		}
	}
	return nil
}

type incScale struct{ ev, rank int }

// release drops the scratch sized by the members of a large
// communicator: a location that was once the delayer of a collective of
// many ranks does not keep it (all of them would: memory O(ranks²)).
func (cd *collectiveDelay) release(members int) {
	if members > 1024 {
		cd.scales, cd.spmap, cd.remaining = nil, nil, nil
	}
}
