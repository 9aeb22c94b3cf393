package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"scout/unify"
)

// TestUnifyLocalDefs: an archive with only local definitions, unified by
// `scout unify` or automatically by `scout TRACE`, gives the same results
// as the same scenario generated with global definitions.
func TestUnifyLocalDefs(t *testing.T) {
	for name, scenario := range map[string][]string{
		"default": nil,
		"jitter": {"--ranks", "6", "--seed", "3", "--phase", "ring:jitter=1ms", "--phase", "late_sender:delay=2ms",
			"--phase", "bcast:jitter=1ms", "--phase", "allreduce:imbalance=100us"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			csvOf := func(trace string, explicit bool) []byte {
				t.Helper()
				var stderr bytes.Buffer
				if explicit {
					if err := run([]string{"unify", "-q", trace}, io.Discard, &stderr); err != nil {
						t.Fatalf("scout unify: %v\n%s", err, stderr.String())
					}
				}
				return csvIn(t, trace)
			}
			gen := func(sub string, local bool) string {
				trace := filepath.Join(dir, sub)
				args := append([]string{"tracegen", "-q", "-o", trace}, scenario...)
				if local {
					args = append(args, "--local-defs")
				}
				if err := run(args, io.Discard, io.Discard); err != nil {
					t.Fatal(err)
				}
				return trace
			}
			want := csvOf(gen("global", false), false)
			auto := gen("auto", true)
			if need, err := unify.NeedsUnification(auto); err != nil || !need {
				t.Fatalf("a --local-defs archive needs no unification? %v %v", need, err)
			}
			if got := csvOf(auto, false); !bytes.Equal(got, want) {
				t.Errorf("automatic unification: results differ from the global-definitions archive")
			}
			explicit := gen("explicit", true)
			if got := csvOf(explicit, true); !bytes.Equal(got, want) {
				t.Errorf("scout unify: results differ from the global-definitions archive")
			}
			err := run([]string{"unify", "-q", explicit}, io.Discard, io.Discard)
			if !errors.Is(err, unify.ErrUnified) {
				t.Errorf("second scout unify: error %v, want ErrUnified", err)
			}
		})
	}
}

// TestUnifyConcurrent: analyses started at once on one archive with only
// local definitions unify it once (the others wait) and agree.
func TestUnifyConcurrent(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "local")
	if err := run([]string{"tracegen", "-q", "-o", trace, "--ranks", "6", "--local-defs"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	const n = 4
	csvs := make([]bytes.Buffer, n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			errs <- run([]string{"-q", "-o", filepath.Join(dir, fmt.Sprint("out", i)), "--csv", "-", trace}, &csvs[i], io.Discard)
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for i := 1; i < n; i++ {
		if !bytes.Equal(csvs[i].Bytes(), csvs[0].Bytes()) {
			t.Errorf("analysis %d differs from analysis 0", i)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(trace, "*.unify-*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestUnifyReadOnly: an archive with only local definitions in a
// directory the user cannot write gets a message that says so and what
// to do. (Run as another user, since root may write anywhere.)
func TestUnifyReadOnly(t *testing.T) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and setpriv to run scout as another user")
	}
	bin := filepath.Join(t.TempDir(), "scout")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	base, err := os.MkdirTemp("", "scout-readonly-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	trace, out := filepath.Join(base, "trace"), filepath.Join(base, "out")
	if err := run([]string{"tracegen", "-q", "-o", trace, "--local-defs"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{base, bin, filepath.Dir(bin)} {
		os.Chmod(d, 0o755)
	}
	if err := os.Mkdir(out, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(out, 0o777)
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "-q", "-o", out, trace)
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "cannot be unified in place") || !strings.Contains(string(msg), "writable copy") {
		t.Errorf("error %v:\n%s", err, msg)
	}
}
