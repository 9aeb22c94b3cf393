package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"scout/internal/tracetest"
)

// TestTracegenClosedForm generates traces with `scout tracegen`, analyzes
// them with scout, and checks every closed-form value the generator
// reports (time, visits and the wait states it injects) against the
// analysis: same cells, within 1e-9.
func TestTracegenClosedForm(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"default", nil},
		{"late_sender", []string{"--ranks", "8", "--phase", "late_sender:work=1ms,delay=10ms"}},
		{"jitter", []string{"--ranks", "5", "--iterations", "4", "--seed", "7",
			"--phase", "compute:work=2ms,imbalance=500us,jitter=1ms",
			"--phase", "late_sender:work=1ms,delay=3ms,jitter=333us",
			"--phase", "sendrecv_ring:work=1ms,delay=2ms,jitter=1ms",
			"--phase", "wait_nxn:work=1ms,imbalance=1ms",
			"--phase", "wait_barrier:work=1ms,imbalance=1ms,jitter=142us",
			"--phase", "late_broadcast:work=1ms,delay=4ms,jitter=1ms"}},
		{"single", []string{"--ranks", "1", "--phase", "compute", "--phase", "allreduce", "--phase", "bcast"}},
		{"events", []string{"--ranks", "3", "--events", "20000", "--phase", "ring:jitter=1ms", "--phase", "barrier:imbalance=1ms"}},
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
			for _, d := range tracetest.Diff(have.Only(ms...), want, 20) {
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
	} {
		err := run(tc.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("scout %s: error %v, want one containing %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}
