package replay

import (
	"fmt"

	"scout/localtrace"
)

// Replayer runs the replay passes of one location.
type Replayer struct {
	Bus *Bus
	Loc *Location
	ctx Ctx
	buf []byte
	// scratch of the collectives
	one   [1]TimeRank
	eight [8]byte
	// first Init/Finalize Leave handled
	initDone, finalizeDone bool
}

// NewReplayer prepares the replay of loc with the subscriptions of bus.
func NewReplayer(bus *Bus, loc *Location) *Replayer {
	r := &Replayer{Bus: bus, Loc: loc}
	r.ctx = Ctx{Env: loc.env, Trace: loc.Trace, Loc: loc}
	return r
}

// passes are the walks of the passes, by Pass.
var passes = [numPasses]func(*Replayer) error{Forward: (*Replayer).Forward, Backward: (*Replayer).Backward}

// Run runs the passes the bus's subscribers need, in order.
func (r *Replayer) Run() error {
	for p, walk := range passes {
		if !r.Bus.Runs(Pass(p)) {
			continue
		}
		if err := r.Loc.buildComms(Pass(p)); err != nil {
			return err
		}
		if err := walk(r); err != nil {
			return err
		}
	}
	return nil
}

// errorf wraps an error with the location and event it happened at.
func (r *Replayer) errorf(i int, err error) error {
	e := r.Loc.Trace.Events[i]
	return fmt.Errorf("replay: rank %d (location %d), event %d (%v at %.9f s): %w",
		r.Loc.Rank, r.Loc.Trace.Location, i, e.Kind, e.Time, err)
}

// isMPIEvent reports whether event i lies directly in an MPI region.
func (r *Replayer) isMPIEvent(i int) bool { return r.ctx.RegionClass(i)&ClassMPI != 0 }

// sendCancelled reports whether the send request of event i was cancelled.
func (r *Replayer) sendCancelled(i int) bool {
	e := &r.Loc.Trace.Events[i]
	return e.Kind == localtrace.KindIsend && e.C != localtrace.None &&
		r.Loc.Trace.Events[e.C].Kind == localtrace.KindRequestCancelled
}

// Forward runs the forward pass: Late Sender, wrong order, collectives,
// message statistics.
func (r *Replayer) Forward() error {
	t := r.Loc.Trace
	c := &r.ctx
	for i := range t.Events {
		c.reset(i)
		e := &t.Events[i]
		var err error
		switch e.Kind {
		case localtrace.KindEnter:
			err = r.Bus.Publish(FwEnter, c)
		case localtrace.KindLeave:
			err = r.leave(i)
		case localtrace.KindSend, localtrace.KindIsend:
			if r.isMPIEvent(i) && !r.sendCancelled(i) {
				err = r.send(i)
			}
		case localtrace.KindRecv, localtrace.KindIrecv:
			if r.isMPIEvent(i) {
				err = r.recv(i)
			}
		case localtrace.KindCollEnd:
			err = r.collective(i)
		}
		if err != nil {
			return r.errorf(i, err)
		}
	}
	c.reset(0)
	return r.Bus.Publish(Finished, c)
}

func (r *Replayer) leave(i int) error {
	c := &r.ctx
	cls := r.Loc.env.Class(r.Loc.Trace.Events[i].A)
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
	return r.Bus.Publish(FwLeave, c)
}

func (r *Replayer) send(i int) error {
	c := &r.ctx
	m := r.Loc.Trace.Message(i)
	c.Peer = int(m.Peer)
	if err := r.Bus.Publish(FwPreSend, c); err != nil {
		return err
	}
	comm, err := r.Loc.comm(Forward, m.Comm)
	if err != nil {
		return err
	}
	r.buf = c.Local.encode(r.buf[:0])
	if err := comm.Send(int(m.Peer), int(m.Tag), r.buf); err != nil {
		return err
	}
	return r.Bus.Publish(FwPostSend, c)
}

func (r *Replayer) recv(i int) error {
	c := &r.ctx
	m := r.Loc.Trace.Message(i)
	c.Peer = int(m.Peer)
	if err := r.Bus.Publish(FwPreRecv, c); err != nil {
		return err
	}
	comm, err := r.Loc.comm(Forward, m.Comm)
	if err != nil {
		return err
	}
	data, err := comm.Recv(int(m.Peer), int(m.Tag))
	if err != nil {
		return err
	}
	if err := c.Remote.decode(data); err != nil {
		return err
	}
	return r.Bus.Publish(FwPostRecv, c)
}

// Backward runs the backward pass: the receiver ships its receive data
// to the sender (Late Receiver).
func (r *Replayer) Backward() error {
	t := r.Loc.Trace
	c := &r.ctx
	for i := len(t.Events) - 1; i >= 0; i-- {
		c.reset(i)
		e := &t.Events[i]
		var err error
		switch e.Kind {
		case localtrace.KindLeave:
			err = r.Bus.Publish(BwLeave, c)
		case localtrace.KindEnter:
			err = r.Bus.Publish(BwEnter, c)
		case localtrace.KindIsendComplete:
			err = r.Bus.Publish(BwSendComplete, c)
		case localtrace.KindRecv, localtrace.KindIrecv:
			if r.isMPIEvent(i) {
				err = r.bwRecv(i)
			}
		case localtrace.KindSend, localtrace.KindIsend:
			if r.isMPIEvent(i) && !r.sendCancelled(i) {
				err = r.bwSend(i)
			}
		}
		if err != nil {
			return r.errorf(i, err)
		}
	}
	c.reset(0)
	return r.Bus.Publish(Finished, c)
}

func (r *Replayer) bwRecv(i int) error {
	c := &r.ctx
	m := r.Loc.Trace.Message(i)
	c.Peer = int(m.Peer)
	if err := r.Bus.Publish(BwPreRecv, c); err != nil {
		return err
	}
	comm, err := r.Loc.comm(Backward, m.Comm)
	if err != nil {
		return err
	}
	r.buf = c.Local.encode(r.buf[:0])
	return comm.Send(int(m.Peer), int(m.Tag), r.buf)
}

func (r *Replayer) bwSend(i int) error {
	c := &r.ctx
	m := r.Loc.Trace.Message(i)
	c.Peer = int(m.Peer)
	if err := r.Bus.Publish(BwPreSend, c); err != nil {
		return err
	}
	comm, err := r.Loc.comm(Backward, m.Comm)
	if err != nil {
		return err
	}
	data, err := comm.Recv(int(m.Peer), int(m.Tag))
	if err != nil {
		return err
	}
	if err := c.Remote.decode(data); err != nil {
		return err
	}
	return r.Bus.Publish(BwPostSend, c)
}
