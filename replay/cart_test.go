package replay_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/internal/tinytrace"
	"scout/localtrace/otf2"
	"scout/replay"
)

// TestCartTopologies: the topologies over MPI communicators, the first
// per communicator, with the coordinates that fit; not those over other
// communicators (Score-P's "Process x Thread", over its locations).
func TestCartTopologies(t *testing.T) {
	d := tinytrace.Defs(4)
	d.Groups = append(d.Groups, otf2.Group{Self: 1, Name: 0, Members: []uint64{0, 1, 2, 3}, Type: otf2.GroupTypeCommGroup, Paradigm: 1})
	d.Comms = append(d.Comms, otf2.Comm{Self: 1, Name: 0, Group: 1, Parent: otf2.Undef32})
	d.CartDimensions = []otf2.CartDimension{{Self: 0, Size: 2}, {Self: 1, Size: 2, Periodic: 1}, {Self: 2, Size: 4}, {Self: 3, Size: 1}}
	d.CartTopologies = []otf2.CartTopology{
		{Self: 0, Comm: 0, Dims: []uint32{0, 1}}, // MPI_COMM_WORLD: 2×2, the second dimension periodic
		{Self: 1, Comm: 0, Dims: []uint32{2}},    // a second one over it: left out
		{Self: 2, Comm: 1, Dims: []uint32{2, 3}}, // a non-MPI communicator: left out
	}
	d.CartCoordinates = []otf2.CartCoordinate{
		{Topology: 0, Rank: 0, Coords: []uint32{0, 0}},
		{Topology: 0, Rank: 1, Coords: []uint32{0, 1}},
		{Topology: 0, Rank: 2, Coords: []uint32{0, 1}}, // a place taken
		{Topology: 0, Rank: 3, Coords: []uint32{1, 2}}, // outside
		{Topology: 0, Rank: 4, Coords: []uint32{1, 1}}, // no such rank
		{Topology: 0, Rank: 1, Coords: []uint32{1, 0}}, // placed already
		{Topology: 1, Rank: 0, Coords: []uint32{3}},
		{Topology: 2, Rank: 0, Coords: []uint32{0, 0}},
	}
	var b bytes.Buffer
	if _, err := otf2.EncodeGlobalDefs(&b, d, 1<<20); err != nil {
		t.Fatal(err)
	}
	d, err := otf2.DecodeGlobalDefs(&b, "defs", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	carts := replay.CartTopologies(d)
	if len(carts) != 1 || carts[0] == nil {
		t.Fatalf("topologies by communicator: %v", carts)
	}
	c := carts[0]
	if !cmp.Equal(c.Dims, []int{2, 2}) || !cmp.Equal(c.Periodic, []bool{false, true}) {
		t.Errorf("dims %v, periodic %v", c.Dims, c.Periodic)
	}
	var coords [][]int
	for r := -1; r <= 4; r++ {
		coords = append(coords, c.Coords(r))
	}
	if want := [][]int{nil, {0, 0}, {0, 1}, nil, nil, nil}; !cmp.Equal(coords, want) {
		t.Errorf("coordinates of ranks -1..4: %v, want %v", coords, want)
	}
	var at []int
	for _, xy := range [][]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {0, -1}, {0}} {
		at = append(at, c.RankAt(xy...))
	}
	if want := []int{0, 1, -1, -1, -1, -1, -1}; !cmp.Equal(at, want) {
		t.Errorf("ranks at (0,0) (0,1) (1,0) (1,1) (2,0) (0,-1) (0): %v, want %v", at, want)
	}
	env, err := replay.NewEnv(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(env.Carts) != 1 || env.Carts[0] == nil {
		t.Errorf("Env.Carts: %v", env.Carts)
	}
	if got := replay.CartTopologies(tinytrace.Defs(2)); got != nil {
		t.Errorf("no topology: %v", got)
	}
}
