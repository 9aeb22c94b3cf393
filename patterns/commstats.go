package patterns

import (
	"cmp"
	"math/bits"
	"slices"

	"scout/replay"
)

// The communication matrix and the message-size histogram.
//
//	root:        a send event (sender)
//	severity:    per receiver (its world rank: the send's communicator
//	             rank mapped through the communicator's members), the
//	             messages of at least one byte and their bytes (as
//	             comms_send and bytes_sent count them) and the messages
//	             of 0 bytes (as syncs_send counts them); per size bin
//	             (CommSizeBin), the messages of that size
//	attribution: the sending location's rank, not a call path: the
//	             pattern computes no metric of the catalog; its result
//	             is CommCountsOf(bus), which the analysis merges into
//	             combine.Report.Comm
//
// Every send of the forward pass counts (replay.FwPreSend, where the
// message statistics count it), so that the sums of a sender's row of
// the matrix are its comms_send, bytes_sent and syncs_send over all call
// paths, and the histogram counts every message once. The cost is one
// map look-up per send (none when a location sends to the same peer as
// before), and the memory one entry per peer the location sends to.
func registerCommStats(bus *replay.Bus) {
	cc := commCounts(bus)
	cc.on = true
	bus.OnAhead(replay.FwPreSend, func(c *replay.Ctx) error {
		m := c.Trace.Message(c.Index)
		cc.add(int32(worldRank(c, m.Comm, int(m.Peer))), c.Trace.MessageBytes(c.Index))
		return nil
	})
}

// CommPeer is the traffic from one location to one receiver.
type CommPeer struct {
	To       int32  // world rank of the receiver
	Messages uint64 // messages of at least one byte (comms_send)
	Bytes    uint64 // their bytes (bytes_sent)
	Syncs    uint64 // messages of 0 bytes (syncs_send)
}

// CommSizeBins is the number of bins of the message-size histogram.
const CommSizeBins = 65

// CommSizeBin is the bin of the message-size histogram of a message of
// n bytes: 0 for 0 bytes, k ≥ 1 for 2^(k−1) to 2^k − 1 bytes.
func CommSizeBin(n uint64) int { return bits.Len64(n) }

// CommCounts is the point-to-point traffic of one location's sends: per
// receiver, and by message size.
type CommCounts struct {
	on    bool
	peers []CommPeer
	index map[int32]int32 // receiver → index in peers
	last  int32           // index of the last receiver, -1 before the first send
	sizes [CommSizeBins]uint64
}

// commCounts returns the traffic counter of the location bus replays.
func commCounts(bus *replay.Bus) *CommCounts {
	return replay.Shared(bus, func() *CommCounts { return &CommCounts{last: -1} })
}

// CommCountsOf returns the traffic the communication-matrix pattern
// counted in the replay of bus's location, or nil when the pattern was
// not registered on bus (a pattern table without it).
func CommCountsOf(bus *replay.Bus) *CommCounts {
	if cc := commCounts(bus); cc.on {
		return cc
	}
	return nil
}

// add counts a message of n bytes to world rank to.
func (cc *CommCounts) add(to int32, n uint64) {
	k := cc.last
	if k < 0 || cc.peers[k].To != to {
		var ok bool
		if k, ok = cc.index[to]; !ok {
			if cc.index == nil {
				cc.index = map[int32]int32{}
			}
			k = int32(len(cc.peers))
			cc.index[to] = k
			cc.peers = append(cc.peers, CommPeer{To: to})
		}
		cc.last = k
	}
	p := &cc.peers[k]
	if n == 0 {
		p.Syncs++
	} else {
		p.Messages++
		p.Bytes += n
	}
	cc.sizes[CommSizeBin(n)]++
}

// Peers returns the location's traffic per receiver, by receiver; call
// it after the replay.
func (cc *CommCounts) Peers() []CommPeer {
	out := slices.Clone(cc.peers)
	slices.SortFunc(out, func(a, b CommPeer) int { return cmp.Compare(a.To, b.To) })
	return out
}

// Sizes returns the message-size histogram of the location's sends:
// Sizes()[k] messages in bin k (CommSizeBin), up to the last non-empty
// bin (nil without messages).
func (cc *CommCounts) Sizes() []uint64 {
	n := len(cc.sizes)
	for n > 0 && cc.sizes[n-1] == 0 {
		n--
	}
	if n == 0 {
		return nil
	}
	return slices.Clone(cc.sizes[:n])
}
