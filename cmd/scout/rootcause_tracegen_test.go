package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"scout/internal/tracetest"
)

// rootCauseCells runs `scout tracegen` with args and analyzes the trace;
// it returns the non-zero cells (beyond rounding, 1e-12) of metrics as
// "metric callpath rank" → value, without the "tracegen/main/" prefix of
// the call paths.
func rootCauseCells(t *testing.T, metrics []string, args ...string) map[string]float64 {
	t.Helper()
	dir := t.TempDir()
	trace, csv := filepath.Join(dir, "trace"), filepath.Join(dir, "got.csv")
	var stderr bytes.Buffer
	if err := run(append([]string{"tracegen", "-q", "-o", trace}, args...), io.Discard, &stderr); err != nil {
		t.Fatalf("scout tracegen: %v\n%s", err, stderr.String())
	}
	if err := run([]string{"-q", "-o", dir, "--csv", csv, trace}, io.Discard, &stderr); err != nil {
		t.Fatalf("scout: %v\n%s", err, stderr.String())
	}
	cells, err := tracetest.ReadCSV(csv)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for k, v := range cells.Only(metrics...) {
		if math.Abs(v) > 1e-12 {
			got[fmt.Sprintf("%s %s %s", k.Metric, strings.TrimPrefix(k.Callpath, "tracegen/main/"), k.Rank)] = v
		}
	}
	return got
}

// TestRootCauseByHand checks the root-cause metrics of the delay kinds
// against values derived by hand from doc/rootcause/spec.md (independently
// of tracegen/delay.go's closed form). Times are relative to an
// iteration's start T, g is the gap between records (1 µs), c_r the
// compute time of rank r, D = 10 ms rank 0's delay, W = 1 ms the work.
func TestRootCauseByHand(t *testing.T) {
	const (
		ms = 1e-3
		g  = 1e-6
		D  = 10 * ms
	)
	metrics := append([]string{"mpi_latesender", "mpi_barrier_wait", "mpi_wait_nxn"}, rootCauseMetrics...)
	tests := []struct {
		name string
		args []string
		want map[string]float64
	}{
		// The chain on 3 ranks, one iteration. Timelines (gen.iterLength):
		// rank 0 computes W+D and enters MPI_Send at X_0 = 2g+W+D; rank 1
		// computes W, enters MPI_Recv at R_1 = 2g+W, receives at
		// M_1 = X_0+2g, leaves at M_1+g and enters MPI_Send at X_1 = M_1+2g
		// = 6g+W+D; rank 2 enters MPI_Recv at R_2 = 2g+W.
		//   Late Sender waits (§3.1): w_1 = X_0−R_1 = D, w_2 = X_1−R_2 = D+4g.
		//   Every rank's previous synchronisation point with its partner is
		// MPI_Init's Leave (§3.4), which all ranks left at the same time
		// (Init completion 0), so the time maps since then (§4, §5) agree
		// up to the phase and differ only inside it.
		//   Rank 0's send (§7.1): runtimes(Init, s_0) = prefix + phase 2g +
		// compute W+D (MPI_Send itself falls after the cut); no waits
		// between, wsum = 0. Rank 1's map up to r_1: prefix + phase 2g +
		// compute W. d = {compute: D}, den = D, scale = min(w_1/D, 1) = 1:
		//   delay_latesender  compute@0 = D.
		//   Rank 1's send to rank 2: runtimes(Init, s_1) = prefix + phase 3g +
		// compute W + MPI_Recv (M_1+g−R_1 = D+3g); its own wait w_1 = D
		// at MPI_Recv is subtracted (prune: MPI_Recv 3g), wsum = D. Rank 2's
		// map: prefix + phase 2g + compute W. d = {phase: g, MPI_Recv: 3g},
		// d.sum = 4g, den = 4g + D = w_2, scale = 1:
		//   delay_latesender  delay_chain@1 = g, delay_chain/MPI_Recv@1 = 3g.
		//   Propagation (backward pass): rank 2's wait causes nothing
		// (cost 0), so at s_1 sc = 0 and rank 1's wait w_1 gets the cost
		// (scale + sc)·w_1 = D; pwIndLS[s_1] = scale·wsum = D; pwProp[r_1]
		// = scale·w_1 = D. At s_0: sc = cost/den = D/D = 1:
		//   delay_latesender_longterm  compute@0 = 1·D (rank 0 also caused,
		//     through rank 1, rank 2's wait);
		//   mpi_wait_indirect_latesender  MPI_Recv@2 = D (§9: of rank 2's
		//     wait D+4g, D is indirect and 4g direct);
		//   mpi_wait_propagating_ls  MPI_Recv@1 = D (rank 1's whole wait
		//     propagates: none of it is terminal; rank 2's wait is all
		//     terminal).
		{"chain", []string{"--ranks", "3", "--iterations", "1", "--phase", "delay_chain:work=1ms,delay=10ms"},
			map[string]float64{
				"mpi_latesender delay_chain/MPI_Recv 1":               D,
				"mpi_latesender delay_chain/MPI_Recv 2":               D + 4*g,
				"delay_latesender delay_chain/compute 0":              D,
				"delay_latesender delay_chain 1":                      g,
				"delay_latesender delay_chain/MPI_Recv 1":             3 * g,
				"delay_latesender_longterm delay_chain/compute 0":     D,
				"mpi_wait_indirect_latesender delay_chain/MPI_Recv 2": D,
				"mpi_wait_propagating_ls delay_chain/MPI_Recv 1":      D,
			}},
		// The same with a second iteration, which starts at T' = T +
		// length (length = leave of rank 2 + g = M_2+3g = 11g+W+D). Now the
		// previous synchronisation points are the first iteration's send
		// (sender side, pruned to its completion 0) and receive (receiver
		// side, pruned to its completion L(r)−L(s) = g), and the time maps
		// include the idle time in main until T': rank 0 leaves the phase
		// at X_0+3g, rank 1 at X_1+3g = X_0+7g, rank 2 at M_2+2g = X_1+4g.
		//   s_0: rank 0's map: phase 3g, main idle_0, compute W+D; rank 1's:
		// MPI_Recv g, phase 4g, MPI_Send 2g, main idle_0−4g, compute W.
		// d = {compute: D, main: 4g}, den = D+4g, scale = D/(D+4g).
		//   s_1: rank 1's map: MPI_Send 0, phase 4g, main idle_1, compute W,
		// MPI_Recv 3g (wait D subtracted); rank 2's: MPI_Recv g, phase 3g,
		// main idle_1−g, compute W. d = {phase: g, main: g, MPI_Recv: 2g},
		// den = 4g + D = w_2, scale = 1; the costs and propagating waits as
		// in the first iteration, and at s_0 sc = D/(D+4g) = scale.
		// Sums of both iterations:
		//   delay_latesender  compute@0 = D + D²/(D+4g), main@0 = 4gD/(D+4g),
		//     delay_chain@1 = 2g, main@1 = g, MPI_Recv@1 = 3g+2g;
		//   delay_latesender_longterm on rank 0 = its delay_latesender;
		//   indirect@2 = propagating@1 = 2D.
		{"chain, 2 iterations", []string{"--ranks", "3", "--iterations", "2", "--phase", "delay_chain:work=1ms,delay=10ms"},
			map[string]float64{
				"mpi_latesender delay_chain/MPI_Recv 1":               2 * D,
				"mpi_latesender delay_chain/MPI_Recv 2":               2 * (D + 4*g),
				"delay_latesender delay_chain/compute 0":              D + D*D/(D+4*g), // 0.019996001599360255
				"delay_latesender tracegen/main 0":                    4 * g * D / (D + 4*g),
				"delay_latesender delay_chain 1":                      2 * g,
				"delay_latesender tracegen/main 1":                    g,
				"delay_latesender delay_chain/MPI_Recv 1":             5 * g,
				"delay_latesender_longterm delay_chain/compute 0":     D + D*D/(D+4*g),
				"delay_latesender_longterm tracegen/main 0":           4 * g * D / (D + 4*g),
				"mpi_wait_indirect_latesender delay_chain/MPI_Recv 2": 2 * D,
				"mpi_wait_propagating_ls delay_chain/MPI_Recv 1":      2 * D,
			}},
		// A barrier on 4 ranks where rank 0 computes 5 ms longer. Each
		// iteration: ranks 1-3 wait 5 ms (mpi_barrier_wait). Rank 0 enters
		// last, so it is the delayer (§6f). Its previous synchronisation
		// point with all others (groupPrev, §3.4) is the Init Leave, then
		// the previous barrier end, which all ranks left at the same time
		// (completion 0); nobody waits in between, so pw = 0, and each
		// waiting rank's dd (§8.3) is rank 0's map minus its own: {compute:
		// 5 ms}, with scale = wait/dsum = 1 (§8.4). delay_barrier on rank
		// 0's compute = Σ waits = 3 × 5 ms per iteration; no propagating
		// wait, so no long-term cost.
		{"barrier", []string{"--ranks", "4", "--iterations", "2", "--phase", "delay_barrier:work=1ms,delay=5ms"},
			map[string]float64{
				"mpi_barrier_wait delay_barrier/MPI_Barrier 1": 10 * ms,
				"mpi_barrier_wait delay_barrier/MPI_Barrier 2": 10 * ms,
				"mpi_barrier_wait delay_barrier/MPI_Barrier 3": 10 * ms,
				"delay_barrier delay_barrier/compute 0":        2 * 3 * 5 * ms,
			}},
		// MPI_Allreduce on 4 ranks, rank r computing 1 ms + r ms: rank 3 is
		// last and delays ranks 0, 1, 2 by 3, 2, 1 ms per iteration; as for
		// the barrier, delay_n2n on rank 3's compute = 2 × (3+2+1) ms.
		{"allreduce", []string{"--ranks", "4", "--iterations", "2", "--phase", "delay_nxn:work=1ms,imbalance=1ms"},
			map[string]float64{
				"mpi_wait_nxn delay_nxn/MPI_Allreduce 0": 6 * ms,
				"mpi_wait_nxn delay_nxn/MPI_Allreduce 1": 4 * ms,
				"mpi_wait_nxn delay_nxn/MPI_Allreduce 2": 2 * ms,
				"delay_n2n delay_nxn/compute 3":          12 * ms,
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := rootCauseCells(t, metrics, tc.args...)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
