package offheap

import (
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type row struct {
	A, B uint32
	T    float64
}

// TestMake: tables of MinBytes or more are mappings that hold what is
// written to them up to their capacity; trimming keeps the values and
// gives back the pages past the length; Release and Free unmap.
func TestMake(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mappings of their own only on Linux")
	}
	tests := []struct {
		name      string
		capacity  int
		length    int
		mapped    bool
		wantBytes int // after Trim
	}{
		{"too small for a mapping", MinBytes/16 - 1, 10, false, 0},
		{"one MiB, half used", MinBytes / 16, MinBytes / 32, true, MinBytes / 2},
		{"huge pages, a few used", 8 << 20 / 16, 1000, true, 16384},
		{"empty", 4 << 20 / 16, 0, true, pageSize},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p Pages
			s := Make[row](&p, tc.capacity)
			if (s != nil) != tc.mapped {
				t.Fatalf("mapped %v, want %v", s != nil, tc.mapped)
			}
			if s == nil {
				return
			}
			if len(s) != 0 || cap(s) != tc.capacity || !Owns(&p, s) {
				t.Fatalf("len %d cap %d owned %v, want 0, %d, true", len(s), cap(s), Owns(&p, s), tc.capacity)
			}
			full := s[:cap(s)]
			for i := range full {
				full[i] = row{uint32(i), uint32(i) * 3, float64(i) / 7}
			}
			want := append([]row{}, full[:tc.length]...)
			s = Trim(&p, full[:tc.length])
			if diff := cmp.Diff(want, s); diff != "" {
				t.Errorf("values after Trim (-want +got):\n%s", diff)
			}
			if p.Bytes() != tc.wantBytes {
				t.Errorf("%d bytes mapped after Trim, want %d", p.Bytes(), tc.wantBytes)
			}
			if cap(s) < len(s) || cap(s)*16 > tc.wantBytes {
				t.Errorf("capacity %d after Trim of %d bytes", cap(s), tc.wantBytes)
			}
			other := Make[row](&p, tc.capacity)
			Release(&p, s)
			if Owns(&p, s) || !Owns(&p, other) {
				t.Errorf("after Release: owns released %v, other %v", Owns(&p, s), Owns(&p, other))
			}
			Release(&p, []row{{}}) // not a mapping: ignored
			p.Free()
			if p.Bytes() != 0 || Owns(&p, other) {
				t.Errorf("after Free: %d bytes, owns %v", p.Bytes(), Owns(&p, other))
			}
		})
	}
}

// TestMakeOrFit: MakeOr maps a large table and puts a small one, or any
// table without Pages, on the heap; Fit trims a mapping and copies a
// heap table with room to spare; without Pages every function is safe
// and leaves the heap to the caller.
func TestMakeOrFit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mappings of their own only on Linux")
	}
	large := 4 << 20 / 16
	tests := []struct {
		name     string
		pages    bool
		capacity int
		mapped   bool
	}{
		{"large, with pages", true, large, true},
		{"small, with pages", true, 100, false},
		{"large, without pages", false, large, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p *Pages
			if tc.pages {
				p = new(Pages)
				defer p.Free()
			}
			s := MakeOr[row](p, tc.capacity)
			if len(s) != 0 || cap(s) != tc.capacity {
				t.Fatalf("len %d, cap %d, want 0, %d", len(s), cap(s), tc.capacity)
			}
			if got := Owns(p, s); got != tc.mapped {
				t.Fatalf("Owns = %v, want %v", got, tc.mapped)
			}
			for i := range 10 {
				s = append(s, row{A: uint32(i)})
			}
			f := Fit(p, s)
			if d := cmp.Diff(s[:10], f); d != "" {
				t.Errorf("Fit changed the values (-want +got):\n%s", d)
			}
			if tc.mapped {
				if want := pageSize / 16; cap(f) != want {
					t.Errorf("Fit of a mapping: cap %d, want %d (a page)", cap(f), want)
				}
			} else if cap(f) != len(f) {
				t.Errorf("Fit of a heap table: cap %d, want %d", cap(f), len(f))
			}
			Release(p, f) // (a heap table: nothing to do)
			if tc.mapped && p.Bytes() != 0 {
				t.Errorf("%d bytes mapped after Release", p.Bytes())
			}
		})
	}
	if got := Trim[row](nil, make([]row, 1, 8)); cap(got) != 8 {
		t.Errorf("Trim without pages changed the capacity to %d", cap(got))
	}
	if Make[row](nil, large) != nil {
		t.Error("Make without pages mapped")
	}
}
