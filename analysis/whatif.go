package analysis

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"scout/patterns"
)

// WhatIf is a what-if prediction's request, by names (Plan.WhatIf): the
// hypotheses, each predicted in the same pass, and a ranking of
// candidates.
type WhatIf struct {
	Hypotheses []Hypothesis
	// Rank > 0 adds, after the hypotheses, the Rank call paths outside
	// MPI with the largest exclusive time (on RankRanks, or all ranks),
	// each taking no time, and the removal of each wait class.
	Rank      int
	RankRanks []int
	// Retime rewrites the events' times with the prediction of the only
	// hypothesis, so that the analysis (and Plan's keep) sees the
	// predicted run.
	Retime bool
	// EagerLimit: messages of at least this many bytes are sent in
	// rendezvous mode when their receive was posted before the send
	// completed (patterns.WhatIf.EagerLimit); 0: all eager.
	EagerLimit uint64
}

// Hypothesis is one change of the program, by names.
type Hypothesis struct {
	// Shrinks scale the exclusive time of regions or call paths.
	Shrinks []Shrink
	// Callpaths take no time: call paths of the unified call tree (as a
	// report of the same trace numbers them; combine.Report.DelaySources).
	Callpaths []uint32
	// Remove are the wait classes whose waits disappear.
	Remove patterns.WaitClass
	// Ranks restricts the change to these world ranks (nil: all).
	Ranks []int
}

// Shrink scales the exclusive time of the call paths Name names by
// Factor (0: they take no time, 0.5: half, 2: twice as long). Name is a
// region name (every call path of the region) or call path elements
// joined by '/' (every call path ending with them, such as
// "main/solve/compute" or "solve/compute").
type Shrink struct {
	Name   string
	Factor float64
}

// String describes h as the command line gives it.
func (h Hypothesis) String() string {
	var parts []string
	for _, s := range h.Shrinks {
		parts = append(parts, fmt.Sprintf("%s=%g", s.Name, s.Factor))
	}
	for _, g := range h.Callpaths {
		parts = append(parts, fmt.Sprintf("call path %d=0", g))
	}
	if h.Remove != 0 {
		parts = append(parts, "no "+h.Remove.String())
	}
	if len(parts) == 0 {
		parts = append(parts, "no change")
	}
	if h.Ranks != nil {
		parts = append(parts, "on ranks "+RankList(h.Ranks))
	}
	return strings.Join(parts, ", ")
}

// RankList writes ranks as a list of ranges ("0,3-5").
func RankList(ranks []int) string {
	rs := slices.Clone(ranks)
	slices.Sort(rs)
	rs = slices.Compact(rs)
	var b strings.Builder
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1] == rs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", rs[i], rs[j])
		} else {
			fmt.Fprintf(&b, "%d", rs[i])
		}
		i = j + 1
	}
	return b.String()
}

// ParseRanks parses a rank list such as "0,3-5".
func ParseRanks(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(f, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || strconv.Itoa(a) != lo || a < 0 {
			return nil, fmt.Errorf("rank list %q: %q is not a rank", s, f)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || strconv.Itoa(b) != hi || b < a {
				return nil, fmt.Errorf("rank list %q: %q is not a range of ranks", s, f)
			}
		}
		if b-a > 1<<24 {
			return nil, fmt.Errorf("rank list %q: range %q too large", s, f)
		}
		for r := a; r <= b; r++ {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("rank list %q names no rank", s)
	}
	return out, nil
}

// regionsByName returns the global ids of the regions of each name.
func (s *session) regionsByName() map[string][]uint32 {
	byName := map[string][]uint32{}
	for _, r := range s.defs.Regions {
		n := s.defs.Str(r.Name)
		byName[n] = append(byName[n], r.Self)
	}
	return byName
}

// resolveWhatIf turns the request w into the prediction's hypotheses by
// region ids; unknown names and ranks are errors.
func (s *session) resolveWhatIf(w *WhatIf) (*patterns.WhatIf, error) {
	byName := s.regionsByName()
	nranks := len(s.masters)
	rankSet := func(rs []int) (map[int]bool, error) {
		if rs == nil {
			return nil, nil
		}
		if len(rs) == 0 {
			return nil, fmt.Errorf("what-if prediction: the rank set is empty")
		}
		m := map[int]bool{}
		for _, r := range rs {
			if r < 0 || r >= nranks {
				return nil, fmt.Errorf("what-if prediction: rank %d is not in the trace (ranks 0-%d)", r, nranks-1)
			}
			m[r] = true
		}
		return m, nil
	}
	out := &patterns.WhatIf{Rank: w.Rank, Retime: w.Retime, EagerLimit: w.EagerLimit}
	var err error
	if out.RankRanks, err = rankSet(w.RankRanks); err != nil {
		return nil, err
	}
	if w.Rank < 0 {
		return nil, fmt.Errorf("what-if prediction: cannot rank %d candidates", w.Rank)
	}
	for _, h := range w.Hypotheses {
		ph := patterns.Hypothesis{Remove: h.Remove}
		for _, g := range h.Callpaths {
			if ph.Callpaths == nil {
				ph.Callpaths = map[uint32]float64{}
			}
			ph.Callpaths[g] = 0
		}
		if ph.Ranks, err = rankSet(h.Ranks); err != nil {
			return nil, err
		}
		for _, sh := range h.Shrinks {
			if sh.Factor < 0 || math.IsNaN(sh.Factor) || math.IsInf(sh.Factor, 0) {
				return nil, fmt.Errorf("what-if prediction: %s=%g: the factor must be a number of at least 0", sh.Name, sh.Factor)
			}
			if !strings.Contains(sh.Name, "/") {
				ids, ok := byName[sh.Name]
				if !ok {
					return nil, fmt.Errorf("what-if prediction: the trace has no region named %q", sh.Name)
				}
				if ph.Regions == nil {
					ph.Regions = map[uint32]float64{}
				}
				for _, id := range ids {
					ph.Regions[id] = sh.Factor
				}
				continue
			}
			paths := [][]uint32{nil}
			for _, el := range strings.Split(strings.Trim(sh.Name, "/"), "/") {
				ids, ok := byName[el]
				if !ok {
					return nil, fmt.Errorf("what-if prediction: call path %q: the trace has no region named %q", sh.Name, el)
				}
				var next [][]uint32
				for _, p := range paths {
					for _, id := range ids {
						next = append(next, append(slices.Clone(p), id))
					}
				}
				if len(next) > 1024 {
					return nil, fmt.Errorf("what-if prediction: call path %q: too many regions of these names", sh.Name)
				}
				paths = next
			}
			for _, p := range paths {
				ph.Paths = append(ph.Paths, patterns.PathFactor{Regions: p, Factor: sh.Factor})
			}
		}
		out.Hypotheses = append(out.Hypotheses, ph)
	}
	if len(out.Hypotheses) == 0 && out.Rank == 0 {
		return nil, fmt.Errorf("what-if prediction: no hypothesis")
	}
	return out, nil
}

// WritePrediction predicts the run of p's trace under the only
// hypothesis of p.WhatIf and writes the predicted trace, every event at
// its predicted time, as a new OTF2 archive in directory out (which must
// not exist), on a timer as fine as Correct's; it returns the
// prediction. Traces with several threads per rank are not supported yet.
func WritePrediction(ctx context.Context, p Plan, out string) (*patterns.Prediction, error) {
	if p.WhatIf == nil || len(p.WhatIf.Hypotheses) != 1 || p.WhatIf.Rank != 0 {
		return nil, fmt.Errorf("writing a predicted trace needs one hypothesis and no ranking")
	}
	w := *p.WhatIf
	w.Retime = true
	p.WhatIf = &w
	p.Patterns = []patterns.Pattern{}
	s, err := open(p)
	if err != nil {
		return nil, err
	}
	stretch := 1.0 // the predicted run is at most the largest factor times longer
	for _, sh := range w.Hypotheses[0].Shrinks {
		stretch = max(stretch, sh.Factor)
	}
	all, err := s.rewrite(ctx, out, "predicted", "run predicted by scout whatif: "+w.Hypotheses[0].String(), stretch, true)
	if err != nil {
		return nil, err
	}
	pred := &patterns.Prediction{}
	for _, l := range all {
		if l.prediction != nil {
			pred.Add(l.prediction)
		}
	}
	return pred, nil
}
