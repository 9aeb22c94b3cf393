package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"scout/internal/tracetest"
)

// TestCorrectArchive writes the corrected copy of every trace with clock
// violations and checks that it is valid OTF2 (otf2-print reads it, when
// installed), has no clock-condition violation left, and analyzes to the
// values of the corrected analysis of the original (expected-tc/).
func TestCorrectArchive(t *testing.T) {
	printer, _ := exec.LookPath("otf2-print")
	n := 0
	for _, tr := range tracetest.All(t) {
		if !tr.Corrected() {
			continue
		}
		n++
		t.Run(tr.Name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "corrected")
			var stderr bytes.Buffer
			if err := run([]string{"correct", "-o", out, tr.Dir}, io.Discard, &stderr); err != nil {
				t.Fatalf("scout correct: %v\n%s", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), "Timestamps corrected: ") {
				t.Errorf("no statistics printed:\n%s", stderr.String())
			}
			anchor := filepath.Join(out, "traces.otf2")
			if printer != "" {
				if b, err := exec.Command(printer, anchor).CombinedOutput(); err != nil {
					t.Fatalf("otf2-print: %v\n%s", err, tail(b))
				}
			}
			csv := filepath.Join(t.TempDir(), "scout.csv")
			stderr.Reset()
			if err := run([]string{"-o", t.TempDir(), "--csv", csv, out}, io.Discard, &stderr); err != nil {
				t.Fatalf("scout on the corrected archive: %v\n%s", err, stderr.String())
			}
			if strings.Contains(stderr.String(), "clock condition violations") {
				t.Errorf("the corrected archive has clock-condition violations:\n%s", stderr.String())
			}
			got, err := tracetest.ReadCSV(csv)
			if err != nil {
				t.Fatal(err)
			}
			want, err := tracetest.ReadCSV(tr.Expected("scout.csv"))
			if err != nil {
				t.Fatal(err)
			}
			if d := tracetest.Diff(got.Without(ownMetrics()...), want, 20); len(d) > 0 {
				t.Errorf("the corrected archive analyzes to other values than --time-correct (%d cells):\n%s", len(d), strings.Join(d, "\n"))
			}
		})
	}
	if n == 0 {
		t.Fatal("no trace with clock violations and expected-tc/ found")
	}
}

func tail(b []byte) []byte {
	if len(b) > 2000 {
		return b[len(b)-2000:]
	}
	return b
}

// TestCorrectUsage checks the command's mistakes: no output, an output
// that exists (never overwritten).
func TestCorrectUsage(t *testing.T) {
	tr := filepath.Join(tracetest.Root(), "testdata", "traces-clc", "ps_ccv_wait_nxn_np4")
	existing := t.TempDir()
	marker := filepath.Join(existing, "keep")
	if err := os.WriteFile(marker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no output", []string{"correct", tr}, "-o/--output OUT is required"},
		{"no trace", []string{"correct", "-o", filepath.Join(t.TempDir(), "x")}, "expected one trace argument"},
		{"output exists", []string{"correct", "-q", "-o", existing, tr}, "exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(tc.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if b, err := os.ReadFile(marker); err != nil || string(b) != "x" {
		t.Errorf("the existing output was touched: %q, %v", b, err)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(existing), ".*.tmp-*")); len(m) > 0 {
		t.Errorf("temporary archives left behind: %v", m)
	}
}
