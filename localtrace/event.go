// Package localtrace holds one location's events in a compact in-memory
// form and loads it from an OTF2 archive.
//
// Events are small values in one slice. Definitions (regions,
// communicators) are referred to by their global OTF2 identifiers;
// point-to-point messages and collective operations keep their details in
// side tables that the event indexes. Navigation the analysis needs is
// precomputed while loading: the matching LEAVE of every ENTER, the
// enclosing ENTER of every other event, the local call path of every
// region instance, and request links between non-blocking operations and
// their completions.
package localtrace

import "math"

// Kind is the type of an event.
type Kind uint8

// Event kinds.
const (
	KindInvalid          Kind = iota
	KindEnter                 // region entered; ProgramBegin enters the program region
	KindLeave                 // region left; ProgramEnd leaves the program region
	KindSend                  // blocking send (MpiSend)
	KindIsend                 // non-blocking send request (MpiIsend)
	KindIsendComplete         // completion of a non-blocking send
	KindRecv                  // blocking receive (MpiRecv)
	KindIrecvRequest          // non-blocking receive request
	KindIrecv                 // completion of a non-blocking receive (MpiIrecv)
	KindRequestTest           // unsuccessful test of a request
	KindRequestCancelled      // request cancelled
	KindCollBegin             // begin of a collective operation
	KindCollEnd               // end of a collective operation
	KindNbcRequest            // non-blocking collective started
	KindNbcComplete           // non-blocking collective completed
	KindCommCreate            // communicator created
	KindCommDestroy           // communicator destroyed
	KindMeasurementOnOff      // recording switched on or off
	KindBufferFlush           // trace buffer flushed
	KindMetric                // metric sample
	KindFork                  // a thread forks a team (THREAD_FORK, OMP_FORK)
	KindJoin                  // the team has joined (THREAD_JOIN, OMP_JOIN)
	KindTeamBegin             // the thread begins its part in a team (THREAD_TEAM_BEGIN)
	KindTeamEnd               // the thread ends its part in a team (THREAD_TEAM_END)
	KindLockAcquire           // a lock acquired (THREAD_ACQUIRE_LOCK, OMP_ACQUIRE_LOCK)
	KindLockRelease           // a lock released (THREAD_RELEASE_LOCK, OMP_RELEASE_LOCK)
	KindOther                 // any other OTF2 event; A holds its record type
	numKinds
)

var kindNames = [numKinds]string{"Invalid", "Enter", "Leave", "Send", "Isend", "IsendComplete", "Recv",
	"IrecvRequest", "Irecv", "RequestTest", "RequestCancelled", "CollBegin", "CollEnd", "NbcRequest",
	"NbcComplete", "CommCreate", "CommDestroy", "MeasurementOnOff", "BufferFlush", "Metric", "Fork", "Join",
	"TeamBegin", "TeamEnd", "LockAcquire", "LockRelease", "Other"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "Kind(?)"
}

// None marks an absent event, message, collective or call-path index.
const None uint32 = math.MaxUint32

// Event is one event of a location, in 12 bytes. Its time is
// Trace.Time: a delta in ticks from its block's first event. Arg means,
// by kind:
//
//	Enter, Leave: the call path (index into Trace.Callpaths)
//	Send, Recv, Isend, Irecv: index of the message (Trace.Message)
//	CollEnd, NbcComplete: index into Trace.Collectives
//	IsendComplete, IrecvRequest, RequestTest, RequestCancelled,
//	    CollBegin, NbcRequest: the linked event (None for none)
//	CommCreate, CommDestroy: the communicator
//	MeasurementOnOff: the mode (1 on, 2 off); Metric: index into Trace.Metrics
//	Fork: the number of requested threads
//	TeamBegin, TeamEnd: the thread team (communicator)
//	LockAcquire, LockRelease: index into Trace.Locks
//	Other: the OTF2 record type
//
// Navigation goes through the Trace's methods: the region of an Enter
// or Leave (Trace.Region) is its call path's; the matching Leave of an
// Enter and Enter of a Leave (Trace.Match), the enclosing Enter of every
// other event (Trace.EnterOf) and the request links (Trace.Link:
// Isend ↔ IsendComplete, IrecvRequest ↔ Irecv, RequestTest and
// RequestCancelled → request, NbcRequest ↔ NbcComplete, CollBegin ↔
// CollEnd) are kept as distances in the event, or in the side tables.
type Event struct {
	// dt is the event's timestamp in ticks after the first event of its
	// block of 2^blockShift events (Trace.bases); wideDT marks one kept
	// in Trace.wide
	dt   uint32
	Kind Kind
	// near is the distance to the matching event of an Enter or Leave,
	// to the enclosing Enter of any other event (0: none), in 24 bits;
	// farAway marks a distance kept in Trace.far
	near [3]uint8
	Arg  uint32
}

// farAway marks a distance of an Event that does not fit in its 24 bits.
const farAway = 1<<24 - 1

// maxNear bounds the distances an Event keeps (farAway; less in tests).
var maxNear uint32 = farAway

// nearDist returns the distance kept in e, farAway for one in Trace.far.
func (e *Event) nearDist() uint32 {
	return uint32(e.near[0]) | uint32(e.near[1])<<8 | uint32(e.near[2])<<16
}

// setNear keeps distance d in e (d < farAway).
func (e *Event) setNear(d uint32) { e.near = [3]uint8{uint8(d), uint8(d >> 8), uint8(d >> 16)} }

// Lock is the detail of a lock event: the lock and the acquisition order
// (the lock's n-th acquisition by any thread of the process).
type Lock struct {
	Lock, Order uint32
}

// Message holds the details of a point-to-point event (Trace.Message):
// its channel. Its size is Trace.MessageBytes, its linked event
// Trace.Link.
type Message struct {
	Comm uint32 // communicator
	Peer uint32 // rank of the partner in Comm
	Tag  uint32
}

// msgEntry is a message as a trace keeps it: 8 bytes (a location of a
// ring has a message for every fourth event), where its channel and size
// and link took 20: the channel (Message), an index into Trace.chans,
// and the size in bytes, or bigSize (then in Trace.bigSizes).
type msgEntry struct {
	ch, size uint32
}

// bigSize marks a message of 4 GiB − 1 bytes or more.
const bigSize = math.MaxUint32

// Collective holds the details of a collective operation's end event.
type Collective struct {
	Op       uint8  // OTF2 collective operation
	Comm     uint32 // communicator
	Root     uint32 // root rank in Comm, or an OTF2 CollectiveRoot constant
	link     uint32 // the linked event (CollBegin, NbcRequest), None for none
	Sent     uint64 // bytes sent
	Received uint64 // bytes received
}

// MetricSample is one Metric event: the metric (class or instance) and
// its values, as raw 64-bit patterns.
type MetricSample struct {
	Metric uint32
	Values []uint64
}

// Callpath is a node of a location's call tree.
type Callpath struct {
	Region uint32 // global region id
	Parent uint32 // parent call path, or None for a root
}
