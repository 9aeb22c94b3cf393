package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
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
