package patterns

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReceiveTimes checks the pairing of a receiver's times with the
// sends to it: per communicator and tag in order, whatever the order
// between keys on either side.
func TestReceiveTimes(t *testing.T) {
	type rec struct {
		key msgKey
		t   float64
	}
	a, b, c := msgKey{0, 1}, msgKey{0, 2}, msgKey{1, 1}
	tests := []struct {
		name      string
		received  []rec
		sends     []msgKey
		want      []float64
		wantShort int
	}{
		{"none", nil, nil, []float64{}, -1},
		{"one key", []rec{{a, 1}, {a, 2}, {a, 3}}, []msgKey{a, a, a}, []float64{1, 2, 3}, -1},
		{"keys received in another order",
			[]rec{{b, 10}, {a, 1}, {c, 100}, {a, 2}, {b, 20}},
			[]msgKey{a, a, b, c, b}, []float64{1, 2, 10, 100, 20}, -1},
		{"more times than sends", []rec{{a, 1}, {b, 2}, {a, 3}}, []msgKey{b, a}, []float64{2, 1}, -1},
		{"a send without its time", []rec{{a, 1}, {b, 2}}, []msgKey{a, b, b}, nil, 2},
		{"a key never received", []rec{{a, 1}}, []msgKey{a, c}, nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var data []byte
			for _, r := range tc.received {
				data = binary.LittleEndian.AppendUint32(data, r.key.comm)
				data = binary.LittleEndian.AppendUint32(data, r.key.tag)
				data = binary.LittleEndian.AppendUint64(data, math.Float64bits(r.t))
			}
			got, short, err := receiveTimes(data, tc.sends)
			if err != nil {
				t.Fatal(err)
			}
			if short != tc.wantShort {
				t.Errorf("short = %d, want %d", short, tc.wantShort)
			}
			if d := cmp.Diff(tc.want, got); short < 0 && d != "" {
				t.Errorf("times (-want +got):\n%s", d)
			}
		})
	}
	if _, _, err := receiveTimes(make([]byte, 20), []msgKey{a}); err == nil {
		t.Error("no error for 20 bytes")
	}
}
