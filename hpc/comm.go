// Package hpc is the communication substrate of scout's replay: MPI-style
// point-to-point messages and collectives between analysis ranks, each
// replaying one traced location.
//
// Comm is the interface the replay programs against. RunInProcess
// implements it with one goroutine per rank; an MPI implementation (cgo,
// behind a build tag) provides the same interface across processes. Both
// keep MPI's semantics:
//
//   - A message matches a receive by (communicator, source, tag), and
//     messages with the same (source, destination, communicator, tag)
//     are received in the order they were sent (non-overtaking).
//   - Every member of a communicator calls the same collectives, with the
//     same root and operation, in the same order. The in-process
//     implementation reports a mismatch as an error (ErrMismatch).
//   - Sends are buffered: Send and Isend return once the payload has been
//     copied, whether or not a matching receive has been posted. A replay
//     therefore cannot deadlock where MPI with eager sends would not.
//   - Results are deterministic: reductions combine the members'
//     contributions in rank order, and MAXLOC/MINLOC break ties towards
//     the lowest rank.
//
// A Comm belongs to one rank and must be used by one goroutine at a time,
// like an MPI communicator without MPI_THREAD_MULTIPLE.
//
// Payload ownership: the caller may reuse every buffer it passes in as
// soon as the call returns, and every buffer returned belongs to the
// caller alone; no two ranks ever share memory through this package.
package hpc

// Undefined is the color that leaves a rank out of every communicator
// made by Split (MPI_UNDEFINED); any negative color means the same.
const Undefined = -1

// Comm is a communicator as seen by one of its members: a group of ranks
// numbered 0..Size()-1 with its own message and collective space.
//
// Point-to-point ranks (dest, src) and roots are ranks in this
// communicator. Tags are non-negative. In the in-process implementation,
// blocking calls return an error instead of blocking forever when no
// progress is possible (ErrDeadlock) or when another rank failed
// (ErrAborted); an MPI implementation relies on MPI to abort the job.
type Comm interface {
	// Rank returns the calling rank's number in the communicator.
	Rank() int
	// Size returns the number of ranks in the communicator.
	Size() int
	// Name returns the communicator's name, used in error messages.
	Name() string
	// SetName names the communicator for error messages
	// (MPI_Comm_set_name); it affects the calling rank only.
	SetName(name string)

	// Send sends a copy of data to dest with tag. It is buffered: it
	// never waits for the receiver.
	Send(dest, tag int, data []byte) error
	// Isend starts sending a copy of data to dest with tag; the caller
	// may reuse data at once. The request completes when the payload
	// no longer needs the sender (in-process: at once).
	Isend(dest, tag int, data []byte) (Request, error)
	// Recv waits for and returns the next message from src with tag.
	Recv(src, tag int) ([]byte, error)

	// Barrier waits until every member has called it.
	Barrier() error
	// Bcast returns a copy of root's data on every member; the data
	// passed by the other members is ignored.
	Bcast(root int, data []byte) ([]byte, error)
	// Gather returns, on root, every member's data indexed by rank; the
	// other members get nil. The lengths may differ (MPI_Gatherv).
	Gather(root int, data []byte) ([][]byte, error)
	// Allgather returns every member's data indexed by rank, on every
	// member.
	Allgather(data []byte) ([][]byte, error)
	// Reduce combines the members' vectors element-wise with op and
	// returns the result on root; the others get nil. All vectors must
	// have the same type and length. See Op for the valid combinations.
	Reduce(root int, op Op, v Vector) (Vector, error)
	// Allreduce is Reduce with the result returned on every member.
	Allreduce(op Op, v Vector) (Vector, error)
	// Scan returns on rank i the combination of the vectors of ranks
	// 0..i (inclusive prefix, MPI_Scan).
	Scan(op Op, v Vector) (Vector, error)
	// Exscan returns on rank i>0 the combination of the vectors of ranks
	// 0..i-1 (exclusive prefix, MPI_Exscan); rank 0 gets nil.
	Exscan(op Op, v Vector) (Vector, error)

	// Split partitions the communicator (collectively, MPI_Comm_split):
	// members with the same non-negative color form a new communicator,
	// ordered by key and then by rank here. A negative color (Undefined)
	// yields a nil Comm.
	Split(color, key int) (Comm, error)
	// Create makes a communicator of the given members (collectively,
	// MPI_Comm_create). members are ranks in this communicator, listed
	// in their new rank order; every member of this communicator must
	// pass the same list. Ranks not listed get a nil Comm.
	Create(members []int) (Comm, error)
	// Self returns the calling rank's size-1 communicator
	// (MPI_COMM_SELF). It is the same for every Comm of the rank.
	Self() Comm
	// Free releases a communicator made by Split or Create; it must not
	// be used afterwards. Freeing the world or Self communicator is an
	// error.
	Free() error
}

// Request is a pending non-blocking operation.
type Request interface {
	// Wait blocks until the operation has completed.
	Wait() error
	// Test reports whether the operation has completed, without
	// blocking.
	Test() (bool, error)
}
