package otf2

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/internal/tracetest"
)

// TestSpecs checks the event spec table against itself and the format's
// fixed singleton set.
func TestSpecs(t *testing.T) {
	singletons := map[int]bool{12: true, 13: true, 16: true, 17: true, 20: true, 21: true, 24: true, 28: true, 29: true, 30: true}
	for id, s := range EventSpecs {
		if s == nil {
			continue
		}
		if s.Singleton != singletons[id] {
			t.Errorf("%s (%d): singleton = %v, want %v", s.Name, id, s.Singleton, singletons[id])
		}
		if s.Singleton && (len(s.Fields) != 1 || (s.Fields[0].Kind != FU32 && s.Fields[0].Kind != FU64)) {
			t.Errorf("%s: a singleton has exactly one compressed field", s.Name)
		}
		if len(s.Fields) > MaxArgs {
			t.Errorf("%s: %d fields exceed MaxArgs", s.Name, len(s.Fields))
		}
		arrays := 0
		for _, f := range s.Fields {
			if f.Kind == FArray32 || f.Kind == FMetricVal {
				arrays++
			}
			if f.Map >= NumMappingTypes {
				t.Errorf("%s.%s: bad mapping type %d", s.Name, f.Name, f.Map)
			}
		}
		if arrays > 1 {
			t.Errorf("%s: more than one array field", s.Name)
		}
	}
	for id := range singletons {
		if EventSpecs[id] == nil {
			t.Errorf("singleton %d has no spec", id)
		}
	}
}

func TestCompressed(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		big  bool
		u32  bool
		want uint64
		err  bool
	}{
		{"zero", []byte{0}, false, false, 0, false},
		{"old zero", []byte{1, 0}, false, false, 0, false},
		{"one byte", []byte{1, 0x7f}, false, false, 0x7f, false},
		{"le three", []byte{3, 0x01, 0x02, 0x03}, false, false, 0x030201, false},
		{"be three", []byte{3, 0x01, 0x02, 0x03}, true, false, 0x010203, false},
		{"undefined u32", []byte{0xff}, false, true, math.MaxUint32, false},
		{"undefined u64", []byte{0xff}, false, false, math.MaxUint64, false},
		{"negative", []byte{8, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, false, false, uint64(math.MaxUint64 - 1), false},
		{"too wide u32", []byte{5, 1, 2, 3, 4, 5}, false, true, 0, true},
		{"too wide u64", []byte{9, 1, 2, 3, 4, 5, 6, 7, 8, 9}, false, false, 0, true},
		{"short", []byte{4, 1, 2}, false, false, 0, true},
		{"empty", nil, false, false, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cursor{b: tc.b, big: tc.big}
			var got uint64
			if tc.u32 {
				got = uint64(c.u32c())
			} else {
				got = c.u64c()
			}
			if (c.err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", c.err, tc.err)
			}
			if !tc.err && got != tc.want {
				t.Errorf("got %#x, want %#x", got, tc.want)
			}
		})
	}
}

func TestClockCorrection(t *testing.T) {
	var k clockCorrector
	if err := k.init([]ClockOffset{{Time: 1000, Offset: 10}, {Time: 2000, Offset: 30}, {Time: 3000, Offset: 30}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want uint64 }{
		{500, 500 + 0},      // before the first interval: extrapolated, 10 + 0.02*-500
		{1000, 1010},        // first offset
		{1500, 1500 + 20},   // halfway: 10 + 10
		{2000, 2030},        // interval end
		{2500, 2530},        // flat second interval
		{5000, 5030},        // past the end: last interval
		{5001, 5001 + 30},   // still last
		{10000, 10000 + 30}, // far past
	} {
		if got := k.correct(tc.in); got != tc.want {
			t.Errorf("correct(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
	var one clockCorrector
	one.init([]ClockOffset{{Time: 5, Offset: 100}})
	if got := one.correct(7); got != 7 {
		t.Errorf("a single offset must not correct: got %d", got)
	}
	if err := (&clockCorrector{}).init([]ClockOffset{{Time: 5}, {Time: 5}}); err == nil {
		t.Error("equal offset times must be an error")
	}
}

// TestReadAllTraces decodes every reference trace and checks each
// location's event count against its definition.
func TestReadAllTraces(t *testing.T) {
	for _, tr := range tracetest.Archives(t) {
		t.Run(tr.Name, func(t *testing.T) {
			a, err := Open(tr.Dir)
			if err != nil {
				t.Fatal(err)
			}
			d, err := a.ReadGlobalDefs()
			if err != nil {
				t.Fatal(err)
			}
			if d.Count != a.Anchor.NumGlobalDefs {
				t.Errorf("read %d global definitions, anchor says %d", d.Count, a.Anchor.NumGlobalDefs)
			}
			if uint64(len(d.Locations)) != a.Anchor.NumLocations {
				t.Errorf("%d locations, anchor says %d", len(d.Locations), a.Anchor.NumLocations)
			}
			for _, l := range d.Locations {
				ld, err := a.ReadLocalDefs(l.Self)
				if err != nil {
					t.Fatal(err)
				}
				r, err := a.OpenEvents(l.Self, ld)
				if err != nil {
					t.Fatal(err)
				}
				last := uint64(0)
				for {
					ev, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if ev.Time < last {
						t.Fatalf("location %d: time goes back at offset %d", l.Self, ev.Offset)
					}
					last = ev.Time
				}
				r.Close()
				if r.Count != l.NumEvents {
					t.Errorf("location %d: %d events, definition says %d", l.Self, r.Count, l.NumEvents)
				}
			}
		})
	}
}

// copyTrace copies a reference trace into a temporary directory so a test
// can damage it.
func copyTrace(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(tracetest.Root(), "testdata", "traces", name)
	dst := t.TempDir()
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
	return dst
}

// readAll reads every location of the archive at dir and returns the
// first error.
func readAll(dir string) error {
	a, err := Open(dir)
	if err != nil {
		return err
	}
	d, err := a.ReadGlobalDefs()
	if err != nil {
		return err
	}
	for _, l := range d.Locations {
		ld, err := a.ReadLocalDefs(l.Self)
		if err != nil {
			return err
		}
		r, err := a.OpenEvents(l.Self, ld)
		if err != nil {
			return err
		}
		for err == nil {
			_, err = r.Next()
		}
		r.Close()
		if err != io.EOF {
			return err
		}
	}
	return nil
}

func TestBadArchives(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   []string // substrings of the error
	}{
		{"truncated event file", func(t *testing.T, dir string) {
			truncate(t, filepath.Join(dir, "traces", "1.evt"), 200)
		}, []string{"1.evt", "location 1", "offset", "truncated"}},
		{"event file cut inside a record", func(t *testing.T, dir string) {
			truncate(t, filepath.Join(dir, "traces", "0.evt"), 45)
		}, []string{"0.evt", "location 0", "offset"}},
		{"missing anchor", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "traces.otf2"))
		}, []string{"no anchor file"}},
		{"sion archive", func(t *testing.T, dir string) {
			patchAnchor(t, dir, 9, SubstrateSION)
		}, []string{"SIONlib"}},
		{"zlib archive", func(t *testing.T, dir string) {
			patchAnchor(t, dir, 10, CompressionZlib)
		}, []string{"zlib"}},
		{"missing event file", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "traces", "2.evt"))
		}, []string{"location 2", "2.evt", "missing"}},
		{"missing global definitions", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "traces.def"))
		}, []string{"no global definition file"}},
		{"damaged chunk header", func(t *testing.T, dir string) {
			patch(t, filepath.Join(dir, "traces", "3.evt"), 0, 0x77)
		}, []string{"3.evt", "offset 0", "chunk header"}},
		{"truncated definitions", func(t *testing.T, dir string) {
			truncate(t, filepath.Join(dir, "traces.def"), 3000)
		}, []string{"traces.def", "offset"}},
		{"not an anchor", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "traces.otf2"), []byte("hello"), 0o644)
		}, []string{"not an OTF2 anchor"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyTrace(t, "ps_late_sender")
			tc.damage(t, dir)
			err := readAll(dir)
			if err == nil {
				t.Fatal("damaged archive read without error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func truncate(t *testing.T, path string, n int64) {
	t.Helper()
	if err := os.Truncate(path, n); err != nil {
		t.Fatal(err)
	}
}

func patch(t *testing.T, path string, off int, b byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[off] = b
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// patchAnchor sets a one-byte anchor field; field 9 is the substrate and
// 10 the compression (offsets after the fixed-size header fields).
func patchAnchor(t *testing.T, dir string, field int, v byte) {
	t.Helper()
	// header(2) + "OTF2\0"(5) + 5 bytes + 2 × u64 = 28: substrate, then compression
	off := map[int]int{9: 28, 10: 29}[field]
	patch(t, filepath.Join(dir, "traces.otf2"), off, v)
}

func TestAnchorFields(t *testing.T) {
	a, err := Open(filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender", "traces.otf2"))
	if err != nil {
		t.Fatal(err)
	}
	got := a.Anchor
	got.Properties, got.TraceID = nil, 0
	want := Anchor{AnchorFormat: 3, TraceFormat: 2, Version: [3]uint8{3, 0, 3}, ChunkSizeEvents: 1 << 20,
		ChunkSizeDefs: 1 << 18, Substrate: 1, Compression: 1, NumLocations: 4, NumGlobalDefs: 570,
		Creator: "Score-P 8.4", HasGlobalDefFile: true}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("anchor (-want +got):\n%s", d)
	}
}

func TestIDMap(t *testing.T) {
	dense := &IDMap{Dense: []uint64{5, 6}}
	sparse := &IDMap{Sparse: true, lookup: map[uint64]uint64{3: 9}}
	var none *IDMap
	for _, tc := range []struct {
		m       *IDMap
		in, out uint64
	}{{dense, 0, 5}, {dense, 1, 6}, {dense, 2, 2}, {sparse, 3, 9}, {sparse, 4, 4}, {none, 7, 7}} {
		if got := tc.m.Map(tc.in); got != tc.out {
			t.Errorf("Map(%d) = %d, want %d", tc.in, got, tc.out)
		}
	}
}
