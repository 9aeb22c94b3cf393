package replay

import (
	"fmt"
	"math"

	"scout/hpc"
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

// collective handles a collective's end event i: FwCollective, then the
// wait-state exchange (done before the walk, or now) and its topic.
func (r *Replayer) collective(i int) error {
	t := r.Loc.Trace
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
	var x *exchange
	if q := r.early[info.Comm]; q != nil {
		if len(q.xs) == 0 {
			if err := r.nextWindow(q); err != nil {
				return err
			}
		}
		if len(q.xs) == 0 || q.xs[0].event != i {
			return fmt.Errorf("replay: no wait-state exchange of this collective on communicator %d", info.Comm)
		}
		x = q.xs[0]
		q.xs = q.xs[1:]
		if x.synced >= 0 && q.synced != nil {
			c.synced, c.syncedMe, c.syncedOK = q.synced[x.synced], x.isSynced(), true
		}
	} else {
		comm, err := r.Loc.comm(r.ctx.Pass, info.Comm)
		if err != nil {
			return err
		}
		if x, err = newExchange(t, i, class, r.collBegin(i), comm.Rank(), comm.Size()); err != nil {
			return err
		}
		if err := r.exchangeNow(comm, x); err != nil {
			return err
		}
	}
	r.use(x)
	if x.topic == 0 {
		return nil
	}
	return r.Bus.Publish(x.topic, c)
}

// exchangeNow runs the wait-state exchange x over comm at its event.
func (r *Replayer) exchangeNow(comm hpc.Comm, x *exchange) error {
	xs := [1]*exchange{x}
	var err error
	r.buf, err = runExchanges(comm, xs[:], r.buf)
	return err
}

// use makes the result of exchange x the Ctx's (Coll, Idle, Completion)
// and counts its clock-condition violation.
func (r *Replayer) use(x *exchange) {
	c := &r.ctx
	c.Coll, c.Idle, c.Completion = x.coll, x.idle, x.completion
	if x.hasCCV {
		r.checkColl(x.ccv)
	}
}

// collBegin returns the begin of the collective that ends at event i:
// its begin event, or else the Enter of its region.
func (r *Replayer) collBegin(i int) float64 {
	t := r.Loc.Trace
	if b := t.Link(i); b != localtrace.None {
		return t.Time(int(b))
	}
	return r.ctx.EnterTime(i)
}

// collWindow is the number of a communicator's collective instances
// whose wait-state exchanges run together: the rounds of a window run
// when the walk reaches its first instance, over the vector of all its
// instances' entries, so that a location holds a window's exchanges,
// not a whole trace's.
var collWindow = 1 << 12

// exchangeQueue holds the wait-state exchanges of one communicator's
// collectives, run a window of instances at a time, in trace order.
type exchangeQueue struct {
	id     uint32
	comm   hpc.Comm
	events []int32 // the CollEnd events of the instances not yet exchanged
	// xs are the current window's exchanges not yet used (in window,
	// reused from window to window)
	xs     []*exchange
	window []exchange
	ptrs   []*exchange
	// synced are the world ranks each N-to-N and 1-to-N instance of the
	// window synchronised, by synced number (syncedLists), shared
	synced [][]int
	n      int // windows run
}

// exchangeEarly prepares the wait-state exchanges of the location's
// collectives for pass p: per communicator of the program, in the order
// every rank knows, the members agree on the number of its instances;
// the walk then runs them a window at a time (nextWindow), one
// reduction per round over all the window's instances.
func (r *Replayer) exchangeEarly(p *pass) error {
	t := r.Loc.Trace
	byComm := map[uint32]*exchangeQueue{}
	for i := range t.Events {
		if t.Events[i].Kind != localtrace.KindCollEnd || p.steps[localtrace.KindCollEnd].do != waitStates {
			continue
		}
		info := t.Collective(i)
		class := ClassOf(info.Op)
		if !Counted(info.Op) || class == CollNone || r.Loc.env.IsSelf(info.Comm) {
			continue
		}
		q := byComm[info.Comm]
		if q == nil {
			comm, err := r.Loc.comm(p.id, info.Comm)
			if err != nil {
				return r.errorf(i, err)
			}
			q = &exchangeQueue{id: info.Comm, comm: comm}
			byComm[info.Comm] = q
		}
		q.events = append(q.events, int32(i))
	}
	// Every member of a communicator takes part, with or without
	// collectives on it; members that disagree on their number leave
	// them to the walk, where the replay fails as it would at that
	// collective (a deadlock naming where each rank waits).
	var counts [2]float64
	for _, id := range r.Loc.env.commOrder {
		comm, ok := r.Loc.comms[p.id][id]
		if !ok || r.Loc.env.IsSelf(id) {
			continue
		}
		q := byComm[id]
		n := 0
		if q != nil {
			n = len(q.events)
		}
		counts = [2]float64{float64(n), -float64(n)}
		agree, err := comm.AllreduceFloats(hpc.Max, counts[:])
		if err != nil {
			return fmt.Errorf("replay: rank %d: counting the collectives on communicator %d: %w", r.Loc.Rank, id, err)
		}
		if agree[0] != -agree[1] {
			delete(byComm, id)
		}
	}
	r.early = byComm
	return nil
}

// nextWindow runs the wait-state exchanges of q's next window of
// instances.
func (r *Replayer) nextWindow(q *exchangeQueue) error {
	t := r.Loc.Trace
	n := min(len(q.events), collWindow)
	if n == 0 {
		return fmt.Errorf("replay: more collectives on communicator %d than counted before the walk", q.id)
	}
	if len(q.window) < n {
		q.window, q.ptrs = make([]exchange, n), make([]*exchange, n)
	}
	xs := q.ptrs[:n]
	for j, e := range q.events[:n] {
		i := int(e)
		x := &q.window[j]
		if err := x.init(t, i, ClassOf(t.Collective(i).Op), r.collBegin(i), q.comm.Rank(), q.comm.Size()); err != nil {
			return r.errorf(i, err)
		}
		xs[j] = x
	}
	q.events = q.events[n:]
	var err error
	if r.buf, err = runExchanges(q.comm, xs, r.buf); err == nil && r.Bus.synced {
		q.synced, err = syncedLists(r.Loc.env, q.id, q.n, q.comm, xs)
	}
	if err != nil {
		return fmt.Errorf("replay: rank %d: the collectives on communicator %d do not match across its members: %w", r.Loc.Rank, q.id, err)
	}
	q.xs = xs
	q.n++
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
	w := r.Loc.World
	x := &exchange{synced: -1, event: i, class: CollBarrier, me: w.Rank()}
	x.coll.My, x.coll.End = TimeRank{Time: r.ctx.EnterTime(i), Rank: x.me}, r.Loc.Trace.Time(i)
	x.wants[roundFirst] = true // as a barrier: everyone synchronises
	if err := r.exchangeNow(w, x); err != nil {
		return err
	}
	r.use(x)
	return nil
}
