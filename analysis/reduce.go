package analysis

import (
	"context"
	"fmt"
	"slices"

	"scout/patterns"
)

// ReduceSpec is a trace reduction's request (Reduce).
type ReduceSpec struct {
	// Keep names regions a prediction may scale.
	Keep []string
	// KeepShare and KeepTime also keep the regions outside MPI whose
	// exclusive time over all ranks is at least this share of the
	// total, or this many seconds (0: no such rule).
	KeepShare, KeepTime float64
	// EagerLimit: messages of at least this many bytes stay, so that
	// predictions with this --eager-limit stay exact (0: none).
	EagerLimit uint64
}

// Reduced is what a trace reduction did.
type Reduced struct {
	// Kept are the names of the kept regions.
	Kept []string
	// Events and Dropped count the trace's events and those left out.
	Events, Dropped int
}

// Reduce writes a reduced copy of p's trace into directory out (which
// must not exist): the events that no what-if prediction scaling the
// kept regions (by factors from 0 to 1, on any ranks) can tell apart
// from computation are left out (patterns.RegisterReduction), so that
// such predictions of the reduced trace equal the original's. Events
// keep their recorded times. Traces with several threads per rank are
// not supported yet.
func Reduce(ctx context.Context, p Plan, spec ReduceSpec, out string) (*Reduced, error) {
	if spec.KeepShare < 0 || spec.KeepShare > 1 || spec.KeepTime < 0 {
		return nil, fmt.Errorf("trace reduction: the thresholds must be a share from 0 to 1 and a time of at least 0")
	}
	p.Patterns = []patterns.Pattern{}
	p.WhatIf = nil
	s, err := open(p)
	if err != nil {
		return nil, err
	}
	byName := s.regionsByName()
	r := &patterns.Reduce{Keep: map[uint32]bool{}, KeepShare: spec.KeepShare, KeepTime: spec.KeepTime, EagerLimit: spec.EagerLimit}
	for _, reg := range s.defs.Regions {
		r.Regions = max(r.Regions, int(reg.Self)+1)
	}
	for _, n := range spec.Keep {
		ids, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("trace reduction: the trace has no region named %q", n)
		}
		for _, id := range ids {
			r.Keep[id] = true
		}
	}
	s.reduce = r
	all, err := s.rewrite(ctx, out, "reduced", "reduced by scout reduce", 1, false)
	if err != nil {
		return nil, err
	}
	res := &Reduced{}
	for _, l := range all {
		if l.reduction == nil {
			continue
		}
		res.Events += l.reduction.Events
		res.Dropped += l.reduction.Dropped
		if res.Kept == nil {
			for _, g := range l.reduction.Kept {
				if reg, ok := s.defs.Region(g); ok {
					res.Kept = append(res.Kept, s.defs.Str(reg.Name))
				}
			}
			slices.Sort(res.Kept)
			res.Kept = slices.Compact(res.Kept)
		}
	}
	return res, nil
}
