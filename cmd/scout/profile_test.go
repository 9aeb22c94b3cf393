package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestDeveloperProfiles: SCOUT_CPUPROFILE, SCOUT_TRACE and
// SCOUT_MEMPROFILE each write their file, in its format, when the
// profiles stop.
func TestDeveloperProfiles(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"SCOUT_CPUPROFILE": filepath.Join(dir, "cpu.pprof"),
		"SCOUT_TRACE":      filepath.Join(dir, "exec.trace"),
		"SCOUT_MEMPROFILE": filepath.Join(dir, "mem.pprof"),
	}
	for env, name := range files {
		t.Setenv(env, name)
	}
	t.Setenv("OMPI_COMM_WORLD_RANK", "")
	t.Setenv("PMI_RANK", "")
	stop := startProfiles()
	if err := run([]string{"-q", "--no-html", "-o", t.TempDir(), "../../testdata/traces/ps_mixed_np4"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	stop()
	for _, c := range []struct {
		env   string
		magic []byte
	}{
		{"SCOUT_CPUPROFILE", []byte{0x1f, 0x8b}}, // gzipped protocol buffer
		{"SCOUT_MEMPROFILE", []byte{0x1f, 0x8b}},
		{"SCOUT_TRACE", []byte("go 1.")}, // the execution trace's header
	} {
		b, err := os.ReadFile(files[c.env])
		if err != nil {
			t.Errorf("%s: %v", c.env, err)
			continue
		}
		if !bytes.HasPrefix(b, c.magic) {
			t.Errorf("%s: file starts with %q, want %q", c.env, b[:min(len(b), 8)], c.magic)
		}
	}
}
