package unify_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"scout/localtrace"
	"scout/localtrace/otf2"
	"scout/patterns"
	"scout/tracegen"
	"scout/unify"
)

const ms = time.Millisecond

// scenarios: tracegen's default scenario and the scenarios of tracegen's
// tests, plus one with more ranks (longer mapping tables).
func scenarios() map[string]tracegen.Scenario {
	return map[string]tracegen.Scenario{
		"default":     tracegen.DefaultScenario(),
		"late_sender": {Locations: 4, Iterations: 3, Phases: []tracegen.Phase{{Kind: tracegen.LateSender, Work: ms, Delay: 10 * ms}}},
		"early_receiver": {Locations: 2, Iterations: 2, Gap: 100 * time.Nanosecond,
			Phases: []tracegen.Phase{{Kind: tracegen.LateSender, Work: ms, Imbalance: 50 * time.Nanosecond}}},
		"mixed": {Program: "mixed_app", Locations: 5, Iterations: 4, Seed: 7, Phases: []tracegen.Phase{
			{Kind: tracegen.Compute, Work: 2 * ms, Imbalance: ms / 2, Jitter: ms},
			{Kind: tracegen.LateSender, Work: ms, Delay: 3 * ms, Jitter: ms / 3},
			{Kind: tracegen.Ring, Work: ms, Delay: 2 * ms, Jitter: ms},
			{Kind: tracegen.Allreduce, Work: ms, Imbalance: ms},
			{Kind: tracegen.Barrier, Work: ms, Imbalance: ms, Jitter: ms / 7},
			{Kind: tracegen.Bcast, Work: ms, Delay: 4 * ms, Jitter: ms},
			{Kind: tracegen.Allreduce, Name: "wait_nxn", Work: ms, Delay: ms},
		}},
		"single": {Locations: 1, Iterations: 5, Phases: []tracegen.Phase{{Kind: tracegen.Compute, Work: ms},
			{Kind: tracegen.Allreduce, Work: ms}, {Kind: tracegen.Bcast, Work: ms}}},
		"chunked": {Locations: 3, Iterations: 500, ChunkSize: 4096, Workers: 2,
			Phases: []tracegen.Phase{{Kind: tracegen.Ring, Work: ms, Jitter: ms}, {Kind: tracegen.Barrier, Work: ms, Imbalance: ms}}},
		"no_iterations": {Locations: 3, Phases: []tracegen.Phase{{Kind: tracegen.Ring}}},
		"many_ranks": {Locations: 37, Iterations: 2, Seed: 99, Phases: []tracegen.Phase{
			{Kind: tracegen.LateSender, Work: ms, Delay: ms}, {Kind: tracegen.Ring, Work: ms, Jitter: ms},
			{Kind: tracegen.Bcast, Work: ms, Delay: ms, Name: "bcast_phase"}}},
	}
}

// TestUnifiedEqualsGlobal generates every scenario twice with one seed,
// with global definitions and with local ones only, unifies the second
// and checks that both read alike through the normal reader path: the
// same clock, locations and event counts, per location the same events
// with every identifier resolved to its definition (names, member lists),
// and the same profile (time and visits per call path).
func TestUnifiedEqualsGlobal(t *testing.T) {
	for name, sc := range scenarios() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			globalDir, localDir := t.TempDir(), t.TempDir()
			sum, err := tracegen.Generate(globalDir, sc)
			if err != nil {
				t.Fatal(err)
			}
			sc.LocalDefs = true
			if _, err := tracegen.Generate(localDir, sc); err != nil {
				t.Fatal(err)
			}
			if need, err := unify.NeedsUnification(localDir); err != nil || !need {
				t.Fatalf("NeedsUnification(local archive) = %v, %v", need, err)
			}
			if need, err := unify.NeedsUnification(globalDir); err != nil || need {
				t.Fatalf("NeedsUnification(global archive) = %v, %v", need, err)
			}
			res, err := unify.Definitions(localDir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Locations != sc.Locations {
				t.Errorf("unified %d locations, want %d", res.Locations, sc.Locations)
			}
			if need, err := unify.NeedsUnification(localDir); err != nil || need {
				t.Fatalf("NeedsUnification after unify = %v, %v", need, err)
			}
			g, u := open(t, globalDir), open(t, localDir)
			if g.defs.Clock != u.defs.Clock {
				t.Errorf("clock %+v, want %+v", u.defs.Clock, g.defs.Clock)
			}
			if u.a.Anchor.NumGlobalDefs != res.GlobalDefs || u.a.Anchor.NumGlobalDefs != u.defs.Count {
				t.Errorf("anchor announces %d global definitions, file has %d, Definitions wrote %d",
					u.a.Anchor.NumGlobalDefs, u.defs.Count, res.GlobalDefs)
			}
			if len(g.defs.Locations) != len(u.defs.Locations) || u.a.Anchor.NumLocations != g.a.Anchor.NumLocations {
				t.Fatalf("%d locations, want %d", len(u.defs.Locations), len(g.defs.Locations))
			}
			mapped := 0
			for i, gl := range g.defs.Locations {
				ul := u.defs.Locations[i]
				if gl.Self != ul.Self || gl.NumEvents != ul.NumEvents || g.locationDesc(&gl) != u.locationDesc(&ul) {
					t.Errorf("location %+v (%s), want %+v (%s)", ul, u.locationDesc(&ul), gl, g.locationDesc(&gl))
				}
				ge, ue := g.events(t, gl.Self), u.events(t, gl.Self)
				if len(ge) != len(ue) || uint64(len(ue)) != ul.NumEvents {
					t.Errorf("location %d: %d events, want %d", gl.Self, len(ue), len(ge))
				}
				for k := range min(len(ge), len(ue)) {
					if ge[k] != ue[k] {
						t.Fatalf("location %d event %d:\n got %s\nwant %s", gl.Self, k, ue[k], ge[k])
					}
				}
				gp, up := g.profile(t, gl.Self), u.profile(t, gl.Self)
				if fmt.Sprint(gp) != fmt.Sprint(up) {
					t.Errorf("location %d: profile\n got %v\nwant %v", gl.Self, up, gp)
				}
				for path, v := range up {
					if want := sum.Time[path][i]; math.Abs(v.time-want) > 1e-9 || v.visits != sum.Visits[path][i] {
						t.Errorf("location %d: %s: %+v, closed form %g s, %d visits", gl.Self, path, v, want, sum.Visits[path][i])
					}
				}
				ld, err := u.a.ReadLocalDefs(gl.Self)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range ld.Maps {
					if m != nil {
						mapped++
					}
				}
			}
			if mapped == 0 {
				t.Error("no location has a mapping table: the local identifiers were global ones")
			}
			if sc.ChunkSize == 0 || sc.ChunkSize >= 256<<10 { // libotf2 rejects smaller chunks
				otf2Print(t, localDir, sum.TotalEvents())
			}
		})
	}
}

type archive struct {
	a     *otf2.Archive
	defs  *otf2.Defs
	attrs map[uint32]otf2.Attribute
	strs  map[uint32]bool
}

func open(t *testing.T, dir string) *archive {
	t.Helper()
	a, err := otf2.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := a.ReadGlobalDefs()
	if err != nil {
		t.Fatal(err)
	}
	x := &archive{a: a, defs: defs, attrs: map[uint32]otf2.Attribute{}, strs: map[uint32]bool{}}
	for _, at := range defs.Attributes {
		x.attrs[at.Self] = at
	}
	for _, s := range defs.Strings {
		if x.strs[s.Self] {
			t.Fatalf("%s: string %d defined twice", a.GlobalDefPath(), s.Self)
		}
		x.strs[s.Self] = true
	}
	return x
}

func (x *archive) str(id uint32) string {
	if id == otf2.Undef32 {
		return "<undef>"
	}
	if !x.strs[id] {
		return fmt.Sprintf("<UNDEFINED string %d>", id)
	}
	return fmt.Sprintf("%q", x.defs.Str(id))
}

func (x *archive) locationDesc(l *otf2.Location) string {
	for _, lg := range x.defs.LocationGroups {
		if lg.Self == l.Group {
			return fmt.Sprintf("%s type %d in group %s type %d", x.str(l.Name), l.Type, x.str(lg.Name), lg.Type)
		}
	}
	return fmt.Sprintf("%s in UNDEFINED location group %d", x.str(l.Name), l.Group)
}

func (x *archive) region(id uint32) string {
	r, ok := x.defs.Region(id)
	if !ok {
		return fmt.Sprintf("<UNDEFINED region %d>", id)
	}
	return fmt.Sprintf("region(%s canonical %s descr %s file %s lines %d-%d type %d role %d paradigm %d flags %d)",
		x.str(r.Name), x.str(r.Canonical), x.str(r.Description), x.str(r.File), r.Begin, r.End, r.Type, r.Role,
		r.Paradigm, r.Flags)
}

func (x *archive) group(id uint32) string {
	g, ok := x.defs.Group(id)
	if !ok {
		return fmt.Sprintf("<UNDEFINED group %d>", id)
	}
	return fmt.Sprintf("group(%s type %d/%d paradigm %d flags %d members %v)", x.str(g.Name), g.TypePre12, g.Type,
		g.Paradigm, g.Flags, g.Members)
}

func (x *archive) comm(id uint32) string {
	if id == otf2.Undef32 {
		return "<undef>"
	}
	c, ok := x.defs.Comm(id)
	if !ok {
		return fmt.Sprintf("<UNDEFINED comm %d>", id)
	}
	return fmt.Sprintf("comm(%s %s parent %s flags %d)", x.str(c.Name), x.group(c.Group), x.comm(c.Parent), c.Flags)
}

func (x *archive) ref(kind int8, v uint64) string {
	switch kind {
	case otf2.MapString:
		return x.str(uint32(v))
	case otf2.MapRegion:
		return x.region(uint32(v))
	case otf2.MapComm:
		return x.comm(uint32(v))
	case otf2.MapGroup:
		return x.group(uint32(v))
	case otf2.MapAttribute:
		a, ok := x.attrs[uint32(v)]
		if !ok {
			return fmt.Sprintf("<UNDEFINED attribute %d>", v)
		}
		return fmt.Sprintf("attribute(%s type %d descr %s)", x.str(a.Name), a.Type, x.str(a.Description))
	}
	return fmt.Sprint(v)
}

// attrRefs maps attribute value types that are references to their
// mapping types.
var attrRefs = map[uint8]int8{11: otf2.MapString, 12: otf2.MapAttribute, 14: otf2.MapRegion, 15: otf2.MapGroup, 17: otf2.MapComm}

// events reads location loc's events the way the analysis does (global
// definitions, the location's mapping tables and clock offsets) and
// prints each with its identifiers resolved.
func (x *archive) events(t *testing.T, loc uint64) []string {
	t.Helper()
	ld, err := x.a.ReadLocalDefs(loc)
	if err != nil {
		t.Fatal(err)
	}
	r, err := x.a.OpenEvents(loc, ld)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []string
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		spec := ev.Spec()
		fmt.Fprintf(&b, "%d %s", ev.Time, spec.Name)
		for i, f := range spec.Fields {
			switch f.Kind {
			case otf2.FArray32:
				fmt.Fprintf(&b, " %s=[", f.Name)
				for _, v := range ev.Array {
					fmt.Fprintf(&b, " %s", x.ref(f.Map, v))
				}
				b.WriteString(" ]")
			case otf2.FMetricVal:
				fmt.Fprintf(&b, " %s=%v %v", f.Name, ev.ArrayTypes, ev.Array)
			default:
				fmt.Fprintf(&b, " %s=%s", f.Name, x.ref(f.Map, ev.Args[i]))
			}
		}
		for _, a := range ev.Attrs {
			v := fmt.Sprint(a.Value)
			if k, ok := attrRefs[a.Type]; ok {
				v = x.ref(k, a.Value)
			}
			fmt.Fprintf(&b, " {%s type %d = %s}", x.ref(otf2.MapAttribute, uint64(a.Attr)), a.Type, v)
		}
		s := b.String()
		if strings.Contains(s, "UNDEFINED") {
			t.Errorf("%s: location %d: %s", x.a.Dir, loc, s)
		}
		out = append(out, s)
	}
	return out
}

type cell struct {
	time   float64
	visits uint64
}

// profile loads location loc with localtrace and returns the time and
// visits per call path (region names joined by "/").
func (x *archive) profile(t *testing.T, loc uint64) map[string]cell {
	t.Helper()
	tr, err := localtrace.Load(x.a, x.defs, loc)
	if err != nil {
		t.Fatal(err)
	}
	times, visits := patterns.Profile(tr)
	out := map[string]cell{}
	for cp := range tr.Callpaths {
		var parts []string
		for c := uint32(cp); c != localtrace.None; c = tr.Callpaths[c].Parent {
			r, _ := x.defs.Region(tr.Callpaths[c].Region)
			parts = append([]string{x.defs.Str(r.Name)}, parts...)
		}
		out[strings.Join(parts, "/")] = cell{times[cp], visits[cp]}
	}
	return out
}

var eventLine = regexp.MustCompile(`^[A-Z_]+ +\d+ +\d+`)

// otf2Print checks the unified archive with the OTF2 library, if present.
func otf2Print(t *testing.T, dir string, events uint64) {
	t.Helper()
	if _, err := exec.LookPath("otf2-print"); err != nil {
		return
	}
	anchor := filepath.Join(dir, "traces.otf2")
	if out, err := exec.Command("otf2-print", "-A", "--silent", "-Werror", anchor).CombinedOutput(); err != nil {
		t.Fatalf("otf2-print -A: %v\n%s", err, out)
	}
	out, err := exec.Command("otf2-print", "-Werror", anchor).Output()
	if err != nil {
		t.Fatalf("otf2-print: %v", err)
	}
	var n uint64
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if eventLine.MatchString(sc.Text()) {
			n++
		}
	}
	if n != events {
		t.Errorf("otf2-print printed %d events, want %d", n, events)
	}
}

func localArchive(t *testing.T, ranks int) string {
	t.Helper()
	dir := t.TempDir()
	sc := tracegen.DefaultScenario()
	sc.Locations, sc.LocalDefs = ranks, true
	if _, err := tracegen.Generate(dir, sc); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestMissingLocalDefFile(t *testing.T) {
	dir := localArchive(t, 4)
	missing := filepath.Join(dir, "traces", "2.def")
	if err := os.Remove(missing); err != nil {
		t.Fatal(err)
	}
	_, err := unify.Definitions(dir)
	if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("error %v, want one naming the missing %s", err, missing)
	}
	assertUntouched(t, dir)

	// without its event file, the location is simply absent: the anchor
	// announces more locations than there are
	if err := os.Remove(filepath.Join(dir, "traces", "2.evt")); err != nil {
		t.Fatal(err)
	}
	_, err = unify.Definitions(dir)
	if err == nil || !strings.Contains(err.Error(), "announces 4 locations") {
		t.Fatalf("error %v, want one about the anchor's location count", err)
	}
	assertUntouched(t, dir)
}

// rewriteLocal decodes a local definition file, lets change modify it and
// writes it back.
func rewriteLocal(t *testing.T, dir string, loc uint64, change func(*otf2.LocalDefs)) string {
	t.Helper()
	a, err := otf2.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ld, err := a.ReadLocalDefs(loc)
	if err != nil {
		t.Fatal(err)
	}
	change(ld)
	f, err := os.Create(a.LocalDefPath(loc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := otf2.EncodeLocalDefs(f, ld, a.Anchor.ChunkSizeDefs); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return a.LocalDefPath(loc)
}

func TestInconsistentDefinitions(t *testing.T) {
	for name, c := range map[string]struct {
		change func(*otf2.LocalDefs)
		want   string
	}{
		"undefined string": {func(ld *otf2.LocalDefs) { ld.Defs.Regions[0].Name = 9999 }, "undefined string 9999"},
		"undefined group":  {func(ld *otf2.LocalDefs) { ld.Defs.Comms[1].Group = 77 }, "undefined group 77"},
		"undefined location group": {func(ld *otf2.LocalDefs) { ld.Defs.Locations[0].Group = 55 },
			"undefined location group 55"},
		"string defined twice": {func(ld *otf2.LocalDefs) {
			ld.Defs.Strings = append(ld.Defs.Strings, otf2.String{Self: ld.Defs.Strings[0].Self, Value: "x"})
		}, "defined twice"},
		"parent cycle": {func(ld *otf2.LocalDefs) {
			c := ld.Defs.Comms
			c[0].Parent, c[1].Parent = c[1].Self, c[0].Self
		}, "cycle"},
		"no own location": {func(ld *otf2.LocalDefs) { ld.Defs.Locations[0].Self = 3 }, "does not define its location 1"},
		"other location differs": {func(ld *otf2.LocalDefs) {
			l := ld.Defs.Locations[0]
			l.Self, l.NumEvents = 0, 1
			ld.Defs.Locations = append(ld.Defs.Locations, l)
		}, "location 0 differs from its definition in"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := localArchive(t, 3)
			file := rewriteLocal(t, dir, 1, c.change)
			_, err := unify.Definitions(dir)
			if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one naming %s and saying %q", err, file, c.want)
			}
			assertUntouched(t, dir)
		})
	}
}

func TestNoTimerResolution(t *testing.T) {
	dir := localArchive(t, 2)
	a, err := otf2.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	a.Anchor.Properties = a.Anchor.Properties[:1]
	f, err := os.Create(a.AnchorPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := otf2.EncodeAnchor(f, &a.Anchor); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := unify.Definitions(dir); err == nil || !strings.Contains(err.Error(), otf2.PropTimerResolution) {
		t.Fatalf("error %v, want one naming %s", err, otf2.PropTimerResolution)
	}
}

// assertUntouched checks that a failed unification left no global
// definitions and no temporary files.
func assertUntouched(t *testing.T, dir string) {
	t.Helper()
	if need, err := unify.NeedsUnification(dir); err != nil || !need {
		t.Errorf("after a failed unify: NeedsUnification = %v, %v", need, err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*", "*-tmp"))
	top, _ := filepath.Glob(filepath.Join(dir, "*-tmp"))
	if len(left)+len(top) > 0 {
		t.Errorf("temporary files left: %v %v", left, top)
	}
}

func TestSecondRunRefused(t *testing.T) {
	dir := localArchive(t, 3)
	if _, err := unify.Definitions(dir); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	_, err := unify.Definitions(dir)
	if !errors.Is(err, unify.ErrUnified) || !strings.Contains(err.Error(), "traces.def") {
		t.Fatalf("second run: error %v, want ErrUnified naming traces.def", err)
	}
	if after := snapshot(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Error("the refused second run changed the archive")
	}
	// a Score-P archive is refused too
	need, err := unify.NeedsUnification("../testdata/traces/ps_mixed_np4")
	if err != nil || need {
		t.Errorf("NeedsUnification(Score-P archive) = %v, %v", need, err)
	}
}

// snapshot returns the contents of the archive's files by relative path.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var errStop = errors.New("simulated interruption")

// TestInterrupted stops Definitions after each rename of a finished file
// but the last and checks that the archive still needs unification, that
// the reader refuses it clearly, and that a new run (which also removes
// stale temporary files) gives the same archive as an uninterrupted one.
func TestInterrupted(t *testing.T) {
	const ranks = 4
	ref := localArchive(t, ranks)
	if _, err := unify.Definitions(ref); err != nil {
		t.Fatal(err)
	}
	want := snapshot(t, ref)
	for n := 1; n < ranks+2; n++ {
		dir := localArchive(t, ranks)
		*unify.TestHookRename = func(done int) error {
			if done == n {
				return errStop
			}
			return nil
		}
		_, err := unify.Definitions(dir)
		*unify.TestHookRename = nil
		if !errors.Is(err, errStop) {
			t.Fatalf("interrupted after %d renames: error %v", n, err)
		}
		assertUntouched(t, dir)
		a, err := otf2.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.ReadGlobalDefs(); err == nil || !strings.Contains(err.Error(), "unified first") {
			t.Errorf("reading an interrupted archive: error %v", err)
		}
		// stale temporary files of a crashed run
		for _, p := range []string{filepath.Join(dir, "traces.def.unify-tmp"), filepath.Join(dir, "traces", "1.def.unify-tmp")} {
			if err := os.WriteFile(p, []byte("junk"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := unify.Definitions(dir); err != nil {
			t.Fatalf("rerun after %d renames: %v", n, err)
		}
		if got := snapshot(t, dir); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("rerun after %d renames: archive differs from an uninterrupted unification", n)
		}
	}
}

// TestDeterministic: unifying two archives generated alike gives the
// same files.
func TestDeterministic(t *testing.T) {
	a, b := localArchive(t, 5), localArchive(t, 5)
	for _, d := range []string{a, b} {
		if _, err := unify.Definitions(d); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(snapshot(t, a)) != fmt.Sprint(snapshot(t, b)) {
		t.Error("two unifications of the same archive differ")
	}
}
