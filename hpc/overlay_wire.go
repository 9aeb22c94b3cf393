package hpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The wire format of hosted runs. Every Link message is a frame:
//
//	data:  1, uvarint comm, uvarint src, uvarint dst, varint tag, payload
//	exit:  2, varint rank, byte status[, varint origin, byte kind, string message[, uvarint n, n strings]]
//	wake:  3
//
// src, dst and rank are virtual world ranks. A process sends "exit" to
// every other process when one of its ranks returns; status says whether
// the rank failed, and how the run failed (then the run's first failure
// follows: the rank that failed first, its error's kind and message). rank -1 reports a process that failed on its
// own (a corrupt message). "wake" goes to the sender itself when its last
// rank has returned. Collective payloads (contributions to the
// coordinator and its replies) are encoded by encodeContrib and
// encodeReply. Integers are varints, floats their IEEE bits, so values
// cross processes bit-exactly.

const (
	frameData byte = iota + 1
	frameExit
	frameWake
	frameTick     // process 0 to itself: time for a wave of probes
	frameProbe    // process 0 to the others: uvarint epoch, byte want state
	frameAck      // answer to a probe (see encodeAck)
	frameDeadlock // process 0 to the others: the state of every rank
	frameEnd      // process 0 to the others: the run is over everywhere
)

// Exit statuses.
const (
	exitOK       byte = iota // returned without error
	exitAborted              // failed; the run aborts
	exitDeadlock             // failed; the run deadlocked
)

// Error kinds carried by abort frames and collective replies, so that
// errors.Is works on the receiving side.
const (
	kindPlain byte = iota
	kindMismatch
	kindPanic
	kindDeadlock
	kindAborted
	kindFreed
)

var wireKinds = [...]error{kindMismatch: ErrMismatch, kindPanic: ErrPanic,
	kindDeadlock: ErrDeadlock, kindAborted: ErrAborted, kindFreed: ErrFreed}

// errKind returns the wire kind of err (the first sentinel it wraps).
func errKind(err error) byte {
	for k, e := range wireKinds {
		if e != nil && errors.Is(err, e) {
			return byte(k)
		}
	}
	return kindPlain
}

// wireError is an error that crossed the wire: its message, wrapping the
// sentinel error of its kind.
type wireError struct {
	msg  string
	kind byte
}

func (e *wireError) Error() string { return e.msg }

func (e *wireError) Unwrap() error {
	if int(e.kind) < len(wireKinds) {
		return wireKinds[e.kind]
	}
	return nil
}

// decodeError rebuilds an error from its kind and message.
func decodeError(kind byte, msg string) error {
	if kind == kindMismatch {
		return &opError{kind: ErrMismatch, rank: -1, msg: msg}
	}
	return &wireError{msg: msg, kind: kind}
}

type wbuf []byte

func (w wbuf) uv(x uint64) wbuf { return binary.AppendUvarint(w, x) }
func (w wbuf) iv(x int) wbuf    { return binary.AppendVarint(w, int64(x)) }
func (w wbuf) b(x byte) wbuf    { return append(w, x) }
func (w wbuf) bytes(p []byte) wbuf {
	return append(w.uv(uint64(len(p))), p...)
}
func (w wbuf) str(s string) wbuf { return append(w.uv(uint64(len(s))), s...) }
func (w wbuf) u64(x uint64) wbuf { return binary.LittleEndian.AppendUint64(w, x) }

func (w wbuf) ints(xs []int) wbuf {
	w = w.uv(uint64(len(xs)))
	for _, x := range xs {
		w = w.iv(x)
	}
	return w
}

// vec encodes a Vector: type code (0 nil, 1 Float64s, 2 Uint64s,
// 3 TimeRanks), length, elements.
func (w wbuf) vec(v Vector) wbuf {
	switch x := v.(type) {
	case Float64s:
		w = w.b(1).uv(uint64(len(x)))
		for _, f := range x {
			w = w.u64(math.Float64bits(f))
		}
	case Uint64s:
		w = w.b(2).uv(uint64(len(x)))
		for _, u := range x {
			w = w.u64(u)
		}
	case TimeRanks:
		w = w.b(3).uv(uint64(len(x)))
		for _, p := range x {
			w = w.u64(math.Float64bits(p.Time)).iv(p.Rank)
		}
	default:
		w = w.b(0)
	}
	return w
}

// rbuf decodes what wbuf encodes; the first error sticks and later reads
// return zero values.
type rbuf struct {
	b   []byte
	err error
}

var errCorrupt = errors.New("hpc: corrupt hosted-run message")

func (r *rbuf) fail() {
	if r.err == nil {
		r.err = errCorrupt
	}
	r.b = nil
}

func (r *rbuf) uv() uint64 {
	x, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[k:]
	return x
}

func (r *rbuf) iv() int {
	x, k := binary.Varint(r.b)
	if k <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[k:]
	return int(x)
}

func (r *rbuf) byte1() byte {
	if len(r.b) < 1 {
		r.fail()
		return 0
	}
	x := r.b[0]
	r.b = r.b[1:]
	return x
}

// n reads a length and checks that at least n*unit bytes follow.
func (r *rbuf) n(unit int) int {
	x := r.uv()
	if x > uint64(len(r.b)/unit) {
		r.fail()
		return 0
	}
	return int(x)
}

// bytes returns a fresh, never nil copy of a length-prefixed byte string.
func (r *rbuf) bytes() []byte {
	n := r.n(1)
	out := make([]byte, n)
	copy(out, r.b[:n])
	r.b = r.b[n:]
	return out
}

func (r *rbuf) str() string {
	n := r.n(1)
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *rbuf) u64() uint64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	x := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return x
}

func (r *rbuf) ints() []int {
	n := r.n(1)
	if n == 0 {
		return nil
	}
	out := make([]int, n)
	for i := range out {
		out[i] = r.iv()
	}
	return out
}

func (r *rbuf) vec() Vector {
	switch r.byte1() {
	case 0:
		return nil
	case 1:
		v := make(Float64s, r.n(8))
		for i := range v {
			v[i] = math.Float64frombits(r.u64())
		}
		return v
	case 2:
		v := make(Uint64s, r.n(8))
		for i := range v {
			v[i] = r.u64()
		}
		return v
	case 3:
		v := make(TimeRanks, r.n(9))
		for i := range v {
			v[i].Time = math.Float64frombits(r.u64())
			v[i].Rank = r.iv()
		}
		return v
	}
	r.fail()
	return nil
}

// encodeData encodes a data frame of the message queue k.
func encodeData(h hostKey, payload []byte) []byte {
	w := make(wbuf, 0, 24+len(payload))
	w = w.b(frameData).uv(h.comm).uv(uint64(h.src)).uv(uint64(h.dst)).iv(h.tag)
	return append(w, payload...)
}

// decodeData decodes a data frame after its type byte; the payload
// aliases msg.
func decodeData(msg []byte) (hostKey, []byte, error) {
	r := &rbuf{b: msg}
	h := hostKey{comm: r.uv(), src: int(r.uv()), dst: int(r.uv()), tag: r.iv()}
	if r.err != nil {
		return h, nil, r.err
	}
	payload := r.b
	if payload == nil {
		payload = []byte{}
	}
	return h, payload, nil
}

// encodeExit encodes the exit of rank; a failed rank's exit carries the
// run's first failure as its process knows it: the failed rank or the
// deadlock's culprit (origin, -1 if none), its error and, for a deadlock,
// the state of every rank if known.
func encodeExit(rank int, status byte, origin int, cause error, state []string) []byte {
	w := wbuf{frameExit}.iv(rank).b(status)
	if status != exitOK {
		w = w.iv(origin).b(errKind(cause)).str(cause.Error())
	}
	if status == exitDeadlock {
		w = w.uv(uint64(len(state)))
		for _, s := range state {
			w = w.str(s)
		}
	}
	return w
}

// decodeExit decodes an exit frame after its type byte; origin is -1 and
// cause nil for exitOK.
func decodeExit(msg []byte) (rank int, status byte, origin int, cause error, state []string, err error) {
	r := &rbuf{b: msg}
	rank, status, origin = r.iv(), r.byte1(), -1
	if status > exitDeadlock {
		r.fail()
	}
	if status != exitOK {
		origin = r.iv()
		kind, text := r.byte1(), r.str()
		cause = decodeError(kind, text)
	}
	if status == exitDeadlock {
		if n := r.n(1); n > 0 {
			state = make([]string, n)
			for i := range state {
				state[i] = r.str()
			}
		}
	}
	return rank, status, origin, cause, state, r.err
}

// encodeContrib encodes a member's collective call and the error of its
// own validation ("" if valid).
func encodeContrib(ct *contrib, callErr string) []byte {
	w := wbuf{byte(ct.kind)}.iv(ct.root).b(byte(ct.op)).vec(ct.vec).bytes(ct.data)
	return w.iv(ct.color).iv(ct.key).ints(ct.members).str(callErr)
}

func decodeContrib(msg []byte) (*contrib, string, error) {
	r := &rbuf{b: msg}
	ct := &contrib{kind: collKind(r.byte1()), root: r.iv(), op: Op(r.byte1()), vec: r.vec(), data: r.bytes(),
		color: r.iv(), key: r.iv(), members: r.ints()}
	callErr := r.str()
	if r.err == nil && (ct.kind < kBarrier || ct.kind > kCreate) {
		r.fail()
	}
	return ct, callErr, r.err
}

// newComm describes a communicator made by Split or Create for one
// member.
type newComm struct {
	id      uint64
	rank    int
	name    string
	members []int // virtual world ranks by rank
}

// Reply status bytes.
const (
	replyOK byte = iota
	replyErr
)

// encodeReplyErr encodes a failed collective.
func encodeReplyErr(err error) []byte {
	return wbuf{replyErr}.b(errKind(err)).str(err.Error())
}

// collOut is a collective's result as the coordinator computes it.
type collOut struct {
	data  []byte     // Bcast
	parts [][]byte   // Gather, Allgather
	vec   Vector     // Reduce, Allreduce
	vecs  []Vector   // Scan, Exscan: by rank
	comms []*newComm // Split, Create: by rank, nil for none
}

// encodeReply encodes member rank's share of the result of a collective
// of the given kind and root.
func encodeReply(kind collKind, root, rank int, out *collOut) []byte {
	w := wbuf{replyOK}
	switch kind {
	case kBcast:
		w = w.bytes(out.data)
	case kGather, kAllgather:
		if kind == kGather && rank != root {
			break
		}
		w = w.uv(uint64(len(out.parts)))
		for _, p := range out.parts {
			w = w.bytes(p)
		}
	case kReduce, kAllreduce:
		if kind == kReduce && rank != root {
			break
		}
		w = w.vec(out.vec)
	case kScan, kExscan:
		w = w.vec(out.vecs[rank])
	case kSplit, kCreate:
		nc := out.comms[rank]
		if nc == nil {
			w = w.b(0)
			break
		}
		w = w.b(1).uv(nc.id).uv(uint64(nc.rank)).str(nc.name).ints(nc.members)
	}
	return w
}

// collResult is one member's decoded result of a collective.
type collResult struct {
	data  []byte
	parts [][]byte
	vec   Vector
	comm  *newComm
}

// decodeReply decodes a reply for member rank; a failed collective
// returns its error.
func decodeReply(kind collKind, root, rank int, msg []byte) (*collResult, error) {
	r := &rbuf{b: msg}
	if r.byte1() == replyErr {
		k, text := r.byte1(), r.str()
		if r.err != nil {
			return nil, r.err
		}
		return nil, decodeError(k, text)
	}
	res := &collResult{}
	switch kind {
	case kBcast:
		res.data = r.bytes()
	case kGather, kAllgather:
		if kind == kGather && rank != root {
			break
		}
		res.parts = make([][]byte, r.n(1))
		for i := range res.parts {
			res.parts[i] = r.bytes()
		}
	case kReduce, kAllreduce, kScan, kExscan:
		if kind == kReduce && rank != root {
			break
		}
		res.vec = r.vec()
	case kSplit, kCreate:
		if r.byte1() == 1 {
			res.comm = &newComm{id: r.uv(), rank: int(r.uv()), name: r.str(), members: r.ints()}
		}
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w (reply to %s)", r.err, collNames[kind])
	}
	return res, nil
}
