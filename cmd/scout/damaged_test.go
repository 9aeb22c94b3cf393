package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"scout/internal/tracetest"
	"scout/localtrace/otf2"
)

// rewriteEvents rewrites location loc's event file in dir: edit gets
// every raw event (local ids, uncorrected time) and writes what should
// take its place. The location's event count in the global definitions
// is updated, so that the archive stays consistent.
func rewriteEvents(t testing.TB, dir string, loc uint64, edit func(ev *otf2.Event, w *otf2.EventWriter) error) {
	t.Helper()
	a, err := otf2.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := a.ReadGlobalDefs()
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.OpenEvents(loc, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w, err := otf2.NewEventWriter(&out, a.Anchor.ChunkSizeEvents)
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := edit(ev, w); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(a.EventPath(loc), out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range defs.Locations {
		if defs.Locations[i].Self == loc {
			defs.Locations[i].NumEvents = w.Count()
		}
	}
	var gd bytes.Buffer
	if _, err := otf2.EncodeGlobalDefs(&gd, defs, a.Anchor.ChunkSizeDefs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(a.GlobalDefPath(), gd.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// dropFirstSend removes location loc's first MPI_SEND record, so that
// the archive reads cleanly but one receive can never be matched.
func dropFirstSend(t *testing.T, dir string, loc uint64) {
	t.Helper()
	dropped := false
	rewriteEvents(t, dir, loc, func(ev *otf2.Event, w *otf2.EventWriter) error {
		if ev.Type == otf2.EvMpiSend && !dropped {
			dropped = true
			return nil
		}
		return w.Write(ev)
	})
	if !dropped {
		t.Fatalf("location %d sends no message", loc)
	}
}

// TestUnmatchedMessage: a trace in which one receive has no matching send
// must end with an error naming the stuck location and event, not hang,
// and must leave no report behind.
func TestUnmatchedMessage(t *testing.T) {
	src := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender")
	dir := filepath.Join(t.TempDir(), "trace")
	copyDir(t, src, dir)
	os.RemoveAll(filepath.Join(dir, "expected"))
	dropFirstSend(t, dir, 0)

	out := t.TempDir()
	done := make(chan error, 1)
	var stderr bytes.Buffer
	go func() {
		done <- run([]string{"-q", "-o", out, "--csv", filepath.Join(out, "x.csv"), dir}, io.Discard, &stderr)
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("scout hangs on a trace with an unmatched receive")
	}
	if err == nil {
		t.Fatal("no error for a trace with an unmatched receive")
	}
	msg := err.Error()
	for _, want := range []string{"deadlock", "location 1", "event 24", "Recv(src=0"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not mention %q:\n%s", want, msg)
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("failed run left files behind: %v", names)
	}
}

// TestHostileSizes: size fields and files that claim more than they
// hold end in a clear error, not in reserving the claimed memory.
func TestHostileSizes(t *testing.T) {
	src := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender")
	t.Run("event count of 4e9 on a small event file", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "trace")
		copyDir(t, src, dir)
		a, err := otf2.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defs, err := a.ReadGlobalDefs()
		if err != nil {
			t.Fatal(err)
		}
		defs.Locations[0].NumEvents = 4_000_000_000
		var gd bytes.Buffer
		if _, err := otf2.EncodeGlobalDefs(&gd, defs, a.Anchor.ChunkSizeDefs); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(a.GlobalDefPath(), gd.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		err = run([]string{"-q", "-o", t.TempDir(), dir}, io.Discard, io.Discard)
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "announce 4000000000") {
			t.Errorf("error %v, want one naming the announced count", err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<30 {
			t.Errorf("the analysis allocated %d MiB for a 1 MB trace", grew>>20)
		}
	})
	for _, anchor := range []struct {
		name string
		make func(path string) error
	}{
		{"a 40 GB anchor", func(path string) error {
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(40 << 30) // sparse: no disk used
		}},
		{"an anchor linked to /dev/zero", func(path string) error { return os.Symlink("/dev/zero", path) }},
	} {
		t.Run(anchor.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := anchor.make(filepath.Join(dir, "traces.otf2")); err != nil {
				t.Skip(err)
			}
			done := make(chan error, 1)
			go func() { done <- run([]string{"-q", dir}, io.Discard, io.Discard) }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "is not an OTF2 anchor file") {
					t.Errorf("error %v, want one saying it is no anchor", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("scout reads the whole anchor")
			}
		})
	}
}
