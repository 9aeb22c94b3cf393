package combine

import (
	"bufio"
	"fmt"
	"io"

	"scout/patterns"
)

// maxSevere is how many of the most severe instances the statistics
// file lists per pattern (at most one per call path).
const maxSevere = 5

// PatternStats summarises the instances of one wait-state pattern.
type PatternStats struct {
	Pattern                     string
	Count                       int
	Mean, Median, Min, Max, Sum float64             // Median: estimated (densityEstimate)
	Variance, Quartile25, Q75   float64             // quartiles: estimated (densityEstimate)
	Severe                      []patterns.Instance // most severe, largest first
}

// Stats returns the statistics of every pattern with instances, in the
// order of patterns.StatPatterns (nil for a report without them, one read
// from a CUBE file). The analysis computes them (StatPart).
//
// Observations are the per-location wait times; the severe-instance list
// aggregates collective operations over their participants (summed wait,
// earliest begin, latest end, the rank that waited longest). The median
// and quartiles are estimated as the reference analyzer does (see
// densityEstimate), on the scale of the pattern's bound (see below): one
// estimate per rank, merged weighted by the ranks' shares of the
// observations (the reference keeps one per location and merges the
// threads' and then the ranks'; the results agree but for rounding).
func (r *Report) Stats() []PatternStats { return r.Statistics }

// The bound of a pattern's observations for the quantile estimate
// (StatBasis) is, as in the reference, the longest operation of
// the kind the pattern measures, over all locations, whether or not it
// waited: for Late Sender and its wrong-order part the longest region
// holding a receive (its Enter to its Leave), for Late Receiver the
// longest one holding a send, for Wait at Barrier and Barrier Completion
// the longest barrier, for Wait at N×N and N×N Completion the longest
// N-to-N collective, for Late Broadcast, Early Reduce and Early Scan the
// longest 1-to-N, N-to-1 and scan collective (each from its begin to its
// end event), for the OpenMP barrier waits the longest explicit or
// implicit barrier region, for lock contention the longest time from
// entering a lock's region (the critical section, the lock-API call) to
// acquiring the lock. The analysis finds them (patterns.Statistics.Bounds);
// a pattern without one is scaled by its largest observation.

// Parameters of the quantile estimate (densityEstimate).
const (
	// densityTerms is the number of Legendre polynomials the density
	// estimate keeps per observation set.
	densityTerms = 60
	// densityCells is the number of equal cells of [0, 1] over which the
	// estimated density is integrated (midpoint rule).
	densityCells = 10000
	// densityMinOpt is the number of observations above which the
	// estimate is truncated to its best number of terms.
	densityMinOpt = 5
)

// densityEstimate estimates the median and quartiles of a set of
// observations the way the reference analyzer does (both its MPI and its
// hybrid MPI+OpenMP build, for every pattern), without keeping the
// observations:
//
//   - Each observation v is scaled to x = v·s in [0, 1], where s is one over
//     the pattern's bound (StatBasis).
//   - The density of x is approximated by an orthogonal series of the
//     Legendre polynomials P_0 … P_59 shifted to [0, 1]: f(x) = Σ c_k P_k(x)
//     with c_k the mean of (2k+1)·P_k(x_j) over the observations x_j (the
//     projection of the empirical distribution onto the polynomials). Each
//     location keeps the running mean c_k and the running mean of the
//     squares ((2k+1)·P_k(x_j))², updated per observation as
//     m ← ((n−1)/n)·m + y/n.
//   - The estimates of all locations are merged into one by weighting each
//     location's means with its share n_l/N of the observations.
//   - With more than 5 observations the series is truncated: with
//     J(m) = Σ_{k≤m} (2·q_k − (N+1)·c_k²)/(N−1), q_k the mean of squares,
//     the estimate keeps the terms up to the last m ≥ 1 at which J(m)
//     fell below every earlier J (and two terms if J never falls below
//     J(0)). With 5 or fewer all 60 terms stay.
//   - f is integrated from 0 with the midpoint rule on 10000 equal cells:
//     a cell of negative mass opens a debt, which the following cells pay
//     off before the integral grows again (so that it is monotone); a
//     payment that more than settles the debt leaves the rest unused.
//     The 25 %, 50 % and 75 % quantiles are the midpoints of the first
//     cells at which the integral reaches 0.25, 0.5 and 0.75, scaled back
//     by 1/s; a quantile the integral never reaches is 0.
//
// The estimate therefore differs from the exact quantiles of the
// observations, by up to a cell (1e-4 of the bound) and more where the
// series approximates the density badly (few observations).
type densityEstimate struct {
	n          float64
	coef, sqrs [densityTerms]float64
}

// shiftedLegendre sets p[k] to P_k(x), the Legendre polynomial of degree k
// shifted from [-1, 1] to [0, 1], for k < len(p) (len(p) >= 2), by the
// three-term recurrence k·P_k = (2k−1)·t·P_{k−1} − (k−1)·P_{k−2}, t = 2x−1.
func shiftedLegendre(p []float64, x float64) {
	t := 2*x - 1
	p[0], p[1] = 1, t
	for k := 2; k < len(p); k++ {
		fk := float64(k)
		p[k] = ((2*fk-1)*t*p[k-1] - (fk-1)*p[k-2]) / fk
	}
}

// add adds observation v, scaled by s.
func (d *densityEstimate) add(v, s float64) {
	var y [densityTerms]float64
	shiftedLegendre(y[:], v*s)
	d.update(&y, v*s)
}

// update adds the observation x (scaled) whose Legendre values are y.
func (d *densityEstimate) update(y *[densityTerms]float64, x float64) {
	d.n++
	y[1] = 6*x - 3 // 3·P_1(x)
	for k := 2; k < densityTerms; k++ {
		y[k] *= 2*float64(k) + 1
	}
	keep := (d.n - 1) / d.n
	for k := range y {
		d.coef[k] = keep*d.coef[k] + y[k]/d.n
		d.sqrs[k] = keep*d.sqrs[k] + y[k]*y[k]/d.n
	}
}

// addAll adds the observations vs, scaled by s, in order; the estimate
// is the same, bit for bit, as after add of each. The Legendre
// recurrence is a chain of dependent divisions (most of add's time), so
// it runs for four observations at once, whose chains overlap.
func (d *densityEstimate) addAll(vs []float64, s float64) {
	var y [4][densityTerms]float64
	for len(vs) >= 4 {
		x0, x1, x2, x3 := vs[0]*s, vs[1]*s, vs[2]*s, vs[3]*s
		legendre4(&y, [4]float64{x0, x1, x2, x3})
		d.update(&y[0], x0)
		d.update(&y[1], x1)
		d.update(&y[2], x2)
		d.update(&y[3], x3)
		vs = vs[4:]
	}
	for _, v := range vs {
		d.add(v, s)
	}
}

// legendre4 is shiftedLegendre for four arguments at once, with the same
// operations for each.
func legendre4(p *[4][densityTerms]float64, x [4]float64) {
	t0, t1, t2, t3 := 2*x[0]-1, 2*x[1]-1, 2*x[2]-1, 2*x[3]-1
	p[0][0], p[0][1] = 1, t0
	p[1][0], p[1][1] = 1, t1
	p[2][0], p[2][1] = 1, t2
	p[3][0], p[3][1] = 1, t3
	for k := 2; k < densityTerms; k++ {
		fk := float64(k)
		a, b := 2*fk-1, fk-1
		p[0][k] = (a*t0*p[0][k-1] - b*p[0][k-2]) / fk
		p[1][k] = (a*t1*p[1][k-1] - b*p[1][k-2]) / fk
		p[2][k] = (a*t2*p[2][k-1] - b*p[2][k-2]) / fk
		p[3][k] = (a*t3*p[3][k-1] - b*p[3][k-2]) / fk
	}
}

// mergeEstimates merges the estimates of several locations into one.
func mergeEstimates(parts []*densityEstimate) densityEstimate {
	var n float64
	for _, p := range parts {
		n += p.n
	}
	var sum estimateSum
	for _, p := range parts {
		sum.add(p, n)
	}
	return sum.estimate(n)
}

// terms returns how many terms of the series the estimate uses.
func (d *densityEstimate) terms() int {
	if !(d.n > densityMinOpt) {
		return densityTerms
	}
	crit := func(k int) float64 {
		return (1 / (d.n - 1)) * (2*d.sqrs[k] - (d.n+1)*d.coef[k]*d.coef[k])
	}
	best := crit(0)
	j, last := best, 1
	for k := 1; k < densityTerms; k++ {
		j += crit(k)
		if j < best {
			best, last = j, k
		}
	}
	return last + 1
}

// quartiles returns the estimated 25 %, 50 % and 75 % quantiles of the
// observations, which were scaled by s.
func (d *densityEstimate) quartiles(s float64) (q25, q50, q75 float64) {
	p := make([]float64, d.terms())
	const dx = 1.0 / densityCells
	var (
		integral, debt float64
		q              [3]float64
		found          int
		levels         = [3]float64{0.25, 0.5, 0.75}
	)
	mid := 0.5 * dx
	for i := 0; found < len(levels) && i < densityCells; i, mid = i+1, mid+dx {
		shiftedLegendre(p, mid)
		f := 0.0
		for k, pk := range p {
			f += d.coef[k] * pk
		}
		switch mass := dx * f; {
		case mass < 0, !(debt >= 0):
			debt += mass
		default:
			integral += mass
		}
		for found < len(levels) && integral >= levels[found] {
			q[found] = mid
			found++
		}
	}
	return q[0] / s, q[1] / s, q[2] / s
}

// WriteStats writes the statistics file (trace.stat) in the reference
// analyzer's layout: a header, then per pattern a line of count, mean,
// median, minimum, maximum, sum (variance from 2 observations on,
// quartiles from 5), then its most severe instances with call path id,
// begin, end, wait time and rank.
func (r *Report) WriteStats(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "PatternName               Count      Mean    Median      Minimum      Maximum      Sum     Variance    Quartil25    Quartil75")
	for _, s := range r.Stats() {
		fmt.Fprintf(bw, "%-26s %9d %1.7f %1.7f %1.10f %1.10f %1.10f", s.Pattern, s.Count, s.Mean, s.Median, s.Min, s.Max, s.Sum)
		if s.Count >= 2 {
			fmt.Fprintf(bw, " %1.10f", s.Variance)
		}
		if s.Count >= 5 {
			fmt.Fprintf(bw, " %1.10f %1.10f", s.Quartile25, s.Q75)
		}
		fmt.Fprintln(bw)
		for _, in := range s.Severe {
			fmt.Fprintf(bw, "- cnode %d enter: %1.10f exit: %1.10f duration: %1.10f rank: %d\n", in.Callpath, in.Enter, in.Exit, in.Duration, in.Rank)
		}
		fmt.Fprintln(bw)
	}
	return bw.Flush()
}
