package main

import (
	"bytes"
	"github.com/google/go-cmp/cmp"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"scout/internal/tracetest"
)

// waitMetrics are the wait-state metrics a closed form can list; those it
// does not list must be zero in the analysis.
var waitMetrics = append([]string{"mpi_latesender", "mpi_latesender_wo", "mpi_lswo_same", "mpi_lswo_different",
	"mpi_latereceiver", "mpi_earlyreduce", "mpi_earlyscan", "mpi_latebroadcast", "mpi_wait_nxn", "mpi_barrier_wait"},
	refillMetrics...)

// rootCauseMetrics are the delay and propagation metrics; the closed form
// of the delay kinds lists those that are not zero.
var rootCauseMetrics = []string{"delay_latesender", "delay_latesender_longterm", "delay_latereceiver",
	"delay_latereceiver_longterm", "delay_barrier", "delay_barrier_longterm", "delay_n2n", "delay_n2n_longterm",
	"delay_12n", "delay_12n_longterm", "delay_n21", "delay_n21_longterm", "mpi_wait_indirect_latesender",
	"mpi_wait_indirect_latereceiver", "mpi_wait_propagating_ls", "mpi_wait_propagating_lr"}

// TestTracegenClosedForm generates traces with `scout tracegen`, analyzes
// them with scout, and checks every closed-form value the generator
// reports (time, visits and the wait states it injects) against the
// analysis: same cells, within 1e-9, and no wait state the closed form
// does not list. waits are the metrics the closed form must list.
func TestTracegenClosedForm(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		waits []string
	}{
		{"default", nil, nil},
		{"late_sender", []string{"--ranks", "8", "--phase", "late_sender:work=1ms,delay=10ms"}, nil},
		{"jitter", []string{"--ranks", "5", "--iterations", "4", "--seed", "7",
			"--phase", "compute:work=2ms,imbalance=500us,jitter=1ms",
			"--phase", "late_sender:work=1ms,delay=3ms,jitter=333us",
			"--phase", "sendrecv_ring:work=1ms,delay=2ms,jitter=1ms",
			"--phase", "wait_nxn:work=1ms,imbalance=1ms",
			"--phase", "wait_barrier:work=1ms,imbalance=1ms,jitter=142us",
			"--phase", "late_broadcast:work=1ms,delay=4ms,jitter=1ms"}, nil},
		{"single", []string{"--ranks", "1", "--phase", "compute", "--phase", "allreduce", "--phase", "bcast"}, nil},
		{"events", []string{"--ranks", "3", "--events", "20000", "--phase", "ring:jitter=1ms", "--phase", "barrier:imbalance=1ms"}, nil},
		{"collectives", []string{"--ranks", "6", "--seed", "5",
			"--phase", "early_reduce:work=1ms,imbalance=1ms",
			"--phase", "early_gather:work=1ms,imbalance=500us,jitter=1ms",
			"--phase", "late_scatter:work=1ms,delay=2ms,jitter=1ms",
			"--phase", "early_scan:work=1ms,delay=1ms,jitter=1ms",
			"--phase", "wait_allgather:work=1ms,imbalance=1ms",
			"--phase", "wait_alltoall:work=1ms,jitter=2ms"},
			[]string{"mpi_earlyreduce", "mpi_latebroadcast", "mpi_earlyscan", "mpi_wait_nxn"}},
		{"late_sender_nb", []string{"--ranks", "3", "--phase", "late_sender_nb:work=1ms,delay=5ms,jitter=1ms"},
			[]string{"mpi_latesender"}},
		{"halo_2d", []string{"--ranks", "12", "--seed", "3", "--phase", "halo_2d:work=1ms,imbalance=100us,jitter=1ms",
			"--phase", "halo2d:work=1ms,jitter=1ms,dims=2x6,name=halo_2x6"}, []string{"mpi_latesender"}},
		{"halo_3d", []string{"--ranks", "12", "--seed", "4", "--phase", "halo_3d:work=1ms,jitter=1ms",
			"--phase", "halo3d:work=1ms,imbalance=200us,dims=2x3x2,name=halo_2x3x2"}, []string{"mpi_latesender"}},
		{"wavefront", []string{"--ranks", "12", "--seed", "5", "--phase", "wavefront_2d:work=1ms,imbalance=200us,jitter=1ms",
			"--phase", "wavefront:work=1ms,dims=3x4,name=sweep_3x4"},
			[]string{"mpi_latesender", "mpi_latesender_wo", "mpi_lswo_different", "mpi_latereceiver"}},
		{"master_worker", []string{"--ranks", "8", "--seed", "6", "--phase", "master_worker:work=1ms,imbalance=100us,jitter=2ms",
			"--phase", "master:work=1ms,imbalance=500ns,name=even_workers"},
			[]string{"mpi_latesender", "mpi_latesender_wo", "mpi_lswo_different", "mpi_latereceiver"}},
		{"subcomm", []string{"--ranks", "12", "--seed", "7", "--phase", "subcomm_nxn:work=1ms,imbalance=300us,jitter=1ms",
			"--phase", "subcomm:work=1ms,jitter=1ms,dims=2x6,name=rows_of_6"}, []string{"mpi_wait_nxn"}},
		// the delay kinds: their closed form has the root causes too
		// (tracegen/delay.go), and every other root-cause metric is 0
		{"delay_chain", []string{"--ranks", "3", "--iterations", "2", "--phase", "delay_chain:work=1ms,delay=10ms"},
			[]string{"mpi_latesender", "delay_latesender", "delay_latesender_longterm", "mpi_wait_indirect_latesender",
				"mpi_wait_propagating_ls"}},
		{"delay_chain_long", []string{"--ranks", "6", "--iterations", "3", "--seed", "9",
			"--phase", "chain:work=1ms,delay=3ms,imbalance=20us,jitter=50us"},
			[]string{"mpi_latesender", "delay_latesender", "delay_latesender_longterm", "mpi_wait_indirect_latesender",
				"mpi_wait_propagating_ls"}},
		{"delay_collectives", []string{"--ranks", "5", "--seed", "3",
			"--phase", "delay_barrier:work=1ms,delay=2ms,jitter=500us", "--phase", "delay_nxn:work=1ms,imbalance=300us",
			"--phase", "delay_barrier:work=2ms,jitter=1ms,name=second_barrier",
			"--phase", "delay_chain:work=1ms,delay=1ms"},
			[]string{"mpi_barrier_wait", "mpi_wait_nxn", "delay_barrier", "delay_n2n", "delay_latesender",
				"mpi_wait_propagating_ls"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			trace, expect, got := filepath.Join(dir, "trace"), filepath.Join(dir, "expect.csv"), filepath.Join(dir, "got.csv")
			args := append([]string{"tracegen", "-q", "-o", trace, "--expect", expect}, tc.args...)
			var stderr bytes.Buffer
			if err := run(args, io.Discard, &stderr); err != nil {
				t.Fatalf("scout %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
			}
			if err := run([]string{"-q", "-o", dir, "--csv", got, trace}, io.Discard, &stderr); err != nil {
				t.Fatalf("scout: %v\n%s", err, stderr.String())
			}
			want, err := tracetest.ReadCSV(expect)
			if err != nil {
				t.Fatal(err)
			}
			have, err := tracetest.ReadCSV(got)
			if err != nil {
				t.Fatal(err)
			}
			metrics := map[string]bool{}
			for k := range want {
				metrics[k.Metric] = true
			}
			var ms []string
			for m := range metrics {
				ms = append(ms, m)
			}
			sort.Strings(ms)
			if len(ms) < 2 {
				t.Fatalf("closed form lists only %v", ms)
			}
			for _, m := range tc.waits {
				if !metrics[m] {
					t.Errorf("closed form has no %s (lists %v)", m, ms)
				}
			}
			checked := append(ms, waitMetrics...)
			if strings.HasPrefix(tc.name, "delay_") {
				checked = append(checked, rootCauseMetrics...)
			}
			for _, d := range tracetest.Diff(have.Only(checked...), want, 20) {
				t.Error(d)
			}
		})
	}
}

// TestTracegenUsage checks that bad scenario input gets a clear error.
func TestTracegenUsage(t *testing.T) {
	dir := t.TempDir()
	badFile := filepath.Join(dir, "bad.scenario")
	os.WriteFile(badFile, []byte("ranks 4\nphase late_sender:work=1ms\nphase warp:work=1ms\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tracegen"}, "-o DIR is required"},
		{[]string{"tracegen", "-o", dir, "--phase", "warp"}, `unknown phase kind "warp"`},
		{[]string{"tracegen", "-o", dir, "--phase", "late_sender:work=-1ms"}, "negative"},
		{[]string{"tracegen", "-o", dir, "--phase", "late_sender:speed=1ms"}, `unknown key "speed"`},
		{[]string{"tracegen", "-o", dir, "--phase", "late_sender:work=fast"}, "invalid duration"},
		{[]string{"tracegen", "-o", dir, "--ranks", "1", "--phase", "late_sender"}, "needs at least 2 locations"},
		{[]string{"tracegen", "-o", dir, "--scenario", badFile}, "bad.scenario:3"},
		{[]string{"tracegen", "-o", dir, "--events", "10", "--iterations", "2"}, "exclude each other"},
		{[]string{"tracegen", "-o", dir, "--ranks", "8", "--phase", "halo_2d:dims=4x3"}, "grid 4x3 has 12 ranks, the scenario 8"},
		{[]string{"tracegen", "-o", dir, "--ranks", "8", "--phase", "halo_3d:dims=4x2"}, "needs a 3-D grid"},
		{[]string{"tracegen", "-o", dir, "--phase", "wavefront:dims=2xtwo"}, "want sizes such as 4x2"},
		{[]string{"tracegen", "-o", dir, "--phase", "wait_nxn:dims=2x2"}, "has no process grid"},
		{[]string{"tracegen", "-o", dir, "--ranks", "8", "--phase", "wavefront_3d:sweeps=nwf+se"}, "grids of different dimensions"},
		{[]string{"tracegen", "-o", dir, "--ranks", "8", "--phase", "wavefront_3d:sweeps=se"}, "corners of a 3-D grid (nwf+nef+swf+sef+nwb+neb+swb+seb)"},
		{[]string{"tracegen", "-o", dir, "--phase", "wavefront_2d:sweeps=nwu"}, `"nwu" is no corner`},
		{[]string{"tracegen", "-o", dir, "--ranks", "8", "--phase", "wavefront_3d:dims=4x2"}, "needs a 3-D grid"},
		{[]string{"tracegen", "-o", dir, "--ranks", "1", "--phase", "halo_3d"}, "needs at least 2 locations"},
		{[]string{"tracegen", "-o", dir, "--ranks", "1", "--phase", "master_worker"}, "needs at least 2 locations"},
	} {
		err := run(tc.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("scout %s: error %v, want one containing %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

// TestTracegenLocalDefs: archives of every kind with only local
// definitions (communicators of sub-communicators and Cartesian grids
// included) analyze, after unification, to the same results as with
// global definitions.
func TestTracegenLocalDefs(t *testing.T) {
	for name, scenario := range map[string][]string{
		"p2p": {"--ranks", "6", "--seed", "3", "--phase", "late_sender_nb:delay=2ms,jitter=1ms",
			"--phase", "halo_2d:jitter=1ms", "--phase", "halo_3d:jitter=1ms,dims=3x2x1",
			"--phase", "wavefront_2d:imbalance=100us,jitter=1ms", "--phase", "master_worker:imbalance=1ms,jitter=1ms",
			"--phase", "halo_2d:jitter=1ms,dims=2x3,name=halo_2x3"},
		"collectives": {"--ranks", "8", "--seed", "4", "--phase", "early_reduce:imbalance=1ms",
			"--phase", "early_gather:jitter=1ms", "--phase", "late_scatter:delay=1ms,jitter=1ms",
			"--phase", "early_scan:delay=1ms,jitter=1ms", "--phase", "wait_allgather:imbalance=1ms",
			"--phase", "wait_alltoall:jitter=1ms", "--phase", "subcomm_nxn:jitter=1ms",
			"--phase", "subcomm_nxn:jitter=1ms,dims=2x4,name=rows_of_4", "--phase", "subcomm_nxn:dims=8x1,name=single"},
		// every rank sends and receives in some sweep, whatever its
		// place in the north-west one
		"sweeps": {"--ranks", "8", "--seed", "5", "--phase", "wavefront_2d:jitter=1ms,dims=4x2,sweeps=se+nw",
			"--phase", "wavefront_3d:jitter=1ms,sweeps=seb+nwf+nef", "--phase", "wavefront_2d:dims=2x4,sweeps=sw,name=sw_only"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			csvOf := func(local bool) []byte {
				t.Helper()
				trace := filepath.Join(dir, "global")
				args := append([]string{"tracegen", "-q", "-o", trace}, scenario...)
				if local {
					trace = filepath.Join(dir, "local")
					args = append([]string{"tracegen", "-q", "-o", trace, "--local-defs"}, scenario...)
				}
				var stderr bytes.Buffer
				if err := run(args, io.Discard, &stderr); err != nil {
					t.Fatalf("scout %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
				}
				return csvIn(t, trace)
			}
			if want, got := csvOf(false), csvOf(true); !bytes.Equal(got, want) {
				t.Errorf("local definitions: results differ from the global-definitions archive")
			}
			// The reports' Cartesian topologies are the same too.
			want := topologyCoords(t, filepath.Join(dir, "global", "scout.cubex"))
			got := topologyCoords(t, filepath.Join(dir, "local", "scout.cubex"))
			if !cmp.Equal(got, want) {
				t.Errorf("local definitions: topologies differ:\n%s", cmp.Diff(want, got))
			}
		})
	}
}
