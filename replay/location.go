package replay

import (
	"fmt"

	"scout/hpc"
	"scout/localtrace"
)

// Severities holds one location's metric values by local call path.
type Severities struct {
	ncp  int
	vals map[string][]float64
}

// NewSeverities makes an empty table over ncp local call paths.
func NewSeverities(ncp int) *Severities {
	return &Severities{ncp: ncp, vals: map[string][]float64{}}
}

// Add adds v to metric at call path cp.
func (s *Severities) Add(metric string, cp uint32, v float64) {
	row := s.vals[metric]
	if row == nil {
		row = make([]float64, s.ncp)
		s.vals[metric] = row
	}
	row[cp] += v
}

// Values returns every metric's values by local call path.
func (s *Severities) Values() map[string][]float64 { return s.vals }

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
	comms    [2]map[uint32]hpc.Comm // per pass: forward, backward
	env      *Env
}

// NewLocation prepares the replay of trace t as world rank rank. It
// rebuilds the application's communicators on world (a collective step:
// every rank must call NewLocation with the same Env).
func NewLocation(env *Env, t *localtrace.Trace, rank int, world hpc.Comm) (*Location, error) {
	l := &Location{Trace: t, Rank: rank, World: world, Sev: NewSeverities(len(t.Callpaths)), env: env}
	// Each pass gets its own communicators, so that messages a pass leaves
	// unreceived (sends whose receive was not recorded) cannot match
	// receives of the other pass.
	for pass := range l.comms {
		l.comms[pass] = map[uint32]hpc.Comm{}
		for _, id := range env.commOrder {
			c, err := world.Create(env.CommMembers[id])
			if err != nil {
				return nil, fmt.Errorf("replay: rank %d: building communicator %d: %w", rank, id, err)
			}
			if c != nil {
				l.comms[pass][id] = c
			}
		}
	}
	return l, nil
}

// comm returns the transport communicator of trace communicator id.
func (l *Location) comm(pass int, id uint32) (hpc.Comm, error) {
	if c, ok := l.comms[pass][id]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("communicator %d is unknown or does not contain rank %d", id, l.Rank)
}
