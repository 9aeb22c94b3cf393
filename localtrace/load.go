package localtrace

import (
	"errors"
	"fmt"
	"io"
	"path"

	"scout/internal/grow"
	"scout/internal/offheap"
	"scout/localtrace/otf2"
)

// Load reads location loc of archive a: its local definitions (mapping
// tables, clock offsets) and its event file, and no other location's
// files. defs are the archive's global definitions.
func Load(a *otf2.Archive, defs *otf2.Defs, loc uint64) (*Trace, error) {
	def, ok := defs.Location(loc)
	if !ok {
		return nil, fmt.Errorf("localtrace: location %d is not defined in %s", loc, a.GlobalDefPath())
	}
	ld, err := a.ReadLocalDefs(loc)
	if err != nil {
		return nil, err
	}
	r, err := a.OpenEvents(loc, ld)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	t, err := Decode(r, defs, loc, def.NumEvents)
	if err != nil {
		return nil, err
	}
	if r.Count != def.NumEvents {
		return nil, fmt.Errorf("localtrace: location %d: %s holds %d events, but the definitions announce %d (trace incomplete or damaged)",
			loc, r.Path(), r.Count, def.NumEvents)
	}
	return t, nil
}

// Decode reads all events of r into a Trace. numEvents, if known, sizes
// the event slice exactly.
func Decode(r *otf2.EventReader, defs *otf2.Defs, loc uint64, numEvents uint64) (*Trace, error) {
	return DecodeInto(nil, r, defs, loc, numEvents)
}

// DecodeInto is Decode reusing the memory of reuse (if not nil), which
// it overwrites: decoding many streams one after another then allocates
// only once.
func DecodeInto(reuse *Trace, r *otf2.EventReader, defs *otf2.Defs, loc uint64, numEvents uint64) (*Trace, error) {
	if h := r.SizeHint(); h > 0 && numEvents > uint64(h) {
		// The count is the definitions' claim; the file cannot hold
		// more events than bytes, so reserve no more (Load reports
		// the mismatch).
		numEvents = uint64(h)
	}
	b := newBuilder(defs, loc, numEvents)
	if reuse != nil && uint64(cap(reuse.Events)) >= numEvents {
		if reuse.pages != nil {
			// the times in seconds are not reused
			offheap.Release(reuse.pages, reuse.dense)
			offheap.Release(reuse.pages, reuse.times)
		}
		*reuse = Trace{Location: loc, Events: reuse.Events[:0], msgs: reuse.msgs[:0], links: reuse.links[:0],
			Collectives: reuse.Collectives[:0], Callpaths: reuse.Callpaths[:0], Metrics: reuse.Metrics[:0], pages: reuse.pages,
			bases: reuse.bases[:0], offset: b.t.offset, res: b.t.res}
		b.t = reuse
	}
	b.alloc(numEvents)
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("localtrace: %w", err)
		}
		if err := b.add(ev); err != nil {
			return nil, fmt.Errorf("localtrace: location %d: %s offset %d: %w", loc, r.Path(), ev.Offset, err)
		}
	}
	if err := b.finish(); err != nil {
		return nil, fmt.Errorf("localtrace: location %d: %s: %w", loc, r.Path(), err)
	}
	return b.t, nil
}

// p2pKinds maps OTF2 record types MpiSend..MpiIrecv to kinds.
var p2pKinds = [...]Kind{KindSend, KindIsend, KindInvalid, KindInvalid, KindRecv, KindIrecv}

// The classes of pending requests (builder.pending).
const (
	reqSend = iota
	reqRecv
	reqColl
	reqClasses
)

type builder struct {
	t       *Trace
	defs    *otf2.Defs
	lastTck uint64
	stack   []uint32 // indices of open Enter events
	kids    [][]uint32
	roots   []uint32
	// pending holds the requests not completed yet, by class and id:
	// a map per class, as a 64-bit key hashes several times faster than
	// a struct of class and id (a struct key took a sixth of the loading
	// of an HPCG-like trace, whose halo exchanges are non-blocking).
	pending [reqClasses]map[uint64]uint32
	program map[uint32]uint32 // program name string → region
	wide    map[uint64]uint32 // (parent, region) → child, for parents of many children
}

func newBuilder(defs *otf2.Defs, loc, numEvents uint64) *builder {
	if numEvents > 1<<32-2 {
		numEvents = 0 // implausible: let append grow it
	}
	b := &builder{
		t:    &Trace{Location: loc, offset: defs.Clock.GlobalOffset, res: float64(defs.Clock.TimerResolution)},
		defs: defs,
	}
	for c := range b.pending {
		b.pending[c] = make(map[uint64]uint32)
	}
	return b
}

func (b *builder) alloc(numEvents uint64) {
	if b.t.Events == nil {
		b.t.Events = moved(b.t.mem(), []Event(nil), int(numEvents))
	}
}

// push appends e, at the current event's time, to the events.
func (b *builder) push(e Event) {
	t := b.t
	if len(t.Events) == cap(t.Events) {
		t.Events = room(t.mem(), t.Events, len(t.Events), cap(t.Events))
	}
	t.Events = append(t.Events, e)
	t.setTicks(len(t.Events)-1, b.lastTck)
}

// fewKids is the number of children a call path has before callpath
// looks them up in a map instead of a list.
const fewKids = 8

// callpath returns the child of parent (None: a root) for region.
func (b *builder) callpath(parent, region uint32) uint32 {
	list := &b.roots
	if parent != None {
		list = &b.kids[parent]
	}
	k := uint64(parent)<<32 | uint64(region)
	if len(*list) > fewKids {
		if c, ok := b.wide[k]; ok {
			return c
		}
	} else {
		for _, c := range *list {
			if b.t.Callpaths[c].Region == region {
				return c
			}
		}
	}
	id := uint32(len(b.t.Callpaths))
	b.t.Callpaths = append(b.t.Callpaths, Callpath{Region: region, Parent: parent})
	// Append to the parent's list before growing b.kids: list may
	// point into b.kids, and growing it would leave list stale.
	*list = append(*list, id)
	switch n := len(*list); {
	case n == fewKids+1: // many children: look them up in a map
		if b.wide == nil {
			b.wide = map[uint64]uint32{}
		}
		for _, c := range *list {
			b.wide[uint64(parent)<<32|uint64(b.t.Callpaths[c].Region)] = c
		}
	case n > fewKids+1:
		b.wide[k] = id
	}
	b.kids = append(b.kids, nil)
	return id
}

func (b *builder) top() uint32 {
	if len(b.stack) == 0 {
		return None
	}
	return b.stack[len(b.stack)-1]
}

func (b *builder) add(ev *otf2.Event) error {
	if ev.Time != b.lastTck {
		if ev.Time < b.lastTck {
			return fmt.Errorf("timestamp %.9f s goes back in time (previous event at %.9f s)", b.t.seconds(ev.Time), b.t.seconds(b.lastTck))
		}
		b.lastTck = ev.Time
	}
	switch ev.Type {
	case otf2.EvEnter:
		return b.enter(uint32(ev.Args[0]))
	case otf2.EvLeave:
		return b.leave(uint32(ev.Args[0]))
	}
	t := b.t
	idx := uint32(len(t.Events))
	e := Event{Arg: None}
	link := None // the linked event, for a kind with a link
	switch ev.Type {
	case otf2.EvProgramBegin:
		r, err := b.programRegion(uint32(ev.Args[0]))
		if err != nil {
			return err
		}
		return b.enter(r)
	case otf2.EvProgramEnd:
		if len(b.stack) == 0 {
			return errors.New("ProgramEnd without ProgramBegin")
		}
		return b.leave(t.Region(int(b.top())))
	case otf2.EvMpiSend, otf2.EvMpiRecv, otf2.EvMpiIsend, otf2.EvMpiIrecv:
		e.Kind = p2pKinds[ev.Type-otf2.EvMpiSend]
		e.Arg = uint32(len(t.msgs))
		switch ev.Type {
		case otf2.EvMpiIsend:
			b.pending[reqSend][ev.Args[4]] = idx
		case otf2.EvMpiIrecv:
			link = b.complete(reqRecv, ev.Args[4], idx)
		}
		t.addMessage(uint32(ev.Args[1]), uint32(ev.Args[0]), uint32(ev.Args[2]), ev.Args[3])
	case otf2.EvMpiIsendComplete:
		e.Kind = KindIsendComplete
		link = b.complete(reqSend, ev.Args[0], idx)
	case otf2.EvMpiIrecvRequest:
		e.Kind = KindIrecvRequest
		b.pending[reqRecv][ev.Args[0]] = idx
	case otf2.EvMpiRequestTest:
		e.Kind = KindRequestTest
		link = b.lookup(ev.Args[0])
	case otf2.EvMpiRequestCancelled:
		e.Kind = KindRequestCancelled
		link = b.lookup(ev.Args[0])
		if link != None {
			class := reqSend
			if t.Events[link].Kind == KindIrecvRequest {
				class = reqRecv
			}
			delete(b.pending[class], ev.Args[0])
			t.setLink(int(link), idx)
		}
	case otf2.EvMpiCollectiveBegin:
		e.Kind = KindCollBegin
	case otf2.EvMpiCollectiveEnd:
		e.Kind = KindCollEnd
		e.Arg = b.collective(ev)
		// link to the last unmatched CollBegin of the enclosing region
		for i := len(t.Events) - 1; i >= 0 && uint32(i) != b.top(); i-- {
			if t.Events[i].Kind == KindCollBegin && t.Events[i].Arg == None {
				link, t.Events[i].Arg = uint32(i), idx
				break
			}
		}
	case otf2.EvNbcRequest:
		e.Kind = KindNbcRequest
		b.pending[reqColl][ev.Args[0]] = idx
	case otf2.EvNbcComplete:
		e.Kind = KindNbcComplete
		e.Arg = b.collective(ev)
		link = b.complete(reqColl, ev.Args[5], idx)
	case otf2.EvCommCreate, otf2.EvCommDestroy:
		e.Kind = KindCommCreate
		if ev.Type == otf2.EvCommDestroy {
			e.Kind = KindCommDestroy
		}
		e.Arg = uint32(ev.Args[0])
	case otf2.EvMeasurementOnOff:
		e.Kind, e.Arg = KindMeasurementOnOff, uint32(ev.Args[0])
	case otf2.EvBufferFlush:
		e.Kind = KindBufferFlush
	case otf2.EvMetric:
		e.Kind, e.Arg = KindMetric, uint32(len(t.Metrics))
		t.Metrics = append(t.Metrics, MetricSample{Metric: uint32(ev.Args[0]), Values: append([]uint64(nil), ev.Array...)})
	case otf2.EvOmpFork:
		e.Kind, e.Arg = KindFork, uint32(ev.Args[0])
	case otf2.EvThreadFork:
		e.Kind, e.Arg = KindFork, uint32(ev.Args[1])
	case otf2.EvOmpJoin, otf2.EvThreadJoin:
		e.Kind = KindJoin
	case otf2.EvThreadTeamBegin, otf2.EvThreadTeamEnd:
		e.Kind, e.Arg = KindTeamBegin, uint32(ev.Args[0])
		if ev.Type == otf2.EvThreadTeamEnd {
			e.Kind = KindTeamEnd
		}
	case otf2.EvOmpAcquireLock, otf2.EvOmpReleaseLock:
		e.Kind, e.Arg = KindLockAcquire, b.lock(uint32(ev.Args[0]), uint32(ev.Args[1]))
		if ev.Type == otf2.EvOmpReleaseLock {
			e.Kind = KindLockRelease
		}
	case otf2.EvThreadAcquireLock, otf2.EvThreadReleaseLock:
		e.Kind, e.Arg = KindLockAcquire, b.lock(uint32(ev.Args[1]), uint32(ev.Args[2]))
		if ev.Type == otf2.EvThreadReleaseLock {
			e.Kind = KindLockRelease
		}
	default:
		e.Kind, e.Arg = KindOther, uint32(ev.Type)
		if t.Skipped == nil {
			t.Skipped = make(map[uint8]uint64)
		}
		t.Skipped[ev.Type]++
	}
	b.push(e)
	t.setNear(int(idx), b.top())
	if l := t.linkOf(int(idx)); l != nil {
		*l = link // (None for a request, which its completion links)
	}
	return nil
}

func (b *builder) collective(ev *otf2.Event) uint32 {
	b.t.Collectives = append(room(b.t.mem(), b.t.Collectives, len(b.t.Events), cap(b.t.Events)), Collective{Op: uint8(ev.Args[0]), Comm: uint32(ev.Args[1]),
		Root: uint32(ev.Args[2]), link: None, Sent: ev.Args[3], Received: ev.Args[4]})
	return uint32(len(b.t.Collectives) - 1)
}

// lock adds the details of a lock event and returns their index.
func (b *builder) lock(lock, order uint32) uint32 {
	b.t.Locks = append(b.t.Locks, Lock{Lock: lock, Order: order})
	return uint32(len(b.t.Locks) - 1)
}

// complete links completion event idx with its pending request id of
// class.
func (b *builder) complete(class int, id uint64, idx uint32) uint32 {
	r, ok := b.pending[class][id]
	if !ok {
		return None // request issued while recording was off
	}
	delete(b.pending[class], id)
	b.t.setLink(int(r), idx)
	return r
}

// lookup finds a pending send or receive request by id.
func (b *builder) lookup(id uint64) uint32 {
	if r, ok := b.pending[reqSend][id]; ok {
		return r
	}
	if r, ok := b.pending[reqRecv][id]; ok {
		return r
	}
	return None
}

func (b *builder) enter(region uint32) error {
	parent := None
	if n := len(b.stack); n > 0 {
		parent = b.t.Events[b.stack[n-1]].Arg
	}
	b.stack = append(b.stack, uint32(len(b.t.Events)))
	b.push(Event{Kind: KindEnter, Arg: b.callpath(parent, region)})
	return nil
}

func (b *builder) leave(region uint32) error {
	n := len(b.stack)
	if n == 0 {
		return fmt.Errorf("leave of region %s without a matching Enter", b.regionName(region))
	}
	top := b.stack[n-1]
	en := &b.t.Events[top]
	if r := b.t.Region(int(top)); r != region {
		return fmt.Errorf("leave of region %s, but the innermost open region is %s (entered at %.9f s)",
			b.regionName(region), b.regionName(r), b.t.Time(int(top)))
	}
	idx := len(b.t.Events)
	b.stack = b.stack[:n-1]
	b.push(Event{Kind: KindLeave, Arg: en.Arg})
	b.t.setNear(int(top), uint32(idx))
	b.t.setNear(idx, top)
	return nil
}

func (b *builder) finish() error {
	t := b.t
	p := t.mem()
	t.msgs = shrink(p, t.msgs)
	t.links = shrink(p, t.links)
	t.chans.Seal()
	t.Collectives = shrink(p, t.Collectives)
	t.Callpaths = shrink(p, t.Callpaths)
	t.Events = shrink(p, t.Events)
	t.dense = shrink(p, t.dense)
	if len(b.stack) > 0 {
		return fmt.Errorf("region %s entered at %.9f s is never left (%d regions still open at the end of the trace: trace incomplete)",
			b.regionName(b.t.Region(int(b.top()))), b.t.Time(int(b.top())), len(b.stack))
	}
	return nil
}

func (b *builder) regionName(id uint32) string {
	if r, ok := b.defs.Region(id); ok {
		return fmt.Sprintf("%q (id %d)", b.defs.Str(r.Name), id)
	}
	return fmt.Sprintf("id %d (undefined)", id)
}

// programRegion finds the region standing for the program in ProgramBegin:
// Score-P defines an artificial region named like the program.
func (b *builder) programRegion(name uint32) (uint32, error) {
	if r, ok := b.program[name]; ok {
		return r, nil
	}
	// the artificial region named by the same string, else by a string
	// of the same value, else by the value's base name; once per name,
	// in O(regions) (the strings grow with the locations)
	value := b.defs.Str(name)
	base := path.Base(value)
	var byID, byValue, byBase uint32
	haveID, haveValue, haveBase := false, false, false
	for _, r := range b.defs.Regions {
		if r.Role != otf2.RoleArtificial {
			continue
		}
		if r.Name == name && !haveID {
			byID, haveID = r.Self, true
		}
		switch b.defs.Str(r.Name) {
		case value:
			byValue, haveValue = r.Self, true
		case base:
			byBase, haveBase = r.Self, true
		}
	}
	var r uint32
	switch {
	case haveID:
		r = byID
	case haveValue:
		r = byValue
	case haveBase:
		r = byBase // Score-P names the region after the executable's base name
	default:
		return 0, fmt.Errorf("ProgramBegin names program %q, but no artificial region of that name is defined", value)
	}
	if b.program == nil {
		b.program = make(map[uint32]uint32)
	}
	b.program[name] = r
	return r, nil
}

// mapTables puts large tables in mappings of their own (false in tests:
// all on the heap).
var mapTables = true

// shrink returns s without unused capacity: a mapping of its own is
// trimmed, an array on the heap is moved to one of about its length when
// append left much unused capacity, so a loaded trace holds no slack.
func shrink[T any](p *offheap.Pages, s []T) []T {
	if offheap.Owns(p, s) {
		return offheap.Trim(p, s)
	}
	if cap(s)-len(s) <= len(s)/16 {
		return s
	}
	return moved(p, s, len(s))
}

// room returns s with room for one more element, after done of total
// events were read. The first room of a table of elements that some of
// the events add (messages, collectives) is a mapping of its own for
// one per event (offheap: capacity costs memory only where it is
// written, and shrink gives the rest back), so it is never copied; on
// the heap, or when the count of events was unknown or wrong, a full
// table grows to what grow.Room predicts.
func room[T any](p *offheap.Pages, s []T, done, total int) []T {
	if len(s) < cap(s) {
		return s
	}
	if cap(s) == 0 && total > 0 && mapTables {
		if n := offheap.Make[T](p, total); n != nil {
			return n
		}
	}
	return moved(p, s, grow.Cap(len(s), done, total))
}

// moved returns s in a new array of capacity c (a mapping of its own in
// transparent huge pages where it is large enough, else on the heap),
// and unmaps s's array if it was a mapping.
func moved[T any](p *offheap.Pages, s []T, c int) []T {
	var n []T
	if mapTables {
		n = offheap.MakeOr[T](p, c)
	} else {
		n = make([]T, 0, c)
	}
	n = append(n, s...)
	offheap.Release(p, s)
	return n
}
