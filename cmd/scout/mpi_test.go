package main

import (
	"bytes"
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
