package patterns

import (
	"scout/localtrace"
	"scout/replay"
	"slices"
)

// The root-cause and critical-path analysis (Scalasca's delay costs,
// wait-state propagation and critical path) runs after the wait-state
// passes, in three passes of its own:
//
//	fws (forward):  the receivers learn which of their receive requests
//	                were waited for by a Late Receiver (new synchpoints);
//	                every location cuts its exclusive time per call path
//	                into intervals between synchpoints (timemaps.go)
//	cpath:          the critical path is walked back from the last
//	                process to enter MPI_Finalize at location 0
//	                (pathwalk.go); its per-call-path sums give the
//	                performance impact metrics (criticalpath.go)
//	bwc (backward): the delay costs (delay.go, collectivedelay.go,
//	                longterm.go)
//	fwc (forward):  the indirect and propagating wait states go to the
//	                waiting side (waitstates.go)
//
// A synchpoint (synchpoints.go) is an event where a location synchronised
// with others: the receive of a Late Sender, the send completion of a Late
// Receiver, their partners' send or receive request, a collective's end
// where the collective synchronised, the Leave of MPI_Init and
// MPI_Finalize. The intervals between synchpoints are the units of the
// critical path.

// Topics of the root-cause passes.
var (
	FwsPreSend  = replay.NewTopic("FwsPreSend")
	FwsPostRecv = replay.NewTopic("FwsPostRecv")

	BwcLeave        = replay.NewTopic("BwcLeave")
	BwcEnter        = replay.NewTopic("BwcEnter")
	BwcPreSend      = replay.NewTopic("BwcPreSend")
	BwcPostSend     = replay.NewTopic("BwcPostSend")
	BwcPreRecv      = replay.NewTopic("BwcPreRecv")
	BwcPostRecv     = replay.NewTopic("BwcPostRecv")
	BwcSendComplete = replay.NewTopic("BwcSendComplete")
	BwcRecvRequest  = replay.NewTopic("BwcRecvRequest")
	BwcCollEnd      = replay.NewTopic("BwcCollEnd")
)

// The root-cause passes, entries of the replay's pass table.
var (
	// Fws walks forward; a message carries the sender's Late Receiver
	// flag to the receiver.
	Fws = replay.DefinePass(replay.PassSpec{Name: "fws", Order: replay.TimeOrder,
		Topics: []replay.Topic{FwsPreSend, FwsPostRecv},
		Steps: []replay.Step{
			{Kind: localtrace.KindSend, Do: replay.Ship, Pre: FwsPreSend},
			{Kind: localtrace.KindIsend, Do: replay.Ship, Pre: FwsPreSend},
			{Kind: localtrace.KindRecv, Do: replay.Take, Post: FwsPostRecv},
			{Kind: localtrace.KindIrecv, Do: replay.Take, Post: FwsPostRecv},
		}})
	// Cpath visits no event: the critical path's walk at location 0
	// (pathwalk.go).
	Cpath = replay.DefinePass(replay.PassSpec{Name: "cpath", Order: replay.ReverseOrder,
		Topics: []replay.Topic{CpathSolve}})
	// Bwc walks backward; a message carries the receiver's data to the
	// sender, an inverse message the data of a Late Receiver's send
	// completion to the receive request it waited for.
	Bwc = replay.DefinePass(replay.PassSpec{Name: "bwc", Order: replay.ReverseOrder, Inverse: true,
		Topics: []replay.Topic{BwcLeave, BwcEnter, BwcPreSend, BwcPostSend, BwcPreRecv, BwcPostRecv, BwcSendComplete, BwcRecvRequest, BwcCollEnd},
		Steps: []replay.Step{
			{Kind: localtrace.KindLeave, Do: replay.Publish, Pre: BwcLeave},
			{Kind: localtrace.KindEnter, Do: replay.Publish, Pre: BwcEnter},
			{Kind: localtrace.KindSend, Do: replay.Take, Pre: BwcPreSend, Post: BwcPostSend},
			{Kind: localtrace.KindIsend, Do: replay.Take, Pre: BwcPreSend, Post: BwcPostSend},
			{Kind: localtrace.KindRecv, Do: replay.Ship, Pre: BwcPreRecv, Post: BwcPostRecv},
			{Kind: localtrace.KindIrecv, Do: replay.Ship, Pre: BwcPreRecv, Post: BwcPostRecv},
			{Kind: localtrace.KindIsendComplete, Do: replay.Publish, Pre: BwcSendComplete},
			{Kind: localtrace.KindIrecvRequest, Do: replay.Publish, Pre: BwcRecvRequest},
			{Kind: localtrace.KindCollEnd, Do: replay.Collective, Pre: BwcCollEnd},
		}})
)

// rootCause is one location's state of the root-cause analysis, shared
// by its parts (synchpoints, time maps, critical path, delays). The
// critical path and the delay costs are two entries of the pattern table
// (registerCriticalPath, registerRootCauses), either of which may be
// left out; they share the synchpoints and the time maps, which the
// first of them to register subscribes (rootCauseOf).
type rootCause struct {
	// the parts that registered: the critical path, the delay costs
	// (with the fwc pass of the propagation)
	withPath, withDelay bool
	sp                  synchpoints
	tm                  timemaps
	path                criticalPath
	dl                  delay
	cd                  collectiveDelay
	costs               costs
	prop                propagation
	omp                 ompRootCause
	// the first Leave of MPI_Init and MPI_Finalize, -1 for none
	initLeave, finLeave int
	// this location entered MPI_Finalize last (the critical path starts here)
	finLatest bool
	// the partners' events of the critical path's arrivals
	keys pathKeys
	// the collectives the forward pass analysed (not scans), by end event
	colls collTable
	// lateReceivers: this location has a Late Receiver wait state
	lateReceivers bool
	// lsSends are the sends (and Isends) whose receive was a Late Sender
	// wait state, as the backward pass told the sender, ascending; lsAt
	// is where lsWaited found the last (finger)
	lsSends []int32
	lsAt    int
	// lastRanks is the rank list of the last collective synchpoint
	// (interned); scratch:
	lastRanks []int
	flags     []float64
}

// collTable holds the records of the analysed collectives by their end
// events, added in the forward pass in event order.
type collTable struct {
	ev  []int32
	rec []collRecord
	at  int // where get found the last (finger)
}

// add records the collective end c.Index. The table is made at once for
// every collective of the trace (a bound), not grown by copies.
func (t *collTable) add(c *replay.Ctx, r collRecord) {
	if t.ev == nil {
		n := len(c.Trace.Collectives)
		t.ev, t.rec = make([]int32, 0, n), make([]collRecord, 0, n)
	}
	t.ev = append(t.ev, int32(c.Index))
	t.rec = append(t.rec, r)
}

func (t *collTable) get(ev int) (collRecord, bool) {
	if k, ok := finger(t.ev, int32(ev), &t.at); ok {
		return t.rec[k], true
	}
	return collRecord{}, false
}

// finger searches the ascending xs for x as slices.BinarySearch does,
// starting where the last search of *at ended and moving *at to where
// this one ends: the passes ask about their events in order, forward or
// backward, so the answer is next to the last one. (bwc asks at every
// send and collective end; a binary search over a location's 240 000
// sends misses the cache at most of its 18 steps.)
func finger(xs []int32, x int32, at *int) (int, bool) {
	k := min(max(*at, 0), len(xs))
	for step := 0; ; step++ {
		switch {
		case step == 4:
			k, _ = slices.BinarySearch(xs, x) // far from the last
		case k > 0 && xs[k-1] >= x:
			k--
			continue
		case k < len(xs) && xs[k] < x:
			k++
			continue
		}
		*at = k
		return k, k < len(xs) && xs[k] == x
	}
}

// collRecord is what the backward passes need of an analysed
// collective, in 8 bytes (a location of the HPCG-like bench trace has
// 96 000 of them, from the forward pass to bwc).
type collRecord struct {
	delayer int32         // communicator rank of the delayer: the root of a 1-to-N, else the latest
	metric  replay.Metric // its short-term delay cost
	typ     uint8         // its cost type
}

// rootCauseOf returns the root-cause state of the location that bus
// replays, made and subscribed (synchpoints, time maps, the bwc walk) at
// the first call.
func rootCauseOf(bus *replay.Bus) *rootCause {
	return replay.Shared(bus, func() *rootCause {
		rc := &rootCause{initLeave: -1, finLeave: -1}
		rc.sp.init(rc)
		rc.costs.init()
		rc.prop.init()
		rc.registerSynchpoints(bus)
		if mayHaveOmp(bus) {
			rc.registerOmp(bus)
		}
		return rc
	})
}

// registerCriticalPath is the pattern of the critical path
// (criticalpath.go, pathwalk.go).
func registerCriticalPath(bus *replay.Bus) {
	rc := rootCauseOf(bus)
	rc.withPath = true
	rc.registerPath(bus)
}

// registerRootCauses is the pattern of the delay costs (delay.go,
// collectivedelay.go, longterm.go) and the wait-state propagation
// (waitstates.go).
func registerRootCauses(bus *replay.Bus) {
	rc := rootCauseOf(bus)
	rc.withDelay = true
	rc.registerBwc(bus)
	rc.registerDelay(bus)
	if mayHaveOmp(bus) {
		rc.registerOmpBwc(bus)
	}
	rc.registerPropagation(bus)
}

// completionOf returns the completion of send event i: the
// IsendComplete of a non-blocking send, the send itself otherwise.
func completionOf(t *localtrace.Trace, i int) int {
	if l := t.Link(i); t.Events[i].Kind == localtrace.KindIsend && l != localtrace.None &&
		t.Events[l].Kind == localtrace.KindIsendComplete {
		return int(l)
	}
	return i
}

// requestOf returns the request of receive event i: the IrecvRequest of
// a non-blocking receive, the receive itself otherwise.
func requestOf(t *localtrace.Trace, i int) int {
	if l := t.Link(i); t.Events[i].Kind == localtrace.KindIrecv && l != localtrace.None {
		return int(l)
	}
	return i
}

// lsWaited reports whether the receive of send event i was a Late Sender
// wait state (after the backward pass).
func (rc *rootCause) lsWaited(i int) bool {
	_, ok := finger(rc.lsSends, int32(i), &rc.lsAt)
	return ok
}
