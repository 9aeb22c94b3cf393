package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
)

// Codec encodes and decodes the values of a payload field. Both
// functions may be called by many locations at once: they must keep no
// state of their own.
type Codec[T any] struct {
	// Append appends the encoding of v to b and returns the extended
	// buffer.
	Append func(b []byte, v T) []byte
	// Decode decodes b, exactly one encoding, into *v, reusing the
	// storage *v holds (a map's or a slice's) so that a steady stream of
	// messages allocates nothing. It returns an error if b is not a
	// valid encoding; it must not panic on any input.
	Decode func(b []byte, v *T) error
}

// Field is a typed value that messages carry: a pattern declares its
// fields once, as package variables (so that every process of a hosted
// run numbers them alike), puts values before a message leaves (Put)
// and reads them where it arrives (Get).
type Field[T any] struct {
	id    int
	name  string
	codec Codec[T]
}

// fieldInfo is what decoding needs to know of a field without its type.
type fieldInfo struct {
	name    string
	newSlot func() slot
}

// fields numbers the fields made, by id.
var fields struct {
	sync.Mutex
	infos []fieldInfo
}

// NewField makes a payload field named name (for messages) whose values
// codec encodes. It panics if the codec lacks a function.
func NewField[T any](name string, codec Codec[T]) *Field[T] {
	if codec.Append == nil || codec.Decode == nil {
		panic("replay: NewField(" + name + "): incomplete codec")
	}
	f := &Field[T]{name: name, codec: codec}
	fields.Lock()
	defer fields.Unlock()
	f.id = len(fields.infos)
	fields.infos = append(fields.infos, fieldInfo{name: name, newSlot: func() slot { return &fieldSlot[T]{f: f} }})
	return f
}

func (f *Field[T]) String() string { return f.name }

// fieldByID returns the field numbered id.
func fieldByID(id uint64) (fieldInfo, bool) {
	fields.Lock()
	defer fields.Unlock()
	if id >= uint64(len(fields.infos)) {
		return fieldInfo{}, false
	}
	return fields.infos[id], true
}

// slot holds one field's value in a payload.
type slot interface {
	appendTo(b []byte) []byte
	decode(b []byte) error
}

type fieldSlot[T any] struct {
	f *Field[T]
	v T
}

func (s *fieldSlot[T]) appendTo(b []byte) []byte { return s.f.codec.Append(b, s.v) }
func (s *fieldSlot[T]) decode(b []byte) error    { return s.f.codec.Decode(b, &s.v) }

// payload is the set of fields of one message as a location holds it:
// the outgoing fields callbacks put, or the incoming fields decoded. Its
// slots are made once per field and reused for every message.
type payload struct {
	slots []slot  // by field id; nil until the field is first used
	has   []bool  // by field id: the slot holds a value of this message
	set   []int32 // ids of the fields with a value, in the order put or received
}

// reset empties the payload (its slots stay for the next message).
func (p *payload) reset() {
	for _, id := range p.set {
		p.has[id] = false
	}
	p.set = p.set[:0]
}

// grow makes room for field id.
func (p *payload) grow(id int) {
	for len(p.slots) <= id {
		p.slots = append(p.slots, nil)
		p.has = append(p.has, false)
	}
}

// mark records that field id holds a value.
func (p *payload) mark(id int) {
	if !p.has[id] {
		p.has[id] = true
		p.set = append(p.set, int32(id))
	}
}

// Put sets field f of the outgoing payload of the current event to v:
// the message the engine ships at a Ship step (or SendInverse, or
// BcastFields) carries it to the partner, where Get returns it. A value
// put again replaces the first. A value of reference type (a map, a
// slice) is encoded when the message leaves, still within the event.
func Put[T any](c *Ctx, f *Field[T], v T) {
	p := &c.out
	if f.id >= len(p.slots) {
		p.grow(f.id)
	}
	s, ok := p.slots[f.id].(*fieldSlot[T])
	if !ok {
		s = &fieldSlot[T]{f: f}
		p.slots[f.id] = s
	}
	s.v = v
	p.mark(f.id)
}

// Get returns field f of the payload received at the current event (by
// a Take step, RecvInverse or BcastFields), and whether the sender put
// it. A value of reference type is reused for the next message that
// carries the field: copy what must outlive the event.
func Get[T any](c *Ctx, f *Field[T]) (T, bool) {
	p := &c.in
	if f.id >= len(p.has) || !p.has[f.id] {
		var zero T
		return zero, false
	}
	return p.slots[f.id].(*fieldSlot[T]).v, true
}

// ErrPayload is wrapped by the errors of malformed message payloads.
var ErrPayload = errors.New("malformed replay payload")

// encode appends the payload's fields, in the order put: each as its
// uvarint id, the uvarint length of its encoding, and the encoding.
func (p *payload) encode(b []byte) []byte {
	for _, id := range p.set {
		b = binary.AppendUvarint(b, uint64(id))
		at := len(b)
		b = append(b, 0) // the length, one byte for a short value
		b = p.slots[id].appendTo(b)
		n := len(b) - at - 1
		if n < 0x80 {
			b[at] = byte(n)
			continue
		}
		// A long value: make room for the length's other bytes.
		var lb [binary.MaxVarintLen64]byte
		k := binary.PutUvarint(lb[:], uint64(n))
		b = append(b, lb[1:k]...)
		copy(b[at+k:], b[at+1:at+1+n])
		copy(b[at:], lb[:k])
	}
	return b
}

// decode replaces the payload with the fields encoded in b.
func (p *payload) decode(b []byte) error {
	p.reset()
	for len(b) > 0 {
		id, k := binary.Uvarint(b)
		if k <= 0 {
			return fmt.Errorf("%w: bad field id", ErrPayload)
		}
		b = b[k:]
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return fmt.Errorf("%w: field %d: length beyond the payload", ErrPayload, id)
		}
		val := b[k : k+int(n)]
		b = b[k+int(n):]
		s, err := p.slotFor(id)
		if err != nil {
			return err
		}
		if p.has[id] {
			return fmt.Errorf("%w: field %s twice", ErrPayload, fieldName(id))
		}
		if err := s.decode(val); err != nil {
			return fmt.Errorf("%w: field %s: %w", ErrPayload, fieldName(id), err)
		}
		p.mark(int(id))
	}
	return nil
}

// slotFor returns the slot of field id, made on first use.
func (p *payload) slotFor(id uint64) (slot, error) {
	if id < uint64(len(p.slots)) && p.slots[id] != nil {
		return p.slots[id], nil
	}
	info, ok := fieldByID(id)
	if !ok {
		return nil, fmt.Errorf("%w: unknown field %d", ErrPayload, id)
	}
	p.grow(int(id))
	s := info.newSlot()
	p.slots[id] = s
	return s, nil
}

func fieldName(id uint64) string {
	if info, ok := fieldByID(id); ok {
		return info.name
	}
	return fmt.Sprint(id)
}

// errLength is the error of a codec given an encoding of the wrong size.
func errLength(what string, n int) error {
	return fmt.Errorf("%d bytes are no %s", n, what)
}

// Float64Codec encodes a float64 as its 8 IEEE bytes (bit-exact).
var Float64Codec = Codec[float64]{
	Append: func(b []byte, v float64) []byte {
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	},
	Decode: func(b []byte, v *float64) error {
		if len(b) != 8 {
			return errLength("float64", len(b))
		}
		*v = math.Float64frombits(binary.LittleEndian.Uint64(b))
		return nil
	},
}

// Uint64Codec encodes a uint64 as a uvarint.
var Uint64Codec = Codec[uint64]{
	Append: binary.AppendUvarint,
	Decode: func(b []byte, v *uint64) error {
		x, k := binary.Uvarint(b)
		if k <= 0 || k != len(b) {
			return errLength("uvarint", len(b))
		}
		*v = x
		return nil
	},
}

// BoolCodec encodes a bool as one byte, 0 or 1.
var BoolCodec = Codec[bool]{
	Append: func(b []byte, v bool) []byte {
		if v {
			return append(b, 1)
		}
		return append(b, 0)
	},
	Decode: func(b []byte, v *bool) error {
		if len(b) != 1 || b[0] > 1 {
			return errLength("bool", len(b))
		}
		*v = b[0] == 1
		return nil
	},
}

// Float64sCodec encodes a []float64 (long-term costs per type, say) as
// its values' IEEE bytes; decoding reuses the slice's storage.
var Float64sCodec = Codec[[]float64]{
	Append: func(b []byte, v []float64) []byte {
		for _, x := range v {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
		return b
	},
	Decode: func(b []byte, v *[]float64) error {
		if len(b)%8 != 0 {
			return errLength("[]float64", len(b))
		}
		out := (*v)[:0]
		for ; len(b) > 0; b = b[8:] {
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(b)))
		}
		*v = out
		return nil
	},
}

// EventRef is an event as a message carries it: its time and the bytes
// it moved.
type EventRef struct {
	Time  float64
	Bytes uint64
}

// EventRefCodec encodes an EventRef: the time's IEEE bytes, the bytes as
// a uvarint.
var EventRefCodec = Codec[EventRef]{
	Append: func(b []byte, v EventRef) []byte {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Time))
		return binary.AppendUvarint(b, v.Bytes)
	},
	Decode: func(b []byte, v *EventRef) error {
		if len(b) < 9 {
			return errLength("EventRef", len(b))
		}
		x, k := binary.Uvarint(b[8:])
		if k <= 0 || 8+k != len(b) {
			return errLength("EventRef", len(b))
		}
		*v = EventRef{Time: math.Float64frombits(binary.LittleEndian.Uint64(b)), Bytes: x}
		return nil
	},
}

// Timemap is a sparse vector of times by call path, as the root-cause
// analysis ships them: call-path ids in ascending order (CP) and their
// seconds (T). Kept sorted, its entries are found by merging with
// another sorted list instead of hashing: with maps, building,
// iterating and looking them up took a sixth of the processor time of
// the root-cause benchmark's bwc pass.
type Timemap struct {
	CP []uint32
	T  []float64
}

// Len returns the number of entries.
func (m Timemap) Len() int { return len(m.CP) }

// Reset empties m, keeping its arrays.
func (m *Timemap) Reset() { m.CP, m.T = m.CP[:0], m.T[:0] }

// Append adds call path cp with time t; m is sorted again by Sort.
func (m *Timemap) Append(cp uint32, t float64) {
	m.CP = append(m.CP, cp)
	m.T = append(m.T, t)
}

// Sort puts m's entries in call-path order; a call path there more than
// once gets the sum of its times (in their order in m), so that m is a
// valid Timemap.
func (m *Timemap) Sort() {
	if len(m.CP) <= 32 { // (the usual size: an insertion sort)
		for i := 1; i < len(m.CP); i++ {
			for j := i; j > 0 && m.CP[j] < m.CP[j-1]; j-- {
				m.CP[j], m.CP[j-1] = m.CP[j-1], m.CP[j]
				m.T[j], m.T[j-1] = m.T[j-1], m.T[j]
			}
		}
	} else {
		sort.Stable(byCallpath{m})
	}
	k := 0
	for i, cp := range m.CP {
		if k > 0 && m.CP[k-1] == cp {
			m.T[k-1] += m.T[i]
			continue
		}
		m.CP[k], m.T[k] = cp, m.T[i]
		k++
	}
	m.CP, m.T = m.CP[:k], m.T[:k]
}

type byCallpath struct{ m *Timemap }

func (b byCallpath) Len() int           { return len(b.m.CP) }
func (b byCallpath) Less(i, j int) bool { return b.m.CP[i] < b.m.CP[j] }
func (b byCallpath) Swap(i, j int) {
	b.m.CP[i], b.m.CP[j] = b.m.CP[j], b.m.CP[i]
	b.m.T[i], b.m.T[j] = b.m.T[j], b.m.T[i]
}

// Lookup sets out[i] to the time of call path keys[i] (0 where m has
// none), for ascending keys.
func (m Timemap) Lookup(keys []uint32, out []float64) {
	j := 0
	for i, cp := range keys {
		for j < len(m.CP) && m.CP[j] < cp {
			j++
		}
		if j < len(m.CP) && m.CP[j] == cp {
			out[i] = m.T[j]
		} else {
			out[i] = 0
		}
	}
}

// TimemapCodec encodes a Timemap as its entries in order, each a uvarint
// call path and the IEEE bytes of its time. Decoding reuses the arrays
// of the Timemap it decodes into and refuses entries out of order.
var TimemapCodec = Codec[Timemap]{
	Append: func(b []byte, v Timemap) []byte {
		for k, cp := range v.CP {
			b = binary.AppendUvarint(b, uint64(cp))
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v.T[k]))
		}
		return b
	},
	Decode: func(b []byte, v *Timemap) error {
		v.Reset()
		for len(b) > 0 {
			cp, k := binary.Uvarint(b)
			if k <= 0 || cp > math.MaxUint32 || len(b)-k < 8 {
				return fmt.Errorf("truncated or bad Timemap entry")
			}
			if n := len(v.CP); n > 0 && uint32(cp) <= v.CP[n-1] {
				return fmt.Errorf("call path %d after %d in a Timemap", cp, v.CP[n-1])
			}
			v.Append(uint32(cp), math.Float64frombits(binary.LittleEndian.Uint64(b[k:])))
			b = b[k+8:]
		}
		return nil
	},
}
