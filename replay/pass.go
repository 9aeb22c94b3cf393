package replay

import (
	"fmt"
	"slices"
	"sync"

	"scout/localtrace"
)

// Pass is one walk over every location's events, numbered in the order
// of the pass table (Forward, Backward, then the passes DefinePass
// adds), which is the order they run in, but for the early passes
// (PassSpec.Early), which run first.
type Pass uint8

// The built-in passes.
const (
	// Forward walks the events in time order; a message carries the
	// sender's fields to the receiver (Late Sender, wrong order,
	// collectives, message statistics).
	Forward Pass = iota
	// Backward walks them in reverse; a message carries the receiver's
	// fields back to the sender (Late Receiver).
	Backward
)

func (p Pass) String() string {
	if ps := passByID(p); ps != nil {
		return ps.spec.Name
	}
	return fmt.Sprintf("Pass(%d)", uint8(p))
}

// Order is the order in which a pass walks a location's events.
type Order uint8

// Walk orders.
const (
	TimeOrder    Order = iota // first event to last
	ReverseOrder              // last event to first
)

// Action is what a pass does at an event.
type Action uint8

// Actions of the pass steps.
const (
	// Publish publishes the step's Pre topic.
	Publish Action = iota + 1
	// Ship handles a point-to-point event (an MPI send that was not
	// cancelled, or an MPI receive) as the side whose data travels:
	// it publishes Pre, where callbacks Put fields, sends the outgoing
	// payload to the message partner over the pass's communicator
	// (same communicator and tag as the traced message), and publishes
	// Post.
	Ship
	// Take handles a point-to-point event as the side that learns: it
	// publishes Pre, receives the partner's payload (Get reads it), and
	// publishes Post.
	Take
	// Collective publishes Pre at the end of an MPI collective (not
	// at the pseudo collectives of handle management, see Counted),
	// where callbacks may call the Ctx's collective helpers.
	Collective
	// PublishSync publishes the step's Pre topic at a Leave of MPI_Init
	// or MPI_Finalize only (every one): for passes that synchronise
	// there and have nothing to do at other Leaves, which they then
	// skip without a call.
	PublishSync
	// syncLeave: a Leave; at the first MPI_Init and MPI_Finalize the
	// forward analysis's world-wide time exchange (FwInit,
	// FwFinalize); then Pre.
	syncLeave
	// waitStates: a collective's end; the forward analysis's wait-state
	// exchange (FwCollective, FwBarrier, FwNxN, ...).
	waitStates
)

// Step is what a pass does at the events of one kind.
type Step struct {
	Kind      localtrace.Kind
	Do        Action
	Pre, Post Topic // 0 for none
}

// PassSpec describes a pass: an entry of the pass table.
type PassSpec struct {
	Name  string
	Order Order
	// Inverse: the pass builds a second set of communicators, for
	// messages against its direction (Ctx.SendInverse, RecvInverse).
	Inverse bool
	// Topics are the engine topics the pass publishes: a subscriber to
	// one of them makes the pass run. A topic belongs to one pass.
	Topics []Topic
	// Steps say what the pass does at each event kind; kinds without
	// a step are skipped. A pass without steps visits no event: it
	// publishes each of its Topics once (Ctx.Index 0), between Started
	// and Finished, where its subscribers do all their work.
	Steps []Step
	// Early passes prepare the trace for the analysis (timestamp
	// correction, say): they run before every other pass, the built-in
	// ones included, in table order.
	Early bool
}

// pass is a compiled entry of the pass table.
type pass struct {
	id    Pass
	spec  PassSpec
	steps [256]step // by event kind
}

// event returns the index of the k-th event the pass walks among n.
func (p *pass) event(k, n int) int {
	if p.spec.Order == ReverseOrder {
		return n - 1 - k
	}
	return k
}

type step struct {
	do        Action
	pre, post Topic
}

// table is the pass table and the topics' names and passes.
type table struct {
	sync.Mutex
	passes []*pass
	names  []string // by topic
	owner  []int    // by topic: the pass publishing it, -1 for none
}

// passTable holds the built-in passes first (a package variable, so
// that it is ready before any other variable of the package calls
// DefinePass).
var passTable = newTable()

func newTable() *table {
	t := &table{names: slices.Clone(builtinTopicNames[:]), owner: slices.Repeat([]int{-1}, int(numTopics))}
	t.define(PassSpec{Name: "forward", Order: TimeOrder,
		Topics: []Topic{FwEnter, FwLeave, FwPreSend, FwPostSend, FwPreRecv, FwPostRecv, FwInit, FwFinalize,
			FwCollective, FwBarrier, FwNxN, FwOneToN, FwNToOne, FwScan, FwLockAcquire},
		Steps: []Step{
			{localtrace.KindEnter, Publish, FwEnter, 0},
			{localtrace.KindLeave, syncLeave, FwLeave, 0},
			{localtrace.KindSend, Ship, FwPreSend, FwPostSend},
			{localtrace.KindIsend, Ship, FwPreSend, FwPostSend},
			{localtrace.KindRecv, Take, FwPreRecv, FwPostRecv},
			{localtrace.KindIrecv, Take, FwPreRecv, FwPostRecv},
			{localtrace.KindCollEnd, waitStates, 0, 0},
			{localtrace.KindLockAcquire, Publish, FwLockAcquire, 0},
		}})
	t.define(PassSpec{Name: "backward", Order: ReverseOrder,
		Topics: []Topic{BwLeave, BwEnter, BwPreRecv, BwPostRecv, BwPreSend, BwPostSend, BwSendComplete},
		Steps: []Step{
			{localtrace.KindLeave, Publish, BwLeave, 0},
			{localtrace.KindEnter, Publish, BwEnter, 0},
			{localtrace.KindIsendComplete, Publish, BwSendComplete, 0},
			{localtrace.KindRecv, Ship, BwPreRecv, BwPostRecv},
			{localtrace.KindIrecv, Ship, BwPreRecv, BwPostRecv},
			{localtrace.KindSend, Take, BwPreSend, BwPostSend},
			{localtrace.KindIsend, Take, BwPreSend, BwPostSend},
		}})
	return t
}

// isMessageKind reports whether events of kind k are point-to-point
// messages.
func isMessageKind(k localtrace.Kind) bool {
	switch k {
	case localtrace.KindSend, localtrace.KindIsend, localtrace.KindRecv, localtrace.KindIrecv:
		return true
	}
	return false
}

// DefinePass appends a pass to the pass table and returns its number.
// Call it when a package initializes (from a package variable), so that
// every process of a hosted run has the same table. It panics if the
// spec is inconsistent: a step's topic not among its Topics, a topic of
// another pass, two steps for one kind, Ship or Take at an event that
// is no message, Collective elsewhere than at CollEnd.
func DefinePass(spec PassSpec) Pass {
	passTable.Lock()
	defer passTable.Unlock()
	return passTable.define(spec)
}

func (t *table) define(spec PassSpec) Pass {
	p := &pass{id: Pass(len(t.passes)), spec: spec}
	fail := func(format string, args ...any) {
		panic(fmt.Sprintf("replay: DefinePass(%s): ", spec.Name) + fmt.Sprintf(format, args...))
	}
	if len(t.passes) > 255 {
		fail("too many passes")
	}
	if spec.Order != TimeOrder && spec.Order != ReverseOrder {
		fail("bad order %d", spec.Order)
	}
	for _, tp := range spec.Topics {
		if tp == 0 || tp == Finished || tp == Started || int(tp) >= len(t.owner) {
			fail("topic %d is no topic of a pass", tp)
		}
		if o := t.owner[tp]; o >= 0 {
			fail("topic %s belongs to pass %s", t.names[tp], t.passes[o].spec.Name)
		}
	}
	for _, s := range spec.Steps {
		for _, tp := range []Topic{s.Pre, s.Post} {
			if tp != 0 && !slices.Contains(spec.Topics, tp) {
				fail("step at %v publishes topic %d, not among the pass's topics", s.Kind, tp)
			}
		}
		switch {
		case s.Do < Publish || s.Do > waitStates:
			fail("step at %v: bad action %d", s.Kind, s.Do)
		case (s.Do == Ship || s.Do == Take) && !isMessageKind(s.Kind):
			fail("step at %v: %d needs a message event", s.Kind, s.Do)
		case (s.Do == Collective || s.Do == waitStates) && s.Kind != localtrace.KindCollEnd:
			fail("step at %v: a collective step needs CollEnd", s.Kind)
		case p.steps[s.Kind].do != 0:
			fail("two steps at %v", s.Kind)
		}
		p.steps[s.Kind] = step{do: s.Do, pre: s.Pre, post: s.Post}
	}
	for _, tp := range spec.Topics {
		t.owner[tp] = int(p.id)
	}
	p.spec.Topics = slices.Clone(spec.Topics)
	p.spec.Steps = slices.Clone(spec.Steps)
	t.passes = append(t.passes, p)
	return p.id
}

// NewTopic makes an engine topic for a pass to be defined (DefinePass).
// Like DefinePass, call it when a package initializes.
func NewTopic(name string) Topic {
	t := passTable
	t.Lock()
	defer t.Unlock()
	if len(t.names) >= 1<<16-1 {
		panic("replay: NewTopic(" + name + "): too many topics")
	}
	t.names = append(t.names, name)
	t.owner = append(t.owner, -1)
	return Topic(len(t.names) - 1)
}

func (t Topic) String() string {
	passTable.Lock()
	defer passTable.Unlock()
	if int(t) < len(passTable.names) {
		return passTable.names[t]
	}
	return fmt.Sprintf("Topic(%d)", uint16(t))
}

// passes returns the pass table.
func passes() []*pass {
	passTable.Lock()
	defer passTable.Unlock()
	return passTable.passes
}

// runOrder returns the passes in the order they run: the early passes,
// then the others, each in table order.
func runOrder() []*pass {
	ps := passes()
	out := make([]*pass, 0, len(ps))
	for _, early := range []bool{true, false} {
		for _, p := range ps {
			if p.spec.Early == early {
				out = append(out, p)
			}
		}
	}
	return out
}

// passByID returns pass p, nil for none.
func passByID(p Pass) *pass {
	ps := passes()
	if int(p) < len(ps) {
		return ps[p]
	}
	return nil
}
