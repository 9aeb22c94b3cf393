package patterns_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"scout/internal/tinytrace"
	"scout/patterns"
	"scout/replay"
)

// TestTimeProfile replays a Late Sender and a barrier with a wait and a
// completion in bins of 1 ms, and checks every bin in closed form.
func TestTimeProfile(t *testing.T) {
	progs := [][]step{
		program(8,
			call("MPI_Send", 5, 5.5, send(5.2, 1, 0, 8)),
			coll("MPI_Barrier", opBarrier, 0, 6, 7.5)),
		program(8,
			call("MPI_Recv", 2, 6, recv(5.8, 0, 0, 8)),
			coll("MPI_Barrier", opBarrier, 0, 6.5, 7.8)),
	}
	d, traces := tinytrace.Build(t, progs...)
	d.Clock.TraceLength = d.Clock.TimerResolution / 10 // 0.1 s: bins of 1 ms
	const (
		comp = patterns.ActComputation
		mpi  = patterns.ActMPI
		wait = patterns.ActWaiting
	)
	// ms gives a bin's activities in milliseconds
	ms := func(set map[patterns.Activity]float64) patterns.Activities {
		var a patterns.Activities
		for k, v := range set {
			a[k] = v / 1000
		}
		return a
	}
	full := ms(map[patterns.Activity]float64{comp: 1})
	want := [][]patterns.Activities{
		{full, full, full, full, full,
			ms(map[patterns.Activity]float64{mpi: 0.5, comp: 0.5}),
			ms(map[patterns.Activity]float64{wait: 0.5, mpi: 0.5}), // Wait at Barrier
			ms(map[patterns.Activity]float64{mpi: 0.5, comp: 0.5})},
		{full, full,
			ms(map[patterns.Activity]float64{wait: 1}), // Late Sender
			ms(map[patterns.Activity]float64{wait: 1}),
			ms(map[patterns.Activity]float64{wait: 1}),
			ms(map[patterns.Activity]float64{mpi: 1}),
			ms(map[patterns.Activity]float64{comp: 0.5, mpi: 0.5}),
			ms(map[patterns.Activity]float64{mpi: 0.5, wait: 0.3, comp: 0.2})}, // Barrier Completion
	}
	got := make([][]patterns.Activities, len(progs))
	widths := make([]float64, len(progs))
	replayTiny(t, d, traces, patterns.Register, func(rank int, bus *replay.Bus, _ *replay.Location) {
		tp := patterns.TimeProfileOf(bus)
		got[rank], widths[rank] = tp.Bins, tp.Width
	})
	if widths[0] != 1e-3 || widths[1] != 1e-3 {
		t.Errorf("bin widths %v, want 1 ms", widths)
	}
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-15)); d != "" {
		t.Errorf("time profile (-want +got):\n%s", d)
	}
	// without the pattern, no profile
	replayTiny(t, d, traces, func(bus *replay.Bus) {}, func(rank int, bus *replay.Bus, _ *replay.Location) {
		if tp := patterns.TimeProfileOf(bus); tp != nil {
			t.Errorf("rank %d: a time profile without the pattern", rank)
		}
	})
}
