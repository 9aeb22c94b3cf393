package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestSlurmEpilogTimeLimit: an analysis that does not end is stopped
// after SCOUT_TIME_LIMIT, and the hook still exits 0 at once, saying why.
func TestSlurmEpilogTimeLimit(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	tmp := t.TempDir()
	hang := filepath.Join(tmp, "scout")
	if err := os.WriteFile(hang, []byte("#!/bin/bash\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	exp := filepath.Join(tmp, "job", "scorep-1")
	copyDir(t, filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender"), exp)
	cmd := exec.Command("bash", filepath.Join(tracetest.Root(), "hpc", "slurm", "epilog.sh"))
	cmd.Env = append(os.Environ(), "SCOREP_EXPERIMENT_DIRECTORY="+exp, "SLURM_PROCID=0",
		"SCOUT="+hang, "SCOUT_MPI=/nonexistent/scout-mpi", "SCOUT_TIME_LIMIT=1", "PATH=/usr/bin:/bin")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("epilog: %v\n%s", err, out)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the hook took %v with a time limit of 1 s", d)
	}
	if !strings.Contains(string(out), "time limit of 1s") {
		t.Errorf("epilog output does not name the time limit:\n%s", out)
	}
}

// fakeSrun writes an `srun` into dir that starts its command under
// mpirun with --ntasks (default $SLURM_NTASKS) processes, as srun would
// inside an allocation.
func fakeSrun(t *testing.T, dir string) {
	t.Helper()
	script := `#!/bin/bash
n=${SLURM_NTASKS:-1}
while [ $# -gt 0 ]; do
  case "$1" in
    --ntasks=*) n=${1#--ntasks=}; shift ;;
    -n) n=$2; shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
exec mpirun --allow-run-as-root --oversubscribe -np "$n" "$@"
`
	if err := os.WriteFile(filepath.Join(dir, "srun"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestSlurmScriptsWithMPI runs the example batch script and the
// job-epilogue hook inside a simulated allocation whose srun starts
// processes with mpirun: the batch script analyzes with as many processes
// as ranks, the hook, in an allocation of 2 tasks, with 2 processes for
// the trace's 4 ranks. Both must give the in-process results.
func TestSlurmScriptsWithMPI(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	bin := buildMPI(t)
	tmp := t.TempDir()
	fakeSrun(t, tmp)
	src := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender")
	want := t.TempDir()
	if err := run([]string{"-q", "-o", want, src}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	wantStat := readFile(t, filepath.Join(want, "trace.stat"))
	env := append(os.Environ(), "PATH="+tmp+":"+os.Getenv("PATH"), "SLURM_JOB_ID=4711", "SLURM_PROCID=0",
		"SCOUT_MPI="+bin, "SCOUT=/nonexistent/scout", "OMPI_MCA_rmaps_base_oversubscribe=1")

	// The batch script: `srun APP` (here: true), then srun scout-mpi.
	exp := filepath.Join(tmp, "batch", "scorep-4711")
	copyDir(t, src, exp)
	sb := exec.Command("bash", filepath.Join(tracetest.Root(), "hpc", "slurm", "analyze.sbatch"), "true")
	sb.Dir = filepath.Join(tmp, "batch")
	sb.Env = append(env, "SLURM_NTASKS=4", "SCOREP_EXPERIMENT_DIRECTORY="+exp)
	if out, err := sb.CombinedOutput(); err != nil {
		t.Fatalf("batch script: %v\n%s", err, out)
	}
	if got := readFile(t, filepath.Join(exp, "trace.stat")); !bytes.Equal(got, wantStat) {
		t.Error("batch script: trace.stat differs from the in-process run's")
	}
	if !fileExists(filepath.Join(exp, "scout.cubex")) {
		t.Error("batch script: no scout.cubex")
	}

	// The epilogue hook in an allocation of 2 tasks.
	submit := filepath.Join(tmp, "epilog")
	exp = filepath.Join(submit, "scorep-20261123_1200_4711")
	copyDir(t, src, exp)
	os.RemoveAll(filepath.Join(exp, "expected"))
	hook := exec.Command("bash", filepath.Join(tracetest.Root(), "hpc", "slurm", "epilog.sh"))
	hook.Env = append(env, "SLURM_NTASKS=2", "SLURM_SUBMIT_DIR="+submit)
	out, err := hook.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "srun --ntasks=2") || !strings.Contains(string(out), "done:") {
		t.Fatalf("epilog (err %v):\n%s\nscout.log:\n%s", err, out, readFileOr(filepath.Join(exp, "scout.log")))
	}
	if got := readFile(t, filepath.Join(exp, "trace.stat")); !bytes.Equal(got, wantStat) {
		t.Error("epilog: trace.stat differs from the in-process run's")
	}
}

func readFileOr(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
