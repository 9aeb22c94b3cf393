package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"scout/internal/tracetest"
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
	a := append([]string{"--allow-run-as-root", "--oversubscribe", "-np", itoa(np)}, args...)
	cmd := exec.Command("mpirun", a...)
	cmd.Env = append(os.Environ(), "OMPI_MCA_rmaps_base_oversubscribe=1")
	return cmd
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestMPIMatchesInProcess runs the MPI version with one process per rank
// on every reference trace and compares its CSV with the in-process run.
func TestMPIMatchesInProcess(t *testing.T) {
	bin := buildMPI(t)
	for _, tr := range tracetest.All(t) {
		t.Run(tr.Name, func(t *testing.T) {
			a, err := otf2.Open(tr.Dir)
			if err != nil {
				t.Fatal(err)
			}
			d, err := a.ReadGlobalDefs()
			if err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			out := filepath.Join(tmp, "mpi.csv")
			cmd := mpirun(len(d.Locations), bin, "-q", "-o", tmp, "--csv", out, tr.Dir)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("mpirun: %v\n%s", err, b)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if want := csvOf(t, tr.Dir); !bytes.Equal(got, []byte(want)) {
				t.Errorf("MPI CSV differs from the in-process CSV")
			}
		})
	}
}

// TestMPIWrongProcessCount checks the message for a process count that
// does not match the trace.
func TestMPIWrongProcessCount(t *testing.T) {
	bin := buildMPI(t)
	dir := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender")
	tmp := t.TempDir()
	b, err := mpirun(3, bin, "-q", "-o", tmp, "--csv", filepath.Join(tmp, "x.csv"), dir).CombinedOutput()
	if err == nil {
		t.Fatal("3 processes for a 4-rank trace succeeded")
	}
	if !strings.Contains(string(b), "mpirun -np 4") {
		t.Errorf("message does not say how to start it:\n%s", b)
	}
}

// TestNoMPIBuildUnderLauncher checks that the pure-Go build refuses to
// run as one of several MPI processes.
func TestNoMPIBuildUnderLauncher(t *testing.T) {
	if mpiBuild {
		t.Skip("MPI build")
	}
	t.Setenv("OMPI_COMM_WORLD_SIZE", "4")
	dir := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender")
	err := run([]string{"-q", "-o", t.TempDir(), dir}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "without MPI support") {
		t.Fatalf("got %v", err)
	}
}

// TestMPIRankKilled kills one rank mid-analysis: the job must fail with
// a message and leave no output files.
func TestMPIRankKilled(t *testing.T) {
	bin := buildMPI(t)
	dir := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_mixed_np4")
	out := t.TempDir()
	cmd := mpirun(4, bin, "-q", "-o", out, "--csv", filepath.Join(out, "x.csv"), dir)
	cmd.Env = append(cmd.Env, "SCOUT_FAULT_KILL_RANK=2")
	b, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("job with a killed rank succeeded:\n%s", b)
	}
	if !strings.Contains(strings.ToLower(string(b)), "signal") && !strings.Contains(string(b), "killed") {
		t.Errorf("no message about the killed rank:\n%s", b)
	}
	if files, _ := os.ReadDir(out); len(files) != 0 {
		t.Errorf("output left behind: %v", files)
	}
}

// peakRSS runs the MPI version on trace and returns every process's peak
// memory in MiB, as its progress report gives it.
func peakRSS(t *testing.T, bin, trace string, np int) []float64 {
	t.Helper()
	tmp := t.TempDir()
	b, err := mpirun(np, bin, "-o", tmp, trace).CombinedOutput()
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
	if skew[2] < base[2]+40 {
		t.Errorf("rank 2: %.1f MiB with 3 M more events, %.1f MiB before: the measurement cannot see the difference", skew[2], base[2])
	}
}
