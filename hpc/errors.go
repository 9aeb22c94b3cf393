package hpc

import "errors"

// Errors that calls wrap; test for them with errors.Is.
var (
	// ErrDeadlock means the run deadlocked: every live rank was blocked
	// with none able to proceed, or a blocked call waited for a rank
	// that had exited. Every blocked call and every later call of the
	// run then fails with it.
	ErrDeadlock = errors.New("hpc: deadlock")
	// ErrAborted means another rank failed (returned an error or
	// panicked); the error also wraps that rank's error. Every blocked
	// call and every later call of the run then fails with it.
	ErrAborted = errors.New("hpc: aborted")
	// ErrMismatch means the members of a communicator called different
	// collectives, or the same one with different roots, operations,
	// vector types or lengths, in the same position of their sequence.
	ErrMismatch = errors.New("hpc: collective mismatch")
	// ErrFreed means a communicator was used after Free.
	ErrFreed = errors.New("hpc: communicator freed")
	// ErrLinkFailed means the Link of a hosted run failed: the processes
	// can no longer reach each other.
	ErrLinkFailed = errors.New("link failed")
	// ErrPanic marks the error RunInProcess returns for a rank whose
	// function panicked; the message holds the panic value and stack.
	ErrPanic = errors.New("hpc: panic")
)

// opError is an error of one rank's call. Its message is complete; it
// wraps one of the sentinel errors above and, for aborts, the cause.
type opError struct {
	kind  error
	msg   string
	rank  int // world rank the message names, -1 if none
	cause error
}

func (e *opError) Error() string { return e.msg }

func (e *opError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

// namesRank reports whether err already says it happened on world rank r.
func namesRank(err error, r int) bool {
	var oe *opError
	return errors.As(err, &oe) && oe.rank == r
}
