package patterns

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"

	"scout/localtrace"
	"scout/replay"
)

// Trace reduction (scout reduce) drops the events that no what-if
// prediction of the kept regions can tell apart from computation, after
// Ino et al.'s conditions (doc/whatif.md): R1, R2 — consecutive events of
// a location whose total duration no prediction changes are one
// computation — and R3 — a message whose receive ends exactly as its own
// progress does, for every prediction, is computation on both sides.
//
// A reduction pass (reducefw) predicts symbolically: a difference is a
// variable plus an offset, with bounds over every prediction that scales
// kept regions by factors from 0 to 1 (sym). The interval of a kept
// region adds a fresh variable; a receive, collective end or
// MPI_Init/Finalize Leave takes the minimum of its own progress and its
// partners', decided statically when the bounds (or a common variable)
// allow, else a fresh variable. A receive whose result is its previous
// event's difference (d(e) ≡ d(p)) is computation; so is a collective
// instance where that holds for every member. Such a message is dropped
// on both sides (the sender learns it in reducebw) unless its sender's
// or receiver's events come right before an event that waits for a
// partner (whose wait the model measures from that event) or it is
// large enough for rendezvous mode. Then every instance of a region that
// is not kept and holds nothing left is dropped (its time goes to its
// parent's exclusive time) when its parent is not kept either, and else
// emptied, so that kept regions keep their exclusive times.

// Reduce is what a trace reduction keeps.
type Reduce struct {
	// Keep are regions (global ids) a prediction may scale.
	Keep map[uint32]bool
	// KeepShare and KeepTime also keep the regions outside MPI whose
	// exclusive time, over all ranks, is at least this share of the
	// total, or at least this many seconds (0: no such rule).
	KeepShare, KeepTime float64
	// Regions is the number of global regions.
	Regions int
	// EagerLimit: messages of at least this many bytes are kept, so that
	// predictions in rendezvous mode (WhatIf.EagerLimit) stay exact.
	EagerLimit uint64
}

// Reduction is what the reduction decided for one location.
type Reduction struct {
	// Drop tells, by event, the events the reduced trace leaves out.
	Drop []bool
	// Kept are the kept regions (the same on every location), sorted.
	Kept            []uint32
	Events, Dropped int
}

// The reduction's passes.
var (
	ReduceSend    = replay.NewTopic("ReduceSend")
	ReduceRecv    = replay.NewTopic("ReduceRecv")
	ReduceLeave   = replay.NewTopic("ReduceLeave")
	ReduceCollEnd = replay.NewTopic("ReduceCollEnd")
	ReduceSendEnd = replay.NewTopic("ReduceSendEnd")
	reduceSym     = replay.NewField("reduce.sym", replay.Float64sCodec)

	// ReduceFw predicts symbolically: a message carries the send's
	// time, its symbolic difference and whether the sender keeps it.
	ReduceFw = replay.DefinePass(replay.PassSpec{Name: "reducefw", Order: replay.TimeOrder,
		Topics: []replay.Topic{ReduceSend, ReduceRecv, ReduceLeave, ReduceCollEnd, ReduceSendEnd},
		Steps: []replay.Step{
			{Kind: localtrace.KindSend, Do: replay.Ship, Pre: ReduceSend},
			{Kind: localtrace.KindIsend, Do: replay.Ship, Pre: ReduceSend},
			{Kind: localtrace.KindRecv, Do: replay.Take, Post: ReduceRecv},
			{Kind: localtrace.KindIrecv, Do: replay.Take, Post: ReduceRecv},
			{Kind: localtrace.KindLeave, Do: replay.Publish, Pre: ReduceLeave},
			{Kind: localtrace.KindIsendComplete, Do: replay.Publish, Pre: ReduceSendEnd},
			{Kind: localtrace.KindCollEnd, Do: replay.Collective, Pre: ReduceCollEnd},
		}})

	ReduceBwRecv = replay.NewTopic("ReduceBwRecv")
	ReduceBwSend = replay.NewTopic("ReduceBwSend")
	reduceDrop   = replay.NewField("reduce.drop", replay.BoolCodec)

	// ReduceBw tells the senders which messages their receivers drop.
	ReduceBw = replay.DefinePass(replay.PassSpec{Name: "reducebw", Order: replay.ReverseOrder,
		Topics: []replay.Topic{ReduceBwRecv, ReduceBwSend},
		Steps: []replay.Step{
			{Kind: localtrace.KindRecv, Do: replay.Ship, Pre: ReduceBwRecv},
			{Kind: localtrace.KindIrecv, Do: replay.Ship, Pre: ReduceBwRecv},
			{Kind: localtrace.KindSend, Do: replay.Take, Post: ReduceBwSend},
			{Kind: localtrace.KindIsend, Do: replay.Take, Post: ReduceBwSend},
		}})
)

// sym is a symbolic difference: variable id (0: none, the constant off)
// plus off, within [lo, hi] over every prediction.
type sym struct {
	id     uint64
	off    float64
	lo, hi float64
}

func (a sym) plus(c float64) sym { return sym{id: a.id, off: a.off + c, lo: a.lo + c, hi: a.hi + c} }

// same reports whether a and b are the same difference in every prediction.
func (a sym) same(b sym) bool { return a.id == b.id && a.off == b.off }

// reducer is one location's reduction.
type reducer struct {
	cursor
	spec  *Reduce
	keep  []bool // by global region
	rank  int
	fresh uint64
	d     sym
	// the differences of the open instances and of the last collective
	// begin
	stack   []sym
	collD   sym
	pinned  map[int]bool
	dropMsg map[int]bool // message events (send and receive) dropped
	dropCol map[int]bool // collective ends whose instance is dropped
	vec     []float64
	res     Reduction
}

// RegisterReduction subscribes the reduction of spec to bus and returns
// its result, final when the replay has run.
func RegisterReduction(bus *replay.Bus, spec *Reduce) *Reduction {
	r := &reducer{spec: spec, dropMsg: map[int]bool{}, dropCol: map[int]bool{}}
	bus.On(replay.Started, func(c *replay.Ctx) error {
		if c.Pass != ReduceFw {
			return nil
		}
		return r.start(c)
	})
	bus.On(ReduceSend, func(c *replay.Ctx) error {
		r.upTo(c.Index + 1)
		keep := 0.0
		if r.pinned[c.Index] || r.big(c.Index) {
			keep = 1
		}
		r.vec = append(r.vec[:0], r.prevT, math.Float64frombits(r.d.id), r.d.off, r.d.lo, r.d.hi, keep)
		replay.Put(c, reduceSym, r.vec)
		return nil
	})
	bus.On(ReduceRecv, func(c *replay.Ctx) error {
		r.upTo(c.Index)
		v, ok := replay.Get(c, reduceSym)
		if !ok || len(v) != 6 {
			return errPayloadSize("reduce.sym", len(v))
		}
		dS := sym{id: math.Float64bits(v[1]), off: v[2], lo: v[3], hi: v[4]}
		if r.constrained(c.Index, v[0], dS) && v[5] == 0 && !r.pinned[c.Index] && !r.big(c.Index) {
			r.dropMsg[c.Index] = true
		}
		return nil
	})
	bus.On(ReduceSendEnd, func(c *replay.Ctx) error {
		if r.mayWait(c, c.Index) {
			r.rendezvousEnd(c.Index)
		}
		return nil
	})
	bus.On(ReduceLeave, func(c *replay.Ctx) error {
		if cls := c.RegionClass(c.Index); cls&(replay.ClassInit|replay.ClassFinalize) == 0 {
			if cls&replay.ClassMPI != 0 && r.mayWait(c, c.Index) {
				r.rendezvousEnd(c.Index)
			}
			return nil
		}
		r.upTo(c.Index)
		// every rank's begin: the latest and the bounds of the earliest
		// predicted begin (as −(t − d), maximised)
		at := r.innermost(int(c.Trace.EnterOf(c.Index)))
		if at < 0 {
			return errNoEnter(c.Index)
		}
		bt, bd := r.open[at].t, r.stack[at]
		v, err := c.WorldAllreduceMax([]float64{bt, bt - bd.lo, bt - bd.hi})
		if err != nil {
			return err
		}
		// dS = S − max(t_b − d_b) = min(d_b + S − t_b), within
		// [S − max(t_b − lo_b), S − max(t_b − hi_b)]: a constant when
		// nothing kept ran before, else a variable of this rank
		S := v[0]
		dS := r.newVar(S-v[1], S-v[2])
		r.constrained(c.Index, S, dS)
		return nil
	})
	bus.On(ReduceCollEnd, func(c *replay.Ctx) error {
		r.upTo(c.Index)
		return r.collective(c)
	})
	bus.OnAhead(ReduceBwRecv, func(c *replay.Ctx) error {
		replay.Put(c, reduceDrop, r.dropMsg[c.Index])
		return nil
	})
	bus.On(ReduceBwSend, func(c *replay.Ctx) error {
		if d, ok := replay.Get(c, reduceDrop); ok && d {
			r.dropMsg[c.Index] = true
		}
		return nil
	})
	bus.On(replay.Finished, func(c *replay.Ctx) error {
		switch c.Pass {
		case ReduceFw:
			r.upTo(len(r.t.Events))
		case ReduceBw:
			r.finish(c)
		}
		return nil
	})
	return &r.res
}

func errPayloadSize(field string, n int) error {
	return fmt.Errorf("trace reduction: field %s has %d values", field, n)
}

func errNoEnter(i int) error {
	return fmt.Errorf("trace reduction: event %d: MPI_Init/Finalize without its Enter", i)
}

// start prepares the reduction of c's location: the kept regions (the
// given ones and those above the thresholds, from a reduction of every
// rank's profile) and the events right before an event that may wait.
func (r *reducer) start(c *replay.Ctx) error {
	r.place(c.Trace)
	r.rank = c.Loc.Rank
	n := r.spec.Regions
	r.keep = make([]bool, n)
	for g := range r.spec.Keep {
		if int(g) < n {
			r.keep[g] = true
		}
	}
	if r.spec.KeepShare > 0 || r.spec.KeepTime > 0 {
		byRegion := make([]float64, n)
		tm, _ := Profile(r.t)
		for cp, x := range tm {
			if g := int(r.t.Callpaths[cp].Region); g < n {
				byRegion[g] += x
			}
		}
		sum, err := c.WorldAllreduceSum(byRegion)
		if err != nil {
			return err
		}
		total := 0.0
		for _, x := range sum {
			total += x
		}
		for g, x := range sum {
			if c.Env.Class(uint32(g))&replay.ClassMPI != 0 || x <= 0 {
				continue
			}
			if (r.spec.KeepShare > 0 && x >= r.spec.KeepShare*total) || (r.spec.KeepTime > 0 && x >= r.spec.KeepTime) {
				r.keep[g] = true
			}
		}
	}
	for g, k := range r.keep {
		if k {
			r.res.Kept = append(r.res.Kept, uint32(g))
		}
	}
	r.pinned = map[int]bool{}
	for j := 1; j < len(r.t.Events); j++ {
		// (a collective's end right after its begin goes with it)
		if r.mayWait(c, j) && !(r.t.Events[j].Kind == localtrace.KindCollEnd && r.t.Link(j) == uint32(j-1)) {
			r.pin(j - 1)
		}
	}
	return nil
}

// big reports whether message event i is kept for rendezvous mode.
func (r *reducer) big(i int) bool {
	return r.spec.EagerLimit > 0 && r.t.MessageBytes(i) >= r.spec.EagerLimit
}

// mayWait reports whether event j may wait for a partner in a
// prediction: a receive, a collective's end, a rendezvous send's
// completion, the Leave of MPI_Init or MPI_Finalize.
func (r *reducer) mayWait(c *replay.Ctx, j int) bool {
	e := &r.t.Events[j]
	switch e.Kind {
	case localtrace.KindRecv, localtrace.KindIrecv, localtrace.KindCollEnd:
		return true
	case localtrace.KindIsendComplete:
		l := r.t.Link(j)
		return l != localtrace.None && r.t.Events[l].Kind == localtrace.KindIsend && r.big(int(l))
	case localtrace.KindLeave:
		cls := c.RegionClass(j)
		if cls&(replay.ClassInit|replay.ClassFinalize) != 0 {
			return true
		}
		if cls&replay.ClassMPI != 0 {
			for k := int(r.t.Match(j)) + 1; k < j; k++ {
				if r.t.Events[k].Kind == localtrace.KindSend && r.big(k) {
					return true
				}
			}
		}
	}
	return false
}

// pin keeps the message or collective that event i belongs to: the
// model measures the wait of the next event from it.
func (r *reducer) pin(i int) {
	e := &r.t.Events[i]
	switch e.Kind {
	case localtrace.KindSend, localtrace.KindIsend, localtrace.KindRecv, localtrace.KindIrecv, localtrace.KindCollEnd:
		r.pinned[i] = true
	case localtrace.KindIsendComplete, localtrace.KindIrecvRequest, localtrace.KindCollBegin:
		if l := r.t.Link(i); l != localtrace.None {
			r.pinned[int(l)] = true
		}
	case localtrace.KindRequestTest, localtrace.KindRequestCancelled:
		if l := r.t.Link(i); l != localtrace.None {
			r.pin(int(l))
		}
	}
}

// keptInterval reports whether the interval after the last handled
// event belongs to a kept region.
func (r *reducer) keptInterval() bool {
	if r.cp == localtrace.None {
		return false
	}
	g := int(r.t.Callpaths[r.cp].Region)
	return g < len(r.keep) && r.keep[g]
}

// newVar returns a difference within [lo, hi]: the constant when they
// are equal, else a fresh variable of this location.
func (r *reducer) newVar(lo, hi float64) sym {
	if lo == hi {
		return sym{off: lo, lo: lo, hi: hi}
	}
	r.fresh++
	return sym{id: uint64(r.rank+1)<<32 | r.fresh, lo: lo, hi: hi}
}

// minOf is the difference min(a, b): decided by a common variable or
// by the bounds, else a new variable (from newVar, or named by the
// operands' hash when every member of a collective must name it alike).
func (r *reducer) minOf(a, b sym, shared bool) sym {
	switch {
	case a.id == b.id:
		if a.off <= b.off {
			return a
		}
		return b
	case a.hi <= b.lo:
		return a
	case b.hi <= a.lo:
		return b
	}
	lo, hi := min(a.lo, b.lo), min(a.hi, b.hi)
	if !shared {
		return r.newVar(lo, hi)
	}
	h := fnv.New64a()
	var buf [32]byte
	binary.LittleEndian.PutUint64(buf[0:], a.id)
	binary.LittleEndian.PutUint64(buf[8:], math.Float64bits(a.off))
	binary.LittleEndian.PutUint64(buf[16:], b.id)
	binary.LittleEndian.PutUint64(buf[24:], math.Float64bits(b.off))
	h.Write(buf[:])
	return sym{id: h.Sum64() | 1<<63, lo: lo, hi: hi}
}

// upTo handles the events before event i not handled yet.
func (r *reducer) upTo(i int) {
	for j := r.next; j < i; j++ {
		r.advance(j)
		r.handled(j)
	}
}

// advance moves the difference over the interval before event j.
func (r *reducer) advance(j int) {
	if dt := r.t.Time(j) - r.prevT; dt != 0 && r.keptInterval() {
		r.d = r.newVar(r.d.lo, r.d.hi+dt)
	}
}

// handled records event j as handled.
func (r *reducer) handled(j int) {
	switch r.step(j) {
	case 1:
		r.stack = append(r.stack, r.d)
	case -1:
		r.stack = r.stack[:len(r.open)]
	}
	if r.coll.i == j {
		r.collD = r.d
	}
}

// constrained handles event j, which waits for partners that began at S
// (measured) with difference dS, as the prediction does (whatif.go);
// it reports whether j's difference is its previous event's in every
// prediction (it may be computation).
func (r *reducer) constrained(j int, S float64, dS sym) bool {
	t, tp := r.t.Time(j), r.prevT
	dt := t - tp
	w := min(max(S-tp, 0), dt)
	own := r.d.plus(w)
	partner := dS
	if S < tp {
		partner = dS.plus(tp - S)
	}
	kept := r.keptInterval()
	if kept {
		own = r.newVar(own.lo, own.hi+(dt-w))
		partner = r.newVar(partner.lo, partner.hi+max(t-max(S, tp), 0))
	}
	res := r.minOf(own, partner, false)
	agg := !kept && res.same(r.d)
	r.d = res
	r.handled(j)
	return agg
}

// rendezvousEnd handles event j, the completion of a send that may be in
// rendezvous mode: it ends no later than its own progress, no earlier
// than measured (differences are never negative when predictions only
// shorten).
func (r *reducer) rendezvousEnd(j int) {
	r.upTo(j)
	r.d = r.newVar(0, r.d.hi+(r.t.Time(j)-r.prevT))
	r.handled(j)
}

// collective handles the end of a collective, event i, and decides with
// the other members whether the instance is computation.
func (r *reducer) collective(c *replay.Ctx) error {
	i := c.Index
	info := r.t.Collective(i)
	if c.Env.IsSelf(info.Comm) {
		r.advance(i)
		r.handled(i)
		r.dropCol[i] = !r.pinned[i]
		return nil
	}
	me, size, err := c.CollMember()
	if err != nil {
		return err
	}
	m, isColl, at, ok := r.begin(i)
	if !ok {
		return fmt.Errorf("trace reduction: collective end without its begin (event %d)", m.i)
	}
	bd := r.collD
	if !isColl {
		bd = r.stack[at]
	}
	sends, receives, scan, _ := collFlow(info, me)
	flag := 0.0
	if sends {
		flag = 1
	}
	r.vec = append(r.vec[:0], m.t, math.Float64frombits(bd.id), bd.off, bd.lo, bd.hi, flag)
	all, err := c.Allgather(r.vec)
	if err != nil {
		return err
	}
	if len(all) != 6*size {
		return errCollSize(len(all)/6, size)
	}
	last := size
	if scan {
		last = me + 1
	}
	S, any := math.Inf(-1), false
	for j := range last {
		if all[6*j+5] != 0 {
			S, any = max(S, all[6*j]), true
		}
	}
	ok = true
	if receives && any {
		var dS sym
		first := true
		for j := range last {
			m := all[6*j : 6*j+6]
			if m[5] == 0 {
				continue
			}
			x := sym{id: math.Float64bits(m[1]), off: m[2], lo: m[3], hi: m[4]}.plus(S - m[0])
			if first {
				dS, first = x, false
			} else {
				dS = r.minOf(dS, x, true)
			}
		}
		ok = r.constrained(i, S, dS)
	} else {
		r.advance(i)
		r.handled(i)
	}
	not := 0.0
	if !ok || r.pinned[i] {
		not = 1
	}
	v, err := c.AllreduceMax([]float64{not})
	if err != nil {
		return err
	}
	r.dropCol[i] = v[0] == 0
	return nil
}

// finish decides which events the reduced trace leaves out: the dropped
// messages and collectives with their requests, then the region
// instances that hold nothing left (see the package comment).
func (r *reducer) finish(c *replay.Ctx) {
	t := r.t
	n := len(t.Events)
	drop := make([]bool, n)
	msgDropped := func(i uint32) bool { return i != localtrace.None && r.dropMsg[int(i)] }
	for i := range t.Events {
		e := &t.Events[i]
		switch e.Kind {
		case localtrace.KindSend, localtrace.KindIsend, localtrace.KindRecv, localtrace.KindIrecv:
			drop[i] = r.dropMsg[i]
		case localtrace.KindIsendComplete, localtrace.KindIrecvRequest:
			drop[i] = msgDropped(t.Link(i))
		case localtrace.KindRequestTest, localtrace.KindRequestCancelled:
			if q := t.Link(i); q != localtrace.None {
				if t.Events[q].Kind == localtrace.KindIrecvRequest {
					drop[i] = msgDropped(t.Link(int(q)))
				} else {
					drop[i] = msgDropped(q)
				}
			}
		case localtrace.KindCollEnd:
			drop[i] = r.dropCol[i]
		case localtrace.KindCollBegin:
			l := t.Link(i)
			drop[i] = l != localtrace.None && r.dropCol[int(l)]
		}
	}
	// optional events stay with an open instance; the others stay unless
	// dropped above; an event right before one that may wait stays
	optional := func(i int) bool {
		k := t.Events[i].Kind
		return k == localtrace.KindMetric || k == localtrace.KindBufferFlush
	}
	pinned := make([]bool, n)
	for j := 1; j < n; j++ {
		if !drop[j] && r.mayWait(c, j) {
			pinned[j-1] = true
		}
	}
	// content: the instance (by Enter) holds an event that stays or a
	// kept or pinned instance
	content := make([]bool, n)
	kept := func(i int) bool {
		g := int(t.Region(i))
		return g < len(r.keep) && r.keep[g]
	}
	var stack []int
	for i := range t.Events {
		e := &t.Events[i]
		switch e.Kind {
		case localtrace.KindEnter:
			stack = append(stack, i)
			if kept(i) || pinned[i] || c.RegionClass(i)&(replay.ClassInit|replay.ClassFinalize) != 0 {
				content[i] = true
			}
		case localtrace.KindLeave:
			if len(stack) == 0 {
				continue
			}
			en := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if pinned[i] {
				content[en] = true
			}
			if content[en] && len(stack) > 0 {
				content[stack[len(stack)-1]] = true
			}
		default:
			if len(stack) > 0 && !drop[i] && (!optional(i) || pinned[i]) {
				content[stack[len(stack)-1]] = true
			}
		}
	}
	// the instances' fates, from the top
	const (
		open = iota + 1
		collapsed
		gone
	)
	state := make(map[int]int)
	stack = stack[:0]
	for i := range t.Events {
		e := &t.Events[i]
		parent := 0 // none
		parentKept := false
		if len(stack) > 0 {
			parent = state[stack[len(stack)-1]]
			parentKept = kept(stack[len(stack)-1])
		}
		switch e.Kind {
		case localtrace.KindEnter:
			var st int
			switch {
			case parent == collapsed || parent == gone:
				st = gone
			case kept(i) || content[i]:
				st = open
			case parent == 0 || parentKept || pinned[int(t.Match(i))] || pinned[i]:
				st = collapsed
			default:
				st = gone
			}
			state[i] = st
			stack = append(stack, i)
			drop[i] = st == gone
		case localtrace.KindLeave:
			if len(stack) > 0 {
				en := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				drop[i] = state[en] == gone
				delete(state, en)
			}
		default:
			if parent == collapsed || parent == gone || (optional(i) && !pinned[i] && parent != open && parent != 0) {
				drop[i] = true
			}
		}
	}
	r.res.Drop, r.res.Events = drop, n
	for _, d := range drop {
		if d {
			r.res.Dropped++
		}
	}
}
