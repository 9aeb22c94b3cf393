package localtrace

import (
	"fmt"
	"sort"
	"strconv"

	"scout/localtrace/otf2"
)

// Placement says which MPI rank and thread a location is.
type Placement struct {
	Rank   int // MPI rank in MPI_COMM_WORLD
	Thread int // thread number within the rank's process (0 = master)
}

// Label is the rank label of reports: "r" for the master thread, "r.t"
// for thread t > 0.
func (p Placement) Label() string {
	if p.Thread == 0 {
		return strconv.Itoa(p.Rank)
	}
	return strconv.Itoa(p.Rank) + "." + strconv.Itoa(p.Thread)
}

// Placements gives every location's rank and thread. Ranks come from the
// MPI COMM_LOCATIONS group (members[rank] = master location); the other
// locations of a rank's location group are its threads, numbered in
// ascending location id. Without that group (a non-MPI trace), the
// location groups of type process are numbered in definition order.
func Placements(defs *otf2.Defs) (map[uint64]Placement, error) {
	groupRank := map[uint32]int{}
	for _, g := range defs.Groups {
		if g.Type != otf2.GroupTypeCommLocations || g.Paradigm != otf2.ParadigmMPI {
			continue
		}
		for r, loc := range g.Members {
			l, ok := defs.Location(loc)
			if !ok {
				return nil, fmt.Errorf("localtrace: MPI location group lists undefined location %d", loc)
			}
			groupRank[l.Group] = r
		}
		break
	}
	if len(groupRank) == 0 {
		for _, lg := range defs.LocationGroups {
			if lg.Type == otf2.LocationGroupTypeProcess {
				groupRank[lg.Self] = len(groupRank)
			}
		}
	}
	byGroup := map[uint32][]uint64{}
	for _, l := range defs.Locations {
		byGroup[l.Group] = append(byGroup[l.Group], l.Self)
	}
	p := make(map[uint64]Placement, len(defs.Locations))
	for g, locs := range byGroup {
		r, ok := groupRank[g]
		if !ok {
			return nil, fmt.Errorf("localtrace: location group %d (locations %v) belongs to no MPI rank", g, locs)
		}
		sort.Slice(locs, func(i, j int) bool { return locs[i] < locs[j] })
		for t, l := range locs {
			p[l] = Placement{Rank: r, Thread: t}
		}
	}
	return p, nil
}
