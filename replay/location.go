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
type Location struct {
	Trace *localtrace.Trace
	Rank  int // world rank
	World hpc.Comm
	Sev   *Severities
	CCV   Violations
	// Warnings collects non-fatal problems (e.g. unmatched requests).
	Warnings []string
	// Global maps the trace's local call paths to the unified call tree
	// of all locations (set before the replay when payloads must name
	// call paths across locations).
	Global []uint32
	comms  [numPasses]map[uint32]hpc.Comm // per pass, made when it starts
	env    *Env
}

// NewLocation prepares the replay of trace t as world rank rank; every
// rank must call it with the same Env.
func NewLocation(env *Env, t *localtrace.Trace, rank int, world hpc.Comm) (*Location, error) {
	return &Location{Trace: t, Rank: rank, World: world, Sev: NewSeverities(len(t.Callpaths)), env: env}, nil
}

// buildComms rebuilds the application's communicators for pass p on the
// world communicator (a collective step: every rank runs the same
// passes). Each pass gets its own, so that messages a pass leaves
// unreceived (sends whose receive was not recorded) cannot match
// receives of another pass.
func (l *Location) buildComms(p Pass) error {
	l.comms[p] = map[uint32]hpc.Comm{}
	for _, id := range l.env.commOrder {
		c, err := l.World.Create(l.env.CommMembers[id])
		if err != nil {
			return fmt.Errorf("replay: rank %d: building communicator %d: %w", l.Rank, id, err)
		}
		if c != nil {
			l.comms[p][id] = c
		}
	}
	return nil
}

// comm returns the transport communicator of trace communicator id.
func (l *Location) comm(pass Pass, id uint32) (hpc.Comm, error) {
	if c, ok := l.comms[pass][id]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("communicator %d is unknown or does not contain rank %d", id, l.Rank)
}
