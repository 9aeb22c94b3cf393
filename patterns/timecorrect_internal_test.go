package patterns

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"scout/internal/intern"
)

// TestReceiveTimes checks the pairing of a receiver's times with the
// sends to it: packed per sender and channel, taken per communicator and
// tag in order, whatever the order between keys on either side.
func TestReceiveTimes(t *testing.T) {
	type rec struct {
		src int
		key msgKey
		t   float64
	}
	a, b, c := msgKey{0, 1}, msgKey{0, 2}, msgKey{1, 1}
	tests := []struct {
		name     string
		received []rec
		sends    map[int][]msgKey // by sender: its sends, in order
		want     map[int][]float64
		short    map[int]int // by sender: its first send without a time
	}{
		{"none", nil, nil, nil, nil},
		{"one key", []rec{{0, a, 1}, {0, a, 2}, {0, a, 3}}, map[int][]msgKey{0: {a, a, a}}, map[int][]float64{0: {1, 2, 3}}, nil},
		{"keys received in another order",
			[]rec{{0, b, 10}, {0, a, 1}, {0, c, 100}, {0, a, 2}, {0, b, 20}},
			map[int][]msgKey{0: {a, a, b, c, b}}, map[int][]float64{0: {1, 2, 10, 100, 20}}, nil},
		{"two senders, the same keys",
			[]rec{{1, a, 5}, {0, a, 1}, {1, b, 6}, {0, a, 2}, {1, a, 7}},
			map[int][]msgKey{0: {a, a}, 1: {b, a, a}}, map[int][]float64{0: {1, 2}, 1: {6, 5, 7}}, nil},
		{"more times than sends", []rec{{0, a, 1}, {0, b, 2}, {0, a, 3}}, map[int][]msgKey{0: {b, a}}, map[int][]float64{0: {2, 1}}, nil},
		{"a send without its time", []rec{{0, a, 1}, {0, b, 2}}, map[int][]msgKey{0: {a, b, b}}, nil, map[int]int{0: 2}},
		{"a key never received", []rec{{0, a, 1}}, map[int][]msgKey{0: {a, c}}, nil, map[int]int{0: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var srcs intern.Table[int]
			var chans intern.Table[srcChan]
			chOf := make([]uint32, len(tc.received))
			for j, r := range tc.received {
				chOf[j] = chans.Index(srcChan{srcs.Index(r.src), r.key})
			}
			out := packTimes(chOf, chans.Values, srcs.Len(), func(j int) float64 { return tc.received[j].t })
			got, short := map[int][]float64{}, map[int]int{}
			for s, data := range out {
				q, err := readTimes(data)
				if err != nil {
					t.Fatalf("sender %d: %v", srcs.Values[s], err)
				}
				src := srcs.Values[s]
				for j, key := range tc.sends[src] {
					v, ok := q.take(key)
					if !ok {
						short[src] = j
						break
					}
					got[src] = append(got[src], v)
				}
			}
			if len(tc.short) > 0 {
				if d := cmp.Diff(tc.short, short); d != "" {
					t.Errorf("first send without a time, by sender (-want +got):\n%s", d)
				}
				return
			}
			if d := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); d != "" || len(short) > 0 {
				t.Errorf("times by sender (-want +got):\n%s; short %v", d, short)
			}
		})
	}
}

// TestReadTimesMalformed: receive times that do not parse are an error.
func TestReadTimesMalformed(t *testing.T) {
	header := func(comm, tag, n uint32) []byte {
		b := binary.LittleEndian.AppendUint32(nil, comm)
		b = binary.LittleEndian.AppendUint32(b, tag)
		return binary.LittleEndian.AppendUint32(b, n)
	}
	ok := append(header(0, 1, 1), make([]byte, 8)...)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"header cut short", ok[:8]},
		{"times cut short", ok[:19]},
		{"trailing bytes", append(slices.Clone(ok), 1, 2)},
		{"huge count", header(0, 1, 1<<31)},
		{"a channel twice", append(slices.Clone(ok), ok...)},
	} {
		if _, err := readTimes(tc.data); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if _, err := readTimes(ok); err != nil {
		t.Errorf("well-formed: %v", err)
	}
}
