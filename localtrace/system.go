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

// Ranks splits the locations of defs by the master-thread rule: the
// master thread (thread 0) of each MPI rank replays the rank's
// communication, the other threads only have a profile. masters[r] is
// rank r's master location; threads are the other locations, in the
// order of the definitions. Ranks must be numbered 0..n-1, each with one
// master thread.
func Ranks(defs *otf2.Defs, pl map[uint64]Placement) (masters, threads []uint64, err error) {
	n := 0
	for _, l := range defs.Locations {
		if pl[l.Self].Thread == 0 {
			n++
		}
	}
	masters = make([]uint64, n)
	have := make([]bool, n)
	for _, l := range defs.Locations {
		p := pl[l.Self]
		switch {
		case p.Rank < 0 || p.Rank >= n:
			return nil, nil, fmt.Errorf("location %d has MPI rank %d, but the trace has ranks 0..%d", l.Self, p.Rank, n-1)
		case p.Thread != 0:
			threads = append(threads, l.Self)
		case have[p.Rank]:
			return nil, nil, fmt.Errorf("MPI rank %d has two master threads (locations %d and %d)", p.Rank, masters[p.Rank], l.Self)
		default:
			masters[p.Rank], have[p.Rank] = l.Self, true
		}
	}
	for r, ok := range have {
		if !ok {
			return nil, nil, fmt.Errorf("MPI ranks are not numbered 0..%d (rank %d has no master thread)", n-1, r)
		}
	}
	return masters, threads, nil
}
