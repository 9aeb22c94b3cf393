package patterns

import (
	"fmt"
	"math"
	"runtime"
	"slices"

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
//     earlier without it. A receive follows its message's send;
//     a collective's end the members' corrected begin times as their
//     data flows (barrier and N×N: all; 1-to-N: the root's; N-to-1:
//     the senders' to the root; scan: the lower ranks'); MPI_Init and
//     MPI_Finalize synchronise all ranks. Location 0 solves these
//     clocks at the communication events of all locations from their
//     skeletons (clcsolve.go). Events that Scalasca's
//     reader drops (communicator management and its pseudo
//     collectives) do not advance the clock; they keep their place.
//   - the backward amortization, only when some rank moved a receive:
//     every send learns the latest time it may have from the solution
//     (its receive's corrected time less the latency; for the begin of
//     a collective, the earliest corrected end of the members that
//     receive from it). Then, for every moved receive R in time order (moved
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

// The timestamp correction's pass.
var (
	ClcFwdSolve = replay.NewTopic("ClcFwdSolve")

	// ClcFwd is the forward amortization. It visits no event on its
	// own: every location finds its communication events; location 0
	// solves the clocks of all of them from the locations' skeletons
	// (clcsolve.go) and sends each location its own, with which it
	// corrects its events.
	ClcFwd = replay.DefinePass(replay.PassSpec{Name: "clcfwd", Order: replay.TimeOrder, Early: true,
		Topics: []replay.Topic{ClcFwdSolve}})
)

// clock is one location's controlled logical clock and what the
// correction keeps between its steps.
type clock struct {
	t     *localtrace.Trace
	ts    []float64 // the events' times, which the correction changes (Trace.Times)
	comms []int32   // the communication events, in order
	// the begins of the synchronisations among them (beginOf; -1 for
	// messages), by communication event
	syncs []int32
	// the first event the correction handles (-1: none), its original
	// time, and whether it receives (the clock then starts δ before it)
	startEvent int
	first      float64
	receives   bool
	// forward statistics
	st       Correction
	lastDiff float64 // correction of the last event handled
	upper    float64 // the latest forward-corrected time (of the last event handled)
	// moved are the receives the forward pass moved forward, in event
	// order, with their clock before the move.
	moved []movedRecv
	// sends are the logical sends (messages, the begins of collectives
	// whose data flows out, the Enter of MPI_Init and MPI_Finalize) with
	// the latest time each may have, which the solution gives.
	sends []latestSend
	// back is what the backward amortization changed of the final
	// statistics: events that the forward pass left in place and it
	// moved, the largest shift of those it moved, and whether it moved
	// some event back (the statistics then come from the times)
	back struct {
		moved int
		most  float64
		early bool
	}
	// pages holds the lists above where they are large, reserved at the
	// start for the most they can hold (cost: what they hold)
	pages *offheap.Pages
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
	k := &clock{startEvent: -1}
	k.reset()
	bus.On(ClcFwdSolve, func(c *replay.Ctx) error {
		k.begin(c)
		violated, err := k.solve(c)
		if err != nil {
			k.release()
			return err
		}
		k.finishForward()
		if violated > 0 {
			// the backward amortization, where some rank moved a receive
			k.amortizeBackward()
		}
		k.finish()
		return nil
	})
	return &k.st
}

// communications finds the location's communication events among
// events lo to hi−1 (after those before): messages, the ends of
// collective operations, the Leaves of MPI_Init and MPI_Finalize (what
// the replay's Ship, Take, Collective and PublishSync steps would do
// something at). syncs tells, by call path, whether the Leaves of its
// region synchronise (1) or not (-1), as far as met (0: not yet).
func (k *clock) communications(c *replay.Ctx, lo, hi int, syncs []int8) {
	t := k.t
	for i := lo; i < hi; i++ {
		switch t.Events[i].Kind {
		case localtrace.KindSend, localtrace.KindIsend, localtrace.KindRecv, localtrace.KindIrecv:
			if !c.IsMessage(i) {
				continue // an internal event
			}
		case localtrace.KindCollEnd:
			info := t.Collective(i)
			if !replay.Counted(info.Op) || replay.ClassOf(info.Op) == replay.CollNone || c.Env.IsSelf(info.Comm) {
				continue
			}
		case localtrace.KindLeave:
			cp := t.Events[i].Arg // (Callpath)
			if int(cp) >= len(syncs) {
				continue // (none: RegionClass)
			}
			if syncs[cp] == 0 {
				syncs[cp] = -1
				if c.RegionClass(i)&(replay.ClassInit|replay.ClassFinalize) != 0 {
					syncs[cp] = 1
				}
			}
			if syncs[cp] < 0 {
				continue
			}
		default:
			continue
		}
		k.comms = append(k.comms, int32(i))
		k.syncs = append(k.syncs, int32(beginOf(t, i)))
	}
}

// begin makes the trace's times changeable when the pass starts (the
// original times stay: Trace.RecordedTime) and finds the communication
// events, a block at a time as the times are filled.
func (k *clock) begin(c *replay.Ctx) {
	if k.t != nil {
		return
	}
	k.t = c.Trace
	// the lists, reserved for the most they can hold (in mappings where
	// that is large: they cost what they hold): grown by appending, they
	// were copied again and again, each copy into fresh memory
	k.pages = new(offheap.Pages)
	runtime.AddCleanup(k, (*offheap.Pages).Free, k.pages)
	k.comms = offheap.MakeOr[int32](k.pages, len(k.t.Events))
	k.syncs = offheap.MakeOr[int32](k.pages, len(k.t.Events))
	syncs := make([]int8, len(k.t.Callpaths))
	k.ts = k.t.FillTimes(func(lo, hi int) { k.communications(c, lo, hi, syncs) })
	k.moved = offheap.MakeOr[movedRecv](k.pages, len(k.comms))
	k.sends = offheap.MakeOr[latestSend](k.pages, len(k.comms))
}

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

// skips reports whether the correction passes over event i (dropped):
// Enter and Leave, most events, never are.
func (k *clock) skips(i int) bool {
	kd := k.t.Events[i].Kind
	return kd != localtrace.KindEnter && kd != localtrace.KindLeave && k.dropped(i)
}

// stepOf returns the least step of the clock from an event at time prev
// to the next at time cur: max(δ, γ(cur − prev)).
func stepOf(prev, cur float64) float64 {
	step := float64(clcGamma * (cur - prev))
	if step < clcDelta {
		step = clcDelta
	}
	return step
}

// advance returns the clock at an internal event at time cur whose
// predecessor, at time prev, has the clock value:
// max(value + δ, value + γ·(cur − prev), cur). value + max(δ, γ·Δt) is
// max(value + δ, value + γ·Δt) to the bit (rounding is monotonic), and
// comparisons replace max, which minds NaNs and signed zeros (there are
// none).
func advance(value, prev, cur float64) float64 {
	value += stepOf(prev, cur)
	if value < cur {
		value = cur
	}
	return value
}

// applier corrects the location's events with the clocks of its
// communication events as they come from location 0, stepping from each
// to the next as the reference does, and gathers the statistics, the
// moved receives and the latest times of the sends. Where the solution
// composed a run of events, its clock is the same to the bit
// (clcsolve.go); the applier checks that it is at every send.
type applier struct {
	k     *clock
	c     *replay.Ctx
	j     int // the next event
	e     int // the next communication event's number
	value float64
	prev  float64
	// msgSends are the sends of messages among k.sends, whose latest
	// times come last
	msgSends []int32
}

func (k *clock) newApplier(c *replay.Ctx) *applier {
	return &applier{k: k, c: c, j: -1}
}

// feed corrects the events up to the communication event past those
// whose clocks (and bounds, 16 bytes each) it is given.
func (a *applier) feed(clocks []byte) error {
	if len(clocks)%16 != 0 {
		return fmt.Errorf("timestamp correction: clocks of %d bytes from rank 0", len(clocks))
	}
	k := a.k
	if k.startEvent < 0 {
		if len(clocks) > 0 {
			return fmt.Errorf("timestamp correction: clocks for rank %d, which has no communication events", a.c.Loc.Rank)
		}
		return nil // no event the correction handles
	}
	n := len(k.t.Events)
	ts, evs, comms := k.ts, k.t.Events, k.comms
	j, value, prev := a.j, a.value, a.prev
	events, corrected, maxErr, last := k.st.Events, k.st.Corrected, k.st.MaxError, k.lastDiff
	defer func() {
		a.j, a.value, a.prev = j, value, prev
		k.st.Events, k.st.Corrected, k.st.MaxError, k.lastDiff = events, corrected, maxErr, last
		if events > 0 {
			k.upper = value // (the clock only rises: the last is the latest)
		}
	}()
	if j < 0 {
		// the first event the correction handles (known once the first
		// chunk is made): the clock starts at its time, or δ before it
		// if it receives
		j, prev = k.startEvent, ts[k.startEvent]
		value = prev
		if k.receives {
			value = prev - clcDelta
			prev = value
		} else {
			prev = math.NaN() // (it takes no step)
		}
	}
	for {
		next := n // the next communication event
		if a.e < len(comms) {
			next = int(comms[a.e])
		}
		// the internal events before it
		if prev != prev && j < next {
			// the first event (not a skipped one): it takes no step
			prev, last = ts[j], 0
			events++
			j++
		}
		for ; j < next; j++ {
			cur := ts[j]
			if kd := evs[j].Kind; kd != localtrace.KindEnter && kd != localtrace.KindLeave && k.dropped(j) { // (skips)
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
				if last > maxErr { // (max minds NaNs, slowly: there are none)
					maxErr = last
				}
			}
		}
		if j == n {
			break
		}
		if len(clocks) == 0 {
			return nil // (the next clocks, before this event)
		}
		cur := ts[j]
		if prev == prev {
			value = advance(value, prev, cur)
		}
		prev = cur
		in := value
		value = getFloat(clocks)
		bound := getFloat(clocks[8:])
		clocks = clocks[16:]
		kind := evs[j].Kind
		if kind == localtrace.KindSend || kind == localtrace.KindIsend {
			if value != in {
				return fmt.Errorf("timestamp correction: rank %d, event %d: the solution's clock %.17g is not the event's %.17g", a.c.Loc.Rank, j, value, in)
			}
			a.msgSends = append(a.msgSends, int32(len(k.sends)))
			k.sends = append(k.sends, latestSend{j, math.NaN()})
		} else {
			if value < in {
				return fmt.Errorf("timestamp correction: rank %d, event %d: the solution's clock %.17g is earlier than the event's %.17g", a.c.Loc.Rank, j, value, in)
			}
			if in < value {
				k.st.Violated++
				if kind == localtrace.KindRecv || kind == localtrace.KindIrecv {
					k.st.P2P++
				} else {
					k.st.Coll++
				}
				k.moved = append(k.moved, movedRecv{j, in})
			}
			if !math.IsNaN(bound) {
				k.sends = append(k.sends, latestSend{int(k.syncs[a.e]), bound - clcLatency})
			}
		}
		a.e++
		ts[j] = value
		last = value - cur
		events++
		if last > 0 {
			corrected++
			if last > maxErr {
				maxErr = last
			}
		}
		j++
	}
	if len(clocks) > 0 {
		return fmt.Errorf("timestamp correction: rank %d has %d communication events, the solution more", a.c.Loc.Rank, len(comms))
	}
	return nil
}

// async corrects the events on a goroutine of its own: feed hands it
// clocks (its to keep), fed waits until it has corrected the events of
// all and returns the first error of feed (call it once feed is done
// with, on every path: it ends the goroutine).
func (a *applier) async() (feed func(clocks []byte), fed func() error) {
	ch := make(chan []byte, 8)
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		for clocks := range ch {
			if err == nil {
				err = a.feed(clocks)
			}
		}
	}()
	feed = func(clocks []byte) { ch <- clocks }
	closed := false
	fed = func() error { // (again: the same)
		if !closed {
			closed = true
			close(ch)
			<-done
		}
		return err
	}
	return feed, fed
}

// finish corrects the events after the last communication event and
// gives the sends of messages their latest times: bounds, one for each,
// in order (the receive's clock).
func (a *applier) finish(bounds []byte) error {
	if err := a.feed(nil); err != nil {
		return err
	}
	k := a.k
	if a.e < len(k.comms) || (k.startEvent >= 0 && a.j < len(k.t.Events)) {
		return fmt.Errorf("timestamp correction: rank %d has %d communication events, the solution %d", a.c.Loc.Rank, len(k.comms), a.e)
	}
	if len(bounds) != 8*len(a.msgSends) {
		return fmt.Errorf("timestamp correction: rank %d sent %d messages, the solution has %d bounds", a.c.Loc.Rank, len(a.msgSends), len(bounds)/8)
	}
	for i, x := range a.msgSends {
		k.sends[x].latest = getFloat(bounds[8*i:]) - clcLatency
	}
	return nil
}

// undo gives back the original times of the events the applier
// corrected and forgets what it gathered, for another solution.
func (a *applier) undo() {
	k := a.k
	for j := max(k.startEvent, 0); j < a.j; j++ {
		k.ts[j] = k.t.RecordedTime(j)
	}
	k.reset()
	k.moved, k.sends = k.moved[:0], k.sends[:0]
}

// reset starts the forward statistics afresh.
func (k *clock) reset() {
	k.st = Correction{Passes: 1, MaxSlope: clcSlope}
	k.back.moved, k.back.most, k.back.early = 0, 0, false
	k.lastDiff, k.upper = 0, 0
}

// finishForward computes the forward statistics' final error, from the
// span of the forward-corrected times: from the first event handled (the
// clock only rises; the backward amortization has not run yet) to the
// last.
func (k *clock) finishForward() {
	if k.st.Events > 0 {
		k.st.FinalError = k.lastDiff / (k.upper - k.ts[k.startEvent])
	}
}

// finish computes the final statistics: the events moved and the
// largest shift are the forward pass's (every event it moved, it moved
// forward), with the changes of the backward amortization (shift); if
// that moved an event back, from the times.
func (k *clock) finish() {
	if k.back.early || clcTimesStatistics {
		k.finalStatistics()
	} else {
		k.st.Moved = k.st.Corrected + k.back.moved
		k.st.MaxShift = max(k.st.MaxError, k.back.most)
	}
	k.release()
}

// finalStatistics computes the events moved and the largest shift from
// the final and the recorded times.
func (k *clock) finalStatistics() {
	moved, most := 0, 0.0
	var rec [1024]float64 // the recorded times, a block at a time
	for lo := 0; lo < len(k.ts); lo += len(rec) {
		ts := k.ts[lo:min(lo+len(rec), len(k.ts))]
		k.t.RecordedTimes(rec[:len(ts)], lo)
		for i, t := range ts {
			if d := t - rec[i]; d != 0 && !k.dropped(lo+i) {
				moved++
				if d = math.Abs(d); d > most { // (no NaNs)
					most = d
				}
			}
		}
	}
	k.st.Moved, k.st.MaxShift = moved, most
}

// shift moves event i to time v (the backward amortization) and notes
// what that changes of the final statistics: an event of the forward
// pass's statistics (not dropped) that the forward pass left in place is
// moved now, and the largest shift may be its.
func (k *clock) shift(i int, v float64) {
	old := k.ts[i]
	if v == old {
		return
	}
	k.ts[i] = v
	if v < old {
		k.back.early = true // (rounding, if ever: finalStatistics)
		return
	}
	if k.dropped(i) {
		return
	}
	rec := k.t.RecordedTime(i)
	if old == rec {
		k.back.moved++
	}
	if d := v - rec; d > k.back.most {
		k.back.most = d
	}
}

// release lets go of what the correction kept.
func (k *clock) release() {
	k.ts, k.moved, k.sends, k.comms, k.syncs = nil, nil, nil, nil, nil
	if k.pages != nil {
		k.pages.Free()
	}
}

// beginOf returns the index of the begin event of the synchronisation
// that event i ends: a collective's begin event (its Enter without one),
// the Enter of a Leave (of MPI_Init or MPI_Finalize); -1 for other
// events.
func beginOf(t *localtrace.Trace, i int) int {
	switch t.Events[i].Kind {
	case localtrace.KindCollEnd:
		if b := t.Link(i); b != localtrace.None {
			return int(b)
		}
		return int(t.EnterOf(i))
	case localtrace.KindLeave:
		return int(t.EnterOf(i))
	}
	return -1
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
				k.shift(i, ev[i]+float64(m*ev[i])+c)
			}
			return
		}
		send := k.sends[sendAt].event
		for i := right - 1; i >= send; i-- {
			k.shift(i, ev[i]+float64(sendSlope*ev[i])+sendConst)
		}
		k.st.MaxSlope = max(k.st.MaxSlope, sendSlope)
		at = ev[send] - sendDelta
		if sendDelta <= 0 {
			return
		}
		right, delta, slope, nsends = send, sendDelta, sendDelta/(at-left), sendAt
	}
}
