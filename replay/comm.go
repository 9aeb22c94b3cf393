package replay

import (
	"encoding/binary"
	"fmt"
	"math"

	"scout/hpc"
)

// TimeRank is a time stamp tagged with the rank that holds it, reduced
// with MAXLOC/MINLOC semantics (ties go to the lowest rank).
type TimeRank = hpc.TimeRank

// The replay talks over hpc.Comm: one communicator per communicator of
// the traced program, rebuilt on the world communicator of all analysis
// ranks (in-process, or hosted by MPI processes). These helpers are the
// collectives it uses.

// maxLoc is the all-reduce MAXLOC of v over c's members.
func (r *Replayer) maxLoc(c hpc.Comm, v TimeRank) (TimeRank, error) {
	return r.reduce1(c, hpc.MaxLoc, v, false)
}

// minLoc is the all-reduce MINLOC of v over c's members.
func (r *Replayer) minLoc(c hpc.Comm, v TimeRank) (TimeRank, error) {
	return r.reduce1(c, hpc.MinLoc, v, false)
}

// scanMaxLoc is the inclusive prefix MAXLOC over ranks 0..c.Rank().
func (r *Replayer) scanMaxLoc(c hpc.Comm, v TimeRank) (TimeRank, error) {
	return r.reduce1(c, hpc.MaxLoc, v, true)
}

// reduce1 reduces one pair, through the replayer's scratch vector (no
// allocation per collective).
func (r *Replayer) reduce1(c hpc.Comm, op hpc.Op, v TimeRank, scan bool) (TimeRank, error) {
	r.one[0] = v
	var out []hpc.TimeRank
	var err error
	if scan {
		out, err = c.Scan(op, r.one[:])
	} else {
		out, err = c.Allreduce(op, r.one[:])
	}
	if err != nil {
		return TimeRank{}, err
	}
	if len(out) != 1 {
		return TimeRank{}, fmt.Errorf("replay: %v over %s gave %d values, want 1", op, c.Name(), len(out))
	}
	return out[0], nil
}

// bcastFloat returns root's v on every member of c.
func (r *Replayer) bcastFloat(c hpc.Comm, root int, v float64) (float64, error) {
	var b []byte
	if c.Rank() == root {
		b = binary.LittleEndian.AppendUint64(r.eight[:0], math.Float64bits(v))
	}
	out, err := c.Bcast(root, b)
	if err != nil {
		return 0, err
	}
	if len(out) != 8 {
		return 0, fmt.Errorf("replay: broadcast over %s gave %d bytes, want 8", c.Name(), len(out))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(out)), nil
}
