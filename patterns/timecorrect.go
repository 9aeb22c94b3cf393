package patterns

import (
	"fmt"
	"math"
	"slices"

	"scout/localtrace"
	"scout/replay"
)

// Timestamp correction (--time-correct) restores the clock condition
// before the analysis: every receive (and every collective's end that
// receives data) must come after its send (the latest sending member's
// begin) plus a minimal latency. It is the controlled logical clock of
// Becker et al. (2009) in the form of Scalasca 2.6, whose results it
// reproduces (doc/timecorrect.md). Two early passes of
// the replay change the events' times in place:
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
//   - clcbwd, backward amortization, only when some rank moved a
//     receive: messages carry the receiver's corrected time back, so
//     that each send (and each collective's begin) learns the latest
//     time it may have. Then, for every moved receive R in time order
//     (moved by Δ from its unjumped clock r), the events before it are
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
	ClcBwdLeave    = replay.NewTopic("ClcBwdLeave")
	ClcBwdRecv     = replay.NewTopic("ClcBwdRecv")
	ClcBwdSend     = replay.NewTopic("ClcBwdSend")
	ClcBwdCollEnd  = replay.NewTopic("ClcBwdCollEnd")
	clcCorrectTime = replay.NewField("clc.time", replay.Float64Codec)

	// ClcFwd is the forward amortization: a message carries the
	// sender's corrected time.
	ClcFwd = replay.DefinePass(replay.PassSpec{Name: "clcfwd", Order: replay.TimeOrder, Early: true,
		Topics: []replay.Topic{ClcFwdLeave, ClcFwdSend, ClcFwdRecv, ClcFwdCollEnd},
		Steps: []replay.Step{
			{Kind: localtrace.KindLeave, Do: replay.Publish, Pre: ClcFwdLeave},
			{Kind: localtrace.KindSend, Do: replay.Ship, Pre: ClcFwdSend},
			{Kind: localtrace.KindIsend, Do: replay.Ship, Pre: ClcFwdSend},
			{Kind: localtrace.KindRecv, Do: replay.Take, Post: ClcFwdRecv},
			{Kind: localtrace.KindIrecv, Do: replay.Take, Post: ClcFwdRecv},
			{Kind: localtrace.KindCollEnd, Do: replay.Collective, Pre: ClcFwdCollEnd},
		}})
	// ClcBwd is the backward amortization: a message carries the
	// receiver's corrected time back to the sender.
	ClcBwd = replay.DefinePass(replay.PassSpec{Name: "clcbwd", Order: replay.ReverseOrder, Early: true,
		Topics: []replay.Topic{ClcBwdLeave, ClcBwdRecv, ClcBwdSend, ClcBwdCollEnd},
		Steps: []replay.Step{
			{Kind: localtrace.KindLeave, Do: replay.Publish, Pre: ClcBwdLeave},
			{Kind: localtrace.KindRecv, Do: replay.Ship, Pre: ClcBwdRecv},
			{Kind: localtrace.KindIrecv, Do: replay.Ship, Pre: ClcBwdRecv},
			{Kind: localtrace.KindSend, Do: replay.Take, Post: ClcBwdSend},
			{Kind: localtrace.KindIsend, Do: replay.Take, Post: ClcBwdSend},
			{Kind: localtrace.KindCollEnd, Do: replay.Collective, Pre: ClcBwdCollEnd},
		}})
)

// clock is one location's controlled logical clock and what the
// correction keeps between its passes.
type clock struct {
	t       *localtrace.Trace
	orig    []float64 // original times, by event
	next    int       // first event the forward pass has not handled
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
	one   [1]float64
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
		replay.Put(c, clcCorrectTime, k.t.Events[c.Index].Time)
		return nil
	})
	bus.On(ClcFwdRecv, func(c *replay.Ctx) error {
		k.begin(c)
		send, _ := replay.Get(c, clcCorrectTime)
		k.upTo(c.Index)
		k.recv(c.Index, send+clcLatency, kindP2P)
		return nil
	})
	bus.On(ClcFwdLeave, func(c *replay.Ctx) error {
		k.begin(c)
		if c.Env.Class(c.Event().A)&(replay.ClassInit|replay.ClassFinalize) == 0 {
			return nil
		}
		k.upTo(c.Index)
		k.one[0] = k.t.Events[c.Trace.EnterOf(c.Index)].Time
		latest, err := c.WorldAllreduceMax(k.one[:])
		if err != nil {
			return err
		}
		k.recv(c.Index, latest[0]+clcLatency, kindColl)
		return nil
	})
	bus.On(ClcFwdCollEnd, func(c *replay.Ctx) error {
		k.begin(c)
		k.upTo(c.Index)
		return k.fwdCollective(c)
	})
	bus.On(replay.Finished, func(c *replay.Ctx) error {
		switch c.Pass {
		case ClcFwd:
			k.begin(c)
			k.upTo(len(k.t.Events))
			k.finishForward()
			k.one[0] = float64(k.st.Violated)
			n, err := c.WorldAllreduceSum(k.one[:])
			if err != nil {
				return err
			}
			if n[0] == 0 {
				c.SkipPass(ClcBwd)
				k.finish()
			}
		case ClcBwd:
			k.amortizeBackward()
			k.finish()
		}
		return nil
	})
	bus.On(ClcBwdRecv, func(c *replay.Ctx) error {
		replay.Put(c, clcCorrectTime, c.Event().Time)
		return nil
	})
	bus.On(ClcBwdSend, func(c *replay.Ctx) error {
		recv, _ := replay.Get(c, clcCorrectTime)
		k.sends = append(k.sends, latestSend{c.Index, recv - clcLatency})
		return nil
	})
	bus.On(ClcBwdLeave, func(c *replay.Ctx) error {
		if c.Env.Class(c.Event().A)&(replay.ClassInit|replay.ClassFinalize) == 0 {
			return nil
		}
		k.one[0] = -c.Event().Time
		earliest, err := c.WorldAllreduceMax(k.one[:])
		if err != nil {
			return err
		}
		k.sends = append(k.sends, latestSend{int(c.Trace.EnterOf(c.Index)), -earliest[0] - clcLatency})
		return nil
	})
	bus.On(ClcBwdCollEnd, k.bwdCollective)
	return &k.st
}

// begin keeps the trace's original times when the forward pass starts.
func (k *clock) begin(c *replay.Ctx) {
	if k.t != nil {
		return
	}
	k.t = c.Trace
	k.orig = make([]float64, len(k.t.Events))
	for i, e := range k.t.Events {
		k.orig[i] = e.Time
	}
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
		localtrace.KindBufferFlush, localtrace.KindMetric, localtrace.KindOther:
		return true
	case localtrace.KindCollEnd:
		return !replay.Counted(k.t.Collective(i).Op)
	case localtrace.KindCollBegin:
		return e.C != localtrace.None && !replay.Counted(k.t.Collective(int(e.C)).Op)
	}
	return false
}

// upTo amortizes the events before event i that the forward pass has
// not handled: they are internal events (or dropped ones).
func (k *clock) upTo(i int) {
	for j := k.next; j < i; j++ {
		if !k.dropped(j) {
			k.intern(j)
		} else if k.started {
			// keep its place between its neighbours' corrected times
			e := &k.t.Events[j]
			e.Time = max(k.value+float64(clcGamma*(e.Time-k.prev)), e.Time)
		}
	}
	k.next = max(k.next, i)
}

// tick advances the clock to event time t, as an internal event.
func (k *clock) tick(t float64) float64 {
	k.value = max(max(k.value+clcDelta, k.value+float64(clcGamma*(t-k.prev))), t)
	k.prev = t
	return k.value
}

// intern amortizes internal event i.
func (k *clock) intern(i int) {
	e := &k.t.Events[i]
	cur := e.Time
	if !k.started {
		k.started, k.first, k.value, k.prev = true, cur, cur, cur
	} else {
		k.tick(cur)
	}
	e.Time = k.value
	k.stat(cur)
	k.next = i + 1
}

// recv amortizes receive event i, whose data was sent at (corrected
// time plus latency) send.
func (k *clock) recv(i int, send float64, kind violationKind) {
	e := &k.t.Events[i]
	cur := e.Time
	if !k.started {
		k.started, k.first = true, cur
		k.value, k.prev = cur-clcDelta, cur-clcDelta
	}
	in := k.tick(cur)
	k.value = max(send, in)
	if in < send {
		k.st.Violated++
		if kind == kindP2P {
			k.st.P2P++
		} else {
			k.st.Coll++
		}
	}
	e.Time = k.value
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
	for i, e := range k.t.Events {
		if d := e.Time - k.orig[i]; d != 0 && !k.dropped(i) {
			k.st.Moved++
			k.st.MaxShift = max(k.st.MaxShift, math.Abs(d))
		}
	}
	k.orig, k.moved, k.sends = nil, nil, nil
}

// beginOf returns the index of the begin event of the collective that
// ends with event i (its Enter without a begin event).
func beginOf(t *localtrace.Trace, i int) int {
	if b := t.Events[i].C; b != localtrace.None {
		return int(b)
	}
	return int(t.EnterOf(i))
}

// fwdCollective moves the end of a collective that receives data to
// after the latest begin of its senders.
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
	begin := k.t.Events[beginOf(k.t, c.Index)].Time
	if info.Sent == 0 {
		begin = -math.MaxFloat64 // sends nothing: cannot be late
	}
	latest := -math.MaxFloat64
	receives := info.Received > 0
	root := int(info.Root)
	switch class {
	case replay.CollBarrier:
		begin = k.t.Events[beginOf(k.t, c.Index)].Time
		receives = true
		fallthrough
	case replay.CollNxN:
		k.one[0] = begin
		v, err := c.AllreduceMax(k.one[:])
		if err != nil {
			return err
		}
		latest = v[0]
	case replay.CollOneToN:
		v, err := c.BcastFloat(root, begin)
		if err != nil {
			return err
		}
		latest = v
		receives = receives && me != root
	case replay.CollNToOne:
		k.one[0] = begin
		v, err := c.ReduceMax(root, k.one[:])
		if err != nil {
			return err
		}
		if me == root {
			latest = v[0]
		}
		receives = receives && me == root
	case replay.CollScan:
		k.one[0] = begin
		all, err := c.Allgather(k.one[:])
		if err != nil {
			return err
		}
		if len(all) != size {
			return errCollSize(len(all), size)
		}
		latest = slices.Max(all[:me+1])
	}
	if !receives {
		return nil // an internal event
	}
	k.recv(c.Index, latest+clcLatency, kindColl)
	return nil
}

// bwdCollective finds the latest time of a collective's begin that
// sends data: before the earliest end of its receivers.
func (k *clock) bwdCollective(c *replay.Ctx) error {
	info := c.Trace.Collective(c.Index)
	class := replay.ClassOf(info.Op)
	if class == replay.CollNone || c.Env.IsSelf(info.Comm) {
		return nil
	}
	me, size, err := c.CollMember()
	if err != nil {
		return err
	}
	end := c.Event().Time
	if info.Received == 0 {
		end = math.MaxFloat64 // receives nothing: cannot bound a send
	}
	earliest := math.MaxFloat64
	sends := true
	root := int(info.Root)
	switch class {
	case replay.CollBarrier:
		end = c.Event().Time
		fallthrough
	case replay.CollNxN:
		k.one[0] = -end
		v, err := c.AllreduceMax(k.one[:])
		if err != nil {
			return err
		}
		earliest = -v[0]
	case replay.CollOneToN:
		k.one[0] = -end
		v, err := c.ReduceMax(root, k.one[:])
		if err != nil {
			return err
		}
		if me == root {
			earliest = -v[0]
		}
		sends = me == root
	case replay.CollNToOne:
		v, err := c.BcastFloat(root, end)
		if err != nil {
			return err
		}
		earliest = v
		sends = me != root
	case replay.CollScan:
		k.one[0] = end
		all, err := c.Allgather(k.one[:])
		if err != nil {
			return err
		}
		if len(all) != size {
			return errCollSize(len(all), size)
		}
		earliest = slices.Min(all[me:])
	}
	if !sends {
		return nil
	}
	if info.Sent == 0 && class != replay.CollBarrier {
		earliest = math.MaxFloat64
	}
	k.sends = append(k.sends, latestSend{beginOf(k.t, c.Index), earliest - clcLatency})
	return nil
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
		k.ramp(r.event, r.intern, k.t.Events[r.event].Time-r.intern, clcSlope, s)
	}
}

// ramp shifts the events before event right: by a linear ramp of the
// given slope that reaches delta at time at (the event's time before
// its shift), but no send beyond its latest time. nsends is the number
// of logical sends before event right.
func (k *clock) ramp(right int, at, delta, slope float64, nsends int) {
	ev := k.t.Events
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
		for i := right - 1; i >= 0 && left < ev[i].Time; i-- {
			if j < 0 || k.sends[j].event != i {
				continue
			}
			d := k.sends[j].latest - ev[i].Time
			si := (delta - d) / (at - ev[i].Time)
			if si > m {
				found, m = true, si
				sendAt, sendDelta, sendSlope = j, d, si
				sendConst = d - si*ev[i].Time
			}
			j--
		}
		if !found {
			for i := right - 1; i >= 0 && left < ev[i].Time; i-- {
				ev[i].Time = ev[i].Time + float64(m*ev[i].Time) + c
			}
			return
		}
		send := k.sends[sendAt].event
		for i := right - 1; i >= send; i-- {
			ev[i].Time = ev[i].Time + float64(sendSlope*ev[i].Time) + sendConst
		}
		k.st.MaxSlope = max(k.st.MaxSlope, sendSlope)
		at = ev[send].Time - sendDelta
		if sendDelta <= 0 {
			return
		}
		right, delta, slope, nsends = send, sendDelta, sendDelta/(at-left), sendAt
	}
}

func errCollSize(got, want int) error {
	return fmt.Errorf("timestamp correction: a collective's exchange gave %d values for %d members", got, want)
}
