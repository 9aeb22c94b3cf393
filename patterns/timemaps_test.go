package patterns_test

import (
	"path/filepath"
	"testing"
	"time"

	"scout/localtrace"
	"scout/localtrace/otf2"
	"scout/patterns"
	"scout/tracegen"
)

// BenchmarkTimemaps sums the exclusive times per call path of a
// location's events in intervals of 23 events, the average interval the
// root-cause passes ask for on the 8 M-event bench trace (where they sum
// 22 M events' times): location 0 of a generated 4-rank trace of the
// bench's phases, about 700 000 events, kept with its times in ticks as
// a loaded trace keeps them.
func BenchmarkTimemaps(b *testing.B) {
	dir := b.TempDir()
	const us = time.Microsecond
	sc := tracegen.Scenario{Locations: 4, Iterations: 20000, Seed: 1, Phases: []tracegen.Phase{
		{Kind: tracegen.Compute, Work: 10 * us, Imbalance: 10 * us},
		{Kind: tracegen.Ring, Work: 10 * us, Jitter: 100 * us},
		{Kind: tracegen.LateSender, Work: 10 * us, Delay: 20 * us},
		{Kind: tracegen.Allreduce, Work: 10 * us, Jitter: 50 * us},
		{Kind: tracegen.Barrier, Work: 10 * us},
	}}
	if _, err := tracegen.Generate(dir, sc); err != nil {
		b.Fatal(err)
	}
	a, err := otf2.Open(filepath.Join(dir, "traces.otf2"))
	if err != nil {
		b.Fatal(err)
	}
	defs, err := a.ReadGlobalDefs()
	if err != nil {
		b.Fatal(err)
	}
	t, err := localtrace.Load(a, defs, defs.Locations[0].Self)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if patterns.SumTimemaps(t, 23) == 0 {
			b.Fatal("no times summed")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(t.Events)), "ns/event")
}
