package replay

import (
	"encoding/binary"
	"errors"
	"math"

	"scout/localtrace"
)

// Role names an event a message carries to the partner.
type Role uint8

// Payload roles.
const (
	RoleSend      Role = iota // the send event (time, bytes)
	RoleEnterSend             // Enter of the send region
	RoleLeaveSend             // Leave of the send region
	RoleRecv                  // the receive event
	RoleEnterRecv             // Enter of the receive request region (backward replay)
	RoleLeaveRecv             // Leave of the receive request region (backward replay)
	numRoles
)

// EventRef is an event as shipped in a message.
type EventRef struct {
	Time  float64
	Bytes uint64
	Valid bool
}

// Roles holds the events of a message payload.
type Roles [numRoles]EventRef

// Set stores an event under role r.
func (rs *Roles) Set(r Role, time float64, bytes uint64) {
	rs[r] = EventRef{Time: time, Bytes: bytes, Valid: true}
}

func (rs *Roles) reset() { *rs = Roles{} }

// encode appends the valid roles: count, then (role, time, bytes) each.
func (rs *Roles) encode(b []byte) []byte {
	n := 0
	for _, e := range rs {
		if e.Valid {
			n++
		}
	}
	b = append(b, byte(n))
	for r, e := range rs {
		if e.Valid {
			b = append(b, byte(r))
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.Time))
			b = binary.LittleEndian.AppendUint64(b, e.Bytes)
		}
	}
	return b
}

var errPayload = errors.New("malformed replay payload")

func (rs *Roles) decode(b []byte) error {
	rs.reset()
	if len(b) < 1 {
		return errPayload
	}
	n := int(b[0])
	b = b[1:]
	if len(b) != n*17 {
		return errPayload
	}
	for i := 0; i < n; i++ {
		r := Role(b[0])
		if r >= numRoles {
			return errPayload
		}
		rs[r] = EventRef{Time: math.Float64frombits(binary.LittleEndian.Uint64(b[1:])),
			Bytes: binary.LittleEndian.Uint64(b[9:]), Valid: true}
		b = b[17:]
	}
	return nil
}

// CollInfo is the result of a collective's time exchange, in
// communicator ranks.
type CollInfo struct {
	My          TimeRank // own begin time
	Latest      TimeRank // latest begin (over the relevant ranks)
	EarliestEnd TimeRank // earliest end (over the relevant ranks)
	Root        TimeRank // root's begin (rooted operations)
	End         float64  // own end time
	SyncPoint   bool
}

// Ctx is the per-event scratch state handed to callbacks; the replay
// resets it after every trace event.
type Ctx struct {
	Env   *Env
	Trace *localtrace.Trace
	Loc   *Location
	// Index is the current trace event.
	Index int
	// Local holds the roles this location ships; Remote those received.
	Local, Remote Roles
	// Idle and Completion are the wait and completion times the
	// communication handler or a general pattern computed.
	Idle, Completion float64
	// Coll is the current collective's exchange result.
	Coll CollInfo
	// Peer is the partner's communicator rank of the current message.
	Peer int
}

// Event returns the current event.
func (c *Ctx) Event() *localtrace.Event { return &c.Trace.Events[c.Index] }

// Callpath returns the local call path of event i.
func (c *Ctx) Callpath(i int) uint32 { return c.Trace.Callpath(i) }

// EnterTime returns the time of the Enter of event i's region.
func (c *Ctx) EnterTime(i int) float64 { return c.Trace.Events[c.Trace.EnterOf(i)].Time }

// LeaveTime returns the time of the Leave of event i's region.
func (c *Ctx) LeaveTime(i int) float64 { return c.Trace.Events[c.Trace.LeaveOf(i)].Time }

// RegionClass returns the classes of event i's region.
func (c *Ctx) RegionClass(i int) RegionClass {
	en := c.Trace.EnterOf(i)
	if en == localtrace.None {
		return 0
	}
	return c.Env.Class(c.Trace.Events[en].A)
}

// Add adds v to metric m at local call path cp of this location.
func (c *Ctx) Add(m Metric, cp uint32, v float64) { c.Loc.Sev.Add(m, cp, v) }

func (c *Ctx) reset(i int) {
	c.Index = i
	c.Local.reset()
	c.Remote.reset()
	c.Idle, c.Completion = 0, 0
	c.Coll = CollInfo{}
	c.Peer = -1
}
