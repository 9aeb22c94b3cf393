package patterns

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestTimeProfileBins checks how the time profile spreads intervals over
// its bins, takes waits from the activity they occur in, and widens its
// bins when an interval ends beyond the last.
func TestTimeProfileBins(t *testing.T) {
	type interval struct {
		a      Activity
		t0, t1 float64
		wait   bool // a wait taken from a
	}
	bins := func(n int, set map[int]Activities) []Activities {
		b := make([]Activities, n)
		for k, v := range set {
			b[k] = v
		}
		return b
	}
	tests := []struct {
		name      string
		add       []interval
		wantWidth float64
		want      []Activities
	}{
		{"within one bin", []interval{{ActMPI, 0.25, 0.75, false}}, 1, bins(1, map[int]Activities{0: {ActMPI: 0.5}})},
		{"across bins", []interval{{ActComputation, 0.5, 3.25, false}}, 1,
			bins(4, map[int]Activities{0: {0.5}, 1: {1}, 2: {1}, 3: {0.25}})},
		{"up to a bin's end", []interval{{ActComputation, 1, 2, false}}, 1, bins(2, map[int]Activities{1: {1}})},
		{"before time 0", []interval{{ActComputation, -2, 0.5, false}}, 1, bins(1, map[int]Activities{0: {0.5}})},
		{"empty and reversed", []interval{{ActComputation, 3, 3, false}, {ActMPI, 5, 4, false}}, 1, nil},
		{"a wait", []interval{{ActMPI, 1, 4, false}, {ActMPI, 1.5, 2.5, true}}, 1,
			bins(4, map[int]Activities{1: {ActMPI: 0.5, ActWaiting: 0.5}, 2: {ActMPI: 0.5, ActWaiting: 0.5}, 3: {ActMPI: 1}})},
		// a wait a rounding longer than its call: MPI −5.6e-17, made 0
		{"a wait's rounding", []interval{{ActMPI, 0.1, 0.3, false}, {ActMPI, 0.1, 0.30000000000000004, true}}, 1,
			bins(1, map[int]Activities{0: {ActWaiting: 0.2}})},
		{"the last bin", []interval{{ActComputation, 126.5, 128, false}}, 1,
			bins(128, map[int]Activities{126: {0.5}, 127: {1}})},
		{"beyond the last bin: twice as wide", []interval{{ActComputation, 0, 1, false}, {ActMPI, 127.5, 130, false}}, 2,
			bins(65, map[int]Activities{0: {1}, 63: {0, 0.5}, 64: {0, 2}})},
		{"far beyond: 2^10 as wide", []interval{{ActComputation, 0, 3, false}, {ActWaiting, 100000, 100001, false}}, 1024,
			bins(98, map[int]Activities{0: {3}, 97: {ActWaiting: 1}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := &TimeProfile{Width: 1}
			for _, iv := range tt.add {
				if iv.wait {
					tp.wait(iv.a, iv.t0, iv.t1)
				} else {
					tp.add(iv.a, iv.t0, iv.t1, 1)
				}
			}
			if tp.Width != tt.wantWidth {
				t.Errorf("width %v, want %v", tp.Width, tt.wantWidth)
			}
			got := tp.Result()
			if d := cmp.Diff(tt.want, got, cmpopts.EquateEmpty(), cmpopts.EquateApprox(0, 1e-12)); d != "" {
				t.Errorf("bins (-want +got):\n%s", d)
			}
			for k, b := range got {
				for a, v := range b {
					if v < 0 {
						t.Errorf("bin %d: %v is %g", k, Activity(a), v)
					}
				}
			}
		})
	}
}

// TestTimeProfileWidth checks the first bin width: 1, 2 or 5 times a
// power of ten, the smallest that holds the trace in TimeProfileBins.
func TestTimeProfileWidth(t *testing.T) {
	tests := []struct {
		res, length uint64
		want        float64
	}{
		{1e9, 10.3e9, 0.1},    // 10.3 s: 0.0805 s per bin at least
		{1e9, 128e9, 1},       // 128 s: exactly 1
		{1e9, 129e9, 2},       // a little more
		{1e9, 500e9, 5},       // 3.9 s per bin at least
		{1e6, 1, 1e-8},        // 1 µs
		{1000, 0, 1e-3},       // no length
		{0, 1000, 1e-3},       // no resolution
		{2.5e9, 12.8e9, 0.05}, // 5.12 s
	}
	for _, tt := range tests {
		got := TimeProfileWidth(tt.res, tt.length, TimeProfileBins)
		if d := got/tt.want - 1; d > 1e-12 || d < -1e-12 {
			t.Errorf("TimeProfileWidth(%d, %d, %d) = %v, want %v", tt.res, tt.length, TimeProfileBins, got, tt.want)
		}
		if tt.res > 0 && float64(tt.length)/float64(tt.res) > got*TimeProfileBins*(1+1e-12) {
			t.Errorf("TimeProfileWidth(%d, %d, %d) = %v: the trace does not fit", tt.res, tt.length, TimeProfileBins, got)
		}
	}
}

func TestTimeProfileBinsFor(t *testing.T) {
	for _, tt := range []struct{ n, want int }{
		{1, 128}, {2048, 128}, {2049, 64}, {4096, 64}, {16384, 16}, {65536, 16}, {1 << 20, 16},
	} {
		if got := TimeProfileBinsFor(tt.n); got != tt.want {
			t.Errorf("TimeProfileBinsFor(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
	// fewer bins: the width grows with them
	if w := TimeProfileWidth(1e9, 10e9, 16); w != 1 {
		t.Errorf("TimeProfileWidth(1e9, 10e9, 16) = %v, want 1", w)
	}
}

// TestWidenBins merges bins by powers of two, also by more than there
// are.
func TestWidenBins(t *testing.T) {
	in := func() []Activities { return []Activities{{1}, {2}, {3}, {4}, {5}} }
	tests := []struct {
		f    float64
		want []Activities
	}{
		{1, in()},
		{2, []Activities{{3}, {7}, {5}}},
		{4, []Activities{{10}, {5}}},
		{8, []Activities{{15}}},
		{1 << 40, []Activities{{15}}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, WidenBins(in(), tt.f)); d != "" {
			t.Errorf("WidenBins(·, %v) (-want +got):\n%s", tt.f, d)
		}
	}
}
