package replay

import (
	"fmt"

	"scout/hpc"
	"scout/localtrace"
)

// TimeRank is a time stamp tagged with the rank that holds it, reduced
// with MAXLOC/MINLOC semantics (ties go to the lowest rank).
type TimeRank = hpc.TimeRank

// The replay talks over hpc.Comm: one communicator per communicator of
// the traced program, rebuilt on the world communicator of all analysis
// ranks (in-process, or hosted by MPI processes); the wait-state
// exchange of the collectives is in exchange.go.

// The collective helpers below serve the callbacks at the end of an MPI
// collective (a Collective step, or the forward pass's collective
// topics): they talk over the pass's communicator of the collective,
// and every member must call the same helpers in the same order with
// the same root and vector length, as with MPI (a mismatch fails the
// replay with hpc.ErrMismatch). Vectors are combined in communicator
// rank order, so that results are bit-identical wherever the ranks run.
// A result is shared by the members: read it, do not change it; it is
// valid until the next helper call. On a self communicator they need no
// communication.

// collComm returns the transport communicator of the current
// collective, nil for a self communicator.
func (c *Ctx) collComm() (hpc.Comm, error) {
	if k := c.Event().Kind; k != localtrace.KindCollEnd {
		return nil, fmt.Errorf("replay: event %d (%v) is no collective's end", c.Index, k)
	}
	id := c.Trace.Collective(c.Index).Comm
	if c.Env.IsSelf(id) {
		return nil, nil
	}
	comm, err := c.Loc.comm(c.Pass, id)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	return comm, nil
}

// CollMember returns this location's rank in the current collective's
// communicator and the communicator's size.
func (c *Ctx) CollMember() (rank, size int, err error) {
	comm, err := c.collComm()
	if comm == nil {
		return 0, 1, err
	}
	return comm.Rank(), comm.Size(), nil
}

// BcastFields sends the fields member root put (Put) to every member of
// the current collective's communicator, where they replace the incoming
// payload (Get), the root's own included; it empties the root's outgoing
// payload and leaves the others' alone.
func (c *Ctx) BcastFields(root int) error {
	comm, err := c.collComm()
	if err != nil {
		return err
	}
	me := 0
	if comm != nil {
		me = comm.Rank()
	}
	var data []byte
	if me == root {
		c.wire = c.out.encode(c.wire[:0])
		c.out.reset()
		data = c.wire
	}
	if comm != nil {
		if data, err = comm.Bcast(root, data); err != nil {
			return fmt.Errorf("replay: BcastFields(root=%d): %w", root, err)
		}
	} else if root != 0 {
		return fmt.Errorf("replay: BcastFields(root=%d) on a self communicator", root)
	}
	if err := c.in.decode(data); err != nil {
		return fmt.Errorf("replay: BcastFields(root=%d): %w", root, err)
	}
	return nil
}

// GatherFields sends the fields put so far (Put) to member root of the
// current collective's communicator and empties the outgoing payload.
// On root it returns the number of members, whose fields UseGathered
// then makes the incoming payload one member at a time; the others get
// 0.
func (c *Ctx) GatherFields(root int) (int, error) {
	comm, err := c.collComm()
	if err != nil {
		return 0, err
	}
	return c.gatherFields(comm, root)
}

// gatherFields is GatherFields on comm (nil: a self communicator).
func (c *Ctx) gatherFields(comm hpc.Comm, root int) (int, error) {
	c.wire = c.out.encode(c.wire[:0])
	c.out.reset()
	if comm == nil {
		if root != 0 {
			return 0, fmt.Errorf("replay: GatherFields(root=%d) on a self communicator", root)
		}
		c.gathered = append(c.gathered[:0], c.wire)
		return 1, nil
	}
	var err error
	c.gathered, err = comm.Gather(root, c.wire)
	if err != nil {
		return 0, fmt.Errorf("replay: GatherFields(root=%d): %w", root, err)
	}
	return len(c.gathered), nil
}

// UseGathered makes the fields that member i sent in the last
// GatherFields the incoming payload (Get); on the root only, before its
// next collective.
func (c *Ctx) UseGathered(i int) error {
	if i < 0 || i >= len(c.gathered) {
		return fmt.Errorf("replay: UseGathered(%d) of %d members", i, len(c.gathered))
	}
	if err := c.in.decode(c.gathered[i]); err != nil {
		return fmt.Errorf("replay: fields gathered from member %d: %w", i, err)
	}
	return nil
}

// ReduceSum returns on member root of the current collective's
// communicator the element-wise sum of the members' v, nil on the
// others.
func (c *Ctx) ReduceSum(root int, v []float64) ([]float64, error) { return c.reduce(hpc.Sum, root, v) }

func (c *Ctx) reduce(op hpc.Op, root int, v []float64) ([]float64, error) {
	comm, err := c.collComm()
	if err != nil {
		return nil, err
	}
	if comm == nil {
		if root != 0 {
			return nil, fmt.Errorf("replay: Reduce%v(root=%d) on a self communicator", op, root)
		}
		return v, nil
	}
	out, err := comm.ReduceFloats(op, root, v)
	if err != nil {
		return nil, fmt.Errorf("replay: Reduce%v(root=%d): %w", op, root, err)
	}
	return out, nil
}

// AllreduceSum returns on every member of the current collective's
// communicator the element-wise sum of the members' v.
func (c *Ctx) AllreduceSum(v []float64) ([]float64, error) { return c.allreduce(hpc.Sum, v) }

// AllreduceMax returns on every member of the current collective's
// communicator the element-wise maximum of the members' v: of small
// integers, exactly; of 0/1 flags, their or.
func (c *Ctx) AllreduceMax(v []float64) ([]float64, error) { return c.allreduce(hpc.Max, v) }

// Allgather returns on every member of the current collective's
// communicator the members' v one after another, in rank order (all of
// the same length).
func (c *Ctx) Allgather(v []float64) ([]float64, error) { return c.allreduce(hpc.Concat, v) }

func (c *Ctx) allreduce(op hpc.Op, v []float64) ([]float64, error) {
	comm, err := c.collComm()
	if comm == nil {
		return v, err
	}
	out, err := comm.AllreduceFloats(op, v)
	if err != nil {
		return nil, fmt.Errorf("replay: Allreduce%v: %w", op, err)
	}
	return out, nil
}
