package replay

import (
	"fmt"
	"reflect"
	"sync/atomic"
)

// Topic is a trace event the engine publishes in one pass (0: none).
type Topic uint16

// Engine topics of the built-in passes. Fw* topics are published in the
// forward pass, Bw* in the backward pass, Started at the start and
// Finished at the end of every pass (Ctx.Pass tells which; Ctx.Index is
// no event there); NewTopic makes the topics of new passes.
const (
	FwEnter        Topic = iota + 1 // an Enter event
	FwLeave                         // a Leave event
	FwPreSend                       // before a message is shipped: Put fields
	FwPostSend                      // after a message was shipped
	FwPreRecv                       // before a message is received
	FwPostRecv                      // after a message was received: Get reads its fields
	FwInit                          // Leave of MPI_Init: Coll, Idle, Completion set
	FwFinalize                      // Leave of MPI_Finalize: Coll, Idle, Completion set
	FwCollective                    // any analysed collective end (counts)
	FwBarrier                       // MPI_Barrier end; Idle, Completion set
	FwNxN                           // N-to-N collective end; Idle, Completion set when a sync point
	FwOneToN                        // 1-to-N collective end; Idle set
	FwNToOne                        // N-to-1 collective end; Idle set on the root
	FwScan                          // scan end; Idle set
	FwLockAcquire                   // a thread acquired a lock (LockAcquire event)
	BwLeave                         // backward: a Leave event
	BwEnter                         // backward: an Enter event
	BwPreRecv                       // backward: receiver, Put fields before shipping them to the sender
	BwPostRecv                      // backward: receiver, after shipping (inverse messages)
	BwPreSend                       // backward: sender, before receiving the receiver's fields
	BwPostSend                      // backward: sender, Get reads the receiver's fields
	BwSendComplete                  // backward: a send completion event (IsendComplete)
	Finished                        // end of a pass
	Started                         // start of a pass, before its first event
	numTopics
)

var builtinTopicNames = [numTopics]string{"", "FwEnter", "FwLeave", "FwPreSend", "FwPostSend", "FwPreRecv",
	"FwPostRecv", "FwInit", "FwFinalize", "FwCollective", "FwBarrier", "FwNxN", "FwOneToN", "FwNToOne", "FwScan",
	"FwLockAcquire", "BwLeave", "BwEnter", "BwPreRecv", "BwPostRecv", "BwPreSend", "BwPostSend", "BwSendComplete", "Finished", "Started"}

// Handler is a bus callback; an error stops the replay.
type Handler func(c *Ctx) error

// Event is a compound event that patterns publish, with a payload of
// type T (a Late Sender instance, say).
type Event[T any] struct {
	id   int
	name string
}

// events counts the Events made, which number them.
var events atomic.Int32

// NewEvent makes a compound event kind; patterns declare theirs once, as
// package variables.
func NewEvent[T any](name string) *Event[T] {
	return &Event[T]{id: int(events.Add(1)) - 1, name: name}
}

func (e *Event[T]) String() string { return e.name }

// Bus dispatches topics and events to their subscribers in subscription
// order.
type Bus struct {
	// Env is the environment of the replay, when known: patterns may
	// subscribe by what the trace defines (nil: subscribe as for any
	// trace).
	Env    *Env
	subs   [][]Handler               // by topic
	ahead  []int                     // by topic: subscribers by OnAhead
	events [][]func(*Ctx, any) error // by Event id
	shared map[reflect.Type]any      // Shared state, by type
	// synced: some subscriber reads Ctx.CollSynced (WantCollSynced)
	synced bool
}

// WantCollSynced tells the replay that a subscriber reads which members
// each collective synchronised (Ctx.CollSynced): the forward pass's
// exchange of each window of collectives then gathers them, every
// member's flags to every member, which costs O(members²) per
// communicator; without a reader it does not.
func (b *Bus) WantCollSynced() { b.synced = true }

// On subscribes h to topic t; the replay then runs t's pass.
func (b *Bus) On(t Topic, h Handler) {
	for len(b.subs) <= int(t) {
		b.subs = append(b.subs, nil)
	}
	b.subs[t] = append(b.subs[t], h)
}

// Publish runs the subscribers of t with c.
func (b *Bus) Publish(t Topic, c *Ctx) error {
	if int(t) >= len(b.subs) {
		return nil
	}
	for _, h := range b.subs[t] {
		if err := h(c); err != nil {
			return err
		}
	}
	return nil
}

// Has reports whether t has subscribers.
func (b *Bus) Has(t Topic) bool { return int(t) < len(b.subs) && len(b.subs[t]) > 0 }

// Runs reports whether the replay runs pass p: whether some engine topic
// of p has subscribers.
func (b *Bus) Runs(p Pass) bool {
	ps := passByID(p)
	if ps == nil {
		return false
	}
	for _, t := range ps.spec.Topics {
		if b.Has(t) {
			return true
		}
	}
	return false
}

// Shared returns the state of type T that the patterns registering on b
// share (machinery that several patterns build on, such as the
// synchronization points of the root-cause analysis), made by mk at the
// first call: the first pattern that needs it makes it and subscribes
// it, the others find it. Like all pattern state it belongs to the
// replay of one location.
func Shared[T any](b *Bus, mk func() *T) *T {
	key := reflect.TypeFor[T]()
	if v, ok := b.shared[key]; ok {
		return v.(*T)
	}
	if b.shared == nil {
		b.shared = map[reflect.Type]any{}
	}
	v := mk()
	b.shared[key] = v
	return v
}

// Subscribe subscribes h to event e.
func Subscribe[T any](b *Bus, e *Event[T], h func(c *Ctx, v *T) error) {
	for len(b.events) <= e.id {
		b.events = append(b.events, nil)
	}
	b.events[e.id] = append(b.events[e.id], func(c *Ctx, v any) error {
		p, ok := v.(*T)
		if !ok {
			return fmt.Errorf("replay: event %s carries %T", e.name, v)
		}
		return h(c, p)
	})
}

// Emit runs the subscribers of event e with c and the payload v, which
// they may read during the call only.
func Emit[T any](b *Bus, e *Event[T], c *Ctx, v *T) error {
	if e.id >= len(b.events) {
		return nil
	}
	for _, h := range b.events[e.id] {
		if err := h(c, v); err != nil {
			return err
		}
	}
	return nil
}
