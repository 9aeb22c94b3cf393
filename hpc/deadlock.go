package hpc

import (
	"fmt"
	"strings"
)

// Deadlock detection. Every blocking call waits in hub.block with a
// waiter that says, under hub.mu, whether it can proceed. Only running
// ranks change shared state, so when every rank that has not exited is
// blocked and no waiter is ready, no rank can ever proceed: that is a
// deadlock. The check runs whenever a rank blocks or exits; it scans the
// ranks only when the number of blocked ranks equals the number of live
// ones.
//
// A waiter can also be hopeless on its own: a receive from a rank that
// has exited (or from itself) with no message queued, or a collective
// that a member will never join because it exited. That is a deadlock
// too, declared at once even while other ranks still run.
//
// A deadlock, like an abort, is a failure of the whole run: every blocked
// rank and every later call fails with it, naming the state of the other
// ranks when it was found.

// waiter is what a blocked rank waits for.
type waiter interface {
	// ready reports whether the call can complete now.
	ready() bool
	// hopeless reports whether the call can never complete, and the
	// world rank whose exit (or own wait) makes it so.
	hopeless() (culprit int, ok bool)
	// String describes the call and its communicator.
	String() string
}

// failure is the first abort or deadlock of a run.
type failure struct {
	kind  error // ErrAborted or ErrDeadlock
	rank  int   // abort: the failed rank; deadlock: the culprit, or -1
	cause error // abort: its error
	// state describes every rank when a deadlock was found, by world
	// rank: "rank 2 blocked in ...", "rank 2 exited" or "rank 2 running".
	state []string
}

// block waits until w is ready, the run fails, or w can never complete.
// A call that is ready completes even after a failure elsewhere. The
// caller holds h.mu; block releases it while waiting.
func (h *hub) block(me *rankState, w waiter) error {
	if me.wait != nil {
		return fmt.Errorf("hpc: rank %d: %v while blocked in %v: a rank must not call concurrently", me.rank, w, me.wait)
	}
	me.wait = w
	h.waiting++
	defer func() {
		me.wait = nil
		h.waiting--
	}()
	for {
		if me.woken { // wake found w ready and stopped counting me
			me.woken = false
			h.waiting++
		}
		if w.ready() {
			return nil
		}
		if h.failure == nil {
			if culprit, ok := w.hopeless(); ok {
				h.deadlock(culprit)
			} else {
				h.detect()
			}
		}
		if h.failure != nil {
			return h.failed(me, w.String(), true)
		}
		h.mu.Unlock()
		<-me.wake
		h.mu.Lock()
	}
}

// wake signals r if it is blocked on a call that is now ready, and stops
// counting it as waiting. Every change that can make a waiter ready calls
// it, so h.waiting == h.alive means that no rank is known to be able to
// proceed. The caller holds h.mu.
func (h *hub) wake(r *rankState) {
	if r.wait != nil && !r.woken && r.wait.ready() {
		r.woken = true
		h.waiting--
		signal(r.wake)
	}
}

// wakeAll signals every blocked rank to re-check its call, after a
// failure or an exit. The caller holds h.mu.
func (h *hub) wakeAll() {
	for _, r := range h.ranks {
		if r.wait != nil {
			signal(r.wake)
		}
	}
}

// signal wakes the rank waiting on wake, a channel of capacity 1.
func signal(wake chan struct{}) {
	select {
	case wake <- struct{}{}:
	default: // a signal is already pending
	}
}

// detect declares a deadlock if every live rank is blocked and none can
// proceed. The caller holds h.mu.
func (h *hub) detect() {
	if h.failure != nil || h.alive == 0 || h.waiting < h.alive {
		return
	}
	for _, r := range h.ranks {
		if !r.exited && (r.wait == nil || r.wait.ready()) {
			return
		}
	}
	h.deadlock(-1)
}

// deadlock records a deadlock, with the state of every rank, and wakes
// the blocked ranks to report it. The caller holds h.mu.
func (h *hub) deadlock(culprit int) {
	f := &failure{kind: ErrDeadlock, rank: culprit, state: make([]string, len(h.ranks))}
	for i, r := range h.ranks {
		switch {
		case r.exited:
			f.state[i] = fmt.Sprintf("rank %d exited", i)
		case r.wait != nil:
			f.state[i] = fmt.Sprintf("rank %d blocked in %v", i, r.wait)
		default:
			f.state[i] = fmt.Sprintf("rank %d running", i)
		}
	}
	h.failure = f
	h.wakeAll()
}

// failed returns the error of rank me, in (blocked) or calling op, after
// the run failed. The caller holds h.mu.
func (h *hub) failed(me *rankState, op string, blocked bool) error {
	f := h.failure
	verb := "in"
	if blocked {
		verb = "blocked in"
	}
	if f.kind == ErrAborted {
		return &opError{kind: ErrAborted, rank: me.rank, cause: f.cause,
			msg: fmt.Sprintf("hpc: aborted: rank %d %s %s: rank %d failed: %s",
				me.rank, verb, op, f.rank, firstLine(f.cause.Error()))}
	}
	return deadlockError(me.rank, f.rank, verb, op, f.state)
}

// deadlockError is the error of rank me, blocked (verb) in op, when a
// deadlock was found: it names the state of the other ranks (state, by
// rank; empty entries are skipped), the culprit first, then by rank.
func deadlockError(me, culprit int, verb, op string, state []string) error {
	const maxShown = 8
	order := make([]int, 0, len(state))
	if culprit >= 0 && culprit != me && culprit < len(state) {
		order = append(order, culprit)
	}
	for r := range state {
		if r != me && r != culprit && state[r] != "" {
			order = append(order, r)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "hpc: deadlock: rank %d %s %s", me, verb, op)
	for i, r := range order {
		if i == maxShown {
			fmt.Fprintf(&b, "; and %d more", len(order)-maxShown)
			break
		}
		b.WriteString("; ")
		b.WriteString(state[r])
	}
	return &opError{kind: ErrDeadlock, rank: me, msg: b.String()}
}

// firstLine returns s up to its first newline, so that a panic's stack
// is reported once, by the rank that panicked.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
