package patterns_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/patterns"
	"scout/replay"
)

// TestCriticalPathLateSender: rank 1 waits 3 ms in MPI_Recv for rank 0,
// which enters MPI_Finalize last. The critical path is rank 0's time
// from the end of MPI_Init to the end of MPI_Finalize; rank 0's excess
// work (4 ms, of which 3 ms made rank 1 wait) is the delay.
func TestCriticalPathLateSender(t *testing.T) {
	progs := [][]step{
		program(20, call("MPI_Init", 0, 1), call("work", 1, 5), call("MPI_Send", 5, 6, send(5.5, 1, 7, 8)),
			call("MPI_Finalize", 10, 11)),
		program(20, call("MPI_Init", 0, 1), call("MPI_Recv", 2, 7, recv(6.5, 0, 7, 8)), call("MPI_Finalize", 8, 11)),
	}
	got := only(analyze(t, progs...), "critical_path", "critical_path_activities", "non_critical_path_activities",
		"critical_imbalance_impact", "inter_partition_imbalance", "delay_latesender", "delay_latereceiver")
	want := map[string]float64{
		// the path: all of rank 0 between the Init and Finalize cuts
		"critical_path main/MPI_Init 0": seconds(1),
		"critical_path main/work 0":     seconds(4),
		"critical_path main/MPI_Send 0": seconds(1),
		"critical_path main 0":          seconds(4),
		// min(path, own time without waits)
		"critical_path_activities main/MPI_Init 0": seconds(1),
		"critical_path_activities main/work 0":     seconds(4),
		"critical_path_activities main/MPI_Send 0": seconds(1),
		"critical_path_activities main 0":          seconds(4),
		"critical_path_activities main/MPI_Init 1": seconds(1),
		"critical_path_activities main 1":          seconds(4),
		// own time without waits beyond the path
		"non_critical_path_activities main 0":              seconds(13 - 4),
		"non_critical_path_activities main/MPI_Finalize 0": seconds(1),
		"non_critical_path_activities main 1":              seconds(11 - 4),
		"non_critical_path_activities main/MPI_Recv 1":     seconds(5 - 3),
		"non_critical_path_activities main/MPI_Finalize 1": seconds(3 - 2),
		// rank 0's 4 ms of work since Init, scaled to the 3 ms wait;
		// rank 0 has no excess over the path, so the imbalance impacts
		// are NaN and absent
		"delay_latesender main/work 0": seconds(3),
	}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestPartsPasses checks which passes run for each selection of the
// optional parts: the wait states alone need the forward and backward
// passes only; the critical path adds fws and its walk (cpath), the
// delay costs with the propagation fws, bwc and fwc. And a part left out
// computes nothing.
func TestPartsPasses(t *testing.T) {
	f, b := replay.Forward, replay.Backward
	all := []replay.Pass{f, b, patterns.Fws, patterns.Cpath, patterns.Bwc, patterns.Fwc}
	tests := []struct {
		skip patterns.Parts
		want []replay.Pass
	}{
		{0, all},
		{patterns.PartCriticalPath, []replay.Pass{f, b, patterns.Fws, patterns.Bwc, patterns.Fwc}},
		{patterns.PartRootCause, []replay.Pass{f, b, patterns.Fws, patterns.Cpath}},
		{patterns.AllParts, []replay.Pass{f, b}},
	}
	for _, tc := range tests {
		bus := &replay.Bus{}
		for _, p := range patterns.Without(patterns.Patterns, tc.skip) {
			p.Register(bus)
		}
		var got []replay.Pass
		for _, p := range all {
			if bus.Runs(p) {
				got = append(got, p)
			}
		}
		if !cmp.Equal(got, tc.want) {
			t.Errorf("skip %b: passes %v, want %v", tc.skip, got, tc.want)
		}
	}
	for _, p := range patterns.Patterns {
		for _, m := range p.Metrics {
			if patterns.Catalog[m].Part != p.Part {
				t.Errorf("metric %s: part %b, its pattern %q's %b", patterns.Catalog[m].Name, patterns.Catalog[m].Part, p.Name, p.Part)
			}
		}
	}
}

// TestCriticalPathAlone: the critical path without the delay costs, and
// the delays without the critical path, are those of the full analysis.
func TestCriticalPathAlone(t *testing.T) {
	progs := [][]step{
		program(20, call("MPI_Init", 0, 1), call("work", 1, 5), call("MPI_Send", 5, 6, send(5.5, 1, 7, 8)),
			call("MPI_Finalize", 10, 11)),
		program(20, call("MPI_Init", 0, 1), call("MPI_Recv", 2, 7, recv(6.5, 0, 7, 8)), call("MPI_Finalize", 8, 11)),
	}
	full := analyze(t, progs...)
	for _, skip := range []patterns.Parts{patterns.PartRootCause, patterns.PartCriticalPath, patterns.AllParts} {
		table := patterns.Without(patterns.Patterns, skip)
		got := analyzeWith(t, func(bus *replay.Bus) {
			for _, p := range table {
				p.Register(bus)
			}
		}, progs...)
		want := map[string]float64{}
		for k, v := range full {
			m, _, _ := strings.Cut(k, " ")
			if mm, _ := patterns.Lookup(m); mm.Part&skip == 0 {
				want[k] = v
			}
		}
		if diff := cmp.Diff(want, got, approx); diff != "" {
			t.Errorf("skip %b (-want +got):\n%s", skip, diff)
		}
	}
}

var rootCauseAll = []string{"critical_path", "critical_path_activities", "non_critical_path_activities",
	"critical_imbalance_impact", "inter_partition_imbalance", "delay_latesender", "delay_latesender_longterm",
	"delay_latereceiver", "delay_latereceiver_longterm", "delay_barrier", "delay_barrier_longterm", "delay_n2n",
	"delay_n2n_longterm", "delay_12n", "delay_12n_longterm", "delay_n21", "delay_n21_longterm",
	"mpi_wait_indirect_latesender", "mpi_wait_indirect_latereceiver", "mpi_wait_propagating_ls",
	"mpi_wait_propagating_lr"}

// TestRootCauseUnevenEnds: rank 1 waits 3 ms in MPI_Recv for rank 0 (as
// in TestCriticalPathLateSender); rank 2 never communicates, it only
// computes between MPI_Init and MPI_Finalize; and the ranks leave
// MPI_Finalize (11, 13, 12 ms) and main (20, 15, 16 ms) at different
// times. Rank 0 enters MPI_Finalize last (10 ms), so the path starts
// there and the others wait in it: rank 1 from 8 to 10, rank 2 from 9 to
// 10 (Finalize wait = min(latest enter, own leave) − own enter).
func TestRootCauseUnevenEnds(t *testing.T) {
	progs := [][]step{
		program(20, call("MPI_Init", 0, 1), call("work", 1, 5), call("MPI_Send", 5, 6, send(5.5, 1, 7, 8)),
			call("MPI_Finalize", 10, 11)),
		program(15, call("MPI_Init", 0, 1), call("MPI_Recv", 2, 7, recv(6.5, 0, 7, 8)), call("MPI_Finalize", 8, 13)),
		program(16, call("MPI_Init", 0, 1), call("work", 1, 3), call("MPI_Finalize", 9, 12)),
	}
	got := only(analyze(t, progs...), rootCauseAll...)
	want := map[string]float64{
		// the path: rank 0 from the Init cut to its Finalize Leave (the
		// send is not a wait state, rank 2 is never reached)
		"critical_path main/MPI_Init 0": seconds(1),
		"critical_path main/work 0":     seconds(4),
		"critical_path main/MPI_Send 0": seconds(1),
		"critical_path main 0":          seconds(4), // 6 to 10
		// min(path, own time without waits): rank 2 worked 2 of the
		// path's 4 ms of work, and did none of its MPI_Send
		"critical_path_activities main/MPI_Init 0": seconds(1),
		"critical_path_activities main/work 0":     seconds(4),
		"critical_path_activities main/MPI_Send 0": seconds(1),
		"critical_path_activities main 0":          seconds(4),
		"critical_path_activities main/MPI_Init 1": seconds(1),
		"critical_path_activities main 1":          seconds(4), // its main: 1 + 1 + 2
		"critical_path_activities main/MPI_Init 2": seconds(1),
		"critical_path_activities main/work 2":     seconds(2),
		"critical_path_activities main 2":          seconds(4),
		// own time without waits beyond the path; the Finalize waits (2
		// and 1 ms) are not activities
		"non_critical_path_activities main 0":              seconds(13 - 4),
		"non_critical_path_activities main/MPI_Finalize 0": seconds(1),
		"non_critical_path_activities main/MPI_Recv 1":     seconds(5 - 3),
		"non_critical_path_activities main/MPI_Finalize 1": seconds(5 - 2),
		"non_critical_path_activities main 2":              seconds(10 - 4), // 6 + 4
		"non_critical_path_activities main/MPI_Finalize 2": seconds(3 - 1),
		// rank 0's 4 ms of work since Init, scaled to rank 1's 3 ms wait;
		// nobody waits for rank 1 or 2, so nothing propagates; rank 0
		// has no excess over the path, so both imbalance impacts are NaN
		// and absent (spec §10)
		"delay_latesender main/work 0": seconds(3),
	}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
