package replay

import (
	"math"

	"scout/localtrace"
	"scout/localtrace/otf2"
)

// CollClass is the wait-state class of a collective operation.
type CollClass uint8

// Collective classes.
const (
	CollNone    CollClass = iota // not analysed (Alltoallv/w, handle management)
	CollBarrier                  // MPI_Barrier
	CollOneToN                   // Bcast, Scatter(v)
	CollNToOne                   // Reduce, Gather(v)
	CollNxN                      // Allgather(v), Allreduce, Alltoall, Reduce_scatter(_block)
	CollScan                     // Scan, Exscan
)

// ClassOf classifies an OTF2 collective operation.
func ClassOf(op uint8) CollClass {
	switch op {
	case otf2.CollBarrier:
		return CollBarrier
	case otf2.CollBcast, otf2.CollScatter, otf2.CollScatterv:
		return CollOneToN
	case otf2.CollGather, otf2.CollGatherv, otf2.CollReduce:
		return CollNToOne
	case otf2.CollAllgather, otf2.CollAllgatherv, otf2.CollAlltoall, otf2.CollAllreduce,
		otf2.CollReduceScatter, otf2.CollReduceScatterBlock:
		return CollNxN
	case otf2.CollScan, otf2.CollExscan:
		return CollScan
	}
	return CollNone // Alltoallv/w, handle management
}

// Counted reports whether an OTF2 collective operation is an MPI
// collective (not one of the handle-management pseudo collectives that
// Score-P 8 writes around communicator creation, MPI_Init and MPI_Finalize).
func Counted(op uint8) bool { return op < otf2.CollCreateHandle }

var (
	negInf = math.Inf(-1)
	posInf = math.Inf(1)
)

// clamp computes Idle and Completion from the exchange result.
func (c *Ctx) clamp() {
	ci := &c.Coll
	latest := math.Min(ci.Latest.Time, ci.End)
	earliestEnd := math.Max(ci.EarliestEnd.Time, latest)
	c.Idle = math.Max(0, latest-ci.My.Time)
	c.Completion = math.Max(0, ci.End-earliestEnd)
}

// collective handles a collective's end event i.
func (r *Replayer) collective(i int) error {
	t := r.Loc.Trace
	e := &t.Events[i]
	info := t.Collective(i)
	if !Counted(info.Op) {
		return nil
	}
	c := &r.ctx
	if err := r.Bus.Publish(FwCollective, c); err != nil {
		return err
	}
	class := ClassOf(info.Op)
	if class == CollNone || r.Loc.env.IsSelf(info.Comm) {
		return nil
	}
	comm, err := r.Loc.comm(r.ctx.Pass, info.Comm)
	if err != nil {
		return err
	}
	begin := r.ctx.EnterTime(i)
	if e.C != localtrace.None {
		begin = t.Events[e.C].Time
	}
	me := comm.Rank()
	ci := &c.Coll
	ci.My, ci.End = TimeRank{Time: begin, Rank: me}, e.Time
	sent, recvd := info.Sent > 0, info.Received > 0
	switch class {
	case CollBarrier:
		if ci.Latest, err = r.maxLoc(comm, ci.My); err != nil {
			return err
		}
		if ci.EarliestEnd, err = r.minLoc(comm, TimeRank{Time: e.Time, Rank: me}); err != nil {
			return err
		}
		ci.SyncPoint = true
		r.checkColl(ci.Latest.Time)
		c.clamp()
		return r.Bus.Publish(FwBarrier, c)
	case CollNxN:
		if !sent && !recvd {
			return nil
		}
		if ci.Latest, err = r.maxLoc(comm, ci.My); err != nil {
			return err
		}
		if ci.EarliestEnd, err = r.minLoc(comm, TimeRank{Time: e.Time, Rank: me}); err != nil {
			return err
		}
		r.checkColl(ci.Latest.Time)
		if ci.EarliestEnd.Time > ci.Latest.Time {
			ci.SyncPoint = true
		} else {
			// partial overlap: only senders can be late, only receivers wait
			v := negInf
			if sent {
				v = begin
			}
			if ci.Latest, err = r.maxLoc(comm, TimeRank{Time: v, Rank: me}); err != nil {
				return err
			}
			ci.SyncPoint = (recvd && begin < ci.Latest.Time) || (sent && ci.Latest.Rank == me)
			end := posInf
			if ci.SyncPoint {
				end = e.Time
			}
			if ci.EarliestEnd, err = r.minLoc(comm, TimeRank{Time: end, Rank: me}); err != nil {
				return err
			}
		}
		if ci.SyncPoint {
			c.clamp()
		}
		return r.Bus.Publish(FwNxN, c)
	case CollOneToN:
		root := int(info.Root)
		rootSent, err := r.bcastFloat(comm, root, float64(info.Sent))
		if err != nil || rootSent == 0 {
			return err
		}
		rootBegin, err := r.bcastFloat(comm, root, begin)
		if err != nil {
			return err
		}
		ci.Root = TimeRank{Time: rootBegin, Rank: root}
		waits := recvd && begin < rootBegin
		end := posInf
		if waits {
			end = e.Time
		}
		if ci.EarliestEnd, err = r.minLoc(comm, TimeRank{Time: end, Rank: me}); err != nil {
			return err
		}
		ci.SyncPoint = waits || (me == root && !math.IsInf(ci.EarliestEnd.Time, 1))
		r.checkColl(rootBegin)
		if me != root {
			c.Idle = math.Max(0, math.Min(rootBegin, e.Time)-begin)
		}
		c.Completion = math.Max(0, e.Time-math.Max(ci.EarliestEnd.Time, rootBegin))
		return r.Bus.Publish(FwOneToN, c)
	case CollNToOne:
		root := int(info.Root)
		rootRecvd, err := r.bcastFloat(comm, root, float64(info.Received))
		if err != nil || rootRecvd == 0 {
			return err
		}
		rootBegin, err := r.bcastFloat(comm, root, begin)
		if err != nil {
			return err
		}
		ci.Root = TimeRank{Time: rootBegin, Rank: root}
		v := negInf
		if sent {
			v = begin
		}
		if ci.Latest, err = r.maxLoc(comm, TimeRank{Time: v, Rank: me}); err != nil {
			return err
		}
		ci.SyncPoint = rootBegin < ci.Latest.Time && (me == root || me == ci.Latest.Rank)
		end := posInf
		if ci.SyncPoint {
			end = e.Time
		}
		if ci.EarliestEnd, err = r.minLoc(comm, TimeRank{Time: end, Rank: me}); err != nil {
			return err
		}
		if me == root {
			r.checkColl(ci.Latest.Time)
			c.Idle = math.Max(0, math.Min(ci.Latest.Time, e.Time)-begin)
		}
		return r.Bus.Publish(FwNToOne, c)
	case CollScan:
		if !sent && !recvd {
			return nil
		}
		v := negInf
		if sent {
			v = begin
		}
		if ci.Latest, err = r.scanMaxLoc(comm, TimeRank{Time: v, Rank: me}); err != nil {
			return err
		}
		ci.SyncPoint = begin < ci.Latest.Time
		r.checkColl(ci.Latest.Time)
		c.Idle = math.Max(0, math.Min(ci.Latest.Time, e.Time)-begin)
		return r.Bus.Publish(FwScan, c)
	}
	return nil
}

// checkColl counts a collective clock-condition violation: a partner
// began after this location had already finished.
func (r *Replayer) checkColl(latest float64) {
	if latest > r.ctx.Coll.End {
		r.Loc.CCV.Coll++
	}
}

// setupCollective exchanges Enter and Leave times of MPI_Init or
// MPI_Finalize (event i is its Leave) over all ranks.
func (r *Replayer) setupCollective(i int) error {
	c := &r.ctx
	w := r.Loc.World
	me := w.Rank()
	ci := &c.Coll
	ci.My, ci.End = TimeRank{Time: c.EnterTime(i), Rank: me}, r.Loc.Trace.Events[i].Time
	var err error
	if ci.Latest, err = r.maxLoc(w, ci.My); err != nil {
		return err
	}
	if ci.EarliestEnd, err = r.minLoc(w, TimeRank{Time: ci.End, Rank: me}); err != nil {
		return err
	}
	ci.SyncPoint = true
	r.checkColl(ci.Latest.Time)
	c.clamp()
	return nil
}
