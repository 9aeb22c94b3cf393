// Package hpc is the communication substrate of scout's replay: MPI-style
// point-to-point messages and collectives between analysis ranks, each
// replaying one traced location.
//
// One runtime serves every placement of the ranks: RunInProcess runs all
// ranks of a run in this process, as coroutines that take turns on one
// goroutine per processor (coop.go); RunHosted runs a share of
// them here and talks to the processes hosting the others over a Link (an
// MPI link under mpirun, in-memory links in tests), with one rank per
// process as with many. Either way the ranks see the same Comm, with MPI's
// semantics:
//
//   - A message matches a receive by (communicator, source, tag), and
//     messages with the same (source, destination, communicator, tag)
//     are received in the order they were sent (non-overtaking).
//   - Sends are buffered: Send returns once the payload has been copied,
//     whether or not a matching receive has been posted.
//   - Every member of a communicator calls the same collectives, with the
//     same root and operation, in the same order; a mismatch is an error
//     (ErrMismatch) on every member. Collectives are coordinated by rank
//     0 of the communicator (where all members run in this process, by
//     the last to arrive: meet.go), which combines the members'
//     contributions in rank order, so results are bit-identical wherever
//     the ranks run.
//   - A run never hangs: when no rank can proceed (a receive whose message
//     never comes, collectives of different counts), every blocked call
//     fails with ErrDeadlock naming what each rank waits for; when a rank
//     fails, every other rank's pending and later calls fail with
//     ErrAborted naming the cause.
//
// A Comm belongs to one rank and must be used by one goroutine at a time,
// like an MPI communicator without MPI_THREAD_MULTIPLE. The caller may
// reuse every buffer it passes in as soon as a call returns, and every
// buffer returned belongs to the caller alone until its next call of the
// kind: a message until the next Recv, a collective's result (read-only,
// shared by the members) until the next collective on the communicator.
package hpc

import "fmt"

// Comm is a communicator as seen by one of its members: a group of ranks
// numbered 0..Size()-1 with its own message and collective space. It is
// what the replay needs, and no more.
type Comm interface {
	// Rank returns the calling rank's number in the communicator.
	Rank() int
	// Size returns the number of ranks in the communicator.
	Size() int
	// Name returns the communicator's name, used in error messages.
	Name() string

	// Send sends a copy of data to dest with tag (tag ≥ 0). It never
	// waits for the receiver.
	Send(dest, tag int, data []byte) error
	// SendOwned is Send for a buffer the caller gives up (made by make
	// or append, never reused by the caller): a receiver in this process
	// gets it as it is, without a copy (for large messages).
	SendOwned(dest, tag int, data []byte) error
	// Recv waits for and returns the next message from src with tag.
	// The message is valid until the caller's next Recv (its buffer is
	// then reused).
	Recv(src, tag int) ([]byte, error)
	// RecvOwned is Recv for a message the caller keeps: its buffer is
	// the caller's for good, never reused (for large messages, which
	// would otherwise be copied to be kept and leave the copy behind
	// for reuse).
	RecvOwned(src, tag int) ([]byte, error)
	// Release hands back a buffer that RecvOwned returned (or a part of
	// one), once the caller is done with it: the transport may receive a
	// later message into it.
	Release(buf []byte)

	// Allreduce combines the members' vectors element-wise with op
	// (MaxLoc or MinLoc) and returns the result on every member. All
	// vectors must have the same length. The result may be shared with
	// other members: read it, do not change it.
	Allreduce(op Op, v []TimeRank) ([]TimeRank, error)
	// Scan returns on rank i the combination of the vectors of ranks
	// 0..i (inclusive prefix, MPI_Scan), to be read only like
	// Allreduce's.
	Scan(op Op, v []TimeRank) ([]TimeRank, error)
	// AllreduceFloats combines the members' float64 vectors element-wise
	// with op (Sum or Max), or one after another (Concat), in rank
	// order, and returns the result on
	// every member, to be read only like Allreduce's. All vectors must
	// have the same length.
	AllreduceFloats(op Op, v []float64) ([]float64, error)
	// ReduceFloats is AllreduceFloats with the result on member root
	// only; the other members get nil.
	ReduceFloats(op Op, root int, v []float64) ([]float64, error)
	// Gather returns on member root the data of every member, by rank
	// (of any lengths), valid until root's next collective on the
	// communicator; the other members get nil at once: they do not wait
	// for the root, and a mismatched call fails on the root.
	Gather(root int, data []byte) ([][]byte, error)
	// Bcast returns root's data on every member, to be read only like
	// Allreduce's result; the data passed by the other members is
	// ignored.
	Bcast(root int, data []byte) ([]byte, error)
	// Create makes a communicator of the given members (collectively,
	// MPI_Comm_create): ranks in this communicator, listed in their new
	// rank order; every member must pass the same list. Ranks not listed
	// get a nil Comm.
	Create(members []int) (Comm, error)
	// Shared returns the value that the members of the communicator
	// running in this process share under key (any comparable value),
	// made by mk at the first call; the value lives as long as the
	// communicator. Members in other processes have values of their own.
	Shared(key any, mk func() any) any
	// Unshare drops the value shared under key in this process; a later
	// Shared makes it anew.
	Unshare(key any)
	// Split makes a communicator of the members that pass the same
	// color (collectively, MPI_Comm_split with the rank as key): their
	// ranks in it follow their ranks here. Members passing a negative
	// color get a nil Comm.
	Split(color int) (Comm, error)
}

// Op is a reduction operation: MaxLoc and MinLoc on TimeRank vectors
// (Allreduce, Scan), Sum, Max and Concat on float64 vectors
// (AllreduceFloats, ReduceFloats).
type Op uint8

const (
	// MaxLoc keeps the pair with the largest Time; on equal times the
	// one with the lowest Rank (MPI_MAXLOC).
	MaxLoc Op = iota + 1
	// MinLoc keeps the pair with the smallest Time; on equal times the
	// one with the lowest Rank (MPI_MINLOC).
	MinLoc
	// Sum adds the members' values. The coordinator adds them in rank
	// order (((v0 + v1) + v2) + ...), so the result is bit-identical
	// wherever the ranks run.
	Sum
	// Max keeps the largest value (the first in rank order of equal
	// ones); on 0/1 flags it is a logical or.
	Max
	// Concat puts the members' vectors one after another, in rank order
	// (MPI_Gather with ReduceFloats, MPI_Allgather with AllreduceFloats).
	Concat
)

// String returns the operation's name, such as "MaxLoc".
func (o Op) String() string {
	switch o {
	case MaxLoc:
		return "MaxLoc"
	case MinLoc:
		return "MinLoc"
	case Sum:
		return "Sum"
	case Max:
		return "Max"
	case Concat:
		return "Concat"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// TimeRank is a (time, rank) pair reduced with MaxLoc or MinLoc
// (MPI_DOUBLE_INT). Rank is whatever index the caller puts in, usually
// its rank in the communicator.
type TimeRank struct {
	Time float64
	Rank int
}

// combine folds y into acc element-wise (equal lengths).
func combine(op Op, acc, y []TimeRank) {
	for i, b := range y {
		a := acc[i]
		switch op {
		case MaxLoc:
			if b.Time > a.Time || (b.Time == a.Time && b.Rank < a.Rank) {
				acc[i] = b
			}
		case MinLoc:
			if b.Time < a.Time || (b.Time == a.Time && b.Rank < a.Rank) {
				acc[i] = b
			}
		}
	}
}

// floatOp reports whether op applies to float64 vectors.
func floatOp(op Op) bool { return op == Sum || op == Max || op == Concat }

// combineFloats folds y into acc element-wise (equal lengths), or
// appends it for Concat.
func combineFloats(op Op, acc, y []float64) []float64 {
	switch op {
	case Concat:
		return append(acc, y...)
	case Sum:
		for i, b := range y {
			acc[i] += b
		}
	case Max:
		for i, b := range y {
			if b > acc[i] {
				acc[i] = b
			}
		}
	}
	return acc
}
