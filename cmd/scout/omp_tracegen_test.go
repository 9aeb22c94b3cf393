package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"scout/internal/tracetest"
)

// ompMetrics are the OpenMP metrics of tracegen's closed form; the ones
// it does not list must be zero in the analysis.
var ompMetrics = []string{"omp_fork", "omp_management", "omp_ebarrier_wait", "omp_ibarrier_wait",
	"omp_lock_contention_critical", "omp_lock_contention_api"}

// ompPhases has a phase of every OpenMP kind, with imbalance, lag and
// (with a seed) jitter, so that every OpenMP metric has cells.
var ompPhases = []string{
	"--phase", "omp_parallel:work=1ms,imbalance=500us,lag=10us",
	"--phase", "omp_barrier:work=1ms,imbalance=200us,jitter=300us,lag=3us",
	"--phase", "omp_critical:work=300us,jitter=100us,lag=50us",
	"--phase", "omp_lock:work=200us,imbalance=100us,delay=1ms,lag=20us",
}

// closedFormCells runs `scout tracegen` with args (and --expect), analyzes
// the trace in-process and returns the closed form's cells and the
// analysis's cells of the metrics a closed form can list (those it lists,
// time and visits, the MPI wait states and the OpenMP metrics), keyed
// "metric callpath rank"; analysis cells within rounding of 0 (1e-12)
// are left out.
func closedFormCells(t *testing.T, args ...string) (want, got map[string]float64) {
	t.Helper()
	dir := t.TempDir()
	trace, expect, csv := filepath.Join(dir, "trace"), filepath.Join(dir, "expect.csv"), filepath.Join(dir, "got.csv")
	gen := append([]string{"tracegen", "-q", "-o", trace, "--expect", expect}, args...)
	var stderr bytes.Buffer
	if err := run(gen, io.Discard, &stderr); err != nil {
		t.Fatalf("scout %s: %v\n%s", strings.Join(gen, " "), err, stderr.String())
	}
	if err := run([]string{"-q", "-o", dir, "--csv", csv, trace}, io.Discard, &stderr); err != nil {
		t.Fatalf("scout: %v\n%s", err, stderr.String())
	}
	wantCells, err := tracetest.ReadCSV(expect)
	if err != nil {
		t.Fatal(err)
	}
	gotCells, err := tracetest.ReadCSV(csv)
	if err != nil {
		t.Fatal(err)
	}
	metrics := append(append([]string{"time", "visits"}, waitMetrics...), ompMetrics...)
	for k := range wantCells {
		metrics = append(metrics, k.Metric)
	}
	key := func(k tracetest.Key) string { return fmt.Sprintf("%s %s %s", k.Metric, k.Callpath, k.Rank) }
	want, got = map[string]float64{}, map[string]float64{}
	for k, v := range wantCells {
		want[key(k)] = v
	}
	for k, v := range gotCells.Only(metrics...) {
		if math.Abs(v) > 1e-12 {
			got[key(k)] = v
		}
	}
	return want, got
}

// cellsApprox compares cells within 1e-9, absolute or relative.
var cellsApprox = cmpopts.EquateApprox(1e-9, 1e-9)

// TestTracegenThreads generates hybrid MPI+OpenMP traces (ranks of
// several threads, the OpenMP kinds, MPI phases on the master threads;
// global and local definitions), analyzes them with scout and compares
// every cell of the closed form (time, visits, the MPI wait states, and
// omp_fork, omp_management, omp_ebarrier_wait, omp_ibarrier_wait,
// omp_lock_contention_critical and omp_lock_contention_api per thread)
// with the analysis: the same cells, within 1e-9, and none of these
// metrics where the closed form has none. lists are metrics the closed
// form must have cells of, labels rank labels it must have.
func TestTracegenThreads(t *testing.T) {
	mixed := append([]string{"--seed", "5", "--phase", "late_sender:work=1ms,delay=1ms", "--phase", "halo_2d:jitter=1ms",
		"--phase", "wait_nxn:work=1ms,imbalance=1ms"}, ompPhases...)
	mixed = append(mixed, "--phase", "sendrecv_ring:jitter=1ms", "--phase", "omp_parallel:work=2ms,jitter=2ms,name=jittered")
	tests := []struct {
		name   string
		args   []string
		lists  []string
		labels []string
	}{
		{"2x3", append([]string{"--ranks", "2", "--threads", "3"}, ompPhases...), ompMetrics, []string{"0", "0.2", "1.1"}},
		{"2x3_local", append([]string{"--ranks", "2", "--threads", "3", "--local-defs"}, ompPhases...), ompMetrics,
			[]string{"0", "0.2", "1.1"}},
		{"3x2_mixed", append([]string{"--ranks", "3", "--threads", "2"}, mixed...),
			append([]string{"mpi_latesender", "mpi_wait_nxn"}, ompMetrics...), []string{"2", "2.1"}},
		{"3x2_mixed_local", append([]string{"--ranks", "3", "--threads", "2", "--local-defs"}, mixed...),
			append([]string{"mpi_latesender", "mpi_wait_nxn"}, ompMetrics...), []string{"2", "2.1"}},
		// the default hybrid scenario (--threads without phases)
		{"default", []string{"--threads", "3"}, append([]string{"mpi_wait_nxn"}, ompMetrics...), []string{"3", "3.2"}},
		// teams of the master alone
		{"1_thread", append([]string{"--ranks", "2", "--threads", "1"}, ompPhases...),
			[]string{"omp_fork", "omp_management"}, []string{"1"}},
		// workers that never join a team (no events)
		{"mpi_only", []string{"--ranks", "3", "--threads", "2", "--phase", "late_sender:delay=1ms",
			"--phase", "wait_barrier:imbalance=1ms"}, []string{"mpi_latesender", "mpi_barrier_wait"}, []string{"2"}},
		// the critical section's lock counts on over iterations and two
		// phases; every iteration makes a new API lock; the lag makes
		// some threads find the lock free
		{"locks", []string{"--ranks", "2", "--threads", "4", "--iterations", "4",
			"--phase", "omp_critical:work=1ms,lag=300us", "--phase", "omp_critical:work=1ms,lag=400us,name=critical_2",
			"--phase", "omp_lock:work=100us,lag=500us,imbalance=30us", "--phase", "omp_lock:work=2ms,name=lock_2"},
			[]string{"omp_lock_contention_critical", "omp_lock_contention_api"}, []string{"1.3"}},
		{"events", []string{"--ranks", "2", "--threads", "2", "--events", "30000", "--phase", "omp_barrier:imbalance=1ms",
			"--phase", "allreduce:imbalance=1ms"}, []string{"omp_ebarrier_wait", "omp_ibarrier_wait"}, []string{"1.1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, got := closedFormCells(t, tc.args...)
			metrics, labels := map[string]bool{}, map[string]bool{}
			for k := range want {
				f := strings.Fields(k)
				metrics[f[0]], labels[f[len(f)-1]] = true, true
			}
			for _, m := range tc.lists {
				if !metrics[m] {
					t.Errorf("closed form has no %s", m)
				}
			}
			for _, l := range tc.labels {
				if !labels[l] {
					t.Errorf("closed form has no cell of rank %s", l)
				}
			}
			if d := cmp.Diff(want, got, cellsApprox); d != "" {
				t.Errorf("analysis differs from the closed form (-want +got):\n%s", d)
			}
		})
	}
}

// TestTracegenThreadsCanFail checks that the comparison of
// TestTracegenThreads notices a wrong value of every OpenMP metric, of
// time and visits on a worker thread, and a missing or extra cell.
func TestTracegenThreadsCanFail(t *testing.T) {
	want, got := closedFormCells(t, append([]string{"--ranks", "2", "--threads", "3"}, ompPhases...)...)
	if d := cmp.Diff(want, got, cellsApprox); d != "" {
		t.Fatalf("analysis differs from the closed form (-want +got):\n%s", d)
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, m := range append([]string{"time", "visits"}, ompMetrics...) {
		i := slices.IndexFunc(keys, func(k string) bool {
			return strings.HasPrefix(k, m+" ") && strings.Contains(k[strings.LastIndex(k, " "):], ".")
		})
		if i < 0 {
			t.Errorf("closed form has no %s of a worker thread", m)
			continue
		}
		k := keys[i]
		for name, change := range map[string]func(map[string]float64){
			"wrong value":  func(c map[string]float64) { c[k] += 1e-6 },
			"missing cell": func(c map[string]float64) { delete(c, k) },
			"extra cell":   func(c map[string]float64) { c[k[:strings.LastIndex(k, ".")]+".7"] = c[k] },
		} {
			wrong := maps.Clone(want)
			change(wrong)
			if cmp.Equal(wrong, got, cellsApprox) {
				t.Errorf("%s of %s: not noticed", name, k)
			}
		}
	}
}

// TestTracegenThreadsLocalDefs: a hybrid archive with only local
// definitions (a worker thread defines its location, the regions it
// enters and its team, no MPI) analyzes, after unification, to the same
// results as with global definitions.
func TestTracegenThreadsLocalDefs(t *testing.T) {
	dir := t.TempDir()
	args := append([]string{"--ranks", "3", "--threads", "3", "--seed", "9", "--phase", "halo_2d:jitter=1ms",
		"--phase", "subcomm_nxn:jitter=1ms"}, ompPhases...)
	csvOf := func(name string, extra ...string) []byte {
		t.Helper()
		trace := filepath.Join(dir, name)
		gen := append(append([]string{"tracegen", "-q", "-o", trace}, extra...), args...)
		var stderr bytes.Buffer
		if err := run(gen, io.Discard, &stderr); err != nil {
			t.Fatalf("scout %s: %v\n%s", strings.Join(gen, " "), err, stderr.String())
		}
		return csvIn(t, trace)
	}
	want, got := csvOf("global"), csvOf("local", "--local-defs")
	if d := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")); d != "" {
		t.Errorf("local definitions: results differ from the global-definitions archive (-global +local):\n%s", d)
	}
}

// TestTracegenThreadsUsage checks the errors of bad thread settings.
func TestTracegenThreadsUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tracegen", "-o", dir, "--threads", "0"}, "--threads 0: must be at least 1"},
		{[]string{"tracegen", "-o", dir, "--threads", "100000"}, "100000 threads per rank"},
		{[]string{"tracegen", "-o", dir, "--ranks", "4096", "--threads", "4096"}, "more than 1048576 locations"},
		{[]string{"tracegen", "-o", dir, "--threads", "2", "--phase", "wait_nxn:lag=1ms"}, "lag is for the OpenMP kinds"},
		{[]string{"tracegen", "-o", dir, "--phase", "omp_lock:lag=-1ms"}, "negative"},
	} {
		err := run(tc.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("scout %s: error %v, want one containing %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}
