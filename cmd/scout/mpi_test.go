package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"scout/analysis"
	"scout/internal/tracetest"
	"scout/localtrace"
	"scout/localtrace/otf2"
)

// buildMPI builds the MPI version of scout, or skips the test when MPI
// is not installed.
func buildMPI(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not installed (apt-get install openmpi-bin libopenmpi-dev)")
	}
	bin := filepath.Join(t.TempDir(), "scout-mpi")
	cmd := exec.Command("go", "build", "-tags", "mpi", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the MPI version: %v\n%s", err, out)
	}
	return bin
}

func mpirun(np int, args ...string) *exec.Cmd {
	return mpirunContext(context.Background(), np, args...)
}

// mpirunContext is mpirun, killed when ctx is done.
func mpirunContext(ctx context.Context, np int, args ...string) *exec.Cmd {
	a := append([]string{"--allow-run-as-root", "--oversubscribe", "-np", itoa(np)}, args...)
	cmd := exec.CommandContext(ctx, "mpirun", a...)
	cmd.Env = append(os.Environ(), "OMPI_MCA_rmaps_base_oversubscribe=1")
	return cmd
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestMPIMatchesInProcess runs the MPI version on every reference trace
// with one process per rank (M = N), with one process for all ranks and
// with two, and compares its CSV, report, statistics and time profile with the
// in-process run's.
func TestMPIMatchesInProcess(t *testing.T) {
	bin := buildMPI(t)
	for _, tr := range tracetest.All(t) {
		t.Run(tr.Name, func(t *testing.T) {
			ranks := traceRanks(t, tr.Dir)
			want := t.TempDir()
			if err := run(tr.Args("-q", "-o", want, "--csv", filepath.Join(want, "scout.csv"), "--profile-csv", filepath.Join(want, "profile.csv")), io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			for _, np := range []int{ranks, 1, 2} {
				if np > ranks || (np < ranks && testing.Short()) {
					continue
				}
				got := t.TempDir()
				cmd := mpirun(np, append([]string{bin}, tr.Args("-q", "-o", got, "--csv", filepath.Join(got, "scout.csv"), "--profile-csv", filepath.Join(got, "profile.csv"))...)...)
				if b, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("mpirun -np %d: %v\n%s", np, err, b)
				}
				for _, f := range []string{"scout.csv", "trace.stat", "profile.csv"} {
					if !bytes.Equal(readFile(t, filepath.Join(got, f)), readFile(t, filepath.Join(want, f))) {
						t.Errorf("-np %d: %s differs from the in-process run's", np, f)
					}
				}
				g, w := cubeCells(t, filepath.Join(got, "scout.cubex")), cubeCells(t, filepath.Join(want, "scout.cubex"))
				if !cmp.Equal(g, w) {
					t.Errorf("-np %d: scout.cubex differs from the in-process report: %v", np, tracetest.Diff(g, w, 5))
				}
			}
		})
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMPIWrongProcessCount checks the message for more processes than
// the trace has ranks.
func TestMPIWrongProcessCount(t *testing.T) {
	bin := buildMPI(t)
	dir := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender")
	tmp := t.TempDir()
	b, err := mpirun(5, bin, "-q", "-o", tmp, "--csv", filepath.Join(tmp, "x.csv"), dir).CombinedOutput()
	if err == nil {
		t.Fatal("5 processes for a 4-rank trace succeeded")
	}
	if !strings.Contains(string(b), "at most 4") {
		t.Errorf("message does not say how to start it:\n%s", b)
	}
}

// TestNoMPIBuildUnderLauncher checks that the pure-Go build refuses to
// run as one of several MPI processes.
func TestNoMPIBuildUnderLauncher(t *testing.T) {
	if analysis.MPIBuild {
		t.Skip("MPI build")
	}
	t.Setenv("OMPI_COMM_WORLD_SIZE", "4")
	dir := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender")
	err := run([]string{"-q", "-o", t.TempDir(), dir}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "without MPI support") {
		t.Fatalf("got %v", err)
	}
}

// TestMPIRankFailed kills one process mid-analysis, or makes it panic
// (a bug), with one process per rank and with two ranks per process:
// the job must fail at once (not wait for the failed process in
// MPI_Finalize) with a message and leave no output files.
func TestMPIRankFailed(t *testing.T) {
	bin := buildMPI(t)
	dir := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_mixed_np4")
	for _, tc := range []struct {
		name, env string
		msg       []string // the output has one of these (case-insensitive)
	}{
		{"killed", "SCOUT_FAULT_KILL_RANK=1", []string{"signal", "killed"}},
		{"panicked", "SCOUT_FAULT_PANIC_RANK=1", []string{"rank 1: internal error: fault injection"}},
	} {
		for _, np := range []int{4, 2} {
			t.Run(fmt.Sprintf("%s/np%d", tc.name, np), func(t *testing.T) {
				out := t.TempDir()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				cmd := mpirunContext(ctx, np, bin, "-q", "-o", out, "--csv", filepath.Join(out, "x.csv"), dir)
				cmd.Env = append(cmd.Env, tc.env)
				b, err := cmd.CombinedOutput()
				if ctx.Err() != nil {
					t.Fatalf("the job did not end:\n%s", b)
				}
				if err == nil {
					t.Fatalf("the job succeeded:\n%s", b)
				}
				said := false
				for _, m := range tc.msg {
					said = said || strings.Contains(strings.ToLower(string(b)), m)
				}
				if !said {
					t.Errorf("no message about the failed process (%q):\n%s", tc.msg, b)
				}
				if files, _ := os.ReadDir(out); len(files) != 0 {
					t.Errorf("output left behind: %v", files)
				}
			})
		}
	}
}

// peakRSS runs the MPI version on trace and returns every process's peak
// memory in MiB, as its progress report gives it.
func peakRSS(t *testing.T, bin, trace string, np int, flags ...string) []float64 {
	t.Helper()
	tmp := t.TempDir()
	b, err := mpirun(np, append(append([]string{bin, "-o", tmp}, flags...), trace)...).CombinedOutput()
	if err != nil {
		t.Fatalf("mpirun: %v\n%s", err, b)
	}
	_, line, ok := strings.Cut(string(b), "peak memory per process before combining (rank:MiB):")
	if !ok {
		t.Fatalf("no memory report in the output:\n%s", b)
	}
	line, _, _ = strings.Cut(line, "\n")
	rss := make([]float64, np)
	for _, f := range strings.Fields(line) {
		r, v, _ := strings.Cut(f, ":")
		i, err1 := strconv.Atoi(r)
		x, err2 := strconv.ParseFloat(v, 64)
		if err1 != nil || err2 != nil || i < 0 || i >= np {
			t.Fatalf("bad memory report %q", line)
		}
		rss[i] = x
	}
	return rss
}

// TestMPIMemoryPerRank: with one process per rank, a process's memory
// follows its own rank's trace, not the whole trace. Rank 2 of a
// generated trace gets 10× the events of the others; the other ranks'
// peak memory must stay as in the balanced trace.
func TestMPIMemoryPerRank(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 4.5 M-event trace")
	}
	bin := buildMPI(t)
	dir := t.TempDir()
	balanced, skewed := filepath.Join(dir, "balanced"), filepath.Join(dir, "skewed")
	for _, d := range []string{balanced, skewed} {
		args := []string{"tracegen", "-q", "-o", d, "--ranks", "4", "--events", "1200000", "--phase", "ring:jitter=1ms", "--phase", "allreduce"}
		if err := run(args, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	// Rank 2 enters its first region 1.5 M extra times at once: 3 M more events.
	const extra = 1_500_000
	inserted := false
	rewriteEvents(t, skewed, 2, func(ev *otf2.Event, w *otf2.EventWriter) error {
		if ev.Type == otf2.EvEnter && !inserted {
			inserted = true
			for range extra {
				if err := w.Enter(ev.Time, uint32(ev.Args[0])); err != nil {
					return err
				}
				if err := w.Leave(ev.Time, uint32(ev.Args[0])); err != nil {
					return err
				}
			}
		}
		return w.Write(ev)
	})
	base := peakRSS(t, bin, balanced, 4)
	skew := peakRSS(t, bin, skewed, 4)
	t.Logf("peak MiB per rank: balanced %v, rank 2 with 10x events %v", base, skew)
	for r := range 4 {
		if r == 2 {
			continue
		}
		if skew[r] > base[r]*1.25+8 {
			t.Errorf("rank %d: %.1f MiB with a heavier rank 2, %.1f MiB without: memory follows the total trace", r, skew[r], base[r])
		}
	}
	// the extra events alone take this much (80 %, for the measurement's noise)
	if need := 0.8 * float64(2*extra*unsafe.Sizeof(localtrace.Event{})) / (1 << 20); skew[2] < base[2]+need {
		t.Errorf("rank 2: %.1f MiB with 3 M more events, %.1f MiB before: the measurement cannot see the difference (%.1f MiB)", skew[2], base[2], need)
	}
}

// TestMPIRankZeroInstances: rank 0 does not hold the other processes'
// wait-state instances. Two traces of the same shape, 100 000 iterations
// of MPI_Send from rank 0 to MPI_Recv on rank 1: in one rank 0 is late
// every time (100 000 Late Sender instances on rank 1; as instances
// they would take 4.6 MiB or more on rank 0), in the other never. The
// heap rank 0 holds after combining the results must not differ by more
// than 1 MiB.
func TestMPIRankZeroInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("generates two 2.8 M-event traces")
	}
	bin := buildMPI(t)
	const iters = 100_000
	var heap [2]float64
	for i, phase := range []string{"late_sender:work=1us", "late_sender:work=1us,delay=5us"} {
		dir := filepath.Join(t.TempDir(), "ls")
		if err := run([]string{"tracegen", "-q", "-o", dir, "--ranks", "4", "-i", strconv.Itoa(iters), "--phase", phase}, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		b, err := mpirun(4, bin, "--single-pass", "--no-html", "-o", out, dir).CombinedOutput()
		if err != nil {
			t.Fatalf("mpirun: %v\n%s", err, b)
		}
		_, line, ok := strings.Cut(string(b), "rank 0 holds ")
		if !ok {
			t.Fatalf("no heap report in the output:\n%s", b)
		}
		if heap[i], err = strconv.ParseFloat(strings.Fields(line)[0], 64); err != nil {
			t.Fatalf("bad heap report %q", line)
		}
		// the late trace must have its instances
		stat := string(readFile(t, filepath.Join(out, "trace.stat")))
		count := "0"
		for _, l := range strings.Split(stat, "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "mpi_latesender" {
				count = f[1]
			}
		}
		if want := []string{"0", strconv.Itoa(iters)}[i]; count != want {
			t.Fatalf("trace %d: %s Late Sender instances, want %s\n%s", i, count, want, stat)
		}
	}
	t.Logf("rank 0 heap after combining, MiB: no instances %.1f, %d instances on rank 1 %.1f", heap[0], iters, heap[1])
	if heap[1] > heap[0]+1 {
		t.Errorf("rank 0 holds %.1f MiB with %d instances on rank 1, %.1f MiB without", heap[1], iters, heap[0])
	}
}

// TestMPIMemoryRanks: a process's memory grows with the ranks it hosts,
// not with their square: 1 024 and 4 096 ranks of ~100 events each in
// two processes. With memory linear in the hosted ranks (≈ 50 KiB each
// besides ≈ 20 MiB of its own) the larger run takes ≈ 2.3 times the
// memory; the terms that grew with ranks² (member lists decoded by every
// member, every member's copy of every member's synced flags) made it
// 4.2 times, and would grow on.
func TestMPIMemoryRanks(t *testing.T) {
	if testing.Short() {
		t.Skip("analyzes 4 096 ranks under mpirun")
	}
	bin := buildMPI(t)
	var peak [2]float64
	for i, n := range []string{"1024", "4096"} {
		dir := filepath.Join(t.TempDir(), "ranks")
		if err := run([]string{"tracegen", "-q", "-o", dir, "--ranks", n, "-i", "2"}, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		rss := peakRSS(t, bin, dir, 2, "--single-pass", "--no-html")
		peak[i] = max(rss[0], rss[1])
	}
	t.Logf("peak MiB per process, 1 024 and 4 096 ranks in 2 processes: %.1f, %.1f", peak[0], peak[1])
	if peak[1] > 3.2*peak[0] {
		t.Errorf("4 × the ranks take %.1f × the memory per process (%.1f MiB, %.1f MiB)", peak[1]/peak[0], peak[1], peak[0])
	}
}

// TestMPIDamagedTraces runs the MPI version on traces whose communication
// cannot be matched, with one process per rank and with fewer processes:
// it must end (not hang), exit non-zero, leave no report and print the
// in-process run's message once, on rank 0.
func TestMPIDamagedTraces(t *testing.T) {
	bin := buildMPI(t)
	cases := []struct {
		name, trace string
		damage      func(t *testing.T, dir string)
	}{
		{"receive without a send", "ps_late_sender", func(t *testing.T, dir string) { dropFirstSend(t, dir, 0) }},
		{"tag mismatch", "ps_late_sender", func(t *testing.T, dir string) {
			changed := false
			rewriteEvents(t, dir, 0, func(ev *otf2.Event, w *otf2.EventWriter) error {
				if ev.Type == otf2.EvMpiSend && !changed {
					changed = true
					ev.Args[2] += 1000 // msgTag
				}
				return w.Write(ev)
			})
		}},
		{"collectives of different counts", "ps_wait_barrier", func(t *testing.T, dir string) {
			seen := 0 // the second collective (the first barrier) goes
			rewriteEvents(t, dir, 2, func(ev *otf2.Event, w *otf2.EventWriter) error {
				if ev.Type == otf2.EvMpiCollectiveBegin || ev.Type == otf2.EvMpiCollectiveEnd {
					seen++
					if seen == 3 || seen == 4 {
						return nil
					}
				}
				return w.Write(ev)
			})
		}},
		{"send without a receive", "ps_late_sender", func(t *testing.T, dir string) { dropFirstRecv(t, dir, 1) }},
		{"receive without a send, 8 ranks", "ps_mixed_np8", func(t *testing.T, dir string) { dropFirstSend(t, dir, 3) }},
		{"missing event file", "ps_mixed_np8", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "traces", "5.evt")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "trace")
			copyDir(t, filepath.Join(tracetest.Root(), "testdata", "traces", c.trace), dir)
			os.RemoveAll(filepath.Join(dir, "expected"))
			c.damage(t, dir)
			inproc := run([]string{"-q", "-o", t.TempDir(), dir}, io.Discard, io.Discard)
			if inproc == nil {
				t.Fatal("the in-process run accepts the damaged trace")
			}
			want := "scout: " + inproc.Error() + "\n"
			ranks := 4
			if strings.HasSuffix(c.trace, "np8") {
				ranks = 8
			}
			for _, np := range []int{ranks, 2} {
				out := t.TempDir()
				ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
				cmd := mpirunContext(ctx, np, bin, "-q", "-o", out, dir)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				err := cmd.Run()
				hung := ctx.Err() != nil
				cancel()
				if hung {
					t.Fatalf("-np %d: scout-mpi hangs on the damaged trace", np)
				}
				if err == nil {
					t.Errorf("-np %d: exit status 0 on a damaged trace", np)
				}
				if got := scoutLines(stderr.String()); got != want {
					t.Errorf("-np %d: message differs from the in-process one:\n got: %q\nwant: %q", np, got, want)
				}
				if ents, _ := os.ReadDir(out); len(ents) != 0 {
					t.Errorf("-np %d: the failed run left %d files in the output directory", np, len(ents))
				}
			}
		})
	}
}

// scoutLines returns scout's own message in an mpirun's stderr: from the
// first line starting with "scout: " to the end of that message (mpirun's
// own banners, framed by dashes, are left out).
func scoutLines(s string) string {
	i := strings.Index(s, "scout: ")
	if i < 0 {
		return ""
	}
	s = s[i:]
	if j := strings.Index(s, "\n---"); j >= 0 {
		s = s[:j+1]
	}
	return s
}

// TestMPIDifferentTraces: processes given different archives (an MPMD
// launch) refuse to run instead of merging them.
func TestMPIDifferentTraces(t *testing.T) {
	bin := buildMPI(t)
	a := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender")
	b := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_wait_barrier")
	out := t.TempDir()
	cmd := mpirun(2, bin, "-q", "-o", out, a, ":", "-np", "2", bin, "-q", "-o", out, b)
	got, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("exit status 0 for processes given different traces")
	}
	if !strings.Contains(string(got), "different traces") {
		t.Errorf("output does not say the traces differ:\n%s", got)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("the refused run left %d files", len(ents))
	}
}

// TestMPILauncherRankWrong: a process opens the trace and loads its
// locations while MPI starts, trusting the rank the launcher put in its
// environment; where MPI then gives it another rank (here the launcher's
// variable is shifted by one), it starts over, and the results are the
// same as a normal run's.
func TestMPILauncherRankWrong(t *testing.T) {
	bin := buildMPI(t)
	dir := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_mixed_np4")
	want, got := t.TempDir(), t.TempDir()
	args := func(out string) []string {
		return []string{"--no-html", "-o", out, "--csv", filepath.Join(out, "scout.csv"), dir}
	}
	if b, err := mpirun(4, append([]string{bin, "-q"}, args(want)...)...).CombinedOutput(); err != nil {
		t.Fatalf("mpirun: %v\n%s", err, b)
	}
	shifted := `OMPI_COMM_WORLD_RANK=$(( (OMPI_COMM_WORLD_RANK + 1) % 4 )) exec "$0" "$@"`
	b, err := mpirun(4, append([]string{"sh", "-c", shifted, bin}, args(got)...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("mpirun with shifted ranks: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), "the launcher announced this process as rank 1 of 4, MPI as rank 0 of 4: opening the trace again") {
		t.Errorf("rank 0 does not say it started over:\n%s", b)
	}
	for _, f := range []string{"scout.csv", "trace.stat"} {
		if !bytes.Equal(readFile(t, filepath.Join(got, f)), readFile(t, filepath.Join(want, f))) {
			t.Errorf("%s differs from the normal run's", f)
		}
	}
}

// TestRootCauseOnce: a location that cannot be loaded is named once,
// with its rank, and nothing else is said (the replay never started).
func TestRootCauseOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trace")
	copyDir(t, filepath.Join(tracetest.Root(), "testdata", "traces", "ps_mixed_np8"), dir)
	if err := os.Remove(filepath.Join(dir, "traces", "5.evt")); err != nil {
		t.Fatal(err)
	}
	err := run([]string{"-q", "-o", t.TempDir(), dir}, io.Discard, io.Discard)
	if err == nil {
		t.Fatal("no error for a missing event file")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{"rank 5: otf2: location 5: event file " + filepath.Join(dir, "traces", "5.evt") + " is missing"}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}

// TestMPIRootCauseOddTraces: traces the root-cause passes must take in
// their stride, with one process per rank and with two processes: a rank
// that never communicates (late_sender on 3 ranks: rank 2 only computes
// between MPI_Init and MPI_Finalize), ranks that leave MPI_Finalize and
// end at different times (rank 1's last three records moved 50 µs
// later), and the delay kinds. The MPI runs give the in-process run's
// CSV byte for byte, and the in-process run's root causes of the delay
// kinds are their closed form.
func TestMPIRootCauseOddTraces(t *testing.T) {
	bin := buildMPI(t)
	for _, tc := range []struct {
		name   string
		args   []string
		damage func(t *testing.T, dir string)
	}{
		{"silent rank", []string{"--ranks", "3", "--phase", "late_sender:delay=2ms"}, nil},
		{"uneven ends", []string{"--ranks", "3", "--phase", "late_sender:delay=2ms"}, func(t *testing.T, dir string) {
			a, err := otf2.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			d, err := a.ReadGlobalDefs()
			if err != nil {
				t.Fatal(err)
			}
			n, i := d.Locations[1].NumEvents, uint64(0)
			rewriteEvents(t, dir, 1, func(ev *otf2.Event, w *otf2.EventWriter) error {
				if i++; i > n-3 { // Leave(MPI_Finalize), Leave(main), ProgramEnd
					ev.Time += 50_000
				}
				return w.Write(ev)
			})
		}},
		{"delay kinds", []string{"--ranks", "3", "--phase", "delay_barrier:delay=1ms", "--phase", "delay_chain:delay=2ms"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "trace")
			expect := filepath.Join(t.TempDir(), "expect.csv")
			if err := run(append([]string{"tracegen", "-q", "-o", dir, "--expect", expect}, tc.args...), io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			if tc.damage != nil {
				tc.damage(t, dir)
			}
			want := t.TempDir()
			if err := run([]string{"-q", "-o", want, "--csv", filepath.Join(want, "scout.csv"), dir}, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(tc.name, "delay") {
				exp, err := tracetest.ReadCSV(expect)
				if err != nil {
					t.Fatal(err)
				}
				got, err := tracetest.ReadCSV(filepath.Join(want, "scout.csv"))
				if err != nil {
					t.Fatal(err)
				}
				if len(exp.Only("delay_barrier", "delay_latesender")) == 0 {
					t.Error("the closed form has no root causes")
				}
				for _, d := range tracetest.Diff(got.Only(rootCauseMetrics...), exp.Only(rootCauseMetrics...), 10) {
					t.Error(d)
				}
			}
			for _, np := range []int{3, 2} {
				got := t.TempDir()
				ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
				cmd := mpirunContext(ctx, np, bin, "-q", "-o", got, "--csv", filepath.Join(got, "scout.csv"), dir)
				b, err := cmd.CombinedOutput()
				hung := ctx.Err() != nil
				cancel()
				if hung {
					t.Fatalf("-np %d: hangs", np)
				}
				if err != nil {
					t.Fatalf("-np %d: %v\n%s", np, err, b)
				}
				if !bytes.Equal(readFile(t, filepath.Join(got, "scout.csv")), readFile(t, filepath.Join(want, "scout.csv"))) {
					t.Errorf("-np %d: scout.csv differs from the in-process run's", np)
				}
			}
		})
	}
}

// TestMPIWhatIf checks that what-if predictions under mpirun equal the
// in-process ones, on every reference trace with one process per rank,
// and on the mixed ones also with two processes for all ranks: a
// ranking, with every message in rendezvous mode (which covers the
// eager ones: the sends whose receive came late).
func TestMPIWhatIf(t *testing.T) {
	bin := buildMPI(t)
	for _, tr := range tracetest.All(t) {
		t.Run(tr.Name, func(t *testing.T) {
			ranks := traceRanks(t, tr.Dir)
			for _, limit := range []string{"1"} {
				args := tr.Args("whatif", "-q", "--rank", "4", "--eager-limit", limit)
				var want bytes.Buffer
				if err := run(args, &want, io.Discard); err != nil {
					t.Fatal(err)
				}
				for _, np := range []int{ranks, 2} {
					if np > ranks || (np < ranks && (testing.Short() || !strings.Contains(tr.Name, "mixed"))) {
						continue
					}
					got, err := mpirun(np, append([]string{bin}, args...)...).Output()
					if err != nil {
						t.Fatalf("mpirun -np %d: %v\n%s", np, err, got)
					}
					if !bytes.Equal(got, want.Bytes()) {
						t.Errorf("-np %d, --eager-limit %s: the prediction differs from the in-process one:\n%s\nin-process:\n%s", np, limit, got, want.Bytes())
					}
				}
			}
		})
	}
}

// traceRanks returns the number of MPI ranks of the trace in dir.
func traceRanks(t *testing.T, dir string) int {
	t.Helper()
	a, err := otf2.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := a.ReadGlobalDefs()
	if err != nil {
		t.Fatal(err)
	}
	pl, err := localtrace.Placements(d)
	if err != nil {
		t.Fatal(err)
	}
	ranks := 0
	for _, p := range pl {
		if p.Thread == 0 {
			ranks++
		}
	}
	return ranks
}
