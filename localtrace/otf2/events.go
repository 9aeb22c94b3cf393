package otf2

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
)

// AttrValue is one entry of an event's attribute list. Value holds the raw
// bits (a FLOAT or DOUBLE is its IEEE pattern); reference types are mapped
// to global identifiers.
type AttrValue struct {
	Attr  uint32
	Type  uint8
	Value uint64
}

// Event is one decoded event record. The reader reuses it: its slices are
// valid only until the next call to Next.
type Event struct {
	Type   uint8  // record type (Ev* constants)
	Time   uint64 // clock-corrected timestamp in ticks
	Offset int64  // file offset of the record
	// Args holds the record's fields in wire order, identifiers mapped to
	// global ones. An array field's slot holds its length; its elements
	// are in Array (and, for metric values, their types in ArrayTypes).
	Args       [MaxArgs]uint64
	Array      []uint64
	ArrayTypes []uint8
	Attrs      []AttrValue
	Payload    []byte // the undecoded payload of a record type without spec
}

// Spec returns the layout of the event's record type, or nil if unknown.
func (e *Event) Spec() *EventSpec { return EventSpecs[e.Type] }

// EventReader decodes one location's event file chunk by chunk.
type EventReader struct {
	loc   uint64
	file  *os.File
	s     *chunkStream
	c     cursor
	maps  *[NumMappingTypes]*IDMap
	clock clockCorrector
	raw   uint64 // last raw timestamp
	time  uint64 // raw corrected
	ev    Event
	done  bool
	// Count is the number of event records returned so far.
	Count uint64
}

// OpenEvents opens location loc's event file. ld supplies the mapping
// tables and clock offsets (nil: none). A missing event file is an error:
// the archive lists the location, so its events must be there.
func (a *Archive) OpenEvents(loc uint64, ld *LocalDefs) (*EventReader, error) {
	f, err := os.Open(a.EventPath(loc))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("otf2: location %d: event file %s is missing", loc, a.EventPath(loc))
		}
		return nil, fmt.Errorf("otf2: location %d: %w", loc, err)
	}
	r, err := NewEventReader(f, a.EventPath(loc), loc, a.Anchor.ChunkSizeEvents, ld)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	return r, nil
}

// NewEventReader decodes the event stream of location loc from rd, which
// holds a chunked event file of the given chunk size; name is used in
// error messages. ld supplies mapping tables and clock offsets (nil: none).
func NewEventReader(rd io.Reader, name string, loc, chunkSize uint64, ld *LocalDefs) (*EventReader, error) {
	r := &EventReader{loc: loc, s: newChunkStream(rd, name, chunkSize)}
	if ld != nil {
		r.maps = &ld.Maps
		if err := r.clock.init(ld.ClockOffsets); err != nil {
			return nil, fmt.Errorf("otf2: location %d: %w", loc, err)
		}
	}
	return r, nil
}

// SizeHint returns the size of the event file, if known, else 0: no
// file holds more events than bytes.
func (r *EventReader) SizeHint() int64 { return r.s.hint }

// Raw switches off clock correction and id mapping: events then carry
// the timestamps and identifiers exactly as stored in the file. Call it
// before the first Next (used to copy archives faithfully).
func (r *EventReader) Raw() {
	r.maps = nil
	r.clock = clockCorrector{}
}

// Close releases the event file, if the reader opened one.
func (r *EventReader) Close() error {
	if r.file == nil {
		return nil
	}
	return r.file.Close()
}

// Path is the event file's path.
func (r *EventReader) Path() string { return r.s.path }

func (r *EventReader) mapID(kind int8, id uint64) uint64 {
	if kind < 0 || r.maps == nil {
		return id
	}
	return r.maps[kind].Map(id)
}

func (r *EventReader) errorf(p int, format string, args ...any) error {
	return fmt.Errorf("location %d: %w", r.loc, r.s.errorf(p, format, args...))
}

// Next decodes the next event record. It returns io.EOF after the
// end-of-file record, and an error naming file, location and offset for
// malformed or truncated data.
func (r *EventReader) Next() (*Event, error) {
	if r.done {
		return nil, io.EOF
	}
	ev := &r.ev
	ev.Attrs = ev.Attrs[:0]
	ev.Array, ev.ArrayTypes, ev.Payload = ev.Array[:0], ev.ArrayTypes[:0], nil
	c := &r.c
	for {
		if c.p >= len(c.b) {
			if err := r.nextChunk(); err != nil {
				return nil, err
			}
			continue
		}
		start := c.p
		t := c.b[c.p]
		c.p++
		switch t {
		case tagTimestamp:
			r.raw = c.u64f()
			r.time = r.clock.correct(r.raw)
			if c.err != nil {
				return nil, r.wrap(start, c.err)
			}
			continue
		case tagEndOfChunk:
			c.p = len(c.b)
			continue
		case tagEndOfFile:
			r.done = true
			return nil, io.EOF
		case tagAttrList:
			n := c.recLen()
			rec := c.sub(n)
			if c.err == nil {
				r.readAttrs(&rec)
				c.err = rec.err
			}
			if c.err != nil {
				return nil, r.wrap(start, fmt.Errorf("attribute list: %w", c.err))
			}
			continue
		}
		ev.Type, ev.Time, ev.Offset = t, r.time, r.s.off+int64(start)
		if t == EvEnter || t == EvLeave { // fast path for the most common records
			ev.Args[0] = uint64(c.u32c())
			if r.maps != nil {
				ev.Args[0] = r.maps[MapRegion].Map(ev.Args[0])
			}
			if c.err != nil {
				return nil, r.wrap(start, fmt.Errorf("%s record: %w", typeName(t), c.err))
			}
			r.Count++
			return ev, nil
		}
		if err := r.decode(t, ev); err != nil {
			return nil, r.wrap(start, fmt.Errorf("%s record: %w", typeName(t), err))
		}
		r.Count++
		return ev, nil
	}
}

func typeName(t uint8) string {
	if s := EventSpecs[t]; s != nil {
		return s.Name
	}
	return fmt.Sprintf("event type %d", t)
}

func (r *EventReader) wrap(p int, err error) error {
	return fmt.Errorf("location %d: %w", r.loc, r.s.wrap(p, err))
}

func (r *EventReader) nextChunk() error {
	if len(r.c.b) > 0 && len(r.c.b) < r.s.size {
		return r.errorf(len(r.c.b), "file ends without an end-of-file record (truncated)")
	}
	c, err := r.s.read()
	if err == io.EOF {
		return fmt.Errorf("location %d: %w", r.loc, &FormatError{File: r.s.path, Offset: r.s.next,
			Err: errors.New("file ends without an end-of-file record (truncated)")})
	}
	if err != nil {
		return fmt.Errorf("location %d: %w", r.loc, err)
	}
	r.c = c
	return nil
}

// decode reads the fields of a record of type t at the cursor.
func (r *EventReader) decode(t uint8, ev *Event) error {
	c := &r.c
	spec := EventSpecs[t]
	if spec != nil && spec.Singleton {
		fs := spec.Fields[0]
		v := c.compressed(fieldWidth(fs.Kind), fieldOnes(fs.Kind))
		ev.Args[0] = r.mapID(fs.Map, v)
		return c.err
	}
	n := c.recLen()
	rec := c.sub(n)
	if c.err != nil {
		return c.err
	}
	if spec == nil {
		ev.Payload = rec.b
		return nil
	}
	for i, fs := range spec.Fields {
		var v uint64
		switch fs.Kind {
		case FU8:
			v = uint64(rec.u8())
		case FU32:
			v = r.mapID(fs.Map, uint64(rec.u32c()))
		case FU64, FI64:
			v = rec.u64c()
		case FTime:
			v = r.clock.correct(rec.u64f())
		case FArray32:
			k := rec.u32c()
			if uint64(k) > uint64(len(rec.b)) {
				return fmt.Errorf("array of %d elements in a %d-byte record", k, len(rec.b))
			}
			for j := uint32(0); j < k && rec.err == nil; j++ {
				ev.Array = append(ev.Array, r.mapID(fs.Map, uint64(rec.u32c())))
			}
			v = uint64(k)
		case FMetricVal:
			k := int(rec.u8())
			for j := 0; j < k && rec.err == nil; j++ {
				ev.ArrayTypes = append(ev.ArrayTypes, rec.u8())
				ev.Array = append(ev.Array, rec.u64c())
			}
			v = uint64(k)
		}
		ev.Args[i] = v
	}
	return rec.err
}

func fieldWidth(k FieldKind) int {
	if k == FU32 {
		return 4
	}
	return 8
}

func fieldOnes(k FieldKind) uint64 {
	if k == FU32 {
		return math.MaxUint32
	}
	return math.MaxUint64
}

// attrMap gives the mapping type of reference-typed attribute values.
var attrMap = [26]int8{noMap, noMap, noMap, noMap, noMap, noMap, noMap, noMap, noMap, noMap, noMap,
	MapString, MapAttribute, MapLocation, MapRegion, MapGroup, MapMetric, MapComm, MapParameter,
	MapRmaWin, MapSourceCodeLocation, MapCallingContext, MapInterruptGenerator, MapIoFile, MapIoHandle,
	MapLocationGroup}

// readAttrs decodes an attribute list into r.ev.Attrs.
func (r *EventReader) readAttrs(c *cursor) {
	n := c.u32c()
	if uint64(n) > uint64(len(c.b)) {
		c.fail(fmt.Errorf("attribute list claims %d entries", n))
		return
	}
	for i := uint32(0); i < n && c.err == nil; i++ {
		a := AttrValue{Attr: uint32(r.mapID(MapAttribute, uint64(c.u32c()))), Type: c.u8()}
		a.Value = readAttrValue(c, a.Type)
		if int(a.Type) < len(attrMap) {
			a.Value = r.mapID(attrMap[a.Type], a.Value)
		}
		r.ev.Attrs = append(r.ev.Attrs, a)
	}
}

// readAttrValue decodes a value of OTF2 type t (OTF2_Type).
func readAttrValue(c *cursor, t uint8) uint64 {
	switch t {
	case 1, 5: // UINT8, INT8
		return uint64(c.u8())
	case 2, 6: // UINT16, INT16
		return uint64(c.u16())
	case 3, 7: // UINT32, INT32
		return uint64(c.u32c())
	case 9: // FLOAT
		return uint64(c.u32f())
	case 10: // DOUBLE
		return c.u64f()
	case 0, 4, 8, 13: // NONE, UINT64, INT64, LOCATION
		return c.u64c()
	}
	if t >= 11 && t <= 25 {
		return uint64(c.u32c())
	}
	return c.u64c() // future types are compressed references
}

// clockCorrector applies a location's clock offsets to its timestamps by
// piecewise linear interpolation, exactly as the OTF2 library does. Like
// OTF2 it searches intervals forward only, since timestamps do not
// decrease.
type clockCorrector struct {
	offs  []ClockOffset
	slope []float64
	i     int
}

func (k *clockCorrector) init(offs []ClockOffset) error {
	if len(offs) < 2 {
		return nil // one offset alone gives no interval: no correction
	}
	k.offs = offs
	k.slope = make([]float64, len(offs)-1)
	for i := range k.slope {
		if offs[i+1].Time <= offs[i].Time {
			return fmt.Errorf("clock offsets %d and %d are not in increasing time order (%d, %d)",
				i, i+1, offs[i].Time, offs[i+1].Time)
		}
		dt := float64(offs[i+1].Time - offs[i].Time)
		k.slope[i] = float64(offs[i+1].Offset-offs[i].Offset) / dt
	}
	return nil
}

func (k *clockCorrector) correct(t uint64) uint64 {
	if k.offs == nil {
		return t
	}
	for k.i < len(k.slope)-1 && t > k.offs[k.i+1].Time {
		k.i++
	}
	o := k.offs[k.i]
	var diff float64
	if t >= o.Time {
		diff = float64(t - o.Time)
	} else {
		diff = -float64(o.Time - t)
	}
	return t + uint64(o.Offset+int64(math.RoundToEven(k.slope[k.i]*diff)))
}
