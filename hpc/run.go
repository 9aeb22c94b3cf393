package hpc

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// RunInProcess runs fn on n ranks, each with its own world communicator
// (rank 0..n-1 of n), and returns when all have returned. The ranks take
// turns on one goroutine per processor (coop.go): fn must wait for other
// ranks through the communicator only, as a wait elsewhere (a channel, a
// lock held across calls) holds up the ranks that share its processor.
// The result joins the ranks' errors in rank order, each prefixed with
// its rank unless it already names it.
//
// A rank that returns an error or panics makes every other rank's
// pending and later calls fail with ErrAborted; a deadlock makes the
// blocked calls fail with ErrDeadlock. RunInProcess therefore returns as
// long as fn itself returns after its calls fail.
func RunInProcess(n int, fn func(world Comm) error) error {
	if n < 1 {
		return fmt.Errorf("hpc: RunInProcess with %d ranks, need at least 1", n)
	}
	return newWorld(nil, make([]int, n)).start(fn)
}

// RunHosted runs fn on the ranks that place assigns to this process
// (link.Proc()), each in its own goroutine with its own world
// communicator of size len(place): place[r] is the process of rank r,
// and every process must pass the same place and call RunHosted for the
// run to end. Messages between ranks of this process stay in memory; the
// others go over the link.
//
// The calling goroutine drives the link: it makes every call of
// link.Recv, Poll and Progress, so a link whose calls must stay on one
// thread (MPI without thread support) is driven from the caller's thread.
// When this process hosts a single rank and the link is a Poller, that
// rank runs on the calling goroutine and polls the link itself while it
// waits. RunHosted does not close the link.
//
// Semantics and results equal RunInProcess's, with deadlocks that span
// processes found by process 0's probes (see detect.go). The result joins
// the local ranks' errors in rank order; if they all succeeded, it
// reports a failure of another process's rank or of the link.
func RunHosted(link Link, place []int, fn func(world Comm) error) error {
	procs := link.Procs()
	if len(place) < 1 {
		return fmt.Errorf("hpc: RunHosted with %d ranks, need at least 1", len(place))
	}
	for r, p := range place {
		if p < 0 || p >= procs {
			return fmt.Errorf("hpc: RunHosted: rank %d placed on process %d, have %d processes", r, p, procs)
		}
	}
	return newWorld(link, place).start(fn)
}

// world is one process's share of a run: its ranks, their mailboxes, and
// what it knows of the run. Lock order: world.mu before rank.mu, ranks in
// rank order.
type world struct {
	n      int
	place  []int // process by rank
	me     int   // this process
	procs  int
	link   Link   // nil in-process
	poller Poller // set when the only local rank drives the link
	// shared is set when several local ranks share a link that any
	// goroutine may drive (see drive.go); driving tells whether a rank
	// does, recvMu orders the frames' reception, routed tells the router
	// that a driver handled the run's last frame
	shared  SharedPoller
	driving atomic.Bool
	recvMu  sync.Mutex
	routed  atomic.Bool
	drains  int // the rank's calls since its last drain
	ranks   []*rank
	local   []*rank
	turns   *turns // in-process: the workers the ranks take turns on (coop.go)

	alive   atomic.Int64 // local ranks whose fn has not returned
	blocked atomic.Int64 // local ranks waiting, not yet woken
	sent    atomic.Uint64
	failure atomic.Pointer[failure] // first failure; never reset

	mu           sync.Mutex // guards the fields below
	remote       int        // ranks of other processes
	remoteExited []bool     // by rank: its exit arrived
	nExited      int
	woken        bool   // this process's ranks have all returned
	linkErr      error  // the link failed
	recvd        uint64 // counted frames received
	probe        prober // process 0's global detection
	ended        bool   // process 0 said the run is over
	// comms are the communicators of this process's members, by id, as
	// the replies of other processes' coordinators made them
	comms map[uint64]*commInfo
}

// sharedComm returns the communicator of this process with c's id, c if
// it is the first: the members in this process then share one member
// list (each decoded its own from its reply).
func (w *world) sharedComm(c *commInfo) *commInfo {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s, ok := w.comms[c.id]; ok {
		return s
	}
	if w.comms == nil {
		w.comms = map[uint64]*commInfo{}
	}
	w.comms[c.id] = c
	return c
}

// rank is one rank of this process. Its mailbox holds the messages sent
// to it, by (communicator, source, tag).
type rank struct {
	id   int
	wake chan struct{} // signalled when the wait may be over
	turn *turn         // in-process: the rank's turns on its worker (coop.go)
	// named counts the communicators named as coordinator: by the rank
	// itself, or at a meeting by the member that completes the call
	// while this rank waits in it (meet.go)
	named uint32

	// lent is the buffer the last Recv returned; it goes back to free
	// at the next Recv (the rank's own goroutine only).
	lent []byte

	mu     sync.Mutex
	free   [][]byte // buffers for messages from ranks of this process
	queues map[key]*msgQueue
	// the queues last delivered to and last awaited (look-ups of their
	// keys skip the map: messages come in runs)
	in, out lastQueue
	wait    *wait // what the rank waits for, nil if running; points to buf
	buf     wait
	woken   bool // wait's message arrived
	exited  bool
}

// lastQueue remembers the queue of the key last looked up.
type lastQueue struct {
	k key
	q *msgQueue
}

// key identifies a message queue: messages on communicator comm from
// world rank src with tag (internal tags of collectives are negative).
type key struct {
	comm uint64
	src  int
	tag  int
}

// wait is a rank blocked until a message arrives: a receive from peer
// with tag on c, or collective call seq (ct) waiting for member peer.
type wait struct {
	key  key
	q    *msgQueue // key's queue
	c    *comm
	peer int
	tag  int
	ct   *contrib // nil for a receive
	seq  int
}

// head describes a collective call, for messages.
func (wt *wait) head() string { return fmt.Sprintf("%v on %s (call %d)", wt.ct, wt.c.where(), wt.seq) }

// desc describes the call, for messages.
func (wt *wait) desc() string {
	c := wt.c
	if wt.ct != nil {
		return fmt.Sprintf("%s waiting for rank %d", wt.head(), c.info.members[wt.peer])
	}
	s := fmt.Sprintf("Recv(src=%d, tag=%d) on %s", wt.peer, wt.tag, c.where())
	if c.info.id != worldID {
		s += fmt.Sprintf(" from rank %d", c.info.members[wt.peer])
	}
	return s
}

// note describes the rank's wait for a deadlock message.
func (wt *wait) note(r int) rankNote {
	if wt.ct == nil {
		return rankNote{rank: r, note: fmt.Sprintf("rank %d blocked in %s", r, wt.desc())}
	}
	return rankNote{rank: r, note: fmt.Sprintf("rank %d blocked in %s", r, wt.head()),
		coll: &collNote{comm: wt.c.info.id, seq: wt.seq, members: wt.c.info.members}}
}

// failure is the first failure of a run as this process knows it.
type failure struct {
	kind  error // ErrAborted or ErrDeadlock
	rank  int   // the failed rank or the deadlock's culprit; -1 if none
	cause error // the failed rank's error
	// state describes every rank of a deadlock, by rank: "rank 2
	// blocked in ...", "rank 2 exited"; empty entries are unknown.
	state []string
}

func newWorld(link Link, place []int) *world {
	w := &world{n: len(place), place: place, procs: 1, link: link, ranks: make([]*rank, len(place))}
	if link != nil {
		w.me, w.procs = link.Proc(), link.Procs()
	}
	w.remoteExited = make([]bool, w.n)
	for r, p := range place {
		if p == w.me {
			x := &rank{id: r, wake: make(chan struct{}, 1), queues: map[key]*msgQueue{}}
			w.ranks[r] = x
			w.local = append(w.local, x)
		} else {
			w.remote++
		}
	}
	w.alive.Store(int64(len(w.local)))
	w.probe.every = minProbeEvery
	return w
}

// start runs fn on the local ranks and, with a link, routes its frames
// until the run is over everywhere.
func (w *world) start(fn func(Comm) error) error {
	worldComm := &commInfo{id: worldID, name: "WORLD", members: make([]int, w.n)}
	for r := range worldComm.members {
		worldComm.members[r] = r
	}
	errs := make([]error, len(w.local))
	var stop func()
	if w.link != nil && w.me == 0 && w.procs > 1 {
		stop = w.startTicker()
		defer stop()
	}
	if p, ok := w.link.(Poller); ok && len(w.local) == 1 && w.procs > 1 {
		w.poller = p
		if b, ok := p.(Batcher); ok {
			b.Batch(true)
			defer b.Batch(false)
		}
		errs[0] = w.run(w.local[0], worldComm, fn)
		w.route()
		return w.result(errs)
	}
	if p, ok := w.link.(SharedPoller); ok && w.procs > 1 && p.Shared() {
		w.shared = p
	}
	if w.link == nil {
		w.startWorkers(workerCount(len(w.local)), func(i int, r *rank) {
			errs[i] = w.run(r, worldComm, fn)
		})
		return w.result(errs)
	}
	var wg sync.WaitGroup
	for i, r := range w.local {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.run(r, worldComm, fn)
		}()
	}
	if w.link != nil {
		if len(w.local) == 0 {
			w.mu.Lock()
			w.sendWake()
			w.mu.Unlock()
		}
		if w.shared != nil {
			// The caller may be locked to its thread (an MPI process's
			// main thread, where MPI_Finalize must run): every park and
			// wake-up of a locked goroutine hands its processor to
			// another thread and back, two futex calls and thread
			// switches each time the router looks at the link (bwc of
			// the HPCG-like benchmark trace at M = 2: 3.3 s with the
			// router on the caller, 1 s on a goroutine of its own).
			done := make(chan struct{})
			go func() {
				defer close(done)
				w.routeShared()
			}()
			<-done
		} else {
			w.route()
		}
	}
	wg.Wait()
	return w.result(errs)
}

// run calls fn for rank r, turning a panic into an error, and records
// the exit.
func (w *world) run(r *rank, c *commInfo, fn func(Comm) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &opError{kind: ErrPanic, rank: r.id,
				msg: fmt.Sprintf("hpc: rank %d panicked: %v\n%s", r.id, p, debug.Stack())}
		}
		w.exit(r, err)
		if err != nil && !namesRank(err, r.id) {
			err = fmt.Errorf("rank %d: %w", r.id, err)
		}
	}()
	return fn(&comm{w: w, me: r, info: c, rank: r.id})
}

// result is the run's result here: the local ranks' errors, or else a
// failure of another process or of the link.
func (w *world) result(errs []error) error {
	if err := errors.Join(errs...); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.linkErr != nil {
		return fmt.Errorf("hpc: process %d: %w", w.me, w.linkErr)
	}
	if f := w.failure.Load(); f != nil {
		by := ""
		if f.rank >= 0 {
			by = fmt.Sprintf("rank %d failed: ", f.rank)
		}
		msg := "deadlock"
		if f.cause != nil {
			msg = firstLine(f.cause.Error())
		}
		return &opError{kind: f.kind, rank: -1, cause: f.cause,
			msg: fmt.Sprintf("hpc: process %d: %s%s", w.me, by, msg)}
	}
	return nil
}

// exit records that r's fn returned err: a failure aborts the run; the
// other processes hear of the exit after everything r sent.
func (w *world) exit(r *rank, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil && w.failure.Load() == nil {
		w.fail(&failure{kind: ErrAborted, rank: r.id, cause: err})
	}
	r.mu.Lock()
	r.exited = true
	r.mu.Unlock()
	alive := w.alive.Add(-1)
	if w.link != nil {
		w.broadcast(encodeExit(r.id, err != nil, w.failure.Load()))
		if alive == 0 {
			w.sendWake()
		}
	}
	// A receive from r may be hopeless now: detectLocked finds it once
	// every live rank waits, and its failure wakes them (no wake-up of
	// every rank here: exits would cost ranks² signals).
	if alive > 0 && w.blocked.Load() == alive {
		w.detectLocked()
	}
}

// fail records the run's first failure and wakes every blocked rank to
// report it. The caller holds w.mu.
func (w *world) fail(f *failure) {
	if w.failure.CompareAndSwap(nil, f) {
		w.wakeAll()
	}
}

// wakeAll signals every local rank to look at its wait again.
func (w *world) wakeAll() {
	for _, r := range w.local {
		wakeRank(r)
	}
}

// signal wakes the rank waiting on wake, a channel of capacity 1.
func signal(wake chan struct{}) {
	select {
	case wake <- struct{}{}:
	default: // a signal is already pending
	}
}

// sendWake tells this process's router that its ranks have all
// returned. The caller holds w.mu.
func (w *world) sendWake() {
	if err := w.link.Send(w.me, []byte{frameWake}); err != nil {
		w.linkFailed(err)
	}
}

// broadcast sends a counted frame (an exit) to every other process. The
// caller holds w.mu.
func (w *world) broadcast(frame []byte) {
	for p := range w.procs {
		if p != w.me {
			w.sent.Add(1)
			w.sendControl(p, frame)
		}
	}
}

// sendControl sends a frame to process p. The caller holds w.mu.
func (w *world) sendControl(p int, frame []byte) {
	if err := w.link.Send(p, frame); err != nil {
		w.linkFailed(err)
	}
}

// linkFailed fails the run after a link error. The caller holds w.mu.
func (w *world) linkFailed(err error) {
	if w.linkErr == nil {
		w.linkErr = fmt.Errorf("%w: %w", ErrLinkFailed, err)
	}
	w.fail(&failure{kind: ErrAborted, rank: -1, cause: w.linkErr})
}

// route handles the frames arriving over the link until the run is over
// everywhere or the link fails.
func (w *world) route() {
	for {
		from, msg, err := w.link.Recv()
		w.mu.Lock()
		if err != nil {
			w.linkFailed(err)
			w.mu.Unlock()
			return
		}
		done := w.handle(from, msg)
		w.mu.Unlock()
		if done {
			return
		}
	}
}

// pollSlice is how long a waiting rank that drives the link polls it
// before it looks at its own state again.
const pollSlice = time.Millisecond

// drainEvery is how many sends and receives a rank that drives the
// link itself makes without waiting before it takes in what arrived
// meanwhile (drain).
const drainEvery = 64

// drain handles the frames that have arrived, up to a few, without
// waiting, for the rank that drives the link itself, every drainEvery
// calls that did not wait: a rank whose messages are all there when it
// needs them would otherwise not look at the link, and what its partners
// send ahead of it would pile up in the link's own buffers (MPI's, at
// some hundred bytes per message) instead of its mailbox.
func (w *world) drain() {
	if w.drains++; w.drains < drainEvery {
		return
	}
	w.drains = 0
	for range drainEvery {
		if !w.pollFor(0) {
			return
		}
	}
}

// poll waits a little for a frame and handles it, for the rank that
// drives the link itself.
func (w *world) poll() { w.pollFor(pollSlice) }

// pollFor waits up to d for a frame and handles it; it reports whether
// one came.
func (w *world) pollFor(d time.Duration) bool {
	got, _ := w.receive(w.poller, d)
	return got
}

// receive waits up to d for a frame from p and handles it. got says
// whether one came; done, whether the run is over here (handle) or the
// link failed.
func (w *world) receive(p Poller, d time.Duration) (got, done bool) {
	from, msg, ok, err := p.Poll(d)
	if err == nil && !ok {
		return false, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.linkFailed(err)
		return false, true
	}
	return true, w.handle(from, msg)
}

// handle processes one frame and reports whether the router is done. A
// corrupt frame fails the run here and on the other processes. The
// caller holds w.mu.
func (w *world) handle(from int, msg []byte) bool {
	if err := w.frame(from, msg); err != nil {
		tell := w.linkErr == nil
		w.linkFailed(fmt.Errorf("from process %d: %w", from, err))
		if tell {
			w.broadcast(encodeExit(-1, true, w.failure.Load()))
		}
	}
	return w.finished()
}

// finished reports whether the router is done: the local ranks have
// returned, every rank of the other processes has exited, and process 0,
// which probes, has ended the run for the others. The caller holds w.mu.
func (w *world) finished() bool {
	switch {
	case w.linkErr != nil:
		return true
	case !w.woken || w.nExited < w.remote:
		return false
	case w.me != 0:
		return w.ended
	case w.probe.wave != nil: // its answers must still be received
		return false
	}
	if !w.probe.endSent {
		w.probe.endSent = true
		for p := 1; p < w.procs; p++ {
			w.sendControl(p, []byte{frameEnd})
		}
	}
	return true
}

// frame processes one frame. The caller holds w.mu.
func (w *world) frame(from int, msg []byte) error {
	if from < 0 || from >= w.procs {
		return fmt.Errorf("message from process %d of %d", from, w.procs)
	}
	if len(msg) == 0 {
		return errCorrupt
	}
	switch msg[0] {
	case frameData:
		k, dst, payload, err := decodeData(msg[1:])
		if err != nil {
			return err
		}
		if dst >= w.n || w.ranks[dst] == nil || k.src >= w.n || w.place[k.src] != from {
			return fmt.Errorf("message from rank %d to rank %d, which is not hosted here: do the processes pass the same placement?", k.src, dst)
		}
		w.recvd++
		w.deliver(w.ranks[dst], k, message{data: payload})
	case frameExit:
		r, failed, f, err := decodeExit(msg[1:], w.n)
		if err != nil {
			return err
		}
		if r >= 0 {
			if r >= w.n || w.place[r] != from || w.remoteExited[r] {
				return fmt.Errorf("exit of rank %d: not a rank of process %d, or exited before", r, from)
			}
			w.remoteExited[r] = true
			w.nExited++
			w.recvd++
		}
		if failed && f != nil {
			w.fail(f)
		}
		// (as in exit: a hopeless receive is found by detectLocked)
		if a := w.alive.Load(); a > 0 && w.blocked.Load() == a {
			w.detectLocked()
		}
	case frameWake:
		if from != w.me {
			return fmt.Errorf("wake from process %d", from)
		}
		w.woken = true
	case frameEnd:
		if from != 0 || w.me == 0 {
			return fmt.Errorf("end from process %d", from)
		}
		w.ended = true
	default:
		return w.probeFrame(from, msg)
	}
	return nil
}

// firstLine returns s up to its first newline, so that a panic's stack
// is reported once, by the rank that panicked.
func firstLine(s string) string {
	for i := range len(s) {
		if s[i] == '\n' {
			return s[:i] + " ..."
		}
	}
	return s
}
