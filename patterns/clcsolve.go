package patterns

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"scout/internal/intern"
	"scout/localtrace"
	"scout/replay"
)

// The forward amortization's clocks depend on each other only at
// communication events: between two of them a location's clock steps
// from event to event on its own. A replay that exchanges the clocks
// message by message and collective by collective waits on each
// exchange: under mpirun two or three MPI round trips per communication
// event, most of the correction's time. Instead, every location sends
// location 0 its skeleton: its communication events, each with the
// composition of the steps of the events since the previous one, in
// chunks that location 0 asks for as it goes (four ahead), so that the
// locations build them while it solves. Location 0 solves the clocks of
// all communication events in one serial sweep that matches messages and
// collectives as the replay would (solver) and sends every location its
// events' clocks as it solves them, and at the end the latest times of
// its sends; each location steps through its events again with the
// clocks as they come (applier), in parallel.
//
// The reference steps event by event, C ← max(C + s, t) with the step
// s = max(δ, γΔt), and its clocks must be reproduced to the bit: the
// delay costs and the critical path turn on ties between corrected
// times. A composition of the steps in floating point would round
// differently (x + (s₁ + s₂) against (x + s₁) + s₂; 1e-12 s apart after
// thousands of steps, enough to move delay costs by milliseconds). But
// where the clock and the event times stay in one binade [2^e, 2^(e+1)),
// every value is a multiple of that binade's ulp u, and C + s rounds to
// C + r with r = s rounded to a multiple of u, the same r for every C,
// unless s lies half-way between two multiples (a tie, which rounds to
// even and so depends on C). Then C ← max(C + r, t) is exact arithmetic
// on multiples of u, and a run of events composes exactly into
// max(x + a, b): a is the sum of the r, b the clock the run reaches from
// its own times. A run holds events whose times lie in the binade of the
// run's first event, and the solution checks that the clock it reaches
// stays below the binade's top. Events where this cannot hold become
// single steps that the solution takes as the reference does (step
// entries): a tie, a time in a new binade, a time within a zone below the
// top of its binade. If the solution finds a run that leaves its binade
// (the clock ran ahead of the times by more than the zone), every
// location builds its skeleton again with a wider zone: an ulp of
// difference would be silently wrong, and this is never.

// The kinds of skeleton records: entries (the solution's steps), and the
// records that describe them.
const (
	entrySend   = 1 + iota // a message's send: channel, run
	entryRecv              // a message's receive: channel, run
	entryColl              // a collective's end: operation, begin, runs
	entrySync              // the Leave of MPI_Init or MPI_Finalize: begin, runs
	entryStep              // an event whose step the solution takes as it is: run, step, time
	recordStart            // the clock before the first event
	recordChan             // the next channel: partner, communicator, tag, direction
	recordEnd              // the skeleton's end
)

// The sizes of records.
const (
	spanSize         = 8 + 8 + 2
	messageEntrySize = 1 + 4 + spanSize
	collEntrySize    = 3 + 4*5 + 2*spanSize
	syncEntrySize    = 1 + 4 + 2*spanSize
	stepEntrySize    = 1 + spanSize + 16
	startRecordSize  = 1 + 8 + 4
	chanRecordSize   = 1 + 13
	endRecordSize    = 1
)

// recordSize returns the size of a record of kind k, 0 for no kind.
func recordSize(k byte) int {
	switch k {
	case entrySend, entryRecv:
		return messageEntrySize
	case entryColl:
		return collEntrySize
	case entrySync:
		return syncEntrySize
	case entryStep:
		return stepEntrySize
	case recordStart:
		return startRecordSize
	case recordChan:
		return chanRecordSize
	case recordEnd:
		return endRecordSize
	}
	return 0
}

// chunkSize is the size of a skeleton's chunks (at least; a chunk ends
// after the record that reaches it).
const chunkSize = 128 << 10

// chunksAhead is how many chunks location 0 asks each location for
// before it needs them.
const chunksAhead = 4

// ringSize is how many of a location's latest clocks the solution keeps:
// a synchronisation's begin lies at most that many entries before its
// end (more: an error).
const ringSize = 1 << 16

// startZone is the first zone below the top of each binade whose events
// are single steps, s: the clock may run ahead of the events' times by
// this much before a skeleton is built again.
const startZone = 1.0 / 32

// For tests: the first zone, every synchronisation's begin among the
// rare ones (builder.begins), and the number of solutions location 0
// began.
var (
	clcZone      = startZone
	clcAllBegins = false
	// the final statistics from the times (clock.finalStatistics)
	clcTimesStatistics = false
	clcRounds          atomic.Int64
	// the size of the messages of clocks (at least)
	clcClocksSize = clocksSize
)

// span is the composition of the steps of a run of events: the clock
// after it is max(x + a, b) for the clock x before it, exact while below
// 2^(e−1022) (e is the biased exponent of the events' times; 0 for an
// empty run: the clock stays x).
type span struct {
	a, b float64
	e    uint16
}

var emptySpan = span{b: math.Inf(-1)}

// exponentOf returns the biased exponent of t (its binade).
func exponentOf(t float64) uint16 { return uint16(math.Float64bits(t)>>52) & 0x7ff }

// add extends run sp by the step s to an event at time t (of biased
// exponent e) after an event whose time lies in binade bn, if the run
// stays exact (binade.extends).
func (sp *span) add(bn *binade, e uint16, s, t float64) bool {
	r, ok := bn.extends(e, s, t)
	if ok {
		*sp = sp.plus(r, t, e)
	}
	return ok
}

// plus returns run sp extended by the exact step r to an event at time t
// of biased exponent e.
func (sp span) plus(r, t float64, e uint16) span {
	sp.a += r
	sp.b += r
	if sp.b < t {
		sp.b = t
	}
	sp.e = e
	return sp
}

// clockAt returns the clock max(x + a, b) after a run of events whose
// composition is (a, b), from the clock x.
func clockAt(x, a, b float64) float64 {
	v := x + a
	if v < b {
		v = b
	}
	return v
}

// binadeTop returns 2^(e−1022), the top of the binade of biased
// exponent e.
func binadeTop(e uint16) float64 { return math.Float64frombits(uint64(e+1) << 52) }

// binade is the binade of biased exponent e, as the steps of runs in it
// are tested: its first even and odd multiples of the ulp, its top, and
// its top less the zone whose events are single steps; ok is false where
// no step is exact (the smallest and the largest binades).
type binade struct {
	x0, x1, top, topZ float64
	e                 uint16
	ok                bool
}

func newBinade(e uint16, zone float64) binade {
	bn := binade{e: e, ok: e > 53 && e < 2046}
	if bn.ok {
		bn.x0 = math.Float64frombits(uint64(e) << 52)          // 2^(e−1023), an even multiple of u
		bn.x1 = bn.x0 + math.Float64frombits(uint64(e-52)<<52) // and the next, odd
		bn.top = binadeTop(e)
		bn.topZ = bn.top - zone
	}
	return bn
}

// step returns step s as the clock of a time in binade bn advances by it
// (rounded to a multiple of the binade's ulp), false where that depends
// on the clock (a tie) or leaves the binade.
func (bn *binade) step(s float64) (float64, bool) {
	r0, r1 := (bn.x0+s)-bn.x0, (bn.x1+s)-bn.x1
	if !bn.ok || r0 != r1 || bn.x1+s >= bn.top {
		return 0, false
	}
	return r0, true
}

// extends returns the step by which the step s to an event at time t of
// biased exponent e, after an event of binade bn, extends a run that
// stays exact: t is in the binade, out of the zone below its top, and s
// advances every clock of the binade alike (step); false where it does
// not.
func (bn *binade) extends(e uint16, s, t float64) (float64, bool) {
	if e != bn.e || t <= 0 || t >= bn.topZ {
		return 0, false
	}
	return bn.step(s)
}

// clcChan is a channel of messages as one side sees it: the partner's
// world rank, the communicator and tag, and the direction.
type clcChan struct {
	peer, comm, tag uint32
	recv            bool
}

func appendFloat(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

func getFloat(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) }

func appendSpan(b []byte, s span) []byte {
	b = appendFloat(appendFloat(b, s.a), s.b)
	return binary.LittleEndian.AppendUint16(b, s.e)
}

func getSpan(b []byte) span {
	return span{getFloat(b), getFloat(b[8:]), binary.LittleEndian.Uint16(b[16:])}
}

// commEntry describes a communication event for the skeleton.
type commEntry struct {
	kind            byte
	ch              clcChan // a message's
	class           replay.CollClass
	sends, receives bool
	comm, me, size  uint32
	root            uint32
	begin           int // a collective's or synchronisation's begin event
}

// entryOf describes communication event i, the location's x-th.
func (b *builder) entryOf(i, x int) (commEntry, error) {
	c := b.c
	t := c.Trace
	switch t.Events[i].Kind {
	case localtrace.KindSend, localtrace.KindIsend, localtrace.KindRecv, localtrace.KindIrecv:
		m := t.Message(i)
		var peer int
		if cm := b.member(m.Comm); cm.members != nil && int(m.Peer) < len(cm.members) {
			peer = cm.members[m.Peer]
		} else {
			var err error
			if peer, err = c.Env.WorldRank(m.Comm, int(m.Peer), c.Loc.Rank); err != nil {
				return commEntry{}, fmt.Errorf("timestamp correction: %w", err)
			}
		}
		recv := t.Events[i].Kind == localtrace.KindRecv || t.Events[i].Kind == localtrace.KindIrecv
		kind := byte(entrySend)
		if recv {
			kind = entryRecv
		}
		return commEntry{kind: kind, ch: clcChan{uint32(peer), m.Comm, m.Tag, recv}}, nil
	case localtrace.KindCollEnd:
		info := t.Collective(i)
		cm := b.member(info.Comm)
		if cm.me < 0 {
			return commEntry{}, fmt.Errorf("timestamp correction: rank %d is no member of communicator %d of its collective", c.Loc.Rank, info.Comm)
		}
		return commEntry{kind: entryColl, class: replay.ClassOf(info.Op), sends: info.Sent > 0, receives: info.Received > 0,
			comm: info.Comm, me: uint32(cm.me), size: uint32(len(cm.members)), root: info.Root, begin: int(b.k.syncs[x])}, nil
	case localtrace.KindLeave:
		return commEntry{kind: entrySync, begin: int(b.k.syncs[x])}, nil
	}
	return commEntry{}, fmt.Errorf("timestamp correction: event %d (%v) is no communication event", i, t.Events[i].Kind)
}

// commMember is a communicator as the builder's location sees it: its
// members' world ranks (nil: unknown) and the location's place among
// them (-1: none).
type commMember struct {
	members []int
	me      int
}

// member returns communicator comm as the location sees it, from the
// last two looked up where it is one of them.
func (b *builder) member(comm uint32) commMember {
	for i := range b.comms {
		if b.commIDs[i] == comm && b.comms[i].members != nil {
			return b.comms[i]
		}
	}
	members, ok := b.c.Env.CommMembers[comm]
	if !ok {
		return commMember{me: -1}
	}
	cm := commMember{members, slices.Index(members, b.c.Loc.Rank)}
	b.comms[1], b.commIDs[1] = b.comms[0], b.commIDs[0]
	b.comms[0], b.commIDs[0] = cm, comm
	return cm
}

// builder makes a location's skeleton, a chunk at a time.
type builder struct {
	k    *clock
	c    *replay.Ctx
	zone float64 // the events this close below the top of their binade are single steps
	// the begin of the next communication event, if a synchronisation
	// begins after the communication event before it (-1: none), and
	// its run, found (for that event: at)
	begin  int
	run    beginRun
	runFor int
	// the begins of the other synchronisations (rare), in event order,
	// with their communication events' numbers, and the runs found for
	// those passed
	begins []beginAt
	at     map[int32]beginRun
	bi     int
	j      int // the next event
	x      int // the next communication event's number
	n      int // entries made
	chans  intern.Table[clcChan]
	// the last two communicators looked up (member)
	comms   [2]commMember
	commIDs [2]uint32
	// the last event handled: its time and the biased exponent of it;
	// the run since the last entry
	started bool
	prev    float64
	prevE   uint16
	cur     span
	done    bool
	// the binade of prev (bnOK: made), which most events' steps are
	// tested in
	bn   binade
	bnOK bool
}

type beginAt struct{ event, comm int32 }

type beginRun struct {
	ref int // the entries before the begin
	sp  span
}

// newBuilder starts the skeleton of the location, with single steps in
// the given zone below the top of each binade.
func (k *clock) newBuilder(c *replay.Ctx, zone float64) *builder {
	b := &builder{k: k, c: c, zone: zone, at: map[int32]beginRun{}, cur: emptySpan, runFor: -1}
	for x := range k.comms {
		if begin, rare := b.syncBegin(x); rare {
			b.begins = append(b.begins, beginAt{int32(begin), int32(x)})
		}
	}
	slices.SortStableFunc(b.begins, func(p, q beginAt) int { return int(p.event - q.event) })
	b.begin = b.nextBegin()
	k.startEvent, k.receives = -1, false
	return b
}

// syncBegin returns the begin of the synchronisation that communication
// event x ends (-1: it is none) and whether it is a rare one, which
// begins before the communication event before x (for tests: every one).
func (b *builder) syncBegin(x int) (int, bool) {
	begin := int(b.k.syncs[x])
	return begin, begin >= 0 && (clcAllBegins || x > 0 && begin < int(b.k.comms[x-1]))
}

// nextBegin returns the begin of the next communication event if it is a
// synchronisation that begins after the communication event before it,
// else -1.
func (b *builder) nextBegin() int {
	if b.x >= len(b.k.comms) {
		return -1
	}
	begin, rare := b.syncBegin(b.x)
	if rare {
		return -1 // (among b.begins)
	}
	return begin
}

// chunk returns the next chunk of the skeleton in buf: a byte that is 1
// for the last chunk, then records, at least limit bytes of them but in
// the last chunk.
func (b *builder) chunk(buf []byte, limit int) ([]byte, error) {
	buf = append(buf[:0], 0)
	k := b.k
	n := len(k.t.Events)
	ts, comms := k.ts, k.comms
	for ; b.j < n && len(buf) <= limit; b.j++ {
		if b.started {
			// the internal events up to the next that needs more
			if stop := b.stop(); b.j < stop {
				buf = b.internal(buf, stop)
				b.j-- // (the loop's step)
				continue
			}
		}
		j := b.j
		comm := b.x < len(comms) && int(comms[b.x]) == j
		if !comm && k.skips(j) {
			continue
		}
		t := ts[j]
		e := exponentOf(t)
		if !b.started {
			b.started = true
			k.startEvent, k.first = j, t
			start := t
			if comm && k.t.Events[j].Kind != localtrace.KindSend && k.t.Events[j].Kind != localtrace.KindIsend {
				// a receive first: the clock starts δ before it
				k.receives = true
				start = t - clcDelta
			}
			buf = appendFloat(append(buf, recordStart), start)
			buf = binary.LittleEndian.AppendUint32(buf, uint32(len(comms)))
			if k.receives {
				buf = b.step(buf, stepOf(start, t), t)
			}
		} else {
			if s := stepOf(b.prev, t); !b.cur.add(b.binade(), e, s, t) {
				buf = b.step(buf, s, t)
			}
		}
		b.prev, b.prevE = t, e
		if j == b.begin {
			b.run, b.runFor = beginRun{b.n, b.cur}, b.x
		}
		for ; b.bi < len(b.begins) && int(b.begins[b.bi].event) <= j; b.bi++ {
			if int(b.begins[b.bi].event) == j {
				b.at[b.begins[b.bi].comm] = beginRun{b.n, b.cur}
			}
		}
		if comm {
			var err error
			if buf, err = b.entry(buf, j); err != nil {
				return buf, err
			}
		}
	}
	if b.j == n && !b.done {
		b.done = true
		buf = append(buf, recordEnd)
	}
	if b.done {
		buf[0] = 1
	}
	return buf, nil
}

// binade returns the binade of the previous event's time, made anew
// only when that lies in another.
func (b *builder) binade() *binade {
	if !b.bnOK || b.bn.e != b.prevE {
		b.bn, b.bnOK = newBinade(b.prevE, b.zone), true
	}
	return &b.bn
}

// stop returns the first event from b.j on that the builder's internal
// loop stops at: the next communication event, the begin of a
// synchronisation.
func (b *builder) stop() int {
	stop := len(b.k.t.Events)
	if b.x < len(b.k.comms) {
		stop = min(stop, int(b.k.comms[b.x]))
	}
	if b.begin >= b.j {
		stop = min(stop, b.begin)
	}
	if b.bi < len(b.begins) {
		stop = min(stop, int(b.begins[b.bi].event))
	}
	return stop
}

// internal adds the internal events from b.j on, before stop, to the
// current run, up to the first that is a single step (which it
// appends); b.j is then the event after the last it handled. It is the
// general loop of chunk for these events, with the run's state in
// registers and the constants of its binade computed once.
func (b *builder) internal(buf []byte, stop int) []byte {
	k := b.k
	ts, evs := k.ts, k.t.Events
	cur, prev := b.cur, b.prev
	bn := *b.binade() // (the previous event's)
	j := b.j
	defer func() {
		b.j, b.cur, b.prev, b.prevE = j, cur, prev, bn.e
		b.bn, b.bnOK = bn, true
	}()
	for ; j < stop; j++ {
		if kd := evs[j].Kind; kd != localtrace.KindEnter && kd != localtrace.KindLeave && k.dropped(j) {
			continue
		}
		t := ts[j]
		e := exponentOf(t)
		s := stepOf(prev, t)
		prev = t
		if r, ok := bn.extends(e, s, t); ok {
			cur = cur.plus(r, t, e)
			continue
		}
		// a single step: the run ends before it
		b.cur = cur
		buf = b.step(buf, s, t)
		cur = b.cur
		if e != bn.e {
			bn = newBinade(e, b.zone)
		}
		j++
		break
	}
	return buf
}

// ahead makes the skeleton's chunks on a goroutine of its own, up to
// chunksAhead before they are taken, and returns their source (each
// chunk is valid until the next is taken) and a function that stops the
// goroutine and waits for it.
func (b *builder) ahead() (source, func()) {
	type made struct {
		buf []byte
		err error
	}
	ready := make(chan made, chunksAhead)
	free := make(chan []byte, chunksAhead+2)
	for range chunksAhead + 2 {
		free <- nil
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer close(ready) // (a chunk asked for after the last: an error, not a wait)
		for {
			var buf []byte
			select {
			case buf = <-free:
			case <-quit:
				return
			}
			buf, err := b.chunk(buf, chunkSize)
			select {
			case ready <- made{buf, err}:
			case <-quit:
				return
			}
			if err != nil || b.done {
				return
			}
		}
	}()
	var last []byte
	src := func() ([]byte, error) {
		if last != nil {
			free <- last // (never full: one buffer per chunk in flight)
			last = nil
		}
		m, ok := <-ready
		if !ok {
			return nil, errors.New("no chunk after the last")
		}
		last = m.buf
		return m.buf, m.err
	}
	stop := func() {
		close(quit)
		<-done
	}
	return src, stop
}

// step appends a single step s to an event at time t after the current
// run.
func (b *builder) step(buf []byte, s, t float64) []byte {
	buf = appendSpan(append(buf, entryStep), b.cur)
	buf = appendFloat(appendFloat(buf, s), t)
	b.n++
	b.cur = emptySpan
	return buf
}

// entry appends communication event j, the end of the current run.
func (b *builder) entry(buf []byte, j int) ([]byte, error) {
	c, x := b.c, b.x
	ce, err := b.entryOf(j, x)
	if err != nil {
		return buf, err
	}
	var br beginRun
	if ce.kind == entryColl || ce.kind == entrySync {
		ok := b.runFor == x
		if ok {
			br = b.run
		} else if br, ok = b.at[int32(x)]; ok {
			delete(b.at, int32(x))
		}
		if !ok {
			return buf, fmt.Errorf("timestamp correction: rank %d, event %d: the begin %d of its synchronisation is not among the corrected events", c.Loc.Rank, j, ce.begin)
		}
		if b.n-br.ref >= ringSize {
			return buf, fmt.Errorf("timestamp correction: rank %d, event %d: %d communication events between the begin %d of its synchronisation and its end (at most %d)", c.Loc.Rank, j, b.n-br.ref, ce.begin, ringSize-1)
		}
	}
	switch ce.kind {
	case entrySend, entryRecv:
		known := b.chans.Len()
		id := b.chans.Index(ce.ch)
		if b.chans.Len() > known { // a new channel: its record first
			buf = append(buf, recordChan)
			buf = binary.LittleEndian.AppendUint32(buf, ce.ch.peer)
			buf = binary.LittleEndian.AppendUint32(buf, ce.ch.comm)
			buf = binary.LittleEndian.AppendUint32(buf, ce.ch.tag)
			dir := byte(0)
			if ce.ch.recv {
				dir = 1
			}
			buf = append(buf, dir)
		}
		buf = append(buf, ce.kind)
		buf = binary.LittleEndian.AppendUint32(buf, id)
		buf = appendSpan(buf, b.cur)
	case entryColl:
		flags := byte(0)
		if ce.sends {
			flags |= 1
		}
		if ce.receives {
			flags |= 2
		}
		buf = append(buf, entryColl, byte(ce.class), flags)
		for _, v := range []uint32{ce.comm, ce.me, ce.size, ce.root, uint32(b.n - br.ref)} {
			buf = binary.LittleEndian.AppendUint32(buf, v)
		}
		buf = appendSpan(appendSpan(buf, b.cur), br.sp)
	case entrySync:
		buf = append(buf, entrySync)
		buf = binary.LittleEndian.AppendUint32(buf, uint32(b.n-br.ref))
		buf = appendSpan(appendSpan(buf, b.cur), br.sp)
	}
	b.n++
	b.x++
	b.begin = b.nextBegin()
	b.cur = emptySpan
	return buf, nil
}

// stuckError is a location that the solution leaves waiting at a
// communication event.
type stuckError struct {
	comm int // the communication event's number
	what string
}

func (e *stuckError) Error() string { return fmt.Sprintf("communication event %d: %s", e.comm, e.what) }

// source gives a location's skeleton, a chunk at a time (builder.chunk).
type source func() ([]byte, error)

// solver solves the clocks of the skeletons of all locations.
type solver struct {
	locs  []solverLoc
	chans []solverChan
	keys  map[chanKey]int32
	// the open collective of each communicator: by communicator where
	// its number is small (most), else in colls
	open  []*collInst
	colls map[uint32]*collInst
	sync  *collInst   // the open synchronisation of all ranks
	free  []*collInst // done instances, by size, to use again
	work  []int       // locations ready to go on
	moved int
	// excess is how far the clock ran past the top of a run's binade at
	// most (0: never; the solution is then exact)
	excess float64
	// emit sends a location clocks (a clocksChunk message); emitErr is
	// the first error it returned, which ends the solution
	emit    func(l int, clocks []byte) error
	emitErr error
}

type solverLoc struct {
	src     source
	data    []byte // the current chunk's records
	at      int    // the next record in it
	last    bool   // the current chunk is the last
	ended   bool
	started bool
	start   float64 // the clock before the first event
	x       float64 // the clock after the last entry
	next    int     // entries solved
	comm    int     // communication events solved
	ring    []float64
	chans   []int32 // global channel of each local one
	waiting int32   // the channel it waits on, -1 for none
	blocked bool    // at a synchronisation that not all members reached
	// out are the clocks and bounds of its communication events solved
	// and not yet sent (after a clocksChunk byte); sendBounds the bounds
	// of its messages' sends, which the receives give, in order
	out        []byte
	sendBounds []float64
	failed     error // why it cannot go on (stuckError)
}

type solverChan struct {
	src, dst  int
	comm, tag uint32
	q         []pendingSend
	head      int
}

type pendingSend struct {
	loc  int32 // the sender
	send int32 // the send's number among its sends of messages
	comm int32 // its communication event's number
	x    float64
}

type collInst struct {
	class   replay.CollClass
	comm    uint32
	root    uint32
	sync    bool
	arrived int
	m       []collMember // by rank in the communicator
}

type collMember struct {
	here            bool
	loc             int32
	begin, in       float64
	sends, receives bool
}

type chanKey struct {
	src, dst  int32
	comm, tag uint32
}

// clock returns the clock after run sp from the clock x, noting by how
// much it left the run's binade, if it did.
func (s *solver) clock(x float64, sp span) float64 {
	if sp.e == 0 {
		return x
	}
	v := clockAt(x, sp.a, sp.b)
	if top := binadeTop(sp.e); v >= top {
		s.excess = max(s.excess, v-top)
	}
	return v
}

// xAt returns location L's clock after its first ref entries.
func (L *solverLoc) xAt(ref int) float64 {
	switch {
	case ref == L.next:
		return L.x
	case ref == 0:
		return L.start
	}
	return L.ring[(ref-1)%ringSize]
}

// peek returns location l's next entry (from its kind on), reading the
// records that describe entries and the next chunk where the current one
// ends; nil at the skeleton's end.
func (s *solver) peek(l int) ([]byte, error) {
	L := &s.locs[l]
	for {
		if L.at == len(L.data) {
			if L.last {
				return nil, errors.New("the skeleton ends without its end")
			}
			data, err := L.src()
			if err != nil {
				return nil, err
			}
			if len(data) == 0 {
				return nil, errors.New("an empty chunk of the skeleton")
			}
			L.data, L.at, L.last = data[1:], 0, data[0] == 1
			continue
		}
		r := L.data[L.at:]
		size := recordSize(r[0])
		switch {
		case size == 0:
			return nil, fmt.Errorf("a record of unknown kind %d", r[0])
		case size > len(r):
			return nil, fmt.Errorf("a record of kind %d cut short (%d of %d bytes)", r[0], len(r), size)
		}
		switch r[0] {
		case recordStart:
			if L.started {
				return nil, errors.New("the clock starts twice")
			}
			L.started, L.start, L.x = true, getFloat(r[1:]), getFloat(r[1:])
			// room for the bounds of its sends: at most one for each of
			// its communication events (but not more than a skeleton of
			// 256 MiB could need: the count is not checked)
			L.sendBounds = make([]float64, 0, min(binary.LittleEndian.Uint32(r[9:]), 256<<20/messageEntrySize))
		case recordChan:
			ch := clcChan{binary.LittleEndian.Uint32(r[1:]), binary.LittleEndian.Uint32(r[5:]), binary.LittleEndian.Uint32(r[9:]), r[13] == 1}
			if int(ch.peer) >= len(s.locs) {
				return nil, fmt.Errorf("a message with rank %d of %d", ch.peer, len(s.locs))
			}
			k := chanKey{int32(l), int32(ch.peer), ch.comm, ch.tag}
			if ch.recv {
				k.src, k.dst = int32(ch.peer), int32(l)
			}
			g, ok := s.keys[k]
			if !ok {
				g = int32(len(s.chans))
				s.keys[k] = g
				s.chans = append(s.chans, solverChan{src: int(k.src), dst: int(k.dst), comm: k.comm, tag: k.tag})
			}
			L.chans = append(L.chans, g)
		case recordEnd:
			L.ended = true
			return nil, nil
		default:
			if !L.started {
				return nil, errors.New("an entry before the clock's start")
			}
			if (r[0] == entrySend || r[0] == entryRecv) && int(binary.LittleEndian.Uint32(r[1:])) >= len(L.chans) {
				return nil, fmt.Errorf("an entry on channel %d of %d", binary.LittleEndian.Uint32(r[1:]), len(L.chans))
			}
			return r, nil
		}
		L.at += size
	}
}

// solveClocks solves the clocks of the skeletons of all world ranks
// (srcs, by rank). It hands emit each rank's clocks as it solves them
// (clocksChunk messages, in order; each is emit's to keep, and its error
// ends the solution) and returns each rank's
// final message: the receives moved and the bounds of its sends of
// messages (solvedOK), the reason it cannot finish (solvedStuck: a
// receive without its send, a collective that not all members reach; a
// send without its receive when some receive moved), the reason all fail
// (solvedFailed: a skeleton that does not parse), or, if a run left its
// binade, the wider zone to build the skeletons again with
// (solvedAgain).
func solveClocks(srcs []source, zone float64, emit func(l int, clocks []byte) error) [][]byte {
	s := &solver{locs: make([]solverLoc, len(srcs)), keys: map[chanKey]int32{}, colls: map[uint32]*collInst{},
		free: make([]*collInst, len(srcs)+1), emit: emit}
	for l := range srcs {
		L := &s.locs[l]
		L.src, L.waiting, L.ring = srcs[l], -1, make([]float64, ringSize)
		L.out = newClocks()
		s.work = append(s.work, l)
	}
	var failed error // a skeleton that does not parse fails all
	for len(s.work) > 0 && failed == nil && s.emitErr == nil {
		l := s.work[len(s.work)-1]
		s.work = s.work[:len(s.work)-1]
		if err := s.run(l); err != nil {
			var stuck *stuckError
			if errors.As(err, &stuck) {
				s.locs[l].failed = err
				continue
			}
			failed = fmt.Errorf("the communication events of rank %d: %w", l, err)
		}
	}
	for l := range s.locs {
		s.flush(l)
	}
	if failed == nil && s.emitErr != nil {
		failed = s.emitErr
	}
	msgs := make([][]byte, len(srcs))
	switch {
	case failed != nil:
		for l := range msgs {
			msgs[l] = append([]byte{solvedFailed}, failed.Error()...)
		}
		return msgs
	}
	stuck := -1 // a rank that cannot finish
	for l := range s.locs {
		L := &s.locs[l]
		switch {
		case L.ended && L.failed == nil:
			continue
		case L.failed != nil:
		case L.waiting >= 0:
			c := &s.chans[L.waiting]
			L.failed = &stuckError{L.comm, fmt.Sprintf("its receive from rank %d of communicator %d, tag %d waits for a message that no rank sends (a deadlock)", c.src, c.comm, c.tag)}
		default:
			L.failed = &stuckError{L.comm, "it waits at a collective operation that not every member reaches (a deadlock)"}
		}
		if stuck < 0 {
			stuck = l
		}
	}
	if s.excess > 0 {
		// not exact: the skeletons again, unless a rank cannot finish
		// (its chunks not taken would meet the next solution)
		for l := range msgs {
			switch {
			case stuck < 0:
				msgs[l] = appendFloat([]byte{solvedAgain}, max(2*zone, 2*(zone+s.excess)))
			case s.locs[l].failed == nil:
				msgs[l] = fmt.Appendf([]byte{solvedFailed}, "rank %d cannot finish the correction", stuck)
			}
		}
		if stuck < 0 {
			return msgs
		}
	}
	if s.moved > 0 && s.excess == 0 {
		// the backward amortization needs every send's bound
		for _, c := range s.chans {
			if L := &s.locs[c.src]; c.head < len(c.q) && L.failed == nil {
				L.failed = &stuckError{int(c.q[c.head].comm), fmt.Sprintf("rank %d received fewer messages of communicator %d, tag %d than rank %d sent", c.dst, c.comm, c.tag, c.src)}
			}
		}
	}
	for l := range msgs {
		L := &s.locs[l]
		var stuck *stuckError
		switch {
		case errors.As(L.failed, &stuck):
			msg := binary.LittleEndian.AppendUint32([]byte{solvedStuck}, uint32(stuck.comm))
			msgs[l] = append(msg, stuck.what...)
			continue
		case msgs[l] != nil:
			continue
		}
		msg := make([]byte, 9, 9+8*len(L.sendBounds))
		msg[0] = solvedOK
		binary.LittleEndian.PutUint64(msg[1:], uint64(s.moved))
		for _, b := range L.sendBounds {
			msg = appendFloat(msg, b)
		}
		msgs[l], L.sendBounds = msg, nil
	}
	return msgs
}

// run solves the entries of location l until it waits or ends.
func (s *solver) run(l int) error {
	L := &s.locs[l]
	for {
		e, err := s.peek(l)
		if err != nil || e == nil {
			return err
		}
		switch e[0] {
		case entryStep:
			x := advanceBy(s.clock(L.x, getSpan(e[1:])), getFloat(e[1+spanSize:]), getFloat(e[9+spanSize:]))
			s.advance(L, x, stepEntrySize)
		case entrySend:
			g := L.chans[binary.LittleEndian.Uint32(e[1:])]
			x := s.clock(L.x, getSpan(e[5:]))
			c := &s.chans[g]
			c.q = append(c.q, pendingSend{int32(l), int32(len(L.sendBounds)), int32(L.comm), x})
			L.sendBounds = append(L.sendBounds, math.NaN())
			if d := &s.locs[c.dst]; d.waiting == g {
				d.waiting = -1
				s.work = append(s.work, c.dst)
			}
			s.settled(l, x, math.NaN(), messageEntrySize)
		case entryRecv:
			g := L.chans[binary.LittleEndian.Uint32(e[1:])]
			c := &s.chans[g]
			if c.head == len(c.q) {
				L.waiting = g
				return nil
			}
			p := c.q[c.head]
			if c.head++; c.head == len(c.q) {
				c.q, c.head = c.q[:0], 0
			}
			in := s.clock(L.x, getSpan(e[5:]))
			x := max(p.x+clcLatency, in)
			if in < x {
				s.moved++
			}
			s.locs[p.loc].sendBounds[p.send] = x
			s.settled(l, x, math.NaN(), messageEntrySize)
		case entryColl, entrySync:
			if err := s.arrive(l, e); err != nil {
				return err
			}
			if L.blocked {
				return nil
			}
		}
	}
}

// advanceBy returns the clock x advanced by step s to an event at time
// t: as advance, but with the step given.
func advanceBy(x, s, t float64) float64 {
	x += s
	if x < t {
		x = t
	}
	return x
}

// advance moves location L past its entry (of the given size), whose
// clock is x.
func (s *solver) advance(L *solverLoc, x float64, size int) {
	L.ring[L.next%ringSize] = x
	L.x = x
	L.at += size
	L.next++
}

// settled moves location l past its communication event, whose clock is
// x and its begin's bound bound.
func (s *solver) settled(l int, x, bound float64, size int) {
	L := &s.locs[l]
	L.out = appendFloat(appendFloat(L.out, x), bound)
	L.comm++
	s.advance(L, x, size)
	if len(L.out) >= clcClocksSize {
		s.flush(l)
	}
}

// flush sends location l the clocks solved for it (unless they are not
// exact: it then builds its skeleton again).
func (s *solver) flush(l int) {
	L := &s.locs[l]
	if len(L.out) > 1 && s.excess == 0 && s.emitErr == nil {
		s.emitErr = s.emit(l, L.out)
		L.out = newClocks() // (emit keeps it)
	}
	L.out = L.out[:1]
}

// newClocks returns an empty clocksChunk message with room for the
// clocks solved until it is sent.
func newClocks() []byte {
	return append(make([]byte, 0, clcClocksSize+16), clocksChunk)
}

// arrive adds location l, at a collective's end or a synchronisation
// (entry e), to its open instance, which it completes when it is the
// last member to arrive.
func (s *solver) arrive(l int, e []byte) error {
	L := &s.locs[l]
	var inst *collInst
	var me, size, back int
	var sp, bsp span
	m := collMember{loc: int32(l), here: true}
	if e[0] == entrySync {
		me, size = l, len(s.locs)
		back = int(binary.LittleEndian.Uint32(e[1:]))
		sp, bsp = getSpan(e[5:]), getSpan(e[5+spanSize:])
		if s.sync == nil {
			s.sync = s.instance(size)
			s.sync.class, s.sync.sync = replay.CollBarrier, true
		}
		inst = s.sync
	} else {
		class, flags := replay.CollClass(e[1]), e[2]
		comm := binary.LittleEndian.Uint32(e[3:])
		me, size = int(binary.LittleEndian.Uint32(e[7:])), int(binary.LittleEndian.Uint32(e[11:]))
		root := binary.LittleEndian.Uint32(e[15:])
		back = int(binary.LittleEndian.Uint32(e[19:]))
		sp, bsp = getSpan(e[23:]), getSpan(e[23+spanSize:])
		m.sends, m.receives = flags&1 != 0, flags&2 != 0
		inst = s.openColl(comm)
		if inst == nil {
			if size <= 0 || size > len(s.locs) {
				return &stuckError{L.comm, fmt.Sprintf("a collective operation of %d members on communicator %d", size, comm)}
			}
			inst = s.instance(size)
			inst.class, inst.comm, inst.root = class, comm, root
			s.setOpenColl(comm, inst)
		}
		if inst.class != class || inst.root != root || len(inst.m) != size {
			return &stuckError{L.comm, fmt.Sprintf("the members of communicator %d disagree on a collective operation (class %d, root %d, %d members against class %d, root %d, %d members)",
				comm, class, root, size, inst.class, inst.root, len(inst.m))}
		}
	}
	if me >= size || inst.m[me].here || back > L.next || back >= ringSize {
		return &stuckError{L.comm, fmt.Sprintf("member %d of %d of a collective operation arrives twice or begins %d entries back", me, size, back)}
	}
	m.begin = s.clock(L.xAt(L.next-back), bsp)
	m.in = s.clock(L.x, sp)
	inst.m[me] = m
	inst.arrived++
	if inst.arrived < size {
		L.blocked = true
		return nil
	}
	if inst.sync {
		s.sync = nil
	} else {
		s.setOpenColl(inst.comm, nil)
	}
	s.complete(inst, l)
	clear(inst.m)
	inst.arrived, inst.sync = 0, false
	s.free[len(inst.m)] = inst
	return nil
}

// instance returns an empty collective instance of size members (at
// most the number of locations).
func (s *solver) instance(size int) *collInst {
	if c := s.free[size]; c != nil {
		s.free[size] = nil
		return c
	}
	return &collInst{m: make([]collMember, size)}
}

// openColls is the number of communicators whose open collectives the
// solver keeps by number.
const openColls = 1 << 12

// openColl returns the open collective instance of communicator comm,
// nil for none.
func (s *solver) openColl(comm uint32) *collInst {
	if comm < uint32(len(s.open)) {
		return s.open[comm]
	}
	if comm < openColls {
		return nil
	}
	return s.colls[comm]
}

// setOpenColl makes c the open collective instance of communicator
// comm (nil: none).
func (s *solver) setOpenColl(comm uint32, c *collInst) {
	switch {
	case comm < openColls:
		if int(comm) >= len(s.open) {
			s.open = append(s.open, make([]*collInst, int(comm)+1-len(s.open))...)
		}
		s.open[comm] = c
	case c == nil:
		delete(s.colls, comm)
	default:
		s.colls[comm] = c
	}
}

// complete solves a collective operation (or synchronisation) that all
// members reached, last location l: every member's end (after the
// senders' begins that it receives from) and the bound of its begin (the
// earliest end of the members that receive from it), then lets the
// members go on.
func (s *solver) complete(c *collInst, last int) {
	const huge = math.MaxFloat64
	ms := c.m
	out := func(m *collMember) float64 { // the begin, if it sends
		if m.sends || c.class == replay.CollBarrier {
			return m.begin
		}
		return -huge
	}
	ifSends := func(m *collMember, end float64) float64 { // a member that sends nothing has no bound
		if !m.sends {
			return huge
		}
		return end
	}
	size := collEntrySize
	if c.sync {
		size = syncEntrySize
	}
	settle := func(m *collMember, latest, bound float64) {
		x := max(latest, m.in)
		if m.in < latest {
			s.moved++
		}
		L := &s.locs[m.loc]
		s.settled(int(m.loc), x, bound, size)
		L.blocked = false
		if int(m.loc) != last {
			s.work = append(s.work, int(m.loc))
		}
	}
	nan := math.NaN()
	switch c.class {
	case replay.CollBarrier: // (and MPI_Init, MPI_Finalize)
		v0, v1 := -huge, -huge
		for i := range ms {
			v0, v1 = max(v0, ms[i].begin), max(v1, -ms[i].in)
		}
		latest := v0 + clcLatency
		for i := range ms {
			settle(&ms[i], latest, max(latest, -v1))
		}
	case replay.CollNxN:
		v0, v1 := -huge, -huge
		for i := range ms {
			v0 = max(v0, out(&ms[i]))
			if ms[i].receives {
				v1 = max(v1, -ms[i].in)
			}
		}
		for i := range ms {
			latest := v0 + clcLatency
			if !ms[i].receives {
				latest = -huge
			}
			settle(&ms[i], latest, ifSends(&ms[i], earliest(v0+clcLatency, -v1)))
		}
	case replay.CollOneToN:
		// the root sends; the others that receive data wait for it; the
		// root's own end counts among the receivers' (it receives data
		// from itself, if any)
		v0, v1, v2 := -huge, -huge, -huge
		for i := range ms {
			switch {
			case uint32(i) == c.root:
				v0 = max(v0, out(&ms[i]))
				if ms[i].receives {
					v2 = max(v2, -ms[i].in)
				}
			case ms[i].receives:
				v1 = max(v1, -ms[i].in)
			}
		}
		for i := range ms {
			if uint32(i) == c.root {
				settle(&ms[i], -huge, ifSends(&ms[i], min(earliest(v0+clcLatency, -v1), -v2)))
				continue
			}
			latest := -huge
			if ms[i].receives {
				latest = v0 + clcLatency
			}
			settle(&ms[i], latest, nan)
		}
	case replay.CollNToOne:
		// the root waits for the senders; the senders' bound is the
		// root's corrected end
		v0, v1 := -huge, -huge
		for i := range ms {
			v0 = max(v0, out(&ms[i]))
			if uint32(i) == c.root && ms[i].receives {
				v1 = max(v1, ms[i].in)
			}
		}
		rootEnd := huge // the root receives nothing: no bound
		if v1 != -huge {
			rootEnd = max(v0+clcLatency, v1)
		}
		for i := range ms {
			if uint32(i) == c.root {
				latest := -huge
				if ms[i].receives {
					latest = v0 + clcLatency
				}
				settle(&ms[i], latest, nan)
				continue
			}
			settle(&ms[i], -huge, ifSends(&ms[i], rootEnd))
		}
	case replay.CollScan:
		// member j waits for the senders of ranks up to j; the bound is
		// the earliest corrected end of the receivers of ranks from j on
		for me := range ms {
			latest, ends, x := -huge, huge, -huge
			for j := range ms {
				latest = max(latest, out(&ms[j]))
				if j == me && ms[me].receives {
					x = latest + clcLatency
				}
				if j >= me && ms[j].receives {
					ends = min(ends, max(latest+clcLatency, ms[j].in))
				}
			}
			settle(&ms[me], x, ifSends(&ms[me], ends))
		}
	}
}

// earliest is the earliest corrected end of receivers whose earliest
// uncorrected clock is in (huge: none), sent to at latest+λ.
func earliest(latest, in float64) float64 {
	if in == math.MaxFloat64 {
		return in
	}
	return max(latest, in)
}

// The tags of the correction's messages: location 0 to the others
// (requests for chunks, solutions), the others to location 0 (chunks).
const (
	clcTag      = 0x434c43
	clcChunkTag = 0x434c44
)

// The kinds of location 0's messages to the others (the first byte).
const (
	solvedOK     = iota // then the receives moved and the bounds of the location's sends of messages
	solvedStuck         // then the communication event where the rank waits and why
	solvedFailed        // then why the solution failed
	solvedAgain         // then the zone of the skeletons to build again
	chunkPlease         // send the next chunk
	clocksChunk         // then the clock and bound of communication events, in order
)

// clocksSize is the size of the messages of clocks (at least).
const clocksSize = 64 << 10

// solve solves the location's clocks and corrects its events with them:
// location 0 solves the skeletons of all locations (solveClocks), asking
// each for its chunks, and sends every location its clocks as it goes;
// each location corrects its events as they come. Where the solution is
// not exact, every location builds its skeleton again with a wider zone.
// It returns the number of receives moved at all locations.
func (k *clock) solve(c *replay.Ctx) (int, error) {
	zone := clcZone
	for {
		violated, again, err := k.solveOnce(c, zone)
		if err != nil || again == 0 {
			return violated, err
		}
		zone = again
	}
}

// solveOnce solves the skeletons once and corrects the location's
// events: it returns the number of receives moved, or a wider zone to
// build the skeletons again with.
func (k *clock) solveOnce(c *replay.Ctx, zone float64) (int, float64, error) {
	w := c.Loc.World
	b := k.newBuilder(c, zone)
	ap := k.newApplier(c)
	if w != nil && w.Rank() != 0 {
		return k.serve(c, b, ap)
	}
	clcRounds.Add(1)
	own, stop := b.ahead()
	defer stop()
	feed, fed := ap.async()
	defer fed()
	emit := func(l int, clocks []byte) error {
		if l == 0 {
			feed(clocks[1:]) // (its events, before the skeleton's chunks to come)
			return nil
		}
		if err := w.SendOwned(l, clcTag, clocks); err != nil {
			return fmt.Errorf("sending rank %d its clocks: %w", l, err)
		}
		return nil
	}
	if w == nil || w.Size() == 1 {
		msg := solveClocks([]source{own}, zone, emit)[0]
		if err := fed(); err != nil {
			return 0, 0, err
		}
		return k.finalSolution(c, ap, msg)
	}
	n := w.Size()
	please := func(src int) error {
		if err := w.Send(src, clcTag, []byte{chunkPlease}); err != nil {
			return fmt.Errorf("timestamp correction: asking rank %d for its communication events: %w", src, err)
		}
		return nil
	}
	srcs := make([]source, n)
	srcs[0] = own
	for src := 1; src < n; src++ {
		var last []byte // the chunk in use, handed back at the next
		srcs[src] = func() ([]byte, error) {
			if last != nil {
				w.Release(last)
			}
			data, err := w.RecvOwned(src, clcChunkTag)
			if err != nil {
				return nil, fmt.Errorf("receiving its communication events: %w", err)
			}
			if len(data) == 0 {
				return nil, errors.New("it failed to make its communication events")
			}
			if data[0] == 0 { // another, while this one is solved
				if err := please(src); err != nil {
					return nil, err
				}
			}
			last = data
			return data, nil
		}
		for range chunksAhead {
			if err := please(src); err != nil {
				return 0, 0, err
			}
		}
	}
	msgs := solveClocks(srcs, zone, emit)
	for dst := 1; dst < n; dst++ {
		if err := w.SendOwned(dst, clcTag, msgs[dst]); err != nil {
			return 0, 0, fmt.Errorf("timestamp correction: sending rank %d its clocks: %w", dst, err)
		}
		msgs[dst] = nil
	}
	if err := fed(); err != nil {
		return 0, 0, err
	}
	return k.finalSolution(c, ap, msgs[0])
}

// serve answers location 0 on a location other than 0: it sends the
// chunks of its skeleton that location 0 asks for and corrects its
// events with the clocks that come, until the solution's end. After a
// failure of its own, it goes on answering (with empty chunks) until
// then, so that location 0 does not wait for it.
func (k *clock) serve(c *replay.Ctx, b *builder, ap *applier) (int, float64, error) {
	w := c.Loc.World
	var failed error
	for {
		msg, err := w.RecvOwned(0, clcTag)
		if err != nil {
			return 0, 0, fmt.Errorf("timestamp correction: receiving from rank 0: %w", err)
		}
		if len(msg) == 0 {
			return 0, 0, errors.New("timestamp correction: an empty message from rank 0")
		}
		switch msg[0] {
		case chunkPlease:
			w.Release(msg)
			var buf []byte // (a new one each time: location 0 keeps it)
			switch {
			case failed != nil:
			case b.done:
				continue // (asked ahead for more than there were)
			default:
				buf, failed = b.chunk(make([]byte, 0, chunkSize+256), chunkSize)
				if failed != nil {
					buf = nil // (location 0 learns of the failure from the empty chunk)
				}
			}
			if err := w.SendOwned(0, clcChunkTag, buf); err != nil {
				return 0, 0, fmt.Errorf("timestamp correction: sending rank 0 the communication events: %w", err)
			}
		case clocksChunk:
			if failed == nil {
				failed = ap.feed(msg[1:])
			}
			w.Release(msg)
		default:
			if failed != nil {
				return 0, 0, failed
			}
			return k.finalSolution(c, ap, msg)
		}
	}
}

// finalSolution reads the end of the solution that location 0 made for
// this one: it finishes the correction of the events and returns the
// number of receives moved, or a zone to build the skeleton again with,
// or an error.
func (k *clock) finalSolution(c *replay.Ctx, ap *applier, data []byte) (int, float64, error) {
	short := fmt.Errorf("timestamp correction: a solution of %d bytes from rank 0", len(data))
	if len(data) == 0 {
		return 0, 0, short
	}
	switch data[0] {
	case solvedOK:
		if len(data) < 9 || (len(data)-9)%8 != 0 {
			return 0, 0, short
		}
		if err := ap.finish(data[9:]); err != nil {
			return 0, 0, err
		}
		return int(binary.LittleEndian.Uint64(data[1:])), 0, nil
	case solvedAgain:
		if len(data) != 9 {
			return 0, 0, short
		}
		ap.undo()
		return 0, getFloat(data[1:]), nil
	case solvedStuck:
		if len(data) < 5 {
			return 0, 0, short
		}
		x := int(binary.LittleEndian.Uint32(data[1:]))
		what := string(data[5:])
		if x < 0 || x >= len(k.comms) {
			return 0, 0, fmt.Errorf("timestamp correction: rank %d: %s", c.Loc.Rank, what)
		}
		i := int(k.comms[x])
		return 0, 0, fmt.Errorf("timestamp correction: rank %d (location %d), event %d (%v at %.9f s): %s",
			c.Loc.Rank, c.Trace.Location, i, c.Trace.Events[i].Kind, c.Trace.RecordedTime(i), what)
	}
	return 0, 0, fmt.Errorf("timestamp correction: %s", data[1:])
}
