package analysis

import (
	"errors"
	"fmt"
	"strings"

	"scout/hpc"
)

// A failed replay fails every rank: one or a few with the cause, the
// others because of it (hpc.ErrAborted), or all with a deadlock. The
// user gets one message: the causes first, once, then how many ranks
// stopped because of them; for a deadlock, where each rank is stuck.

// ErrReported is the error of an MPI process whose failure rank 0
// reported for all: the process exits with status 1 and prints nothing
// more.
var ErrReported = errors.New("the failure is reported by rank 0")

// failKind says how a rank's replay failed.
type failKind uint8

const (
	failCause    failKind = iota // the rank failed on its own
	failAborted                  // another rank's failure stopped it
	failDeadlock                 // the replay deadlocked
)

// rankFailure is one rank's error of a failed replay; under MPI the
// processes send theirs to rank 0, which explains them all.
type rankFailure struct {
	Rank int
	Kind failKind
	Msg  string
}

// rankFailures lists the errors of the ranks that failed: errs[i] is
// that of location ls[i].
func rankFailures(ls []*located, errs []error) []rankFailure {
	var fs []rankFailure
	for i, err := range errs {
		if err == nil {
			continue
		}
		k := failCause
		switch {
		case errors.Is(err, hpc.ErrDeadlock):
			k = failDeadlock
		case errors.Is(err, hpc.ErrAborted):
			k = failAborted
		}
		fs = append(fs, rankFailure{Rank: ls[i].rank, Kind: k, Msg: err.Error()})
	}
	return fs
}

// Bounds of a failure message: the causes and the deadlocked ranks shown.
const (
	maxCauses     = 3
	maxDeadlocked = 16
)

// replayError is the error of a failed replay: its message explains the
// ranks' failures; it wraps hpc.ErrDeadlock or hpc.ErrAborted.
type replayError struct {
	msg  string
	kind error
}

func (e *replayError) Error() string { return e.msg }
func (e *replayError) Unwrap() error { return e.kind }

// explainFailure turns the failures of the ranks (in rank order) into
// one error: the causes first, then a count of the ranks they stopped;
// for a deadlock, one line per rank saying where its replay stopped and
// what it waits for.
func explainFailure(fs []rankFailure) error {
	var causes, deadlocked []rankFailure
	aborted := 0
	for _, f := range fs {
		switch f.Kind {
		case failCause:
			causes = append(causes, f)
		case failDeadlock:
			deadlocked = append(deadlocked, f)
		default:
			aborted++
		}
	}
	var b strings.Builder
	if len(causes) == 0 && len(deadlocked) > 0 {
		b.WriteString("the replay deadlocked: the trace's communication cannot be matched (is a location's trace truncated or damaged?)")
		for i, f := range deadlocked {
			if i == maxDeadlocked {
				fmt.Fprintf(&b, "\n  … and %d more ranks", len(deadlocked)-maxDeadlocked)
				break
			}
			b.WriteString("\n  " + deadlockLine(f.Msg))
		}
		return &replayError{msg: b.String(), kind: hpc.ErrDeadlock}
	}
	if len(causes) == 0 { // only consequences: show the first
		if len(fs) == 0 {
			return &replayError{msg: "the replay failed", kind: hpc.ErrAborted}
		}
		return &replayError{msg: fs[0].Msg, kind: hpc.ErrAborted}
	}
	for i, f := range causes {
		if i == maxCauses {
			fmt.Fprintf(&b, "\n(and %d more %s failed)", len(causes)-maxCauses, plural(len(causes)-maxCauses, "rank"))
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		msg := f.Msg
		if !strings.HasPrefix(msg, fmt.Sprintf("rank %d", f.Rank)) {
			msg = fmt.Sprintf("rank %d: %s", f.Rank, msg)
		}
		b.WriteString(msg)
	}
	if n := aborted + len(deadlocked); n > 0 {
		fmt.Fprintf(&b, "\n(%d other %s stopped because of this)", n, plural(n, "rank"))
	}
	return &replayError{msg: b.String(), kind: hpc.ErrAborted}
}

// deadlockLine shortens a rank's deadlock error to its own state: the
// replay's context and the call it is blocked in, without the states of
// the other ranks that the message lists after it.
func deadlockLine(msg string) string {
	const tag = "hpc: deadlock: "
	i := strings.Index(msg, tag)
	if i < 0 {
		return msg
	}
	state := msg[i+len(tag):]
	if j := strings.Index(state, "; "); j >= 0 {
		state = state[:j]
	}
	return msg[:i] + state
}

// plural returns word for one, else its plural.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
