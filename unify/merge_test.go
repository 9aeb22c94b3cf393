package unify

import (
	"fmt"
	"strings"
	"testing"

	"scout/localtrace/otf2"
)

// TestMergeComms: communicators of equal content stay apart by their
// order on each location, parents are resolved before children whatever
// the file order, and equal communicators of two locations merge.
func TestMergeComms(t *testing.T) {
	u := uint32(otf2.Undef32)
	strs := func(names ...string) []otf2.String {
		var s []otf2.String
		for i, n := range names {
			s = append(s, otf2.String{Self: uint32(10 * i), Value: n})
		}
		return s
	}
	groups := []otf2.Group{{Self: 5, Members: []uint64{0, 1}, Type: otf2.GroupTypeCommGroup, Paradigm: otf2.ParadigmMPI},
		{Self: 6, Members: []uint64{0, 1}, Type: otf2.GroupTypeCommLocations, Paradigm: otf2.ParadigmMPI}}
	loc := func(self uint64) []otf2.Location { return []otf2.Location{{Self: self, Name: 0, Group: u}} }
	// location 0: world 1, dup a 2, dup b 3 (both children of world, same name)
	l0 := &otf2.LocalDefs{Defs: otf2.Defs{Strings: strs("", "world", "dup"), Groups: groups, Locations: loc(0),
		Comms: []otf2.Comm{{Self: 2, Name: 20, Group: 5, Parent: 1}, {Self: 3, Name: 20, Group: 5, Parent: 1},
			{Self: 1, Name: 10, Group: 5, Parent: u}}}}
	// location 1 numbers them otherwise: world 7, dups 4 and 9 (4 first)
	l1 := &otf2.LocalDefs{Defs: otf2.Defs{Strings: strs("", "dup", "world"), Groups: groups[:1], Locations: loc(1),
		Comms: []otf2.Comm{{Self: 4, Name: 10, Group: 5, Parent: 7}, {Self: 9, Name: 10, Group: 5, Parent: 7},
			{Self: 7, Name: 20, Group: 5, Parent: u}}}}
	m := newMerger()
	maps0, err := m.add("0.def", 0, l0)
	if err != nil {
		t.Fatal(err)
	}
	maps1, err := m.add("1.def", 1, l1)
	if err != nil {
		t.Fatal(err)
	}
	d := m.global(1000)
	if len(d.Comms) != 3 || len(d.Groups) != 2 || len(d.Strings) != 3 {
		t.Fatalf("%d comms, %d groups, %d strings, want 3, 2, 3", len(d.Comms), len(d.Groups), len(d.Strings))
	}
	if d.Groups[0].Type != otf2.GroupTypeCommLocations {
		t.Errorf("groups %+v: COMM_LOCATIONS not first", d.Groups)
	}
	world := uint32(maps0[otf2.MapComm].Map(1))
	if d.Comms[world].Parent != u || d.Comms[0].Self != world {
		t.Errorf("world is global %d, comms %+v: want the parent first", world, d.Comms)
	}
	for _, c := range [][2]uint64{{2, 4}, {3, 9}, {1, 7}} {
		g0, g1 := maps0[otf2.MapComm].Map(c[0]), maps1[otf2.MapComm].Map(c[1])
		if g0 != g1 {
			t.Errorf("local comm %d of location 0 is global %d, local %d of location 1 is %d", c[0], g0, c[1], g1)
		}
	}
	if maps0[otf2.MapComm].Map(2) == maps0[otf2.MapComm].Map(3) {
		t.Error("two equal communicators of one location merged")
	}
	if maps1[otf2.MapComm].Map(4) != 1 || maps1[otf2.MapString].Map(10) != 2 {
		t.Errorf("location 1 maps %+v", maps1)
	}
	if fmt.Sprint(d.Clock) != fmt.Sprint(otf2.ClockProperties{TimerResolution: 1000, Realtime: otf2.Undef64}) {
		t.Errorf("clock without offsets %+v", d.Clock)
	}
}

func TestMergeErrors(t *testing.T) {
	for name, c := range map[string]struct {
		d    otf2.Defs
		want string
	}{
		"region group member": {otf2.Defs{Locations: []otf2.Location{{Self: 0, Name: otf2.Undef32, Group: otf2.Undef32}},
			Groups: []otf2.Group{{Self: 0, Name: otf2.Undef32, Type: 2, Members: []uint64{4}}}}, "undefined region 4 as member"},
		"metric": {otf2.Defs{MetricMembers: []otf2.MetricMember{{}}}, "MetricMember definitions"},
		"raw":    {otf2.Defs{Other: []otf2.RawRecord{{Type: 29}}}, "type 29"},
		"node parent": {otf2.Defs{SystemTreeNodes: []otf2.SystemTreeNode{{Self: 1, Name: otf2.Undef32, Class: otf2.Undef32,
			Parent: 3}}}, "undefined parent 3"},
	} {
		_, err := newMerger().add("x.def", 0, &otf2.LocalDefs{Defs: c.d})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "x.def") {
			t.Errorf("%s: error %v, want x.def: ...%s", name, err, c.want)
		}
	}
}

// TestMergeCartesian: two locations define the same topology under their
// own identifiers, each with its own coordinates; the result has one
// topology with both. A rank placed twice differently is an error.
func TestMergeCartesian(t *testing.T) {
	u := uint32(otf2.Undef32)
	def := func(self uint64, rank uint32, coords []uint32, strOff, dimOff, topo uint32) *otf2.LocalDefs {
		return &otf2.LocalDefs{Defs: otf2.Defs{
			Strings: []otf2.String{{Self: strOff, Value: "grid"}, {Self: strOff + 1, Value: "x"}, {Self: strOff + 2, Value: "y"},
				{Self: strOff + 3, Value: ""}},
			Locations: []otf2.Location{{Self: self, Name: strOff + 3, Group: u}},
			Groups:    []otf2.Group{{Self: 0, Name: strOff + 3, Members: []uint64{0, 1}, Type: otf2.GroupTypeCommGroup, Paradigm: otf2.ParadigmMPI}},
			Comms:     []otf2.Comm{{Self: 3, Name: strOff, Group: 0, Parent: u}},
			CartDimensions: []otf2.CartDimension{{Self: dimOff, Name: strOff + 1, Size: 2}, {Self: dimOff + 1, Name: strOff + 2, Size: 1,
				Periodic: 1}},
			CartTopologies:  []otf2.CartTopology{{Self: topo, Name: strOff, Comm: 3, Dims: []uint32{dimOff, dimOff + 1}}},
			CartCoordinates: []otf2.CartCoordinate{{Topology: topo, Rank: rank, Coords: coords}},
		}}
	}
	m := newMerger()
	for i, l := range []*otf2.LocalDefs{def(0, 0, []uint32{0, 0}, 0, 0, 0), def(1, 1, []uint32{1, 0}, 5, 7, 2)} {
		if _, err := m.add(fmt.Sprintf("%d.def", i), uint64(i), l); err != nil {
			t.Fatal(err)
		}
	}
	d := m.global(1000)
	want := fmt.Sprint([]otf2.CartTopology{{Self: 0, Name: 0, Comm: 0, Dims: []uint32{0, 1}}},
		[]otf2.CartCoordinate{{Topology: 0, Rank: 0, Coords: []uint32{0, 0}}, {Topology: 0, Rank: 1, Coords: []uint32{1, 0}}})
	if got := fmt.Sprint(d.CartTopologies, d.CartCoordinates); got != want || len(d.CartDimensions) != 2 {
		t.Errorf("merged %s and %d dimensions, want %s and 2", got, len(d.CartDimensions), want)
	}
	_, err := m.add("2.def", 2, def(2, 1, []uint32{0, 0}, 9, 1, 1))
	if err == nil || !strings.Contains(err.Error(), "rank 1 is at [0 0]") {
		t.Errorf("conflicting coordinates: error %v", err)
	}
}

func TestIDMap(t *testing.T) {
	if m := idMap(map[uint32]uint32{0: 0, 1: 1, 5: 5}); m != nil {
		t.Errorf("identity gives %+v", m)
	}
	m := idMap(map[uint32]uint32{0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 9: 5, 5: 9})
	if !m.Sparse || fmt.Sprint(m.Pairs) != "[5 9 9 5]" {
		t.Errorf("few moves: %+v, want sparse", m)
	}
	m = idMap(map[uint32]uint32{0: 2, 1: 0, 3: 1})
	if m.Sparse || fmt.Sprint(m.Dense) != "[2 0 2 1]" {
		t.Errorf("many moves: %+v, want dense with the identity for the gap", m)
	}
}
