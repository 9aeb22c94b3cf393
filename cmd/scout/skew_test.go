package main

import (
	"bytes"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"scout/internal/tracetest"
	"scout/localtrace/otf2"
	"scout/tracegen"
)

// TestClockSkewCorrected generates a program twice, with exact clocks and
// with skewed ones (tracegen's clock skew), and checks that the skewed
// trace has clock-condition violations, that --time-correct leaves none,
// and that every wait state of the corrected trace is within the bound
// of doc/timecorrect.md of the exact one: instances × (D + E), D the
// largest difference between two ranks' clocks, E the correction's
// largest shift, the instances at most the visits of the cell's call
// path.
func TestClockSkewCorrected(t *testing.T) {
	const (
		ranks  = 4
		offset = 30 * time.Microsecond
		drift  = 2e-5
	)
	scenario := func(skew bool) tracegen.Scenario {
		s := tracegen.Scenario{Locations: ranks, Iterations: 20, Phases: []tracegen.Phase{
			{Kind: tracegen.LateSender, Work: time.Millisecond, Delay: 2 * time.Millisecond},
			{Kind: tracegen.Ring, Work: 100 * time.Microsecond, Jitter: 50 * time.Microsecond},
			{Kind: tracegen.Allreduce, Work: time.Millisecond, Imbalance: 200 * time.Microsecond},
			{Kind: tracegen.Barrier, Work: time.Millisecond, Imbalance: 300 * time.Microsecond},
		}}
		if skew {
			s.ClockOffset, s.ClockDrift = offset, drift
		}
		return s
	}
	analyze := func(dir string, flags ...string) (tracetest.Cells, string) {
		t.Helper()
		csv := filepath.Join(t.TempDir(), "scout.csv")
		var stderr bytes.Buffer
		args := append([]string{"-v", "-o", t.TempDir(), "--csv", csv}, flags...)
		if err := run(append(args, dir), io.Discard, &stderr); err != nil {
			t.Fatalf("scout %v: %v\n%s", flags, err, stderr.String())
		}
		cells, err := tracetest.ReadCSV(csv)
		if err != nil {
			t.Fatal(err)
		}
		return cells, stderr.String()
	}
	exactDir, skewDir := filepath.Join(t.TempDir(), "exact"), filepath.Join(t.TempDir(), "skewed")
	if _, err := tracegen.Generate(exactDir, scenario(false)); err != nil {
		t.Fatal(err)
	}
	if _, err := tracegen.Generate(skewDir, scenario(true)); err != nil {
		t.Fatal(err)
	}
	exact, log := analyze(exactDir)
	if strings.Contains(log, "clock condition violations") {
		t.Fatalf("the exact trace has clock-condition violations:\n%s", log)
	}
	if _, log := analyze(skewDir); !strings.Contains(log, "clock condition violations") {
		t.Fatalf("the skewed trace has no clock-condition violations:\n%s", log)
	}
	corrected, log := analyze(skewDir, "--time-correct")
	if strings.Contains(log, "clock condition violations detected") || !strings.Contains(log, "0 clock-condition violations remain") {
		t.Fatalf("violations remain after the correction:\n%s", log)
	}
	var maxShift float64
	for _, line := range strings.Split(log, "\n") {
		if _, v, ok := strings.Cut(line, "events moved    : "); ok {
			if _, s, ok := strings.Cut(v, "largest shift "); ok {
				maxShift, _ = strconv.ParseFloat(strings.TrimSuffix(s, " [s])"), 64)
			}
		}
	}
	if maxShift <= 0 {
		t.Fatalf("no shift in the statistics:\n%s", log)
	}
	length := 0.0 // rank 0's run time, the trace's length
	for k, v := range exact.Only("time") {
		if k.Rank == "0" {
			length += v
		}
	}
	d := float64(ranks-1) * (offset.Seconds() + drift*length)
	waits := []string{"mpi_latesender", "mpi_latesender_wo", "mpi_latereceiver", "mpi_wait_nxn", "mpi_barrier_wait",
		"mpi_barrier_completion", "mpi_nxn_completion", "mpi_latebroadcast", "mpi_earlyreduce", "mpi_earlyscan"}
	checked, worst := 0, 0.0
	for k := range merge(exact.Only(waits...), corrected.Only(waits...)) {
		visits := exact[tracetest.Key{Metric: "visits", Callpath: k.Callpath, Rank: k.Rank}]
		bound := visits * (d + maxShift)
		diff := math.Abs(corrected[k] - exact[k])
		if diff > bound {
			t.Errorf("%v: corrected %.9f, exact %.9f: differ by more than %g", k, corrected[k], exact[k], bound)
		}
		worst = max(worst, diff/bound)
		checked++
	}
	if checked == 0 {
		t.Fatal("no wait states compared")
	}
	t.Logf("%d wait-state cells within the bound (D = %.3g s, E = %.3g s); the largest difference is %.0f%% of its bound", checked, d, maxShift, 100*worst)
}

func merge(a, b tracetest.Cells) tracetest.Cells {
	out := tracetest.Cells{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// TestCorrectUnmatchedSend: a send without its receive in a trace whose
// correction needs the backward amortization ends in an error, not a
// hang.
func TestCorrectUnmatchedSend(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "skewed")
	s := tracegen.Scenario{Locations: 2, Iterations: 5, ClockOffset: 50 * time.Microsecond,
		Phases: []tracegen.Phase{{Kind: tracegen.LateSender, Work: time.Millisecond}}}
	if _, err := tracegen.Generate(dir, s); err != nil {
		t.Fatal(err)
	}
	dropped := 0
	rewriteEvents(t, dir, 1, func(ev *otf2.Event, w *otf2.EventWriter) error {
		if ev.Type == otf2.EvMpiRecv && dropped < 5 {
			dropped++ // every receive of rank 1 from rank 0
			return nil
		}
		return w.Write(ev)
	})
	done := make(chan error, 1)
	go func() {
		done <- run([]string{"-q", "--time-correct", "-o", t.TempDir(), dir}, io.Discard, io.Discard)
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("no error for sends without receives")
		}
		t.Log(err)
	case <-time.After(60 * time.Second):
		t.Fatal("scout --time-correct hangs on sends without receives")
	}
}
