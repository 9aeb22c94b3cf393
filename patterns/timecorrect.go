package patterns

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"slices"

	"scout/internal/intern"
	"scout/internal/offheap"
	"scout/localtrace"
	"scout/replay"
)

// Timestamp correction (--time-correct) restores the clock condition
// before the analysis: every receive (and every collective's end that
// receives data) must come after its send (the latest sending member's
// begin) plus a minimal latency. It is the controlled logical clock of
// Becker et al. (2009) in the form of Scalasca 2.6, whose results it
// reproduces (doc/timecorrect.md). An early pass of the replay and the
// work at its end change the events' times in place:
//
//   - clcfwd, forward amortization: every event's clock advances by at
//     least δ = 1 ns and by γ = 0.99999 times its original distance from
//     the previous event, and is never earlier than its original time:
//     C(e) = max(C(prev)+δ, C(prev)+γ(t(e)−t(prev)), t(e)). A receive
//     is moved to at least its send's corrected time + 1 µs (the
//     assumed latency, for messages and collectives alike); such a
//     forward jump is a violation when the receive's clock would be
//     earlier without it. Messages carry the sender's corrected time;
//     collectives reduce the members' corrected begin times as their
//     data flows (barrier and N×N: all; 1-to-N: the root's; N-to-1:
//     the senders' to the root; scan: the lower ranks'); MPI_Init and
//     MPI_Finalize synchronise all ranks. Events that Scalasca's
//     reader drops (communicator management and its pseudo
//     collectives) do not advance the clock; they keep their place.
//   - the backward amortization, only when some rank moved a receive:
//     every send learns the latest time it may have (its receive's
//     corrected time less the latency: the receivers send these times to
//     the senders at the end of clcfwd, one message per pair of ranks;
//     the begin of a collective learns it in clcfwd's exchange at the
//     collective). Then, for every moved receive R in time order (moved
//     by Δ from its unjumped clock r), the events before it are
//     shifted by a linear ramp that rises from 0 at r − Δ/0.01 (or at
//     the location's first event) to Δ at R; where that would push a
//     send past its latest time, the ramp starts at that send instead
//     and a smaller ramp is applied before it, recursively.
//
// The statistics (Correction) are those the reference prints.

// Correction is what the timestamp correction did, for one location or
// (summed and maximised) for all.
type Correction struct {
	Passes    int     // forward passes (always 1, as in the reference)
	Violated  int     // receives the forward pass moved forward
	P2P, Coll int     // of which message receives, collective ends
	Corrected int     // events whose forward-corrected time is later than the original
	Events    int     // events the correction considered
	MaxError  float64 // largest forward correction, s
	// FinalError is the relative forward correction of the last event
	// (its correction over the location's corrected span), the largest
	// over locations.
	FinalError float64
	// MaxSlope is the steepest ramp of the backward amortization at a
	// send (at least 0.01).
	MaxSlope float64
	// MaxShift is the largest difference between an event's final and
	// original time, s.
	MaxShift float64
	// Moved counts events (of Events) whose final time differs from the
	// original.
	Moved int
}

// Add merges the correction of another location into c.
func (c *Correction) Add(o Correction) {
	c.Passes = max(c.Passes, o.Passes)
	c.Violated += o.Violated
	c.P2P += o.P2P
	c.Coll += o.Coll
	c.Corrected += o.Corrected
	c.Events += o.Events
	c.MaxError = max(c.MaxError, o.MaxError)
	c.FinalError = max(c.FinalError, o.FinalError)
	c.MaxSlope = max(c.MaxSlope, o.MaxSlope)
	c.MaxShift = max(c.MaxShift, o.MaxShift)
	c.Moved += o.Moved
}

// The controlled logical clock's constants, those of the reference.
const (
	clcDelta   = 1e-9    // minimal clock step, s
	clcGamma   = 0.99999 // share of an original interval a corrected one keeps
	clcLatency = 1e-6    // minimal latency of a message or collective, s
	clcSlope   = 0.01    // slope of the backward amortization's ramps
)

// The timestamp correction's passes.
var (
	ClcFwdLeave    = replay.NewTopic("ClcFwdLeave")
	ClcFwdSend     = replay.NewTopic("ClcFwdSend")
	ClcFwdRecv     = replay.NewTopic("ClcFwdRecv")
	ClcFwdCollEnd  = replay.NewTopic("ClcFwdCollEnd")
	clcCorrectTime = replay.NewField("clc.time", replay.Float64Codec)

	// ClcFwd is the forward amortization: a message carries the
	// sender's corrected time.
	ClcFwd = replay.DefinePass(replay.PassSpec{Name: "clcfwd", Order: replay.TimeOrder, Early: true, Serial: true,
		Topics: []replay.Topic{ClcFwdLeave, ClcFwdSend, ClcFwdRecv, ClcFwdCollEnd},
		Steps: []replay.Step{
			{Kind: localtrace.KindLeave, Do: replay.PublishSync, Pre: ClcFwdLeave},
			{Kind: localtrace.KindSend, Do: replay.Ship, Pre: ClcFwdSend},
			{Kind: localtrace.KindIsend, Do: replay.Ship, Pre: ClcFwdSend},
			{Kind: localtrace.KindRecv, Do: replay.Take, Post: ClcFwdRecv},
			{Kind: localtrace.KindIrecv, Do: replay.Take, Post: ClcFwdRecv},
			{Kind: localtrace.KindCollEnd, Do: replay.Collective, Pre: ClcFwdCollEnd},
		}})
)

// clock is one location's controlled logical clock and what the
// correction keeps between its passes.
type clock struct {
	t       *localtrace.Trace
	ts      []float64             // the events' times, which the correction changes (Trace.Times)
	fill    *localtrace.TimesFill // fills ts as the forward pass goes
	ready   int                   // entries of ts filled, at least
	next    int                   // first event the forward pass has not handled
	started bool
	first   float64 // original time of the first event handled
	value   float64 // clock value of the last event handled
	prev    float64 // original time of the last event handled
	// forward statistics
	st            Correction
	lastDiff      float64 // correction of the last event handled
	lowest, upper float64 // span of the corrected times
	// moved are the receives the forward pass moved forward, in event
	// order, with their clock before the move.
	moved []movedRecv
	// sends are the logical sends (messages, the begins of collectives
	// whose data flows out, the Enter of MPI_Init and MPI_Finalize) with
	// the latest time each may have, which the backward pass finds.
	sends []latestSend
	// sent and received are the messages of the forward pass, in order
	sent, received []int32
	// pages holds the lists above where they are large, reserved at the
	// start for the most they can hold (cost: what they hold)
	pages *offheap.Pages
	one   [1]float64
	two   [2]float64
	three [3]float64
}

type movedRecv struct {
	event  int
	intern float64
}

type latestSend struct {
	event  int
	latest float64
}

// RegisterTimeCorrection subscribes the timestamp correction to bus (it
// then runs before every other pass) and returns its statistics, final
// when the replay has run.
func RegisterTimeCorrection(bus *replay.Bus) *Correction {
	k := &clock{value: -math.MaxFloat64, lowest: math.MaxFloat64, upper: -math.MaxFloat64}
	k.st.Passes, k.st.MaxSlope = 1, clcSlope
	bus.On(ClcFwdSend, func(c *replay.Ctx) error {
		k.begin(c)
		k.upTo(c.Index)
		k.intern(c.Index)
		replay.Put(c, clcCorrectTime, k.ts[c.Index])
		k.sent = append(k.sent, int32(c.Index))
		return nil
	})
	bus.On(ClcFwdRecv, func(c *replay.Ctx) error {
		k.begin(c)
		send, _ := replay.Get(c, clcCorrectTime)
		k.upTo(c.Index)
		k.recv(c.Index, send+clcLatency, kindP2P)
		k.received = append(k.received, int32(c.Index))
		return nil
	})
	bus.On(ClcFwdLeave, func(c *replay.Ctx) error {
		k.begin(c)
		k.upTo(c.Index)
		// the latest Enter is the send; the earliest corrected Leave,
		// max(latest + λ, earliest uncorrected Leave), bounds the Enter
		enter := int(c.Trace.EnterOf(c.Index))
		in := k.open(c.Index)
		k.two = [2]float64{k.ts[enter], -in}
		v, err := c.WorldAllreduceMax(k.two[:])
		if err != nil {
			return err
		}
		k.synchronise(c.Index, enter, in, v)
		return nil
	})
	bus.On(ClcFwdCollEnd, func(c *replay.Ctx) error {
		k.begin(c)
		k.upTo(c.Index)
		return k.fwdCollective(c)
	})
	bus.On(replay.Started, func(c *replay.Ctx) error {
		if c.Pass == ClcFwd {
			k.begin(c) // (the walk itself is serial: this is not)
		}
		return nil
	})
	bus.On(replay.Finished, func(c *replay.Ctx) error {
		if c.Pass != ClcFwd {
			return nil
		}
		k.begin(c)
		k.upTo(len(k.t.Events))
		k.ts = k.fill.Commit() // (Time returns them from now on)
		k.finishForward()
		k.one[0] = float64(k.st.Violated)
		n, err := c.WorldAllreduceSum(k.one[:])
		if err != nil {
			return err
		}
		if n[0] > 0 {
			// the backward amortization, where some rank moved a receive
			if err := k.messageBounds(c); err != nil {
				return err
			}
			k.amortizeBackward()
		}
		k.finish()
		return nil
	})
	return &k.st
}

// begin makes the trace's times changeable when the forward pass starts
// (the original times stay: Trace.RecordedTime). They are made as the
// pass goes (need): its walk is serial, and another processor fills
// them meanwhile.
func (k *clock) begin(c *replay.Ctx) {
	if k.t != nil {
		return
	}
	k.t = c.Trace
	k.fill = k.t.FillTimes()
	k.ts = k.fill.Slice()
	k.reserve()
}

// need waits until the times of the first n events are there.
func (k *clock) need(n int) {
	if n > k.ready {
		k.ready = k.fill.Wait(n)
	}
}

// reserve makes room in the forward pass's lists for the most they can
// hold (in mappings where that is large: they cost what they hold):
// grown by appending, they were copied again and again, each copy into
// fresh memory.
func (k *clock) reserve() {
	var sends, recvs, colls int
	for i := range k.t.Events {
		switch k.t.Events[i].Kind {
		case localtrace.KindSend, localtrace.KindIsend:
			sends++
		case localtrace.KindRecv, localtrace.KindIrecv:
			recvs++
		case localtrace.KindCollEnd, localtrace.KindLeave:
			colls++ // (every Leave: those of MPI_Init and MPI_Finalize count)
		}
	}
	k.pages = new(offheap.Pages)
	runtime.AddCleanup(k, (*offheap.Pages).Free, k.pages)
	k.moved = offheap.MakeOr[movedRecv](k.pages, recvs+colls)
	k.sends = offheap.MakeOr[latestSend](k.pages, sends+colls)
	k.sent = offheap.MakeOr[int32](k.pages, sends)
	k.received = offheap.MakeOr[int32](k.pages, recvs)
}

type violationKind uint8

const (
	kindP2P violationKind = iota
	kindColl
)

// dropped reports whether event i is one of those the reference's
// reader drops: they take no part in the correction.
func (k *clock) dropped(i int) bool {
	e := &k.t.Events[i]
	switch e.Kind {
	case localtrace.KindCommCreate, localtrace.KindCommDestroy, localtrace.KindMeasurementOnOff,
		localtrace.KindBufferFlush, localtrace.KindMetric, localtrace.KindOther,
		// thread events: the correction covers the master threads' MPI
		// events only
		localtrace.KindFork, localtrace.KindJoin, localtrace.KindTeamBegin, localtrace.KindTeamEnd,
		localtrace.KindLockAcquire, localtrace.KindLockRelease:
		return true
	case localtrace.KindCollEnd:
		return !replay.Counted(k.t.Collective(i).Op)
	case localtrace.KindCollBegin:
		l := k.t.Link(i)
		return l != localtrace.None && !replay.Counted(k.t.Collective(int(l)).Op)
	}
	return false
}

// upTo amortizes the events before event i that the forward pass has
// not handled: they are internal events (or dropped ones).
func (k *clock) upTo(i int) {
	j := k.next
	if j >= i {
		return
	}
	k.need(i)
	if !k.started {
		for ; j < i && k.dropped(j); j++ {
		}
		if j == i {
			k.next = i
			return
		}
		k.intern(j)
		j++
	}
	// intern and stat for the run of events, with the clock in locals:
	// most events are internal ones (Enter and Leave)
	ts, evs := k.ts[:i], k.t.Events[:i]
	value, prev, last := k.value, k.prev, k.lastDiff
	events, corrected, maxErr := k.st.Events, k.st.Corrected, k.st.MaxError
	for ; j < i; j++ {
		cur := ts[j]
		if kd := evs[j].Kind; kd != localtrace.KindEnter && kd != localtrace.KindLeave && k.dropped(j) {
			// keep its place between its neighbours' corrected times
			ts[j] = max(value+float64(clcGamma*(cur-prev)), cur)
			continue
		}
		value = advance(value, prev, cur)
		prev = cur
		ts[j] = value
		last = value - cur // (never negative)
		events++
		if last > 0 {
			corrected++
			if last > maxErr {
				maxErr = last
			}
		}
	}
	if events > k.st.Events {
		// the clock only rises: the last value is the upper end (and
		// the lowest is that of the first event handled, before these)
		k.upper = max(k.upper, value)
	}
	k.value, k.prev, k.lastDiff = value, prev, last
	k.st.Events, k.st.Corrected, k.st.MaxError = events, corrected, maxErr
	k.next = i
}

// tick advances the clock to event time t, as an internal event.
func (k *clock) tick(t float64) float64 {
	k.value = advance(k.value, k.prev, t)
	k.prev = t
	return k.value
}

// advance returns the clock at an internal event at time cur whose
// predecessor, at time prev, has the clock value:
// max(value + δ, value + γ·(cur − prev), cur). value + max(δ, γ·Δt) is
// max(value + δ, value + γ·Δt) to the bit (rounding is monotonic), and
// comparisons replace max, which minds NaNs and signed zeros (there are
// none): upTo's loop, which calls it for most events, is the serial
// walk's busiest.
func advance(value, prev, cur float64) float64 {
	step := float64(clcGamma * (cur - prev))
	if step < clcDelta {
		step = clcDelta
	}
	value += step
	if value < cur {
		value = cur
	}
	return value
}

// intern amortizes internal event i.
func (k *clock) intern(i int) {
	k.need(i + 1)
	cur := k.ts[i]
	if !k.started {
		k.started, k.first, k.value, k.prev = true, cur, cur, cur
	} else {
		k.tick(cur)
	}
	k.ts[i] = k.value
	k.stat(cur)
	k.next = i + 1
}

// recv amortizes receive event i, whose data was sent at (corrected
// time plus latency) send.
func (k *clock) recv(i int, send float64, kind violationKind) {
	k.settle(i, k.open(i), send, kind)
}

// open advances the clock to receive event i as to an internal event
// and returns that value; settle then moves the event to after its send.
func (k *clock) open(i int) float64 {
	k.need(i + 1)
	cur := k.ts[i]
	if !k.started {
		k.started, k.first = true, cur
		k.value, k.prev = cur-clcDelta, cur-clcDelta
	}
	return k.tick(cur)
}

// settle gives receive event i, whose clock is in without its send, the
// time after its send at send (the send's corrected time plus latency).
func (k *clock) settle(i int, in, send float64, kind violationKind) {
	cur := k.ts[i]
	k.value = max(send, in)
	if in < send {
		k.st.Violated++
		if kind == kindP2P {
			k.st.P2P++
		} else {
			k.st.Coll++
		}
	}
	k.ts[i] = k.value
	if in < k.value {
		k.moved = append(k.moved, movedRecv{i, in})
	}
	k.stat(cur)
	k.next = i + 1
}

// stat records the correction of an event originally at cur.
func (k *clock) stat(cur float64) {
	d := k.value - cur
	k.lastDiff = d
	k.st.Events++
	if d > 0 {
		k.st.Corrected++
	}
	k.st.MaxError = max(k.st.MaxError, d)
	k.lowest = min(k.lowest, k.value)
	k.upper = max(k.upper, k.value)
}

func (k *clock) finishForward() {
	if k.st.Events > 0 {
		k.st.FinalError = k.lastDiff / (k.upper - k.lowest)
	}
}

// finish computes the final statistics.
func (k *clock) finish() {
	for i, t := range k.ts {
		if d := t - k.t.RecordedTime(i); d != 0 && !k.dropped(i) {
			k.st.Moved++
			k.st.MaxShift = max(k.st.MaxShift, math.Abs(d))
		}
	}
	k.ts, k.moved, k.sends, k.sent, k.received = nil, nil, nil, nil, nil
	if k.pages != nil {
		k.pages.Free()
	}
}

// beginOf returns the index of the begin event of the collective that
// ends with event i (its Enter without a begin event).
func beginOf(t *localtrace.Trace, i int) int {
	if b := t.Link(i); b != localtrace.None {
		return int(b)
	}
	return int(t.EnterOf(i))
}

// fwdCollective moves the end of a collective that receives data to
// after the latest begin of its senders, and finds the latest time of its
// begin if it sends data: before the earliest corrected end of its
// receivers. A receiver's corrected end is max(latest begin + λ, its
// uncorrected clock), so one exchange of the begins and the uncorrected
// clocks yields both (min and max are exact: the bound is what a
// backward exchange of the corrected ends would give).
func (k *clock) fwdCollective(c *replay.Ctx) error {
	info := c.Trace.Collective(c.Index)
	class := replay.ClassOf(info.Op)
	if class == replay.CollNone || c.Env.IsSelf(info.Comm) {
		return nil // an internal event
	}
	me, size, err := c.CollMember()
	if err != nil {
		return err
	}
	const huge = math.MaxFloat64
	i := c.Index
	b := beginOf(k.t, i)
	begin := k.ts[b]
	sends, receives := info.Sent > 0, info.Received > 0
	root := int(info.Root)
	out := func(v float64) float64 { // the begin, if it sends
		if sends {
			return v
		}
		return -huge
	}
	boundIfSends := func(end float64) { // a member that sends nothing has no bound
		if !sends {
			end = huge
		}
		k.bound(b, end)
	}
	in := k.open(i)
	switch class {
	case replay.CollBarrier:
		k.two = [2]float64{begin, -in}
		v, err := c.AllreduceMax(k.two[:])
		if err != nil {
			return err
		}
		k.synchronise(i, b, in, v)
	case replay.CollNxN:
		// receivers: the members that receive data
		k.two = [2]float64{out(begin), -huge}
		if receives {
			k.two[1] = -in
		}
		v, err := c.AllreduceMax(k.two[:])
		if err != nil {
			return err
		}
		latest := v[0] + clcLatency
		if !receives {
			latest = -huge
		}
		k.settle(i, in, latest, kindColl)
		boundIfSends(earliest(v[0]+clcLatency, -v[1]))
	case replay.CollOneToN:
		// the root sends; the others that receive data wait for it; the
		// root's own end counts among the receivers' (it receives data
		// from itself, if any)
		k.three = [3]float64{-huge, -huge, -huge}
		if me == root {
			k.three[0] = out(begin)
			if receives {
				k.three[2] = -in
			}
		} else if receives {
			k.three[1] = -in
		}
		v, err := c.AllreduceMax(k.three[:])
		if err != nil {
			return err
		}
		if me != root {
			latest := -huge
			if receives {
				latest = v[0] + clcLatency
			}
			k.settle(i, in, latest, kindColl)
			return nil
		}
		k.settle(i, in, -huge, kindColl) // an internal event on the root
		boundIfSends(min(earliest(v[0]+clcLatency, -v[1]), -v[2]))
	case replay.CollNToOne:
		// the root waits for the senders; the senders' bound is the
		// root's corrected end
		k.two = [2]float64{out(begin), -huge}
		if me == root && receives {
			k.two[1] = in
		}
		v, err := c.AllreduceMax(k.two[:])
		if err != nil {
			return err
		}
		rootEnd := huge // the root receives nothing: no bound
		if v[1] != -huge {
			rootEnd = max(v[0]+clcLatency, v[1])
		}
		if me == root {
			latest := -huge
			if receives {
				latest = v[0] + clcLatency
			}
			k.settle(i, in, latest, kindColl)
			return nil
		}
		k.settle(i, in, -huge, kindColl)
		boundIfSends(rootEnd)
	case replay.CollScan:
		// member j waits for the senders of ranks up to j; the bound is
		// the earliest corrected end of the receivers of ranks from j on
		k.two = [2]float64{out(begin), huge}
		if receives {
			k.two[1] = in
		}
		all, err := c.Allgather(k.two[:])
		if err != nil {
			return err
		}
		if len(all) != 2*size {
			return errCollSize(len(all)/2, size)
		}
		latest, ends := -huge, huge
		for j := 0; j < size; j++ {
			latest = max(latest, all[2*j])
			if j == me {
				if receives {
					k.settle(i, in, latest+clcLatency, kindColl)
				} else {
					k.settle(i, in, -huge, kindColl)
				}
			}
			if j >= me && all[2*j+1] != huge {
				ends = min(ends, max(latest+clcLatency, all[2*j+1]))
			}
		}
		boundIfSends(ends)
	}
	return nil
}

// synchronise settles event i, the end of a synchronisation of all
// members (a barrier; MPI_Init or MPI_Finalize) whose clock is in, and
// bounds its begin b, from v: the latest begin and the negated earliest
// uncorrected clock of the members.
func (k *clock) synchronise(i, b int, in float64, v []float64) {
	latest := v[0] + clcLatency
	k.settle(i, in, latest, kindColl)
	k.bound(b, max(latest, -v[1]))
}

// earliest is the earliest corrected end of receivers whose earliest
// uncorrected clock is in (huge: none), sent to at latest+λ.
func earliest(latest, in float64) float64 {
	if in == math.MaxFloat64 {
		return in
	}
	return max(latest, in)
}

// bound records the latest time of logical send b: before end (the
// earliest end of its receivers), less the latency.
func (k *clock) bound(b int, end float64) {
	k.sends = append(k.sends, latestSend{b, end - clcLatency})
}

// clcTag is the tag of the corrected receive times that every location
// sends to the senders of its messages.
const clcTag = 0x434c43

// messageBounds gives every message's send the latest time it may have:
// its receive's corrected time less the latency. Every location sends
// the senders of its messages their receives' corrected times, one
// message per sender (packTimes): per communicator and tag, messages
// between two ranks are received in the order they were sent.
func (k *clock) messageBounds(c *replay.Ctx) error {
	// the receive times by sender and channel
	var srcs intern.Table[int]
	var chans intern.Table[srcChan]
	chOf := make([]uint32, len(k.received)) // channel of each receive, numbered
	for j, i := range k.received {
		m := k.t.Message(int(i))
		s := srcs.Index(worldRank(c, m.Comm, int(m.Peer)))
		chOf[j] = chans.Index(srcChan{s, msgKey{m.Comm, m.Tag}})
	}
	out := packTimes(chOf, chans.Values, srcs.Len(), func(j int) float64 { return k.ts[k.received[j]] })
	for _, s := range srcs.Order(cmp.Compare[int]) {
		src := srcs.Values[s]
		if err := c.Loc.World.Send(src, clcTag, out[s]); err != nil {
			return fmt.Errorf("timestamp correction: sending receive times to rank %d: %w", src, err)
		}
		out[s] = nil
	}
	// the receivers' times, taken by the sends in send order (each
	// receiver's at its first send)
	var dsts intern.Table[int]
	var queues []timeQueues // by receiver, numbered
	defer func() {
		for _, q := range queues {
			c.Loc.World.Release(q.data)
		}
	}()
	for _, i := range k.sent {
		m := k.t.Message(int(i))
		d := dsts.Index(worldRank(c, m.Comm, int(m.Peer)))
		if int(d) == len(queues) {
			dst := dsts.Values[d]
			data, err := c.Loc.World.RecvOwned(dst, clcTag)
			if err != nil {
				return fmt.Errorf("timestamp correction: receiving receive times from rank %d: %w", dst, err)
			}
			q, err := readTimes(data)
			queues = append(queues, q)
			if err != nil {
				return fmt.Errorf("timestamp correction: receive times from rank %d: %w", dst, err)
			}
		}
		t, ok := queues[d].take(msgKey{m.Comm, m.Tag})
		if !ok {
			return fmt.Errorf("timestamp correction: rank %d received fewer messages of communicator %d, tag %d than rank %d sent",
				dsts.Values[d], m.Comm, m.Tag, c.Loc.Rank)
		}
		k.sends = append(k.sends, latestSend{int(i), t - clcLatency})
	}
	return nil
}

// msgKey is a message's communicator and tag.
type msgKey struct{ comm, tag uint32 }

// srcChan is a channel of messages from one sender (numbered).
type srcChan struct {
	src uint32
	key msgKey
}

// packTimes encodes receive times for their senders: receive j came on
// channel chOf[j] (of chans, numbered in the order first received; nsrc
// senders) at time(j). Each sender's message holds, for each of its
// channels in that order, a header (communicator, tag and count, 4 bytes
// each) and the channel's times in receive order (8 bytes each).
func packTimes(chOf []uint32, chans []srcChan, nsrc int, time func(j int) float64) [][]byte {
	n := counts(chOf, len(chans))
	size := make([]int, nsrc)
	for ch, sc := range chans {
		size[sc.src] += 12 + 8*n[ch]
	}
	out := make([][]byte, nsrc)
	for s := range out {
		out[s] = make([]byte, size[s])
	}
	at := make([]int, len(chans)) // where channel ch's next time goes
	clear(size)                   // (now: where sender s's next header goes)
	for ch, sc := range chans {
		b := out[sc.src][size[sc.src]:]
		binary.LittleEndian.PutUint32(b, sc.key.comm)
		binary.LittleEndian.PutUint32(b[4:], sc.key.tag)
		binary.LittleEndian.PutUint32(b[8:], uint32(n[ch]))
		at[ch] = size[sc.src] + 12
		size[sc.src] += 12 + 8*n[ch]
	}
	for j, ch := range chOf {
		binary.LittleEndian.PutUint64(out[chans[ch].src][at[ch]:], math.Float64bits(time(j)))
		at[ch] += 8
	}
	return out
}

// timeQueues are the receive times that one receiver sent (packTimes),
// a queue per channel.
type timeQueues struct {
	data      []byte
	keys      intern.Table[msgKey]
	next, end []int // by channel: the offsets of its next time and of its end
}

// readTimes indexes the receive times in data.
func readTimes(data []byte) (timeQueues, error) {
	q := timeQueues{data: data}
	for at := 0; at < len(data); {
		if len(data)-at < 12 {
			return q, fmt.Errorf("a header cut short at byte %d of %d", at, len(data))
		}
		key := msgKey{binary.LittleEndian.Uint32(data[at:]), binary.LittleEndian.Uint32(data[at+4:])}
		n := uint64(binary.LittleEndian.Uint32(data[at+8:]))
		at += 12
		if 8*n > uint64(len(data)-at) {
			return q, fmt.Errorf("%d times of communicator %d, tag %d at byte %d run past the end (%d bytes)", n, key.comm, key.tag, at, len(data))
		}
		if x := q.keys.Index(key); int(x) < len(q.next) {
			return q, fmt.Errorf("communicator %d, tag %d twice", key.comm, key.tag)
		}
		q.next = append(q.next, at)
		at += 8 * int(n)
		q.end = append(q.end, at)
	}
	return q, nil
}

// take returns the next time of channel key, false if none is left.
func (q *timeQueues) take(key msgKey) (float64, bool) {
	x := q.keys.Index(key) // (a key never received is numbered past those received)
	if int(x) >= len(q.next) || q.next[x] == q.end[x] {
		return 0, false
	}
	t := math.Float64frombits(binary.LittleEndian.Uint64(q.data[q.next[x]:]))
	q.next[x] += 8
	return t, true
}

// counts returns how often each number below n occurs in xs.
func counts(xs []uint32, n int) []int {
	c := make([]int, n)
	for _, x := range xs {
		c[x]++
	}
	return c
}

// amortizeBackward spreads every forward jump of a receive over the
// events before it (see the package comment on timestamp correction).
func (k *clock) amortizeBackward() {
	slices.SortFunc(k.sends, func(a, b latestSend) int { return a.event - b.event })
	s := 0 // sends before the current receive
	for _, r := range k.moved {
		for s < len(k.sends) && k.sends[s].event < r.event {
			s++
		}
		k.ramp(r.event, r.intern, k.ts[r.event]-r.intern, clcSlope, s)
	}
}

// ramp shifts the events before event right: by a linear ramp of the
// given slope that reaches delta at time at (the event's time before
// its shift), but no send beyond its latest time. nsends is the number
// of logical sends before event right.
func (k *clock) ramp(right int, at, delta, slope float64, nsends int) {
	ev := k.ts
	for {
		left := at - delta/slope
		m := slope
		if left < k.first {
			left = k.first
			m = delta / (at - left)
		}
		c := -1.0 * m * left
		// the send whose latest time asks for the steepest ramp
		found := false
		var sendAt int
		var sendDelta, sendSlope, sendConst float64
		j := nsends - 1
		for i := right - 1; i >= 0 && left < ev[i]; i-- {
			if j < 0 || k.sends[j].event != i {
				continue
			}
			d := k.sends[j].latest - ev[i]
			si := (delta - d) / (at - ev[i])
			if si > m {
				found, m = true, si
				sendAt, sendDelta, sendSlope = j, d, si
				sendConst = d - si*ev[i]
			}
			j--
		}
		if !found {
			for i := right - 1; i >= 0 && left < ev[i]; i-- {
				ev[i] = ev[i] + float64(m*ev[i]) + c
			}
			return
		}
		send := k.sends[sendAt].event
		for i := right - 1; i >= send; i-- {
			ev[i] = ev[i] + float64(sendSlope*ev[i]) + sendConst
		}
		k.st.MaxSlope = max(k.st.MaxSlope, sendSlope)
		at = ev[send] - sendDelta
		if sendDelta <= 0 {
			return
		}
		right, delta, slope, nsends = send, sendDelta, sendDelta/(at-left), sendAt
	}
}

func errCollSize(got, want int) error {
	return fmt.Errorf("timestamp correction: a collective's exchange gave %d values for %d members", got, want)
}
