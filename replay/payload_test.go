package replay

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Fields of the payload tests.
var (
	tWait  = NewField("test wait", Float64Codec)
	tSend  = NewField("test send", EventRefCodec)
	tMap   = NewField("test timemap", TimemapCodec)
	tCosts = NewField("test costs", Float64sCodec)
	tFlag  = NewField("test flag", BoolCodec)
	tCount = NewField("test count", Uint64Codec)
)

// sample is one value of every test field.
type sample struct {
	Wait  float64
	Send  EventRef
	Map   Timemap
	Costs []float64
	Flag  bool
	Count uint64
}

func (s *sample) put(c *Ctx) {
	Put(c, tWait, s.Wait)
	Put(c, tSend, s.Send)
	Put(c, tMap, s.Map)
	Put(c, tCosts, s.Costs)
	Put(c, tFlag, s.Flag)
	Put(c, tCount, s.Count)
}

// get returns the received fields, and how many were present.
func get(c *Ctx) (sample, int) {
	var s sample
	n := 0
	for _, ok := range []bool{
		getInto(c, tWait, &s.Wait), getInto(c, tSend, &s.Send), getInto(c, tMap, &s.Map),
		getInto(c, tCosts, &s.Costs), getInto(c, tFlag, &s.Flag), getInto(c, tCount, &s.Count),
	} {
		if ok {
			n++
		}
	}
	return s, n
}

func getInto[T any](c *Ctx, f *Field[T], v *T) bool {
	x, ok := Get(c, f)
	*v = x
	return ok
}

// TestPayloadRoundTrip: what a sender puts, the receiver gets, long
// values (over 127 bytes) included; fields not put are absent.
func TestPayloadRoundTrip(t *testing.T) {
	var big Timemap
	for cp := range uint32(40) {
		big.Append(cp*1000, float64(cp)/3)
	}
	tests := []struct {
		name string
		in   *sample // nil: nothing put
		want int     // fields present
	}{
		{"nothing", nil, 0},
		{"short values", &sample{Wait: 1.5, Send: EventRef{Time: 2, Bytes: 1 << 40}, Map: Timemap{CP: []uint32{7}, T: []float64{0.25}},
			Costs: []float64{1, -2}, Flag: true, Count: 300}, 6},
		{"long values", &sample{Wait: math.Copysign(0, -1), Map: big, Costs: make([]float64, 100)}, 6},
	}
	var snd, rcv Ctx
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snd.reset(0)
			rcv.reset(0)
			if tc.in != nil {
				tc.in.put(&snd)
			}
			b := snd.out.encode(nil)
			if err := rcv.in.decode(b); err != nil {
				t.Fatal(err)
			}
			got, n := get(&rcv)
			if n != tc.want {
				t.Errorf("%d fields present, want %d", n, tc.want)
			}
			if tc.in == nil {
				return
			}
			if diff := cmp.Diff(*tc.in, got); diff != "" {
				t.Errorf("(-put +got):\n%s", diff)
			}
		})
	}
}

// TestPayloadMalformed: a malformed payload is an error wrapping
// ErrPayload, never a panic.
func TestPayloadMalformed(t *testing.T) {
	var c Ctx
	c.reset(0)
	Put(&c, tWait, 1)
	wait := c.out.encode(nil) // id, 8, 8 bytes
	c.reset(0)
	Put(&c, tMap, Timemap{CP: []uint32{1}, T: []float64{2}})
	tmap := c.out.encode(nil)
	c.reset(0)
	Put(&c, tMap, Timemap{CP: []uint32{1, 2, 3}, T: []float64{1, 2, 3}})
	tmap3 := c.out.encode(nil) // id, 27, then 9 bytes an entry
	twice, unordered := slices.Clone(tmap3), slices.Clone(tmap3)
	twice[2+9] = 1      // call path 1, 1, 3
	unordered[2+18] = 1 // call path 1, 2, 1
	tests := []struct {
		name string
		b    []byte
	}{
		{"truncated id", []byte{0x80}},
		{"no length", wait[:1]},
		{"length beyond the payload", wait[:len(wait)-1]},
		{"unknown field", []byte{0xff, 0xff, 0x03, 0}},
		{"field twice", append(append([]byte{}, wait...), wait...)},
		{"float of 7 bytes", append([]byte{wait[0], 7}, wait[2:9]...)},
		{"truncated timemap entry", append([]byte{tmap[0], tmap[1] - 1}, tmap[2:len(tmap)-1]...)},
		{"call path twice in a timemap", twice},
		{"timemap out of order", unordered},
		{"bool of 2", []byte{byte(tFlag.id), 1, 2}},
		{"uvarint with trailing bytes", []byte{byte(tCount.id), 2, 1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := c.in.decode(tc.b)
			if !errors.Is(err, ErrPayload) {
				t.Errorf("decode(% x) = %v, want an ErrPayload", tc.b, err)
			}
		})
	}
}

// TestPayloadNoAllocs: in steady state, putting, encoding, decoding and
// getting fields allocates nothing.
func TestPayloadNoAllocs(t *testing.T) {
	var snd, rcv Ctx
	m := Timemap{CP: []uint32{1, 2, 3}, T: []float64{1, 2, 3}}
	costs := []float64{1, 2, 3}
	var buf []byte
	round := func() {
		snd.reset(0)
		rcv.reset(0)
		Put(&snd, tWait, 1.5)
		Put(&snd, tSend, EventRef{Time: 1, Bytes: 8})
		Put(&snd, tMap, m)
		Put(&snd, tCosts, costs)
		buf = snd.out.encode(buf[:0])
		if err := rcv.in.decode(buf); err != nil {
			t.Fatal(err)
		}
		if v, ok := Get(&rcv, tWait); !ok || v != 1.5 {
			t.Fatalf("wait %v %v", v, ok)
		}
		if v, ok := Get(&rcv, tMap); !ok || v.Len() != 3 {
			t.Fatalf("map %v %v", v, ok)
		}
	}
	round()
	if n := testing.AllocsPerRun(100, round); n != 0 {
		t.Errorf("%v allocations per message, want 0", n)
	}
}

// FuzzPayload: decoding any bytes fails or succeeds, and never panics.
func FuzzPayload(f *testing.F) {
	var c Ctx
	c.reset(0)
	(&sample{Wait: 1, Map: Timemap{CP: []uint32{3}, T: []float64{4}}, Costs: []float64{5}, Count: 9}).put(&c)
	f.Add(c.out.encode(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Ctx
		r.reset(0)
		if err := r.in.decode(b); err != nil && !errors.Is(err, ErrPayload) {
			t.Errorf("error %v does not wrap ErrPayload", err)
		}
	})
}

// TestTimemapSortLookup: Sort orders a Timemap's entries, short (the
// insertion sort) and long, adding up the times of a call path there
// twice, and Lookup finds each key's time, 0 where the map has none.
func TestTimemapSortLookup(t *testing.T) {
	for _, n := range []int{0, 1, 5, 32, 33, 300} {
		for _, twice := range []bool{false, true} {
			t.Run(fmt.Sprint(n, twice), func(t *testing.T) { testTimemapSortLookup(t, n, twice) })
		}
	}
}

func testTimemapSortLookup(t *testing.T, n int, twice bool) {
	var m Timemap
	want := map[uint32]float64{}
	for k := range n {
		cp := uint32((k*7919 + 13) % 1009) // distinct, unordered
		m.Append(cp, float64(k)+0.5)
		want[cp] += float64(k) + 0.5
		if twice && k%3 == 0 {
			m.Append(cp, 0.25)
			want[cp] += 0.25
		}
	}
	m.Sort()
	if !slices.IsSorted(m.CP) || len(m.CP) != len(want) || len(m.T) != len(want) {
		t.Fatalf("%d entries, sorted %v; want %d sorted: %v", len(m.CP), slices.IsSorted(m.CP), len(want), m.CP)
	}
	keys := make([]uint32, 0, 1009)
	for cp := range uint32(1009) {
		keys = append(keys, cp)
	}
	got := make([]float64, len(keys))
	m.Lookup(keys, got)
	for i, cp := range keys {
		if got[i] != want[cp] {
			t.Errorf("call path %d: %v, want %v", cp, got[i], want[cp])
		}
	}
}
