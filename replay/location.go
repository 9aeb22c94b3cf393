package replay

import (
	"fmt"

	"scout/hpc"
	"scout/localtrace"
)

// Metric identifies a metric; the patterns declare theirs (and their
// names) in a catalog, the replay only stores values by id.
type Metric uint16

// Severities holds one location's metric values by local call path.
type Severities struct {
	ncp  int
	rows [][]float64 // by metric; nil for a metric without values
}

// NewSeverities makes an empty table over ncp local call paths.
func NewSeverities(ncp int) *Severities { return &Severities{ncp: ncp} }

// Add adds v to metric m at call path cp.
func (s *Severities) Add(m Metric, cp uint32, v float64) {
	for int(m) >= len(s.rows) {
		s.rows = append(s.rows, nil)
	}
	row := s.rows[m]
	if row == nil {
		row = make([]float64, s.ncp)
		s.rows[m] = row
	}
	row[cp] += v
}

// Rows returns every metric's values by local call path, by metric (nil
// for a metric without values).
func (s *Severities) Rows() [][]float64 { return s.rows }

// Violations counts clock-condition violations seen by a location.
type Violations struct {
	P2P, Coll int
}

// Location is one location's replay: its trace, its communicators and
// the severities its patterns found.
//
// The threads of a rank replay together: the master thread (Thread 0)
// replays the rank's MPI communication over World, and every thread of
// the rank, the master included, is a member of the rank's Team, over
// which the threads synchronise at their OpenMP constructs (Ctx.TeamMax).
type Location struct {
	Trace *localtrace.Trace
	Rank  int // world rank
	// World is the MPI world of the masters; nil on another thread,
	// which makes no MPI calls.
	World hpc.Comm
	// Thread is the location's thread number in its rank (0: the master).
	Thread int
	// Team is the communicator of the rank's threads, in thread order;
	// nil for a rank of one thread.
	Team hpc.Comm
	// Locks holds the release times of the locks of the rank's threads
	// (nil without locks); the threads share it.
	Locks *LockTable
	Sev   *Severities
	CCV   Violations
	// Warnings collects non-fatal problems (e.g. unmatched requests).
	Warnings []string
	// Global maps the trace's local call paths to the unified call tree
	// of all locations (set before the replay when payloads must name
	// call paths across locations).
	Global []uint32
	// NumGlobal is the number of call paths of the unified call tree
	// (set with Global); vectors over all call paths of the program,
	// such as the critical path's, have this length.
	NumGlobal int
	comms     []map[uint32]hpc.Comm // by pass, made when it starts
	inverse   []map[uint32]hpc.Comm // by pass, for passes with inverse messages
	skip      map[Pass]bool         // later passes found unneeded (Ctx.SkipPass)
	env       *Env
}

// NewLocation prepares the replay of trace t as world rank rank; every
// rank must call it with the same Env.
func NewLocation(env *Env, t *localtrace.Trace, rank int, world hpc.Comm) (*Location, error) {
	return &Location{Trace: t, Rank: rank, World: world, Sev: NewSeverities(len(t.Callpaths)), env: env}, nil
}

// buildComms rebuilds the application's communicators for pass p on the
// world communicator, and a second set if p has inverse messages (a
// collective step: every rank runs the same passes). Each pass gets its
// own, so that messages a pass leaves unreceived (sends whose receive
// was not recorded) cannot match receives of another pass, and inverse
// messages never match the pass's own.
func (l *Location) buildComms(p *pass) error {
	if l.World == nil {
		return nil // a thread without MPI calls
	}
	for len(l.comms) <= int(p.id) {
		l.comms = append(l.comms, nil)
		l.inverse = append(l.inverse, nil)
	}
	var err error
	if l.comms[p.id], err = l.createComms(p, ""); err != nil {
		return err
	}
	if p.spec.Inverse {
		l.inverse[p.id], err = l.createComms(p, "inverse ")
	}
	return err
}

func (l *Location) createComms(p *pass, what string) (map[uint32]hpc.Comm, error) {
	comms := map[uint32]hpc.Comm{}
	for _, id := range l.env.commOrder {
		c, err := l.World.Create(l.env.CommMembers[id])
		if err != nil {
			return nil, fmt.Errorf("replay: rank %d: building %scommunicator %d of the %s pass: %w", l.Rank, what, id, p.spec.Name, err)
		}
		if c != nil {
			comms[id] = c
		}
	}
	return comms, nil
}

// comm returns the transport communicator of trace communicator id in
// pass p.
func (l *Location) comm(p Pass, id uint32) (hpc.Comm, error) {
	return lookupComm(l.comms, p, id, l.Rank, "")
}

// inverseComm returns the inverse transport communicator of trace
// communicator id in pass p.
func (l *Location) inverseComm(p Pass, id uint32) (hpc.Comm, error) {
	if int(p) >= len(l.inverse) || l.inverse[p] == nil {
		return nil, fmt.Errorf("the %v pass has no inverse communicators (PassSpec.Inverse)", p)
	}
	return lookupComm(l.inverse, p, id, l.Rank, "inverse ")
}

func lookupComm(sets []map[uint32]hpc.Comm, p Pass, id uint32, rank int, what string) (hpc.Comm, error) {
	if int(p) < len(sets) {
		if c, ok := sets[p][id]; ok {
			return c, nil
		}
	}
	return nil, fmt.Errorf("%scommunicator %d is unknown or does not contain rank %d", what, id, rank)
}

// GlobalPaths returns the number of call paths of the unified call tree
// and the map from local to global call paths; without a unified tree
// (Global unset), the local call paths stand for themselves.
func (l *Location) GlobalPaths() (n int, global func(local uint32) uint32) {
	if l.Global == nil {
		return len(l.Trace.Callpaths), func(cp uint32) uint32 { return cp }
	}
	return l.NumGlobal, func(cp uint32) uint32 { return l.Global[cp] }
}
