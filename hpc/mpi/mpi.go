//go:build mpi

// Package mpi binds the MPI calls scout's replay needs, through cgo.
// github.com/sbromberger/gompi starts and stops MPI; this package adds
// what gompi lacks or does not expose: communicator handles of our own,
// non-blocking sends with test and cancel, MAXLOC/MINLOC reductions and
// scans on (double, int) pairs, and gathers of byte buffers.
//
// It is built only with the "mpi" build tag and needs an MPI library
// (OpenMPI: apt-get install libopenmpi-dev openmpi-bin).
package mpi

/*
#cgo pkg-config: ompi
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

typedef struct { double time; int rank; } scout_double_int;

static MPI_Comm scout_world(void) { return MPI_COMM_WORLD; }
static MPI_Comm scout_null(void) { return MPI_COMM_NULL; }
static MPI_Datatype scout_double_int_type(void) { return MPI_DOUBLE_INT; }
static MPI_Datatype scout_byte(void) { return MPI_BYTE; }
static MPI_Datatype scout_double(void) { return MPI_DOUBLE; }
static MPI_Datatype scout_u64(void) { return MPI_UINT64_T; }
static MPI_Op scout_maxloc(void) { return MPI_MAXLOC; }
static MPI_Op scout_minloc(void) { return MPI_MINLOC; }
static MPI_Op scout_sum(void) { return MPI_SUM; }
static MPI_Op scout_max(void) { return MPI_MAX; }
static MPI_Op scout_min(void) { return MPI_MIN; }
static MPI_Op scout_bor(void) { return MPI_BOR; }
static MPI_Request scout_req_null(void) { return MPI_REQUEST_NULL; }
static int scout_undefined(void) { return MPI_UNDEFINED; }

// scout_isend copies buf into C memory and starts a non-blocking send of
// it; *mem receives the copy, to be freed when the request completes.
static int scout_isend(const void *buf, int n, int dest, int tag, MPI_Comm comm, MPI_Request *req, void **mem) {
	void *p = malloc(n > 0 ? n : 1);
	if (!p) return MPI_ERR_NO_MEM;
	if (n > 0) memcpy(p, buf, n);
	*mem = p;
	return MPI_Isend(p, n, MPI_BYTE, dest, tag, comm, req);
}

static int scout_probe_count(int src, int tag, MPI_Comm comm, int *count) {
	MPI_Status st;
	int rc = MPI_Probe(src, tag, comm, &st);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Get_count(&st, MPI_BYTE, count);
}

static int scout_recv(void *buf, int n, int src, int tag, MPI_Comm comm) {
	return MPI_Recv(buf, n, MPI_BYTE, src, tag, comm, MPI_STATUS_IGNORE);
}

static int scout_test(MPI_Request *req, int *flag) {
	return MPI_Test(req, flag, MPI_STATUS_IGNORE);
}

static int scout_wait(MPI_Request *req) {
	return MPI_Wait(req, MPI_STATUS_IGNORE);
}

static int scout_cancel(MPI_Request *req) {
	int rc = MPI_Cancel(req);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Wait(req, MPI_STATUS_IGNORE);
}

static int scout_create(MPI_Comm parent, int n, int *ranks, MPI_Comm *out) {
	MPI_Group pg, g;
	int rc = MPI_Comm_group(parent, &pg);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Group_incl(pg, n, ranks, &g);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Comm_create(parent, g, out);
	MPI_Group_free(&g);
	MPI_Group_free(&pg);
	return rc;
}

static int scout_set_errors_return(MPI_Comm comm) {
	return MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
}

static void scout_error_string(int code, char *buf, int *len) {
	MPI_Error_string(code, buf, len);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	gompi "github.com/sbromberger/gompi"
)

// TimeRank is a (double, int) pair reduced with MAXLOC or MINLOC.
type TimeRank struct {
	Time float64
	Rank int
}

// Op is a reduction operation.
type Op int

// Reduction operations.
const (
	Sum Op = iota
	Max
	Min
	Bor
)

func (o Op) c() C.MPI_Op {
	switch o {
	case Max:
		return C.scout_max()
	case Min:
		return C.scout_min()
	case Bor:
		return C.scout_bor()
	}
	return C.scout_sum()
}

func check(call string, rc C.int) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	var buf [C.MPI_MAX_ERROR_STRING]C.char
	var n C.int
	C.scout_error_string(rc, &buf[0], &n)
	return fmt.Errorf("mpi: %s: %s", call, C.GoStringN(&buf[0], n))
}

var started bool

// Init starts MPI (once per process). MPI calls must come from the
// goroutine that called Init, which stays locked to its OS thread.
func Init() {
	runtime.LockOSThread()
	gompi.Start(false)
	started = true
	C.scout_set_errors_return(C.scout_world())
}

// Finalize ends MPI.
func Finalize() {
	if started {
		gompi.Stop()
		started = false
	}
}

// Abort ends every process of the job with exit code code.
func Abort(code int) { C.MPI_Abort(C.scout_world(), C.int(code)) }

// Comm is an MPI communicator.
type Comm struct {
	c          C.MPI_Comm
	rank, size int
}

func newComm(c C.MPI_Comm) *Comm {
	var r, s C.int
	C.MPI_Comm_rank(c, &r)
	C.MPI_Comm_size(c, &s)
	return &Comm{c: c, rank: int(r), size: int(s)}
}

// World returns MPI_COMM_WORLD.
func World() *Comm { return newComm(C.scout_world()) }

// Rank returns the calling process's rank in c.
func (c *Comm) Rank() int { return c.rank }

// Size returns the number of processes in c.
func (c *Comm) Size() int { return c.size }

// Create makes a communicator of the given ranks of c (collective over
// c). Processes not in ranks get nil.
func (c *Comm) Create(ranks []int) (*Comm, error) {
	rs := make([]C.int, len(ranks)+1)
	for i, r := range ranks {
		rs[i] = C.int(r)
	}
	var out C.MPI_Comm
	if err := check("MPI_Comm_create", C.scout_create(c.c, C.int(len(ranks)), &rs[0], &out)); err != nil {
		return nil, err
	}
	if out == C.scout_null() {
		return nil, nil
	}
	C.scout_set_errors_return(out)
	return newComm(out), nil
}

// Split partitions c by color (negative: not in any part), ordering each
// part by key (MPI_Comm_split).
func (c *Comm) Split(color, key int) (*Comm, error) {
	col := C.int(color)
	if color < 0 {
		col = C.scout_undefined()
	}
	var out C.MPI_Comm
	if err := check("MPI_Comm_split", C.MPI_Comm_split(c.c, col, C.int(key), &out)); err != nil {
		return nil, err
	}
	if out == C.scout_null() {
		return nil, nil
	}
	C.scout_set_errors_return(out)
	return newComm(out), nil
}

// Free releases a communicator made by Create or Split.
func (c *Comm) Free() error {
	if c == nil || c.c == C.scout_world() {
		return nil
	}
	return check("MPI_Comm_free", C.MPI_Comm_free(&c.c))
}

// Request is a pending non-blocking send.
type Request struct {
	r   C.MPI_Request
	mem unsafe.Pointer
}

// Isend starts sending a copy of data to dest; the caller may reuse data
// at once.
func (c *Comm) Isend(dest, tag int, data []byte) (*Request, error) {
	req := &Request{}
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0])
	}
	rc := C.scout_isend(p, C.int(len(data)), C.int(dest), C.int(tag), c.c, &req.r, &req.mem)
	if err := check("MPI_Isend", rc); err != nil {
		C.free(req.mem)
		return nil, err
	}
	return req, nil
}

func (r *Request) release() {
	C.free(r.mem)
	r.mem = nil
}

// Test reports whether the send completed, releasing its buffer if so.
func (r *Request) Test() (bool, error) {
	var flag C.int
	if err := check("MPI_Test", C.scout_test(&r.r, &flag)); err != nil {
		return false, err
	}
	if flag != 0 {
		r.release()
	}
	return flag != 0, nil
}

// Wait blocks until the send completed.
func (r *Request) Wait() error {
	err := check("MPI_Wait", C.scout_wait(&r.r))
	r.release()
	return err
}

// Cancel cancels the send and waits for it to end.
func (r *Request) Cancel() error {
	err := check("MPI_Cancel", C.scout_cancel(&r.r))
	r.release()
	return err
}

// Recv receives the next message from src with tag, of any length.
func (c *Comm) Recv(src, tag int) ([]byte, error) {
	var n C.int
	if err := check("MPI_Probe", C.scout_probe_count(C.int(src), C.int(tag), c.c, &n)); err != nil {
		return nil, err
	}
	buf := make([]byte, int(n)+1)
	if err := check("MPI_Recv", C.scout_recv(unsafe.Pointer(&buf[0]), n, C.int(src), C.int(tag), c.c)); err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// Barrier synchronises all processes of c.
func (c *Comm) Barrier() error { return check("MPI_Barrier", C.MPI_Barrier(c.c)) }

func (c *Comm) loc(v TimeRank, op C.MPI_Op, scan bool) (TimeRank, error) {
	in := C.scout_double_int{time: C.double(v.Time), rank: C.int(v.Rank)}
	var out C.scout_double_int
	var rc C.int
	if scan {
		rc = C.MPI_Scan(unsafe.Pointer(&in), unsafe.Pointer(&out), 1, C.scout_double_int_type(), op, c.c)
	} else {
		rc = C.MPI_Allreduce(unsafe.Pointer(&in), unsafe.Pointer(&out), 1, C.scout_double_int_type(), op, c.c)
	}
	if err := check("MPI_Allreduce/Scan(DOUBLE_INT)", rc); err != nil {
		return TimeRank{}, err
	}
	return TimeRank{float64(out.time), int(out.rank)}, nil
}

// MaxLoc is MPI_Allreduce with MPI_MAXLOC on a (double, int) pair.
func (c *Comm) MaxLoc(v TimeRank) (TimeRank, error) { return c.loc(v, C.scout_maxloc(), false) }

// MinLoc is MPI_Allreduce with MPI_MINLOC on a (double, int) pair.
func (c *Comm) MinLoc(v TimeRank) (TimeRank, error) { return c.loc(v, C.scout_minloc(), false) }

// ScanMaxLoc is MPI_Scan with MPI_MAXLOC on a (double, int) pair.
func (c *Comm) ScanMaxLoc(v TimeRank) (TimeRank, error) { return c.loc(v, C.scout_maxloc(), true) }

// ScanMinLoc is MPI_Scan with MPI_MINLOC on a (double, int) pair.
func (c *Comm) ScanMinLoc(v TimeRank) (TimeRank, error) { return c.loc(v, C.scout_minloc(), true) }

// BcastFloat64 returns root's v on every process.
func (c *Comm) BcastFloat64(root int, v float64) (float64, error) {
	x := C.double(v)
	err := check("MPI_Bcast", C.MPI_Bcast(unsafe.Pointer(&x), 1, C.scout_double(), C.int(root), c.c))
	return float64(x), err
}

// BcastBytes returns root's data on every process.
func (c *Comm) BcastBytes(root int, data []byte) ([]byte, error) {
	n := C.int(len(data))
	if err := check("MPI_Bcast", C.MPI_Bcast(unsafe.Pointer(&n), 1, C.MPI_INT, C.int(root), c.c)); err != nil {
		return nil, err
	}
	buf := make([]byte, int(n)+1)
	if c.rank == root {
		copy(buf, data)
	}
	err := check("MPI_Bcast", C.MPI_Bcast(unsafe.Pointer(&buf[0]), n, C.scout_byte(), C.int(root), c.c))
	return buf[:n], err
}

// AllreduceUint64 reduces v element-wise over all processes.
func (c *Comm) AllreduceUint64(v []uint64, op Op) ([]uint64, error) {
	out := make([]uint64, len(v))
	if len(v) == 0 {
		return out, nil
	}
	err := check("MPI_Allreduce", C.MPI_Allreduce(unsafe.Pointer(&v[0]), unsafe.Pointer(&out[0]), C.int(len(v)), C.scout_u64(), op.c(), c.c))
	return out, err
}

// AllreduceFloat64 reduces v element-wise over all processes.
func (c *Comm) AllreduceFloat64(v []float64, op Op) ([]float64, error) {
	out := make([]float64, len(v))
	if len(v) == 0 {
		return out, nil
	}
	err := check("MPI_Allreduce", C.MPI_Allreduce(unsafe.Pointer(&v[0]), unsafe.Pointer(&out[0]), C.int(len(v)), C.scout_double(), op.c(), c.c))
	return out, err
}

// Gather collects every process's data at root (in rank order); other
// processes get nil.
func (c *Comm) Gather(root int, data []byte) ([][]byte, error) {
	n := C.int(len(data))
	counts := make([]C.int, c.size)
	if err := check("MPI_Gather", C.MPI_Gather(unsafe.Pointer(&n), 1, C.MPI_INT, unsafe.Pointer(&counts[0]), 1, C.MPI_INT, C.int(root), c.c)); err != nil {
		return nil, err
	}
	displs := make([]C.int, c.size)
	total := 0
	for i, k := range counts {
		displs[i] = C.int(total)
		total += int(k)
	}
	recv := make([]byte, total+1)
	send := append(append(make([]byte, 0, len(data)+1), data...), 0) // never empty, for the pointer
	if err := check("MPI_Gatherv", C.MPI_Gatherv(unsafe.Pointer(&send[0]), n, C.scout_byte(),
		unsafe.Pointer(&recv[0]), &counts[0], &displs[0], C.scout_byte(), C.int(root), c.c)); err != nil {
		return nil, err
	}
	if c.rank != root {
		return nil, nil
	}
	out := make([][]byte, c.size)
	for i := range out {
		out[i] = recv[displs[i] : int(displs[i])+int(counts[i])]
	}
	return out, nil
}

// ErrNotMPI reports a process that was not started by an MPI launcher.
var ErrNotMPI = errors.New("mpi: not started by mpirun/srun")
