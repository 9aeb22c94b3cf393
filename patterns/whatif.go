package patterns

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"

	"scout/internal/fifo"
	"scout/localtrace"
	"scout/replay"
)

// What-if prediction (scout whatif) answers "how long would the run take
// if these activities took less time?" before anyone edits the code. It
// is the PerWiz method (Ino et al., "Trace reduction for performance
// improvement assessment of message passing parallel programs"): every
// location walks its events in time order, each event e keeping its
// difference d(e) = t(e) − t′(e), the time by which it happens earlier in
// the predicted run than in the measured one. The differences travel
// with the replayed messages (doc/whatif.md has the derivation):
//
//   - an event that completes no communication keeps the measured length
//     of the interval before it, scaled by the factor f of the call path
//     the interval belongs to (1 but for the selected ones):
//     d(e) = d(p) + (1−f)·Δ, with p the previous event and Δ = t(e)−t(p);
//   - an event that completes a communication (a receive, the end of a
//     collective that receives data, the Leave of MPI_Init and
//     MPI_Finalize) waited w = clamp(S − t(p), 0, Δ) for its partners'
//     begin S (the send; the latest begin of the members whose data it
//     needs). In the prediction it ends at the later of its own progress
//     without the wait and the partners' predicted begin plus the part
//     of the interval after S:
//     d(e) = min(d(p) + w + (1−f)(Δ−w), d(S) + [t(p)−S]⁺ + (1−f)·(t(e)−max(S, t(p)))),
//     the paper's Figure 3(a) and (b) (asynchronous messages, the
//     transfer time being part of the interval after S). A removed wait
//     class (--remove) drops the second term.
//   - collectives re-time as their data flows: barrier and N×N (and
//     Alltoallv/w) wait for all members that send, 1-to-N for the root,
//     N-to-1's root for all, scan member j for members up to j;
//     MPI_Init and MPI_Finalize synchronise all ranks.
//
// With no change (f = 1 everywhere, nothing removed) every difference is
// exactly 0, so the identity prediction is the measured run to the bit.
// Many hypotheses share one pass: d is a vector, one entry per
// hypothesis. The predicted run time is the latest predicted end over
// the locations less the earliest begin.

// WaitClass is a set of classes of wait states a hypothesis removes.
type WaitClass uint16

// The wait classes, named by the wait-state metric that measures them.
const (
	WaitsLateSender    WaitClass = 1 << iota // receives waiting for their send
	WaitsBarrier                             // MPI_Barrier
	WaitsNxN                                 // N×N collectives (and Alltoallv/w)
	WaitsLateBroadcast                       // 1-to-N collectives waiting for the root
	WaitsEarlyReduce                         // N-to-1 roots waiting for the members
	WaitsEarlyScan                           // scans waiting for lower ranks
	WaitsInitFinalize                        // MPI_Init and MPI_Finalize
	WaitsLateReceiver                        // rendezvous sends waiting for their receive
	numWaitClasses     = iota
)

// waitMetric names each wait class by its wait-state metric.
var waitMetric = [numWaitClasses]replay.Metric{LateSender, BarrierWait, WaitNxN, LateBroadcast, EarlyReduce, EarlyScan, FinalizeWait, LateReceiver}

// WaitClassByName returns the wait class measured by the metric of the
// given name (mpi_latesender, mpi_barrier_wait, mpi_wait_nxn,
// mpi_latebroadcast, mpi_earlyreduce, mpi_earlyscan, mpi_finalize_wait).
func WaitClassByName(name string) (WaitClass, bool) {
	for i, m := range waitMetric {
		if Catalog[m].Name == name {
			return 1 << i, true
		}
	}
	return 0, false
}

// WaitClassNames lists the names WaitClassByName accepts.
func WaitClassNames() []string {
	var out []string
	for _, m := range waitMetric {
		out = append(out, Catalog[m].Name)
	}
	return out
}

// String returns the metric names of the classes in w, comma-separated.
func (w WaitClass) String() string {
	s := ""
	for i, m := range waitMetric {
		if w&(1<<i) != 0 {
			if s != "" {
				s += ","
			}
			s += Catalog[m].Name
		}
	}
	return s
}

// Hypothesis is one change of the program a what-if prediction assumes.
type Hypothesis struct {
	// Regions scales the exclusive time of every call path of a region
	// (global region id) by its factor (0: the region takes no time).
	Regions map[uint32]float64
	// Paths scales the exclusive time of the call paths that end with
	// the given regions (global region ids); a path's factor takes
	// precedence over its region's.
	Paths []PathFactor
	// Callpaths scales the exclusive time of call paths of the unified
	// call tree (the candidates of a ranking).
	Callpaths map[uint32]float64
	// Remove are the wait classes whose waits disappear.
	Remove WaitClass
	// Ranks, if not nil, restricts the change to these world ranks.
	Ranks map[int]bool
}

// PathFactor is a call path (its regions from the root) and the factor
// of its exclusive time.
type PathFactor struct {
	Regions []uint32
	Factor  float64
}

// WhatIf is what a what-if prediction assumes: its hypotheses, each
// predicted in the same pass.
type WhatIf struct {
	Hypotheses []Hypothesis
	// Rank adds, as hypotheses after the given ones, the Rank call paths
	// that are not MPI with the largest exclusive time (over the ranks of
	// RankRanks, or all) each taking no time, and the removal of each wait
	// class (on those ranks).
	Rank      int
	RankRanks map[int]bool
	// Retime rewrites the events' times with the prediction of the only
	// hypothesis (the passes after it then analyze the predicted run).
	Retime bool
	// EagerLimit: a message of at least this many bytes is sent in
	// rendezvous mode (synchronously) when its receive was posted before
	// the send completed (else the trace shows it was buffered): the send
	// completes no earlier than its receive began. 0: every message is
	// eager (asynchronous).
	EagerLimit uint64
}

// Prediction is what a what-if prediction found, for one location or
// (merged) for the whole run.
type Prediction struct {
	// Begin and End are the earliest and latest event times measured.
	Begin, End float64
	// Ends are the latest predicted event times, by hypothesis.
	Ends []float64
	// Selected is the measured time each hypothesis changes, summed over
	// the locations: the exclusive time of the call paths it scales, the
	// waits it removes.
	Selected []float64
	// Candidates are the call paths of the unified call tree a ranking
	// chose, in the order of their hypotheses (after the given ones);
	// the wait classes' hypotheses follow them.
	Candidates []uint32
	// Waits is the measured time of each wait class (by bit index) as
	// the prediction sees it, summed over the locations.
	Waits [numWaitClasses]float64
	// Events counts the events walked.
	Events int
}

// T is the measured run time.
func (p *Prediction) T() float64 { return p.End - p.Begin }

// Predicted is the predicted run time of hypothesis k.
func (p *Prediction) Predicted(k int) float64 { return p.Ends[k] - p.Begin }

// Add merges the prediction of another location into p.
func (p *Prediction) Add(o *Prediction) {
	if p.Ends == nil {
		p.Begin, p.End = math.Inf(1), math.Inf(-1)
		p.Ends = make([]float64, len(o.Ends))
		for k := range p.Ends {
			p.Ends[k] = math.Inf(-1)
		}
		p.Selected = make([]float64, len(o.Selected))
		p.Candidates = slices.Clone(o.Candidates)
	}
	if o.Events == 0 {
		return
	}
	p.Begin, p.End = min(p.Begin, o.Begin), max(p.End, o.End)
	for k := range p.Ends {
		p.Ends[k] = max(p.Ends[k], o.Ends[k])
		p.Selected[k] += o.Selected[k]
	}
	for i := range p.Waits {
		p.Waits[i] += o.Waits[i]
	}
	p.Events += o.Events
}

// WaitClasses returns the wait class of each ranking hypothesis that
// follows the candidates.
func WaitClasses() []WaitClass {
	out := make([]WaitClass, numWaitClasses)
	for i := range out {
		out[i] = 1 << i
	}
	return out
}

// The what-if passes.
var (
	WhatIfPrepRecv = replay.NewTopic("WhatIfPrepRecv")
	WhatIfPrepSend = replay.NewTopic("WhatIfPrepSend")
	WhatIfPrepSent = replay.NewTopic("WhatIfPrepSent")
	whatIfPosted   = replay.NewField("whatif.posted", replay.Float64Codec)

	// WhatIfPrep tells the senders of the messages that may be sent in
	// rendezvous mode (WhatIf.EagerLimit) when their receive was posted:
	// a message carries the receive's begin back to the sender.
	WhatIfPrep = replay.DefinePass(replay.PassSpec{Name: "whatifprep", Order: replay.ReverseOrder, Early: true,
		Topics: []replay.Topic{WhatIfPrepRecv, WhatIfPrepSend, WhatIfPrepSent},
		Steps: []replay.Step{
			{Kind: localtrace.KindRecv, Do: replay.Ship, Pre: WhatIfPrepRecv},
			{Kind: localtrace.KindIrecv, Do: replay.Ship, Pre: WhatIfPrepRecv},
			{Kind: localtrace.KindSend, Do: replay.Take, Pre: WhatIfPrepSend, Post: WhatIfPrepSent},
			{Kind: localtrace.KindIsend, Do: replay.Take, Pre: WhatIfPrepSend, Post: WhatIfPrepSent},
		}})

	WhatIfSend       = replay.NewTopic("WhatIfSend")
	WhatIfRecvBegin  = replay.NewTopic("WhatIfRecvBegin")
	WhatIfRecv       = replay.NewTopic("WhatIfRecv")
	WhatIfRecvPosted = replay.NewTopic("WhatIfRecvPosted")
	WhatIfLeave      = replay.NewTopic("WhatIfLeave")
	WhatIfSendDone   = replay.NewTopic("WhatIfSendDone")
	WhatIfCollEnd    = replay.NewTopic("WhatIfCollEnd")
	whatIfSent       = replay.NewField("whatif.send", replay.Float64sCodec)
	whatIfRecvBegun  = replay.NewField("whatif.recvbegin", replay.Float64sCodec)

	// WhatIfPass predicts the run under the hypotheses: a message carries
	// the send's measured time and its differences. It runs before the
	// analysis passes (after the timestamp correction), which see the
	// predicted times when it retimes the trace. A receive of a message
	// that may be sent in rendezvous mode sends its begin's differences
	// back to the sender as an inverse message when the receive begins
	// (at a blocking receive, before it takes the message; at the
	// request of a non-blocking one); a rendezvous send takes them when
	// it completes, the others at the end of the pass.
	WhatIfPass = replay.DefinePass(replay.PassSpec{Name: "whatif", Order: replay.TimeOrder, Early: true, Inverse: true,
		Topics: []replay.Topic{WhatIfSend, WhatIfRecvBegin, WhatIfRecv, WhatIfRecvPosted, WhatIfLeave, WhatIfSendDone, WhatIfCollEnd},
		Steps: []replay.Step{
			{Kind: localtrace.KindSend, Do: replay.Ship, Pre: WhatIfSend},
			{Kind: localtrace.KindIsend, Do: replay.Ship, Pre: WhatIfSend},
			{Kind: localtrace.KindRecv, Do: replay.Take, Pre: WhatIfRecvBegin, Post: WhatIfRecv},
			{Kind: localtrace.KindIrecv, Do: replay.Take, Post: WhatIfRecv},
			{Kind: localtrace.KindIrecvRequest, Do: replay.Publish, Pre: WhatIfRecvPosted},
			{Kind: localtrace.KindIsendComplete, Do: replay.Publish, Pre: WhatIfSendDone},
			{Kind: localtrace.KindLeave, Do: replay.Publish, Pre: WhatIfLeave},
			{Kind: localtrace.KindCollEnd, Do: replay.Collective, Pre: WhatIfCollEnd},
		}})
)

// scaled is a hypothesis that scales a call path: it saves s = 1 − f of
// the call path's exclusive time.
type scaled struct {
	k int
	s float64
}

// predictor is one location's what-if prediction.
type predictor struct {
	cursor
	w      *WhatIf
	k      int        // number of hypotheses
	scale  [][]scaled // by local call path
	remove []WaitClass
	d      []float64 // differences of the last handled event
	// the differences of the open instances (k each) and of the last
	// collective begin
	stackD     []float64
	collD      []float64
	s          []float64 // scratch: saved share by hypothesis
	vec, other []float64
	dS         []float64
	// rendezvous mode: posted[m] is the measured begin of message m's
	// receive (NaN: eager); sync maps a rendezvous send's completion
	// event to its send event; inverse lists, by channel, the sends
	// whose receive sends its begin back, in order; begun holds the
	// differences of the receives' begins taken before their send
	// completed
	posted  []float64
	sync    map[int]int
	inverse map[channel]*fifo.Queue[int]
	begun   map[int][]float64
	res     Prediction
}

// channel is a communicator, partner and tag.
type channel struct{ comm, peer, tag uint32 }

// RegisterWhatIf subscribes the prediction of w to bus and returns its
// result, final when the replay has run.
func RegisterWhatIf(bus *replay.Bus, w *WhatIf) *Prediction {
	p := &predictor{w: w}
	bus.On(replay.Started, func(c *replay.Ctx) error {
		if c.Pass != WhatIfPass {
			return nil
		}
		return p.start(c)
	})
	if w.EagerLimit > 0 {
		p.registerRendezvous(bus)
	}
	bus.On(WhatIfSend, func(c *replay.Ctx) error {
		p.upTo(c.Index + 1)
		p.vec = append(p.vec[:0], p.prevT)
		p.vec = append(p.vec, p.d...)
		replay.Put(c, whatIfSent, p.vec)
		if p.posted != nil {
			p.rendezvousSend(c.Index)
		}
		return nil
	})
	bus.On(WhatIfRecv, func(c *replay.Ctx) error {
		p.upTo(c.Index)
		v, ok := replay.Get(c, whatIfSent)
		if !ok || len(v) != 1+p.k {
			return fmt.Errorf("what-if prediction: the message carries %d differences, not %d", len(v)-1, p.k)
		}
		p.constrained(c.Index, v[0], v[1:], WaitsLateSender)
		return nil
	})
	bus.On(WhatIfLeave, func(c *replay.Ctx) error {
		if _, ok := p.sync[c.Index]; ok {
			return p.sendDone(c)
		}
		if c.RegionClass(c.Index)&(replay.ClassInit|replay.ClassFinalize) == 0 {
			return nil
		}
		p.upTo(c.Index)
		at := p.innermost(int(c.Trace.EnterOf(c.Index)))
		if at < 0 {
			return fmt.Errorf("what-if prediction: MPI_Init/Finalize without its Enter")
		}
		bt := p.open[at].t
		p.vec = append(p.vec[:0], bt)
		for _, d := range p.stackD[at*p.k : (at+1)*p.k] {
			p.vec = append(p.vec, bt-d)
		}
		v, err := c.WorldAllreduceMax(p.vec)
		if err != nil {
			return err
		}
		p.constrainedBy(c.Index, v, WaitsInitFinalize)
		return nil
	})
	bus.On(WhatIfCollEnd, func(c *replay.Ctx) error {
		p.upTo(c.Index)
		return p.collective(c)
	})
	bus.On(replay.Finished, func(c *replay.Ctx) error {
		if c.Pass != WhatIfPass {
			return nil
		}
		p.upTo(len(p.t.Events))
		if err := p.drainInverse(c); err != nil {
			return err
		}
		n := len(p.t.Events)
		if n > 0 {
			p.res.End = p.prevT
			for k := range p.res.Ends {
				p.res.Ends[k] = p.prevT - p.d[k]
			}
		}
		p.res.Events = n
		p.scale, p.stackD, p.open = nil, nil, nil
		return nil
	})
	return &p.res
}

// start prepares the prediction of the location of c: the hypotheses,
// with the ranking's candidates, and what each changes here.
func (p *predictor) start(c *replay.Ctx) error {
	p.place(c.Trace)
	p.res.Begin = p.prevT
	hs := p.w.Hypotheses
	if p.w.Rank > 0 {
		cands, err := rankCandidates(c, p.w.Rank, p.w.RankRanks)
		if err != nil {
			return err
		}
		p.res.Candidates = cands
		for _, g := range cands {
			hs = append(hs, Hypothesis{Callpaths: map[uint32]float64{g: 0}, Ranks: p.w.RankRanks})
		}
		for _, w := range WaitClasses() {
			hs = append(hs, Hypothesis{Remove: w, Ranks: p.w.RankRanks})
		}
	}
	if p.w.Retime && len(hs) != 1 {
		return fmt.Errorf("what-if prediction: retiming the trace needs one hypothesis, not %d", len(hs))
	}
	p.k = len(hs)
	p.d = make([]float64, p.k)
	p.s = make([]float64, p.k)
	p.collD = make([]float64, p.k)
	p.res.Ends = make([]float64, p.k)
	p.res.Selected = make([]float64, p.k)
	p.remove = make([]WaitClass, p.k)
	p.scale = make([][]scaled, len(p.t.Callpaths))
	rank := c.Loc.Rank
	_, global := c.Loc.GlobalPaths()
	var path []uint32
	for k, h := range hs {
		if h.Ranks != nil && !h.Ranks[rank] {
			continue
		}
		p.remove[k] = h.Remove
		for cp := range p.t.Callpaths {
			f, ok := 1.0, false
			if h.Callpaths != nil {
				f, ok = h.Callpaths[global(uint32(cp))]
			}
			if !ok && len(h.Paths) > 0 {
				path = p.regionPath(uint32(cp), path[:0])
				for _, pf := range h.Paths {
					if n := len(pf.Regions); n <= len(path) && slices.Equal(pf.Regions, path[len(path)-n:]) {
						f, ok = pf.Factor, true
					}
				}
			}
			if !ok && h.Regions != nil {
				f, ok = h.Regions[p.t.Callpaths[cp].Region]
			}
			if ok && f != 1 {
				p.scale[cp] = append(p.scale[cp], scaled{k, 1 - f})
			}
		}
	}
	return nil
}

// regionPath appends the regions of local call path cp, from the root.
func (p *predictor) regionPath(cp uint32, out []uint32) []uint32 {
	for ; cp != localtrace.None; cp = p.t.Callpaths[cp].Parent {
		out = append(out, p.t.Callpaths[cp].Region)
	}
	slices.Reverse(out)
	return out
}

// rankCandidates returns the n call paths of the unified call tree, not
// in MPI, with the largest exclusive time over the ranks (or all).
func rankCandidates(c *replay.Ctx, n int, ranks map[int]bool) ([]uint32, error) {
	ng, global := c.Loc.GlobalPaths()
	v := make([]float64, 2*ng)
	if ranks == nil || ranks[c.Loc.Rank] {
		tm, _ := Profile(c.Trace)
		for cp, x := range tm {
			v[global(uint32(cp))] += x
		}
	}
	for cp, e := range c.Trace.Callpaths {
		if c.Env.Class(e.Region)&replay.ClassMPI != 0 {
			v[ng+int(global(uint32(cp)))] = 1
		}
	}
	sum, err := c.WorldAllreduceSum(v)
	if err != nil {
		return nil, err
	}
	var cands []uint32
	for g := range ng {
		if sum[ng+g] == 0 && sum[g] > 0 {
			cands = append(cands, uint32(g))
		}
	}
	slices.SortStableFunc(cands, func(a, b uint32) int { return cmp.Compare(sum[b], sum[a]) })
	return cands[:min(n, len(cands))], nil
}

// upTo handles the events before event i not handled yet: they complete
// no communication.
func (p *predictor) upTo(i int) {
	for j := p.next; j < i; j++ {
		p.advance(j)
		p.handled(j)
	}
}

// advance moves the differences over the interval before event j.
func (p *predictor) advance(j int) {
	t := p.t.Time(j)
	if dt := t - p.prevT; dt != 0 && p.cp != localtrace.None {
		for _, sc := range p.scale[p.cp] {
			p.d[sc.k] += sc.s * dt
			p.res.Selected[sc.k] += dt
		}
	}
}

// handled records event j as handled with the current differences.
func (p *predictor) handled(j int) {
	switch p.step(j) {
	case 1:
		p.stackD = append(p.stackD, p.d...)
	case -1:
		p.stackD = p.stackD[:len(p.open)*p.k]
	}
	if p.coll.i == j {
		copy(p.collD, p.d)
	}
	if p.w.Retime && p.d[0] != 0 {
		p.t.Times()[j] -= p.d[0] // (the times in seconds from the first retimed event on)
	}
}

// constrained handles event j, which completes a communication whose
// partners began at S (measured) with differences dS, a wait of class wc.
func (p *predictor) constrained(j int, S float64, dS []float64, wc WaitClass) {
	t := p.t.Time(j)
	tp := p.prevT
	dt := t - tp
	w := min(max(S-tp, 0), dt)
	for k := range p.s {
		p.s[k] = 0
	}
	if p.cp != localtrace.None {
		for _, sc := range p.scale[p.cp] {
			p.s[sc.k] += sc.s
			p.res.Selected[sc.k] += dt
		}
	}
	p.res.Waits[bits.TrailingZeros16(uint16(wc))] += w
	for k := range p.d {
		s := p.s[k]
		own := p.d[k] + w + s*(dt-w)
		if p.remove[k]&wc != 0 {
			p.res.Selected[k] += w
			p.d[k] = own
			continue
		}
		var partner float64
		if S >= tp {
			partner = dS[k] + s*max(t-S, 0)
		} else {
			partner = dS[k] + (tp - S) + s*dt
		}
		p.d[k] = min(own, partner)
	}
	p.handled(j)
}

// constrainedBy handles event j with the result v of a reduction (which
// it does not change: the members may share it): the partners' latest
// measured begin v[0] and predicted begins v[1:], or none (−∞).
func (p *predictor) constrainedBy(j int, v []float64, wc WaitClass) {
	if math.IsInf(v[0], -1) {
		p.advance(j)
		p.handled(j)
		return
	}
	p.dS = p.dS[:0]
	for k := range p.d {
		p.dS = append(p.dS, v[0]-v[1+k])
	}
	p.constrained(j, v[0], p.dS, wc)
}

// collFlow says how the data of a collective flows at member me (its
// rank in the communicator): whether its begin counts for the others
// (it sends), whether its end waits for them (it receives), whether it
// waits for the members up to its rank only (a scan; else for all), and
// the class of the wait. Barrier and N×N (and Alltoallv/w) wait for all
// members that send, 1-to-N for the root, N-to-1's root for all.
func collFlow(info *localtrace.Collective, me int) (sends, receives, scan bool, wc WaitClass) {
	sends, receives, wc = info.Sent > 0, info.Received > 0, WaitsNxN
	root := int(info.Root)
	switch replay.ClassOf(info.Op) {
	case replay.CollBarrier:
		sends, receives, wc = true, true, WaitsBarrier
	case replay.CollOneToN:
		sends, receives, wc = sends && me == root, receives && me != root, WaitsLateBroadcast
	case replay.CollNToOne:
		receives, wc = receives && me == root, WaitsEarlyReduce
	case replay.CollScan:
		scan, wc = true, WaitsEarlyScan
	}
	return sends, receives, scan, wc
}

// collective handles the end of a collective, event i: the members'
// begins are reduced as the operation's data flows.
func (p *predictor) collective(c *replay.Ctx) error {
	i := c.Index
	info := p.t.Collective(i)
	if c.Env.IsSelf(info.Comm) {
		p.advance(i)
		p.handled(i)
		return nil
	}
	me, size, err := c.CollMember()
	if err != nil {
		return err
	}
	// the begin: the collective's begin event, or its Enter
	m, isColl, at, ok := p.begin(i)
	if !ok {
		return fmt.Errorf("what-if prediction: collective end without its begin (event %d)", m.i)
	}
	bt, bd := m.t, p.collD
	if !isColl {
		bd = p.stackD[at*p.k : (at+1)*p.k]
	}
	sends, receives, scan, wc := collFlow(info, me)
	p.vec = p.vec[:0]
	if sends {
		p.vec = append(p.vec, bt)
		for _, d := range bd {
			p.vec = append(p.vec, bt-d)
		}
	} else {
		for range 1 + p.k {
			p.vec = append(p.vec, math.Inf(-1))
		}
	}
	var v []float64
	if scan {
		all, err := c.Allgather(p.vec)
		if err != nil {
			return err
		}
		if len(all) != (1+p.k)*size {
			return errCollSize(len(all)/(1+p.k), size)
		}
		p.other = append(p.other[:0], all[:1+p.k]...)
		for j := 1; j <= me; j++ {
			for x := range 1 + p.k {
				p.other[x] = max(p.other[x], all[j*(1+p.k)+x])
			}
		}
		v = p.other
	} else if v, err = c.AllreduceMax(p.vec); err != nil {
		return err
	}
	if !receives {
		p.advance(i)
		p.handled(i)
		return nil
	}
	p.constrainedBy(i, v, wc)
	return nil
}

// registerRendezvous subscribes the rendezvous mode of messages of at
// least WhatIf.EagerLimit bytes: the senders learn when their receives
// were posted (WhatIfPrep), the receives send their begin's differences
// back, and the rendezvous sends complete no earlier than that.
func (p *predictor) registerRendezvous(bus *replay.Bus) {
	big := func(c *replay.Ctx) bool { return c.Trace.MessageBytes(c.Index) >= p.w.EagerLimit }
	bus.OnAhead(WhatIfPrepRecv, func(c *replay.Ctx) error {
		if !big(c) {
			c.SkipMessage()
			return nil
		}
		replay.Put(c, whatIfPosted, c.Trace.Time(recvBegin(c.Trace, c.Index)))
		return nil
	})
	bus.On(WhatIfPrepSend, func(c *replay.Ctx) error {
		if !big(c) {
			c.SkipMessage()
		}
		return nil
	})
	bus.On(WhatIfPrepSent, func(c *replay.Ctx) error {
		if p.posted == nil {
			p.posted = make([]float64, c.Trace.NumMessages())
			for i := range p.posted {
				p.posted[i] = math.NaN()
			}
		}
		if t, ok := replay.Get(c, whatIfPosted); ok {
			p.posted[c.Trace.Events[c.Index].Arg] = t
		}
		return nil
	})
	// the receive begins: a blocking receive's Enter, a non-blocking
	// one's request
	bus.On(WhatIfRecvBegin, func(c *replay.Ctx) error {
		if !big(c) {
			return nil
		}
		p.upTo(c.Index)
		at := p.innermost(int(c.Trace.EnterOf(c.Index)))
		if at < 0 {
			return fmt.Errorf("what-if prediction: receive outside its MPI call")
		}
		replay.Put(c, whatIfRecvBegun, p.stackD[at*p.k:(at+1)*p.k])
		return c.SendInverse()
	})
	bus.On(WhatIfRecvPosted, func(c *replay.Ctx) error {
		done := c.Trace.Link(c.Index)
		if done == localtrace.None || c.Trace.Events[done].Kind != localtrace.KindIrecv || c.Trace.MessageBytes(int(done)) < p.w.EagerLimit {
			return nil
		}
		p.upTo(c.Index + 1)
		replay.Put(c, whatIfRecvBegun, p.d)
		return c.SendInverseOf(int(done))
	})
	bus.On(WhatIfSendDone, func(c *replay.Ctx) error {
		if _, ok := p.sync[c.Index]; ok {
			return p.sendDone(c)
		}
		return nil
	})
}

// recvBegin returns the event where receive event i began: the request
// of a non-blocking receive, the Enter of a blocking one.
func recvBegin(t *localtrace.Trace, i int) int {
	if l := t.Link(i); t.Events[i].Kind == localtrace.KindIrecv && l != localtrace.None {
		return int(l)
	}
	return int(t.EnterOf(i))
}

// sendCompletion returns the event where send event i completed: the
// Leave of a blocking send's call, a non-blocking send's completion
// (-1 if it has none).
func sendCompletion(t *localtrace.Trace, i int) int {
	if t.Events[i].Kind == localtrace.KindIsend {
		l := t.Link(i)
		if l == localtrace.None || t.Events[l].Kind != localtrace.KindIsendComplete {
			return -1
		}
		return int(l)
	}
	if l := t.LeaveOf(i); l != localtrace.None {
		return int(l)
	}
	return -1
}

// rendezvousSend notes send event i, whose receive sends its begin back
// if the message is large: the send completes in rendezvous mode when
// the receive was posted before the send completed.
func (p *predictor) rendezvousSend(i int) {
	m := p.t.Message(i)
	posted := p.posted[p.t.Events[i].Arg]
	if p.t.MessageBytes(i) < p.w.EagerLimit || math.IsNaN(posted) {
		return
	}
	if p.inverse == nil {
		p.inverse, p.sync, p.begun = map[channel]*fifo.Queue[int]{}, map[int]int{}, map[int][]float64{}
	}
	ch := channel{m.Comm, m.Peer, m.Tag}
	q := p.inverse[ch]
	if q == nil {
		q = &fifo.Queue[int]{}
		p.inverse[ch] = q
	}
	q.Push(i)
	if done := sendCompletion(p.t, i); done >= 0 && posted <= p.t.Time(done) {
		p.sync[done] = i
	}
}

// takeInverse receives the receives' begins of the sends on the channel
// of send i up to i, and returns i's.
func (p *predictor) takeInverse(c *replay.Ctx, i int) ([]float64, error) {
	if d, ok := p.begun[i]; ok {
		delete(p.begun, i)
		return d, nil
	}
	m := p.t.Message(i)
	ch := channel{m.Comm, m.Peer, m.Tag}
	for q := p.inverse[ch]; q != nil && q.Len() > 0; {
		j := q.Pop()
		if err := c.RecvInverseOf(j); err != nil {
			return nil, err
		}
		d, ok := replay.Get(c, whatIfRecvBegun)
		if !ok || len(d) != p.k {
			return nil, fmt.Errorf("what-if prediction: the receive's begin carries %d differences, not %d", len(d), p.k)
		}
		if j == i {
			return d, nil
		}
		if _, pending := p.syncSend(j); pending {
			p.begun[j] = slices.Clone(d)
		}
	}
	return nil, fmt.Errorf("what-if prediction: no receive's begin for the send at event %d", i)
}

// syncSend reports whether send event j is a rendezvous send that has
// not completed.
func (p *predictor) syncSend(j int) (int, bool) {
	done := sendCompletion(p.t, j)
	if done < 0 {
		return 0, false
	}
	_, ok := p.sync[done]
	return done, ok
}

// sendDone handles the completion of a rendezvous send, event c.Index:
// it ends no earlier than its receive began.
func (p *predictor) sendDone(c *replay.Ctx) error {
	i := p.sync[c.Index]
	delete(p.sync, c.Index)
	p.upTo(c.Index)
	d, err := p.takeInverse(c, i)
	if err != nil {
		return err
	}
	p.constrained(c.Index, p.posted[p.t.Events[i].Arg], d, WaitsLateReceiver)
	return nil
}

// drainInverse receives the receives' begins no send completion took.
func (p *predictor) drainInverse(c *replay.Ctx) error {
	chans := slices.SortedFunc(maps.Keys(p.inverse), func(a, b channel) int {
		return cmp.Or(cmp.Compare(a.comm, b.comm), cmp.Compare(a.peer, b.peer), cmp.Compare(a.tag, b.tag))
	})
	for _, ch := range chans {
		for q := p.inverse[ch]; q.Len() > 0; {
			if err := c.RecvInverseOf(q.Pop()); err != nil {
				return err
			}
		}
		delete(p.inverse, ch)
	}
	return nil
}

// errCollSize is the error of a collective's exchange (Allgather) that
// gave another number of members' values than the communicator has.
func errCollSize(got, want int) error {
	return fmt.Errorf("a collective's exchange gave %d values for %d members", got, want)
}
