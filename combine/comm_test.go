package combine

import (
	"bytes"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/patterns"
)

// pair is a CommPair of n messages of b bytes each, and s of 0 bytes.
func pair(from, to int32, n, b, s uint64) CommPair {
	return CommPair{From: from, To: to, Messages: n, Bytes: n * b, Syncs: s}
}

func TestCommAdd(t *testing.T) {
	tests := []struct {
		name string
		a, b *CommStats
		want *CommStats
	}{
		{"nil", &CommStats{Pairs: []CommPair{pair(0, 1, 1, 4, 0)}, Sizes: []uint64{0, 0, 0, 1}}, nil,
			&CommStats{Pairs: []CommPair{pair(0, 1, 1, 4, 0)}, Sizes: []uint64{0, 0, 0, 1}}},
		{"into empty", &CommStats{}, &CommStats{Pairs: []CommPair{pair(2, 0, 1, 4, 1)}, Sizes: []uint64{1, 0, 0, 1}},
			&CommStats{Pairs: []CommPair{pair(2, 0, 1, 4, 1)}, Sizes: []uint64{1, 0, 0, 1}}},
		{"in rank order", &CommStats{Pairs: []CommPair{pair(0, 1, 1, 4, 0), pair(0, 3, 2, 4, 0)}, Sizes: []uint64{0, 0, 0, 3}},
			&CommStats{Pairs: []CommPair{pair(1, 0, 1, 8, 0)}, Sizes: []uint64{0, 0, 0, 0, 1}},
			&CommStats{Pairs: []CommPair{pair(0, 1, 1, 4, 0), pair(0, 3, 2, 4, 0), pair(1, 0, 1, 8, 0)}, Sizes: []uint64{0, 0, 0, 3, 1}}},
		{"interleaved", &CommStats{Pairs: []CommPair{pair(0, 1, 1, 4, 0), pair(2, 1, 1, 4, 0)}, Sizes: []uint64{0, 0, 0, 2}},
			&CommStats{Pairs: []CommPair{pair(0, 2, 1, 1, 0), pair(1, 0, 0, 0, 2), pair(3, 0, 1, 1, 0)}, Sizes: []uint64{2, 2}},
			&CommStats{Pairs: []CommPair{pair(0, 1, 1, 4, 0), pair(0, 2, 1, 1, 0), pair(1, 0, 0, 0, 2), pair(2, 1, 1, 4, 0), pair(3, 0, 1, 1, 0)},
				Sizes: []uint64{2, 2, 0, 2}}},
		{"same pairs", &CommStats{Pairs: []CommPair{pair(0, 1, 1, 4, 0), pair(1, 0, 2, 4, 1)}, Sizes: []uint64{1, 0, 0, 3}},
			&CommStats{Pairs: []CommPair{pair(0, 1, 3, 4, 2), pair(1, 2, 1, 4, 0)}, Sizes: []uint64{2, 0, 0, 4}},
			&CommStats{Pairs: []CommPair{pair(0, 1, 4, 4, 2), pair(1, 0, 2, 4, 1), pair(1, 2, 1, 4, 0)}, Sizes: []uint64{3, 0, 0, 7}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before *CommStats
			if tc.b != nil {
				before = &CommStats{Pairs: append([]CommPair{}, tc.b.Pairs...), Sizes: append([]uint64{}, tc.b.Sizes...)}
			}
			tc.a.Add(tc.b)
			if d := cmp.Diff(tc.want, tc.a); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if tc.b != nil {
				if d := cmp.Diff(before, tc.b); d != "" {
					t.Errorf("Add changed its argument (-before +after):\n%s", d)
				}
			}
		})
	}
}

// TestCommAddOrder: adding the locations in any order gives the same
// sums.
func TestCommAddOrder(t *testing.T) {
	parts := []*CommStats{
		{Pairs: []CommPair{pair(0, 1, 1, 4, 0), pair(0, 2, 1, 4, 0)}, Sizes: []uint64{0, 0, 0, 2}},
		{Pairs: []CommPair{pair(1, 0, 1, 1024, 1)}, Sizes: []uint64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
		{Pairs: []CommPair{pair(2, 1, 5, 4, 0)}, Sizes: []uint64{0, 0, 0, 5}},
		{},
	}
	want := &CommStats{}
	for _, p := range parts {
		want.Add(p)
	}
	for _, order := range [][]int{{3, 2, 1, 0}, {1, 3, 0, 2}, {2, 0, 3, 1}} {
		got := &CommStats{}
		for _, i := range order {
			got.Add(parts[i])
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("order %v (-want +got):\n%s", order, d)
		}
	}
}

func TestCommViews(t *testing.T) {
	c := &CommStats{
		Pairs: []CommPair{pair(0, 1, 2, 4, 0), pair(0, 3, 1, 8, 1), pair(2, 0, 1, 4, 0), pair(3, 2, 0, 0, 3)},
		Sizes: []uint64{4, 0, 0, 3, 1},
	}
	if got := c.Ranks(); got != 4 {
		t.Errorf("Ranks = %d, want 4", got)
	}
	wantTotals := []CommTotal{
		{Sent: CommVolume{3, 16, 1}, Received: CommVolume{1, 4, 0}},
		{Received: CommVolume{2, 8, 0}},
		{Sent: CommVolume{1, 4, 0}, Received: CommVolume{0, 0, 3}},
		{Sent: CommVolume{0, 0, 3}, Received: CommVolume{1, 8, 1}},
		{},
	}
	if d := cmp.Diff(wantTotals, c.Totals(5)); d != "" {
		t.Errorf("Totals (-want +got):\n%s", d)
	}
	if d := cmp.Diff(wantTotals[:2], c.Totals(2)); d != "" {
		t.Errorf("Totals(2) (-want +got):\n%s", d)
	}
	if d := cmp.Diff(CommVolume{4, 20, 4}, c.Total()); d != "" {
		t.Errorf("Total (-want +got):\n%s", d)
	}
	rows := []struct {
		from int32
		want []CommPair
	}{
		{0, c.Pairs[:2]}, {1, nil}, {2, c.Pairs[2:3]}, {3, c.Pairs[3:]}, {4, nil}, {-1, nil},
	}
	for _, r := range rows {
		if d := cmp.Diff(r.want, c.Row(r.from)); d != "" {
			t.Errorf("Row(%d) (-want +got):\n%s", r.from, d)
		}
	}
	coarse := []struct {
		size int
		want *CommStats
	}{
		{1, c},
		{2, &CommStats{Pairs: []CommPair{pair(0, 0, 2, 4, 0), pair(0, 1, 1, 8, 1), pair(1, 0, 1, 4, 0), pair(1, 1, 0, 0, 3)}, Sizes: c.Sizes}},
		{3, &CommStats{Pairs: []CommPair{{From: 0, To: 0, Messages: 3, Bytes: 12}, pair(0, 1, 1, 8, 1), pair(1, 0, 0, 0, 3)}, Sizes: c.Sizes}},
		{4, &CommStats{Pairs: []CommPair{{From: 0, To: 0, Messages: 4, Bytes: 20, Syncs: 4}}, Sizes: c.Sizes}},
	}
	for _, tc := range coarse {
		if d := cmp.Diff(tc.want, c.Coarsen(tc.size)); d != "" {
			t.Errorf("Coarsen(%d) (-want +got):\n%s", tc.size, d)
		}
	}
}

// TestCommNil: a report without traffic (read from a CUBE file) has a
// nil Comm, which every view and writer accepts.
func TestCommNil(t *testing.T) {
	var c *CommStats
	if c.Ranks() != 0 || c.Row(0) != nil || c.Total() != (CommVolume{}) || c.Coarsen(4) != nil {
		t.Error("a nil CommStats has traffic")
	}
	if d := cmp.Diff(make([]CommTotal, 3), c.Totals(3)); d != "" {
		t.Errorf("Totals (-want +got):\n%s", d)
	}
	var b bytes.Buffer
	if err := WriteCommCSV(&b, c); err != nil || b.String() != "from,to,messages,bytes,syncs\n" {
		t.Errorf("WriteCommCSV: %q, %v", b.String(), err)
	}
	b.Reset()
	if err := WriteSizeCSV(&b, c); err != nil || b.String() != "min_bytes,max_bytes,messages\n" {
		t.Errorf("WriteSizeCSV: %q, %v", b.String(), err)
	}
}

func TestSizeBins(t *testing.T) {
	tests := []struct {
		bytes uint64
		bin   int
	}{
		{0, 0}, {1, 1}, {2, 2}, {3, 2}, {4, 3}, {7, 3}, {8, 4}, {1023, 10}, {1024, 11}, {1 << 63, 64}, {math.MaxUint64, 64},
	}
	for _, tc := range tests {
		k := patterns.CommSizeBin(tc.bytes)
		if k != tc.bin {
			t.Errorf("CommSizeBin(%d) = %d, want %d", tc.bytes, k, tc.bin)
		}
		if lo, hi := SizeRange(k); tc.bytes < lo || tc.bytes > hi {
			t.Errorf("SizeRange(%d) = %d..%d, without %d", k, lo, hi, tc.bytes)
		}
	}
	// the bins tile the sizes
	for k := 1; k <= 64; k++ {
		_, prev := SizeRange(k - 1)
		lo, hi := SizeRange(k)
		if lo != prev+1 || hi < lo || patterns.CommSizeBin(lo) != k || patterns.CommSizeBin(hi) != k {
			t.Errorf("bin %d: %d..%d after %d", k, lo, hi, prev)
		}
	}
}

func TestCommCSV(t *testing.T) {
	c := &CommStats{
		Pairs: []CommPair{pair(0, 1, 2, 4, 0), pair(0, 65535, 1, 1<<20, 1), pair(7, 0, 0, 0, 3)},
		Sizes: make([]uint64, 22),
	}
	c.Sizes[0], c.Sizes[3], c.Sizes[21] = 4, 2, 1 // 0 B, 4 B, 1 MiB
	var b bytes.Buffer
	if err := WriteCommCSV(&b, c); err != nil {
		t.Fatal(err)
	}
	want := "from,to,messages,bytes,syncs\n0,1,2,8,0\n0,65535,1,1048576,1\n7,0,0,0,3\n"
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("WriteCommCSV (-want +got):\n%s", d)
	}
	b.Reset()
	if err := WriteSizeCSV(&b, c); err != nil {
		t.Fatal(err)
	}
	want = "min_bytes,max_bytes,messages\n0,0,4\n1,1,0\n2,3,0\n4,7,2\n8,15,0\n16,31,0\n32,63,0\n64,127,0\n128,255,0\n" +
		"256,511,0\n512,1023,0\n1024,2047,0\n2048,4095,0\n4096,8191,0\n8192,16383,0\n16384,32767,0\n32768,65535,0\n" +
		"65536,131071,0\n131072,262143,0\n262144,524287,0\n524288,1048575,0\n1048576,2097151,1\n"
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("WriteSizeCSV (-want +got):\n%s", d)
	}
}
