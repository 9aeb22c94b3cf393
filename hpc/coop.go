package hpc

import (
	"iter"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"scout/internal/fifo"
)

// In-process ranks take turns on workers: one goroutine per processor
// (GOMAXPROCS, at most one per rank), each running a share of the ranks
// (consecutive ranks, its home ranks) as coroutines. A rank that waits
// hands its worker to the next rank there that can run, a switch of tens
// of nanoseconds, where a goroutine that waited was parked and made
// ready again by the runtime's scheduler, often with another processor
// woken to run it (a microsecond or more). A replay that exchanges
// values message by message, such as the root-cause analysis's backward
// pass, makes such hand-offs at nearly every message: in-process, the
// full analysis of the root-cause benchmark trace takes 5-15 % less
// processor time this way, the wait states of an MPI+OpenMP trace of 16
// locations (make hybrid-bench) 20-35 % less.
//
// A worker that found nothing to run for a while (stealAfter) takes a
// rank waiting on another, and one that has more than one rank waiting
// wakes an idle worker to take one: ranks of unequal work on one worker
// would otherwise take turns while the other idles. A rank taken so runs
// there until it waits; when it is woken, it goes back to its own
// worker, so that the ranks stay where they started (an OpenMP team's
// threads on one worker, whose barriers then need no hand-off between
// processors).
//
// A rank in lockstep (Lockstep: a pass that exchanges values as it goes,
// message by message) is taken at once by a worker with nothing of its
// own to run. In the root-cause analysis's backward pass of a ring, a
// worker whose ranks waited for one that was ready on the other worker,
// behind a rank running ahead there, idled a third of the pass, for
// 100-500 µs at a time: stealAfter was as long. Taking every rank at
// once made the wait states of an MPI+OpenMP trace, whose ranks run
// ahead, 10 % slower (tens of thousands of ranks taken per pass).
//
// A rank can move to another worker (Serial): a pass whose locations do
// little between the values they exchange runs faster on one processor
// than on two, where every exchange crosses between processors.

// worker runs ranks of this process in turn.
type worker struct {
	ts    *turns
	mu    sync.Mutex
	ready fifo.Queue[*rank] // ranks that can run, in the order they could
	idle  bool              // the worker waits on wake for a rank to run
	wake  chan struct{}
}

// turns is the in-process world's workers.
type turns struct {
	workers []*worker
	live    atomic.Int64 // ranks that have not returned
}

// turn is a rank's state on the workers.
type turn struct {
	next  func() (struct{}, bool) // resumes the rank's coroutine
	yield func(struct{}) bool     // hands the worker back (in the coroutine)
	home  *worker
	// wk is the worker that runs the rank, or will when it is woken;
	// parked says that it waits for a wake-up, pending that one came
	// while it ran (all three guarded by mu, a leaf lock: taken after
	// the rank's and the world's)
	mu      sync.Mutex
	wk      *worker
	parked  bool
	pending bool
	// moveTo is the worker the rank moves to when it yields (its own
	// coroutine and worker only); pinned keeps it on its worker (Serial:
	// written by the rank before it yields, read by thieves while it
	// waits in a queue)
	moveTo *worker
	pinned bool
	// lockstep lets an idle worker take the rank at once (Lockstep:
	// written by the rank, as pinned)
	lockstep bool
	// running is set while a worker runs the rank: a rank made ready
	// before it has handed its worker back is in that worker's queue,
	// and no other may take it yet
	running atomic.Bool
}

// workers returns how many workers run n ranks in-process.
func workers(n int) int { return max(1, min(n, runtime.GOMAXPROCS(0))) }

// workerCount is workers, for the tests to change.
var workerCount = workers

// startWorkers runs run on the local ranks on k workers and returns once
// every rank returned.
func (w *world) startWorkers(k int, run func(i int, r *rank)) {
	ts := &turns{}
	w.turns = ts
	per := (len(w.local) + k - 1) / k
	var home [][]int // the ranks (indexes into w.local) of each worker
	for lo := 0; lo < len(w.local); lo += per {
		wk := &worker{ts: ts, wake: make(chan struct{}, 1)}
		ts.workers = append(ts.workers, wk)
		var mine []int
		for i := lo; i < min(lo+per, len(w.local)); i++ {
			w.local[i].turn = &turn{home: wk, wk: wk}
			mine = append(mine, i)
		}
		home = append(home, mine)
	}
	ts.live.Store(int64(len(w.local)))
	var wg sync.WaitGroup
	for j, wk := range ts.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The coroutines start here, not on the caller, which may be
			// locked to its thread (an MPI process's main thread): a
			// coroutine runs on threads locked as where it started.
			for _, i := range home[j] {
				r := w.local[i]
				t := r.turn
				next, stop := iter.Pull(func(yield func(struct{}) bool) {
					t.yield = yield
					run(i, r)
				})
				defer stop()
				t.next = next
				wk.push(r)
			}
			ts.work(wk)
		}()
	}
	wg.Wait()
}

// work runs the ranks that come to wk until every rank has returned,
// taking ranks from other workers when it has none of its own (but none
// that Serial keeps on theirs).
func (ts *turns) work(wk *worker) {
	var timer *time.Timer
	idle := 0 // rounds without a rank to run
	for {
		r := wk.take()
		if r == nil {
			r = ts.steal(wk, idle > 0)
		}
		if r == nil {
			if !ts.idle(wk, &timer, idle) {
				return
			}
			idle++
			continue
		}
		idle = 0
		ts.run(r)
	}
}

// take pops the next rank that can run on wk, nil if none.
func (wk *worker) take() *rank {
	wk.mu.Lock()
	defer wk.mu.Unlock()
	if wk.ready.Len() == 0 {
		return nil
	}
	return wk.ready.Pop()
}

// idle waits until a rank may be ready on wk, for its idle-th time in a
// row: at most stealAfter at first, longer the longer it stays idle. It
// reports false when every rank has returned.
func (ts *turns) idle(wk *worker, timer **time.Timer, idle int) bool {
	wk.mu.Lock()
	if wk.ready.Len() > 0 {
		wk.mu.Unlock()
		return true
	}
	if ts.live.Load() == 0 {
		wk.mu.Unlock()
		return false
	}
	wk.idle = true
	wk.mu.Unlock()
	if len(ts.workers) == 1 {
		<-wk.wake
		return true
	}
	d := stealAfter << min(idle, 3)
	if *timer == nil {
		*timer = time.NewTimer(d)
	} else {
		(*timer).Reset(d)
	}
	select {
	case <-wk.wake:
		(*timer).Stop()
	case <-(*timer).C:
	}
	wk.mu.Lock()
	wk.idle = false
	wk.mu.Unlock()
	return true
}

// stealAfter is how long a worker waits for a rank of its own before
// it takes one from another worker (a variable for the tests).
var stealAfter = 200 * time.Microsecond

// steal takes a rank that waits to run on another worker, nil if none:
// any rank, or only one in lockstep.
func (ts *turns) steal(thief *worker, anyRank bool) *rank {
	for _, v := range ts.workers {
		if v == thief {
			continue
		}
		v.mu.Lock()
		var r *rank
		if v.ready.Len() > 0 {
			if t := v.ready.Peek().turn; !t.running.Load() && !t.pinned && (anyRank || t.lockstep) {
				r = v.ready.Pop()
			}
		}
		v.mu.Unlock()
		if r != nil {
			t := r.turn
			t.mu.Lock()
			t.wk = thief
			t.mu.Unlock()
			return r
		}
	}
	return nil
}

// run resumes r on its worker until it waits, moves or returns.
func (ts *turns) run(r *rank) {
	t := r.turn
	t.running.Store(true)
	_, ok := t.next()
	t.running.Store(false)
	if !ok {
		if ts.live.Add(-1) == 0 {
			for _, o := range ts.workers {
				o.signal()
			}
		}
		return
	}
	if to := t.moveTo; to != nil {
		t.moveTo = nil
		t.mu.Lock()
		t.wk = to
		t.mu.Unlock()
		to.push(r)
	}
}

// push makes r ready on wk. When more ranks wait on wk than the one it
// will run next, it wakes an idle worker to take one.
func (wk *worker) push(r *rank) {
	wk.mu.Lock()
	wk.ready.Push(r)
	more := wk.ready.Len() > 1 && !r.turn.pinned
	if wk.idle {
		wk.idle, more = false, false
		signal(wk.wake)
	}
	wk.mu.Unlock()
	if more {
		for _, o := range wk.ts.workers {
			if o != wk && o.signal() {
				break
			}
		}
	}
}

// signal wakes wk if it waits, and reports whether it did.
func (wk *worker) signal() bool {
	wk.mu.Lock()
	defer wk.mu.Unlock()
	if !wk.idle {
		return false
	}
	wk.idle = false
	signal(wk.wake)
	return true
}

// sleep waits for a wake-up of r (its own goroutine).
func (w *world) sleep(r *rank) {
	t := r.turn
	if t == nil {
		<-r.wake
		return
	}
	t.mu.Lock()
	if t.pending {
		t.pending = false
		t.mu.Unlock()
		return
	}
	t.parked = true
	t.mu.Unlock()
	t.yield(struct{}{})
}

// wakeRank wakes r, or makes its next sleep return at once. A rank that
// another worker took goes back to its own (unless Serial keeps it where
// it is, or it has not yet handed that worker back).
func wakeRank(r *rank) {
	t := r.turn
	if t == nil {
		signal(r.wake)
		return
	}
	t.mu.Lock()
	if t.parked {
		t.parked = false
		if !t.pinned && !t.running.Load() {
			t.wk = t.home
		}
		t.wk.push(r)
	} else {
		t.pending = true
	}
	t.mu.Unlock()
}

// serial moves the calling rank r to the first worker (on) or back to
// its own (off), if it is elsewhere.
func (w *world) serial(r *rank, on bool) {
	t := r.turn
	if t == nil {
		return
	}
	to := t.home
	if on {
		to = w.turns.workers[0]
	}
	t.pinned = on
	t.mu.Lock()
	here := t.wk
	t.mu.Unlock()
	if to == here {
		return
	}
	t.moveTo = to
	t.yield(struct{}{})
}

// Serial tells whether the caller's rank should share one processor
// with the other ranks that asked so (on), or run on its own share of
// the processors again (off): in-process, for a stretch of work whose
// ranks exchange values so often that hand-offs between processors cost
// more than the second processor gains. Elsewhere it does nothing.
func Serial(c Comm, on bool) {
	if x, ok := c.(*comm); ok {
		x.w.serial(x.me, on)
	}
}

// Lockstep tells whether the caller's rank exchanges values with other
// ranks as it goes (on), so that it waits on them message by message,
// or runs ahead of what it receives (off, the default). In-process, a
// rank in lockstep that is ready behind another rank on its worker is
// taken at once by a worker that has nothing of its own to run.
// Elsewhere it does nothing.
func Lockstep(c Comm, on bool) {
	if x, ok := c.(*comm); ok && x.me.turn != nil {
		x.me.turn.lockstep = on
	}
}
