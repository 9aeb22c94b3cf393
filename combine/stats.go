package combine

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"

	"scout/patterns"
)

// maxSevere is how many of the most severe instances the statistics
// file lists per pattern (at most one per call path).
const maxSevere = 5

// PatternStats summarises the instances of one wait-state pattern.
type PatternStats struct {
	Pattern                     string
	Count                       int
	Mean, Median, Min, Max, Sum float64
	Variance, Quartile25, Q75   float64
	Severe                      []patterns.Instance // most severe, largest first
}

// Stats computes the statistics of every pattern with instances, in the
// order of patterns.StatPatterns. Observations are the per-location wait
// times; the severe-instance list aggregates collective operations over
// their participants (summed wait, earliest begin, latest end, the rank
// that waited longest).
func (r *Report) Stats() []PatternStats {
	var out []PatternStats
	for pi, name := range patterns.StatPatterns {
		var obs []float64
		agg := map[patterns.CollKey]*patterns.Instance{}
		var inst []*patterns.Instance
		var maxDur = map[patterns.CollKey]float64{}
		for i := range r.Instances {
			in := &r.Instances[i]
			if int(in.Pattern) != pi {
				continue
			}
			if in.Duration > 0 {
				obs = append(obs, in.Duration)
			}
			if in.Coll.Seq < 0 {
				if in.Duration > 0 {
					inst = append(inst, in)
				}
				continue
			}
			a := agg[in.Coll]
			if a == nil {
				c := *in
				agg[in.Coll] = &c
				maxDur[in.Coll] = in.Duration
				inst = append(inst, &c)
				continue
			}
			a.Duration += in.Duration
			a.Enter = math.Min(a.Enter, in.Enter)
			a.Exit = math.Max(a.Exit, in.Exit)
			if in.Duration > maxDur[in.Coll] || (in.Duration == maxDur[in.Coll] && in.Rank < a.Rank) {
				maxDur[in.Coll], a.Rank = in.Duration, in.Rank
			}
		}
		if len(obs) == 0 {
			continue
		}
		out = append(out, summarize(name, obs, inst))
	}
	return out
}

func summarize(name string, obs []float64, inst []*patterns.Instance) PatternStats {
	sort.Float64s(obs)
	n := float64(len(obs))
	s := PatternStats{Pattern: name, Count: len(obs), Min: obs[0], Max: obs[len(obs)-1]}
	for _, v := range obs {
		s.Sum += v
	}
	s.Mean = s.Sum / n
	for _, v := range obs {
		s.Variance += (v - s.Mean) * (v - s.Mean)
	}
	s.Variance /= n // population variance, as the reference analyzer
	s.Median, s.Quartile25, s.Q75 = quantile(obs, 0.5), quantile(obs, 0.25), quantile(obs, 0.75)
	sort.SliceStable(inst, func(i, j int) bool { return inst[i].Duration > inst[j].Duration })
	seen := map[uint32]bool{}
	for _, in := range inst {
		if len(s.Severe) == maxSevere {
			break
		}
		if in.Duration > 0 && !seen[in.Callpath] {
			seen[in.Callpath] = true
			s.Severe = append(s.Severe, *in)
		}
	}
	return s
}

// quantile interpolates linearly between the order statistics of sorted.
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	if lo+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	f := pos - float64(lo)
	return sorted[lo]*(1-f) + sorted[lo+1]*f
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
