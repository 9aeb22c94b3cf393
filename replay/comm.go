package replay

// TimeRank is a time stamp tagged with the rank that holds it, reduced
// with MAXLOC/MINLOC semantics (ties go to the lowest rank).
type TimeRank struct {
	Time float64
	Rank int
}

// Comm is what the replay needs from the communication substrate on one
// communicator. Ranks are communicator ranks. Implementations must keep
// MPI semantics: point-to-point messages match by source and tag in
// non-overtaking order, and every member calls the same collectives in
// the same order.
type Comm interface {
	Rank() int
	Size() int
	// Send delivers data to dest without waiting for the receiver
	// (buffered); the caller may reuse data afterwards.
	Send(dest, tag int, data []byte) error
	// Recv waits for the next message from src with tag.
	Recv(src, tag int) ([]byte, error)
	// MaxLoc and MinLoc are all-reduce operations over all members.
	MaxLoc(v TimeRank) (TimeRank, error)
	MinLoc(v TimeRank) (TimeRank, error)
	// ScanMaxLoc is the inclusive prefix MAXLOC over ranks 0..Rank().
	ScanMaxLoc(v TimeRank) (TimeRank, error)
	// Bcast returns root's v on every member.
	Bcast(root int, v float64) (float64, error)
}

// World is the communicator of all analysis ranks, from which the
// application's communicators are rebuilt.
type World interface {
	Comm
	// Create makes a communicator of the given world ranks, ordered by
	// their new rank; every world member must call it (collectively), and
	// non-members get nil.
	Create(members []int) (Comm, error)
}
