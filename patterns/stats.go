package patterns

import (
	"scout/localtrace"
	"scout/localtrace/otf2"
	"scout/replay"
)

// statMetrics are the metrics of the statistics file, in its order.
var statMetrics = []replay.Metric{LateSender, LateSenderWO, LateReceiver, WaitNxN, BarrierWait,
	EarlyReduce, EarlyScan, LateBroadcast, BarrierCompletion, NxNCompletion,
	OmpEBarrierWait, OmpIBarrierWait, OmpLockContentionAPI, OmpLockContentionCritical}

// StatPatterns lists the names of the patterns of the statistics file, in
// its order; Instance.Pattern indexes it.
var StatPatterns = func() []string {
	names := make([]string, len(statMetrics))
	for i, m := range statMetrics {
		names[i] = catalog[m].Name
	}
	return names
}()

// statIndex is the index of each metric in StatPatterns, -1 for none.
var statIndex = func() (idx [numMetrics]int8) {
	for m := range idx {
		idx[m] = -1
	}
	for i, m := range statMetrics {
		idx[m] = int8(i)
	}
	return idx
}()

// stat returns the index of metric m in StatPatterns.
func stat(m replay.Metric) int {
	if int(m) >= len(statIndex) {
		return -1
	}
	return int(statIndex[m])
}

// Instance is one occurrence of a wait state, for the statistics file.
// Fields are ordered for a compact layout (48 bytes): a trace holds about
// one instance per five events.
type Instance struct {
	Enter    float64 // begin of the instance
	Exit     float64 // end of the instance
	Duration float64 // the wait time
	Callpath uint32  // local call path (global once combined)
	Rank     int32   // world rank
	// Coll identifies a collective operation instance (communicator and
	// sequence number on it); the instances of all its participants are
	// aggregated. Point-to-point instances have Coll.Seq == -1.
	Coll    CollKey
	Pattern uint8 // index into StatPatterns
}

// CollKey identifies one collective operation: the n-th analysed one on
// a communicator.
type CollKey struct {
	Comm uint32
	Seq  int32
}

// Statistics collects what the statistics file needs of one location's
// wait-state instances, in about 8 bytes per instance: the waits, by
// pattern, and only those instances in full that may be listed as the
// most severe or that are aggregated with other locations' (a ring's
// rank keeps some 300 000 instances of Late Sender, which took 48 bytes
// each).
type Statistics struct {
	// Waits are, by index into StatPatterns, the durations of the
	// location's instances that waited (longer than 0), in the order
	// found, in chunks. Those of collective instances join them when
	// the replay is over (Seal): until then Colls holds them, once.
	Waits [][][]float64
	// Colls are the instances in collective operations (Coll.Seq >= 0),
	// in the order found: they are aggregated over the operation's
	// participants.
	Colls CollInstances
	// Severe are, by index into StatPatterns, the location's most severe
	// point-to-point instance of each call path among those that waited
	// (the first found of equals), in no particular order.
	Severe [][]Ranked
	// Bounds are, by index into StatPatterns, the duration of the
	// location's longest operation of the kind the pattern measures,
	// whether it waited or not (the longest region holding a receive for
	// Late Sender, say): the statistics scale the pattern's waits by the
	// largest over all locations (combine.Report.StatBounds).
	Bounds []float64
	seq    map[uint32]int32
	sealed bool
	// severeAt indexes Severe, by pattern and call path
	severeAt []map[uint32]int
	p2p      int64 // point-to-point instances found
}

// Ranked is an instance with its place among the location's
// point-to-point instances, in the order found.
type Ranked struct {
	Instance
	Index int64
}

// NewStatistics returns an empty collection.
func NewStatistics() *Statistics {
	n := len(statMetrics)
	return &Statistics{Waits: make([][][]float64, n), Severe: make([][]Ranked, n), Bounds: make([]float64, n),
		seq: map[uint32]int32{}, severeAt: make([]map[uint32]int, n)}
}

// Add adds instance in (Pattern must index StatPatterns).
func (s *Statistics) Add(in Instance) {
	p := int(in.Pattern)
	if p >= len(s.Waits) {
		return
	}
	if in.Duration > 0 && (in.Coll.Seq < 0 || s.sealed) {
		s.Waits[p] = appendChunked(s.Waits[p], in.Duration)
	}
	if in.Coll.Seq >= 0 {
		s.Colls.Add(in)
		return
	}
	k := s.p2p
	s.p2p++
	if !(in.Duration > 0) {
		return
	}
	if s.severeAt[p] == nil {
		s.severeAt[p] = map[uint32]int{}
	}
	if j, ok := s.severeAt[p][in.Callpath]; !ok {
		s.severeAt[p][in.Callpath] = len(s.Severe[p])
		s.Severe[p] = append(s.Severe[p], Ranked{in, k})
	} else if in.Duration > s.Severe[p][j].Duration {
		s.Severe[p][j] = Ranked{in, k}
	}
}

// Seal adds the waits of the collective instances to Waits, in the
// order found; call it once every instance was added, before Colls is
// drained (it does nothing the second time). A pattern's instances are
// all collective or all point-to-point, so its waits keep the order
// they were found in. Keeping them only in Colls until then spares 8
// bytes an instance during the replay (190 000 instances a location of
// the HPCG-like bench trace).
func (s *Statistics) Seal() {
	if s.sealed {
		return
	}
	s.sealed = true
	for in := range s.Colls.All {
		if p := int(in.Pattern); in.Duration > 0 && p < len(s.Waits) {
			s.Waits[p] = appendChunked(s.Waits[p], in.Duration)
		}
	}
}

// bound notes an operation of d seconds of the kind of metric m.
func (s *Statistics) bound(m replay.Metric, d float64) {
	if p := stat(m); p >= 0 && d > s.Bounds[p] {
		s.Bounds[p] = d
	}
}

// RegisterStatistics subscribes a collector of wait-state instances to
// bus. Register it after the patterns.
func RegisterStatistics(bus *replay.Bus) *Statistics {
	s := NewStatistics()
	p2p := CollKey{Seq: -1}
	// the bounds: the longest receive, send, collective of each kind, OpenMP
	// barrier and lock acquisition
	region := func(c *replay.Ctx) float64 { return c.LeaveTime(c.Index) - c.EnterTime(c.Index) }
	bus.On(replay.FwPostRecv, func(c *replay.Ctx) error {
		d := region(c)
		s.bound(LateSender, d)
		s.bound(LateSenderWO, d)
		return nil
	})
	bus.OnAhead(replay.FwPreSend, func(c *replay.Ctx) error {
		s.bound(LateReceiver, region(c))
		return nil
	})
	bus.On(replay.FwCollective, func(c *replay.Ctx) error {
		begin := c.EnterTime(c.Index)
		if l := c.Trace.Link(c.Index); l != localtrace.None {
			begin = c.Trace.Time(int(l))
		}
		d := c.Time() - begin
		switch c.Trace.Collective(c.Index).Op {
		case otf2.CollBarrier:
			s.bound(BarrierWait, d)
			s.bound(BarrierCompletion, d)
		case otf2.CollBcast, otf2.CollScatter, otf2.CollScatterv:
			s.bound(LateBroadcast, d)
		case otf2.CollGather, otf2.CollGatherv, otf2.CollReduce:
			s.bound(EarlyReduce, d)
		case otf2.CollScan, otf2.CollExscan:
			s.bound(EarlyScan, d)
		case otf2.CollAllgather, otf2.CollAllgatherv, otf2.CollAlltoall, otf2.CollAlltoallv, otf2.CollAlltoallw,
			otf2.CollAllreduce, otf2.CollReduceScatter, otf2.CollReduceScatterBlock:
			s.bound(WaitNxN, d)
			s.bound(NxNCompletion, d)
		}
		return nil
	})
	if mayHaveOmp(bus) { // OpenMP barriers and locks
		bus.On(replay.FwLeave, func(c *replay.Ctx) error {
			if cls := c.RegionClass(c.Index); cls&replay.ClassOmpBarrier != 0 {
				s.bound(barrierMetric(cls), region(c))
			}
			return nil
		})
		bus.On(replay.FwLockAcquire, func(c *replay.Ctx) error {
			cls := c.RegionClass(c.Index)
			if cls&replay.ClassOmp == 0 {
				return nil
			}
			s.bound(lockMetric(cls), c.Time()-c.EnterTime(c.Index))
			return nil
		})
	}
	replay.Subscribe(bus, LateSenderFound, func(c *replay.Ctx, info *LateSenderInfo) error {
		s.Add(Instance{Pattern: uint8(stat(LateSender)), Callpath: c.Callpath(info.Recv), Enter: c.EnterTime(info.Recv), Exit: c.Trace.Time(info.Recv), Duration: info.Idle, Rank: int32(c.Loc.Rank), Coll: p2p})
		return nil
	})
	replay.Subscribe(bus, LateSenderWrongOrder, func(c *replay.Ctx, info *LateSenderInfo) error {
		send, _ := replay.Get(c, SendEvent)
		s.Add(Instance{Pattern: uint8(stat(LateSenderWO)), Callpath: c.Callpath(info.Recv), Enter: send.Time, Exit: c.Time(), Duration: info.Idle, Rank: int32(c.Loc.Rank), Coll: p2p})
		return nil
	})
	replay.Subscribe(bus, LateReceiverFound, func(c *replay.Ctx, lr *LateReceiverInfo) error {
		cmp := lr.Completion
		recv, _ := replay.Get(c, RecvTime)
		s.Add(Instance{Pattern: uint8(stat(LateReceiver)), Callpath: c.Callpath(cmp), Enter: c.EnterTime(cmp), Exit: recv, Duration: lr.Idle, Rank: int32(c.Loc.Rank), Coll: p2p})
		return nil
	})
	coll := func(topic replay.Topic, idle, completion int, syncOnly bool) {
		bus.On(topic, func(c *replay.Ctx) error {
			comm := c.Trace.Collective(c.Index).Comm
			key := CollKey{comm, s.seq[comm]}
			s.seq[comm]++
			if syncOnly && !c.Coll.SyncPoint {
				return nil
			}
			cp := c.Callpath(c.Index)
			// An instance begins at the collective's begin event, but a
			// Wait at N×N at its region's Enter, as in the reference (they
			// differ after a timestamp correction, which keeps events
			// at least 1 ns apart).
			enter := c.Coll.My.Time
			if idle >= 0 && (topic != replay.FwNToOne || c.Idle > 0) {
				in := enter
				if topic == replay.FwNxN {
					in = c.EnterTime(c.Index)
				}
				s.Add(Instance{Pattern: uint8(idle), Callpath: cp, Enter: in, Exit: c.Coll.End, Duration: c.Idle, Rank: int32(c.Loc.Rank), Coll: key})
			}
			if completion >= 0 {
				s.Add(Instance{Pattern: uint8(completion), Callpath: cp, Enter: enter, Exit: c.Coll.End, Duration: c.Completion, Rank: int32(c.Loc.Rank), Coll: key})
			}
			return nil
		})
	}
	replay.Subscribe(bus, OmpWaitFound, func(c *replay.Ctx, w *OmpWaitInfo) error {
		// a barrier is a collective instance of the team, a lock
		// acquisition a point-to-point one
		s.Add(Instance{Pattern: uint8(stat(w.Metric)), Callpath: c.Callpath(c.Index), Enter: w.Enter, Exit: w.Exit,
			Duration: w.Idle, Rank: int32(c.Loc.Rank), Coll: CollKey{w.Team, w.Seq}})
		return nil
	})
	coll(replay.FwBarrier, stat(BarrierWait), stat(BarrierCompletion), false)
	coll(replay.FwNxN, stat(WaitNxN), stat(NxNCompletion), true)
	coll(replay.FwOneToN, stat(LateBroadcast), -1, false)
	coll(replay.FwNToOne, stat(EarlyReduce), -1, false) // only the root waits
	coll(replay.FwScan, stat(EarlyScan), -1, false)
	return s
}

// appendChunked appends v to the last chunk of list, or to a new one
// twice its size (up to maxInstanceChunk) when it is full: nothing is
// ever copied, where append copied the whole list some five times over
// (with the page faults of every new array, 0.4 s of an 8 M-event
// analysis).
func appendChunked[T any](list [][]T, v T) [][]T {
	n := len(list)
	if n == 0 || len(list[n-1]) == cap(list[n-1]) {
		size := minInstanceChunk
		if n > 0 {
			size = min(2*cap(list[n-1]), maxInstanceChunk)
		}
		list = append(list, make([]T, 0, size))
		n++
	}
	list[n-1] = append(list[n-1], v)
	return list
}

// Chunk sizes of appendChunked's lists (the statistics', the pending
// synchronisation points') and of CollInstances' chunks.
const (
	minInstanceChunk = 16
	maxInstanceChunk = 4096
)
