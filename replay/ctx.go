package replay

import (
	"fmt"

	"scout/hpc"
	"scout/localtrace"
)

// CollInfo is the result of a collective's time exchange, in
// communicator ranks.
type CollInfo struct {
	My          TimeRank // own begin time
	Latest      TimeRank // latest begin (over the relevant ranks)
	EarliestEnd TimeRank // earliest end (over the relevant ranks)
	Root        TimeRank // root's begin (rooted operations)
	End         float64  // own end time
	SyncPoint   bool
}

// Ctx is the per-event scratch state handed to callbacks; the replay
// resets it after every trace event.
type Ctx struct {
	Env   *Env
	Trace *localtrace.Trace
	Loc   *Location
	// Pass is the pass being run.
	Pass Pass
	// Index is the current trace event.
	Index int
	// Idle and Completion are the wait and completion times the
	// communication handler or a general pattern computed.
	Idle, Completion float64
	// Coll is the current collective's exchange result.
	Coll CollInfo
	// Peer is the partner's communicator rank of the current message.
	Peer int

	msg     *localtrace.Message // the current message (&msgBuf), nil for none
	msgBuf  localtrace.Message
	skipMsg bool // SkipMessage was called at the current message
	// the world ranks the current collective synchronised (shared),
	// whether it synchronised this member, whether they are known
	// (CollSynced)
	synced             []int
	syncedMe, syncedOK bool
	out, in            payload // fields put, fields received (Put, Get)
	wire               []byte  // encoding scratch
	// gathered are the members' encoded fields of the last GatherFields
	// on its root
	gathered [][]byte
}

// Event returns the current event.
func (c *Ctx) Event() *localtrace.Event { return &c.Trace.Events[c.Index] }

// Time returns the time of the event being handled.
func (c *Ctx) Time() float64 { return c.Trace.Time(c.Index) }

// Progress returns how many of the location's events the current pass
// walked before the current one, and how many it walks in all: tables
// that fill during a pass size themselves by it (grow.Room).
func (c *Ctx) Progress() (done, total int) {
	total = len(c.Trace.Events)
	if ps := passByID(c.Pass); ps != nil && ps.spec.Order == ReverseOrder {
		return total - 1 - c.Index, total
	}
	return c.Index, total
}

// Callpath returns the local call path of event i.
func (c *Ctx) Callpath(i int) uint32 { return c.Trace.Callpath(i) }

// EnterTime returns the time of the Enter of event i's region.
func (c *Ctx) EnterTime(i int) float64 { return c.Trace.Time(int(c.Trace.EnterOf(i))) }

// LeaveTime returns the time of the Leave of event i's region.
func (c *Ctx) LeaveTime(i int) float64 { return c.Trace.Time(int(c.Trace.LeaveOf(i))) }

// RegionClass returns the classes of event i's region: an Enter's or
// Leave's own, the enclosing region's for any other event, 0 outside
// every region.
func (c *Ctx) RegionClass(i int) RegionClass {
	cp := c.Trace.Callpath(i)
	if cp == localtrace.None {
		return 0
	}
	return c.Env.Class(c.Trace.Callpaths[cp].Region)
}

// Add adds v to metric m at local call path cp of this location.
func (c *Ctx) Add(m Metric, cp uint32, v float64) { c.Loc.Sev.Add(m, cp, v) }

func (c *Ctx) reset(i int) {
	c.Index = i
	c.out.reset()
	c.in.reset()
	c.Idle, c.Completion = 0, 0
	c.Coll = CollInfo{}
	c.Peer = -1
	c.msg = nil
	c.skipMsg = false
	c.synced, c.syncedMe, c.syncedOK = nil, false, false
}

// CollSynced returns the world ranks of the members the current
// collective synchronised, in communicator rank order (shared: read
// them, do not change them), and whether it synchronised this member, as
// the forward pass's wait-state exchange found for a window of
// collectives (collWindow): at an
// N-to-N collective its synchpoints (Coll.SyncPoint), at a 1-to-N one
// the members other than the root that waited for it. It reports false
// where the exchange ran at the collective instead (the caller then asks
// the members, with Allgather), and where no subscriber asked for them
// (Bus.WantCollSynced).
func (c *Ctx) CollSynced() (ranks []int, me, ok bool) {
	return c.synced, c.syncedMe, c.syncedOK
}

// SkipMessage tells the engine, in a callback of the Pre topic of a Ship
// or Take step, that the current message carries nothing the partner
// needs in this pass: the shipping side sends nothing, the taking side
// waits for nothing, and the Post callbacks find no field (Get reports
// none). Both sides must decide alike, on what both know before the
// pass (whether the receive was a wait state, say): a message skipped on
// one side only would shift the later messages of its communicator and
// tag between the two ranks.
func (c *Ctx) SkipMessage() {
	if c.msg != nil {
		c.skipMsg = true
	}
}

// Inverse messages go against the direction of the pass: from the side
// that takes to the side that ships (in the backward pass, from the
// sender to the receiver), over the pass's inverse communicators, so
// that they never match the pass's own messages. Patterns decide which
// messages have one, and both sides must decide alike: the receiving
// side waits in RecvInverse until its partner's walk reaches the
// message and calls SendInverse. A wait against the order of the walk
// can deadlock (two ranks that each wait for the other's later event);
// the hpc runtime then fails the replay with hpc.ErrDeadlock instead of
// hanging.

// SendInverse sends the fields put so far at the current message event
// to the message partner over the inverse communicator of the pass, with
// the message's tag, and empties the outgoing payload. It is valid in
// the callbacks of a Ship or Take step of a pass with inverse
// communicators (PassSpec.Inverse).
func (c *Ctx) SendInverse() error {
	comm, err := c.inverseComm()
	if err != nil {
		return fmt.Errorf("replay: SendInverse: %w", err)
	}
	return c.sendInverse(comm, c.Peer, c.msg)
}

// setMsg makes m the current message.
func (c *Ctx) setMsg(m localtrace.Message) *localtrace.Message {
	c.msgBuf = m
	c.Peer, c.msg = int(m.Peer), &c.msgBuf
	return c.msg
}

func (c *Ctx) sendInverse(comm hpc.Comm, peer int, m *localtrace.Message) error {
	c.wire = c.out.encode(c.wire[:0])
	c.out.reset()
	if err := comm.Send(peer, int(m.Tag), c.wire); err != nil {
		return fmt.Errorf("replay: SendInverse: %w", err)
	}
	return nil
}

// RecvInverse receives the partner's inverse message of the current
// message event (sent with SendInverse); its fields replace the incoming
// payload, where Get reads them.
func (c *Ctx) RecvInverse() error {
	comm, err := c.inverseComm()
	if err != nil {
		return fmt.Errorf("replay: RecvInverse: %w", err)
	}
	return c.recvInverse(comm, c.Peer, c.msg)
}

func (c *Ctx) recvInverse(comm hpc.Comm, peer int, m *localtrace.Message) error {
	data, err := comm.Recv(peer, int(m.Tag))
	if err != nil {
		return fmt.Errorf("replay: RecvInverse: %w", err)
	}
	if err := c.in.decode(data); err != nil {
		return fmt.Errorf("replay: inverse message from rank %d of communicator %d, tag %d: %w", peer, m.Comm, m.Tag, err)
	}
	return nil
}

// SendInverseOf is SendInverse for the message of event i (a send or
// receive event of this location) at any event of a pass with inverse
// communicators: at the completion of a non-blocking send, say, for the
// message its request started. It goes to that message's partner, with
// its communicator and tag.
func (c *Ctx) SendInverseOf(i int) error {
	m, comm, err := c.inverseOf(i)
	if err != nil {
		return fmt.Errorf("replay: SendInverseOf: %w", err)
	}
	return c.sendInverse(comm, int(m.Peer), &m)
}

// RecvInverseOf is RecvInverse for the message of event i, the
// counterpart of the partner's SendInverseOf (or SendInverse).
func (c *Ctx) RecvInverseOf(i int) error {
	m, comm, err := c.inverseOf(i)
	if err != nil {
		return fmt.Errorf("replay: RecvInverseOf: %w", err)
	}
	return c.recvInverse(comm, int(m.Peer), &m)
}

func (c *Ctx) inverseOf(i int) (localtrace.Message, hpc.Comm, error) {
	switch c.Trace.Events[i].Kind {
	case localtrace.KindSend, localtrace.KindIsend, localtrace.KindRecv, localtrace.KindIrecv:
	default:
		return localtrace.Message{}, nil, fmt.Errorf("event %d (%v) is no message", i, c.Trace.Events[i].Kind)
	}
	m := c.Trace.Message(i)
	comm, err := c.Loc.inverseComm(c.Pass, m.Comm)
	return m, comm, err
}

// WorldAllreduceSum returns on every location the element-wise sum of
// the locations' v, over all ranks, in rank order. Every location must
// call it at the same point of its replay (at Finished of a pass, say)
// with vectors of the same length; the result is shared: read it only.
func (c *Ctx) WorldAllreduceSum(v []float64) ([]float64, error) { return c.worldAllreduce(hpc.Sum, v) }

// WorldAllreduceMax is WorldAllreduceSum with the element-wise maximum.
func (c *Ctx) WorldAllreduceMax(v []float64) ([]float64, error) { return c.worldAllreduce(hpc.Max, v) }

func (c *Ctx) worldAllreduce(op hpc.Op, v []float64) ([]float64, error) {
	out, err := c.Loc.World.AllreduceFloats(op, v)
	if err != nil {
		return nil, fmt.Errorf("replay: WorldAllreduce%v: %w", op, err)
	}
	return out, nil
}

// SkipPass tells the replay not to run pass p, a later pass than the
// current one, though its topics have subscribers: what it would do
// turned out to be nothing. Every rank must decide alike (on a world-wide
// reduction, say), since a pass's communicators are built collectively.
func (c *Ctx) SkipPass(p Pass) {
	if c.Loc.skip == nil {
		c.Loc.skip = map[Pass]bool{}
	}
	c.Loc.skip[p] = true
}

func (c *Ctx) inverseComm() (hpc.Comm, error) {
	if c.msg == nil {
		return nil, fmt.Errorf("event %d (%v) is no message of the %v pass", c.Index, c.Event().Kind, c.Pass)
	}
	return c.Loc.inverseComm(c.Pass, c.msg.Comm)
}
