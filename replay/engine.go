package replay

import (
	"context"
	"fmt"
	"runtime/pprof"
	"runtime/trace"
	"strconv"

	"scout/hpc"
	"scout/localtrace"
)

// Replayer runs the replay passes of one location.
type Replayer struct {
	Bus *Bus
	Loc *Location
	ctx Ctx
	// first Init/Finalize Leave handled
	initDone, finalizeDone bool
	// skipped counts the skipped messages of the current pass, by
	// channel and partner (gated)
	skipped map[gateKey]uint32
	// in holds the batches of a pass that ships ahead (nil: the pass
	// replays message by message)
	in *inbox
	// ship is what the location ships ahead (nil: nothing)
	ship *shipper
	// shipBufs are the buffers the pass before shipped ahead in, for
	// this one, if it ships ahead too (endAhead)
	shipBufs [][]byte
	// early holds the collectives' wait-state exchanges, run a window
	// at a time, by communicator (nil: none)
	early map[uint32]*exchangeQueue
	buf   []TimeRank // exchange scratch
	// steps are the current pass's steps less those that would publish
	// to no subscriber
	steps [256]step
}

// NewReplayer prepares the replay of loc with the subscriptions of bus.
func NewReplayer(bus *Bus, loc *Location) *Replayer {
	r := &Replayer{Bus: bus, Loc: loc}
	r.ctx = Ctx{Env: loc.env, Trace: loc.Trace, Loc: loc}
	return r
}

// Run runs the passes the bus's subscribers need, the early ones first,
// each in the order of the pass table; each builds its communicators
// when it starts.
func (r *Replayer) Run() error {
	for _, p := range runOrder() {
		if !r.Bus.Runs(p.id) || r.Loc.skip[p.id] {
			continue
		}
		if err := r.Loc.buildComms(p); err != nil {
			return err
		}
		if err := r.walkLabeled(p); err != nil {
			return err
		}
	}
	return nil
}

// walkLabeled runs walk(p) with the profiler labels "pass" (its name)
// and "location" (the rank, and the thread if not 0), so that a CPU
// profile (SCOUT_CPUPROFILE) tells the passes and locations apart
// (go tool pprof -tagfocus pass=bwc, -tags), and in a region of an
// execution trace (SCOUT_TRACE) named after the pass. The labels cost a
// context per pass and location. Goroutines that a pass starts inherit
// them.
func (r *Replayer) walkLabeled(p *pass) error {
	loc := strconv.Itoa(r.Loc.Rank)
	if r.Loc.Thread != 0 {
		loc += "." + strconv.Itoa(r.Loc.Thread)
	}
	var err error
	pprof.Do(context.Background(), pprof.Labels("pass", p.spec.Name, "location", loc), func(ctx context.Context) {
		trace.WithRegion(ctx, p.spec.Name, func() { err = r.walk(p) })
	})
	return err
}

// walk runs pass p over the location's events in the pass's order,
// doing at each event the step of its kind, and publishes Finished.
func (r *Replayer) walk(p *pass) error {
	t := r.Loc.Trace
	c := &r.ctx
	c.Pass = p.id
	n := len(t.Events)
	c.reset(0)
	if err := r.Bus.Publish(Started, c); err != nil {
		return err
	}
	if len(p.spec.Steps) == 0 {
		// no step: the pass's topics, once each
		for _, tp := range p.spec.Topics {
			if err := r.Bus.Publish(tp, c); err != nil {
				return err
			}
		}
		return r.Bus.Publish(Finished, c)
	}
	// a step that only publishes, to a topic without subscribers, is
	// none (the forward pass's Enter events of an MPI-only trace: half
	// its events)
	r.steps = p.steps
	for k := range r.steps {
		if st := &r.steps[k]; (st.do == Publish || st.do == PublishSync) && !r.Bus.Has(st.pre) {
			st.do = 0
		}
	}
	r.in, r.ship, r.early, r.skipped = nil, nil, nil, nil
	defer func() {
		r.endAhead()
		r.in, r.ship, r.early, r.skipped = nil, nil, nil, nil
	}()
	if r.Loc.World != nil && r.Bus.shipsAhead(p) {
		r.startAhead(p)
	} else {
		r.shipBufs = nil
	}
	if r.Loc.World != nil && p.steps[localtrace.KindCollEnd].do == waitStates {
		if err := r.exchangeEarly(p); err != nil {
			return err
		}
	}
	// a pass that does not ship ahead exchanges its values as it goes:
	// its locations wait on each other message by message
	lockstep := r.Loc.World != nil && r.ship == nil
	if lockstep {
		hpc.Lockstep(r.Loc.World, true)
	}
	for k := range n {
		if r.ship != nil && k == r.ship.next {
			if err := r.shipStretch(p, n); err != nil {
				return err
			}
		}
		i := p.event(k, n)
		st := &r.steps[t.Events[i].Kind]
		if st.do == 0 {
			continue
		}
		c.reset(i)
		if err := r.step(p, st, i); err != nil {
			return r.errorf(i, err)
		}
	}
	if lockstep {
		hpc.Lockstep(r.Loc.World, false)
	}
	c.reset(0)
	return r.Bus.Publish(Finished, c)
}

// step does step st of pass p at event i.
func (r *Replayer) step(p *pass, st *step, i int) error {
	switch st.do {
	case Publish:
		return r.Bus.Publish(st.pre, &r.ctx)
	case PublishSync:
		if r.ctx.RegionClass(i)&(ClassInit|ClassFinalize) == 0 {
			return nil
		}
		return r.Bus.Publish(st.pre, &r.ctx)
	case Ship, Take:
		if !r.ctx.IsMessage(i) {
			return nil
		}
		return r.message(p, st, i)
	case Collective:
		if !Counted(r.Loc.Trace.Collective(i).Op) {
			return nil
		}
		return r.Bus.Publish(st.pre, &r.ctx)
	case syncLeave:
		return r.leave(i, st.pre)
	case waitStates:
		return r.collective(i)
	}
	return nil
}

// errorf wraps an error with the location and event it happened at.
func (r *Replayer) errorf(i int, err error) error {
	e := r.Loc.Trace.Events[i]
	return fmt.Errorf("replay: rank %d (location %d), event %d (%v at %.9f s): %w",
		r.Loc.Rank, r.Loc.Trace.Location, i, e.Kind, r.Loc.Trace.Time(i), err)
}

// IsMessage reports whether event i, a send or receive, is a message
// the replay re-enacts (Ship and Take steps): one directly in an MPI
// region, not a cancelled request's send.
func (c *Ctx) IsMessage(i int) bool {
	if c.RegionClass(i)&ClassMPI == 0 {
		return false
	}
	t := c.Trace
	if t.Events[i].Kind != localtrace.KindIsend {
		return true
	}
	l := t.Link(i)
	return l == localtrace.None || t.Events[l].Kind != localtrace.KindRequestCancelled
}

// message does a Ship or Take step at message event i.
func (r *Replayer) message(p *pass, st *step, i int) error {
	c := &r.ctx
	m := c.setMsg(r.Loc.Trace.Message(i))
	if r.in != nil {
		return r.messageAhead(st, m)
	}
	if err := r.Bus.Publish(st.pre, c); err != nil {
		return err
	}
	if c.skipMsg && !r.gated(m, st.do) {
		c.out.reset()
		return r.Bus.Publish(st.post, c)
	}
	comm, err := r.Loc.comm(p.id, m.Comm)
	if err != nil {
		return err
	}
	if st.do == Ship {
		c.wire = c.out.encode(c.wire[:0])
		if c.skipMsg {
			c.wire = c.wire[:0] // a gate: nothing
		}
		c.out.reset()
		if err := comm.Send(c.Peer, int(m.Tag), c.wire); err != nil {
			return err
		}
	} else {
		data, err := comm.Recv(c.Peer, int(m.Tag))
		if err != nil {
			return err
		}
		if c.skipMsg {
			if len(data) != 0 {
				return fmt.Errorf("%w: a skipped message from rank %d of communicator %d, tag %d carries %d bytes", ErrPayload, c.Peer, m.Comm, m.Tag, len(data))
			}
		} else if err := c.in.decode(data); err != nil {
			return fmt.Errorf("message from rank %d of communicator %d, tag %d: %w", c.Peer, m.Comm, m.Tag, err)
		}
	}
	return r.Bus.Publish(st.post, c)
}

// gateEvery is how often a message that both sides skip goes all the
// same, empty: every gateEvery-th skipped message between two ranks on
// a communicator and tag, in the pass's order. Skipped messages no longer
// hold a location back, so without gates a location whose messages are
// all skipped runs ahead through its walk, and what it ships to a
// slower partner waits in the partner's mailbox (in bwc of the
// ring-like benchmark trace up to 68 000 messages, 12 MB, in the
// slowest rank's process). With them, a location is at most about
// gateEvery messages per partner ahead, as in a replay of every
// message; and as such a replay cannot deadlock, neither can one of
// some of its messages.
var gateEvery uint32 = 128

// gateKey is a channel and partner, as one side of a message counts it.
type gateKey struct {
	comm, tag uint32
	peer      uint32
	ship      bool
}

// gated counts skipped message m of a message-by-message pass (do: Ship
// or Take) and reports whether it goes all the same. Both sides skip the
// same messages and see those of a channel between them in the same
// order (the k-th message shipped is the k-th taken), so they agree.
func (r *Replayer) gated(m *localtrace.Message, do Action) bool {
	if r.skipped == nil {
		r.skipped = map[gateKey]uint32{}
	}
	k := gateKey{comm: m.Comm, tag: m.Tag, peer: uint32(m.Peer), ship: do == Ship}
	n := r.skipped[k]
	r.skipped[k] = n + 1
	return n%gateEvery == gateEvery-1
}

// messageAhead does a Ship or Take step of a pass that ships ahead: a
// Ship step's Pre callbacks ran and its payload left ahead of the walk; a
// Take step reads its payload from the partner's batch.
func (r *Replayer) messageAhead(st *step, m *localtrace.Message) error {
	c := &r.ctx
	if st.do == Take {
		if err := r.Bus.Publish(st.pre, c); err != nil {
			return err
		}
		if c.skipMsg {
			return r.Bus.Publish(st.post, c)
		}
		src, err := r.Loc.env.WorldRank(m.Comm, c.Peer, r.Loc.Rank)
		if err != nil {
			return err
		}
		data, err := r.in.take(r.Loc.World, src, channel{m.Comm, m.Tag})
		if err != nil {
			what := "receive from"
			if k := r.Loc.Trace.Events[c.Index].Kind; k == localtrace.KindSend || k == localtrace.KindIsend {
				what = "send to" // a backward pass: the receiver's side is missing
			}
			return fmt.Errorf("%s rank %d of communicator %d, tag %d: %w", what, c.Peer, m.Comm, m.Tag, err)
		}
		if err := c.in.decode(data); err != nil {
			return fmt.Errorf("message from rank %d of communicator %d, tag %d: %w", c.Peer, m.Comm, m.Tag, err)
		}
	}
	return r.Bus.Publish(st.post, c)
}

// leave does the forward analysis's step at Leave event i: at the first
// MPI_Init and MPI_Finalize, the world-wide time exchange; then topic.
func (r *Replayer) leave(i int, topic Topic) error {
	c := &r.ctx
	cls := c.RegionClass(i)
	switch {
	case cls&ClassInit != 0 && !r.initDone:
		r.initDone = true
		if err := r.setupCollective(i); err != nil {
			return err
		}
		if err := r.Bus.Publish(FwInit, c); err != nil {
			return err
		}
	case cls&ClassFinalize != 0 && !r.finalizeDone:
		r.finalizeDone = true
		if err := r.setupCollective(i); err != nil {
			return err
		}
		if err := r.Bus.Publish(FwFinalize, c); err != nil {
			return err
		}
	}
	return r.Bus.Publish(topic, c)
}
