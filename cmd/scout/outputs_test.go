package main

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"scout/internal/tracetest"
)

// TestOutputSetAllOrNothing: when one output fails, the earlier files
// of every output stay as they were, and no temporary file is left.
func TestOutputSetAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("earlier"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := &outputSet{}
	for _, p := range []string{a, b} {
		if err := s.add(p); err != nil {
			t.Fatal(err)
		}
	}
	s.start()
	if err := s.write(a, io.Discard, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if err := s.write(b, io.Discard, func(io.Writer) error { return errors.New("disk full") }); err == nil {
		t.Fatal("no error from a failing output")
	}
	s.abort()
	for _, p := range []string{a, b} {
		if got, _ := os.ReadFile(p); string(got) != "earlier" {
			t.Errorf("%s: %q, want the earlier content", p, got)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("files left: %v", ents)
	}
}

// TestOutputCollisions: an output that is an input, or another output,
// is refused before anything is read or written, and the file stays.
func TestOutputCollisions(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace")
	copyDir(t, filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender"), trace)
	out := filepath.Join(dir, "out")
	if err := run([]string{"-q", "-o", out, trace}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(out, "scout.cubex")
	link := filepath.Join(dir, "link.def")
	if err := os.Symlink(filepath.Join(trace, "traces.def"), link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		file string // must stay unchanged
		want string
	}{
		{[]string{"-q", "--csv", filepath.Join(trace, "traces.def"), trace}, filepath.Join(trace, "traces.def"), "is the input"},
		{[]string{"-q", "--csv", filepath.Join(trace, "traces", "0.evt"), trace}, filepath.Join(trace, "traces", "0.evt"), "is the input"},
		{[]string{"-q", "--csv", link, trace}, filepath.Join(trace, "traces.def"), "is the input"},
		{[]string{"-q", "-o", out, "--csv", report, trace}, report, "given twice"},
		{[]string{"report", "--csv", report, report}, report, "is the input"},
		{[]string{"combine", "-q", "-o", report, report}, report, "is the input"},
		{[]string{"-q", "--csv", filepath.Join(dir, "nonexistent", "x.csv"), trace}, "", "cannot write into its directory"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var before []byte
			if tc.file != "" {
				before, _ = os.ReadFile(tc.file)
			}
			err := run(tc.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 2 {
				t.Errorf("error %v (exit %d), want a usage error containing %q", err, exitCode(err), tc.want)
			}
			if tc.file != "" {
				if after, _ := os.ReadFile(tc.file); !bytes.Equal(before, after) {
					t.Errorf("%s changed", tc.file)
				}
			}
		})
	}
}

// TestOutputPermissions: every output gets the permissions of a file the
// user creates (0666 less the umask).
func TestOutputPermissions(t *testing.T) {
	out := t.TempDir()
	csv := filepath.Join(out, "all.csv")
	if err := run([]string{"-q", "-o", out, "--csv", csv, filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender")}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	want := fs.FileMode(0o666 &^ fileUmask)
	for _, name := range []string{"scout.cubex", "trace.stat", "all.csv"} {
		st, err := os.Stat(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", name, st.Mode().Perm(), want)
		}
	}
}

// TestInterruptedKeepsEarlierResults stops an analysis that would replace
// the outputs of an earlier one (of another trace) at many moments, with
// SIGTERM, SIGINT and SIGHUP: afterwards the outputs are either all the
// earlier ones or all the new ones, never missing or mixed, and no
// temporary file is left.
func TestInterruptedKeepsEarlierResults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs scout many times")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "scout")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	gen := func(name string, ranks string) string {
		dir := filepath.Join(tmp, name)
		if err := run([]string{"tracegen", "-q", "-o", dir, "--ranks", ranks, "--events", "600000", "--phase", "sendrecv_ring:jitter=1ms"}, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	old, cur := gen("old", "4"), gen("new", "6")
	names := []string{"scout.cubex", "trace.stat", "scout.html", "all.csv"}
	results := func(trace string) map[string][]byte {
		out := filepath.Join(tmp, "ref-"+filepath.Base(trace))
		if err := exec.Command(bin, "-q", "-o", out, "--csv", filepath.Join(out, "all.csv"), trace).Run(); err != nil {
			t.Fatal(err)
		}
		m := map[string][]byte{}
		for _, n := range names {
			m[n], _ = os.ReadFile(filepath.Join(out, n))
		}
		return m
	}
	wantOld, wantNew := results(old), results(cur)
	stopped := 0
	sigs := []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP}
	for i, delay := range []time.Duration{20, 100, 200, 300, 400, 500, 600, 700, 800, 1000} {
		out := filepath.Join(tmp, "out", string(rune('a'+i)))
		if err := exec.Command(bin, "-q", "-o", out, "--csv", filepath.Join(out, "all.csv"), old).Run(); err != nil {
			t.Fatal(err)
		}
		sig := sigs[i%len(sigs)]
		cmd := exec.Command(bin, "-q", "-o", out, "--csv", filepath.Join(out, "all.csv"), cur)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay * time.Millisecond)
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if killedBy(ee, sig) {
				stopped++
			} else if ee.ExitCode() != 128+int(sig) {
				t.Errorf("after %v, %v: exit status %d, want %d", delay*time.Millisecond, sig, ee.ExitCode(), 128+int(sig))
			} else {
				stopped++
			}
		} else if err != nil {
			t.Fatal(err)
		}
		// The report's bytes hold time stamps: compare its values.
		same := func(want map[string][]byte, ref string) bool {
			for _, n := range names[1:] {
				if got, _ := os.ReadFile(filepath.Join(out, n)); !bytes.Equal(got, want[n]) {
					return false
				}
			}
			return len(tracetest.Diff(cubeCells(t, filepath.Join(out, names[0])), cubeCells(t, filepath.Join(ref, names[0])), 1)) == 0
		}
		if !same(wantOld, filepath.Join(tmp, "ref-old")) && !same(wantNew, filepath.Join(tmp, "ref-new")) {
			t.Errorf("after %v, %v (%v): the outputs are neither all the earlier nor all the new ones", delay*time.Millisecond, sig, err)
		}
		if ents, _ := os.ReadDir(out); len(ents) != len(names) {
			var got []string
			for _, e := range ents {
				got = append(got, e.Name())
			}
			t.Errorf("after %v, %v: files %q in the output directory, want %q", delay*time.Millisecond, sig, got, names)
		}
	}
	if stopped == 0 {
		t.Error("no run was stopped: the test checked nothing")
	}
}

// TestTracegenDirectory: tracegen refuses a directory that holds
// anything, replaces a trace there with --force (no stale location files
// of a larger earlier trace), and a stopped tracegen leaves nothing.
func TestTracegenDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gen")
	if err := run([]string{"tracegen", "-q", "-o", dir, "--ranks", "6"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	err := run([]string{"tracegen", "-q", "-o", dir, "--ranks", "2"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--force") || exitCode(err) != 2 {
		t.Errorf("tracegen into a trace: error %v, want a usage error suggesting --force", err)
	}
	if err := run([]string{"tracegen", "-q", "--force", "-o", dir, "--ranks", "2"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	evts, _ := filepath.Glob(filepath.Join(dir, "traces", "*.evt"))
	if len(evts) != 2 {
		t.Errorf("after --force: %d event files, want 2 (stale ones left?)", len(evts))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 3 {
		t.Errorf("after --force: %d entries in %s, want the archive's 3", len(ents), dir)
	}
	if err := run([]string{"-q", "-o", t.TempDir(), dir}, io.Discard, io.Discard); err != nil {
		t.Errorf("the replaced trace does not analyze: %v", err)
	}
	if testing.Short() {
		return
	}
	bin := filepath.Join(t.TempDir(), "scout")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	stopped := filepath.Join(t.TempDir(), "stopped")
	cmd := exec.Command(bin, "tracegen", "-q", "-o", stopped, "--ranks", "4", "--events", "200000000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err == nil {
		t.Skip("tracegen finished before the signal")
	}
	if ents, _ := os.ReadDir(stopped); len(ents) != 0 {
		t.Errorf("a stopped tracegen left %d entries (%s …)", len(ents), ents[0].Name())
	}
}

// TestFileSizeLimit: a write beyond the file size limit (ulimit -f, as
// batch systems set it) fails with an error instead of killing scout, so
// it removes what it wrote: tracegen leaves no partial archive, and an
// analysis leaves the earlier outputs as they were.
func TestFileSizeLimit(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "scout")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	limited := func(args ...string) (string, error) {
		cmd := exec.Command("sh", append([]string{"-c", `ulimit -f 200 && exec "$@"`, "sh", bin}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	gen := filepath.Join(t.TempDir(), "gen")
	out, err := limited("tracegen", "-q", "-o", gen, "--ranks", "4", "--events", "2000000")
	if err == nil || !strings.Contains(out, "file too large") {
		t.Errorf("tracegen beyond the limit: %v\n%s", err, out)
	}
	if ents, _ := os.ReadDir(gen); len(ents) != 0 {
		t.Errorf("tracegen left %d entries", len(ents))
	}
	// An analysis whose CSV exceeds the limit (100 KiB): the earlier
	// outputs stay.
	trace := filepath.Join(t.TempDir(), "trace")
	if err := run([]string{"tracegen", "-q", "-o", trace, "--ranks", "64", "--phase", "halo_2d"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	small := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender")
	if err := run([]string{"-q", "-o", dir, "--csv", filepath.Join(dir, "all.csv"), small}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "all.csv"))
	out, err = limited("-q", "-o", dir, "--csv", filepath.Join(dir, "all.csv"), trace)
	if err == nil || !strings.Contains(out, "file too large") {
		t.Fatalf("analysis beyond the limit: %v\n%s", err, out)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "all.csv")); !bytes.Equal(before, after) {
		t.Error("the earlier CSV changed")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 4 {
		t.Errorf("%d files in the output directory, want the earlier 4", len(ents))
	}
}
