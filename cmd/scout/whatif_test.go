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

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"scout/analysis"
	"scout/internal/tracetest"
	"scout/patterns"
)

// genTrace writes a tracegen trace with args into a temporary directory.
func genTrace(t *testing.T, args ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace")
	var stderr bytes.Buffer
	if err := run(append([]string{"tracegen", "-q", "-o", dir}, args...), io.Discard, &stderr); err != nil {
		t.Fatalf("scout tracegen: %v\n%s", err, stderr.String())
	}
	return dir
}

// predict runs the what-if prediction w on trace.
func predict(t *testing.T, trace string, w *analysis.WhatIf) *patterns.Prediction {
	t.Helper()
	rep, err := analysis.Run(context.Background(), analysis.Plan{Trace: trace, WhatIf: w, Patterns: []patterns.Pattern{}})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Prediction
}

// TestWhatIfByHand checks predictions against values derived by hand on
// tracegen's closed-form scenarios (g = 1 µs is the gap between records,
// W the work, D rank 0's delay, I the imbalance per rank).
func TestWhatIfByHand(t *testing.T) {
	const (
		ms = 1e-3
		g  = 1e-6
		W  = 1 * ms
		D  = 10 * ms
		I  = 1 * ms
	)
	chain := []string{"--ranks", "3", "--iterations", "1", "--phase", "delay_chain:work=1ms,delay=10ms"}
	nxn := []string{"--ranks", "4", "--iterations", "1", "--phase", "delay_nxn:work=1ms,imbalance=1ms"}
	tests := []struct {
		name string
		gen  []string
		h    analysis.Hypothesis
		gain float64 // T − T′
	}{
		// Rank 0 computes W+D, then sends to rank 1, which waits D+g in
		// MPI_Recv and sends to rank 2 (which waits D+5g). With rank 0's
		// compute shrunk to W (x = D), rank 0 sends D earlier: rank 1's
		// receive ends at the later of its own progress without the wait
		// (D+g earlier) and the send's new time (D earlier), D earlier;
		// likewise rank 2; MPI_Finalize, which all entered at the same
		// time, keeps every rank D earlier: T′ = T − D.
		{"late sender's work less x", chain, analysis.Hypothesis{Shrinks: []analysis.Shrink{{Name: "compute", Factor: W / (W + D)}}, Ranks: []int{0}}, D},
		// Rank 0's compute takes no time: rank 1's receive can end no
		// earlier than its own progress without the wait, D+g; rank 2 then
		// gains D+g as well (its own wait, D+5g, is longer), and the ranks
		// reach MPI_Finalize D+g (rank 0: W+D) earlier: T′ = T − (D+g),
		// the chain's gain is bounded by the receivers' own work.
		{"late sender's work none", chain, analysis.Hypothesis{Shrinks: []analysis.Shrink{{Name: "compute", Factor: 0}}, Ranks: []int{0}}, D + g},
		// Rank 1's MPI_Recv taking no time saves only its own 2g after the
		// message came: rank 0, which ends the run, is unchanged.
		{"waiting receive", chain, analysis.Hypothesis{Shrinks: []analysis.Shrink{{Name: "MPI_Recv", Factor: 0}}, Ranks: []int{1}}, 0},
		// Every receive finds its message on time: ranks 1 and 2 gain, but
		// rank 0 still ends the run.
		{"late senders removed", chain, analysis.Hypothesis{Remove: patterns.WaitsLateSender}, 0},
		// MPI_Allreduce on 4 ranks, rank r computing W + rI: rank 3 is the
		// slowest. Without its compute, the second slowest (rank 2, I
		// earlier) is last: everyone leaves I earlier.
		{"slowest member", nxn, analysis.Hypothesis{Shrinks: []analysis.Shrink{{Name: "compute", Factor: 0}}, Ranks: []int{3}}, I},
		// The slowest member half as slow: rank 3 computes (W+3I)/2 = 2 ms,
		// before ranks 1 (2 ms, the same) and 2 (3 ms): the run gains I.
		{"slowest member halved", nxn, analysis.Hypothesis{Shrinks: []analysis.Shrink{{Name: "delay_nxn/compute", Factor: 0.5}}, Ranks: []int{3}}, I},
		// Every rank's compute halved: rank 3 enters (W+3I)/2 = 2 ms
		// earlier.
		{"all halved", nxn, analysis.Hypothesis{Shrinks: []analysis.Shrink{{Name: "compute", Factor: 0.5}}}, (W + 3*I) / 2},
		// No wait at the allreduce: rank 3 still ends last.
		{"N×N removed", nxn, analysis.Hypothesis{Remove: patterns.WaitsNxN}, 0},
		// The identity: factor 1 changes nothing.
		{"factor 1", nxn, analysis.Hypothesis{Shrinks: []analysis.Shrink{{Name: "compute", Factor: 1}}}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := predict(t, genTrace(t, tc.gen...), &analysis.WhatIf{Hypotheses: []analysis.Hypothesis{tc.h}})
			if got := p.T() - p.Predicted(0); math.Abs(got-tc.gain) > 1e-12 {
				t.Errorf("gain %.12g s (T %.9f, T′ %.9f), want %.12g", got, p.T(), p.Predicted(0), tc.gain)
			}
		})
	}
}

// TestWhatIfIdentity checks that a prediction that changes nothing is
// the measured run to the bit, on every bundled trace (with a ranking
// in the same pass).
func TestWhatIfIdentity(t *testing.T) {
	traces := tracetest.Archives(t)
	traces = append(traces, tracetest.Trace{Name: "generated", Dir: genTrace(t, "--ranks", "6", "-i", "2")})
	for _, tr := range traces {
		// all messages eager, the large ones in rendezvous mode, all of
		// them in rendezvous mode
		for _, limit := range []uint64{0, 64 << 10, 1} {
			t.Run(fmt.Sprintf("%s/eager-limit=%d", tr.Name, limit), func(t *testing.T) {
				w := &analysis.WhatIf{Hypotheses: []analysis.Hypothesis{{}, {Shrinks: []analysis.Shrink{{Name: "MPI_Recv", Factor: 1}}}}, Rank: 3, EagerLimit: limit}
				p := predict(t, tr.Dir, w)
				for k := range 2 {
					if p.Predicted(k) != p.T() {
						t.Errorf("hypothesis %d: T′ = %.17g, T = %.17g", k, p.Predicted(k), p.T())
					}
				}
				if len(p.Ends) < 2+len(p.Candidates) {
					t.Errorf("%d predictions for %d candidates", len(p.Ends), len(p.Candidates))
				}
			})
		}
	}
}

// TestWhatIfSeparately checks that hypotheses predicted together give
// what each gives alone.
func TestWhatIfSeparately(t *testing.T) {
	dir := genTrace(t, "--ranks", "5", "-i", "3", "--phase", "halo_2d:jitter=1ms", "--phase", "wait_nxn:imbalance=100us",
		"--phase", "late_broadcast:delay=1ms", "--phase", "early_scan:jitter=1ms", "--phase", "late_sender_nb:delay=1ms")
	hs := []analysis.Hypothesis{
		{Shrinks: []analysis.Shrink{{Name: "compute", Factor: 0.25}}},
		{Shrinks: []analysis.Shrink{{Name: "compute", Factor: 0}}, Ranks: []int{0, 2}},
		{Remove: patterns.WaitsLateSender | patterns.WaitsNxN},
		{Remove: patterns.WaitsLateBroadcast | patterns.WaitsEarlyScan, Ranks: []int{4}},
		{Shrinks: []analysis.Shrink{{Name: "halo_2d/compute", Factor: 2}}},
	}
	all := predict(t, dir, &analysis.WhatIf{Hypotheses: hs})
	for k, h := range hs {
		one := predict(t, dir, &analysis.WhatIf{Hypotheses: []analysis.Hypothesis{h}})
		if one.Predicted(0) != all.Predicted(k) || one.Selected[0] != all.Selected[k] {
			t.Errorf("%v: alone T′ %.17g (changed %.17g), together %.17g (%.17g)", h, one.Predicted(0), one.Selected[0], all.Predicted(k), all.Selected[k])
		}
	}
	if all.Predicted(0) >= all.T() {
		t.Errorf("compute a quarter: T′ %.9f, T %.9f", all.Predicted(0), all.T())
	}
	if all.Predicted(4) <= all.T() {
		t.Errorf("compute twice as long: T′ %.9f, T %.9f", all.Predicted(4), all.T())
	}
}

// TestWhatIfBadSelections checks that bad selections give clear errors.
func TestWhatIfBadSelections(t *testing.T) {
	dir := genTrace(t, "--ranks", "3", "-i", "1")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--shrink", "nosuch=0"}, `no region named "nosuch"`},
		{[]string{"--shrink", "main/nosuch=0"}, `no region named "nosuch"`},
		{[]string{"--shrink", "compute=-1"}, "at least 0"},
		{[]string{"--shrink", "compute=x"}, "at least 0"},
		{[]string{"--shrink", "=1"}, "no region"},
		{[]string{"--shrink", "compute", "--ranks", ","}, "names no rank"},
		{[]string{"--shrink", "compute", "--ranks", "5"}, "rank 5 is not in the trace (ranks 0-2)"},
		{[]string{"--shrink", "compute", "--ranks", "2-1"}, "not a range"},
		{[]string{"--remove", "mpi_nosuch"}, "not a removable wait-state metric"},
		{[]string{}, "nothing to predict"},
		{[]string{"--rank", "3", "--shrink", "compute"}, "take no --shrink"},
		{[]string{"--sources", "2", "--remove", "mpi_latesender"}, "take no --shrink or --remove"},
		{[]string{"--rank", "-1"}, "at least 1"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			err := run(append(append([]string{"whatif", "-q"}, tc.args...), dir), io.Discard, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestWhatIfCommand checks the command's table on the chain.
func TestWhatIfCommand(t *testing.T) {
	dir := genTrace(t, "--ranks", "3", "--iterations", "1", "--phase", "delay_chain:work=1ms,delay=10ms")
	var out bytes.Buffer
	if err := run([]string{"whatif", "-q", "--shrink", "compute=0", "--ranks", "0", dir}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			got = append(got, strings.Join(f, " "))
		}
	}
	want := []string{
		"measured run time T = 0.011028 s (84 events)",
		"changed (s) predicted T' (s) gain (s) gain hypothesis",
		"0.011000 0.001027 0.010001 90.7 % compute=0, on ranks 0",
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// the ranking: rank 0's compute first
	out.Reset()
	if err := run([]string{"whatif", "-q", "--rank", "2", dir}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "99.7 %      tracegen/main/delay_chain/compute") {
		t.Errorf("ranking:\n%s", out.String())
	}
	// the delay sources: rank 0's compute delays rank 1 by D, which
	// delays rank 2 by D (short- and long-term costs 2D); without it
	// the run gains D+g, as "late sender's work none" in TestWhatIfByHand
	out.Reset()
	if err := run([]string{"whatif", "-q", "--sources", "1", dir}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "0.011000          0.001027  0.010001  90.7 %      tracegen/main/delay_chain/compute on rank 0 (delay cost 0.020000 s)") {
		t.Errorf("delay sources:\n%s", out.String())
	}
}

// TestWhatIfWrite checks the predicted trace (--write): the OTF2 tools
// and scout read it, its run time is the predicted one, and its wait
// states are those of the predicted run; on the chain with rank 2's
// compute 21 times longer (W → 21W), rank 1's 4-byte send to rank 2
// waits for the receive in rendezvous mode (--eager-limit 1), not when
// eager.
func TestWhatIfWrite(t *testing.T) {
	printer, _ := exec.LookPath("otf2-print")
	dir := genTrace(t, "--ranks", "3", "--iterations", "1", "--phase", "delay_chain:work=1ms,delay=10ms")
	for _, tc := range []struct {
		limit string
		lr    float64 // mpi_latereceiver of rank 1's MPI_Send
	}{
		// Rank 2 enters MPI_Recv at 13g+W (times from the trace's
		// begin), now 20W later; rank 1 enters MPI_Send at 17g+W+D and
		// waits until then: 20W − D − 4g = 9.996 ms.
		{"1", 20e-3 - 10e-3 - 4e-6},
		{"0", 0},
	} {
		t.Run("eager-limit="+tc.limit, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "predicted")
			var stdout, stderr bytes.Buffer
			args := []string{"whatif", "-q", "--eager-limit", tc.limit, "--shrink", "compute=21", "--ranks", "2", "--write", out, dir}
			if err := run(args, &stdout, &stderr); err != nil {
				t.Fatalf("scout whatif --write: %v\n%s", err, stderr.String())
			}
			if err := run(args, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "exists") {
				t.Errorf("writing over the predicted archive: %v", err)
			}
			if printer != "" {
				if b, err := exec.Command(printer, filepath.Join(out, "traces.otf2")).CombinedOutput(); err != nil {
					t.Fatalf("otf2-print: %v\n%s", err, tail(b))
				}
			}
			want := predict(t, dir, &analysis.WhatIf{EagerLimit: map[string]uint64{"1": 1, "0": 0}[tc.limit],
				Hypotheses: []analysis.Hypothesis{{Shrinks: []analysis.Shrink{{Name: "compute", Factor: 21}}, Ranks: []int{2}}}})
			got := predict(t, out, &analysis.WhatIf{Hypotheses: []analysis.Hypothesis{{}}})
			if math.Abs(got.T()-want.Predicted(0)) > 1e-12 || math.Abs(want.Predicted(0)-want.T()-9.995e-3) > 1e-12 {
				t.Errorf("the predicted trace runs %.12f s, the prediction says %.12f s (measured %.12f s)", got.T(), want.Predicted(0), want.T())
			}
			csv := filepath.Join(t.TempDir(), "scout.csv")
			if err := run([]string{"-q", "-o", t.TempDir(), "--csv", csv, out}, io.Discard, &stderr); err != nil {
				t.Fatalf("scout on the predicted archive: %v\n%s", err, stderr.String())
			}
			cells, err := tracetest.ReadCSV(csv)
			if err != nil {
				t.Fatal(err)
			}
			lr := 0.0
			for k, v := range cells.Only("mpi_latereceiver") {
				if k.Callpath == "tracegen/main/delay_chain/MPI_Send" && k.Rank == "1" {
					lr = v
				} else {
					t.Errorf("mpi_latereceiver %s %s = %g", k.Callpath, k.Rank, v)
				}
			}
			if math.Abs(lr-tc.lr) > 1e-12 {
				t.Errorf("rank 1 waits %.12g s for rank 2's receive, want %.12g", lr, tc.lr)
			}
		})
	}
}
