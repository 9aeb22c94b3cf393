package patterns

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sort"

	"scout/internal/offheap"
	"scout/replay"
)

// synchpoints are the events where a location synchronised with others,
// each with its wait time, its completion time (the part of its region
// after the partner was done), its region's duration and the world ranks
// it synchronised with. They are registered in three passes, the first
// registration of an event winning:
//
//	forward: a Late Sender's receive (wait = idle, completion = leave of
//	         the receive region − leave of the send region, if positive;
//	         in MPI_Waitall/Waitsome only the largest idle of the call);
//	         a collective's end where the forward pass found a
//	         synchronisation (its idle and completion; the ranks: all of
//	         a barrier, the synchronising ranks of an N-to-N, the waiting
//	         non-roots at a 1-to-N's root and the root at those, the root
//	         and the latest sender of an N-to-1 at each other; never a
//	         scan); the Leave of MPI_Init (wait 0) and MPI_Finalize (its
//	         wait), with all ranks
//	backward: a send whose receive was a Late Sender (wait 0, completion
//	         = its leave − the receive's leave, if positive); a Late
//	         Receiver's send completion (wait = idle, completion = leave of
//	         the send completion region − leave of the receive request
//	         region when not positive, else 0: Scalasca's sign, kept)
//	fws:     the receive request of a message whose send completion is a
//	         Late Receiver (wait 0, completion as for the LS-matched send)
//
// A synchpoint with wait > 0 is a wait state.
type synchpoints struct {
	// sps and their events are in trace order; those registered since
	// (the pending ones) are in pendSps and pendEv, in the order of
	// registration, until order merges them in. A synchpoint's position
	// counts the ordered ones, then the pending ones. The arrays are
	// mappings of mem (internal/offheap) where they are large: a pass's
	// pending arrays are reserved at its first registration for every
	// event not yet registered, and cost memory only as they fill; the
	// first pass's become the ordered ones without a copy, and a later
	// pass's are merged into arrays of the joint length, the old ones
	// unmapped at once. (On the Go heap, in chunks, the synchpoints of
	// an 8 M-event trace were written twice in the forward pass and
	// counted towards the collector's goal.)
	sps     []synchpoint
	events  []int32
	pendSps []synchpoint
	pendEv  []int32
	mem     *offheap.Pages
	// Bit sets by event (made at the first add): all marks every
	// synchpoint's event, indexed those of the ordered part, and base[w]
	// counts the ordered synchpoints before event 64·w, so that an
	// ordered synchpoint's index is base plus the marks before it in its
	// word (0.3 bytes an event, where a dense index took 4).
	all, indexed []uint64
	base         []int32
	lists        [][]int // rank lists of synchpoints (read only, may be shared)
}

// synchpoint is one synchronisation of a location (24 bytes: a location
// of a ring may have one for every other event).
type synchpoint struct {
	wait, completion float64
	// one is the single partner's world rank, or what the synchpoint
	// synchronised with otherwise: withList (the ranks of many),
	// withAll (every rank), withThreads (the threads of the rank: a fork
	// or an OpenMP barrier, omprootcause.go; no rank)
	one  int32
	many int32 // 1 + index into synchpoints.lists of the world ranks synchronised with, 0 for none
}

// Values of synchpoint.one other than a rank.
const (
	withList    = -1
	withAll     = -2
	withThreads = -3
)

func (p *synchpoint) omp() bool { return p.one == withThreads }

// init prepares s; its mappings are unmapped when owner, which holds
// s, is unreachable.
func (s *synchpoints) init(owner *rootCause) {
	s.mem = new(offheap.Pages)
	runtime.AddCleanup(owner, (*offheap.Pages).Free, s.mem)
}

// reserveTable returns an empty table for up to n values, which a pass
// fills: a mapping of mem for all n where that is large
// (offheap.MinBytes; it costs memory only as it fills), else a small
// table on the heap that grows by append. (Reserved on the heap for all
// n, the tables of many small locations held several times what they
// needed: 16 384 ranks of ~116 events peaked 11 % higher; and on a
// platform without mappings a large table would be cleared, and so
// cost memory, at once.)
func reserveTable[T any](mem *offheap.Pages, n int) []T {
	if t := offheap.Make[T](mem, n); t != nil {
		return t
	}
	return make([]T, 0, min(n, 16))
}

// add registers event ev of the location c replays, synchronised with
// the world ranks many (if not nil) or as p says, unless it is
// registered already.
func (s *synchpoints) add(c *replay.Ctx, ev int, p synchpoint, many []int) {
	w, bit := ev>>6, uint64(1)<<(ev&63)
	if w >= len(s.all) {
		n := max(w+1, (len(c.Trace.Events)+63)>>6)
		s.all = slices.Grow(s.all, n-len(s.all))[:n]
	}
	if s.all[w]&bit != 0 {
		return
	}
	s.all[w] |= bit
	if many != nil {
		p.one = withList
		if n := len(s.lists); n > 0 && sameSlice(s.lists[n-1], many) {
			p.many = int32(n)
		} else {
			s.lists = append(s.lists, many)
			p.many = int32(n + 1)
		}
	}
	if s.pendEv == nil {
		// every event not registered yet may be (grown by the share of
		// the pass walked instead, the list was copied some four times
		// over: 0.3 s of the CPU of an 8 M-event full analysis, most of
		// it the first touch of the new arrays)
		n := max(len(c.Trace.Events)-len(s.events), 1)
		s.pendSps, s.pendEv = reserveTable[synchpoint](s.mem, n), reserveTable[int32](s.mem, n)
	}
	s.pendSps = append(s.pendSps, p)
	s.pendEv = append(s.pendEv, int32(ev))
}

// count returns the number of synchpoints, ordered and pending.
func (s *synchpoints) count() int { return len(s.sps) + len(s.pendEv) }

// at returns the synchpoint at position i.
func (s *synchpoints) at(i int) *synchpoint {
	if i < len(s.sps) {
		return &s.sps[i]
	}
	return &s.pendSps[i-len(s.sps)]
}

// sameSlice reports whether a and b are the same slice (the same
// members list of a communicator, say).
func sameSlice(a, b []int) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// order merges the pending synchpoints into the ordered part, for the
// queries below. A pass registers its synchpoints in its order through
// the trace, forward or backward; the pending ones are read forwards or
// backwards or, should they be neither ascending nor descending, sorted
// in place. The first pass's, ascending, become the ordered part as
// they are; later ones are merged with it into arrays of the joint
// length.
func (s *synchpoints) order() {
	m := len(s.pendEv)
	if m == 0 {
		s.pendSps, s.pendEv = nil, nil // (a reservation left empty)
		return
	}
	asc, desc := true, true
	for k := 1; k < m; k++ {
		ev, prev := s.pendEv[k], s.pendEv[k-1]
		asc, desc = asc && ev > prev, desc && ev < prev
	}
	switch {
	case asc:
	case desc:
		slices.Reverse(s.pendSps)
		slices.Reverse(s.pendEv)
	default:
		sort.Sort(byEvent{s.pendSps, s.pendEv})
	}
	if len(s.events) == 0 {
		offheap.Release(s.mem, s.sps)
		offheap.Release(s.mem, s.events)
		s.sps, s.events = offheap.Fit(s.mem, s.pendSps), offheap.Fit(s.mem, s.pendEv)
	} else {
		n := s.count()
		sps, ev := offheap.MakeOr[synchpoint](s.mem, n), offheap.MakeOr[int32](s.mem, n)
		i := 0
		for j, e := range s.pendEv {
			k := i
			for k < len(s.events) && s.events[k] < e {
				k++
			}
			sps, ev = append(sps, s.sps[i:k]...), append(ev, s.events[i:k]...)
			sps, ev = append(sps, s.pendSps[j]), append(ev, e)
			i = k
		}
		sps, ev = append(sps, s.sps[i:]...), append(ev, s.events[i:]...)
		for _, t := range [][]synchpoint{s.sps, s.pendSps} {
			offheap.Release(s.mem, t)
		}
		for _, t := range [][]int32{s.events, s.pendEv} {
			offheap.Release(s.mem, t)
		}
		s.sps, s.events = sps, ev
	}
	s.pendSps, s.pendEv = nil, nil
	s.indexed = append(s.indexed[:0], s.all...)
	s.base = slices.Grow(s.base[:0], len(s.all))[:len(s.all)]
	count := int32(0)
	for w, m := range s.all {
		s.base[w] = count
		count += int32(bits.OnesCount64(m))
	}
}

// byEvent sorts synchpoints by their events.
type byEvent struct {
	sps []synchpoint
	ev  []int32
}

func (b byEvent) Len() int           { return len(b.ev) }
func (b byEvent) Less(i, j int) bool { return b.ev[i] < b.ev[j] }
func (b byEvent) Swap(i, j int) {
	b.sps[i], b.sps[j] = b.sps[j], b.sps[i]
	b.ev[i], b.ev[j] = b.ev[j], b.ev[i]
}

// get returns the synchpoint of ev, nil for none.
func (s *synchpoints) get(ev int) *synchpoint {
	if i := s.index(ev); i >= 0 {
		return s.at(i)
	}
	return nil
}

// index returns the position in sps of ev's synchpoint, -1 for none.
func (s *synchpoints) index(ev int) int {
	if !s.has(ev) {
		return -1
	}
	if w := ev >> 6; w < len(s.indexed) && s.indexed[w]>>(ev&63)&1 != 0 {
		return s.rank(ev) // (ordered)
	}
	// registered since the last order: the latest first (a pass asks
	// about what it just registered)
	for j := len(s.pendEv) - 1; j >= 0; j-- {
		if int(s.pendEv[j]) == ev {
			return len(s.events) + j
		}
	}
	return -1
}

// spValues holds a value per synchpoint, by its position in sps, for
// what bwc accumulates and fwc reads by wait state (costs, propagated
// waits): 8 bytes per synchpoint, made at the first write, where a map
// took 20-40 bytes an entry and a location of a ring has an entry for
// every other synchpoint. The positions hold while no synchpoint is
// registered, as in bwc and fwc (the synchpoints are ordered when bwc
// starts).
type spValues []float64

// slot returns the value of the synchpoint at position i of s, making
// the vector at the first write.
func (v *spValues) slot(s *synchpoints, i int) *float64 {
	if *v == nil {
		*v = make(spValues, s.count())
	}
	return &(*v)[i]
}

// add adds x to the value of the synchpoint at position i of s.
func (v *spValues) add(s *synchpoints, i int, x float64) { *v.slot(s, i) += x }

// set sets the value of the synchpoint at position i of s to x.
func (v *spValues) set(s *synchpoints, i int, x float64) { *v.slot(s, i) = x }

// at returns the value of the synchpoint at position i, 0 for none.
func (v spValues) at(i int) float64 {
	if i < 0 || i >= len(v) {
		return 0
	}
	return v[i]
}

func (s *synchpoints) has(ev int) bool {
	w := ev >> 6
	return ev >= 0 && w < len(s.all) && s.all[w]>>(ev&63)&1 != 0
}

// isWait reports whether ev is a wait state.
func (s *synchpoints) isWait(ev int) bool {
	p := s.get(ev)
	return p != nil && p.wait > 0
}

// waitOf returns the wait of ev, 0 if it is no synchpoint.
func (s *synchpoints) waitOf(ev int) float64 {
	if p := s.get(ev); p != nil {
		return p.wait
	}
	return 0
}

// contains reports whether synchpoint p synchronised with world rank
// rank.
func (s *synchpoints) contains(p *synchpoint, rank int) bool {
	return p.one == withAll || int(p.one) == rank || (p.many > 0 && slices.Contains(s.lists[p.many-1], rank))
}

// prev returns the latest synchpoint before ev that synchronised with
// world rank rank, or -1 for the start of the trace if none did (Scalasca
// fails there; it cannot happen after MPI_Init, which synchronises with
// every rank, but traces without MPI_Init are analysed all the same). It
// starts from ev's rank among the ordered synchpoints and reads them by
// position (a binary search for ev and a look-up of each synchpoint it
// passed were most of its time).
func (s *synchpoints) prev(ev, rank int) int {
	for k := s.rank(ev) - 1; k >= 0; k-- {
		if s.contains(&s.sps[k], rank) {
			return int(s.events[k])
		}
	}
	return -1
}

// spRange is the ordered synchpoints at positions lo up to hi: their
// events are events[lo:hi], their values sps[lo:hi].
type spRange struct{ lo, hi int }

// between returns the synchpoints strictly between events a and b in
// trace order (a < 0: from the start; b < 0: to the end).
func (s *synchpoints) between(a, b int) spRange {
	lo, hi := 0, len(s.events)
	if a >= 0 {
		lo = s.rank(a + 1)
	}
	if b >= 0 {
		hi = s.rank(b)
	}
	if hi < lo {
		hi = lo
	}
	return spRange{lo, hi}
}

// every returns the range of every ordered synchpoint.
func (s *synchpoints) every() spRange { return spRange{0, len(s.events)} }

// rank returns the number of ordered synchpoints before event ev, from
// the bit sets (a binary search over the events took 3 % of the full
// analysis's CPU).
func (s *synchpoints) rank(ev int) int {
	if ev <= 0 {
		return 0
	}
	w, off := ev>>6, uint(ev&63)
	if w >= len(s.indexed) {
		return len(s.events)
	}
	return int(s.base[w]) + bits.OnesCount64(s.indexed[w]&(1<<off-1))
}

// Fields of the synchpoint exchanges.
var (
	// LSWaited: the receive of this message was a Late Sender wait state
	// (backward pass, receiver → sender).
	LSWaited = replay.NewField("late sender waited", replay.BoolCodec)
	// RecvLeave is the time the receive region was left (backward pass).
	RecvLeave = replay.NewField("recv leave", replay.Float64Codec)
	// LRWaited: the send completion of this message was a Late Receiver
	// wait state (fws, sender → receiver).
	LRWaited = replay.NewField("late receiver waited", replay.BoolCodec)
	// PartnerEvent is the event of a wait state, shipped to its partner
	// for the critical path's walk (pathwalk.go): the receive of a Late
	// Sender to the sender, the send completion of a Late Receiver to
	// the receiver.
	PartnerEvent = replay.NewField("partner event", replay.Uint64Codec)
	// SendCmpLeave is the time the send completion region was left (fws).
	SendCmpLeave = replay.NewField("send completion leave", replay.Float64Codec)
)

func positive(a, b float64) float64 {
	if a > b {
		return a - b
	}
	return 0
}

func (rc *rootCause) registerSynchpoints(bus *replay.Bus) {
	sp := &rc.sp
	bus.WantCollSynced() // (syncFlags)
	// forward pass
	replay.Subscribe(bus, LateSenderFound, func(c *replay.Ctx, info *LateSenderInfo) error {
		sp.add(c, info.Recv, synchpoint{wait: info.Idle, completion: positive(c.LeaveTime(info.Recv), info.SendLeave),
			one: int32(info.Source)}, nil)
		return nil
	})
	bus.On(replay.FwInit, func(c *replay.Ctx) error {
		rc.initLeave = c.Index
		sp.add(c, c.Index, synchpoint{completion: c.Completion, one: withAll}, nil)
		return nil
	})
	bus.On(replay.FwFinalize, func(c *replay.Ctx) error {
		rc.finLeave = c.Index
		rc.finLatest = c.Coll.Latest.Rank == c.Coll.My.Rank
		sp.add(c, c.Index, synchpoint{wait: c.Idle, completion: c.Completion, one: withAll}, nil)
		return nil
	})
	bus.On(replay.FwBarrier, func(c *replay.Ctx) error {
		rc.colls.add(c, collRecord{delayer: int32(c.Coll.Latest.Rank), metric: DelayBarrier, typ: costBarrier})
		if c.Coll.SyncPoint {
			rc.addColl(c, c.Idle, c.Completion, -1, c.Env.CommMembers[c.Trace.Collective(c.Index).Comm])
		}
		return nil
	})
	bus.On(replay.FwNxN, func(c *replay.Ctx) error {
		rc.colls.add(c, collRecord{delayer: int32(c.Coll.Latest.Rank), metric: DelayNxN, typ: costNxN})
		syncs, err := rc.syncedRanks(c, c.Coll.SyncPoint)
		if err != nil || !c.Coll.SyncPoint {
			return err
		}
		rc.addColl(c, c.Idle, c.Completion, -1, syncs)
		return nil
	})
	bus.On(replay.FwOneToN, func(c *replay.Ctx) error {
		root := c.Coll.Root.Rank
		rc.colls.add(c, collRecord{delayer: int32(root), metric: DelayOneToN, typ: costOneToN})
		me, _, err := c.CollMember()
		if err != nil {
			return err
		}
		waiting, err := rc.syncedRanks(c, c.Coll.SyncPoint && me != root)
		if err != nil || !c.Coll.SyncPoint {
			return err
		}
		if me != root {
			rc.addColl(c, c.Idle, c.Completion, worldRank(c, c.Trace.Collective(c.Index).Comm, root), nil)
		} else {
			rc.addColl(c, c.Idle, c.Completion, -1, waiting)
		}
		return nil
	})
	bus.On(replay.FwNToOne, func(c *replay.Ctx) error {
		ci := &c.Coll
		rc.colls.add(c, collRecord{delayer: int32(ci.Latest.Rank), metric: DelayNToOne, typ: costNToOne})
		if !ci.SyncPoint {
			return nil
		}
		me, _, err := c.CollMember()
		if err != nil {
			return err
		}
		other := ci.Root.Rank
		if me == ci.Root.Rank {
			other = ci.Latest.Rank
		}
		latest := math.Min(ci.Latest.Time, ci.End)
		completion := math.Max(0, ci.End-math.Max(ci.EarliestEnd.Time, latest))
		rc.addColl(c, c.Idle, completion, worldRank(c, c.Trace.Collective(c.Index).Comm, other), nil)
		return nil
	})

	// backward pass
	bus.OnAhead(replay.BwPreRecv, func(c *replay.Ctx) error {
		ls := sp.isWait(c.Index)
		replay.Put(c, LSWaited, ls)
		replay.Put(c, RecvLeave, c.LeaveTime(c.Index))
		if ls && rc.withPath {
			replay.Put(c, PartnerEvent, uint64(c.Index))
		}
		return nil
	})
	replay.Subscribe(bus, LateReceiverFound, func(c *replay.Ctx, info *LateReceiverInfo) error {
		if ls, _ := replay.Get(c, LSWaited); ls && info.Completion == c.Index {
			return nil // a blocking send matched to a Late Sender: that registration wins
		}
		sp.add(c, info.Completion, synchpoint{wait: info.Idle, completion: info.Finish, one: int32(info.Dest)}, nil)
		rc.lateReceivers = rc.lateReceivers || sp.isWait(info.Completion)
		return nil
	})
	bus.On(replay.BwPostSend, func(c *replay.Ctx) error {
		if ls, _ := replay.Get(c, LSWaited); ls {
			rc.lsSends = append(rc.lsSends, int32(c.Index)) // descending: reversed at the end
			if rc.withPath {
				r, ok := replay.Get(c, PartnerEvent)
				rc.keys.lsRecv = append(rc.keys.lsRecv, eventKey(r, ok))
			}
			leave, _ := replay.Get(c, RecvLeave)
			m := c.Trace.Message(c.Index)
			sp.add(c, c.Index, synchpoint{completion: positive(c.LeaveTime(c.Index), leave),
				one: int32(worldRank(c, m.Comm, int(m.Peer)))}, nil)
		}
		return nil
	})

	// fws
	bus.OnAhead(FwsPreSend, func(c *replay.Ctx) error {
		cmp := completionOf(c.Trace, c.Index)
		lr := sp.isWait(cmp)
		replay.Put(c, LRWaited, lr)
		replay.Put(c, SendCmpLeave, c.LeaveTime(cmp))
		if lr && rc.withPath {
			replay.Put(c, PartnerEvent, uint64(cmp))
		}
		return nil
	})
	bus.On(FwsPostRecv, func(c *replay.Ctx) error {
		if lr, _ := replay.Get(c, LRWaited); lr {
			q := requestOf(c.Trace, c.Index)
			leave, _ := replay.Get(c, SendCmpLeave)
			m := c.Trace.Message(c.Index)
			src := worldRank(c, m.Comm, int(m.Peer))
			sp.add(c, q, synchpoint{completion: positive(c.LeaveTime(q), leave), one: int32(src)}, nil)
			if rc.withPath {
				cmp, ok := replay.Get(c, PartnerEvent)
				rc.keys.lrReqs = append(rc.keys.lrReqs, lrKey{req: int32(q), rank: int32(src), cmp: eventKey(cmp, ok)})
			}
		}
		return nil
	})
	bus.On(replay.Finished, func(c *replay.Ctx) error {
		switch c.Pass {
		case replay.Forward:
			sp.order() // the backward pass asks about the receives
		case replay.Backward:
			sp.order()
			slices.Reverse(rc.lsSends)
			slices.Reverse(rc.keys.lsRecv)
			if c.Loc.World == nil {
				c.SkipPass(Fws) // a thread without MPI calls
				return nil
			}
			// fws only tells receivers of Late Receivers' messages: without
			// any, anywhere, it is skipped
			var any [1]float64
			if rc.lateReceivers {
				any[0] = 1
			}
			out, err := c.WorldAllreduceSum(any[:])
			if err != nil {
				return err
			}
			if out[0] == 0 {
				c.SkipPass(Fws)
			}
		case Fws:
			sp.order()
		}
		return nil
	})
}

// addColl registers the collective end c.Index as a synchpoint with
// the world rank one, or the world ranks many if not nil.
func (rc *rootCause) addColl(c *replay.Ctx, wait, completion float64, one int, many []int) {
	rc.sp.add(c, c.Index, synchpoint{wait: wait, completion: completion, one: int32(one)}, many)
}

// syncedRanks returns the world ranks of the members the current
// collective synchronised (shared: not to be changed), this location
// being one if mine.
func (rc *rootCause) syncedRanks(c *replay.Ctx, mine bool) ([]int, error) {
	if ranks, me, ok := c.CollSynced(); ok { // the wait-state exchange found them
		if me != mine {
			return nil, fmt.Errorf("root cause: the wait-state exchange's synchronised members disagree with this member (%v, not %v)", me, mine)
		}
		return ranks, nil
	}
	rc.flags = append(rc.flags[:0], 0)
	if mine {
		rc.flags[0] = 1
	}
	flags, err := c.Allgather(rc.flags)
	if err != nil {
		return nil, err
	}
	return rc.worldRanks(c, flags), nil
}

// worldRanks returns the world ranks of the members whose flag is set.
func (rc *rootCause) worldRanks(c *replay.Ctx, flags []float64) []int {
	comm := c.Trace.Collective(c.Index).Comm
	members := c.Env.CommMembers[comm]
	n, h := 0, replay.NewHash()
	for r, f := range flags {
		if f > 0 {
			n++
			h = h.Add(worldRank(c, comm, r))
		}
	}
	if n == len(members) && n == len(flags) {
		return members
	}
	// The same ranks synchronise at most collectives, on every member:
	// one list for all of them, made once (no list of its own per rank),
	// and the one this location used last is checked without the lock.
	same := func(l []int) bool {
		if len(l) != n {
			return false
		}
		k := 0
		for r, f := range flags {
			if f > 0 {
				if l[k] != worldRank(c, comm, r) {
					return false
				}
				k++
			}
		}
		return true
	}
	if rc.lastRanks != nil && same(rc.lastRanks) {
		return rc.lastRanks
	}
	rc.lastRanks = c.Env.InternFunc(uint64(h), same, func() []int {
		l := make([]int, 0, n)
		for r, f := range flags {
			if f > 0 {
				l = append(l, worldRank(c, comm, r))
			}
		}
		return l
	})
	return rc.lastRanks
}
