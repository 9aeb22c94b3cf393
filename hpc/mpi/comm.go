//go:build mpi

package mpi

/*
#include <mpi.h>

typedef struct { double time; int rank; } scout_pair;

static MPI_Comm scout_self(void) { return MPI_COMM_SELF; }
static MPI_Datatype scout_pair_type(void) { return MPI_DOUBLE_INT; }
static MPI_Datatype scout_f64_type(void) { return MPI_DOUBLE; }
static MPI_Datatype scout_u64_type(void) { return MPI_UINT64_T; }
static MPI_Op scout_op(int op) {
	switch (op) {
	case 1: return MPI_SUM;
	case 2: return MPI_MAX;
	case 3: return MPI_MIN;
	case 4: return MPI_BOR;
	case 5: return MPI_MAXLOC;
	case 6: return MPI_MINLOC;
	}
	return MPI_OP_NULL;
}

// scout_reduce runs one reduction: kind 0 Reduce, 1 Allreduce, 2 Scan,
// 3 Exscan.
static int scout_reduce(int kind, void *in, void *out, int n, MPI_Datatype t, int op, int root, MPI_Comm c) {
	switch (kind) {
	case 0: return MPI_Reduce(in, out, n, t, scout_op(op), root, c);
	case 1: return MPI_Allreduce(in, out, n, t, scout_op(op), c);
	case 2: return MPI_Scan(in, out, n, t, scout_op(op), c);
	}
	return MPI_Exscan(in, out, n, t, scout_op(op), c);
}
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"scout/hpc"
)

// Comm returns c as an hpc.Comm, the interface the replay programs
// against. Sends are non-blocking with their buffers released as they
// complete; Finish settles the ones still pending at the end.
func (c *Comm) Comm() *HPC {
	return &HPC{c: c, name: "WORLD", pending: new([]*Request)}
}

// HPC is an MPI communicator behind the hpc.Comm interface. Like an MPI
// communicator, it must be used from the goroutine that called Init.
type HPC struct {
	c       *Comm
	name    string
	pending *[]*Request // shared by all communicators of the process
}

var _ hpc.Comm = (*HPC)(nil)

// Rank returns the calling process's rank in the communicator.
func (h *HPC) Rank() int { return h.c.rank }

// Size returns the number of processes in the communicator.
func (h *HPC) Size() int { return h.c.size }

// Name returns the communicator's name.
func (h *HPC) Name() string { return h.name }

// SetName names the communicator for error messages.
func (h *HPC) SetName(name string) { h.name = name }

func (h *HPC) wrap(c *Comm, name string) *HPC {
	return &HPC{c: c, name: name, pending: h.pending}
}

// Send sends a copy of data without waiting for the receiver.
func (h *HPC) Send(dest, tag int, data []byte) error {
	_, err := h.Isend(dest, tag, data)
	return err
}

// Isend starts sending a copy of data.
func (h *HPC) Isend(dest, tag int, data []byte) (hpc.Request, error) {
	r, err := h.c.Isend(dest, tag, data)
	if err != nil {
		return nil, fmt.Errorf("%s: send to %d (tag %d): %w", h.name, dest, tag, err)
	}
	*h.pending = append(*h.pending, r)
	return r, h.reap()
}

// reap releases the buffers of completed sends.
func (h *HPC) reap() error {
	p := (*h.pending)[:0]
	for _, r := range *h.pending {
		if r.mem == nil { // completed through its own Wait or Test
			continue
		}
		done, err := r.Test()
		if err != nil {
			return err
		}
		if !done {
			p = append(p, r)
		}
	}
	clear((*h.pending)[len(p):])
	*h.pending = p
	return nil
}

// Finish waits until every process got here, then cancels the sends that
// were never received (their receives were not recorded in the trace).
func (h *HPC) Finish() error {
	if err := h.c.Barrier(); err != nil {
		return err
	}
	for _, r := range *h.pending {
		if r.mem == nil {
			continue
		}
		if done, err := r.Test(); err != nil {
			return err
		} else if !done {
			if err := r.Cancel(); err != nil {
				return err
			}
		}
	}
	*h.pending = nil
	return nil
}

// Recv receives the next message from src with tag.
func (h *HPC) Recv(src, tag int) ([]byte, error) {
	if err := h.reap(); err != nil {
		return nil, err
	}
	b, err := h.c.Recv(src, tag)
	if err != nil {
		return nil, fmt.Errorf("%s: receive from %d (tag %d): %w", h.name, src, tag, err)
	}
	return b, nil
}

// Barrier synchronises all processes of the communicator.
func (h *HPC) Barrier() error { return h.c.Barrier() }

// Bcast returns a copy of root's data on every process.
func (h *HPC) Bcast(root int, data []byte) ([]byte, error) { return h.c.BcastBytes(root, data) }

// Gather returns every process's data at root, in rank order.
func (h *HPC) Gather(root int, data []byte) ([][]byte, error) { return h.c.Gather(root, data) }

// Allgather returns every process's data on every process.
func (h *HPC) Allgather(data []byte) ([][]byte, error) {
	parts, err := h.c.Gather(0, data)
	if err != nil {
		return nil, err
	}
	var packed []byte
	if h.c.rank == 0 {
		for _, p := range parts {
			packed = binary.AppendUvarint(packed, uint64(len(p)))
			packed = append(packed, p...)
		}
	}
	packed, err = h.c.BcastBytes(0, packed)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, h.c.size)
	for i := range out {
		n, k := binary.Uvarint(packed)
		if k <= 0 || uint64(len(packed)-k) < n {
			return nil, fmt.Errorf("%s: Allgather: corrupt packed data", h.name)
		}
		out[i] = packed[k : k+int(n) : k+int(n)]
		packed = packed[k+int(n):]
	}
	return out, nil
}

// Reduce combines v element-wise over all processes; the result is on
// root, nil elsewhere.
func (h *HPC) Reduce(root int, op hpc.Op, v hpc.Vector) (hpc.Vector, error) {
	return h.reduce(0, root, op, v)
}

// Allreduce combines v element-wise over all processes.
func (h *HPC) Allreduce(op hpc.Op, v hpc.Vector) (hpc.Vector, error) {
	return h.reduce(1, 0, op, v)
}

// Scan returns the combination of ranks 0..Rank()'s v.
func (h *HPC) Scan(op hpc.Op, v hpc.Vector) (hpc.Vector, error) { return h.reduce(2, 0, op, v) }

// Exscan returns the combination of ranks 0..Rank()-1's v; nil on rank 0.
func (h *HPC) Exscan(op hpc.Op, v hpc.Vector) (hpc.Vector, error) {
	return h.reduce(3, 0, op, v)
}

var reduceNames = [...]string{"MPI_Reduce", "MPI_Allreduce", "MPI_Scan", "MPI_Exscan"}

func (h *HPC) reduce(kind, root int, op hpc.Op, v hpc.Vector) (hpc.Vector, error) {
	n := v.Len()
	nilHere := (kind == 0 && h.c.rank != root) || (kind == 3 && h.c.rank == 0)
	call := func(in, out unsafe.Pointer, t C.MPI_Datatype) error {
		rc := C.scout_reduce(C.int(kind), in, out, C.int(n), t, C.int(op), C.int(root), h.c.c)
		if err := check(reduceNames[kind], rc); err != nil {
			return fmt.Errorf("%s: %v: %w", h.name, op, err)
		}
		return nil
	}
	bad := func() error {
		return fmt.Errorf("%s: %s: operation %v does not apply to %T", h.name, reduceNames[kind], op, v)
	}
	switch x := v.(type) {
	case hpc.Float64s:
		if op != hpc.Sum && op != hpc.Max && op != hpc.Min {
			return nil, bad()
		}
		in, out := append(hpc.Float64s{}, x...), make(hpc.Float64s, n+1)
		in = append(in, 0)
		if err := call(unsafe.Pointer(&in[0]), unsafe.Pointer(&out[0]), C.scout_f64_type()); err != nil || nilHere {
			return nil, err
		}
		return out[:n:n], nil
	case hpc.Uint64s:
		if op != hpc.Sum && op != hpc.Max && op != hpc.Min && op != hpc.Bor {
			return nil, bad()
		}
		in, out := append(hpc.Uint64s{}, x...), make(hpc.Uint64s, n+1)
		in = append(in, 0)
		if err := call(unsafe.Pointer(&in[0]), unsafe.Pointer(&out[0]), C.scout_u64_type()); err != nil || nilHere {
			return nil, err
		}
		return out[:n:n], nil
	case hpc.TimeRanks:
		if op != hpc.MaxLoc && op != hpc.MinLoc {
			return nil, bad()
		}
		in, out := make([]C.scout_pair, n+1), make([]C.scout_pair, n+1)
		for i, p := range x {
			in[i] = C.scout_pair{time: C.double(p.Time), rank: C.int(p.Rank)}
		}
		if err := call(unsafe.Pointer(&in[0]), unsafe.Pointer(&out[0]), C.scout_pair_type()); err != nil || nilHere {
			return nil, err
		}
		res := make(hpc.TimeRanks, n)
		for i := range res {
			res[i] = hpc.TimeRank{Time: float64(out[i].time), Rank: int(out[i].rank)}
		}
		return res, nil
	}
	return nil, fmt.Errorf("%s: %s: unsupported vector type %T", h.name, reduceNames[kind], v)
}

// Split partitions the communicator by color (negative: none), ordering
// each part by key and then rank.
func (h *HPC) Split(color, key int) (hpc.Comm, error) {
	c, err := h.c.Split(color, key)
	if err != nil || c == nil {
		return nil, err
	}
	return h.wrap(c, fmt.Sprintf("%s.split(%d)", h.name, color)), nil
}

// Create makes a communicator of the given ranks; others get nil.
func (h *HPC) Create(members []int) (hpc.Comm, error) {
	c, err := h.c.Create(members)
	if err != nil || c == nil {
		return nil, err
	}
	return h.wrap(c, fmt.Sprintf("%s.create", h.name)), nil
}

// Self returns a communicator holding only the calling process.
func (h *HPC) Self() hpc.Comm { return h.wrap(newComm(C.scout_self()), "SELF") }

// Free releases the communicator; the world and self are never freed.
func (h *HPC) Free() error {
	if h.c.c == C.scout_self() {
		return nil
	}
	return h.c.Free()
}
