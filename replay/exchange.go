package replay

import (
	"fmt"
	"math"
	"slices"

	"scout/hpc"
	"scout/localtrace"
)

// The forward pass's wait-state exchange of a collective operation
// needs, from every member, only what its own trace holds: when it began
// and ended the operation and whether it sent or received data. Each
// instance is therefore computed in rounds of MAXLOC reductions over the
// communicator, a MINLOC entry as the MAXLOC of its negation (exact,
// with the same ties) and a broadcast of the root's value as the MAXLOC
// of that value against −∞ from the others; a later round's entries
// depend only on earlier rounds' results. A pass that ships ahead runs
// the rounds of a window of a communicator's instances together when
// its walk reaches the window's first one, one reduction per round over
// the vector of the window's entries (collWindow); a pass that replays
// message by message runs them at each instance. The results are the
// same either way.

// Rounds of the exchange, in the order they run.
const (
	roundFirst = iota // Latest and EarliestEnd, or the root's data
	roundScan         // the prefix MAXLOC of scans (a Scan, not an Allreduce)
	roundSecond
	roundThird
	numRounds
)

// exchange is the wait-state exchange of one collective instance of
// this location: its data, and its results once done.
type exchange struct {
	event      int // the CollEnd event
	class      CollClass
	me, root   int
	sent, recv bool
	data       uint64 // rooted: the bytes sent (1-to-N) or received (N-to-1)
	// wants[k]: the instance has entries in round k
	wants [numRounds]bool
	// results: the Ctx's Coll, Idle and Completion, and the topic to
	// publish (0: none)
	coll             CollInfo
	idle, completion float64
	topic            Topic
	// ccv: the latest begin to check for a clock-condition violation
	ccv    float64
	hasCCV bool
	// synced: the number of the instance among its communicator's
	// N-to-N and 1-to-N ones with a topic (its bit in the members'
	// synced flags), -1 for none
	synced int
}

// synced reports whether the collective synchronised this member, as
// the root-cause analysis counts it: an N-to-N synchpoint, a 1-to-N
// member (not the root) that waited for the root.
func (x *exchange) isSynced() bool {
	return x.coll.SyncPoint && !(x.class == CollOneToN && x.me == x.root)
}

// syncedLists exchanges, after the rounds, which members every N-to-N
// and 1-to-N instance of xs with a topic synchronised (each member's
// flags packed 32 to a float64, exact, gathered in rank order) and
// returns, by the instances' synced numbers, the world ranks of those
// members. The lists are made once per window of a communicator's
// instances in this process, by the first member there
// (hpc.Comm.Shared), and shared by all: the
// gathered flags have ranks × instances bits for every member, but each
// member reading all of them would cost ranks² per communicator.
func syncedLists(env *Env, id uint32, window int, comm hpc.Comm, xs []*exchange) ([][]int, error) {
	n := 0
	for _, x := range xs {
		x.synced = -1
		if x.topic == FwNxN || x.topic == FwOneToN {
			x.synced = n
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	words := (n + 31) / 32
	mine := make([]float64, words)
	for _, x := range xs {
		if x.synced >= 0 && x.isSynced() {
			w := &mine[x.synced/32]
			*w = float64(uint32(*w) | 1<<(x.synced%32))
		}
	}
	all, err := comm.AllreduceFloats(hpc.Concat, mine)
	if err != nil {
		return nil, err
	}
	size := comm.Size()
	if len(all) != words*size {
		return nil, fmt.Errorf("replay: the synchronised members over %s: %d words, want %d", comm.Name(), len(all), words*size)
	}
	members := env.CommMembers[id]
	if len(members) != size {
		return nil, fmt.Errorf("replay: communicator %d has %d members, its replay %d", id, len(members), size)
	}
	// Every member here passed the previous window's collectives to
	// get here: its lists can go (a member holding them keeps them).
	// Kept for the communicator's life, a window's lists of 4 096
	// instances took 100 kB each (2.4 MB for the HPCG-like bench trace).
	if window > 0 {
		comm.Unshare(syncedKey{window - 1})
	}
	// (the gathered flags are valid until this member's next collective
	// on comm, and the first member here reads them before any other
	// member leaves for that collective)
	lists := comm.Shared(syncedKey{window}, func() any {
		lists := make([][]int, n)
		for k := range n {
			w, bit := k/32, uint32(1)<<(k%32)
			synced := func(m int) bool { return uint32(all[m*words+w])&bit != 0 }
			cnt, h := 0, NewHash()
			for m := range size {
				if synced(m) {
					cnt++
					h = h.Add(members[m])
				}
			}
			if cnt == size {
				lists[k] = members
				continue
			}
			lists[k] = env.InternFunc(uint64(h), func(l []int) bool {
				if len(l) != cnt {
					return false
				}
				j := 0
				for m := range size {
					if synced(m) {
						if l[j] != members[m] {
							return false
						}
						j++
					}
				}
				return true
			}, func() []int {
				l := make([]int, 0, cnt)
				for m := range size {
					if synced(m) {
						l = append(l, members[m])
					}
				}
				return l
			})
		}
		return lists
	}).([][]int)
	if len(lists) != n {
		return nil, fmt.Errorf("replay: %d N-to-N and 1-to-N collectives on communicator %d, another member of this process had %d", n, id, len(lists))
	}
	return lists, nil
}

// syncedKey keys the synced lists of a window of a communicator's
// instances (hpc.Comm.Shared).
type syncedKey struct{ window int }

// newExchange prepares the exchange of collective end event i (an
// analysed class on a communicator of more than one member) for member
// me of size members.
func newExchange(t *localtrace.Trace, i int, class CollClass, begin float64, me, size int) (*exchange, error) {
	x := &exchange{}
	return x, x.init(t, i, class, begin, me, size)
}

// init makes x the exchange of collective end event i (newExchange).
func (x *exchange) init(t *localtrace.Trace, i int, class CollClass, begin float64, me, size int) error {
	info := t.Collective(i)
	*x = exchange{synced: -1, event: i, class: class, me: me, root: int(info.Root), sent: info.Sent > 0, recv: info.Received > 0, data: info.Sent}
	if class == CollNToOne {
		x.data = info.Received
	}
	x.coll.My, x.coll.End = TimeRank{Time: begin, Rank: me}, t.Time(i)
	switch class {
	case CollOneToN, CollNToOne:
		if x.root < 0 || x.root >= size {
			return fmt.Errorf("collective root %d out of range [0, %d)", x.root, size)
		}
		x.wants[roundFirst] = true
	case CollBarrier:
		x.wants[roundFirst] = true
	case CollNxN:
		x.wants[roundFirst] = x.sent || x.recv
	case CollScan:
		x.wants[roundScan] = x.sent || x.recv
	}
	return nil
}

func maxEntry(t float64, rank int) TimeRank { return TimeRank{Time: t, Rank: rank} }
func minEntry(t float64, rank int) TimeRank { return TimeRank{Time: -t, Rank: rank} }
func minResult(v TimeRank) TimeRank         { return TimeRank{Time: -v.Time, Rank: v.Rank} }

// put appends the instance's entries of round k to v.
func (x *exchange) put(k int, v []TimeRank) []TimeRank {
	if !x.wants[k] {
		return v
	}
	ci := &x.coll
	begin, end, me := ci.My.Time, ci.End, x.me
	sentBegin := negInf // only senders can be late
	if x.sent {
		sentBegin = begin
	}
	switch {
	case k == roundFirst && (x.class == CollBarrier || x.class == CollNxN):
		return append(v, maxEntry(begin, me), minEntry(end, me))
	case k == roundFirst: // rooted: the root's data
		data, rb := negInf, negInf
		if me == x.root {
			data, rb = float64(x.data), begin
		}
		return append(v, maxEntry(data, me), maxEntry(rb, me))
	case k == roundScan:
		return append(v, maxEntry(sentBegin, me))
	case k == roundSecond && (x.class == CollNxN || x.class == CollNToOne):
		return append(v, maxEntry(sentBegin, me))
	case k == roundSecond: // 1-to-N: the earliest end of the waiting members
		return append(v, minEntry(x.endIf(x.recv && begin < ci.Root.Time), me))
	case k == roundThird:
		return append(v, minEntry(x.endIf(ci.SyncPoint), me))
	}
	return v
}

// endIf returns the own end if cond, +∞ (no end to take part) if not.
func (x *exchange) endIf(cond bool) float64 {
	if cond {
		return x.coll.End
	}
	return posInf
}

// take reads the instance's results of round k from res (the round's
// reduced entries from the instance's first on) and returns the rest.
func (x *exchange) take(k int, res []TimeRank) []TimeRank {
	if !x.wants[k] {
		return res
	}
	x.wants[k] = false
	ci := &x.coll
	begin, end, me := ci.My.Time, ci.End, x.me
	switch {
	case k == roundFirst && (x.class == CollBarrier || x.class == CollNxN):
		ci.Latest, ci.EarliestEnd = res[0], minResult(res[1])
		x.check(ci.Latest.Time)
		switch {
		case x.class == CollBarrier:
			ci.SyncPoint = true
			x.clamp()
			x.topic = FwBarrier
		case ci.EarliestEnd.Time > ci.Latest.Time:
			ci.SyncPoint = true
			x.clamp()
			x.topic = FwNxN
		default:
			// partial overlap: only senders can be late, only receivers wait
			x.wants[roundSecond], x.wants[roundThird] = true, true
		}
		return res[2:]
	case k == roundFirst: // rooted
		if res[0].Time == 0 {
			x.wants = [numRounds]bool{} // no data: no wait states, no topic
			return res[2:]
		}
		ci.Root = TimeRank{Time: res[1].Time, Rank: x.root}
		x.wants[roundSecond] = true
		x.wants[roundThird] = x.class == CollNToOne
		return res[2:]
	case k == roundScan:
		ci.Latest = res[0]
		ci.SyncPoint = begin < ci.Latest.Time
		x.check(ci.Latest.Time)
		x.idle = math.Max(0, math.Min(ci.Latest.Time, end)-begin)
		x.topic = FwScan
		return res[1:]
	case k == roundSecond && x.class == CollOneToN:
		rootBegin := ci.Root.Time
		waits := x.recv && begin < rootBegin
		ci.EarliestEnd = minResult(res[0])
		ci.SyncPoint = waits || (me == x.root && !math.IsInf(ci.EarliestEnd.Time, 1))
		x.check(rootBegin)
		if me != x.root {
			x.idle = math.Max(0, math.Min(rootBegin, end)-begin)
		}
		x.completion = math.Max(0, end-math.Max(ci.EarliestEnd.Time, rootBegin))
		x.topic = FwOneToN
		return res[1:]
	case k == roundSecond && x.class == CollNxN:
		ci.Latest = res[0]
		ci.SyncPoint = (x.recv && begin < ci.Latest.Time) || (x.sent && ci.Latest.Rank == me)
		return res[1:]
	case k == roundSecond: // N-to-1
		ci.Latest = res[0]
		ci.SyncPoint = ci.Root.Time < ci.Latest.Time && (me == x.root || me == ci.Latest.Rank)
		return res[1:]
	case k == roundThird && x.class == CollNxN:
		ci.EarliestEnd = minResult(res[0])
		if ci.SyncPoint {
			x.clamp()
		}
		x.topic = FwNxN
		return res[1:]
	case k == roundThird: // N-to-1
		ci.EarliestEnd = minResult(res[0])
		if me == x.root {
			x.check(ci.Latest.Time)
			x.idle = math.Max(0, math.Min(ci.Latest.Time, end)-begin)
		}
		x.topic = FwNToOne
		return res[1:]
	}
	return res
}

// check notes a partner's begin for the clock-condition check.
func (x *exchange) check(latest float64) { x.ccv, x.hasCCV = latest, true }

// clamp computes the wait and the completion from the exchange result.
func (x *exchange) clamp() {
	ci := &x.coll
	latest := math.Min(ci.Latest.Time, ci.End)
	earliestEnd := math.Max(ci.EarliestEnd.Time, latest)
	x.idle = math.Max(0, latest-ci.My.Time)
	x.completion = math.Max(0, ci.End-earliestEnd)
}

// reduce runs round k of the exchanges xs (all of one communicator, in
// trace order) as one reduction over comm, if any has entries in it.
func reduce(comm hpc.Comm, k int, xs []*exchange, buf []TimeRank) ([]TimeRank, error) {
	v := slices.Grow(buf[:0], 2*len(xs)) // at most two entries each: no copies
	for _, x := range xs {
		v = x.put(k, v)
	}
	if len(v) == 0 {
		return v, nil
	}
	var res []TimeRank
	var err error
	if k == roundScan {
		res, err = comm.Scan(hpc.MaxLoc, v)
	} else {
		res, err = comm.Allreduce(hpc.MaxLoc, v)
	}
	if err != nil {
		return v, err
	}
	if len(res) != len(v) {
		return v, fmt.Errorf("replay: the wait-state exchange over %s gave %d values, want %d", comm.Name(), len(res), len(v))
	}
	for _, x := range xs {
		res = x.take(k, res)
	}
	return v, nil
}

// runExchanges runs every round of the exchanges xs over comm.
func runExchanges(comm hpc.Comm, xs []*exchange, buf []TimeRank) ([]TimeRank, error) {
	var err error
	for k := range numRounds {
		if buf, err = reduce(comm, k, xs, buf); err != nil {
			return buf, err
		}
	}
	return buf, nil
}
