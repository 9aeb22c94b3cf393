package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestInterrupted stops scout with SIGTERM (as a batch system's time
// limit does) at several moments of its run: every run must either
// complete with all its outputs or exit with status 143 leaving no file
// behind, neither a partial output nor a temporary one.
func TestInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a trace and runs scout several times")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "scout")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	trace := filepath.Join(tmp, "trace")
	if err := run([]string{"tracegen", "-q", "-o", trace, "--ranks", "8", "--events", "2000000",
		"--phase", "sendrecv_ring:jitter=1ms", "--phase", "wait_nxn:jitter=1ms"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	stopped := 0
	for i, delay := range []time.Duration{50, 300, 600, 800, 850, 900, 950, 1000, 1100, 1300, 1600} {
		out := filepath.Join(tmp, "out", string(rune('a'+i)))
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-q", "-o", out, "--csv", filepath.Join(out, "all.csv"), trace)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay * time.Millisecond)
		cmd.Process.Signal(syscall.SIGTERM)
		err := cmd.Wait()
		files, _ := os.ReadDir(out)
		var ee *exec.ExitError
		switch {
		case err == nil:
			if len(files) != 4 { // scout.cubex, trace.stat, scout.html, all.csv
				t.Errorf("after %v: completed run wrote %d files, want 4", delay*time.Millisecond, len(files))
			}
		case errors.As(err, &ee) && (ee.ExitCode() == 128+int(syscall.SIGTERM) || killedBy(ee, syscall.SIGTERM)):
			stopped++
			for _, f := range files {
				t.Errorf("after %v: stopped run left %s behind", delay*time.Millisecond, f.Name())
			}
		default:
			t.Errorf("after %v: %v, want exit status 143 or success", delay*time.Millisecond, err)
		}
	}
	if stopped == 0 {
		t.Error("no run was stopped: the test checked nothing")
	}
}

// killedBy reports whether the process ended by signal sig's default
// action: a signal that comes before the process has set up its handler
// (the Go runtime and the package initializers run first, which can take
// longer than the tests' first delays on a loaded machine) ends it so,
// before it has touched any output; a shell reports that as 128 + the
// signal too.
func killedBy(ee *exec.ExitError, sig syscall.Signal) bool {
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}
