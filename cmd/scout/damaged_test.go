package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

	for _, tc := range []struct {
		flags []string
		want  []string
	}{
		// the wait-state passes ship ahead: the receive finds no message
		{nil, []string{"unmatched message", "location 1", "event 24", "receive from rank 0"}},
		// the correction's solution: the receive waits for ever
		{[]string{"--time-correct"}, []string{"deadlock", "location 1", "event 24", "receive from rank 0"}},
	} {
		flags := tc.flags
		t.Run(strings.Join(append([]string{"flags"}, flags...), " "), func(t *testing.T) {
			out := t.TempDir()
			done := make(chan error, 1)
			var stderr bytes.Buffer
			go func() {
				args := append([]string{"-q", "-o", out, "--csv", filepath.Join(out, "x.csv")}, flags...)
				done <- run(append(args, dir), io.Discard, &stderr)
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
			for _, want := range tc.want {
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
		})
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

// TestOddShapes: deep recursion and a node with very many callees are
// analyzed in time and memory linear in the tree (naming every call path
// of a 40 000-level tree for the summary took 2.3 GB; looking up 200 000
// callees in lists took 68 s). Under the race detector, which makes time
// no measure, the wide tree has a quarter of the callees and a quarter
// of the allocation bound (200 000 took 47 s of the suite's time there).
func TestOddShapes(t *testing.T) {
	wide, wideAlloc := 200_000, uint64(4<<30)
	if raceEnabled {
		wide, wideAlloc = wide/4, wideAlloc/4
	}
	for _, tc := range []struct {
		name       string
		deep, wide int
		maxAlloc   uint64 // bytes allocated in all (garbage included)
	}{{"40 000 levels", 40_000, 0, 1 << 30}, {fmt.Sprintf("%d callees", wide), 0, wide, wideAlloc}} {
		t.Run(tc.name, func(t *testing.T) {
			callees := make([]string, tc.wide)
			for i := range callees {
				callees[i] = fmt.Sprintf("f%d", i)
			}
			dir := singleRankTrace(t, callees, func(w *otf2.EventWriter, first *otf2.Event, regions []uint32) error {
				r := uint32(first.Args[0])
				for range tc.deep {
					if err := w.Enter(first.Time, r); err != nil {
						return err
					}
				}
				for range tc.deep {
					if err := w.Leave(first.Time, r); err != nil {
						return err
					}
				}
				for _, c := range regions {
					if err := w.Enter(first.Time, c); err != nil {
						return err
					}
					if err := w.Leave(first.Time, c); err != nil {
						return err
					}
				}
				return nil
			})
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			if err := run([]string{"-o", t.TempDir(), dir}, io.Discard, io.Discard); err != nil { // with the summary
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			took := time.Since(start)
			t.Logf("%v, %d MiB allocated", took, (after.TotalAlloc-before.TotalAlloc)>>20)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > tc.maxAlloc {
				t.Errorf("the analysis allocated %d MiB", grew>>20)
			}
			// Linear takes a second or two; quadratic took over a
			// minute. (The race detector's slowdown makes time no
			// measure there.)
			if !raceEnabled && took > 20*time.Second {
				t.Errorf("the analysis took %v", took)
			}
		})
	}
}

// TestMissingLocalDefs: a location whose local definition file is
// missing while the others have theirs is an error naming the file (its
// identifiers would be read unmapped: "communicator 0 is unknown").
func TestMissingLocalDefs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trace")
	copyDir(t, filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender"), dir)
	missing := filepath.Join(dir, "traces", "1.def")
	if err := os.Remove(missing); err != nil {
		t.Fatal(err)
	}
	err := run([]string{"-q", "-o", t.TempDir(), dir}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), missing+" is missing") {
		t.Errorf("error %v, want one naming %s", err, missing)
	}
}

// TestCallpathKeys: call paths are keyed uniquely and unambiguously, and
// alike in the analysis's CSV and in `scout report --csv` of its report:
// two regions of one name under one parent, a name with '/', names with
// a newline, a tab, '#', '\' and invalid UTF-8.
func TestCallpathKeys(t *testing.T) {
	names := []string{"f", "f", "a/b", "a", "x\ny", "tab\there", "#2", `back\slash`, "bad\xffname"}
	dir := singleRankTrace(t, names, func(w *otf2.EventWriter, first *otf2.Event, regions []uint32) error {
		for i, r := range regions {
			if err := w.Enter(first.Time+uint64(10*i), r); err != nil {
				return err
			}
			if names[i] == "a" { // a → f, next to the region named "a/b"
				if err := w.Enter(first.Time+uint64(10*i+1), regions[0]); err != nil {
					return err
				}
				if err := w.Leave(first.Time+uint64(10*i+2), regions[0]); err != nil {
					return err
				}
			}
			if err := w.Leave(first.Time+uint64(10*i+5), r); err != nil {
				return err
			}
		}
		return nil
	})
	out := t.TempDir()
	var csv bytes.Buffer
	if err := run([]string{"-q", "-o", out, "--csv", "-", dir}, &csv, io.Discard); err != nil {
		t.Fatal(err)
	}
	var fromReport bytes.Buffer
	if err := run([]string{"report", "--csv", "-", filepath.Join(out, "scout.cubex")}, &fromReport, io.Discard); err != nil {
		t.Fatal(err)
	}
	keys := func(csv string) map[string]bool {
		k := map[string]bool{}
		for _, line := range strings.Split(csv, "\n") {
			if strings.HasPrefix(line, "visits,") {
				f := strings.Split(line, ",")
				if k[f[1]] {
					t.Errorf("key %q appears twice", f[1])
				}
				k[f[1]] = true
			}
		}
		return k
	}
	got, fromCube := keys(csv.String()), keys(fromReport.String())
	for _, want := range []string{"f", "f#2", `a\/b`, "a/f", `x\ny`, `tab\there`, `\#2`, `back\\slash`, "bad\uFFFDname"} {
		if want = "tracegen/main/" + want; !got[want] {
			t.Errorf("the analysis's CSV lacks the key %q: %v", want, got)
		}
	}
	if diff := cmp.Diff(got, fromCube); diff != "" {
		t.Errorf("keys (-analysis +report):\n%s", diff)
	}
}

// singleRankTrace writes a one-rank trace into a new directory, with a
// region for each of names (each in a file of its own) added to its
// definitions, and at its first Enter the events insert writes; it
// returns the directory.
func singleRankTrace(t *testing.T, names []string, insert func(w *otf2.EventWriter, first *otf2.Event, regions []uint32) error) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "trace")
	if err := run([]string{"tracegen", "-q", "-o", dir, "--ranks", "1", "--phase", "compute_phase"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	a, err := otf2.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := a.ReadGlobalDefs()
	if err != nil {
		t.Fatal(err)
	}
	str := func(v string) uint32 {
		defs.Strings = append(defs.Strings, otf2.String{Self: uint32(len(defs.Strings)), Value: v})
		return uint32(len(defs.Strings) - 1)
	}
	var regions []uint32
	for i, n := range names {
		r := defs.Regions[0]
		r.Self, r.Name, r.File = uint32(len(defs.Regions)), str(n), str(fmt.Sprintf("file%d.c", i))
		r.Canonical = r.Name
		defs.Regions = append(defs.Regions, r)
		regions = append(regions, r.Self)
	}
	var gd bytes.Buffer
	if _, err := otf2.EncodeGlobalDefs(&gd, defs, a.Anchor.ChunkSizeDefs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(a.GlobalDefPath(), gd.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	inserted := false
	rewriteEvents(t, dir, 0, func(ev *otf2.Event, w *otf2.EventWriter) error {
		if err := w.Write(ev); err != nil || ev.Type != otf2.EvEnter || inserted {
			return err
		}
		inserted = true
		return insert(w, ev, regions)
	})
	return dir
}

// dropFirstRecv removes location loc's first MPI_RECV record, so that
// the archive reads cleanly but one send is never received.
func dropFirstRecv(t *testing.T, dir string, loc uint64) {
	t.Helper()
	dropped := false
	rewriteEvents(t, dir, loc, func(ev *otf2.Event, w *otf2.EventWriter) error {
		if ev.Type == otf2.EvMpiRecv && !dropped {
			dropped = true
			return nil
		}
		return w.Write(ev)
	})
	if !dropped {
		t.Fatalf("location %d receives no message", loc)
	}
}

// TestSendWithoutReceive: a message that is sent but never received
// does not matter to the forward pass, but the backward passes carry
// the receiver's side of every message to the sender, which finds none
// for it: the analysis must end with an error naming the send, not hang
// or panic, and leave no report behind.
func TestSendWithoutReceive(t *testing.T) {
	src := filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender")
	dir := filepath.Join(t.TempDir(), "trace")
	copyDir(t, src, dir)
	os.RemoveAll(filepath.Join(dir, "expected"))
	dropFirstRecv(t, dir, 1)

	out := t.TempDir()
	done := make(chan error, 1)
	go func() {
		done <- run([]string{"-q", "-o", out, "--csv", filepath.Join(out, "x.csv"), dir}, io.Discard, io.Discard)
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("scout hangs on a trace with an unreceived send")
	}
	if err == nil {
		t.Fatal("no error for a trace with an unreceived send")
	}
	for _, want := range []string{"unmatched message", "location 0", "event 16", "Send at", "send to rank 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%s", want, err)
		}
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("failed run left %d files behind", len(ents))
	}
}
