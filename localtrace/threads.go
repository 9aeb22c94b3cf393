package localtrace

import (
	"fmt"
	"sort"
)

// AdoptThread makes the call tree of worker thread w continue that of its
// master thread m, as the program's call stack does: a region the worker
// enters outside every region (a parallel region, at the begin of its
// part in a team) was called from where the master forked that team, so
// its call path becomes a child of the master's call path at the fork,
// and every call path below it follows. The fork of a team is the
// master's last fork at or before the worker's first event of it. A root
// region entered before any fork of the master stays a root.
//
// AdoptThread rewrites w's call tree (Callpaths, and Event.Arg of Enter and
// Leave): its first call paths are copies of the master's call paths
// that lead to forks, then its own. m is only read.
func AdoptThread(w, m *Trace) error {
	type fork struct {
		time float64
		cp   uint32 // the master's call path at the fork (None outside every region)
	}
	var forks []fork
	for i := range m.Events {
		if m.Events[i].Kind == KindFork {
			forks = append(forks, fork{m.Time(i), m.Callpath(i)})
		}
	}
	if len(forks) == 0 {
		return nil
	}
	var (
		nodes    []Callpath
		index    = map[uint64]uint32{} // (parent, region) → node
		fromM    = map[uint32]uint32{} // master call path → node
		child    func(parent, region uint32) uint32
		imported func(mcp uint32) uint32
	)
	child = func(parent, region uint32) uint32 {
		k := uint64(parent)<<32 | uint64(region)
		if c, ok := index[k]; ok {
			return c
		}
		c := uint32(len(nodes))
		nodes = append(nodes, Callpath{Region: region, Parent: parent})
		index[k] = c
		return c
	}
	imported = func(mcp uint32) uint32 {
		if mcp == None {
			return None
		}
		if c, ok := fromM[mcp]; ok {
			return c
		}
		p := imported(m.Callpaths[mcp].Parent)
		c := child(p, m.Callpaths[mcp].Region)
		fromM[mcp] = c
		return c
	}
	// the master's call paths of the forks first, in the master's order
	for _, f := range forks {
		imported(f.cp)
	}
	// forkOf returns the call path a root region of a team that began
	// at time t hangs below.
	forkOf := func(t float64) uint32 {
		k := sort.Search(len(forks), func(k int) bool { return forks[k].time > t })
		if k == 0 {
			return None
		}
		return imported(forks[k-1].cp)
	}
	var stack []uint32
	inTeam, team := false, None // the current team (from TeamBegin to TeamEnd) and its fork's call path
	for i := range w.Events {
		e := &w.Events[i]
		switch e.Kind {
		case KindEnter:
			var parent uint32
			switch {
			case len(stack) > 0:
				parent = stack[len(stack)-1]
			case inTeam:
				parent = team
			default:
				parent = forkOf(w.Time(i))
			}
			e.Arg = child(parent, w.Callpaths[e.Arg].Region) // w.Callpaths is still the old tree
			stack = append(stack, e.Arg)
		case KindLeave:
			if len(stack) == 0 {
				return fmt.Errorf("localtrace: location %d: event %d: Leave without Enter", w.Location, i)
			}
			e.Arg = stack[len(stack)-1]
			stack = stack[:len(stack)-1]
		case KindTeamBegin:
			if len(stack) == 0 {
				inTeam, team = true, forkOf(w.Time(i))
			}
		case KindTeamEnd:
			if len(stack) == 0 {
				inTeam = false
			}
		}
	}
	w.Callpaths = nodes
	return nil
}
