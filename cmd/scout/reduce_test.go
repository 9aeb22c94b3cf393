package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"scout/analysis"
	"scout/internal/tracetest"
)

// TestReduce checks, on every bundled trace without threads and on
// generated ones, that the reduced archive is valid (otf2-print and scout
// read it) and that predictions that scale its kept regions (by 0, or by
// 0.5 on rank 0, with the same eager limit) equal the original's.
func TestReduce(t *testing.T) {
	printer, _ := exec.LookPath("otf2-print")
	traces := []tracetest.Trace{}
	for _, tr := range tracetest.Archives(t) {
		if !tr.Threads {
			traces = append(traces, tr)
		}
	}
	traces = append(traces,
		tracetest.Trace{Name: "generated", Dir: genTrace(t, "--ranks", "6", "-i", "2")},
		tracetest.Trace{Name: "generated p2p", Dir: genTrace(t, "--ranks", "4", "-i", "3", "--phase", "late_sender:delay=1ms",
			"--phase", "late_sender_nb:delay=1ms", "--phase", "halo_2d:jitter=1ms", "--phase", "master_worker:jitter=1ms",
			"--phase", "wavefront_2d:imbalance=100us", "--phase", "early_scan:jitter=1ms")})
	for _, tr := range traces {
		for _, tc := range []struct {
			name string
			spec analysis.ReduceSpec
		}{
			{"default", analysis.ReduceSpec{KeepShare: 0.01, EagerLimit: 64 << 10}},
			{"all eager, MPI_Recv kept", analysis.ReduceSpec{KeepShare: 0.01, Keep: []string{"MPI_Recv"}}},
			{"rendezvous, 10%", analysis.ReduceSpec{KeepShare: 0.1, EagerLimit: 1}},
		} {
			t.Run(tr.Name+"/"+tc.name, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "reduced")
				res, err := analysis.Reduce(context.Background(), analysis.Plan{Trace: tr.Dir}, tc.spec, out)
				if err != nil {
					t.Fatal(err)
				}
				if printer != "" && tc.name == "default" {
					if b, err := exec.Command(printer, filepath.Join(out, "traces.otf2")).CombinedOutput(); err != nil {
						t.Fatalf("otf2-print: %v\n%s", err, tail(b))
					}
				}
				hs := []analysis.Hypothesis{{}}
				for _, k := range res.Kept {
					hs = append(hs, analysis.Hypothesis{Shrinks: []analysis.Shrink{{Name: k, Factor: 0}}},
						analysis.Hypothesis{Shrinks: []analysis.Shrink{{Name: k, Factor: 0.5}}, Ranks: []int{0}})
				}
				w := &analysis.WhatIf{Hypotheses: hs, EagerLimit: tc.spec.EagerLimit}
				want, got := predict(t, tr.Dir, w), predict(t, out, w)
				if math.Abs(got.T()-want.T()) > 1e-9 {
					t.Errorf("measured run time %.12f, reduced %.12f", want.T(), got.T())
				}
				for k, h := range hs {
					if math.Abs(got.Predicted(k)-want.Predicted(k)) > 1e-9 {
						t.Errorf("%v: T′ %.12f, of the reduced trace %.12f", h, want.Predicted(k), got.Predicted(k))
					}
				}
				t.Logf("kept %q: %d of %d events left out", res.Kept, res.Dropped, res.Events)
			})
		}
	}
}

// TestReduceCommand checks the command's output and that scout analyzes
// the reduced archive.
func TestReduceCommand(t *testing.T) {
	dir := genTrace(t, "--ranks", "3", "--iterations", "1", "--phase", "delay_chain:work=1ms,delay=10ms")
	out := filepath.Join(t.TempDir(), "reduced")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"reduce", "-q", "-o", out, dir}, &stdout, &stderr); err != nil {
		t.Fatalf("scout reduce: %v\n%s", err, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "kept regions: compute\nevents: 84 -> ") {
		t.Errorf("output:\n%s", stdout.String())
	}
	if err := run([]string{"-q", "--single-pass", "-o", t.TempDir(), out}, io.Discard, &stderr); err != nil {
		t.Fatalf("scout on the reduced archive: %v\n%s", err, stderr.String())
	}
	if err := run([]string{"reduce", "-q", "-o", out, dir}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("writing over the reduced archive: %v", err)
	}
}

// TestReduceBadInput checks the reduction's errors.
func TestReduceBadInput(t *testing.T) {
	dir := genTrace(t, "--ranks", "2", "-i", "1")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--keep", "nosuch"}, `no region named "nosuch"`},
		{[]string{"--keep-time", "200%"}, "not a share"},
		{[]string{"--keep-time", "soon"}, "neither a share"},
		{[]string{"--eager-limit", "lots"}, "not a number of bytes"},
	} {
		t.Run(fmt.Sprint(tc.args), func(t *testing.T) {
			err := run(append(append([]string{"reduce", "-q", "-o", filepath.Join(t.TempDir(), "r")}, tc.args...), dir), io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	if err := run([]string{"reduce", "-q", dir}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "required") {
		t.Errorf("no -o: %v", err)
	}
}
