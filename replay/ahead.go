package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	"scout/hpc"
	"scout/internal/fifo"
)

// Shipping ahead.
//
// A message of a pass carries what its shipping side's callbacks put at
// the Ship step's Pre topic. In the wait-state passes those fields
// depend only on the shipping location's own events (the send's enter
// time, say) and on what earlier passes found, never on what the pass
// itself receives. Replaying such a pass message by message makes every
// location wait for its partners' walks, one message latency per traced
// message, which under mpirun is most of the run time. Such a pass ships
// ahead instead: each location runs the Pre callbacks of its Ship steps
// a stretch of events ahead of its walk (aheadStretch), in walk order,
// and sends every partner the payloads meant for it in few messages
// (its batch, in chunks); a Take step reads its payload from the
// partner's batch: per communicator and
// tag, the k-th payload a partner shipped is the k-th this location
// takes, as messages between two ranks of one communicator and tag are
// received in the order they were sent. The payloads are the same as in
// a message-by-message replay, so the results are too, in every
// placement; the walk waits only for a partner's next stretch.
//
// A pass ships ahead when every subscriber of its Ship steps' Pre topics
// subscribed with Bus.OnAhead; one that subscribed with On (its fields
// depend on what the pass received, or its state on the order of the
// walk) makes the pass replay message by message. Every location
// registers the same patterns, so all decide alike.

// aheadTag is the tag of the batches of pass p on the world
// communicator.
func aheadTag(p Pass) int { return 0x414844<<8 | int(p) }

// OnAhead subscribes h to t, the Pre topic of a Ship step, as a callback
// the pass may run ahead of its walk (see "Shipping ahead" above): h
// puts fields that depend only on the location's own events and on the
// results of earlier passes, and keeps no state that another callback
// of the pass reads before the pass ends (order-independent counts and
// maxima are fine). It panics if t is no Pre topic of a Ship step.
func (b *Bus) OnAhead(t Topic, h Handler) {
	if !isShipPre(t) {
		panic(fmt.Sprintf("replay: OnAhead(%v): not the Pre topic of a Ship step", t))
	}
	b.On(t, h)
	for len(b.ahead) <= int(t) {
		b.ahead = append(b.ahead, 0)
	}
	b.ahead[t]++
}

// isShipPre reports whether t is the Pre topic of a Ship step of some
// pass.
func isShipPre(t Topic) bool {
	for _, p := range passes() {
		for _, s := range p.spec.Steps {
			if s.Do == Ship && s.Pre == t {
				return true
			}
		}
	}
	return false
}

// shipsAhead reports whether pass p ships ahead: it has Ship steps, and
// every subscriber of their Pre topics subscribed with OnAhead.
func (b *Bus) shipsAhead(p *pass) bool {
	ships := false
	for _, s := range p.spec.Steps {
		if s.Do != Ship {
			continue
		}
		ships = true
		if s.Pre == 0 || !b.Has(s.Pre) {
			continue
		}
		if int(s.Pre) >= len(b.ahead) || b.ahead[s.Pre] != len(b.subs[s.Pre]) {
			return false
		}
	}
	return ships
}

// channel is a communicator and tag of the traced program.
type channel struct{ comm, tag uint32 }

// aheadChunk bounds the bytes of one message of a batch: a partner's
// batch travels as chunks of about this size, each sent when full, so
// that neither side holds a whole pass's payloads at once when they are
// taken in about the order they were shipped.
const aheadChunk = 1 << 20

// A chunk starts with a flag byte: chunkLast on the partner's last one.
const (
	chunkMore = 0
	chunkLast = 1
)

// span is one payload in a batch: its chunk and its bytes there.
type span struct{ chunk, start, end uint32 }

// spanSpares bounds the blocks of spans a channel's queue keeps for
// reuse: 1024 blocks hold 262 144 spans (3 MB), those of a chunk of
// payloads of a few bytes.
const spanSpares = 1024

// batch is what one partner shipped ahead to this location in a pass, as
// far as it has arrived: the chunks not yet taken in full, and for each
// channel the spans of its payloads in the order shipped, not yet taken.
type batch struct {
	chunks [][]byte // by chunk number; nil once taken in full
	left   []int    // by chunk number: payloads not yet taken
	spans  map[channel]*fifo.Queue[span]
	last   bool // the last chunk arrived
}

// inbox holds the batches of the current pass, by the sender's world
// rank; nil when the pass replays message by message.
type inbox struct {
	tag     int
	batches map[int]*batch
	done    []byte // a chunk taken in full, handed back at the next take
}

// aheadStretch is the number of events whose payloads a location ships
// at once: when its walk reaches an event that is not shipped yet, it
// runs the Pre callbacks of the Ship steps of that event and the
// following ones up to this many, and sends every partner what they
// made for it. A payload thus leaves no later than its message is
// replayed (as in a message-by-message replay, so no walk waits for a
// payload its partner reaches only after it), and a location holds
// only the payloads its partners shipped ahead of its own walk, not a
// whole pass's.
var aheadStretch = 1 << 16

// shipper is what a location ships ahead in the current pass.
type shipper struct {
	// out holds, by destination, the chunk being filled; a destination
	// is there from its first payload on, so that it gets the last chunk
	out  map[int][]byte
	next int // walk position of the first event not shipped
}

// startAhead prepares pass p to ship ahead: the inbox of the batches the
// location's Take steps read, and its own shipping.
func (r *Replayer) startAhead(p *pass) {
	r.in = &inbox{tag: aheadTag(p.id), batches: map[int]*batch{}}
	r.ship = &shipper{out: map[int][]byte{}}
}

// endAhead keeps the buffers the pass shipped in for the next pass, if
// it ships ahead too (grown anew from a few KiB, a pass's buffers for
// the HPCG-like bench trace were a twelfth of what its replay
// allocated); they go to its partners, whichever they are.
func (r *Replayer) endAhead() {
	if r.ship == nil {
		return
	}
	for _, b := range r.ship.out {
		r.shipBufs = append(r.shipBufs, b[:0])
	}
}

// shipStretch runs the Pre callbacks of pass p's Ship steps for the
// location's messages in the next stretch of its walk (n events in all),
// in the pass's order, and sends each partner its payloads, in chunks;
// after the last stretch every partner gets its last chunk.
func (r *Replayer) shipStretch(p *pass, n int) error {
	t := r.Loc.Trace
	c := &r.ctx
	me := r.Loc.Rank
	sh := r.ship
	send := func(dest int, flag byte) error {
		b := sh.out[dest]
		b[0] = flag
		if dest == me {
			if err := r.in.add(me, slices.Clone(b)); err != nil {
				return err
			}
		} else if err := r.Loc.World.Send(dest, r.in.tag, b); err != nil {
			return fmt.Errorf("replay: rank %d: shipping the %s pass's messages to rank %d: %w", me, p.spec.Name, dest, err)
		}
		sh.out[dest] = append(b[:0], chunkMore) // the transport copied it
		return nil
	}
	end := min(sh.next+aheadStretch, n)
	for k := sh.next; k < end; k++ {
		i := p.event(k, n)
		st := &p.steps[t.Events[i].Kind]
		if st.do != Ship || !r.ctx.IsMessage(i) {
			continue
		}
		c.reset(i)
		m := c.setMsg(t.Message(i))
		dest, err := r.Loc.env.WorldRank(m.Comm, int(m.Peer), me)
		if err != nil {
			return r.errorf(i, err)
		}
		if err := r.Bus.Publish(st.pre, c); err != nil {
			return r.errorf(i, err)
		}
		if c.skipMsg {
			continue
		}
		c.wire = c.out.encode(c.wire[:0])
		b, ok := sh.out[dest]
		if !ok {
			// a buffer of the pass before, grown already
			if k := len(r.shipBufs); k > 0 {
				b, r.shipBufs = r.shipBufs[k-1], r.shipBufs[:k-1]
			} else {
				b = make([]byte, 0, 4096)
			}
			b = append(b, chunkMore)
		}
		b = binary.AppendUvarint(b, uint64(m.Comm))
		b = binary.AppendUvarint(b, uint64(m.Tag))
		b = binary.AppendUvarint(b, uint64(len(c.wire)))
		sh.out[dest] = append(b, c.wire...)
		if len(sh.out[dest]) >= aheadChunk {
			if err := send(dest, chunkMore); err != nil {
				return err
			}
		}
	}
	c.reset(0)
	sh.next = end
	for _, dest := range slices.Sorted(maps.Keys(sh.out)) {
		switch {
		case end == n:
			if err := send(dest, chunkLast); err != nil {
				return err
			}
		case len(sh.out[dest]) > 1:
			if err := send(dest, chunkMore); err != nil {
				return err
			}
		}
	}
	return nil
}

// add indexes chunk data from world rank src (it keeps data).
func (in *inbox) add(src int, data []byte) error {
	b := in.batches[src]
	if b == nil {
		b = &batch{spans: map[channel]*fifo.Queue[span]{}}
		in.batches[src] = b
	}
	if b.last {
		return fmt.Errorf("%w: a chunk after the last one", ErrPayload)
	}
	if len(data) < 1 || len(data) > 1<<32-1 || data[0] > chunkLast {
		return fmt.Errorf("%w: a chunk of %d bytes", ErrPayload, len(data))
	}
	b.last = data[0] == chunkLast
	ck := uint32(len(b.chunks))
	count := 0
	for at := 1; at < len(data); {
		var v [3]uint64
		for j := range v {
			x, k := binary.Uvarint(data[at:])
			if k <= 0 {
				return fmt.Errorf("%w: batch record at byte %d", ErrPayload, at)
			}
			v[j], at = x, at+k
		}
		if v[0] > 1<<32-1 || v[1] > 1<<32-1 || v[2] > uint64(len(data)-at) {
			return fmt.Errorf("%w: batch record at byte %d", ErrPayload, at)
		}
		ch := channel{uint32(v[0]), uint32(v[1])}
		end := at + int(v[2])
		q := b.spans[ch]
		if q == nil {
			// the spans of a chunk come at once and go one by one,
			// chunk after chunk: the queue's blocks are reused
			// (taken anew, they were most of what a replay of the
			// HPCG-like bench trace allocated: 2.7 MB a process)
			q = &fifo.Queue[span]{}
			q.KeepSpares(spanSpares)
			b.spans[ch] = q
		}
		q.Push(span{ck, uint32(at), uint32(end)})
		at = end
		count++
	}
	b.chunks = append(b.chunks, data)
	b.left = append(b.left, count)
	if count == 0 {
		b.chunks[ck] = nil
	}
	return nil
}

// take returns the next payload that world rank src shipped ahead to
// this location on channel ch, receiving src's chunks until it is there;
// it is valid until the next take.
func (in *inbox) take(world hpc.Comm, src int, ch channel) ([]byte, error) {
	if in.done != nil { // its last payload has been decoded
		world.Release(in.done)
		in.done = nil
	}
	for {
		b := in.batches[src]
		if b != nil {
			if q := b.spans[ch]; q != nil && q.Len() > 0 {
				sp := q.Pop()
				data := b.chunks[sp.chunk][sp.start:sp.end]
				if b.left[sp.chunk]--; b.left[sp.chunk] == 0 {
					// data stays valid until the next take, which
					// hands the chunk back to the transport
					in.done, b.chunks[sp.chunk] = b.chunks[sp.chunk], nil
				}
				return data, nil
			}
			if b.last {
				return nil, fmt.Errorf("%w: rank %d has no further message of this communicator and tag for it (the trace's sends and receives do not match)",
					ErrUnmatched, src)
			}
		}
		data, err := world.RecvOwned(src, in.tag)
		if err != nil {
			return nil, err
		}
		if err := in.add(src, data); err != nil {
			return nil, fmt.Errorf("messages shipped by rank %d: %w", src, err)
		}
	}
}

// ErrUnmatched is wrapped by the error of a receive whose message its
// partner never sent.
var ErrUnmatched = errors.New("unmatched message")
