package cube

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// roundTripCase builds a report; check inspects the written members.
type roundTripCase struct {
	name  string
	build func() *Report
	check func(t *testing.T, members map[string][]byte)
}

// indexFormat returns "dense" or "sparse" for an index member.
func indexFormat(b []byte) string {
	switch {
	case len(b) == 18 && b[17] == indexDense:
		return "dense"
	case len(b) >= 22 && b[17] == indexSparse:
		return "sparse"
	}
	return fmt.Sprintf("bad index % x", b)
}

func wantFormats(t *testing.T, members map[string][]byte, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for name := range want {
		got[name] = indexFormat(members[name])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("index formats (-want +got):\n%s", diff)
	}
}

// typedFill returns values that fit data type dt, negative ones for
// signed types.
func typedFill(dt DataType, seed uint64) func(c, l int) (float64, bool) {
	s, _ := dt.scalar()
	limit := math.Ldexp(1, 8*s.size-1) - 1
	if s.size == 8 {
		limit = 1 << 40
	}
	rnd := randomFill(seed, 0.5, false)
	return func(c, l int) (float64, bool) {
		v, ok := rnd(c, l)
		if !ok {
			return 0, false
		}
		if s.float {
			return v - 0.5, true
		}
		v = math.Mod(math.Round(v*1e6), limit)
		if s.signed && (c+l)%2 == 1 {
			v = -v
		}
		if v == 0 {
			v = 1
		}
		return v, true
	}
}

var roundTripCases = []roundTripCase{
	{
		name: "tiny",
		build: func() *Report {
			r := synthReport(1, 1, 1, 1)
			addMetric(r, nil, "time", Exclusive, Double, func(int, int) (float64, bool) { return 1, true })
			return r
		},
		check: func(t *testing.T, ms map[string][]byte) {
			wantFormats(t, ms, map[string]string{"0.index": "dense"})
			if len(ms) != 3 {
				t.Errorf("%d members, want 3", len(ms))
			}
		},
	},
	{
		name: "anchor size a multiple of 512",
		build: func() *Report {
			r := synthReport(3, 2, 2, 1)
			m := addMetric(r, nil, "time", Inclusive, Float, randomFill(1, 1, false))
			m.Descr += strings.Repeat("x", (blockSize-len(encodeAnchor(r))%blockSize)%blockSize)
			return r
		},
		check: func(t *testing.T, ms map[string][]byte) {
			a := ms[anchorName]
			if len(a)%blockSize != 1 || !bytes.HasSuffix(a, []byte("</cube>\n\n")) {
				t.Errorf("anchor.xml: %d bytes ending in %q; want a newline added after a multiple of 512", len(a), a[len(a)-10:])
			}
		},
	},
	{
		name: "members of exactly 512 and 1024 bytes",
		build: func() *Report {
			r := synthReport(1, 1, 2, 251) // 502 locations: UINT8 data of 10+502 = 512 bytes
			addMetric(r, nil, "bytes", Exclusive, "UINT8", typedFill("UINT8", 2))
			r.Misc = []MiscFile{
				{Name: "a.spec", Data: bytes.Repeat([]byte("a"), 512)},
				{Name: "b.spec", Data: bytes.Repeat([]byte("b"), 1024)},
				{Name: "empty.spec", Data: []byte{}},
				{Name: "one.spec", Data: []byte("1")},
			}
			return r
		},
		check: func(t *testing.T, ms map[string][]byte) {
			if n := len(ms["0.data"]); n != 512 {
				t.Errorf("0.data has %d bytes, want 512", n)
			}
		},
	},
	{
		name: "empty metrics and all-zero rows",
		build: func() *Report {
			r := synthReport(50, 3, 4, 1)
			addMetric(r, nil, "novalues", Exclusive, Double, nil)
			addMetric(r, nil, "zerorows", Inclusive, Double, func(int, int) (float64, bool) { return 0, true })
			addMetric(r, nil, "zeroint", Exclusive, Integer, func(int, int) (float64, bool) { return 0, true })
			addMetric(r, nil, "minmax", Exclusive, MinDouble, func(int, int) (float64, bool) { return 0, false })
			return r
		},
		check: func(t *testing.T, ms map[string][]byte) {
			for id := range 4 {
				d, i := fmt.Sprintf("%d.data", id), fmt.Sprintf("%d.index", id)
				if string(ms[d]) != dataMarker || len(ms[i]) != 22 || indexFormat(ms[i]) != "sparse" {
					t.Errorf("metric %d: data %q, index % x; want an empty sparse pair", id, ms[d], ms[i])
				}
			}
		},
	},
	{
		name: "many cnodes, dense and sparse",
		build: func() *Report {
			r := synthReport(5000, 3, 4, 2)
			full := func(c, l int) (float64, bool) { return float64(c*8+l) + 0.5, true }
			time := addMetric(r, nil, "time", Inclusive, Float, full)
			addMetric(r, time, "sparse_excl", Exclusive, Float, randomFill(3, 0.1, false))
			addMetric(r, time, "sparse_incl", Inclusive, Float, randomFill(4, 0.1, false))
			addMetric(r, nil, "visits", Exclusive, Integer, func(c, l int) (float64, bool) { return float64(c + 1), true })
			// One zero row among 5000: dense is smaller, the writer
			// expands its sparse rows in place.
			addMetric(r, nil, "one_gap", Exclusive, Float, func(c, l int) (float64, bool) { return 1, c != 1234 })
			addMetric(r, nil, "gaps_at_ends", Inclusive, Float, func(c, l int) (float64, bool) {
				return float64(c), c != 0 && c != 4999 && c%1000 != 7
			})
			return r
		},
		check: func(t *testing.T, ms map[string][]byte) {
			wantFormats(t, ms, map[string]string{"0.index": "dense", "1.index": "sparse", "2.index": "sparse",
				"3.index": "dense", "4.index": "dense", "5.index": "dense"})
		},
	},
	{
		name: "deep call chain",
		build: func() *Report {
			r := synthReport(3000, 0, 2, 1)
			addMetric(r, nil, "time", Inclusive, Double, randomFill(5, 0.7, false))
			return r
		},
	},
	{
		name: "all data types",
		build: func() *Report {
			r := synthReport(30, 4, 3, 2)
			for i, dt := range []DataType{Double, Float, Integer, Int64, Uint64, "INT32", "UINT32", "INT16",
				"UINT16", "INT8", "UINT8", "CHAR", "SIGNED INTEGER", "UNSIGNED INT", MinDouble, MaxDouble} {
				typ := Inclusive
				if dt.isMinMax() || i%2 == 1 {
					typ = Exclusive
				}
				addMetric(r, nil, "m_"+strings.ReplaceAll(string(dt), " ", "_"), typ, dt, typedFill(dt, uint64(i)))
			}
			return r
		},
	},
	{
		name: "everything in the anchor",
		build: func() *Report {
			r := synthReport(10, 2, 2, 3)
			r.Mirrors = []string{"https://example.org/doc/", "file:///opt/doc/"}
			r.Attrs = append(r.Attrs, Attr{"odd & <key>", `"quoted" 'value'`})
			tm := addMetric(r, nil, "time", Inclusive, Double, randomFill(6, 0.5, false))
			tm.Attrs = []Attr{{"k", "v"}}
			tm.Val = "VOID"
			g := addMetric(r, tm, "ghost", Exclusive, Double, randomFill(7, 0.3, false))
			g.Viz = VizGhost
			d := addMetric(r, nil, "derived", PostDerived, Double, nil)
			d.Expression = "metric::time(i) - metric::ghost(e) < 3 && 1"
			p := addMetric(r, nil, "prederived", PrederivedExclusive, Double, nil)
			p.Expression, p.InitExpression, p.AggrExpression = "${a}[${calculation::callpath::id}]", "{ global(a); return 0; }", "arg1 + arg2"
			reg := r.Regions[1]
			reg.Name, reg.MangledName = `int main(int, char**) & "<x>"`, "_Z4mainiPPc"
			reg.Descr, reg.URL, reg.Attrs = "a\tdescription", "http://x/?a=1&b=2", []Attr{{"ra", "rv"}}
			c := r.AllCnodes()[3]
			c.Mod = "/src/a.c"
			c.Params = []Param{{Key: "n", Numeric: true, Number: 1.5e-3}, {Key: "s", Value: "x y"}}
			c.Attrs = []Attr{{"ca", "cv"}}
			r.System[0].Descr, r.System[0].Attrs = "the machine", []Attr{{"sa", "sv"}}
			r.System[0].Groups = nil
			g0 := r.System[0].Children[0].Groups[0]
			g0.Attrs, g0.Locations[1].Attrs = []Attr{{"ga", "gv"}}, []Attr{{"la", "lv"}}
			r.Topologies = []*Cartesian{{
				Name: "Process x Thread", Dims: []Dim{{"Process", 2, false}, {"Thread", 3, true}},
				Coords: []Coord{{CoordLocation, 0, []int{0, 0}}, {CoordLocation, 5, []int{1, 2}}, {CoordGroup, 1, []int{1, 0}}},
			}, {Dims: []Dim{{Size: 6}}}}
			return r
		},
		check: func(t *testing.T, ms map[string][]byte) {
			for _, name := range []string{"ghost_1.data", "ghost_1.index", "0.data"} {
				if ms[name] == nil {
					t.Errorf("no member %s", name)
				}
			}
			if ms["2.data"] != nil || ms["3.data"] != nil {
				t.Errorf("derived metrics have data members")
			}
		},
	},
}

// cubeLibWalk lists the members the way CubeLib's TarReader finds them:
// after a member of size s > 0 the next header is at
// header + 512 + (s/512+1)*512, after an empty member at header + 512;
// headers with an empty name are skipped.
func cubeLibWalk(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for pos := 0; pos+blockSize <= len(b); {
		h := b[pos : pos+blockSize]
		name := cstring(h[:100])
		if name == "" {
			pos += blockSize
			continue
		}
		size, err := parseOctal(h[124:136])
		if err != nil || pos+blockSize+int(size) > len(b) {
			t.Fatalf("CubeLib walk: bad header at %d: %v", pos, err)
		}
		out[name] = b[pos+blockSize : pos+blockSize+int(size)]
		if size == 0 {
			pos += blockSize
		} else {
			pos += blockSize + (int(size)/blockSize+1)*blockSize
		}
	}
	return out
}

// TestRoundTrip writes each case, checks the layout as CubeLib sees it,
// reads the file back and compares definitions and values.
func TestRoundTrip(t *testing.T) {
	for _, tc := range roundTripCases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.build()
			back, path := writeRead(t, r)
			if diff := diffReports(normalize(tc.build()), back); diff != "" {
				t.Errorf("read back (-want +got):\n%s", diff)
			}
			ours := archive(t, path)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if walk := cubeLibWalk(t, raw); !maps.EqualFunc(ours, walk, bytes.Equal) {
				diff := cmp.Diff(slices.Sorted(maps.Keys(ours)), slices.Sorted(maps.Keys(walk)))
				t.Errorf("members as CubeLib finds them (-ours +CubeLib):\n%s", diff)
			}
			if tc.check != nil {
				tc.check(t, ours)
			}
			if diff := diffCells(cellMap(normalize(tc.build()).Cells()), cellMap(back.Cells()), 0); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeepCallTree: a report whose call tree is 100 000 levels deep
// writes and reads back (the reader stopped at 16 384 levels).
func TestDeepCallTree(t *testing.T) {
	const depth = 100_000
	r := synthReport(depth, 0, 2, 1)
	addMetric(r, nil, "time", Inclusive, Double, func(c, l int) (float64, bool) { return float64(c%7 + l), c%3 == 0 })
	got, _ := writeRead(t, r)
	if n := len(got.AllCnodes()); n != depth {
		t.Fatalf("read %d call paths, want %d", n, depth)
	}
	deepest := 0
	for c := got.AllCnodes()[depth-2]; c != nil; c = c.Parent {
		deepest++
	}
	if deepest != depth-1 {
		t.Errorf("the chain is %d deep, want %d", deepest, depth-1)
	}
	// (Cells would name every call path: 10^10 bytes of names here.)
	want, have := r.Values[r.Metrics[0].ID], got.Values[got.Metrics[0].ID]
	for c := range depth {
		if !slices.Equal(want.Float[c], have.Float[c]) {
			t.Fatalf("call path %d: values %v, want %v", c, have.Float[c], want.Float[c])
		}
	}
}

// TestWriteIntoFile: Write fills the caller's file with what WriteFile
// writes (but the time stamps), and leaves no other file behind; the
// file stays open and unrenamed.
func TestWriteIntoFile(t *testing.T) {
	for _, tc := range roundTripCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f, err := os.CreateTemp(dir, "out.*.tmp")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := Write(f, tc.build()); err != nil {
				t.Fatalf("Write: %v", err)
			}
			if _, err := f.Stat(); err != nil {
				t.Fatalf("the file was closed: %v", err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 || ents[0].Name() != filepath.Base(f.Name()) {
				t.Fatalf("directory holds %d entries, want only %s", len(ents), filepath.Base(f.Name()))
			}
			path := filepath.Join(dir, "x.cubex")
			if err := os.Link(f.Name(), path); err != nil {
				t.Fatal(err)
			}
			back, err := ReadFile(path)
			if err != nil {
				t.Fatalf("ReadFile: %v", err)
			}
			want, _ := writeRead(t, tc.build())
			if diff := diffReports(want, back); diff != "" {
				t.Errorf("read back (-WriteFile +Write):\n%s", diff)
			}
			if diff := diffCells(cellMap(want.Cells()), cellMap(back.Cells()), 0); diff != "" {
				t.Errorf("cells (-WriteFile +Write):\n%s", diff)
			}
		})
	}
}
