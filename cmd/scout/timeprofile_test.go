package main

import (
	"encoding/csv"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"scout/internal/tracetest"
)

// profileRow is one row of the time profile's CSV.
type profileRow struct {
	label      string // rank label, as in the metric CSV
	bin        int
	start, end float64
	act        [4]float64 // computation, mpi, openmp, waiting
}

func readProfileCSV(t *testing.T, path string) []profileRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := "rank,thread,bin,start,end,computation,mpi,openmp,waiting"; len(recs) == 0 || strings.Join(recs[0], ",") != want {
		t.Fatalf("profile CSV header %q, want %q", recs[:min(len(recs), 1)], want)
	}
	var rows []profileRow
	for _, r := range recs[1:] {
		var x [9]float64
		for i, s := range r {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("profile CSV row %q: %v", r, err)
			}
			x[i] = v
		}
		label := r[0]
		if r[1] != "0" {
			label += "." + r[1]
		}
		rows = append(rows, profileRow{label: label, bin: int(x[2]), start: x[3], end: x[4], act: [4]float64{x[5], x[6], x[7], x[8]}})
	}
	return rows
}

// The wait-state metrics the time profile counts as waiting, by the
// activity they are taken from.
var (
	mpiWaits = []string{"mpi_latesender", "mpi_latereceiver", "mpi_barrier_wait", "mpi_barrier_completion",
		"mpi_wait_nxn", "mpi_nxn_completion", "mpi_latebroadcast", "mpi_earlyreduce", "mpi_earlyscan",
		"mpi_init_completion", "mpi_finalize_wait"}
	ompWaits = []string{"omp_ebarrier_wait", "omp_ibarrier_wait", "omp_lock_contention_critical", "omp_lock_contention_api"}
)

// ompSync reports whether a call path's region is OpenMP synchronization
// (replay.ClassOmpSync), by its name.
func ompSync(region string) bool {
	construct, _, _ := strings.Cut(strings.ToLower(region), " @")
	switch construct {
	case "!$omp barrier", "!$omp ibarrier", "!$omp implicit barrier", "!$omp critical", "!$omp atomic",
		"!$omp ordered", "!$omp taskwait", "!$omp flush":
		return true
	}
	return strings.HasPrefix(region, "omp_") && strings.HasSuffix(region, "_lock")
}

// checkTimeProfile checks the time profile of an analysis against its
// metric values: for every location, its activities over all bins add
// up to its time, its waiting to its wait states, its MPI time with the
// MPI wait states to the time in MPI calls, its OpenMP synchronization
// with the OpenMP wait states to the time in OpenMP synchronization and
// thread management; no
// activity is negative, no bin holds more than its width, and the bins
// are contiguous from time 0.
func checkTimeProfile(t *testing.T, rows []profileRow, cells tracetest.Cells) {
	t.Helper()
	type sums struct{ time, mpi, omp, waitMPI, waitOMP float64 }
	want := map[string]*sums{}
	get := func(label string) *sums {
		s := want[label]
		if s == nil {
			s = &sums{}
			want[label] = s
		}
		return s
	}
	isMPIWait, isOMPWait := map[string]bool{}, map[string]bool{}
	for _, m := range mpiWaits {
		isMPIWait[m] = true
	}
	for _, m := range ompWaits {
		isOMPWait[m] = true
	}
	for k, v := range cells {
		s := get(k.Rank)
		region := k.Callpath[strings.LastIndex(k.Callpath, "/")+1:]
		switch {
		case k.Metric == "time":
			s.time += v
			if strings.HasPrefix(region, "MPI_") {
				s.mpi += v
			} else if ompSync(region) {
				s.omp += v
			}
		case k.Metric == "omp_management":
			s.omp += v
		case isMPIWait[k.Metric]:
			s.waitMPI += v
		case isOMPWait[k.Metric]:
			s.waitOMP += v
		}
	}
	got := map[string]*[4]float64{}
	next := map[string]int{}
	for _, r := range rows {
		if r.bin != next[r.label] {
			t.Fatalf("location %s: bin %d follows bin %d", r.label, r.bin, next[r.label]-1)
		}
		next[r.label]++
		w := r.end - r.start
		if math.Abs(r.start-float64(r.bin)*w) > 1e-12*r.end || w <= 0 {
			t.Errorf("location %s, bin %d: [%g, %g] is not the bin's interval", r.label, r.bin, r.start, r.end)
		}
		sum := 0.0
		for a, v := range r.act {
			if v < 0 {
				t.Errorf("location %s, bin %d: activity %d is %g", r.label, r.bin, a, v)
			}
			sum += v
		}
		if sum > w*(1+1e-9) {
			t.Errorf("location %s, bin %d: %g s of activity in a bin of %g s", r.label, r.bin, sum, w)
		}
		g := got[r.label]
		if g == nil {
			g = &[4]float64{}
			got[r.label] = g
		}
		for a, v := range r.act {
			g[a] += v
		}
	}
	var labels []string
	for l := range want {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }
	for _, l := range labels {
		w, g := want[l], got[l]
		if g == nil {
			t.Errorf("location %s has metric values but no time profile", l)
			continue
		}
		for _, c := range []struct {
			what      string
			got, want float64
		}{
			{"all activities (time)", g[0] + g[1] + g[2] + g[3], w.time},
			{"waiting (wait states)", g[3], w.waitMPI + w.waitOMP},
			{"mpi + MPI wait states (time in MPI)", g[1] + w.waitMPI, w.mpi},
			{"openmp + OpenMP wait states (time in OpenMP synchronization)", g[2] + w.waitOMP, w.omp},
		} {
			if !near(c.got, c.want) {
				t.Errorf("location %s: %s: profile %.12g, metrics %.12g", l, c.what, c.got, c.want)
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("time profile of %d locations, metric values of %d", len(got), len(want))
	}
}
