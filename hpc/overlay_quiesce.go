package hpc

import (
	"fmt"
	"time"
)

// Global deadlock detection of hosted runs. A process sees a deadlock by
// itself when its ranks wait only for each other or for ranks that have
// returned; a cycle of blocked ranks that spans processes needs a global
// view. Process 0 gets it with waves of probes (a termination detection
// in the manner of Mattern's counting waves):
//
//   - every process counts the data and exit frames it sent to other
//     processes and the ones it received;
//   - while some rank is still running, process 0 sends every process a
//     probe now and then (see quiet); each answers with whether it is
//     idle (every live local rank blocked on a call that is not ready, or
//     none left) and its two counts;
//   - two consecutive waves in which every process was idle with the same
//     counts, and the sum of the sent counts equals the sum of the
//     received ones, prove a deadlock: between the waves no process
//     received anything (an idle process only moves when a frame
//     arrives), so at the moment the first wave was complete every
//     process was idle and no frame was in flight.
//
// Process 0 then tells every process the state of every rank (the second
// wave's answers carry them), and each fails its blocked ranks with
// ErrDeadlock, naming those states as RunInProcess does.
//
// The probes make process 0 the last to stop sending: its router stops
// only once it has seen every rank's exit and no wave is under way, and
// then sends "end" to the others, whose routers wait for it. So no frame
// is ever sent to a process that stopped receiving.

// Probe intervals: the first probe of a quiet stretch follows quickly;
// while the processes keep working, the interval doubles up to
// maxProbeEvery, so a long busy run costs a few frames a second.
const (
	minProbeEvery = 2 * time.Millisecond
	maxProbeEvery = 500 * time.Millisecond
)

// wave is one round of probes of process 0.
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

// rankNote is one rank's state for a deadlock message: "rank 3
// exited", "rank 3 blocked in CALL", or for a collective call the start
// of that (see renderNotes).
type rankNote struct {
	rank int
	note string
	coll *collNote
}

// collNote is a collective call a rank is blocked in.
type collNote struct {
	comm    uint64
	seq     int
	members []int         // virtual world ranks of the communicator
	head    func() string // the call, for messages; called with mu held
}

// localNotes describes the blocked and exited local ranks. The caller
// holds mu.
func (h *hostRun) localNotes() []rankNote {
	var notes []rankNote
	for _, r := range h.local {
		switch {
		case r.exited:
			notes = append(notes, rankNote{rank: r.vrank, note: fmt.Sprintf("rank %d exited", r.vrank)})
		case r.wait != nil && r.wait.coll != nil:
			notes = append(notes, rankNote{rank: r.vrank, note: fmt.Sprintf("rank %d blocked in %s", r.vrank, r.wait.coll.head()), coll: r.wait.coll})
		case r.wait != nil:
			notes = append(notes, rankNote{rank: r.vrank, note: fmt.Sprintf("rank %d blocked in %s", r.vrank, r.wait.desc())})
		}
	}
	return notes
}

// renderNotes turns notes into the state of each of n ranks ("" for a
// rank without a note). A rank blocked in a collective waits for the
// members that are not blocked in the same call, as RunInProcess says.
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

// quiet reports whether every process answered a and b alike: idle,
// with the same counts, and nothing in flight.
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

// balanced reports whether every process of w was idle with nothing in
// flight and some rank alive: a deadlock if the next wave agrees.
func balanced(w *wave) bool { return quiet(w, w) }

// startTicker makes process 0's router get a tick frame now and then
// while the run lasts; stop ends it.
func (h *hostRun) startTicker() (stop func()) {
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
			h.mu.Lock()
			every := h.probeEvery
			h.mu.Unlock()
			if h.link.Send(h.me, []byte{frameTick}) != nil {
				return
			}
			t.Reset(every)
		}
	}()
	return func() { close(done) }
}

// tick starts a wave unless one is under way, the run has failed or
// every rank has returned. The caller holds mu.
func (h *hostRun) tick() {
	if h.wave != nil || h.failure != nil || h.endSent || (h.alive == 0 && h.nExited == h.remote) {
		return
	}
	h.epoch++
	w := &wave{epoch: h.epoch, wantState: balanced(h.lastWave), acks: make([]*ack, h.procs), missing: h.procs}
	h.wave = w
	probe := encodeProbe(w.epoch, w.wantState)
	for p := range h.procs {
		if p != h.me {
			h.sendControl(p, probe)
		}
	}
	h.answer(h.me, w.epoch, h.localAck(w.wantState))
}

// localAck describes this process for a probe. The caller holds mu.
func (h *hostRun) localAck(withState bool) *ack {
	a := &ack{idle: h.idle(), alive: h.alive, sent: h.sent.Load(), recvd: h.recvd}
	if withState && a.idle {
		a.state = h.localNotes()
	}
	return a
}

// idle reports whether no local rank can proceed until a frame arrives.
// The caller holds mu.
func (h *hostRun) idle() bool {
	if h.waiting < h.alive {
		return false
	}
	for _, r := range h.local {
		if !r.exited && (r.wait == nil || h.ready(r.wait)) {
			return false
		}
	}
	return true
}

// answer records process p's answer to the probe of epoch; when the wave
// is complete, it compares it with the last one and declares a deadlock
// if both were quiet. The caller holds mu.
func (h *hostRun) answer(p int, epoch uint64, a *ack) error {
	w := h.wave
	if w == nil || epoch != w.epoch {
		return nil // a late answer to an abandoned wave
	}
	if w.acks[p] != nil {
		return fmt.Errorf("second answer to probe %d", epoch)
	}
	w.acks[p] = a
	w.missing--
	if w.missing > 0 {
		return nil
	}
	h.wave = nil
	last := h.lastWave
	h.lastWave = w
	switch {
	case quiet(last, w) && w.wantState && h.failure == nil:
		var notes []rankNote
		for _, a := range w.acks {
			notes = append(notes, a.state...)
		}
		state := renderNotes(notes, len(h.place))
		frame := encodeDeadlock(state)
		for p := range h.procs {
			if p != h.me {
				h.sendControl(p, frame)
			}
		}
		h.globalDeadlock(state)
	case balanced(w):
		h.probeEvery = minProbeEvery
	default:
		h.probeEvery = min(2*h.probeEvery, maxProbeEvery)
	}
	return nil
}

// globalDeadlock fails the run with a deadlock found by process 0, with
// the state of every rank. The caller holds mu.
func (h *hostRun) globalDeadlock(state []string) {
	if h.failure != nil {
		return
	}
	h.failure = &hostFailure{kind: ErrDeadlock, rank: -1, state: state}
	h.wakeAll()
}

// sendControl sends a frame that is not counted (probes, answers, the
// deadlock and the end). The caller holds mu.
func (h *hostRun) sendControl(p int, frame []byte) {
	if err := h.link.Send(p, frame); err != nil {
		h.linkFailed(err)
	}
}

// encodeProbe encodes process 0's probe of a wave.
func encodeProbe(epoch uint64, wantState bool) []byte {
	w := wbuf{frameProbe}.uv(epoch)
	if wantState {
		return w.b(1)
	}
	return w.b(0)
}

func decodeProbe(msg []byte) (epoch uint64, wantState bool, err error) {
	r := &rbuf{b: msg}
	epoch, want := r.uv(), r.byte1()
	if want > 1 {
		r.fail()
	}
	return epoch, want == 1, r.err
}

// encodeAck encodes a process's answer to probe epoch.
func encodeAck(epoch uint64, a *ack) []byte {
	w := wbuf{frameAck}.uv(epoch)
	if a.idle {
		w = w.b(1)
	} else {
		w = w.b(0)
	}
	w = w.uv(uint64(a.alive)).uv(a.sent).uv(a.recvd).uv(uint64(len(a.state)))
	for _, n := range a.state {
		w = w.iv(n.rank).str(n.note)
		if n.coll == nil {
			w = w.b(0)
			continue
		}
		w = w.b(1).uv(n.coll.comm).iv(n.coll.seq).ints(n.coll.members)
	}
	return w
}

func decodeAck(msg []byte) (uint64, *ack, error) {
	r := &rbuf{b: msg}
	epoch := r.uv()
	idle := r.byte1()
	a := &ack{idle: idle == 1, alive: int(r.uv()), sent: r.uv(), recvd: r.uv()}
	n := r.n(3)
	for range n {
		x := rankNote{rank: r.iv(), note: r.str()}
		switch r.byte1() {
		case 0:
		case 1:
			x.coll = &collNote{comm: r.uv(), seq: r.iv(), members: r.ints()}
		default:
			r.fail()
		}
		a.state = append(a.state, x)
	}
	if idle > 1 {
		r.fail()
	}
	return epoch, a, r.err
}

// encodeDeadlock encodes the state of every rank of a deadlock found by
// process 0.
func encodeDeadlock(state []string) []byte {
	w := wbuf{frameDeadlock}.uv(uint64(len(state)))
	for _, s := range state {
		w = w.str(s)
	}
	return w
}

func decodeDeadlock(msg []byte) ([]string, error) {
	r := &rbuf{b: msg}
	state := make([]string, r.n(1))
	for i := range state {
		state[i] = r.str()
	}
	return state, r.err
}
