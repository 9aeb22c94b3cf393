package combine

import (
	"fmt"

	"scout/cube"
	"scout/localtrace"
	"scout/localtrace/otf2"
)

// cartesian is one of the trace's Cartesian topologies, each coordinate
// resolved to the location it places (cartResolver).
type cartesian struct {
	name  string
	dims  []cube.Dim
	cells []cartCell
}

// cartCell places a location in a topology.
type cartCell struct {
	loc uint64
	pos []int
}

// cartesians returns the Cartesian topologies of d, each coordinate
// placing a location of pl; coordinates that place none are left out.
// The topologies before one with an undefined dimension are returned
// with the error.
func cartesians(d *otf2.Defs, pl map[uint64]localtrace.Placement) ([]cartesian, error) {
	if d == nil || len(d.CartTopologies) == 0 {
		return nil, nil
	}
	dims := map[uint32]otf2.CartDimension{}
	for _, dm := range d.CartDimensions {
		dims[dm.Self] = dm
	}
	master := map[int]uint64{} // world rank → its master location
	for l, p := range pl {
		if p.Thread == 0 {
			master[p.Rank] = l
		}
	}
	resolver := newCartResolver(d, master)
	var out []cartesian
	for _, t := range d.CartTopologies {
		c := cartesian{name: d.Str(t.Name)}
		for _, id := range t.Dims {
			dm, ok := dims[id]
			if !ok {
				return out, fmt.Errorf("combine: Cartesian topology %q refers to undefined dimension %d", c.name, id)
			}
			c.dims = append(c.dims, cube.Dim{Name: d.Str(dm.Name), Size: int(dm.Size), Periodic: dm.Periodic != 0})
		}
		resolve := resolver.of(&t)
		for _, co := range d.CartCoordinates {
			if co.Topology != t.Self || len(co.Coords) != len(c.dims) {
				continue
			}
			loc, ok := resolve(co.Rank)
			if _, placed := pl[loc]; !ok || !placed {
				continue
			}
			pos := make([]int, len(co.Coords))
			for i, x := range co.Coords {
				pos[i] = int(x)
			}
			c.cells = append(c.cells, cartCell{loc: loc, pos: pos})
		}
		out = append(out, c)
	}
	return out, nil
}

// cartResolver finds the location a Cartesian coordinate places.
type cartResolver struct {
	d        *otf2.Defs
	locGroup map[uint8]*otf2.Group // paradigm → its COMM_LOCATIONS group
	master   map[int]uint64        // world rank → master location
}

func newCartResolver(d *otf2.Defs, master map[int]uint64) *cartResolver {
	cr := &cartResolver{d: d, locGroup: map[uint8]*otf2.Group{}, master: master}
	for i := range d.Groups {
		g := &d.Groups[i]
		if _, ok := cr.locGroup[g.Paradigm]; g.Type == otf2.GroupTypeCommLocations && !ok {
			cr.locGroup[g.Paradigm] = g
		}
	}
	return cr
}

// of returns for topology t the location that the rank r of its
// communicator names: the communicator's group (COMM_GROUP) lists indexes
// into the COMM_LOCATIONS group of its paradigm (for MPI the world ranks'
// master threads, for Score-P's "Process x Thread" every thread), or is
// itself a COMM_LOCATIONS group. Without such definitions r is taken for
// a world rank, placing its master thread.
func (cr *cartResolver) of(t *otf2.CartTopology) func(r uint32) (uint64, bool) {
	var members, locs []uint64 // locs nil: members are locations
	if comm, ok := cr.d.Comm(t.Comm); ok {
		if g, ok := cr.d.Group(comm.Group); ok {
			switch g.Type {
			case otf2.GroupTypeCommLocations:
				members = g.Members
				return func(r uint32) (uint64, bool) {
					if int(r) >= len(members) {
						return 0, false
					}
					return members[r], true
				}
			case otf2.GroupTypeCommGroup:
				if lg := cr.locGroup[g.Paradigm]; lg != nil {
					members, locs = g.Members, lg.Members
					return func(r uint32) (uint64, bool) {
						if int(r) >= len(members) || members[r] >= uint64(len(locs)) {
							return 0, false
						}
						return locs[members[r]], true
					}
				}
			}
		}
	}
	return func(r uint32) (uint64, bool) {
		l, ok := cr.master[int(r)]
		return l, ok
	}
}
