package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		in          []float64
		med, lo, hi float64
	}{
		{[]float64{2}, 2, 2, 2},
		{[]float64{3, 1}, 2, 1, 3},
		{[]float64{5, 1, 4}, 4, 1, 5},
		{[]float64{1.5, 9, 0.5, 2.5}, 2, 0.5, 9},
	} {
		in := append([]float64(nil), tc.in...)
		med, lo, hi := summarize(in)
		if diff := cmp.Diff([]float64{tc.med, tc.lo, tc.hi}, []float64{med, lo, hi}); diff != "" {
			t.Errorf("summarize(%v): median, min, max (-want +got):\n%s", tc.in, diff)
		}
		if diff := cmp.Diff(tc.in, in); diff != "" {
			t.Errorf("summarize changed its input (-want +got):\n%s", diff)
		}
	}
}

func TestConfigCommand(t *testing.T) {
	for _, tc := range []struct {
		procs   int
		variant string
		want    []string
	}{
		{0, "", []string{"scout", "-q", "-o", "OUT", "T"}},
		{0, "--single-pass --time-correct", []string{"scout", "-q", "-o", "OUT", "--single-pass", "--time-correct", "T"}},
		{4, "--single-pass", []string{"mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "4", "scout", "-q", "-o", "OUT", "--single-pass", "T"}},
		{0, "whatif --rank 10", []string{"scout", "whatif", "-q", "--rank", "10", "T"}},
		{0, "@U --time-correct", []string{"scout", "-q", "-o", "OUT", "--time-correct", "U"}},
		{2, "@U", []string{"mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", "scout", "-q", "-o", "OUT", "U"}},
	} {
		c := newConfig(tc.procs, tc.variant, "T")
		if diff := cmp.Diff(tc.want, c.command("scout", "OUT").Args); diff != "" {
			t.Errorf("%d processes, %q (-want +got):\n%s", tc.procs, tc.variant, diff)
		}
	}
}
