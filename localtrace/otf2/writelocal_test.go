package otf2

import (
	"bytes"
	"strings"
	"testing"
)

// TestCloseLocal writes an archive without global definitions: the anchor
// announces the locations and no definitions, and the reader asks for
// unification.
func TestCloseLocal(t *testing.T) {
	dir := t.TempDir()
	w, err := CreateArchive(dir, "traces", Anchor{Properties: []Property{{PropTimerResolution, "1000"}}})
	if err != nil {
		t.Fatal(err)
	}
	ew, err := w.CreateEvents(0)
	if err != nil {
		t.Fatal(err)
	}
	ew.Enter(5, 1)
	ew.Leave(6, 1)
	if err := ew.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteLocalDefs(0, &LocalDefs{Defs: Defs{Strings: []String{{Self: 3, Value: "main"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.CloseLocal(1); err != nil {
		t.Fatal(err)
	}
	if err := w.CloseLocal(1); err == nil {
		t.Error("second CloseLocal: no error")
	}
	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.Anchor.HasGlobalDefFile || a.Anchor.NumLocations != 1 || a.Anchor.NumGlobalDefs != 0 ||
		a.Anchor.Properties[0].Value != "1000" {
		t.Errorf("anchor %+v", a.Anchor)
	}
	if _, err := a.ReadGlobalDefs(); err == nil || !strings.Contains(err.Error(), "unified first") {
		t.Errorf("ReadGlobalDefs: %v", err)
	}
	ld, err := a.ReadLocalDefs(0)
	if err != nil || len(ld.Defs.Strings) != 1 || ld.Defs.Str(3) != "main" {
		t.Errorf("local definitions %+v, %v", ld, err)
	}

	w, err = CreateArchive(t.TempDir(), "traces", Anchor{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteGlobalDefs(&Defs{HasClock: true, Clock: ClockProperties{TimerResolution: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := w.CloseLocal(0); err == nil {
		t.Error("CloseLocal after WriteGlobalDefs: no error")
	}
}

func TestNewSparseIDMap(t *testing.T) {
	m := NewSparseIDMap([]uint64{2, 7, 9, 1})
	if m.Map(2) != 7 || m.Map(9) != 1 || m.Map(4) != 4 {
		t.Errorf("Map: %d %d %d", m.Map(2), m.Map(9), m.Map(4))
	}
	var b bytes.Buffer
	l := &LocalDefs{}
	l.Maps[MapRegion] = m
	if _, err := EncodeLocalDefs(&b, l, DefaultChunkSizeDefs); err != nil {
		t.Fatal(err)
	}
	back, err := DecodeLocalDefs(&b, "x.def", DefaultChunkSizeDefs)
	if err != nil {
		t.Fatal(err)
	}
	if r := back.Maps[MapRegion]; r == nil || !r.Sparse || r.Map(2) != 7 || r.Map(9) != 1 {
		t.Errorf("read back %+v", r)
	}
}
