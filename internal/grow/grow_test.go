package grow

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRoom: a table filled at an even rate is allocated about once; one
// whose share of the first steps misleads still grows at least twofold.
func TestRoom(t *testing.T) {
	tests := []struct {
		name      string
		total     int
		every     int // a value at every every-th step
		from      int // no value before this step
		maxAllocs int
	}{
		{"even rate", 1 << 20, 4, 0, 8},
		{"late start", 1 << 20, 4, 1 << 19, 12},
		{"every step", 100000, 1, 0, 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s []int32
			var want []int32
			allocs := 0
			for i := range tc.total {
				if i < tc.from || i%tc.every != 0 {
					continue
				}
				if len(s) == cap(s) {
					allocs++
				}
				s = append(Room(s, i, tc.total), int32(i))
				want = append(want, int32(i))
			}
			if diff := cmp.Diff(want, s); diff != "" {
				t.Fatalf("values (-want +got):\n%s", diff)
			}
			if allocs > tc.maxAllocs {
				t.Errorf("%d allocations, want at most %d", allocs, tc.maxAllocs)
			}
			if limit := len(s) + len(s)/8 + 16; cap(s) > limit && tc.from == 0 {
				t.Errorf("capacity %d for %d values, want at most %d", cap(s), len(s), limit)
			}
		})
	}
}
