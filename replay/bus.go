// Package replay re-enacts the communication of a traced MPI program:
// each location walks its events forward (and backward) and, at every
// message and collective operation, exchanges with its partners the event
// data the patterns need, over a Comm of the same kind as the original.
//
// Patterns plug in through a publish/subscribe bus. Trace events and the
// communication handler's derived events are topics; patterns subscribe
// to them and may publish more specific compound events (successive
// refinement: Late Sender is published once, and Wrong Order refines it).
// Callbacks run synchronously in subscription order, depth first.
package replay

// Topic is a kind of event on the bus.
type Topic uint8

// Topics. Fw* topics are published in the forward replay, Bw* in the
// backward replay.
const (
	FwEnter             Topic = iota // an Enter event
	FwLeave                          // a Leave event
	FwPreSend                        // before a message is shipped: add payload roles
	FwPostSend                       // after a message was shipped
	FwPreRecv                        // before a message is received
	FwPostRecv                       // after a message was received: Remote holds its roles
	FwInit                           // Leave of MPI_Init: Coll, Idle, Completion set
	FwFinalize                       // Leave of MPI_Finalize: Coll, Idle, Completion set
	FwCollective                     // any analysed collective end (counts)
	FwBarrier                        // MPI_Barrier end; Idle, Completion set
	FwNxN                            // N-to-N collective end; Idle, Completion set when a sync point
	FwOneToN                         // 1-to-N collective end; Idle set
	FwNToOne                         // N-to-1 collective end; Idle set on the root
	FwScan                           // scan end; Idle set
	LateSender                       // compound: a Late Sender instance; Idle set
	LateSenderCandidate              // compound: a new maximum Late Sender wait in a multi-wait
	LateSenderWO                     // compound: Late Sender in wrong order; Idle, WrongOrder set
	BwLeave                          // backward: a Leave event
	BwEnter                          // backward: an Enter event
	BwPreRecv                        // backward: receiver adds roles before shipping to the sender
	BwPreSend                        // backward: sender, before receiving the receiver's roles
	BwPostSend                       // backward: sender, Remote holds the receiver's roles
	BwSendComplete                   // backward: a send completion event (IsendComplete)
	LateReceiver                     // compound: a Late Receiver instance; Idle set
	Finished                         // end of a replay pass
	numTopics
)

// Handler is a bus callback; an error stops the replay.
type Handler func(c *Ctx) error

// Bus dispatches topics to their subscribers in subscription order.
type Bus struct {
	subs [numTopics][]Handler
}

// On subscribes h to topic t.
func (b *Bus) On(t Topic, h Handler) { b.subs[t] = append(b.subs[t], h) }

// Publish runs the subscribers of t with c.
func (b *Bus) Publish(t Topic, c *Ctx) error {
	for _, h := range b.subs[t] {
		if err := h(c); err != nil {
			return err
		}
	}
	return nil
}

// Has reports whether t has subscribers.
func (b *Bus) Has(t Topic) bool { return len(b.subs[t]) > 0 }
