package combine

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/patterns"
)

// TestSummaryRootCausesAndPath summarizes hand-made cells: rank 0's work
// in "main/a" delays rank 1 (short-term 3 s for a Late Sender, long-term
// 1 s for a barrier), "main/b" on rank 1 delays by 2 s; the critical path
// runs 6 s through main/a (ranks 0 and 1) and 2 s through main/b, with
// an imbalance impact of 1.5 s.
func TestSummaryRootCausesAndPath(t *testing.T) {
	cells := []Cell{
		{Metric: "time", Callpath: "main", Rank: "0", Value: 10},
		{Metric: "time", Callpath: "main", Rank: "1", Value: 10},
		{Metric: "mpi_latesender", Callpath: "main/MPI_Recv", Rank: "1", Value: 3},
		{Metric: "delay_latesender", Callpath: "main/a", Rank: "0", Value: 3},
		{Metric: "delay_barrier_longterm", Callpath: "main/a", Rank: "0", Value: 0.5},
		{Metric: "delay_barrier_longterm", Callpath: "main/a", Rank: "1", Value: 0.5},
		{Metric: "delay_n2n", Callpath: "main/b", Rank: "1", Value: 2},
		{Metric: "critical_path", Callpath: "main/a", Rank: "0", Value: 4},
		{Metric: "critical_path", Callpath: "main/a", Rank: "1", Value: 2},
		{Metric: "critical_path", Callpath: "main/b", Rank: "1", Value: 2},
		{Metric: "critical_path", Callpath: "main", Rank: "1", Value: -0.5},
		{Metric: "critical_imbalance_impact", Callpath: "main/a", Rank: "1", Value: 1.5},
		{Metric: "critical_path_activities", Callpath: "main/a", Rank: "1", Value: 7},
		{Metric: "mpi_wait_propagating_ls", Callpath: "main/MPI_Recv", Rank: "1", Value: 1},
	}
	s := Summarize(cells, patterns.Catalog, 5)
	want := Summary{
		Total: 20,
		WaitStates: []WaitState{{Metric: "mpi_latesender", Display: "Late Sender", Total: 3, Share: 0.15,
			Callpath: "main/MPI_Recv", CpValue: 3, Ranks: []RankValue{{"1", 3}}}},
		RootCauses: []RootCause{
			{Callpath: "main/a", Total: 4, ShortTerm: 3, LongTerm: 1, Share: 0.2, Cause: "Late Sender",
				Ranks: []RankValue{{"0", 3.5}, {"1", 0.5}}},
			{Callpath: "main/b", Total: 2, ShortTerm: 2, Share: 0.1, Cause: "Wait at N x N", Ranks: []RankValue{{"1", 2}}},
		},
		Path: &CriticalPath{Length: 7.5, Imbalance: 1.5, ImbalanceShare: 0.075, Callpaths: []PathShare{
			{Callpath: "main/a", Value: 6, Share: 0.8, Ranks: []RankValue{{"0", 4}, {"1", 2}}},
			{Callpath: "main/b", Value: 2, Share: 2 / 7.5, Ranks: []RankValue{{"1", 2}}},
		}},
	}
	if d := cmp.Diff(want, s); d != "" {
		t.Errorf("summary (-want +got):\n%s", d)
	}
	var b bytes.Buffer
	if err := WriteSummary(&b, cells, patterns.Catalog, 2, 5); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"Top wait states (share of total time):",
		"   15.0%  Late Sender                  3 s, most in main/MPI_Recv (3 s)",
		"Top root causes (delay that made others wait, share of total time):",
		"   20.0%  main/a  4 s (short-term 3 s, long-term 1 s), causing mostly Late Sender",
		"          ranks: rank 0 88%, rank 1 12%",
		"Critical path 7.5 s, imbalance impact 1.5 s (7.5% of total time); on the path (share of its length):",
		"   80.0%  main/a  6 s",
		"          ranks: rank 0 67%, rank 1 33%",
	} {
		if !strings.Contains(b.String(), line+"\n") {
			t.Errorf("summary lacks %q:\n%s", line, b.String())
		}
	}
	// without the optional parts' metrics: the wait states alone
	b.Reset()
	if err := WriteSummary(&b, cells[:3], patterns.Catalog, 2, 5); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "root causes") || strings.Contains(out, "Critical path") || !strings.Contains(out, "Late Sender") {
		t.Errorf("summary of wait states only:\n%s", out)
	}
}

// TestSummaryThreads checks that the summary names the threads that wait
// by rank and thread.
func TestSummaryThreads(t *testing.T) {
	cells := []Cell{
		{Metric: "time", Callpath: "main", Rank: "0", Value: 10},
		{Metric: "time", Callpath: "main/!$omp parallel", Rank: "0.1", Value: 10},
		{Metric: "omp_ibarrier_wait", Callpath: "main/!$omp parallel/!$omp implicit barrier", Rank: "0.1", Value: 3},
		{Metric: "omp_ibarrier_wait", Callpath: "main/!$omp parallel/!$omp implicit barrier", Rank: "0", Value: 1},
	}
	var b bytes.Buffer
	if err := WriteSummary(&b, cells, patterns.Catalog, 2, 5); err != nil {
		t.Fatal(err)
	}
	want := "          ranks: rank 0 thread 1 75%, rank 0 25%"
	if !strings.Contains(b.String(), want+"\n") {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
}

// TestSpread checks the distribution line of a value over many
// locations: locations without a value count as 0.
func TestSpread(t *testing.T) {
	tests := []struct {
		name string
		rs   []RankValue
		n    int
		want string
	}{
		{"all have a value", []RankValue{{"3", 4}, {"2", 3}, {"1", 2}, {"0", 1}}, 4,
			"over 4 locations: median 2.5 s, max 4 s, 2 above the mean (2.5 s)"},
		{"most have none", []RankValue{{"7", 9}, {"3", 1}}, 10,
			"over 10 locations: median 0 s, max 9 s, 1 above the mean (1 s)"},
		{"odd count", []RankValue{{"1", 5}, {"2", 1}, {"0", 1}}, 3,
			"over 3 locations: median 1 s, max 5 s, 1 above the mean (2.33 s)"},
		{"none", nil, 5, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := spread(tc.rs, tc.n); got != tc.want {
				t.Errorf("spread = %q, want %q", got, tc.want)
			}
		})
	}
	// in the summary: over manyRanks locations, after the largest ones
	var cells []Cell
	for r := range 12 {
		cells = append(cells, Cell{Metric: "time", Callpath: "main", Rank: strconv.Itoa(r), Value: 10},
			Cell{Metric: "mpi_latesender", Callpath: "main/MPI_Recv", Rank: strconv.Itoa(r), Value: float64(r)})
	}
	var b bytes.Buffer
	if err := WriteSummary(&b, cells, patterns.Catalog, 12, 5); err != nil {
		t.Fatal(err)
	}
	want := "          ranks: rank 11 17%, rank 10 15%, rank 9 14%; over 12 locations: median 5.5 s, max 11 s, 6 above the mean (5.5 s)\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
}
