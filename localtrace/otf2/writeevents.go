package otf2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// EventWriter writes one location's event stream: chunked, little-endian,
// with a TIMESTAMP record at the start of every chunk and whenever the
// time changes. It holds one chunk in memory whatever the stream's length.
// After an error every method returns that error.
type EventWriter struct {
	c    *chunkWriter
	time uint64 // time of the last TIMESTAMP written
	rec  []byte // scratch record (generic Write)
	// closer is closed by Close (the event file of an ArchiveWriter);
	// done reports the final count to the ArchiveWriter.
	closer io.Closer
	done   func(n uint64, err error)
	closed bool
	clock  func(uint64) uint64 // SetClock
}

// SetClock makes the writer store clock(t) for every time t it is given
// (the reading of a skewed clock, say); clock must not decrease. Call it
// before the first record.
func (w *EventWriter) SetClock(clock func(t uint64) uint64) { w.clock = clock }

// NewEventWriter returns a writer of an event stream to w with the given
// chunk size (DefaultChunkSizeEvents for Score-P's). Close must be called
// to write the last chunk.
func NewEventWriter(w io.Writer, chunkSize uint64) (*EventWriter, error) {
	c, err := newChunkWriter(w, chunkSize)
	if err != nil {
		return nil, err
	}
	return &EventWriter{c: c}, nil
}

// Count is the number of event records written so far (the Location's
// NumEvents once the stream is complete).
func (w *EventWriter) Count() uint64 { return w.c.n }

// Bytes is the number of bytes written to the underlying writer so far.
func (w *EventWriter) Bytes() int64 { return w.c.out }

// Close writes the last chunk with the END_OF_FILE record and, for a writer
// made by an ArchiveWriter, closes the event file. It does not close a
// writer passed to NewEventWriter.
func (w *EventWriter) Close() error {
	if w.closed {
		return w.c.err
	}
	w.closed = true
	err := w.c.flush(true)
	if w.closer != nil {
		if cerr := w.closer.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("otf2: closing event file: %w", cerr)
		}
	}
	if w.done != nil {
		w.done(w.c.n, err)
	}
	if err != nil && w.c.err == nil {
		w.c.err = err
	}
	return err
}

// begin prepares a record of at most n bytes at time t: it starts a new
// chunk if the record does not fit and writes a TIMESTAMP if the chunk is
// new or the time changed. The caller then appends the record to w.c.buf.
func (w *EventWriter) begin(t uint64, n int) error {
	c := w.c
	if c.err != nil {
		return c.err
	}
	if w.closed {
		return errors.New("otf2: event writer is closed")
	}
	if w.clock != nil {
		t = w.clock(t)
	}
	if t < w.time {
		c.err = fmt.Errorf("otf2: event %d: time %d goes back (previous %d)", c.n+1, t, w.time)
		return c.err
	}
	ts := c.empty || t != w.time
	need := n
	if ts {
		need += 9
	}
	if !c.fits(need) {
		if err := c.room(need); err != nil {
			c.err = err
			return err
		}
		if c.empty && !ts {
			ts = true
			if err := c.room(n + 9); err != nil {
				c.err = err
				return err
			}
		}
	}
	if ts {
		c.buf = appendU64f(append(c.buf, tagTimestamp), t)
		w.time = t
	}
	c.empty = false
	c.n++
	return nil
}

// Enter writes an Enter record of region at time t.
func (w *EventWriter) Enter(t uint64, region uint32) error {
	if err := w.begin(t, 6); err != nil {
		return err
	}
	w.c.buf = appendU32c(append(w.c.buf, EvEnter), region)
	return nil
}

// Leave writes a Leave record of region at time t.
func (w *EventWriter) Leave(t uint64, region uint32) error {
	if err := w.begin(t, 6); err != nil {
		return err
	}
	w.c.buf = appendU32c(append(w.c.buf, EvLeave), region)
	return nil
}

// msg writes an MpiSend or MpiRecv record.
func (w *EventWriter) msg(typ uint8, t uint64, peer, comm, tag uint32, length uint64) error {
	if err := w.begin(t, 2+5+5+5+9); err != nil {
		return err
	}
	b, start := beginRecord(w.c.buf, typ)
	b = appendU64c(appendU32c(appendU32c(appendU32c(b, peer), comm), tag), length)
	b[start-1] = byte(len(b) - start)
	w.c.buf = b
	return nil
}

// MpiSend writes an MpiSend record: a message of length bytes to rank
// receiver of communicator comm.
func (w *EventWriter) MpiSend(t uint64, receiver, comm, tag uint32, length uint64) error {
	return w.msg(EvMpiSend, t, receiver, comm, tag, length)
}

// MpiRecv writes an MpiRecv record: a message of length bytes from rank
// sender of communicator comm.
func (w *EventWriter) MpiRecv(t uint64, sender, comm, tag uint32, length uint64) error {
	return w.msg(EvMpiRecv, t, sender, comm, tag, length)
}

// MpiCollectiveBegin writes an MpiCollectiveBegin record.
func (w *EventWriter) MpiCollectiveBegin(t uint64) error {
	if err := w.begin(t, 2); err != nil {
		return err
	}
	w.c.buf = append(w.c.buf, EvMpiCollectiveBegin, 0)
	return nil
}

// MpiCollectiveEnd writes an MpiCollectiveEnd record of collective
// operation op on comm with root (a rank, or Undef32 for none) and the
// bytes sent and received.
func (w *EventWriter) MpiCollectiveEnd(t uint64, op uint8, comm, root uint32, sent, received uint64) error {
	if err := w.begin(t, 2+1+5+5+9+9); err != nil {
		return err
	}
	b, start := beginRecord(w.c.buf, EvMpiCollectiveEnd)
	b = appendU64c(appendU64c(appendU32c(appendU32c(append(b, op), comm), root), sent), received)
	b[start-1] = byte(len(b) - start)
	w.c.buf = b
	return nil
}

// comm writes a CommCreate or CommDestroy record.
func (w *EventWriter) comm(typ uint8, t uint64, comm uint32) error {
	if err := w.begin(t, 2+5); err != nil {
		return err
	}
	b, start := beginRecord(w.c.buf, typ)
	b = appendU32c(b, comm)
	b[start-1] = byte(len(b) - start)
	w.c.buf = b
	return nil
}

// CommCreate writes a CommCreate record of communicator comm.
func (w *EventWriter) CommCreate(t uint64, comm uint32) error { return w.comm(EvCommCreate, t, comm) }

// CommDestroy writes a CommDestroy record of communicator comm.
func (w *EventWriter) CommDestroy(t uint64, comm uint32) error {
	return w.comm(EvCommDestroy, t, comm)
}

// Write writes ev generically from its record type's entry in EventSpecs:
// the fields from ev.Args (an array field's elements from ev.Array, metric
// value types from ev.ArrayTypes), preceded by an ATTRIBUTE_LIST if
// ev.Attrs is not empty. A record type without spec is written with
// ev.Payload as its payload. Fields are checked against their width: a
// value that does not fit is an error, not truncated.
func (w *EventWriter) Write(ev *Event) error {
	if w.c.err != nil {
		return w.c.err
	}
	b, err := appendEvent(w.rec[:0], ev)
	w.rec = b
	if err != nil {
		err = fmt.Errorf("otf2: event %d (%s): %w", w.c.n+1, typeName(ev.Type), err)
		w.c.err = err
		return err
	}
	if err := w.begin(ev.Time, len(b)); err != nil {
		return err
	}
	w.c.buf = append(w.c.buf, b...)
	return nil
}

// appendEvent appends ev's optional attribute list and its record.
func appendEvent(b []byte, ev *Event) ([]byte, error) {
	if len(ev.Attrs) > 0 {
		var err error
		if b, err = appendAttrList(b, ev.Attrs); err != nil {
			return b, err
		}
	}
	spec := EventSpecs[ev.Type]
	switch {
	case ev.Type <= tagAttrList:
		return b, fmt.Errorf("record type %d is reserved for buffer markers", ev.Type)
	case spec == nil:
		b, start := beginRecord(b, ev.Type)
		return endRecord(append(b, ev.Payload...), start), nil
	case spec.Singleton:
		fs := spec.Fields[0]
		if fs.Kind == FU32 && ev.Args[0] > math.MaxUint32 {
			return b, fmt.Errorf("%s %d does not fit 32 bits", fs.Name, ev.Args[0])
		}
		return appendCompressed(append(b, ev.Type), ev.Args[0], fieldOnes(fs.Kind)), nil
	}
	b, start := beginRecord(b, ev.Type)
	for i, fs := range spec.Fields {
		var err error
		if b, err = appendField(b, fs, ev.Args[i], ev); err != nil {
			return b, err
		}
	}
	return endRecord(b, start), nil
}

func appendField(b []byte, fs FieldSpec, v uint64, ev *Event) ([]byte, error) {
	switch fs.Kind {
	case FU8:
		if v > math.MaxUint8 {
			return b, fmt.Errorf("%s %d does not fit 8 bits", fs.Name, v)
		}
		return append(b, uint8(v)), nil
	case FU32:
		if v > math.MaxUint32 {
			return b, fmt.Errorf("%s %d does not fit 32 bits", fs.Name, v)
		}
		return appendU32c(b, uint32(v)), nil
	case FU64:
		return appendU64c(b, v), nil
	case FI64:
		return appendI64c(b, int64(v)), nil
	case FTime:
		return appendU64f(b, v), nil
	case FArray32:
		if uint64(len(ev.Array)) > math.MaxUint32 {
			return b, fmt.Errorf("%s: %d elements", fs.Name, len(ev.Array))
		}
		b = appendU32c(b, uint32(len(ev.Array)))
		for _, x := range ev.Array {
			if x > math.MaxUint32 {
				return b, fmt.Errorf("%s element %d does not fit 32 bits", fs.Name, x)
			}
			b = appendU32c(b, uint32(x))
		}
		return b, nil
	case FMetricVal:
		if len(ev.Array) > math.MaxUint8 || len(ev.ArrayTypes) != len(ev.Array) {
			return b, fmt.Errorf("%s: %d values with %d types (at most 255, one type each)",
				fs.Name, len(ev.Array), len(ev.ArrayTypes))
		}
		b = append(b, uint8(len(ev.Array)))
		for j, x := range ev.Array {
			b = appendU64c(append(b, ev.ArrayTypes[j]), x)
		}
		return b, nil
	}
	return b, fmt.Errorf("%s: unknown field kind %d", fs.Name, fs.Kind)
}

// appendAttrList appends an ATTRIBUTE_LIST record.
func appendAttrList(b []byte, attrs []AttrValue) ([]byte, error) {
	if uint64(len(attrs)) > math.MaxUint32 {
		return b, fmt.Errorf("%d attributes", len(attrs))
	}
	b, start := beginRecord(b, tagAttrList)
	b = appendU32c(b, uint32(len(attrs)))
	for _, a := range attrs {
		var err error
		b = append(appendU32c(b, a.Attr), a.Type)
		if b, err = appendAttrValue(b, a.Type, a.Value); err != nil {
			return b, fmt.Errorf("attribute %d: %w", a.Attr, err)
		}
	}
	return endRecord(b, start), nil
}

// appendAttrValue encodes a value of OTF2 type t, the inverse of
// readAttrValue.
func appendAttrValue(b []byte, t uint8, v uint64) ([]byte, error) {
	var max uint64 = math.MaxUint64
	switch t {
	case 1, 5: // UINT8, INT8
		max = math.MaxUint8
	case 2, 6: // UINT16, INT16
		max = math.MaxUint16
	case 3, 7, 9: // UINT32, INT32, FLOAT
		max = math.MaxUint32
	case 0, 4, 8, 10, 13: // NONE, UINT64, INT64, DOUBLE, LOCATION
	default:
		if t >= 11 && t <= 25 {
			max = math.MaxUint32
		}
	}
	if v > max {
		return b, fmt.Errorf("value %d does not fit type %d", v, t)
	}
	switch t {
	case 1, 5:
		return append(b, uint8(v)), nil
	case 2, 6:
		return binary.LittleEndian.AppendUint16(b, uint16(v)), nil
	case 9:
		return binary.LittleEndian.AppendUint32(b, uint32(v)), nil
	case 10:
		return appendU64f(b, v), nil
	case 7:
		return appendI32c(b, int32(uint32(v))), nil
	case 8:
		return appendI64c(b, int64(v)), nil
	case 0, 4, 13:
		return appendU64c(b, v), nil
	}
	if max == math.MaxUint32 {
		return appendU32c(b, uint32(v)), nil
	}
	return appendU64c(b, v), nil
}
