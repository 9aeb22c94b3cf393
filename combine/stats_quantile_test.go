package combine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/patterns"
)

// uniform returns n observations spread evenly over [0, b]: the
// midpoints of n equal cells.
func uniform(n int, b float64) []float64 {
	obs := make([]float64, n)
	for j := range obs {
		obs[j] = (float64(j) + 0.5) / float64(n) * b
	}
	return obs
}

// estimate returns the density estimate of obs on the scale of bound b.
func estimate(obs []float64, b float64) densityEstimate {
	var d densityEstimate
	for _, v := range obs {
		d.add(v, 1/b)
	}
	return d
}

// TestDensityQuartiles checks the quantile estimate where the answer is
// known in closed form, to within one integration cell (1e-4 of the
// bound): an even spread, whose series keeps two terms and whose density
// is then constant, and one observation in the middle of the bound, whose
// estimated density is symmetric about it. want holds NaN for a quantile
// without closed form.
func TestDensityQuartiles(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name  string
		obs   []float64
		bound float64
		want  [3]float64 // 25 %, 50 %, 75 %
	}{
		{"uniform on [0,1]", uniform(1000, 1), 1, [3]float64{0.25, 0.5, 0.75}},
		{"uniform on [0,4ms]", uniform(1000, 0.004), 0.004, [3]float64{0.001, 0.002, 0.003}},
		{"uniform, 6 observations", uniform(6, 0.02), 0.02, [3]float64{0.005, 0.01, 0.015}},
		{"one observation in the middle", []float64{0.5}, 1, [3]float64{nan, 0.5, nan}},
		{"one observation in the middle, 10ms", []float64{0.005}, 0.01, [3]float64{nan, 0.005, nan}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := estimate(tc.obs, tc.bound)
			q25, q50, q75 := d.quartiles(1 / tc.bound)
			got := [3]float64{q25, q50, q75}
			cell := tc.bound / densityCells
			for i, w := range tc.want {
				if !math.IsNaN(w) && math.Abs(got[i]-w) > cell*1.000001 {
					t.Errorf("quantile %d = %.10g, want %.10g ± %.3g", i, got[i], w, cell)
				}
			}
			if !(q25 <= q50 && q50 <= q75) {
				t.Errorf("quartiles not ordered: %v", got)
			}
			if len(tc.obs) == 1 && math.Abs((q25+q75)/2-q50) > cell*1.000001 {
				t.Errorf("one observation: quartiles %.10g, %.10g not symmetric about %.10g", q25, q75, q50)
			}
		})
	}
}

// TestDensityReferenceValues checks values the reference analyzer printed
// for a single observation (testdata/traces-hybrid/
// omp_barrier_imbalance_np2t2: Wait at Barrier and Barrier Completion,
// scaled by the longest barrier, 0.0010319705 s): its estimate is not the
// observation.
func TestDensityReferenceValues(t *testing.T) {
	tests := []struct {
		obs, bound float64
		want       string // median, as trace.stat prints it
	}{
		{0.0010142594, 0.0010319705, "0.0010142"},
		{0.0000015773, 0.0010319705, "0.0000017"},
	}
	for _, tc := range tests {
		d := estimate([]float64{tc.obs}, tc.bound)
		_, q50, _ := d.quartiles(1 / tc.bound)
		if got := fmt.Sprintf("%1.7f", q50); got != tc.want {
			t.Errorf("median of %v (bound %v) = %s, want %s", tc.obs, tc.bound, got, tc.want)
		}
	}
}

// TestDensityTerms checks the truncation of the series: all terms for at
// most 5 observations; for an even spread, whose higher coefficients
// vanish, two; for observations that are all equal, up to the last term
// that does not vanish there (odd Legendre polynomials vanish in the
// middle of the interval, P_k(1) = 1 for every k).
func TestDensityTerms(t *testing.T) {
	tests := []struct {
		name string
		obs  []float64
		want int
	}{
		{"one observation", []float64{0.3}, densityTerms},
		{"five observations", uniform(5, 1), densityTerms},
		{"uniform", uniform(1000, 1), 2},
		{"six at the bound", slices.Repeat([]float64{1}, 6), densityTerms},
		{"six in the middle", slices.Repeat([]float64{0.5}, 6), densityTerms - 1},
	}
	for _, tc := range tests {
		d := estimate(tc.obs, 1)
		if got := d.terms(); got != tc.want {
			t.Errorf("%s: %d terms, want %d", tc.name, got, tc.want)
		}
	}
}

// TestShiftedLegendre compares the recurrence with the closed forms of
// the first shifted Legendre polynomials.
func TestShiftedLegendre(t *testing.T) {
	closed := []func(x float64) float64{
		func(float64) float64 { return 1 },
		func(x float64) float64 { return 2*x - 1 },
		func(x float64) float64 { return 6*x*x - 6*x + 1 },
		func(x float64) float64 { return 20*x*x*x - 30*x*x + 12*x - 1 },
		func(x float64) float64 { return 70*x*x*x*x - 140*x*x*x + 90*x*x - 20*x + 1 },
	}
	p := make([]float64, len(closed))
	for _, x := range []float64{0, 0.1, 0.25, 0.5, 0.9, 1} {
		shiftedLegendre(p, x)
		for k, f := range closed {
			if math.Abs(p[k]-f(x)) > 1e-12 {
				t.Errorf("P_%d(%v) = %v, want %v", k, x, p[k], f(x))
			}
		}
	}
}

// TestDensityScaleAndMerge: the estimate depends on the observations
// relative to the bound only, and merging per-location estimates gives
// the estimate of all observations.
func TestDensityScaleAndMerge(t *testing.T) {
	obs := []float64{0.0012, 0.0031, 0.0007, 0.0029, 0.0044, 0.0018, 0.0035, 0.0002, 0.0025}
	const bound = 0.005
	all := estimate(obs, bound)
	a25, a50, a75 := all.quartiles(1 / bound)

	doubled := make([]float64, len(obs))
	for i, v := range obs {
		doubled[i] = 2 * v
	}
	d := estimate(doubled, 2*bound)
	if b25, b50, b75 := d.quartiles(1 / (2 * bound)); b25 != 2*a25 || b50 != 2*a50 || b75 != 2*a75 {
		t.Errorf("doubled: %v %v %v, want twice %v %v %v", b25, b50, b75, a25, a50, a75)
	}

	p1, p2, p3 := estimate(obs[:2], bound), estimate(obs[2:7], bound), estimate(obs[7:], bound)
	m := mergeEstimates([]*densityEstimate{&p1, &p2, &p3})
	if m.n != all.n {
		t.Fatalf("merged %v observations, want %v", m.n, all.n)
	}
	for k := range m.coef {
		if math.Abs(m.coef[k]-all.coef[k]) > 1e-9*(2*float64(k)+1) || math.Abs(m.sqrs[k]-all.sqrs[k]) > 1e-9*(2*float64(k)+1)*(2*float64(k)+1) {
			t.Fatalf("term %d: merged %v, %v, want %v, %v", k, m.coef[k], m.sqrs[k], all.coef[k], all.sqrs[k])
		}
	}
	if m25, m50, m75 := m.quartiles(1 / bound); m25 != a25 || m50 != a50 || m75 != a75 {
		t.Errorf("merged: %v %v %v, want %v %v %v", m25, m50, m75, a25, a50, a75)
	}
}

// TestStatsBound checks which bound Stats scales by: the report's
// (StatBounds), else the largest observation.
func TestStatsBound(t *testing.T) {
	ls := uint8(slices.Index(patterns.StatPatterns, "mpi_latesender"))
	p2p := patterns.CollKey{Seq: -1}
	waits := []patterns.Instance{
		{Pattern: ls, Enter: 0, Exit: 0.004, Duration: 0.003, Callpath: 1, Rank: 0, Coll: p2p},
		{Pattern: ls, Enter: 2, Exit: 2.002, Duration: 0.001, Callpath: 2, Rank: 1, Coll: p2p},
		{Pattern: ls, Enter: 3, Exit: 3.003, Duration: 0.002, Callpath: 3, Rank: 1, Coll: p2p},
	}
	bounds := make([]float64, len(patterns.StatPatterns))
	bounds[ls] = 0.01
	obs := []float64{0.003, 0.001, 0.002}
	for _, tc := range []struct {
		name   string
		bounds []float64
		bound  float64
	}{
		{"report's bounds", bounds, 0.01},
		{"largest observation", nil, 0.003},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := StatsOf([]StatSource{
				source(0, 0, tc.bounds, waits[:1]),
				source(1, 0, nil, waits[1:]),
			})
			if len(st) != 1 || st[0].Count != 3 || len(st[0].Severe) != 3 || math.Abs(st[0].Sum-0.006) > 1e-15 {
				t.Fatalf("stats %+v, want 3 observations, 3 severe instances", st)
			}
			want := estimate(obs, tc.bound)
			q25, q50, q75 := want.quartiles(1 / tc.bound)
			if s := st[0]; s.Quartile25 != q25 || s.Median != q50 || s.Q75 != q75 {
				t.Errorf("quartiles %v %v %v, want %v %v %v (bound %v)", s.Quartile25, s.Median, s.Q75, q25, q50, q75, tc.bound)
			}
		})
	}
}

// TestDensityAddAll: adding observations four at a time (addAll) gives
// the estimate of adding them one by one, bit for bit, whatever their
// number and order, and continues an estimate that holds some already.
func TestDensityAddAll(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	obs := make([]float64, 1003)
	for i := range obs {
		obs[i] = rnd.Float64() * 0.004
	}
	for _, tc := range []struct{ before, n int }{{0, 0}, {0, 1}, {0, 3}, {0, 4}, {0, 7}, {0, 8}, {2, 9}, {5, 1003 - 5}} {
		t.Run(fmt.Sprintf("%d+%d", tc.before, tc.n), func(t *testing.T) {
			var one, all densityEstimate
			for _, v := range obs[:tc.before] {
				one.add(v, 1/0.004)
				all.add(v, 1/0.004)
			}
			for _, v := range obs[tc.before : tc.before+tc.n] {
				one.add(v, 1/0.004)
			}
			all.addAll(obs[tc.before:tc.before+tc.n], 1/0.004)
			if d := cmp.Diff(one, all, cmp.AllowUnexported(densityEstimate{})); d != "" {
				t.Errorf("addAll differs from add (-add +addAll):\n%s", d)
			}
		})
	}
}
