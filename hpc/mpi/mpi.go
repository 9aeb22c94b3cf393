//go:build mpi

// Package mpi binds the few MPI calls scout needs, through cgo: it
// starts MPI (MPI_Init_thread), github.com/sbromberger/gompi stops it;
// this package adds a
// Link for hosted runs (hpc.RunHosted, which carries the replay), and on
// the world communicator the calls that collect the results: buffered
// sends, receives of any length, barrier, broadcast and gathers of byte
// buffers.
//
// It is built only with the "mpi" build tag and needs an MPI library
// (OpenMPI: apt-get install libopenmpi-dev openmpi-bin).
package mpi

/*
#cgo pkg-config: ompi
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

static MPI_Comm scout_world(void) { return MPI_COMM_WORLD; }
static MPI_Comm scout_null(void) { return MPI_COMM_NULL; }
static MPI_Datatype scout_byte(void) { return MPI_BYTE; }
static int scout_undefined(void) { return MPI_UNDEFINED; }

// scout_isend copies head (hn bytes) and buf (n bytes) into C memory,
// as one message, and starts a non-blocking send of it; *mem receives
// the copy, to be freed when the request completes.
static int scout_isend(const void *head, int hn, const void *buf, int n, int dest, int tag, MPI_Comm comm, MPI_Request *req, void **mem) {
	char *p = malloc(hn + n > 0 ? hn + n : 1);
	if (!p) return MPI_ERR_NO_MEM;
	if (hn > 0) memcpy(p, head, hn);
	if (n > 0) memcpy(p + hn, buf, n);
	*mem = p;
	return MPI_Isend(p, hn + n, MPI_BYTE, dest, tag, comm, req);
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

static int scout_sendrecv_count(long long sn, int dest, long long *rn, int src, int tag, MPI_Comm comm) {
	return MPI_Sendrecv(&sn, 1, MPI_LONG_LONG, dest, tag, rn, 1, MPI_LONG_LONG, src, tag, comm, MPI_STATUS_IGNORE);
}

static int scout_sendrecv(void *sbuf, int sn, int dest, void *rbuf, int rn, int src, int tag, MPI_Comm comm) {
	return MPI_Sendrecv(sbuf, sn, MPI_BYTE, dest, tag, rbuf, rn, MPI_BYTE, src, tag, comm, MPI_STATUS_IGNORE);
}

static int scout_test(MPI_Request *req, int *flag) {
	return MPI_Test(req, flag, MPI_STATUS_IGNORE);
}

static int scout_cancel(MPI_Request *req) {
	int rc = MPI_Cancel(req);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Wait(req, MPI_STATUS_IGNORE);
}

static int scout_init_thread(int *provided) {
	return MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided);
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
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"runtime"
	"unsafe"

	gompi "github.com/sbromberger/gompi"
)

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

// hwlocBlacklist names the hwloc plugins not to load.
const hwlocBlacklist = "HWLOC_PLUGINS_BLACKLIST"

// ompiPML is Open MPI's choice of point-to-point layer.
const ompiPML = "OMPI_MCA_pml"

// onOneNode reports whether Open MPI's launcher started every process of
// the job on this node.
func onOneNode() bool {
	size, local := os.Getenv("OMPI_COMM_WORLD_SIZE"), os.Getenv("OMPI_COMM_WORLD_LOCAL_SIZE")
	return size != "" && size == local
}

// setDefault sets environment variable name to value unless the user set
// it (to anything, empty included).
func setDefault(name, value string) {
	if _, ok := os.LookupEnv(name); !ok {
		os.Setenv(name, value)
	}
}

// setEnv sets what MPI_Init reads from the environment, where the user
// did not.
func setEnv() {
	// MPI_Init starts hwloc, which loads all its plugins: those for
	// displays (X11), OpenCL devices and XML through libxml2 pull in
	// libraries of 2.8 MiB of resident memory per process (ICU,
	// libstdc++, X11), a twentieth of a process's peak under mpirun -np
	// 4 on the bench traces. MPI needs none of them (hwloc reads XML
	// without libxml2).
	setDefault(hwlocBlacklist, "hwloc_gl,hwloc_opencl,hwloc_xml_libxml")
	if onOneNode() {
		// Open MPI's MPI_Init opens every point-to-point layer it has
		// and lets each probe for its network (Omni-Path, libfabric,
		// UCX): 0.2 s of a process's 0.45 s in MPI_Init on the test
		// machine, for networks that a job on one node does not use.
		// There its shared-memory layer (ob1) is the one chosen anyway.
		setDefault(ompiPML, "ob1")
	}
}

// serialized tells whether MPI provides MPI_THREAD_SERIALIZED: any
// thread may call it, one at a time.
var serialized bool

// Init starts MPI (once per process), asking for MPI_THREAD_SERIALIZED.
// MPI calls must come from the goroutine that called Init, which stays
// locked to its OS thread, but for a Link's sends (Link.Send).
func Init() {
	runtime.LockOSThread()
	setEnv()
	var provided C.int
	if C.scout_init_thread(&provided) != C.MPI_SUCCESS {
		panic("mpi: MPI_Init_thread failed")
	}
	serialized = provided >= C.MPI_THREAD_SERIALIZED
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

// Comm is an MPI communicator. Sends are non-blocking with their buffers
// released as they complete; Finish settles the ones still pending.
type Comm struct {
	c          C.MPI_Comm
	rank, size int
	pending    []*Request
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

// Free releases a communicator made by Split.
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
	return c.isend(dest, tag, nil, data)
}

// isend is Isend of head followed by data, as one message.
func (c *Comm) isend(dest, tag int, head, data []byte) (*Request, error) {
	req := &Request{}
	var h, p unsafe.Pointer
	if len(head) > 0 {
		h = unsafe.Pointer(&head[0])
	}
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0])
	}
	rc := C.scout_isend(h, C.int(len(head)), p, C.int(len(data)), C.int(dest), C.int(tag), c.c, &req.r, &req.mem)
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

// Exchange sends data to dest and returns what src sends this process
// with Exchange and the same tag (MPI_Sendrecv, the size first): a
// pairwise exchange, from and into Go memory, so no copy waits in C
// memory for the receiver as with Send.
func (c *Comm) Exchange(dest, src, tag int, data []byte) ([]byte, error) {
	b, err := c.ExchangeInto(dest, src, tag, data, nil)
	return b[:len(b):len(b)], err
}

// ExchangeInto is Exchange receiving into buf where it has room (so that
// a caller's repeated exchanges take no fresh memory), else into a new
// buffer: pass back what it returned.
func (c *Comm) ExchangeInto(dest, src, tag int, data, buf []byte) ([]byte, error) {
	if len(data) > math.MaxInt32 {
		return nil, fmt.Errorf("exchange with %d and %d (tag %d): %d bytes: too large", dest, src, tag, len(data))
	}
	var n C.longlong
	if err := check("MPI_Sendrecv", C.scout_sendrecv_count(C.longlong(len(data)), C.int(dest), &n, C.int(src), C.int(tag), c.c)); err != nil {
		return nil, fmt.Errorf("exchange with %d and %d (tag %d): %w", dest, src, tag, err)
	}
	if n < 0 || n > math.MaxInt32 {
		return nil, fmt.Errorf("exchange with %d and %d (tag %d): process %d announced %d bytes", dest, src, tag, src, int64(n))
	}
	if cap(buf) < int(n)+1 { // never empty, for the pointer
		buf = make([]byte, int(n)+1)
	}
	buf = buf[:int(n)+1]
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0])
	}
	if err := check("MPI_Sendrecv", C.scout_sendrecv(p, C.int(len(data)), C.int(dest), unsafe.Pointer(&buf[0]), C.int(n), C.int(src), C.int(tag), c.c)); err != nil {
		return nil, fmt.Errorf("exchange with %d and %d (tag %d): %w", dest, src, tag, err)
	}
	return buf[:n], nil
}

// Send sends a copy of data to dest without waiting for the receiver.
func (c *Comm) Send(dest, tag int, data []byte) error {
	r, err := c.Isend(dest, tag, data)
	if err != nil {
		return fmt.Errorf("send to %d (tag %d): %w", dest, tag, err)
	}
	c.pending = append(c.pending, r)
	// Release the buffers of completed sends.
	keep := c.pending[:0]
	for _, r := range c.pending {
		done, err := r.Test()
		if err != nil {
			return err
		}
		if !done {
			keep = append(keep, r)
		}
	}
	clear(c.pending[len(keep):])
	c.pending = keep
	return nil
}

// Finish waits until every process got here, then cancels the sends that
// were never received.
func (c *Comm) Finish() error {
	if err := c.Barrier(); err != nil {
		return err
	}
	for _, r := range c.pending {
		if done, err := r.Test(); err != nil {
			return err
		} else if !done {
			err := check("MPI_Cancel", C.scout_cancel(&r.r))
			r.release()
			if err != nil {
				return err
			}
		}
	}
	c.pending = nil
	return nil
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

// Bcast returns root's data on every process.
func (c *Comm) Bcast(root int, data []byte) ([]byte, error) {
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

// Allgather returns every process's data on every process, in rank
// order: a Gather at rank 0 and a Bcast of the parts.
func (c *Comm) Allgather(data []byte) ([][]byte, error) {
	parts, err := c.Gather(0, data)
	if err != nil {
		return nil, err
	}
	var packed []byte
	for _, p := range parts {
		packed = binary.AppendUvarint(packed, uint64(len(p)))
		packed = append(packed, p...)
	}
	if packed, err = c.Bcast(0, packed); err != nil {
		return nil, err
	}
	out := make([][]byte, 0, c.size)
	for len(packed) > 0 {
		n, k := binary.Uvarint(packed)
		if k <= 0 || n > uint64(len(packed)-k) {
			return nil, fmt.Errorf("mpi: Allgather: corrupt packed data")
		}
		out = append(out, packed[k:k+int(n)])
		packed = packed[k+int(n):]
	}
	if len(out) != c.size {
		return nil, fmt.Errorf("mpi: Allgather: %d parts for %d processes", len(out), c.size)
	}
	return out, nil
}
