package otf2

import (
	"bytes"
	"fmt"
	"math"
	"testing"
)

// defRecords reads back the records of an encoded definition file.
func defRecords(t *testing.T, data []byte, chunk uint64) []RawRecord {
	t.Helper()
	var d Defs
	err := readDefFile(newChunkStream(bytes.NewReader(data), "defs", chunk), func(typ uint8, c *cursor) bool {
		d.Other = append(d.Other, RawRecord{Type: typ, Payload: append([]byte(nil), c.b...)})
		return true
	}, &d)
	if err != nil {
		t.Fatal(err)
	}
	return d.Other
}

func ffBytes(n int) []byte { return bytes.Repeat([]byte{0xff}, n) }

func joinBytes(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestSignedEncoding(t *testing.T) {
	for _, tc := range []struct {
		v    int64
		want []byte
	}{
		{0, []byte{0}},
		{1, []byte{1, 1}},
		{0x1234, []byte{2, 0x34, 0x12}},
		{math.MaxInt64, joinBytes([]byte{8}, ffBytes(7), []byte{0x7f})},
		{-1, joinBytes([]byte{8}, ffBytes(8))}, // full width: not the one-byte all-ones marker
		{-2, joinBytes([]byte{8, 0xfe}, ffBytes(7))},
		{math.MinInt64, []byte{8, 0, 0, 0, 0, 0, 0, 0, 0x80}},
	} {
		got := appendI64c(nil, tc.v)
		if !bytes.Equal(got, tc.want) {
			t.Errorf("i64c(%d) = % x, want % x", tc.v, got, tc.want)
		}
		c := cursor{b: got}
		if back := c.i64c(); back != tc.v || c.err != nil || c.more() {
			t.Errorf("i64c(%d) reads back as %d (%v)", tc.v, back, c.err)
		}
	}
	for _, tc := range []struct {
		v    int32
		want []byte
	}{
		{0, []byte{0}},
		{0x100, []byte{2, 0, 1}},
		{math.MaxInt32, []byte{4, 0xff, 0xff, 0xff, 0x7f}},
		{-1, joinBytes([]byte{4}, ffBytes(4))},
		{math.MinInt32, []byte{4, 0, 0, 0, 0x80}},
	} {
		got := appendI32c(nil, tc.v)
		if !bytes.Equal(got, tc.want) {
			t.Errorf("i32c(%d) = % x, want % x", tc.v, got, tc.want)
		}
		c := cursor{b: got}
		if back := int32(c.u32c()); back != tc.v || c.err != nil || c.more() {
			t.Errorf("i32c(%d) reads back as %d (%v)", tc.v, back, c.err)
		}
	}
}

// TestSignedFields checks that every signed field the writer encodes
// itself (not from a raw payload) uses OTF2's signed encoding, as the
// clock offset of -1 tick in the hybrid traces' local definitions.
func TestSignedFields(t *testing.T) {
	event := func(ev Event) func(*testing.T) []byte {
		return func(t *testing.T) []byte {
			b, err := appendEvent(nil, &ev)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	lastDef := func(enc func(*bytes.Buffer) error) func(*testing.T) []byte {
		return func(t *testing.T) []byte {
			var buf bytes.Buffer
			if err := enc(&buf); err != nil {
				t.Fatal(err)
			}
			rs := defRecords(t, buf.Bytes(), 1024)
			r := rs[len(rs)-1]
			return append([]byte{r.Type, byte(len(r.Payload))}, r.Payload...)
		}
	}
	clockOffset := func(off int64) func(*testing.T) []byte {
		return lastDef(func(w *bytes.Buffer) error {
			_, err := EncodeLocalDefs(w, &LocalDefs{ClockOffsets: []ClockOffset{{Time: 5, Offset: off}}}, 1024)
			return err
		})
	}
	exponent := func(exp int64) func(*testing.T) []byte {
		return lastDef(func(w *bytes.Buffer) error {
			_, err := EncodeGlobalDefs(w, &Defs{MetricMembers: []MetricMember{{Self: 0, Name: 1, MetricType: 2, Exponent: exp}}}, 1024)
			return err
		})
	}
	for _, tc := range []struct {
		name string
		enc  func(*testing.T) []byte
		want []byte
	}{
		{"ClockOffset -1", clockOffset(-1), joinBytes([]byte{DefClockOffset, 25, 5}, make([]byte, 7), []byte{8}, ffBytes(8), make([]byte, 8))},
		{"ClockOffset 3", clockOffset(3), joinBytes([]byte{DefClockOffset, 18, 5}, make([]byte, 7), []byte{1, 3}, make([]byte, 8))},
		{"MetricMember exponent -3", exponent(-3), joinBytes([]byte{DefMetricMember, 18, 0, 1, 1, 0, 2, 0, 0, 0, 8, 0xfd}, ffBytes(7), []byte{0})},
		{"MetricMember exponent 3", exponent(3), []byte{DefMetricMember, 11, 0, 1, 1, 0, 2, 0, 0, 0, 1, 3, 0}},
		{"ProgramEnd -1", event(Event{Type: EvProgramEnd, Args: [MaxArgs]uint64{math.MaxUint64}}), joinBytes([]byte{EvProgramEnd, 9, 8}, ffBytes(8))},
		{"ProgramEnd 0", event(Event{Type: EvProgramEnd}), []byte{EvProgramEnd, 1, 0}},
		{"ParameterInt MinInt64", event(Event{Type: 33, Args: [MaxArgs]uint64{2, 1 << 63}}), []byte{33, 11, 1, 2, 8, 0, 0, 0, 0, 0, 0, 0, 0x80}},
		{"attribute INT32 -2", event(Event{Type: EvProgramEnd, Attrs: []AttrValue{{Attr: 1, Type: 7, Value: math.MaxUint32 - 1}}}),
			[]byte{tagAttrList, 10, 1, 1, 1, 1, 7, 4, 0xfe, 0xff, 0xff, 0xff, EvProgramEnd, 1, 0}},
		{"attribute INT64 -1", event(Event{Type: EvProgramEnd, Attrs: []AttrValue{{Attr: 1, Type: 8, Value: math.MaxUint64}}}),
			joinBytes([]byte{tagAttrList, 14, 1, 1, 1, 1, 8, 8}, ffBytes(8), []byte{EvProgramEnd, 1, 0})},
		{"attribute UINT64 max", event(Event{Type: EvProgramEnd, Attrs: []AttrValue{{Attr: 1, Type: 4, Value: math.MaxUint64}}}),
			[]byte{tagAttrList, 6, 1, 1, 1, 1, 4, 0xff, EvProgramEnd, 1, 0}},
	} {
		if got := tc.enc(t); !bytes.Equal(got, tc.want) {
			t.Errorf("%s: % x, want % x", tc.name, got, tc.want)
		}
	}
}

// TestParadigmPropertyOrder checks that each paradigm is followed by its
// properties, as Score-P writes them.
func TestParadigmPropertyOrder(t *testing.T) {
	prop := func(paradigm, property uint8) RawRecord {
		return RawRecord{Type: DefParadigmProperty, Payload: []byte{paradigm, property, 11, 1, 30 + property}}
	}
	for _, tc := range []struct {
		name      string
		paradigms []uint8
		props     []RawRecord
		want      string // P<paradigm> or <paradigm>.<property>
	}{
		{"no properties", []uint8{4, 3}, nil, "P4 P3"},
		{"MPI+OpenMP", []uint8{4, 3}, []RawRecord{prop(4, 0), prop(4, 1), prop(3, 0)}, "P4 4.0 4.1 P3 3.0"},
		{"first without", []uint8{6, 4, 3}, []RawRecord{prop(4, 0), prop(3, 0)}, "P6 P4 4.0 P3 3.0"},
		{"undefined paradigm last", []uint8{4, 3}, []RawRecord{prop(4, 0), prop(5, 0), prop(3, 0)}, "P4 4.0 P3 5.0 3.0"},
		{"no paradigms", nil, []RawRecord{prop(4, 0)}, "4.0"},
	} {
		d := &Defs{Other: tc.props}
		for _, p := range tc.paradigms {
			d.Paradigms = append(d.Paradigms, Paradigm{Paradigm: p, Name: uint32(p), Class: 1})
		}
		var buf bytes.Buffer
		if _, err := EncodeGlobalDefs(&buf, d, 1024); err != nil {
			t.Fatal(err)
		}
		var got string
		for i, r := range defRecords(t, buf.Bytes(), 1024) {
			if i > 0 {
				got += " "
			}
			switch r.Type {
			case DefParadigm:
				got += fmt.Sprintf("P%d", r.Payload[0])
			case DefParadigmProperty:
				got += fmt.Sprintf("%d.%d", r.Payload[0], r.Payload[1])
			default:
				got += fmt.Sprintf("type%d", r.Type)
			}
		}
		if got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
