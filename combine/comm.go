package combine

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// CommStats is the point-to-point traffic of an analysis: who sent how
// much to whom, and how large the messages were. The replay counts every
// message at its send (the pattern "communication matrix",
// patterns.CommCounts), as the metrics comms_send, bytes_sent and
// syncs_send count it: the sums of a sender's row are those metrics'
// totals over the sender's call paths. The report holds the sums of all
// locations (Report.Comm; nil for a report read from a CUBE file, which
// does not hold them). The methods accept a nil *CommStats, which has no
// traffic.
type CommStats struct {
	// Pairs are the sender × receiver sums of the messages, by world
	// rank, sorted by sender, then receiver; pairs without messages (of
	// any size) are absent (memory follows the pairs that talk, not
	// ranks²).
	Pairs []CommPair
	// Sizes counts the messages by size: Sizes[0] those of 0 bytes,
	// Sizes[k] (k ≥ 1) those of 2^(k−1) to 2^k − 1 bytes (patterns.CommSizeBin);
	// trailing empty bins are absent.
	Sizes []uint64
}

// CommPair is the traffic from one rank to another.
type CommPair struct {
	From, To int32  // world ranks
	Messages uint64 // number of messages of at least one byte (comms_send)
	Bytes    uint64 // their payload in bytes (bytes_sent)
	Syncs    uint64 // number of messages of 0 bytes (syncs_send)
}

// CommVolume is an amount of traffic: messages of at least one byte,
// their bytes, and messages of 0 bytes.
type CommVolume struct {
	Messages, Bytes, Syncs uint64
}

// add adds the traffic of p to v.
func (v *CommVolume) add(p CommPair) {
	v.Messages += p.Messages
	v.Bytes += p.Bytes
	v.Syncs += p.Syncs
}

// CommTotal is the traffic of one rank: what it sent and what it
// received (as the receivers' bytes_rcvd, comms_recv and syncs_recv
// count it when every message sent was received).
type CommTotal struct {
	Sent, Received CommVolume
}

// SizeRange is the smallest and the largest message size, in bytes, of
// bin k of CommStats.Sizes (patterns.CommSizeBin; 0 ≤ k ≤ 64): 0 and 0
// for bin 0, 2^(k−1) and 2^k − 1 otherwise.
func SizeRange(k int) (lo, hi uint64) {
	if k <= 0 {
		return 0, 0
	}
	lo = 1 << (k - 1)
	return lo, lo<<1 - 1 // for k = 64, wraps to 2^64 − 1
}

// comparePairs orders pairs by sender, then receiver.
func comparePairs(a, b CommPair) int {
	if c := cmp.Compare(a.From, b.From); c != 0 {
		return c
	}
	return cmp.Compare(a.To, b.To)
}

// Add adds the traffic of o to c (o is left alone): the pairs of both,
// the sums of the pairs both have, the sums of the size bins. It is
// linear in the pairs of both; when o's pairs all come after c's (the
// locations of an analysis added in rank order), in o's alone.
func (c *CommStats) Add(o *CommStats) {
	if o == nil {
		return
	}
	if len(c.Sizes) < len(o.Sizes) {
		c.Sizes = append(c.Sizes, make([]uint64, len(o.Sizes)-len(c.Sizes))...)
	}
	for k, n := range o.Sizes {
		c.Sizes[k] += n
	}
	switch {
	case len(o.Pairs) == 0:
	case len(c.Pairs) == 0 || comparePairs(c.Pairs[len(c.Pairs)-1], o.Pairs[0]) < 0:
		c.Pairs = append(c.Pairs, o.Pairs...)
	default:
		merged := make([]CommPair, 0, len(c.Pairs)+len(o.Pairs))
		a, b := c.Pairs, o.Pairs
		for len(a) > 0 && len(b) > 0 {
			switch d := comparePairs(a[0], b[0]); {
			case d < 0:
				merged, a = append(merged, a[0]), a[1:]
			case d > 0:
				merged, b = append(merged, b[0]), b[1:]
			default:
				p := a[0]
				p.Messages += b[0].Messages
				p.Bytes += b[0].Bytes
				p.Syncs += b[0].Syncs
				merged, a, b = append(merged, p), a[1:], b[1:]
			}
		}
		c.Pairs = append(append(merged, a...), b...)
	}
}

// Ranks is one more than the largest world rank that sent or received a
// message (0 without messages): the size of a dense view of the matrix.
func (c *CommStats) Ranks() int {
	n := int32(-1)
	if c != nil {
		for _, p := range c.Pairs {
			n = max(n, p.From, p.To)
		}
	}
	return int(n) + 1
}

// Row returns the pairs of sender from, by receiver (a sub-slice of
// c.Pairs; nil when from sent nothing).
func (c *CommStats) Row(from int32) []CommPair {
	if c == nil {
		return nil
	}
	lo, _ := slices.BinarySearchFunc(c.Pairs, from, func(p CommPair, r int32) int { return cmp.Compare(p.From, r) })
	hi := lo
	for hi < len(c.Pairs) && c.Pairs[hi].From == from {
		hi++
	}
	if lo == hi {
		return nil
	}
	return c.Pairs[lo:hi:hi]
}

// Totals returns the traffic of ranks 0 to n−1 (n at least c.Ranks() to
// see every rank): Totals(n)[r].Sent is the sum of r's row of the
// matrix, Received the sum of its column. Its memory is linear in n.
func (c *CommStats) Totals(n int) []CommTotal {
	out := make([]CommTotal, n)
	if c == nil {
		return out
	}
	for _, p := range c.Pairs {
		if int(p.From) < n && p.From >= 0 {
			out[p.From].Sent.add(p)
		}
		if int(p.To) < n && p.To >= 0 {
			out[p.To].Received.add(p)
		}
	}
	return out
}

// Total returns the traffic of all pairs.
func (c *CommStats) Total() CommVolume {
	var v CommVolume
	if c != nil {
		for _, p := range c.Pairs {
			v.add(p)
		}
	}
	return v
}

// Coarsen returns the matrix of blocks of size consecutive ranks (size
// ≥ 1): the traffic from the ranks b·size to (b+1)·size − 1 to the ranks
// of block b' is pair (b, b'), the sum of theirs. A view of a matrix too
// large to show rank by rank (the sizes histogram is the same).
func (c *CommStats) Coarsen(size int) *CommStats {
	if c == nil {
		return nil
	}
	if size <= 1 {
		return &CommStats{Pairs: slices.Clone(c.Pairs), Sizes: slices.Clone(c.Sizes)}
	}
	out := &CommStats{Sizes: slices.Clone(c.Sizes)}
	s := int32(size)
	for _, p := range c.Pairs {
		p.From, p.To = p.From/s, p.To/s
		// a block row's pairs come from several rows: collect them,
		// then sort and sum (the pairs stay sparse)
		out.Pairs = append(out.Pairs, p)
	}
	slices.SortStableFunc(out.Pairs, comparePairs)
	k := 0
	for _, p := range out.Pairs {
		if k > 0 && comparePairs(out.Pairs[k-1], p) == 0 {
			q := &out.Pairs[k-1]
			q.Messages += p.Messages
			q.Bytes += p.Bytes
			q.Syncs += p.Syncs
			continue
		}
		out.Pairs[k] = p
		k++
	}
	out.Pairs = slices.Clip(out.Pairs[:k])
	return out
}

// WriteCommCSV writes the communication matrix as CSV: the header
//
//	from,to,messages,bytes,syncs
//
// then one row per pair of ranks that exchanged messages, sorted by
// sender, then receiver: the world ranks of sender and receiver, the
// number of messages of at least one byte (comms_send), their bytes
// (bytes_sent) and the number of messages of 0 bytes (syncs_send).
// Ranks without messages have no rows; a nil c writes the header alone.
func WriteCommCSV(w io.Writer, c *CommStats) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("from,to,messages,bytes,syncs\n")
	var b []byte
	if c != nil {
		for _, p := range c.Pairs {
			b = strconv.AppendInt(b[:0], int64(p.From), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(p.To), 10)
			b = append(b, ',')
			b = strconv.AppendUint(b, p.Messages, 10)
			b = append(b, ',')
			b = strconv.AppendUint(b, p.Bytes, 10)
			b = append(b, ',')
			b = strconv.AppendUint(b, p.Syncs, 10)
			b = append(b, '\n')
			bw.Write(b)
		}
	}
	return bw.Flush()
}

// WriteSizeCSV writes the message-size histogram as CSV: the header
//
//	min_bytes,max_bytes,messages
//
// then one row per size bin, from bin 0 (messages of 0 bytes: 0,0) up
// to the bin of the largest message: the bin's smallest and largest size
// in bytes (powers of two: 1,1 then 2,3 then 4,7 …; SizeRange) and the
// number of messages (of any size, 0 bytes included) in it, 0 for an
// empty bin. The messages sum to the number of point-to-point messages
// sent (comms_send plus syncs_send). A nil c writes the header alone.
func WriteSizeCSV(w io.Writer, c *CommStats) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("min_bytes,max_bytes,messages\n")
	if c != nil {
		for k, n := range c.Sizes {
			lo, hi := SizeRange(k)
			fmt.Fprintf(bw, "%d,%d,%d\n", lo, hi, n)
		}
	}
	return bw.Flush()
}
