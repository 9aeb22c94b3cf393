package tracegen

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// peakHeap runs fn and returns the largest live heap seen while it ran,
// sampled every millisecond, above the heap in use before.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base {
				peak = max(peak, ms.HeapAlloc-base)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	return peak
}

var memScenario = Scenario{Locations: 4, Workers: 2, Phases: []Phase{
	{Kind: Ring, Work: time.Millisecond, Jitter: time.Millisecond},
	{Kind: Allreduce, Work: time.Millisecond, Imbalance: time.Microsecond},
}}

// TestConstantMemory: generating 10× more events must not need more
// memory: events are streamed through fixed chunk buffers.
func TestConstantMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes about 100 MB")
	}
	hybrid := Scenario{Locations: 2, Threads: 4, Workers: 2, Phases: []Phase{
		{Kind: OmpBarrier, Work: time.Millisecond, Imbalance: time.Millisecond, Lag: time.Microsecond},
		{Kind: OmpLock, Work: time.Millisecond},
		{Kind: Allreduce, Work: time.Millisecond, Imbalance: time.Microsecond},
	}}
	for _, tc := range []struct {
		name         string
		sc           Scenario
		small, large int // iterations
	}{
		{"ranks", memScenario, 20_000, 200_000},
		{"threads", hybrid, 3_000, 30_000}, // the threads' events stream like the ranks'
	} {
		t.Run(tc.name, func(t *testing.T) {
			var peaks, events [2]uint64
			for i, iters := range []int{tc.small, tc.large} {
				sc := tc.sc
				sc.Iterations = iters
				dir := t.TempDir()
				peaks[i] = peakHeap(func() {
					sum, err := Generate(dir, sc)
					if err != nil {
						t.Fatal(err)
					}
					events[i] = sum.TotalEvents()
				})
			}
			t.Logf("peak heap: %d events: %d KiB; %d events: %d KiB", events[0], peaks[0]>>10, events[1], peaks[1]>>10)
			if limit := 2*peaks[0] + 4<<20; peaks[1] > limit {
				t.Errorf("peak heap grew from %d KiB (%d events) to %d KiB (%d events); want constant memory",
					peaks[0]>>10, events[0], peaks[1]>>10, events[1])
			}
		})
	}
}

// BenchmarkGenerate1e8 writes a 10⁸-event archive (about 1 GB) and
// reports the peak live heap, which must not depend on the event count.
// Run it explicitly: go test -bench Generate1e8 -benchtime 1x ./tracegen
func BenchmarkGenerate1e8(b *testing.B) {
	sc := memScenario
	sc.Workers = 1
	benchGenerate(b, sc, 100_000_000)
}

// benchGenerate writes scenario sc with about n events in each round and
// reports the events per second and the peak live heap.
func benchGenerate(b *testing.B, sc Scenario, n uint64) {
	it, err := IterationsFor(sc, n)
	if err != nil {
		b.Fatal(err)
	}
	sc.Iterations = it
	var events, peak uint64
	for b.Loop() {
		dir := b.TempDir()
		peak = max(peak, peakHeap(func() {
			sum, err := Generate(dir, sc)
			if err != nil {
				b.Fatal(err)
			}
			events += sum.TotalEvents()
		}))
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}
