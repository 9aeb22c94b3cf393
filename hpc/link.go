package hpc

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"scout/internal/fifo"
)

// Link moves byte messages between the processes of a hosted run (see
// RunHosted). Processes are numbered 0..Procs()-1.
//
// Send may be called by several goroutines at once; Recv is called by
// one goroutine at a time (RunHosted's router, on the goroutine that
// called RunHosted). An implementation may require Recv and Close to be
// called on one particular goroutine, as an MPI link does.
type Link interface {
	// Proc returns this process's number.
	Proc() int
	// Procs returns the number of processes.
	Procs() int
	// Send queues msg for process proc, which may be this process
	// itself; it does not wait for the receiver. The link owns msg from
	// then on (it may send it later), so the caller must not change it.
	// Messages from one process to another are received in the order
	// they were sent.
	Send(proc int, msg []byte) error
	// Recv waits for the next message from any process and returns its
	// sender and payload, which belongs to the caller.
	Recv() (proc int, msg []byte, err error)
	// Close releases the link once a run is over: it waits until the
	// messages sent have left this process. Recv and Send fail
	// afterwards.
	Close() error
}

// A Poller is a Link whose traffic the goroutine that calls RunHosted
// can drive in small steps. When a process hosts a single rank, RunHosted
// runs that rank on its caller's goroutine (an MPI process's main thread)
// and, while the rank waits, polls the link itself instead of handing
// every message from a router goroutine to the rank: with one rank per
// process, as under mpirun -np N, that handoff cost more than the replay.
type Poller interface {
	Link
	// Progress starts the sends queued so far without waiting for
	// anything.
	Progress() error
	// Poll waits up to about d for a message from any process (d = 0:
	// takes one if it is there); ok says whether one arrived.
	Poll(d time.Duration) (proc int, msg []byte, ok bool, err error)
}

// A Batcher is a Poller that can hold sends back, to send those to one
// process together (fewer, larger messages), until the next Poll at the
// latest. RunHosted asks for it (Batch(true), and Batch(false) when
// the run is over here) when this process's only rank drives the link
// itself: the rank polls whenever it waits, and every few calls without
// waiting (drain).
type Batcher interface {
	Poller
	Batch(on bool)
}

// A SharedPoller is a Poller that any goroutine may drive (one at a
// time), not only the one that calls RunHosted. With several ranks in a
// process, RunHosted then lets a waiting rank drive the link itself
// instead of waiting for the router, which sleeps while the link is
// quiet: over MPI, a collective of 4 ranks on 2 processes took 3 ms
// when every remote message waited for the router's next look, 10 µs
// with a rank polling.
type SharedPoller interface {
	Poller
	// Shared reports whether any goroutine may call Poll and Progress.
	Shared() bool
	// Queued returns a channel that is signalled when Send queued a
	// message that only the next Poll or Progress will start (nil if
	// Send always starts or delivers its message).
	Queued() <-chan struct{}
}

// A Reuser is a Link that reuses the buffers of large messages: it
// receives into buffers handed back to it (Comm.Release, and what the
// transport decoded), and the frames it has sent (copied) become the
// buffers of later ones (Buffer). Large messages then do not each take
// fresh memory, which the runtime must clear and the kernel provide page
// by page once the collector has returned the last one's (under mpirun
// -np 4 on the ring-like bench trace, 1 MiB batches and 280 kB windows:
// 8 % of the processors' time).
type Reuser interface {
	Link
	// Reuse hands buf back; the caller no longer uses it.
	Reuse(buf []byte)
	// Buffer returns an empty buffer with room for n bytes, a spare one
	// if one is large enough.
	Buffer(n int) []byte
	// SendSpare is Send of msg, which the link may reuse as a buffer
	// (Buffer) once it has sent it.
	SendSpare(proc int, msg []byte) error
}

// ErrLinkClosed is the error of a Link's Send or Recv after Close.
var ErrLinkClosed = errors.New("hpc: link closed")

// BlockPlacement places n virtual ranks on procs processes in contiguous
// blocks, the first n%procs processes holding one more: the placement
// argument of RunHosted.
func BlockPlacement(n, procs int) []int {
	place := make([]int, n)
	if procs < 1 {
		return place
	}
	per, extra := n/procs, n%procs
	v := 0
	for p := range procs {
		k := per
		if p < extra {
			k++
		}
		for range k {
			place[v] = p
			v++
		}
	}
	return place
}

// RoundRobinPlacement places virtual rank v on process v % procs.
func RoundRobinPlacement(n, procs int) []int {
	place := make([]int, n)
	for v := range place {
		if procs > 0 {
			place[v] = v % procs
		}
	}
	return place
}

// NewMemLinks returns procs connected in-memory Links, one per process,
// for running hosted runs (RunHosted) of several "processes" in one
// process, as the tests do.
func NewMemLinks(procs int) []Link {
	net := &memNet{boxes: make([]*memBox, procs)}
	links := make([]Link, procs)
	for p := range procs {
		net.boxes[p] = &memBox{notify: make(chan struct{}, 1)}
		net.boxes[p].cond.L = &net.boxes[p].mu
		links[p] = &memLink{net: net, proc: p}
	}
	return links
}

// memNet is the shared state of the links made by one NewMemLinks call.
type memNet struct {
	boxes []*memBox // inbox by process
}

// memBox is one process's inbox: one FIFO for all senders, which keeps
// every (sender, receiver) pair in order.
type memBox struct {
	mu     sync.Mutex
	cond   sync.Cond
	msgs   fifo.Queue[memMsg]
	closed bool
	broken error         // set by breakAll: every Recv fails with it
	notify chan struct{} // signalled by Send, for Poll
}

type memMsg struct {
	from int
	msg  []byte
}

// memLink is one process's end of a memNet.
type memLink struct {
	net  *memNet
	proc int
}

var _ Poller = (*memLink)(nil)

func (l *memLink) Proc() int  { return l.proc }
func (l *memLink) Procs() int { return len(l.net.boxes) }

// Send appends a copy of msg to proc's inbox.
func (l *memLink) Send(proc int, msg []byte) error {
	if proc < 0 || proc >= len(l.net.boxes) {
		return fmt.Errorf("hpc: link send to process %d of %d", proc, len(l.net.boxes))
	}
	if err := l.net.boxes[l.proc].state(); err != nil {
		return err
	}
	b := l.net.boxes[proc]
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.broken != nil {
		return b.broken
	}
	if b.closed {
		return fmt.Errorf("hpc: link send to process %d: %w", proc, ErrLinkClosed)
	}
	b.msgs.Push(memMsg{from: l.proc, msg: append([]byte{}, msg...)})
	b.cond.Signal()
	signal(b.notify)
	return nil
}

// state returns the error that ends the box's use, if any.
func (b *memBox) state() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.broken != nil:
		return b.broken
	case b.closed:
		return ErrLinkClosed
	}
	return nil
}

// Recv waits for the next message in this process's inbox.
func (l *memLink) Recv() (int, []byte, error) {
	b := l.net.boxes[l.proc]
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.msgs.Len() == 0 && !b.closed && b.broken == nil {
		b.cond.Wait()
	}
	return b.next()
}

// Shared reports that any goroutine may poll an in-memory link.
func (l *memLink) Shared() bool { return true }

// Queued returns nil: Send delivers at once.
func (l *memLink) Queued() <-chan struct{} { return nil }

// Progress does nothing: Send delivers at once.
func (l *memLink) Progress() error { return nil }

// Poll waits up to d for the next message in this process's inbox.
func (l *memLink) Poll(d time.Duration) (int, []byte, bool, error) {
	b := l.net.boxes[l.proc]
	var t *time.Timer
	for {
		b.mu.Lock()
		if b.msgs.Len() > 0 || b.closed || b.broken != nil {
			from, msg, err := b.next()
			b.mu.Unlock()
			return from, msg, err == nil, err
		}
		b.mu.Unlock()
		if t == nil {
			t = time.NewTimer(d)
			defer t.Stop()
		}
		select {
		case <-b.notify:
		case <-t.C:
			return 0, nil, false, nil
		}
	}
}

// next takes the first message of a box that has one, or returns the
// error that ends its use. The caller holds b.mu.
func (b *memBox) next() (int, []byte, error) {
	if b.broken != nil {
		return 0, nil, b.broken
	}
	if b.closed {
		return 0, nil, ErrLinkClosed
	}
	m := b.msgs.Pop()
	return m.from, m.msg, nil
}

// Close closes this process's end; messages still queued for it are
// dropped.
func (l *memLink) Close() error {
	b := l.net.boxes[l.proc]
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.msgs = fifo.Queue[memMsg]{}
	b.cond.Broadcast()
	signal(b.notify)
	return nil
}

// breakAll makes every Send and Recv of every link of the net fail with
// err, as a failed network would (tests).
func (n *memNet) breakAll(err error) {
	for _, b := range n.boxes {
		b.mu.Lock()
		b.broken = err
		b.cond.Broadcast()
		signal(b.notify)
		b.mu.Unlock()
	}
}
