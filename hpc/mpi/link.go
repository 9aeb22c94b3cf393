//go:build mpi

package mpi

/*
#include <mpi.h>
#include <sched.h>

static int scout_any_source(void) { return MPI_ANY_SOURCE; }

// scout_link_improbe checks for a message with tag from from (any
// source: MPI_ANY_SOURCE); if there is one, it is matched into *msg and
// its source and byte count returned.
static int scout_link_improbe(int from, int tag, MPI_Comm comm, int *flag, MPI_Message *msg, int *src, int *count) {
	MPI_Status st;
	int rc = MPI_Improbe(from, tag, comm, flag, msg, &st);
	if (rc != MPI_SUCCESS || !*flag) return rc;
	*src = st.MPI_SOURCE;
	return MPI_Get_count(&st, MPI_BYTE, count);
}

// scout_link_poll checks for a message with tag from any source until
// one arrives or usec microseconds have passed. Like MPI's own blocking
// calls it spins on MPI's progress engine, and after a while yields the
// processor between checks (on a shared node the sender may need it).
static int scout_link_poll(int tag, MPI_Comm comm, double usec, int *flag, MPI_Message *msg, int *src, int *count) {
	double until = MPI_Wtime() + usec * 1e-6;
	for (long i = 1;; i++) {
		int rc = scout_link_improbe(MPI_ANY_SOURCE, tag, comm, flag, msg, src, count);
		if (rc != MPI_SUCCESS || *flag) return rc;
		if (i % 64 == 0) {
			if (MPI_Wtime() >= until) return rc;
			if (i >= 256) sched_yield();
		}
	}
}

static int scout_link_mrecv(void *buf, int n, MPI_Message *msg) {
	return MPI_Mrecv(buf, n, MPI_BYTE, msg, MPI_STATUS_IGNORE);
}
*/
import "C"

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"scout/hpc"
)

// Link is an hpc.Link over MPI: the processes of communicator c, with
// messages of one tag, for hosted runs (hpc.RunHosted) with several
// virtual ranks per MPI process.
//
// Recv, Progress, Poll and Close must be called on the goroutine that
// called Init (hpc.RunHosted calls Recv on its caller's goroutine), or
// on any goroutine when MPI provides MPI_THREAD_SERIALIZED (Shared: then
// the calls hold the link's lock, and hpc.RunHosted lets the waiting
// ranks poll, see hpc.SharedPoller). Send,
// called by the virtual ranks' goroutines, queues the message; Recv,
// Progress, Poll and Close start the queued sends (MPI_Isend, in order,
// which keeps each pair of processes in order) and complete them
// (MPI_Test); Recv and Poll poll for arrivals (MPI_Improbe from any
// source), Recv until one arrives, yielding and then sleeping between
// polls while idle (see idle). When MPI provides MPI_THREAD_SERIALIZED,
// Send starts the queued sends itself unless another goroutine is in an
// MPI call of the link: waking the goroutine that drives the link, a
// thread of its own, for every message cost more than the replay (a
// backward replay of 4 ranks on 2 processes took 10 times as long as on
// 1 or 4). Frames queued together for one process go as one message (a
// pack, see packOne); with Batch, Send and Progress leave the queue to
// the next poll unless it is long or old (see packCount).
type Link struct {
	c   *Comm
	tag int

	mu       sync.Mutex
	out      []linkMsg // queued by Send, not yet started
	outBytes int       // their size
	outSince int64     // when the first of them was queued, since epoch
	closed   bool
	// batch holds sends back until a poll, or until enough are queued
	// (Batch); in is what the last message received holds beyond the
	// frame returned (a pack), pack the buffer packs are made in (both
	// under calls)
	batch atomic.Bool
	in    []inFrame
	pack  []byte

	// calls is held during the link's MPI calls (progress and probes)
	calls sync.Mutex

	pending []*Request // started sends (under calls)
	spareMu sync.Mutex
	spare   [][]byte      // buffers handed back (Reuse) and frames sent (SendSpare)
	reused  int           // buffers taken from spare, for the tests
	msgs    int           // messages started, for the tests
	dropped int           // frames to itself that Close dropped, for the tests
	wake    chan struct{} // signalled by Send, for an idle Recv
	epoch   time.Time
	sched   atomic.Int64 // when a driver last passed through Go's scheduler (resched), since epoch
	timer   *time.Timer  // Recv's idle sleeps
}

type linkMsg struct {
	to    int
	msg   []byte
	spare bool // msg may be reused once sent (SendSpare)
}

type inFrame struct {
	from  int
	frame []byte
}

// A message over the link holds one frame or a pack of frames to the
// same process, after a byte that says which: packOne, then the frame;
// packMany, then each frame as its length (uvarint) and its bytes.
const (
	packOne  = 0
	packMany = 1
)

// kinds holds the kind bytes, to send from (isend).
var kinds = [...]byte{packOne: packOne, packMany: packMany}

// Frames to one process that are queued together go as one message of
// at most packMax bytes; a frame of more than packFrameMax goes alone.
// (Packed frames are never larger than reuseMin, so that a receiver
// never hands a part of a pack back for reuse, see Reuse.) With Batch,
// sends wait until a poll, or until packCount frames or packMax bytes
// are queued, or the first of them has waited packDelay.
const (
	packMax      = 32 << 10
	packFrameMax = 4 << 10
	packCount    = 64
	packDelay    = 20 * time.Microsecond
)

// Batch makes the link hold sends back (on; see packCount) or start
// them at once (off, the default), for a process whose only rank drives
// the link itself (hpc.Batcher): it looks at the link whenever it waits,
// so what it sent goes then at the latest, in as few messages as there
// are processes it sent to. Sends held back when it is turned off go at
// the next Progress, Poll, Recv or Close.
func (l *Link) Batch(on bool) { l.batch.Store(on) }

var _ hpc.Poller = (*Link)(nil)

// CloseTimeout bounds how long Close waits for the link's sends to
// complete.
var CloseTimeout = 30 * time.Second

// NewLink returns a link between the processes of c that sends and
// receives with tag; no other traffic on c may use tag.
func NewLink(c *Comm, tag int) *Link {
	return &Link{c: c, tag: tag, wake: make(chan struct{}, 1), epoch: time.Now()}
}

// Proc returns this process's rank in the communicator.
func (l *Link) Proc() int { return l.c.rank }

// Procs returns the number of processes in the communicator.
func (l *Link) Procs() int { return l.c.size }

// Send queues msg for process proc and, if it can, starts it (see
// Link). The link owns msg from now on.
func (l *Link) Send(proc int, msg []byte) error { return l.send(proc, msg, false) }

// SendSpare is Send of a frame whose buffer the link may reuse once it
// has been sent (hpc.Reuser).
func (l *Link) SendSpare(proc int, msg []byte) error { return l.send(proc, msg, true) }

func (l *Link) send(proc int, msg []byte, spare bool) error {
	if proc < 0 || proc >= l.c.size {
		return fmt.Errorf("mpi: link send to process %d of %d", proc, l.c.size)
	}
	if len(msg) > math.MaxInt32 {
		return fmt.Errorf("mpi: link send of %d bytes: too large", len(msg))
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return hpc.ErrLinkClosed
	}
	if len(l.out) == 0 {
		l.outSince = int64(time.Since(l.epoch))
	}
	l.out = append(l.out, linkMsg{to: proc, msg: msg, spare: spare})
	l.outBytes += len(msg)
	due := l.dueLocked()
	l.mu.Unlock()
	if !due {
		return nil // (the driver polls, see Batch)
	}
	if serialized && l.calls.TryLock() {
		// start it here: the driving goroutine may be asleep
		_, err := l.progress(false)
		l.calls.Unlock()
		return err
	}
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return nil
}

// dueLocked reports whether the queued sends should start now: always,
// unless the link batches them (Batch). The caller holds l.mu.
func (l *Link) dueLocked() bool {
	return !l.batch.Load() || len(l.out) >= packCount || l.outBytes >= packMax ||
		int64(time.Since(l.epoch))-l.outSince >= int64(packDelay)
}

// reapEvery is how many started sends progress lets pile up before it
// tests them for completion while it has sends to start.
const reapEvery = 32

// progress starts the queued sends and releases the completed ones,
// testing them in bulk: when reapEvery have piled up, or with sweep when
// it started none. It reports whether it did anything. The caller holds
// l.calls.
func (l *Link) progress(sweep bool) (bool, error) {
	l.mu.Lock()
	out := l.out
	l.out, l.outBytes = nil, 0
	l.mu.Unlock()
	if err := l.start(out); err != nil {
		return false, err
	}
	busy := len(out) > 0
	if len(l.pending) < reapEvery && (len(out) > 0 || !sweep) {
		return busy, nil // most sends complete at once: test them in bulk
	}
	keep := l.pending[:0]
	for _, r := range l.pending {
		done, err := r.Test()
		if err != nil {
			return busy, err
		}
		if !done {
			keep = append(keep, r)
		} else {
			busy = true
		}
	}
	clear(l.pending[len(keep):])
	l.pending = keep
	return busy, nil
}

// start starts the sends of out: the frames to one process in order,
// as few messages, each a pack of up to packCount frames and packMax
// bytes (a frame larger than packFrameMax alone). The caller holds
// l.calls. On an error the sends not started are queued again.
func (l *Link) start(out []linkMsg) error {
	// by process (frames to different processes need no order)
	slices.SortStableFunc(out, func(a, b linkMsg) int { return cmp.Compare(a.to, b.to) })
	for i := 0; i < len(out); {
		to := out[i].to
		j, size := i, 0 // the pack: out[i:j]
		for ; j < len(out) && out[j].to == to && j-i < packCount; j++ {
			f := len(out[j].msg)
			if f > packFrameMax || size+f+binary.MaxVarintLen32 > packMax {
				break
			}
			size += f + binary.MaxVarintLen32
		}
		var err error
		if j-i <= 1 {
			j = i + 1
			err = l.isend(to, packOne, out[i].msg)
		} else {
			l.pack = l.pack[:0]
			for _, m := range out[i:j] {
				l.pack = binary.AppendUvarint(l.pack, uint64(len(m.msg)))
				l.pack = append(l.pack, m.msg...)
			}
			err = l.isend(to, packMany, l.pack)
		}
		if err != nil {
			l.requeue(out[i:])
			return err
		}
		for _, m := range out[i:j] {
			l.sent(m)
		}
		i = j
	}
	return nil
}

// sent releases what the link keeps of m once its send started.
func (l *Link) sent(m linkMsg) {
	if m.spare {
		l.Reuse(m.msg) // MPI sends a copy
	}
}

// requeue queues out again, before what was queued meanwhile.
func (l *Link) requeue(out []linkMsg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range out {
		l.outBytes += len(m.msg)
	}
	l.out = append(slices.Clone(out), l.out...)
}

// isend starts the send of one message of the given kind (packOne,
// packMany) holding data.
func (l *Link) isend(to int, kind byte, data []byte) error {
	req, err := l.c.isend(to, l.tag, kinds[kind:kind+1], data)
	if err != nil {
		return err
	}
	l.pending = append(l.pending, req)
	l.msgs++
	return nil
}

// idle waits before the next poll: it yields for a few rounds, then
// sleeps, for 1µs at first and for longer the longer the link stays
// quiet (doubling every 64 rounds, up to 200µs). Remote messages are only
// seen when polling, so the sleeps stay short while the replay is busy;
// Send wakes a sleeping link at once, so a local rank's message is never
// delayed (without that, hosted runs were 25× slower). Spinning without
// sleeping gains nothing when processes share cores.
func (l *Link) idle(round int) {
	if round < 4 {
		runtime.Gosched()
		return
	}
	d := min(time.Microsecond<<min(round/64, 8), 200*time.Microsecond)
	if l.timer == nil {
		l.timer = time.NewTimer(d)
	} else {
		l.timer.Reset(d)
	}
	select {
	case <-l.wake:
	case <-l.timer.C:
	}
}

// Recv waits for the next message from any process, driving the link's
// sends meanwhile. It must be called on the goroutine that called Init.
func (l *Link) Recv() (int, []byte, error) {
	for round := 0; ; round++ {
		l.mu.Lock()
		closed := l.closed
		l.mu.Unlock()
		if closed {
			return 0, nil, hpc.ErrLinkClosed
		}
		l.calls.Lock()
		busy, from, buf, err := l.probe()
		l.calls.Unlock()
		if err != nil || buf != nil {
			return from, buf, err
		}
		if busy {
			round = 0
		}
		l.idle(round)
	}
}

// probe starts the queued sends, releases the completed ones and
// receives a message if one is there (buf nil if none). The caller holds
// l.calls.
func (l *Link) probe() (busy bool, from int, buf []byte, err error) {
	if busy, err = l.progress(true); err != nil {
		return busy, 0, nil, err
	}
	if from, frame, ok := l.unpacked(); ok {
		return true, from, frame, nil
	}
	var flag, src, count C.int
	var msg C.MPI_Message
	if err := check("MPI_Improbe", C.scout_link_improbe(C.scout_any_source(), C.int(l.tag), l.c.c, &flag, &msg, &src, &count)); err != nil {
		return busy, 0, nil, err
	}
	if flag == 0 {
		return busy, 0, nil, nil
	}
	from, buf, err = l.mrecv(int(src), count, &msg)
	return true, from, buf, err
}

// unpacked returns the next frame of the last pack received, if any.
// The caller holds l.calls.
func (l *Link) unpacked() (from int, frame []byte, ok bool) {
	if len(l.in) == 0 {
		return 0, nil, false
	}
	f := l.in[0]
	l.in[0] = inFrame{}
	l.in = l.in[1:]
	if len(l.in) == 0 {
		l.in = nil
	}
	return f.from, f.frame, true
}

// unpack returns the first frame of msg, a message from process from,
// and keeps the others of a pack for unpacked. The caller holds
// l.calls.
func (l *Link) unpack(from int, msg []byte) ([]byte, error) {
	if len(msg) == 0 {
		return nil, fmt.Errorf("mpi: empty message from process %d", from)
	}
	switch msg[0] {
	case packOne:
		return msg[1:], nil
	case packMany:
		var first []byte
		rest, n := msg[1:], 0
		for len(rest) > 0 {
			size, w := binary.Uvarint(rest)
			if w <= 0 || size > uint64(len(rest)-w) {
				return nil, fmt.Errorf("mpi: pack of %d bytes from process %d: frame %d at offset %d: bad length", len(msg), from, n, len(msg)-len(rest))
			}
			end := w + int(size)
			f := rest[w:end:end] // (a capacity of its own: never reused, see Reuse)
			rest = rest[end:]
			if n == 0 {
				first = f
			} else {
				l.in = append(l.in, inFrame{from, f})
			}
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("mpi: empty pack from process %d", from)
		}
		return first, nil
	}
	return nil, fmt.Errorf("mpi: message of %d bytes from process %d: unknown kind %d", len(msg), from, msg[0])
}

// mrecv receives the matched message msg of count bytes from src. The
// caller holds l.calls.
func (l *Link) mrecv(src int, count C.int, msg *C.MPI_Message) (int, []byte, error) {
	buf := l.buffer(int(count) + 1) // never empty, for the pointer
	if err := check("MPI_Mrecv", C.scout_link_mrecv(unsafe.Pointer(&buf[0]), count, msg)); err != nil {
		return 0, nil, err
	}
	frame, err := l.unpack(src, buf[:count]) // (a single frame keeps the capacity, for Reuse)
	return src, frame, err
}

// reuseMin is the size from which a received buffer is worth reusing;
// such buffers are made with a capacity rounded up to a multiple of it,
// so that a later message of about the same size fits.
const reuseMin = 64 << 10

// maxSpare bounds the buffers a link keeps for reuse: a frame sent and
// one received at a time are the common case.
const maxSpare = 2

// Buffer returns an empty buffer with room for n bytes, to send a frame
// from (hpc.Reuser): a spare one if one is large enough.
func (l *Link) Buffer(n int) []byte { return l.buffer(n)[:0] }

// buffer returns a buffer of n bytes to receive into: a spare one if one
// is large enough.
func (l *Link) buffer(n int) []byte {
	if n >= reuseMin {
		l.spareMu.Lock()
		for i, b := range l.spare {
			if cap(b) >= n {
				last := len(l.spare) - 1
				l.spare[i], l.spare[last] = l.spare[last], nil
				l.spare = l.spare[:last]
				l.reused++
				l.spareMu.Unlock()
				return b[:n]
			}
		}
		l.spareMu.Unlock()
		return make([]byte, n, (n+reuseMin-1)/reuseMin*reuseMin)
	}
	return make([]byte, n)
}

// Reuse keeps buf, a received message (or part of one) that its
// receiver no longer uses or a frame that MPI has copied, for a later
// message (hpc.Reuser): to receive into or to encode a frame in.
func (l *Link) Reuse(buf []byte) {
	if cap(buf) < reuseMin {
		return
	}
	l.spareMu.Lock()
	if len(l.spare) < maxSpare {
		l.spare = append(l.spare, buf[:0])
	}
	l.spareMu.Unlock()
}

// Shared reports whether any goroutine may call Poll and Progress: when
// MPI provides MPI_THREAD_SERIALIZED.
func (l *Link) Shared() bool { return serialized }

// Queued returns the channel that Send signals when it queued a message
// without starting it (another goroutine was in an MPI call of the
// link).
func (l *Link) Queued() <-chan struct{} { return l.wake }

// Progress starts the queued sends and releases the completed ones. It
// must be called on the goroutine that called Init, or on any when
// Shared.
func (l *Link) Progress() error {
	if l.batch.Load() {
		l.mu.Lock()
		due := len(l.out) > 0 && l.dueLocked()
		l.mu.Unlock()
		if !due {
			l.resched()
			return nil
		}
	}
	l.calls.Lock()
	_, err := l.progress(false)
	l.calls.Unlock()
	l.resched()
	return err
}

// reschedEvery is how long a goroutine that drives the link may go
// without passing through Go's scheduler (resched).
const reschedEvery = 2 * time.Millisecond

// resched passes the calling goroutine through Go's scheduler
// (runtime.Gosched) when no driver of the link has for reschedEvery. A
// rank that drives the link itself (one rank per process) polls it in C
// calls back to back and never waits in Go: the runtime's monitor then
// sees the goroutine on the same scheduling tick for over 10 ms, and at
// every tick of its own (20 µs) takes the processor from the C call,
// hands it off and wakes a thread for it; with processes sharing cores
// each of those is a context switch. A ring of 4 processes on 2 cores
// took 25-60 µs a step that way, 8.4 µs with a pass through the
// scheduler every 2 ms (MPI's own, in C: 6-8 µs).
func (l *Link) resched() {
	now := int64(time.Since(l.epoch))
	last := l.sched.Load()
	if now-last >= int64(reschedEvery) && l.sched.CompareAndSwap(last, now) {
		runtime.Gosched()
	}
}

// Poll starts the queued sends, then checks for a message from any
// process for up to about d, without returning to Go's scheduler
// meanwhile. It must be called on the goroutine that called Init.
func (l *Link) Poll(d time.Duration) (int, []byte, bool, error) {
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return 0, nil, false, hpc.ErrLinkClosed
	}
	defer l.resched() // (after the lock is released)
	l.calls.Lock()
	defer l.calls.Unlock()
	_, from, buf, err := l.probe()
	if err != nil || buf != nil || d <= 0 {
		return from, buf, buf != nil && err == nil, err
	}
	var flag, src, count C.int
	var msg C.MPI_Message
	if err := check("MPI_Improbe", C.scout_link_poll(C.int(l.tag), l.c.c, C.double(d.Microseconds()), &flag, &msg, &src, &count)); err != nil {
		return 0, nil, false, err
	}
	if flag == 0 {
		return 0, nil, false, nil
	}
	from, buf, err = l.mrecv(int(src), count, &msg)
	return from, buf, err == nil, err
}

// Close sends what is still queued and waits until every send has
// completed (the receivers of a hosted run receive everything sent to
// them). After CloseTimeout it gives up and reports the sends still
// pending. It must be called on the goroutine that called Init.
func (l *Link) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.mu.Unlock()
	deadline := time.Now().Add(CloseTimeout)
	var err error
	for round := 0; ; round++ {
		var busy bool
		l.calls.Lock()
		busy, err = l.progress(true)
		l.calls.Unlock()
		l.mu.Lock()
		queued := len(l.out)
		l.mu.Unlock()
		if err != nil || (len(l.pending) == 0 && queued == 0) || time.Now().After(deadline) {
			break
		}
		if busy {
			round = 0
		}
		l.idle(round)
	}
	l.mu.Lock()
	l.closed = true
	left := len(l.out) + len(l.pending)
	l.out = nil
	l.mu.Unlock()
	l.spareMu.Lock()
	l.spare = nil // for the collector, now
	l.spareMu.Unlock()
	if left > 0 {
		// A receiver is gone; MPI_Cancel of a matched send could block,
		// so the requests are left to MPI_Finalize or MPI_Abort.
		err = errors.Join(err, fmt.Errorf("mpi: link closed with %d sends not completed after %v", left, CloseTimeout))
	}
	l.pending = nil
	// Frames this process sent itself after its last look at the link
	// (the probe ticker's, say, as the run ended) are still in MPI's
	// queue: they go, so that the next user of the tag on the
	// communicator does not receive them.
	l.calls.Lock()
	defer l.calls.Unlock()
	l.dropped += len(l.in) // (frames of a pack received, never asked for)
	l.in = nil
	for {
		var flag, src, count C.int
		var msg C.MPI_Message
		if derr := check("MPI_Improbe", C.scout_link_improbe(C.int(l.c.rank), C.int(l.tag), l.c.c, &flag, &msg, &src, &count)); derr != nil || flag == 0 {
			return errors.Join(err, derr)
		}
		if _, _, derr := l.mrecv(int(src), count, &msg); derr != nil {
			return errors.Join(err, derr)
		}
		l.dropped += 1 + len(l.in)
		l.in = nil
	}
}
