package hpc

import (
	"runtime"
	"time"
)

// Hosted runs over a shared link (SharedPoller: over MPI, when it
// provides MPI_THREAD_SERIALIZED). Every remote message used to wait for
// the router's next look at the link, and the router sleeps while the
// link is quiet: a collective of 4 ranks on 2 MPI processes took 3 ms.
// Now a rank that waits for a message drives the link itself, one rank
// of the process at a time: it receives the frames and delivers them,
// its own or not, and when its wait is over it hands the driving to the
// other waiting ranks. The router still looks at the link now and then
// (a process whose ranks all compute, or have returned), on a goroutine
// of its own. Reception (a frame taken from the link and delivered) is
// one step under recvMu, so frames are delivered in the order they
// arrived, which keeps every pair of ranks in order.

// receiveOne takes one frame from the shared link, if there is one, and
// handles it. got says whether it did; done, whether the run is over
// here or the link failed.
func (w *world) receiveOne() (got, done bool) {
	w.recvMu.Lock()
	defer w.recvMu.Unlock()
	got, done = w.receive(w.shared, 0)
	if done {
		w.routed.Store(true)
	}
	return got, done
}

// spinFor is how long a driving rank looks at the link without a pause
// after its last frame; after that it naps between looks (driveNap), so
// that a long wait does not take a processor that another process on
// the node could use. The spin is measured in time, and longer than a
// nap can take (timers of a millisecond or more under load): counted in
// rounds, a wait a little longer than the spin began a nap, the nap
// made the partner's next wait longer than its spin, and a run could
// lock into napping at every message (bwc of the ring-like trace at
// M = 2: 38 s instead of 1 s, in about one run of ten).
const (
	spinFor  = 5 * time.Millisecond
	driveNap = 50 * time.Microsecond
)

// drive polls the shared link for waiting rank r until r is woken (by
// its message or a failure) or the run is over here, and hands the
// driving over. The caller set w.driving.
func (w *world) drive(r *rank) {
	defer w.handOver(r)
	spinUntil := time.Now().Add(spinFor)
	for {
		select {
		case <-r.wake:
			return
		default:
		}
		if got, done := w.receiveOne(); done {
			return
		} else if got {
			spinUntil = time.Now().Add(spinFor)
			continue
		}
		if time.Now().Before(spinUntil) {
			runtime.Gosched()
		} else {
			time.Sleep(driveNap)
		}
	}
}

// handOver ends r's driving and wakes the other waiting ranks; the
// first to look drives next.
func (w *world) handOver(r *rank) {
	w.driving.Store(false)
	for _, x := range w.local {
		if x == r {
			continue
		}
		x.mu.Lock()
		waits := x.wait != nil && !x.woken
		x.mu.Unlock()
		if waits {
			signal(x.wake)
		}
	}
}

// routeShared is route over a shared link: it looks at the link, more
// rarely the longer it stays quiet (up to every 200µs), and at once when
// a rank's send waits to be started, until the run is over here.
func (w *world) routeShared() {
	queued := w.shared.Queued()
	var t *time.Timer
	for round := 0; !w.routed.Load(); round++ {
		got, done := w.receiveOne()
		if done {
			return
		}
		if got {
			round = 0
			continue
		}
		if round < 4 {
			runtime.Gosched()
			continue
		}
		d := min(time.Microsecond<<min(round/64, 8), 200*time.Microsecond)
		if t == nil {
			t = time.NewTimer(d)
		} else {
			t.Reset(d)
		}
		select {
		case <-queued:
			round = 0
		case <-t.C:
		}
	}
}
