package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/analysis"
	"scout/combine"
	"scout/internal/tracetest"
	"scout/patterns"
)

// analyzeComm analyzes the trace in dir in-process and returns the report.
func analyzeComm(t *testing.T, p analysis.Plan) *combine.Report {
	t.Helper()
	rep, err := analysis.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Comm == nil {
		t.Fatal("the report has no communication matrix")
	}
	return rep
}

// statTotals returns each rank's point-to-point traffic as the message
// statistics of rep count it, summed over call paths and threads: sent
// (comms_send, bytes_sent, syncs_send) and received (comms_recv,
// bytes_rcvd, syncs_recv).
func statTotals(t *testing.T, rep *combine.Report) []combine.CommTotal {
	t.Helper()
	id := map[string]int{}
	for i, m := range rep.Metrics {
		id[m.Name] = i
	}
	ranks := 0
	for _, p := range rep.Placements {
		ranks = max(ranks, p.Rank+1)
	}
	out := make([]combine.CommTotal, ranks)
	for _, res := range rep.Results {
		r := rep.Placements[res.Location].Rank
		sum := func(name string) uint64 {
			i, ok := id[name]
			if !ok {
				t.Fatalf("no metric %s", name)
			}
			var s float64
			for _, v := range res.Row(i) {
				s += v
			}
			return uint64(s)
		}
		tot := &out[r]
		tot.Sent.Messages += sum("comms_send")
		tot.Sent.Bytes += sum("bytes_sent")
		tot.Sent.Syncs += sum("syncs_send")
		tot.Received.Messages += sum("comms_recv")
		tot.Received.Bytes += sum("bytes_rcvd")
		tot.Received.Syncs += sum("syncs_recv")
	}
	return out
}

// TestCommMatchesStatistics: on every reference trace, the sums of each
// rank's row of the communication matrix are its comms_send,
// bytes_sent and syncs_send, the sums of its column its comms_recv,
// bytes_rcvd and syncs_recv (every message sent is received), and the
// size histogram counts every message once.
func TestCommMatchesStatistics(t *testing.T) {
	for _, tr := range tracetest.All(t) {
		t.Run(tr.Name, func(t *testing.T) {
			rep := analyzeComm(t, analysis.Plan{Trace: tr.Dir, TimeCorrect: tr.Corrected(), Skip: patterns.AllParts})
			want := statTotals(t, rep)
			if n := rep.Comm.Ranks(); n > len(want) {
				t.Fatalf("the matrix has rank %d, the trace %d ranks", n-1, len(want))
			}
			if d := cmp.Diff(want, rep.Comm.Totals(len(want))); d != "" {
				t.Errorf("matrix sums differ from the message statistics (-statistics +matrix):\n%s", d)
			}
			t.Logf("%d pairs, %+v", len(rep.Comm.Pairs), rep.Comm.Total())
			var sizes uint64
			for _, n := range rep.Comm.Sizes {
				sizes += n
			}
			if tot := rep.Comm.Total(); sizes != tot.Messages+tot.Syncs {
				t.Errorf("the size histogram counts %d messages, the matrix %d", sizes, tot.Messages+tot.Syncs)
			}
			for i, p := range rep.Comm.Pairs {
				if p.Messages == 0 && p.Syncs == 0 {
					t.Errorf("pair %+v without messages", p)
				}
				if i > 0 {
					if q := rep.Comm.Pairs[i-1]; q.From > p.From || q.From == p.From && q.To >= p.To {
						t.Errorf("pairs out of order: %+v before %+v", q, p)
					}
				}
			}
		})
	}
}

// gridNeighbours lists the neighbours of rank r in the non-periodic
// d0 × d1 grid (row-major).
func gridNeighbours(d0, d1, r int) []int {
	i, j := r/d1, r%d1
	var nb []int
	for _, c := range [][2]int{{i - 1, j}, {i + 1, j}, {i, j - 1}, {i, j + 1}} {
		if c[0] >= 0 && c[0] < d0 && c[1] >= 0 && c[1] < d1 {
			nb = append(nb, c[0]*d1+c[1])
		}
	}
	return nb
}

// TestCommClosedForm generates a trace whose traffic is known, per pair
// and size, and checks the analysis's matrix, histogram and CSV.
func TestCommClosedForm(t *testing.T) {
	const n, iters, d0, d1 = 12, 3, 3, 4
	dir := filepath.Join(t.TempDir(), "trace")
	args := []string{"tracegen", "-q", "-o", dir, "--ranks", fmt.Sprint(n), "--iterations", fmt.Sprint(iters),
		"--phase", "ring:jitter=1ms", "--phase", "late_sender:delay=1ms", "--phase", "allreduce:imbalance=1ms",
		"--phase", "master_worker:work=1ms,jitter=1ms", "--phase", fmt.Sprintf("halo2d:work=1ms,dims=%dx%d", d0, d1),
		"--phase", fmt.Sprintf("wavefront:work=1ms,dims=%dx%d", d0, d1), "--phase", "late_sender_nb:delay=1ms"}
	var stderr bytes.Buffer
	if err := run(args, io.Discard, &stderr); err != nil {
		t.Fatalf("tracegen: %v\n%s", err, stderr.String())
	}
	// every message is 4 bytes (one MPI_INT) but the halo's 1 KiB
	const small, halo = 4, 1024
	type key struct{ from, to int32 }
	msgs := map[key]uint64{}  // 4-byte messages per pair
	halos := map[key]uint64{} // halo messages per pair
	for r := range n {
		msgs[key{int32(r), int32((r + 1) % n)}] += iters // ring
		if r > 0 {
			msgs[key{0, int32(r)}] += iters // master → worker
			msgs[key{int32(r), 0}] += iters // worker → master
		}
		for _, q := range gridNeighbours(d0, d1, r) {
			halos[key{int32(r), int32(q)}] += iters
			if q > r { // the wavefront sweeps down and right
				msgs[key{int32(r), int32(q)}] += iters
			}
		}
	}
	msgs[key{0, 1}] += 2 * iters // late_sender, late_sender_nb
	want := &combine.CommStats{Sizes: make([]uint64, patterns.CommSizeBin(halo)+1)}
	for from := range int32(n) {
		for to := range int32(n) {
			k := key{from, to}
			if msgs[k]+halos[k] > 0 {
				want.Pairs = append(want.Pairs, combine.CommPair{From: from, To: to, Messages: msgs[k] + halos[k],
					Bytes: small*msgs[k] + halo*halos[k]})
				want.Sizes[patterns.CommSizeBin(small)] += msgs[k]
				want.Sizes[patterns.CommSizeBin(halo)] += halos[k]
			}
		}
	}
	for _, skip := range []patterns.Parts{0, patterns.AllParts} {
		rep := analyzeComm(t, analysis.Plan{Trace: dir, Skip: skip})
		if d := cmp.Diff(want, rep.Comm); d != "" {
			t.Errorf("skip %b: (-want +got):\n%s", skip, d)
		}
	}
	var b bytes.Buffer
	if err := combine.WriteCommCSV(&b, want); err != nil {
		t.Fatal(err)
	}
	csv := "from,to,messages,bytes,syncs\n"
	for _, p := range want.Pairs {
		csv += fmt.Sprintf("%d,%d,%d,%d,%d\n", p.From, p.To, p.Messages, p.Bytes, p.Syncs)
	}
	if d := cmp.Diff(csv, b.String()); d != "" {
		t.Errorf("WriteCommCSV (-want +got):\n%s", d)
	}
	b.Reset()
	if err := combine.WriteSizeCSV(&b, want); err != nil {
		t.Fatal(err)
	}
	sizes := "min_bytes,max_bytes,messages\n0,0,0\n1,1,0\n2,3,0\n"
	sizes += fmt.Sprintf("4,7,%d\n8,15,0\n16,31,0\n32,63,0\n64,127,0\n128,255,0\n256,511,0\n512,1023,0\n1024,2047,%d\n",
		want.Sizes[3], want.Sizes[11])
	if d := cmp.Diff(sizes, b.String()); d != "" {
		t.Errorf("WriteSizeCSV (-want +got):\n%s", d)
	}
}

// TestCommMPIMatchesInProcess: under mpirun, with one process per rank
// and with fewer processes (hosting blocks of ranks), the report's
// traffic is the in-process run's.
// The MPI processes are this package's test binary built with the mpi
// tag, running TestCommMPIChild.
func TestCommMPIMatchesInProcess(t *testing.T) {
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not installed (apt-get install openmpi-bin libopenmpi-dev)")
	}
	bin := filepath.Join(t.TempDir(), "scout-mpi.test")
	if out, err := exec.Command("go", "test", "-tags", "mpi", "-c", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building the MPI test binary: %v\n%s", err, out)
	}
	root := tracetest.Root()
	tests := []struct {
		trace string
		nps   []int // process counts (-short: the first)
	}{
		{"testdata/traces/ps_mixed_np8", []int{2, 3, 8}},
		{"testdata/traces/ps_wavefront", []int{2}},
		{"testdata/traces-hybrid/omp_late_sender_np2t2", []int{2}},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.trace), func(t *testing.T) {
			dir := filepath.Join(root, tc.trace)
			want := analyzeComm(t, analysis.Plan{Trace: dir, Skip: patterns.AllParts}).Comm
			nps := tc.nps
			if testing.Short() {
				nps = nps[:1]
			}
			for _, np := range nps {
				out := filepath.Join(t.TempDir(), "comm.json")
				cmd := mpirun(np, bin, "-test.run", "^TestCommMPIChild$")
				cmd.Env = append(cmd.Env, "SCOUT_COMM_TRACE="+dir, "SCOUT_COMM_OUT="+out)
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("mpirun -np %d: %v\n%s", np, err, b)
				}
				var got *combine.CommStats
				if err := json.Unmarshal(readFile(t, out), &got); err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("-np %d differs from the in-process run (-in-process +mpi):\n%s", np, d)
				}
			}
		})
	}
}

// TestCommMPIChild is a process of TestCommMPIMatchesInProcess: it
// analyzes $SCOUT_COMM_TRACE under MPI and rank 0 writes the report's
// traffic as JSON to $SCOUT_COMM_OUT. It skips when not started so.
func TestCommMPIChild(t *testing.T) {
	dir, out := os.Getenv("SCOUT_COMM_TRACE"), os.Getenv("SCOUT_COMM_OUT")
	if dir == "" || out == "" {
		t.Skip("a process of TestCommMPIMatchesInProcess")
	}
	if !analysis.MPIBuild {
		t.Fatal("not an MPI build")
	}
	rep, err := analysis.RunMPI(context.Background(), analysis.Plan{Trace: dir, Skip: patterns.AllParts})
	if err != nil {
		t.Fatal(err)
	}
	if rep == nil {
		return // not rank 0
	}
	b, err := json.Marshal(rep.Comm)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkCommCost is BenchmarkAnalyzeGenerated's analysis with and
// without the communication-matrix pattern (a sub-benchmark each, run
// alternately with -count), which measures what the matrix costs.
func BenchmarkCommCost(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "trace")
	args := []string{"tracegen", "-q", "-o", dir, "--ranks", "4", "--events", "5000000",
		"--phase", "compute:imbalance=1ms", "--phase", "late_sender:delay=1ms", "--phase", "ring:jitter=1ms",
		"--phase", "allreduce:imbalance=1ms", "--phase", "barrier:jitter=1ms", "--phase", "bcast:delay=1ms"}
	if err := run(args, io.Discard, io.Discard); err != nil {
		b.Fatal(err)
	}
	var without []patterns.Pattern
	for _, p := range patterns.Patterns {
		if p.Name != "communication matrix" {
			without = append(without, p)
		}
	}
	for _, bc := range []struct {
		name  string
		table []patterns.Pattern
	}{{"with", patterns.Patterns}, {"without", without}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				rep, err := analysis.Run(context.Background(), analysis.Plan{Trace: dir, Patterns: bc.table})
				if err != nil {
					b.Fatal(err)
				}
				if (rep.Comm != nil) != (bc.name == "with") {
					b.Fatalf("%s: Comm %v", bc.name, rep.Comm)
				}
				if tot := rep.Comm.Total(); rep.Comm != nil {
					b.ReportMetric(float64(tot.Messages+tot.Syncs), "sends")
				}
			}
		})
	}
}

// TestCommCSVFlags checks the command's --comm-csv and --sizes-csv: the
// matrix's bytes and messages per sender equal bytes_sent and
// comms_send + syncs_send of the metric CSV, and so does the histogram's
// total.
func TestCommCSVFlags(t *testing.T) {
	out := t.TempDir()
	csvPath, commPath, sizesPath := filepath.Join(out, "m.csv"), filepath.Join(out, "comm.csv"), filepath.Join(out, "sizes.csv")
	tr := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_mixed_np8")
	if err := run([]string{"-q", "-o", out, "--csv", csvPath, "--comm-csv", commPath, "--sizes-csv", sizesPath, tr}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	cells, err := tracetest.ReadCSV(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{} // rank → bytes, messages
	for k, v := range cells {
		w := want[k.Rank]
		switch k.Metric {
		case "bytes_sent":
			w[0] += v
		case "comms_send", "syncs_send":
			w[1] += v
		}
		want[k.Rank] = w
	}
	got := map[string][2]float64{}
	var total [2]float64
	rows := func(path string, n int) [][]float64 {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]float64
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
			f := strings.Split(l, ",")
			if len(f) != n {
				t.Fatalf("%s: %q has %d fields, want %d", path, l, len(f), n)
			}
			var r []float64
			for _, x := range f {
				v, err := strconv.ParseFloat(x, 64)
				if err != nil {
					t.Fatalf("%s: %q: %v", path, l, err)
				}
				r = append(r, v)
			}
			out = append(out, r)
		}
		return out
	}
	for _, r := range rows(commPath, 5) { // from,to,messages,bytes,syncs
		g := got[strconv.Itoa(int(r[0]))]
		g[0] += r[3]
		g[1] += r[2] + r[4]
		got[strconv.Itoa(int(r[0]))] = g
		total[1] += r[2] + r[4]
	}
	for k, w := range want {
		if w == ([2]float64{}) {
			delete(want, k)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("bytes and messages per sender (-metrics +matrix):\n%s", d)
	}
	var sizes float64
	for _, r := range rows(sizesPath, 3) { // min_bytes,max_bytes,messages
		sizes += r[2]
	}
	if sizes != total[1] || sizes == 0 {
		t.Errorf("the size histogram counts %v messages, the matrix %v", sizes, total[1])
	}
}
