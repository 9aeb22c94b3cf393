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

// Event is one event of a location. Its fields mean, by kind:
//
//	Enter:  A = region, B = index of the matching Leave, C = call path
//	Leave:  A = region, B = index of the matching Enter, C = call path
//	Send, Recv, Isend, Irecv: A = index into Trace.Messages
//	CollEnd, NbcComplete: A = index into Trace.Collectives
//	CommCreate, CommDestroy: A = communicator
//	MeasurementOnOff: A = mode (1 on, 2 off); Metric: A = index into Trace.Metrics
//	Fork: A = number of requested threads
//	TeamBegin, TeamEnd: A = the thread team (communicator)
//	LockAcquire, LockRelease: A = lock, C = acquisition order (the
//	    lock's n-th acquisition by any thread of the process)
//	Other: A = OTF2 record type
//
// For every kind but Enter and Leave, B is the index of the enclosing
// Enter (None outside any region) and, but for the lock events, C links
// requests: Isend ↔ IsendComplete, IrecvRequest ↔ Irecv,
// RequestTest/RequestCancelled → request, NbcRequest ↔ NbcComplete,
// CollBegin ↔ CollEnd.
type Event struct {
	Time float64 // seconds since the trace's global time offset
	Kind Kind
	A    uint32
	B    uint32
	C    uint32
}

// Message holds the details of a point-to-point event, in 16 bytes
// (a location of a ring has a message for every fourth event): its size
// is Trace.MessageBytes.
type Message struct {
	Comm uint32 // communicator
	Peer uint32 // rank of the partner in Comm
	Tag  uint32
	size uint32 // bytes, or bigSize: in Trace.bigSizes
}

// bigSize marks a message of 4 GiB − 1 bytes or more.
const bigSize = math.MaxUint32

// Collective holds the details of a collective operation's end event.
type Collective struct {
	Op       uint8  // OTF2 collective operation
	Comm     uint32 // communicator
	Root     uint32 // root rank in Comm, or an OTF2 CollectiveRoot constant
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
