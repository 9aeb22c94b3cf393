package localtrace_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/internal/tinytrace"
	"scout/localtrace"
	"scout/localtrace/otf2"
)

func fork(ms float64) tinytrace.Step { return tinytrace.Raw(ms, otf2.EvThreadFork, 3, 2) }
func join(ms float64) tinytrace.Step { return tinytrace.Raw(ms, otf2.EvThreadJoin, 3) }
func teamBegin(ms float64) tinytrace.Step {
	return tinytrace.Raw(ms, otf2.EvThreadTeamBegin, 0)
}
func teamEnd(ms float64) tinytrace.Step { return tinytrace.Raw(ms, otf2.EvThreadTeamEnd, 0) }

// TestAdoptThread checks the call paths of a worker thread's regions: below
// the master's call path at the fork of each team ("work" stands for the
// parallel region), the same region under different forks apart, and a
// region entered before any fork a root.
func TestAdoptThread(t *testing.T) {
	seq := func(steps ...[]tinytrace.Step) []tinytrace.Step {
		var all []tinytrace.Step
		for _, s := range steps {
			all = append(all, s...)
		}
		return all
	}
	one := func(s tinytrace.Step) []tinytrace.Step { return []tinytrace.Step{s} }
	master := tinytrace.Call("main", 0, 100, seq(
		one(fork(1)), one(teamBegin(1.5)), tinytrace.Call("work", 2, 5), one(teamEnd(5.5)), one(join(6)),
		tinytrace.Call("MPI_Barrier", 7, 9, seq(
			one(fork(7.1)), one(teamBegin(7.2)), tinytrace.Call("work", 7.3, 7.9), one(teamEnd(8)), one(join(8.1)))...),
	)...)
	worker := seq(
		tinytrace.Call("MPI_Recv", 0.5, 0.7), // before any fork: a root
		one(teamBegin(1.6)), tinytrace.Call("work", 2, 4, tinytrace.Call("MPI_Send", 3, 3.5)...), one(teamEnd(4.5)),
		one(teamBegin(7.25)), tinytrace.Call("work", 7.3, 7.8), one(teamEnd(7.95)),
	)
	_, traces := tinytrace.Build(t, master, worker)
	m, w := traces[0], traces[1]
	if err := localtrace.AdoptThread(w, m); err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, e := range w.Events {
		switch e.Kind {
		case localtrace.KindEnter:
			got = append(got, tinytrace.Path(w, e.Arg))
		case localtrace.KindLeave:
			if en := w.Events[w.Match(i)].Arg; e.Arg != en {
				t.Errorf("event %d: Leave in call path %d, its Enter in %d", i, e.Arg, en)
			}
		}
	}
	want := []string{"MPI_Recv", "main/work", "main/work/MPI_Send", "main/MPI_Barrier/work"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("worker call paths (-want +got):\n%s", d)
	}
}
