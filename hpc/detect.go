package hpc

import (
	"fmt"
	"time"
)

// Deadlock detection. Every rank that waits counts itself in
// world.blocked (and whoever delivers its message uncounts it), so when
// blocked equals the number of live local ranks, no local rank can move
// until a message arrives. Only then, and when a rank exits, does a
// process look closer (detectLocked, with every rank's lock held): it
// declares a deadlock when no other process has a live rank left to send
// anything. A wait that can never be satisfied (a receive from a rank
// that returned, or from itself) is found the same way, once the other
// ranks have returned or wait too, so that the message describing the
// deadlock is the same wherever the ranks run.
//
// A cycle of waits that spans processes needs a global view. Process 0
// gets it with waves of probes (a termination detection in the manner of
// Mattern's counting waves):
//
//   - every process counts the data and exit frames it sent to other
//     processes and the ones it received;
//   - while some rank runs, process 0 probes every process now and then;
//     each answers whether it is idle (every live rank waiting) and its
//     two counts;
//   - two consecutive waves in which every process was idle with the same
//     counts, and the sums of the sent and the received counts agree,
//     prove a deadlock: between the waves no process received anything
//     (an idle process only moves when a frame arrives), so when the
//     first wave was complete every process was idle and no frame was in
//     flight.
//
// Process 0 then tells every process the state of every rank (the second
// wave's answers carry them), and each fails its waiting ranks with
// ErrDeadlock, naming those states. Process 0 stops last: its router ends
// once it has seen every rank's exit and no wave is under way, and then
// sends "end" to the others, whose routers wait for it, so no frame ever
// goes to a process that stopped receiving.

// detect runs detectLocked under w.mu.
func (w *world) detect() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.detectLocked()
}

// detectLocked declares a deadlock if no local rank can proceed and
// either a wait is hopeless or no remote rank is left. The caller holds
// w.mu.
func (w *world) detectLocked() {
	if w.failure.Load() != nil {
		return
	}
	w.lockRanks()
	defer w.unlockRanks()
	if !w.idleLocked() || w.alive.Load() == 0 {
		return
	}
	if w.nExited < w.remote {
		return // a remote rank may still send something, or the probes find it
	}
	var notes []rankNote
	for v := range w.n {
		if w.ranks[v] == nil {
			if w.remoteExited[v] {
				notes = append(notes, rankNote{rank: v, note: fmt.Sprintf("rank %d exited", v)})
			} else {
				notes = append(notes, rankNote{rank: v, note: fmt.Sprintf("rank %d on process %d", v, w.place[v])})
			}
		}
	}
	notes = append(notes, w.notesLocked()...)
	w.fail(&failure{kind: ErrDeadlock, rank: -1, state: renderNotes(notes, w.n)})
}

func (w *world) lockRanks() {
	for _, r := range w.local {
		r.mu.Lock()
	}
}

func (w *world) unlockRanks() {
	for _, r := range w.local {
		r.mu.Unlock()
	}
}

// idleLocked reports whether every live local rank waits for a message
// that is not there. The caller holds every rank's lock.
func (w *world) idleLocked() bool {
	for _, r := range w.local {
		if !r.exited && (r.wait == nil || r.woken) {
			return false
		}
	}
	return true
}

// rankNote is one rank's state for a deadlock message: "rank 3 exited",
// "rank 3 blocked in CALL", or for a collective call the start of that
// (see renderNotes).
type rankNote struct {
	rank int
	note string
	coll *collNote
}

// collNote is a collective call a rank is blocked in.
type collNote struct {
	comm    uint64
	seq     int
	members []int // world ranks of the communicator
}

// notesLocked describes the waiting and exited local ranks. The caller
// holds every rank's lock.
func (w *world) notesLocked() []rankNote {
	var notes []rankNote
	for _, r := range w.local {
		switch {
		case r.exited:
			notes = append(notes, rankNote{rank: r.id, note: fmt.Sprintf("rank %d exited", r.id)})
		case r.wait != nil:
			notes = append(notes, r.wait.note(r.id))
		default:
			notes = append(notes, rankNote{rank: r.id, note: fmt.Sprintf("rank %d running", r.id)})
		}
	}
	return notes
}

// renderNotes turns notes into the state of each of n ranks ("" for a
// rank without a note). A rank blocked in a collective waits for the
// members that are not blocked in the same call.
func renderNotes(notes []rankNote, n int) []string {
	type call struct {
		comm uint64
		seq  int
	}
	in := make(map[int]call, len(notes)) // rank → the collective it is in
	for _, x := range notes {
		if x.coll != nil {
			in[x.rank] = call{x.coll.comm, x.coll.seq}
		}
	}
	state := make([]string, n)
	for _, x := range notes {
		if x.rank < 0 || x.rank >= n {
			continue
		}
		s := x.note
		if x.coll != nil {
			var missing []int
			for _, m := range x.coll.members {
				if c, ok := in[m]; !ok || c != (call{x.coll.comm, x.coll.seq}) {
					missing = append(missing, m)
				}
			}
			if len(missing) > 0 {
				s += " waiting for rank " + rankList(missing)
			}
		}
		state[x.rank] = s
	}
	return state
}

// rankList formats world ranks, shortening long lists.
func rankList(ranks []int) string {
	const maxShown = 8
	s := ""
	for i, r := range ranks {
		if i == maxShown {
			return s + fmt.Sprintf(" and %d more", len(ranks)-maxShown)
		}
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(r)
	}
	return s
}

// Probe intervals: the first probe of a quiet stretch follows quickly;
// while the processes keep working, the interval doubles up to
// maxProbeEvery, so a long busy run costs a few frames a second.
const (
	minProbeEvery = 2 * time.Millisecond
	maxProbeEvery = 500 * time.Millisecond
)

// prober is process 0's state of the global detection.
type prober struct {
	wave    *wave // under way
	last    *wave // the last complete one
	epoch   uint64
	every   time.Duration
	endSent bool
}

// wave is one round of probes.
type wave struct {
	epoch     uint64
	wantState bool
	acks      []*ack // by process; nil until answered
	missing   int
}

// ack is a process's answer to a probe.
type ack struct {
	idle        bool
	alive       int    // live local ranks
	sent, recvd uint64 // counted frames
	state       []rankNote
}

// quiet reports whether every process answered a and b alike: idle,
// with the same counts, nothing in flight and some rank alive.
func quiet(a, b *wave) bool {
	if a == nil || b == nil {
		return false
	}
	var sent, recvd uint64
	alive := 0
	for p, x := range b.acks {
		y := a.acks[p]
		if !x.idle || !y.idle || x.sent != y.sent || x.recvd != y.recvd {
			return false
		}
		sent += x.sent
		recvd += x.recvd
		alive += x.alive
	}
	return sent == recvd && alive > 0
}

// startTicker makes process 0's router get a tick frame now and then
// while the run lasts; stop ends it.
func (w *world) startTicker() (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTimer(minProbeEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			w.mu.Lock()
			every := w.probe.every
			w.mu.Unlock()
			if w.link.Send(w.me, []byte{frameTick}) != nil {
				return
			}
			t.Reset(every)
		}
	}()
	return func() { close(done) }
}

// localAck describes this process for a probe. The caller holds w.mu.
func (w *world) localAck(withState bool) *ack {
	w.lockRanks()
	defer w.unlockRanks()
	a := &ack{idle: w.idleLocked(), alive: int(w.alive.Load()), sent: w.sent.Load(), recvd: w.recvd}
	if withState && a.idle {
		a.state = w.notesLocked()
	}
	return a
}

// probeFrame handles the frames of the global detection. The caller
// holds w.mu.
func (w *world) probeFrame(from int, msg []byte) error {
	switch msg[0] {
	case frameTick:
		if from != w.me || w.me != 0 {
			return fmt.Errorf("tick from process %d", from)
		}
		w.tick()
	case frameProbe:
		epoch, withState, err := decodeProbe(msg[1:])
		if err != nil {
			return err
		}
		if from != 0 {
			return fmt.Errorf("probe from process %d", from)
		}
		w.sendControl(0, encodeAck(epoch, w.localAck(withState)))
	case frameAck:
		epoch, a, err := decodeAck(msg[1:])
		if err != nil {
			return err
		}
		if w.me != 0 || from == 0 {
			return fmt.Errorf("probe answer from process %d to process %d", from, w.me)
		}
		return w.answer(from, epoch, a)
	case frameDeadlock:
		state, err := decodeStrings(msg[1:])
		if err != nil {
			return err
		}
		if from != 0 || len(state) != w.n {
			return fmt.Errorf("deadlock of %d ranks from process %d", len(state), from)
		}
		w.fail(&failure{kind: ErrDeadlock, rank: -1, state: state})
	default:
		return fmt.Errorf("unexpected frame type %d", msg[0])
	}
	return nil
}

// tick starts a wave unless one is under way, the run has failed or
// every rank has returned. The caller holds w.mu.
func (w *world) tick() {
	p := &w.probe
	if p.wave != nil || p.endSent || w.failure.Load() != nil || (w.alive.Load() == 0 && w.nExited == w.remote) {
		return
	}
	p.epoch++
	p.wave = &wave{epoch: p.epoch, wantState: quiet(p.last, p.last), acks: make([]*ack, w.procs), missing: w.procs}
	probe := encodeProbe(p.epoch, p.wave.wantState)
	for q := 1; q < w.procs; q++ {
		w.sendControl(q, probe)
	}
	w.answer(0, p.epoch, w.localAck(p.wave.wantState))
}

// answer records process q's answer to the probe of epoch; when the
// wave is complete, it compares it with the last one and declares a
// deadlock if both were quiet. The caller holds w.mu.
func (w *world) answer(q int, epoch uint64, a *ack) error {
	p := &w.probe
	wv := p.wave
	if wv == nil || epoch != wv.epoch {
		return nil // a late answer to an abandoned wave
	}
	if wv.acks[q] != nil {
		return fmt.Errorf("second answer to probe %d", epoch)
	}
	wv.acks[q] = a
	if wv.missing--; wv.missing > 0 {
		return nil
	}
	last := p.last
	p.wave, p.last = nil, wv
	switch {
	case quiet(last, wv) && wv.wantState && w.failure.Load() == nil:
		var notes []rankNote
		for _, a := range wv.acks {
			notes = append(notes, a.state...)
		}
		state := renderNotes(notes, w.n)
		frame := encodeStrings(frameDeadlock, state)
		for q := 1; q < w.procs; q++ {
			w.sendControl(q, frame)
		}
		w.fail(&failure{kind: ErrDeadlock, rank: -1, state: state})
	case quiet(wv, wv):
		p.every = minProbeEvery
	default:
		p.every = min(2*p.every, maxProbeEvery)
	}
	return nil
}
