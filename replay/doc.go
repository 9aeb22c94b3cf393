// Package replay re-enacts the communication of a traced MPI program:
// each location walks its events in passes and, at every message and
// collective operation, exchanges with its partners the event data the
// patterns need, over communicators of the same shape as the original.
//
// # Bus, topics and events
//
// Patterns plug in through a publish/subscribe bus. The engine publishes
// trace events as topics of the pass that walks them (Topic); patterns
// subscribe to them (Bus.On) and may publish compound events of their
// own, with a typed payload (Event), that other patterns refine
// (successive refinement: Late Sender is published once, and Wrong Order
// refines it). Callbacks run synchronously in subscription order, depth
// first, with the Ctx of the current event.
//
// # Passes
//
// The passes are data: a table of entries (PassSpec) giving each its
// name, its walk order (TimeOrder or ReverseOrder), its topics, whether
// it has inverse communicators, and its steps: what it does at each
// event kind (Publish a topic; Ship or Take a message; Collective).
// One walker runs every pass. A replay runs only the passes whose
// topics some pattern subscribed to (Bus.Runs), in table order, each
// with communicators of its own built when it starts. The built-in
// passes are Forward (messages carry the sender's fields to the
// receiver; the collective wait-state exchange) and Backward (messages
// carry the receiver's fields to the sender). A new pass is one
// DefinePass call and its topics (NewTopic), declared as package
// variables:
//
//	var (
//		BwcRecv = replay.NewTopic("BwcRecv")
//		BwcSend = replay.NewTopic("BwcSend")
//		Bwc     = replay.DefinePass(replay.PassSpec{
//			Name: "bwc", Order: replay.ReverseOrder, Inverse: true,
//			Topics: []replay.Topic{BwcRecv, BwcSend},
//			Steps: []replay.Step{
//				{Kind: localtrace.KindRecv, Do: replay.Ship, Pre: BwcRecv},
//				{Kind: localtrace.KindSend, Do: replay.Take, Post: BwcSend},
//			}})
//	)
//
// # Fields
//
// A message carries the fields its sender put: typed values declared
// once with a codec (NewField), put in a callback before the message
// leaves (Put) and read in a callback after it arrived (Get). The wire
// form of a message is its fields, each as id, length and encoding;
// payload buffers are reused, so a message allocates nothing in steady
// state, and a malformed payload is an error (ErrPayload). With the
// pass above:
//
//	var Wait = replay.NewField("wait", replay.Float64Codec)
//
//	bus.On(BwcRecv, func(c *replay.Ctx) error {
//		replay.Put(c, Wait, waitOf(c))
//		return nil
//	})
//	bus.On(BwcSend, func(c *replay.Ctx) error {
//		if w, ok := replay.Get(c, Wait); ok {
//			... // the receiver's wait time, at the sender
//		}
//		return nil
//	})
//
// # Shipping ahead and skipped messages
//
// A pass whose shipped fields depend only on the shipping location's
// own events and on earlier passes' results ships ahead: it runs the Pre
// callbacks of its Ship steps a stretch of events (tens of thousands)
// ahead of its walk and sends each partner the stretch's payloads in one
// message, from which the partner's Take steps read, so that no location
// waits for another's walk message by message, and none holds more than
// what its partners shipped ahead of its own walk (ahead.go). Patterns
// declare such callbacks with Bus.OnAhead; a plain On subscriber of a
// Ship step's Pre topic keeps the pass message by message. The forward
// pass's wait-state exchange of the collectives runs a window of a
// communicator's instances (thousands) at a time, in a few reductions
// over all of them, when the walk reaches the window (exchange.go). A
// message that both sides
// know carries nothing in a pass (its receive was no wait state, say)
// is skipped by a Pre callback on each side (Ctx.SkipMessage).
//
// # Inverse messages and collectives
//
// Data that goes against a pass's direction (in a backward pass, from
// the sender to the receiver) travels as inverse messages, over a second
// set of communicators (PassSpec.Inverse) so that the two directions
// never match each other's messages: in a callback of a message step,
// one side puts fields and calls Ctx.SendInverse, the other calls
// Ctx.RecvInverse and gets them. Patterns decide which messages have
// one, alike on both sides; a misuse that would hang ends in
// hpc.ErrDeadlock. At a collective's end (a Collective step) the Ctx
// offers the collectives the analyses need over the collective's
// communicator: BcastFields (the fields of one member, the delayer say,
// to all), ReduceSum and AllreduceSum of float vectors (added in rank
// order: bit-identical in every placement), and AllreduceMax (of small
// integers or flags).
package replay
