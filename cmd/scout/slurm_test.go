package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"scout/internal/tracetest"
)

// copyDir copies a trace directory.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSlurmEpilog runs the job-epilogue hook as SLURM would after a
// traced job (simulated: SLURM variables, no SLURM installation) and
// checks that it analyzed the newest experiment of the submit directory.
func TestSlurmEpilog(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "scout")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	submit := filepath.Join(tmp, "job")
	exp := filepath.Join(submit, "scorep-20261122_1200_4711")
	copyDir(t, filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender"), exp)
	os.RemoveAll(filepath.Join(exp, "expected"))
	hook := filepath.Join(tracetest.Root(), "hpc", "slurm", "epilog.sh")
	cmd := exec.Command("bash", hook)
	cmd.Env = append(os.Environ(), "SLURM_SUBMIT_DIR="+submit, "SLURM_PROCID=0", "SLURM_NTASKS=4",
		"SCOUT="+bin, "SCOUT_MPI=/nonexistent/scout-mpi", "PATH=/usr/bin:/bin")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("epilog: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "done:") {
		t.Errorf("epilog output:\n%s", out)
	}
	stat, err := os.ReadFile(filepath.Join(exp, "trace.stat"))
	if err != nil {
		t.Fatalf("no trace.stat: %v\n%s", err, out)
	}
	if !strings.Contains(string(stat), "mpi_latesender") {
		t.Errorf("trace.stat lacks the Late Sender:\n%s", stat)
	}
	// A second call finds the analysis done and leaves it alone.
	again := exec.Command("bash", hook)
	again.Env = cmd.Env
	out, _ = again.CombinedOutput()
	if !strings.Contains(string(out), "already analyzed") {
		t.Errorf("second run:\n%s", out)
	}
}
