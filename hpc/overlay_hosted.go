package hpc

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Hosted runs ("M < N"): M processes host N ≥ M virtual ranks, each a
// goroutine with a world communicator of size N. A message between two
// virtual ranks of one process goes straight into the receiver's queue;
// a message to a virtual rank of another process goes over the Link and
// the receiving process's router puts it into the queue. Collectives are
// built on these point-to-point messages (see overlay_hostcoll.go).
//
// Termination: when a rank returns, its process sends "exit" to every
// other process, after everything the rank sent. As links keep each pair
// of processes in order, a process that has received the exit of every
// rank of the others has received every message meant for it; once its
// own ranks have returned too, its router stops. The exits also let a
// process see that a receive from a rank of another process is hopeless
// (a deadlock, as RunInProcess reports it).
//
// Failure: the exit of the first rank of a process to fail carries its
// error to every other process, which then fails its pending and later
// calls with ErrAborted (or ErrDeadlock, if that process found a
// deadlock), as RunInProcess does. A failing Link fails the local run the
// same way.

// RunHosted runs fn on the virtual ranks that place assigns to this
// process (link.Proc()), each in its own goroutine with its own world
// communicator of size len(place): place[v] is the process of virtual
// rank v, and every process must pass the same place. Every process of
// the link must call RunHosted for the run to end.
//
// The calling goroutine routes the messages arriving over the link until
// the run is over everywhere; it makes every call of link.Recv, so a
// link whose calls must stay on one thread (MPI without thread support)
// is driven from the caller's thread. RunHosted does not close the link.
//
// Comm semantics and results equal RunInProcess's: point-to-point
// matching and order, buffered sends, bit-identical reductions (combined
// in rank order by each collective's coordinator), Split, Create, Self,
// Free and names. A rank that fails makes every rank of every process
// fail with ErrAborted. Deadlocks are detected as RunInProcess detects
// them: at once when a call waits for a rank that returned or only this
// process's ranks are involved, and within milliseconds by process 0's
// probes when blocked ranks of several processes wait for each other
// (see overlay_quiesce.go). The result joins the local ranks' errors in
// rank order; if they all succeeded, it reports a failure of another
// process's rank or of the link.
func RunHosted(link Link, place []int, fn func(world Comm) error) error {
	procs, me := link.Procs(), link.Proc()
	if len(place) < 1 {
		return fmt.Errorf("hpc: RunHosted with %d virtual ranks, need at least 1", len(place))
	}
	for v, p := range place {
		if p < 0 || p >= procs {
			return fmt.Errorf("hpc: RunHosted: rank %d placed on process %d, have %d processes", v, p, procs)
		}
	}
	h := &hostRun{link: link, place: place, me: me, procs: procs,
		ranks: make([]*hostRank, len(place)), queues: map[hostKey]*msgQueue{},
		remoteExited: make([]bool, len(place))}
	world := &hostShared{id: worldID, name: "WORLD", members: make([]int, len(place)), world: true}
	for v, p := range place {
		world.members[v] = v
		if p == me {
			r := &hostRank{vrank: v, wake: make(chan struct{}, 1)}
			h.ranks[v] = r
			h.local = append(h.local, r)
		}
	}
	h.alive = len(h.local)
	h.remote = len(place) - len(h.local)
	h.probeEvery = minProbeEvery
	errs := make([]error, len(h.local))
	if p, ok := link.(Poller); ok && len(h.local) == 1 && procs > 1 {
		// One rank: it runs here and drives the link while it waits
		// (see Poller); the router takes over when it has returned.
		h.poller = p
		var stop func()
		if me == 0 {
			stop = h.startTicker()
		}
		errs[0] = h.run(h.local[0], h.newComm(h.local[0], world, h.local[0].vrank), fn)
		h.route()
		if stop != nil {
			stop()
		}
		return h.result(errs)
	}
	var wg sync.WaitGroup
	for i, r := range h.local {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = h.run(r, h.newComm(r, world, r.vrank), fn)
		}()
	}
	if len(h.local) == 0 {
		h.mu.Lock()
		h.sendWake()
		h.mu.Unlock()
	}
	if me == 0 && procs > 1 {
		stop := h.startTicker()
		h.route()
		stop()
	} else {
		h.route()
	}
	wg.Wait()
	return h.result(errs)
}

// result is RunHosted's result once the run is over here: the local
// ranks' errors, or else a failure of another process or of the link.
func (h *hostRun) result(errs []error) error {
	if err := errors.Join(errs...); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.linkErr != nil {
		return fmt.Errorf("hpc: process %d: %w", h.me, h.linkErr)
	}
	if f := h.failure; f != nil {
		return &opError{kind: f.kind, rank: -1, cause: f.cause,
			msg: fmt.Sprintf("hpc: process %d: %s%s", h.me, f.by(), firstLine(f.cause.Error()))}
	}
	return nil
}

// Communicator ids: the world is 0, every Self is 1 (messages are keyed
// by sender and receiver too), and the coordinator (rank 0) of a Split or
// Create names each new communicator (its virtual rank + 1) << 32 | n,
// for the n-th communicator it named.
const (
	worldID uint64 = 0
	selfID  uint64 = 1
)

// hostRun is one process's share of a hosted run. Every field of it and
// of its hostRanks and hostComms marked so is guarded by mu.
type hostRun struct {
	link  Link
	place []int // process by virtual rank
	me    int   // this process
	procs int

	mu           sync.Mutex
	ranks        []*hostRank // by virtual rank, nil if on another process
	local        []*hostRank // this process's ranks, ascending
	queues       map[hostKey]*msgQueue
	alive        int          // local ranks whose fn has not returned
	waiting      int          // local ranks blocked and not woken
	failure      *hostFailure // first failure seen here; never reset
	told         bool         // the other processes know of a failure
	remote       int          // ranks of other processes
	remoteExited []bool       // by virtual rank: its exit arrived
	nExited      int          // remote ranks whose exit arrived
	woken        bool         // this process's own wake arrived
	linkErr      error        // the link failed

	// Global deadlock detection (overlay_quiesce.go).
	sent       atomic.Uint64 // data and exit frames sent to other processes
	recvd      uint64        // data and exit frames received
	wave       *wave         // process 0: the wave under way
	lastWave   *wave         // process 0: the last complete wave
	epoch      uint64        // process 0: waves started
	probeEvery time.Duration // process 0: time between waves
	endSent    bool          // process 0: "end" went out
	ended      bool          // "end" arrived from process 0

	// poller is set when the only local rank drives the link itself.
	poller Poller
}

// hostFailure is the first failure a process sees.
type hostFailure struct {
	kind  error // ErrAborted or ErrDeadlock
	rank  int   // the failed rank or the deadlock's culprit; -1 if none
	cause error // the failed rank's error, or the link's
	// remote: the failure happened on another process; cause is the
	// error of rank there.
	remote bool
	// state describes the local ranks, and the remote ones that
	// exited, when this process found a deadlock.
	state []string
}

// by names the failed rank for messages: "rank 3 failed: ", or "".
func (f *hostFailure) by() string {
	if f.rank < 0 {
		return ""
	}
	if f.kind == ErrDeadlock {
		return fmt.Sprintf("deadlock found by rank %d: ", f.rank)
	}
	return fmt.Sprintf("rank %d failed: ", f.rank)
}

// hostKey identifies a message queue: messages on communicator comm
// from virtual rank src to virtual rank dst with tag (internal tags of
// collectives are negative).
type hostKey struct {
	comm     uint64
	src, dst int
	tag      int
}

// hostRank is a local virtual rank.
type hostRank struct {
	vrank  int
	wake   chan struct{}
	wait   *hostWait // guarded by mu
	woken  bool      // guarded by mu
	exited bool      // guarded by mu
	self   *hostComm // guarded by mu
	named  uint32    // communicators named as coordinator; own goroutine only
}

// hostWait is a rank blocked until a queue is non-empty.
type hostWait struct {
	key  hostKey
	desc func() string // the call, for messages; called with mu held
	// coll describes a collective call the rank is blocked in, nil for
	// a point-to-point call: deadlock messages name the members that
	// have not joined it, as RunInProcess does.
	coll *collNote
}

// run calls fn for rank r, turning a panic into an error, and records
// the exit.
func (h *hostRun) run(r *hostRank, world *hostComm, fn func(Comm) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &opError{kind: ErrPanic, rank: r.vrank,
				msg: fmt.Sprintf("hpc: rank %d panicked: %v\n%s", r.vrank, p, debug.Stack())}
		}
		h.exit(r, err)
		if err != nil && !namesRank(err, r.vrank) {
			err = fmt.Errorf("rank %d: %w", r.vrank, err)
		}
	}()
	return fn(world)
}

// exit records that r's fn returned err and tells the other processes;
// the first failure aborts the run here and, unless they know already,
// on the other processes.
func (h *hostRun) exit(r *hostRank, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r.exited = true
	h.alive--
	// A rank that failed says so in its exit, with the run's first
	// failure as this process knows it: a process that learns of the
	// failure from this exit (before the first failure's own exit
	// reaches it) must not take the rank for one that simply returned.
	status, origin, cause := exitOK, -1, error(nil)
	var state []string
	if err != nil {
		if h.failure == nil {
			h.failure = &hostFailure{kind: ErrAborted, rank: r.vrank, cause: err}
		}
		f := h.failure
		status, origin, cause = exitAborted, f.rank, f.cause
		if f.kind == ErrDeadlock {
			// The deadlock's culprit and the state of the ranks, so
			// that every rank describes it alike; the rank's error
			// for a process that learnt of it without the state.
			status, state = exitDeadlock, f.state
			if cause == nil {
				cause = err
			}
		}
		h.told = true
	}
	// Sent under mu: a rank's exit follows everything it sent, and the
	// last exit precedes the wake.
	h.broadcast(encodeExit(r.vrank, status, origin, cause, state))
	h.wakeAll()
	h.detect()
	if h.alive == 0 {
		h.sendWake()
	}
}

// sendWake tells this process's router that its ranks have all
// returned. The caller holds mu.
func (h *hostRun) sendWake() {
	if err := h.link.Send(h.me, []byte{frameWake}); err != nil {
		h.linkFailed(err)
	}
}

// broadcast sends an exit frame to every other process. The caller
// holds mu.
func (h *hostRun) broadcast(frame []byte) {
	for p := range h.procs {
		if p == h.me {
			continue
		}
		h.sent.Add(1)
		if err := h.link.Send(p, frame); err != nil {
			h.linkFailed(err)
			return
		}
	}
}

// linkFailed fails the run after a link error. The caller holds mu.
func (h *hostRun) linkFailed(err error) {
	if h.linkErr == nil {
		h.linkErr = fmt.Errorf("%w: %w", ErrLinkFailed, err)
	}
	if h.failure == nil {
		h.failure = &hostFailure{kind: ErrAborted, rank: -1, cause: h.linkErr}
	}
	h.wakeAll()
}

// route delivers the messages arriving over the link until the run is
// over or the link fails.
func (h *hostRun) route() {
	for {
		from, msg, err := h.link.Recv()
		if err != nil {
			h.mu.Lock()
			h.linkFailed(err)
			h.mu.Unlock()
			return
		}
		if h.handle(from, msg) {
			return
		}
	}
}

// handle processes one frame and reports whether the router is done:
// the local ranks have returned (the wake arrived) and every rank of the
// other processes has exited.
func (h *hostRun) handle(from int, msg []byte) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.handleLocked(from, msg)
}

// handleLocked is handle for a caller that holds mu.
func (h *hostRun) handleLocked(from int, msg []byte) bool {
	err := h.frame(from, msg)
	if err != nil {
		// A corrupt frame: fail the run here and tell the others.
		h.linkFailed(fmt.Errorf("from process %d: %w", from, err))
		if !h.told {
			h.told = true
			h.broadcast(encodeExit(-1, exitAborted, -1, h.linkErr, nil))
		}
	}
	return h.finished()
}

// finished reports whether the router is done: the local ranks have
// returned (the wake arrived), every rank of the other processes has
// exited, and process 0, the one that probes, has ended the run for the
// others. The caller holds mu.
func (h *hostRun) finished() bool {
	switch {
	case !h.woken || h.nExited < h.remote:
		return false
	case h.procs == 1 || h.linkErr != nil:
		return true
	case h.me != 0:
		return h.ended
	case h.wave != nil: // the answers must still be received
		return false
	}
	if !h.endSent {
		h.endSent = true
		for p := 1; p < h.procs; p++ {
			h.sendControl(p, []byte{frameEnd})
		}
	}
	return true
}

// frame processes one frame. The caller holds mu.
func (h *hostRun) frame(from int, msg []byte) error {
	if from < 0 || from >= h.procs {
		return fmt.Errorf("message from process %d of %d", from, h.procs)
	}
	if len(msg) == 0 {
		return errCorrupt
	}
	switch msg[0] {
	case frameData:
		hd, payload, err := decodeData(msg[1:])
		if err != nil {
			return err
		}
		if hd.dst >= len(h.ranks) || h.ranks[hd.dst] == nil || hd.src >= len(h.place) || h.place[hd.src] != from {
			return fmt.Errorf("message from rank %d to rank %d, which is not hosted here: do the processes pass the same placement?", hd.src, hd.dst)
		}
		h.recvd++
		h.deliver(hd, payload)
	case frameExit:
		rank, status, origin, cause, state, err := decodeExit(msg[1:])
		if err != nil {
			return err
		}
		if rank >= 0 {
			if rank >= len(h.place) || h.place[rank] != from || h.remoteExited[rank] {
				return fmt.Errorf("exit of rank %d: not a rank of process %d, or exited before", rank, from)
			}
			h.remoteExited[rank] = true
			h.nExited++
		}
		h.recvd++
		if status != exitOK {
			h.told = true
			if h.failure == nil {
				kind := ErrAborted
				if status == exitDeadlock {
					kind = ErrDeadlock
				}
				h.failure = &hostFailure{kind: kind, rank: origin, cause: cause, remote: true}
				if len(state) == len(h.place) {
					h.failure.state, h.failure.remote = state, false
				}
			}
		}
		// Receives from the rank that exited may now be hopeless.
		h.wakeAll()
		h.detect()
	case frameWake:
		if from != h.me {
			return fmt.Errorf("wake from process %d", from)
		}
		h.woken = true
	case frameTick:
		if from != h.me || h.me != 0 {
			return fmt.Errorf("tick from process %d", from)
		}
		h.tick()
	case frameProbe:
		epoch, withState, err := decodeProbe(msg[1:])
		if err != nil {
			return err
		}
		if from != 0 {
			return fmt.Errorf("probe from process %d", from)
		}
		h.sendControl(0, encodeAck(epoch, h.localAck(withState)))
	case frameAck:
		epoch, a, err := decodeAck(msg[1:])
		if err != nil {
			return err
		}
		if h.me != 0 || from == 0 {
			return fmt.Errorf("probe answer from process %d to process %d", from, h.me)
		}
		return h.answer(from, epoch, a)
	case frameDeadlock:
		state, err := decodeDeadlock(msg[1:])
		if err != nil {
			return err
		}
		if from != 0 || len(state) != len(h.place) {
			return fmt.Errorf("deadlock of %d ranks from process %d", len(state), from)
		}
		h.globalDeadlock(state)
	case frameEnd:
		if from != 0 || h.me == 0 {
			return fmt.Errorf("end from process %d", from)
		}
		h.ended = true
	default:
		return fmt.Errorf("unexpected frame type %d", msg[0])
	}
	return nil
}

// deliver queues a message for a local rank. The caller holds mu.
func (h *hostRun) deliver(k hostKey, payload []byte) {
	q := h.queues[k]
	if q == nil {
		q = &msgQueue{}
		h.queues[k] = q
	}
	q.push(payload)
	h.wake(h.ranks[k.dst])
}

// take pops the next message of a non-empty queue. A queue of a
// collective's internal tag is dropped when it empties (each call has
// tags of its own); user tags keep theirs for the next message. The
// caller holds mu.
func (h *hostRun) take(k hostKey) []byte {
	q := h.queues[k]
	m := q.pop()
	if q.len() == 0 && k.tag < 0 {
		delete(h.queues, k)
	}
	return m
}

func (h *hostRun) ready(w *hostWait) bool {
	q := h.queues[w.key]
	return q != nil && q.len() > 0
}

// hopeless reports whether w can never complete: it waits for itself or
// for a rank that has returned. The caller holds mu.
func (h *hostRun) hopeless(w *hostWait) bool {
	src := w.key.src
	if src == w.key.dst {
		return true
	}
	if r := h.ranks[src]; r != nil {
		return r.exited
	}
	return h.remoteExited[src]
}

// block waits until w is ready, the run fails or w can never complete;
// a ready call completes even after a failure. The caller holds mu,
// which block releases while waiting.
func (h *hostRun) block(me *hostRank, w *hostWait) error {
	if me.wait != nil {
		return fmt.Errorf("hpc: rank %d: %s while blocked in %s: a rank must not call concurrently", me.vrank, w.desc(), me.wait.desc())
	}
	me.wait = w
	h.waiting++
	defer func() {
		me.wait = nil
		h.waiting--
	}()
	for {
		if me.woken {
			me.woken = false
			h.waiting++
		}
		if h.ready(w) {
			return nil
		}
		if h.failure == nil {
			if h.hopeless(w) {
				h.deadlock(w.key.src)
			} else {
				h.detect()
			}
		}
		if h.failure != nil {
			return h.failed(me, w.desc(), true)
		}
		if h.poller != nil {
			h.poll()
			continue
		}
		h.mu.Unlock()
		<-me.wake
		h.mu.Lock()
	}
}

// pollSlice is how long a waiting rank polls the link before it looks
// at its own state again (queued sends, a failure).
const pollSlice = time.Millisecond

// poll waits a little for a frame and handles it, for a rank that drives
// the link itself. The caller holds mu, which poll releases while it
// waits.
func (h *hostRun) poll() {
	h.mu.Unlock()
	from, msg, ok, err := h.poller.Poll(pollSlice)
	h.mu.Lock()
	switch {
	case err != nil:
		h.linkFailed(err)
	case ok:
		h.handleLocked(from, msg)
	}
}

// wake signals r if it is blocked on a call that is now ready. The
// caller holds mu.
func (h *hostRun) wake(r *hostRank) {
	if r.wait != nil && !r.woken && h.ready(r.wait) {
		r.woken = true
		h.waiting--
		signal(r.wake)
	}
}

// wakeAll signals every blocked local rank to re-check its call. The
// caller holds mu.
func (h *hostRun) wakeAll() {
	for _, r := range h.local {
		if r.wait != nil {
			signal(r.wake)
		}
	}
}

// detect declares a deadlock if every live local rank is blocked with
// none able to proceed, and the ranks of the other processes have all
// returned, so that no message can come. The caller holds mu.
func (h *hostRun) detect() {
	if h.failure != nil || h.alive == 0 || h.waiting < h.alive || h.nExited < h.remote {
		return
	}
	for _, r := range h.local {
		if !r.exited && (r.wait == nil || h.ready(r.wait)) {
			return
		}
	}
	h.deadlock(-1)
}

// deadlock records a deadlock with the state of the ranks as far as
// this process knows it, and wakes the blocked ranks. The caller holds
// mu.
func (h *hostRun) deadlock(culprit int) {
	var notes []rankNote
	for v, r := range h.ranks {
		switch {
		case r == nil && h.remoteExited[v]:
			notes = append(notes, rankNote{rank: v, note: fmt.Sprintf("rank %d exited", v)})
		case r == nil:
			notes = append(notes, rankNote{rank: v, note: fmt.Sprintf("rank %d on process %d", v, h.place[v])})
		case r.wait == nil && !r.exited:
			notes = append(notes, rankNote{rank: v, note: fmt.Sprintf("rank %d running", v)})
		}
	}
	notes = append(notes, h.localNotes()...)
	h.failure = &hostFailure{kind: ErrDeadlock, rank: culprit, state: renderNotes(notes, len(h.place))}
	h.wakeAll()
}

// failed returns the error of rank me, in (blocked) or calling op, after
// the run failed. The caller holds mu.
func (h *hostRun) failed(me *hostRank, op string, blocked bool) error {
	f := h.failure
	verb := "in"
	if blocked {
		verb = "blocked in"
	}
	if f.kind == ErrAborted {
		return &opError{kind: ErrAborted, rank: me.vrank, cause: f.cause,
			msg: fmt.Sprintf("hpc: aborted: rank %d %s %s: %s%s",
				me.vrank, verb, op, f.by(), firstLine(f.cause.Error()))}
	}
	if blocked && f.state != nil {
		// The state names the members a collective waits for.
		if s, ok := strings.CutPrefix(f.state[me.vrank], fmt.Sprintf("rank %d blocked in ", me.vrank)); ok {
			op = s
		}
	}
	if f.remote {
		return &opError{kind: ErrDeadlock, rank: me.vrank, cause: f.cause,
			msg: fmt.Sprintf("hpc: deadlock: rank %d %s %s; %s%s",
				me.vrank, verb, op, f.by(), firstLine(f.cause.Error()))}
	}
	return deadlockError(me.vrank, f.rank, verb, op, f.state)
}
