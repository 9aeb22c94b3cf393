package replay

import (
	"encoding/binary"
	"fmt"
	"math"

	"scout/hpc"
)

// OverHPC returns the replay's view of an hpc communicator: the
// in-process transport for one machine and tests, or MPI under mpirun.
func OverHPC(c hpc.Comm) World { return hpcComm{c} }

type hpcComm struct{ c hpc.Comm }

func (h hpcComm) Rank() int { return h.c.Rank() }
func (h hpcComm) Size() int { return h.c.Size() }

func (h hpcComm) Send(dest, tag int, data []byte) error { return h.c.Send(dest, tag, data) }
func (h hpcComm) Recv(src, tag int) ([]byte, error)     { return h.c.Recv(src, tag) }

func (h hpcComm) MaxLoc(v TimeRank) (TimeRank, error) { return h.reduce(hpc.MaxLoc, v, false) }
func (h hpcComm) MinLoc(v TimeRank) (TimeRank, error) { return h.reduce(hpc.MinLoc, v, false) }

func (h hpcComm) ScanMaxLoc(v TimeRank) (TimeRank, error) { return h.reduce(hpc.MaxLoc, v, true) }

func (h hpcComm) reduce(op hpc.Op, v TimeRank, scan bool) (TimeRank, error) {
	in := []hpc.TimeRank{{Time: v.Time, Rank: v.Rank}}
	var out []hpc.TimeRank
	var err error
	if scan {
		out, err = hpc.Scan(h.c, op, in)
	} else {
		out, err = hpc.Allreduce(h.c, op, in)
	}
	if err != nil {
		return TimeRank{}, err
	}
	if len(out) != 1 {
		return TimeRank{}, fmt.Errorf("replay: %v over %s gave %d values, want 1", op, h.c.Name(), len(out))
	}
	return TimeRank{Time: out[0].Time, Rank: out[0].Rank}, nil
}

func (h hpcComm) Bcast(root int, v float64) (float64, error) {
	var b []byte
	if h.c.Rank() == root {
		b = binary.LittleEndian.AppendUint64(nil, math.Float64bits(v))
	}
	out, err := h.c.Bcast(root, b)
	if err != nil {
		return 0, err
	}
	if len(out) != 8 {
		return 0, fmt.Errorf("replay: broadcast over %s gave %d bytes, want 8", h.c.Name(), len(out))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(out)), nil
}

func (h hpcComm) Create(members []int) (Comm, error) {
	c, err := h.c.Create(members)
	if err != nil || c == nil {
		return nil, err
	}
	return hpcComm{c}, nil
}
