package tracegen

import (
	"testing"
	"time"
)

// BenchmarkGenerate generates a 4-rank archive of about 4 M events on one
// core (one writer goroutine), including the file writes.
func BenchmarkGenerate(b *testing.B) {
	sc := Scenario{Locations: 4, Iterations: 20_000, Workers: 1, Phases: []Phase{
		{Kind: Compute, Work: time.Millisecond, Imbalance: time.Microsecond},
		{Kind: LateSender, Work: time.Millisecond, Delay: time.Millisecond},
		{Kind: Ring, Work: time.Millisecond, Jitter: time.Millisecond},
		{Kind: Allreduce, Work: time.Millisecond, Imbalance: time.Millisecond},
		{Kind: Barrier, Work: time.Millisecond},
		{Kind: Bcast, Work: time.Millisecond, Delay: time.Millisecond},
	}}
	dir := b.TempDir()
	var events uint64
	for b.Loop() {
		sum, err := Generate(dir, sc)
		if err != nil {
			b.Fatal(err)
		}
		events += sum.TotalEvents()
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
