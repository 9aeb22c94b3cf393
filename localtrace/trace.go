package localtrace

import "unsafe"

// Trace is the in-memory event trace of one location.
type Trace struct {
	Location    uint64 // OTF2 location id
	Events      []Event
	Messages    []Message
	bigSizes    map[uint32]uint64 // sizes of messages of bigSize bytes or more, by index into Messages
	Collectives []Collective
	Metrics     []MetricSample
	// Callpaths is the location's call tree built from its Enter and
	// Leave events; Event.C of Enter and Leave indexes it.
	Callpaths []Callpath
	// Skipped counts events of kinds the analysis ignores, by OTF2 type.
	Skipped map[uint8]uint64
}

// Callpath returns the call path of event i: the region instance's path
// for Enter and Leave, the enclosing region's for every other event, or
// None for an event outside every region.
func (t *Trace) Callpath(i int) uint32 {
	e := &t.Events[i]
	switch e.Kind {
	case KindEnter, KindLeave:
		return e.C
	}
	if e.B == None {
		return None
	}
	return t.Events[e.B].C
}

// EnterOf returns the index of the Enter event of the region instance
// that event i belongs to (i itself for an Enter), or None.
func (t *Trace) EnterOf(i int) uint32 {
	e := &t.Events[i]
	switch e.Kind {
	case KindEnter:
		return uint32(i)
	case KindLeave:
		return e.B
	}
	return e.B
}

// LeaveOf returns the index of the Leave event of the region instance
// that event i belongs to (i itself for a Leave), or None.
func (t *Trace) LeaveOf(i int) uint32 {
	en := t.EnterOf(i)
	if en == None {
		return None
	}
	if t.Events[i].Kind == KindLeave {
		return uint32(i)
	}
	return t.Events[en].B
}

// Message returns the message details of a point-to-point event.
func (t *Trace) Message(i int) *Message { return &t.Messages[t.Events[i].A] }

// MessageBytes returns the size of the message of a point-to-point
// event.
func (t *Trace) MessageBytes(i int) uint64 {
	a := t.Events[i].A
	if s := t.Messages[a].size; s != bigSize {
		return uint64(s)
	}
	return t.bigSizes[a]
}

// addMessage appends m of n bytes to the messages.
func (t *Trace) addMessage(m Message, n uint64) {
	if n < bigSize {
		m.size = uint32(n)
	} else {
		m.size = bigSize
		if t.bigSizes == nil {
			t.bigSizes = map[uint32]uint64{}
		}
		t.bigSizes[uint32(len(t.Messages))] = n
	}
	t.Messages = append(t.Messages, m)
}

// Collective returns the details of a CollEnd or NbcComplete event.
func (t *Trace) Collective(i int) *Collective { return &t.Collectives[t.Events[i].A] }

// Bytes estimates the memory the trace holds, in bytes.
func (t *Trace) Bytes() int {
	n := cap(t.Events)*int(unsafe.Sizeof(Event{})) +
		cap(t.Messages)*int(unsafe.Sizeof(Message{})) +
		cap(t.Collectives)*int(unsafe.Sizeof(Collective{})) +
		cap(t.Callpaths)*int(unsafe.Sizeof(Callpath{})) +
		cap(t.Metrics)*int(unsafe.Sizeof(MetricSample{}))
	for _, m := range t.Metrics {
		n += 8 * cap(m.Values)
	}
	return n
}
