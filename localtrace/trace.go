package localtrace

import (
	"math"
	"runtime"
	"unsafe"

	"scout/internal/intern"
	"scout/internal/offheap"
)

// Trace is the in-memory event trace of one location.
type Trace struct {
	Location uint64 // OTF2 location id
	Events   []Event
	// msgs are the point-to-point events' messages (Event.Arg indexes
	// them), 8 bytes each: a channel and the size. chans numbers the
	// channels (Message: communicator, partner, tag), each once; links,
	// the linked events of the messages, parallel to msgs once some
	// message has one (Isend, Irecv) and empty before.
	msgs        []msgEntry
	chans       intern.Table[Message]
	links       []uint32
	bigSizes    map[uint32]uint64 // sizes of messages of bigSize bytes or more, by index into msgs
	Collectives []Collective
	Metrics     []MetricSample
	Locks       []Lock
	// far holds the distances of events (Event.near) of 2²⁴−1 events
	// or more, by event index: the index they lead to
	far map[uint32]uint32
	// Callpaths is the location's call tree built from its Enter and
	// Leave events; Event.Arg of Enter and Leave indexes it.
	Callpaths []Callpath
	// Skipped counts events of kinds the analysis ignores, by OTF2 type.
	Skipped map[uint8]uint64
	// The events' times (Time): bases holds the timestamp in ticks of
	// every 2^blockShift-th event, an event the ticks after it (Event.dt)
	// or, when they do not fit in 32 bits, in wide, by event index;
	// offset and res convert ticks to seconds as the loader did. A trace
	// whose timer is too fine for that (many wide events: a timer of
	// 2^52 ticks a second, as in the archives scout correct writes) keeps
	// its times in seconds in dense instead. times, once made (Times),
	// holds every event's time in seconds, which passes change.
	bases  []uint64
	wide   map[uint32]uint64
	offset uint64
	res    float64
	dense  []float64
	times  []float64
	// pages holds the large tables (Events, Messages, Collectives) of a
	// loaded trace outside the Go heap; they are unmapped when the
	// Trace becomes unreachable, so no slice of them may outlive it.
	pages *offheap.Pages
}

// mem returns the mappings of t's tables, made (with the cleanup that
// unmaps them once t is unreachable) on first use.
func (t *Trace) mem() *offheap.Pages {
	if t.pages == nil {
		t.pages = new(offheap.Pages)
		runtime.AddCleanup(t, (*offheap.Pages).Free, t.pages)
	}
	return t.pages
}

// blockShift sets the events per time base (Trace.bases): 256, so the
// bases take 1/32 byte per event, and an event's ticks fit in Event.dt
// unless its block spans more than 2^32 ticks (1.4 s at a 3 GHz
// timer), which only sparse traces do.
const blockShift = 8

// wideDT marks an Event.dt whose ticks are in Trace.wide.
const wideDT = math.MaxUint32

// Time returns the time of event i in seconds since the trace's global
// time offset.
func (t *Trace) Time(i int) float64 {
	if t.times != nil {
		return t.times[i]
	}
	return t.recorded(i)
}

// RecordedTime returns the time of event i as the trace recorded it,
// whatever Times changed since (for a trace built with Append: as
// appended, or as changed).
func (t *Trace) RecordedTime(i int) float64 {
	if t.bases == nil && t.dense == nil {
		return t.times[i]
	}
	return t.recorded(i)
}

// RecordedTimes sets dst to the recorded times (RecordedTime) of the
// events from first on, one for each element: in bulk, faster than one
// by one.
func (t *Trace) RecordedTimes(dst []float64, first int) {
	if t.bases == nil && t.dense == nil {
		copy(dst, t.times[first:first+len(dst)])
		return
	}
	t.recordedInto(dst, first)
}

// recorded returns the recorded time of event i in seconds.
func (t *Trace) recorded(i int) float64 {
	if t.dense != nil {
		return t.dense[i]
	}
	d := t.Events[i].dt
	tk := t.bases[i>>blockShift] + uint64(d)
	if d == wideDT {
		tk = t.wide[uint32(i)]
	}
	return t.seconds(tk)
}

// Times returns the times of all events in seconds, for a pass that
// changes them (timestamp correction, prediction): from then on Time
// returns what the slice holds. It takes 8 bytes per event, made at the
// first call (in a mapping of the trace's own when large: written once,
// never cleared).
func (t *Trace) Times() []float64 {
	if t.times == nil {
		ts := t.newTimes()
		t.recordedInto(ts, 0)
		t.times = ts
	}
	return t.times
}

// newTimes makes room for the times of all events (in a mapping of the
// trace's own when large: written once, never cleared).
func (t *Trace) newTimes() []float64 {
	return offheap.MakeOr[float64](t.mem(), len(t.Events))[:len(t.Events)]
}

// recordedInto sets dst to the recorded times of the events from first
// on (of a trace that keeps ticks): recorded, a block of events at a
// time.
func (t *Trace) recordedInto(dst []float64, first int) {
	if t.dense != nil {
		copy(dst, t.dense[first:first+len(dst)])
		return
	}
	off, res := t.offset, t.res
	evs := t.Events[first : first+len(dst)]
	for k := 0; k < len(dst); {
		i := first + k
		end := min(len(dst), k+(i|(1<<blockShift-1))+1-i) // the end of event i's block
		base := t.bases[i>>blockShift]
		for ; k < end; k++ {
			tk := base + uint64(evs[k].dt)
			if evs[k].dt == wideDT {
				tk = t.wide[uint32(first+k)]
			}
			dst[k] = seconds(tk, off, res)
		}
	}
}

// fillBlock is the number of events FillTimes fills between calls of
// its function.
const fillBlock = 1 << 12

// FillTimes makes the times that Times returns (it returns them): it
// fills them with the recorded times a block of events at a time, in
// order, and calls each(lo, hi) after events lo to hi−1 are (on the
// caller's goroutine), so that a pass that goes through all events
// anyway (the timestamp correction) does so while they are in the
// cache. If the trace's times were made before, it returns those and
// calls each once for all events.
func (t *Trace) FillTimes(each func(lo, hi int)) []float64 {
	n := len(t.Events)
	if t.times != nil {
		each(0, n)
		return t.times
	}
	ts := t.newTimes()
	for lo := 0; lo < n; lo += fillBlock {
		hi := min(lo+fillBlock, n)
		t.recordedInto(ts[lo:hi], lo)
		each(lo, hi)
	}
	t.times = ts
	return ts
}

// setTicks keeps ticks as the timestamp of event i, the last one (the
// events' ticks do not decrease).
func (t *Trace) setTicks(i int, ticks uint64) {
	if t.dense != nil {
		t.pushDense(i, ticks)
		return
	}
	if i&(1<<blockShift-1) == 0 {
		t.bases = append(t.bases, ticks)
	}
	d := ticks - t.bases[i>>blockShift]
	if d >= wideDT {
		if len(t.wide) >= maxWide && len(t.wide) >= i/16 {
			t.toDense(i, ticks)
			return
		}
		if t.wide == nil {
			t.wide = make(map[uint32]uint64)
		}
		t.wide[uint32(i)] = ticks
		d = wideDT
	}
	t.Events[i].dt = uint32(d)
}

// maxWide is the number of wide events (at 40 bytes or so each in the
// map) beyond which a trace that has more than one in 16 keeps its times
// in seconds (Trace.dense, 8 bytes an event) instead.
const maxWide = 4096

// toDense converts the times of events 0 to i−1 to seconds in t.dense,
// and keeps those of event i and of all that follow there.
func (t *Trace) toDense(i int, ticks uint64) {
	dense := moved(t.mem(), []float64(nil), cap(t.Events))
	for j := range i {
		dense = append(dense, t.recorded(j))
	}
	t.dense, t.bases, t.wide = dense, nil, nil
	t.pushDense(i, ticks)
}

// pushDense keeps the time of event i, the next, in t.dense.
func (t *Trace) pushDense(i int, ticks uint64) {
	if len(t.dense) == cap(t.dense) {
		t.dense = room(t.mem(), t.dense, i, cap(t.Events))
	}
	t.dense = append(t.dense, t.seconds(ticks))
}

// seconds converts a timestamp in ticks to seconds since the trace's
// global time offset.
func (t *Trace) seconds(ticks uint64) float64 { return seconds(ticks, t.offset, t.res) }

// seconds converts ticks to seconds after the offset at res ticks a
// second.
func seconds(ticks, offset uint64, res float64) float64 { return float64(int64(ticks-offset)) / res }

// Append appends event e at time (seconds) to a trace built in memory
// (tests): such a trace keeps its times in seconds (Times).
func (t *Trace) Append(e Event, time float64) {
	t.Times()
	t.Events = append(t.Events, e)
	t.times = append(t.times, time)
}

// Region returns the region of Enter or Leave event i.
func (t *Trace) Region(i int) uint32 { return t.Callpaths[t.Events[i].Arg].Region }

// Callpath returns the call path of event i: the region instance's path
// for Enter and Leave, the enclosing region's for every other event, or
// None for an event outside every region.
func (t *Trace) Callpath(i int) uint32 {
	e := &t.Events[i]
	switch e.Kind {
	case KindEnter, KindLeave:
		return e.Arg
	}
	en := t.nearIndex(i)
	if en == None {
		return None
	}
	return t.Events[en].Arg
}

// nearIndex returns the event that event i's distance leads to: the
// matching Leave of an Enter, the matching Enter of a Leave, the
// enclosing Enter of any other event (None outside every region).
func (t *Trace) nearIndex(i int) uint32 {
	e := &t.Events[i]
	switch d := e.nearDist(); {
	case d == farAway:
		return t.far[uint32(i)]
	case e.Kind == KindEnter:
		return uint32(i) + d
	case d == 0:
		return None
	default:
		return uint32(i) - d
	}
}

// setNear makes event i's distance lead to event j (None: no enclosing
// Enter).
func (t *Trace) setNear(i int, j uint32) {
	e := &t.Events[i]
	var d uint32
	switch {
	case j == None:
	case e.Kind == KindEnter:
		d = j - uint32(i)
	default:
		d = uint32(i) - j
	}
	if d >= maxNear {
		if t.far == nil {
			t.far = map[uint32]uint32{}
		}
		t.far[uint32(i)] = j
		d = farAway
	}
	e.setNear(d)
}

// Match returns the index of the matching Leave of Enter event i, or of
// the matching Enter of Leave event i.
func (t *Trace) Match(i int) uint32 { return t.nearIndex(i) }

// EnterOf returns the index of the Enter event of the region instance
// that event i belongs to (i itself for an Enter), or None.
func (t *Trace) EnterOf(i int) uint32 {
	if t.Events[i].Kind == KindEnter {
		return uint32(i)
	}
	return t.nearIndex(i)
}

// LeaveOf returns the index of the Leave event of the region instance
// that event i belongs to (i itself for a Leave), or None.
func (t *Trace) LeaveOf(i int) uint32 {
	if t.Events[i].Kind == KindLeave {
		return uint32(i)
	}
	en := t.EnterOf(i)
	if en == None {
		return None
	}
	return t.nearIndex(int(en))
}

// Link returns the event linked to event i (see Event), or None.
func (t *Trace) Link(i int) uint32 {
	if l := t.linkOf(i); l != nil {
		return *l
	}
	return None
}

// setLink links event i to event j (i must be of a kind with a link).
func (t *Trace) setLink(i int, j uint32) { *t.linkOf(i) = j }

// linkOf returns where event i's link is kept: in its message, its
// collective or the event itself; nil for a kind without a link.
func (t *Trace) linkOf(i int) *uint32 {
	e := &t.Events[i]
	switch e.Kind {
	case KindIsend, KindIrecv:
		if len(t.links) == 0 {
			// the first message with a link: every message gets one
			t.links = room(t.mem(), t.links[:0], len(t.Events), cap(t.Events))
			for range t.msgs {
				t.links = append(room(t.mem(), t.links, len(t.Events), cap(t.Events)), None)
			}
		}
		return &t.links[e.Arg]
	case KindCollEnd, KindNbcComplete:
		return &t.Collectives[e.Arg].link
	case KindIsendComplete, KindIrecvRequest, KindRequestTest, KindRequestCancelled, KindCollBegin, KindNbcRequest:
		return &e.Arg
	}
	return nil
}

// Lock returns the details of lock event i.
func (t *Trace) Lock(i int) Lock { return t.Locks[t.Events[i].Arg] }

// Message returns the message details of a point-to-point event.
func (t *Trace) Message(i int) Message { return t.chans.Values[t.msgs[t.Events[i].Arg].ch] }

// NumMessages returns the number of point-to-point events.
func (t *Trace) NumMessages() int { return len(t.msgs) }

// MessageBytes returns the size of the message of a point-to-point
// event.
func (t *Trace) MessageBytes(i int) uint64 {
	a := t.Events[i].Arg
	if s := t.msgs[a].size; s != bigSize {
		return uint64(s)
	}
	return t.bigSizes[a]
}

// addMessage appends the message of n bytes on comm to peer with tag,
// of the event to come (linkOf sets its link).
func (t *Trace) addMessage(comm, peer, tag uint32, n uint64) {
	m := msgEntry{size: uint32(n)}
	if n >= bigSize {
		m.size = bigSize
		if t.bigSizes == nil {
			t.bigSizes = map[uint32]uint64{}
		}
		t.bigSizes[uint32(len(t.msgs))] = n
	}
	m.ch = t.chans.Index(Message{comm, peer, tag})
	if len(t.links) > 0 {
		t.links = append(room(t.mem(), t.links, len(t.Events), cap(t.Events)), None)
	}
	t.msgs = append(room(t.mem(), t.msgs, len(t.Events), cap(t.Events)), m)
}

// Collective returns the details of a CollEnd or NbcComplete event.
func (t *Trace) Collective(i int) *Collective { return &t.Collectives[t.Events[i].Arg] }

// Bytes estimates the memory the trace holds, in bytes.
func (t *Trace) Bytes() int {
	n := cap(t.Events)*int(unsafe.Sizeof(Event{})) +
		cap(t.msgs)*int(unsafe.Sizeof(msgEntry{})) + cap(t.links)*4 + cap(t.chans.Values)*int(unsafe.Sizeof(Message{})) +
		cap(t.Collectives)*int(unsafe.Sizeof(Collective{})) +
		cap(t.Callpaths)*int(unsafe.Sizeof(Callpath{})) +
		cap(t.Metrics)*int(unsafe.Sizeof(MetricSample{})) +
		cap(t.Locks)*int(unsafe.Sizeof(Lock{})) +
		len(t.far)*16 + cap(t.bases)*8 + len(t.wide)*16 + cap(t.dense)*8 + cap(t.times)*8
	for _, m := range t.Metrics {
		n += 8 * cap(m.Values)
	}
	return n
}
