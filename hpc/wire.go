package hpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The wire format of hosted runs. Every Link message is a frame:
//
//	data:     1, uvarint comm, uvarint src, uvarint dst, varint tag, payload
//	exit:     2, varint rank, byte failed[, failure]
//	wake:     3
//	tick:     4 (process 0 to itself: time for a wave of probes)
//	probe:    5, uvarint epoch, byte want state
//	ack:      6, uvarint epoch, byte idle, uvarint alive, sent, recvd, notes
//	deadlock: 7, strings (the state of every rank)
//	end:      8 (process 0 to the others: the run is over everywhere)
//
// src, dst and rank are world ranks. A process sends "exit" to every
// other process when one of its ranks returns; a failed rank's exit
// carries the run's first failure as its process knows it (kind, failed
// rank or culprit, error, state), so that the first exit to arrive fails
// the run alike everywhere. rank -1 reports a process that failed on its
// own (a corrupt message). "wake" goes to the sender itself when its last
// rank has returned. Collective payloads (contributions to the
// coordinator and its replies) are encoded by encodeContrib and
// encodeReply. Integers are varints, floats their IEEE bits, so values
// cross processes bit-exactly.
const (
	frameData byte = iota + 1
	frameExit
	frameWake
	frameTick
	frameProbe
	frameAck
	frameDeadlock
	frameEnd
)

// Error kinds carried by frames and collective replies, so that
// errors.Is works on the receiving side.
const (
	kindPlain byte = iota
	kindMismatch
	kindPanic
	kindDeadlock
	kindAborted
)

var wireKinds = [...]error{kindMismatch: ErrMismatch, kindPanic: ErrPanic,
	kindDeadlock: ErrDeadlock, kindAborted: ErrAborted}

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

type wbuf []byte

func (w wbuf) uv(x uint64) wbuf { return binary.AppendUvarint(w, x) }
func (w wbuf) iv(x int) wbuf    { return binary.AppendVarint(w, int64(x)) }
func (w wbuf) b(x byte) wbuf    { return append(w, x) }
func (w wbuf) flag(x bool) wbuf {
	if x {
		return append(w, 1)
	}
	return append(w, 0)
}
func (w wbuf) bytes(p []byte) wbuf { return append(w.uv(uint64(len(p))), p...) }
func (w wbuf) str(s string) wbuf   { return append(w.uv(uint64(len(s))), s...) }

// ints writes xs as runs of consecutive values (start, length): a
// communicator's member list, which a message carries to every member,
// is then a few bytes, not one varint per member.
func (w wbuf) ints(xs []int) wbuf {
	w = w.uv(uint64(len(xs)))
	for i := 0; i < len(xs); {
		j := i + 1
		for j < len(xs) && xs[j] == xs[j-1]+1 {
			j++
		}
		w = w.iv(xs[i]).uv(uint64(j - i))
		i = j
	}
	return w
}

func (w wbuf) strs(xs []string) wbuf {
	w = w.uv(uint64(len(xs)))
	for _, x := range xs {
		w = w.str(x)
	}
	return w
}

func (w wbuf) vec(v []TimeRank) wbuf {
	w = w.uv(uint64(len(v)))
	for _, p := range v {
		w = wbuf(binary.LittleEndian.AppendUint64(w, math.Float64bits(p.Time))).iv(p.Rank)
	}
	return w
}

func (w wbuf) floats(v []float64) wbuf {
	w = w.uv(uint64(len(v)))
	for _, x := range v {
		w = binary.LittleEndian.AppendUint64(w, math.Float64bits(x))
	}
	return w
}

func (w wbuf) err(e error) wbuf { return w.b(errKind(e)).str(e.Error()) }

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

func (r *rbuf) flag() bool {
	x := r.byte1()
	if x > 1 {
		r.fail()
	}
	return x == 1
}

// n reads a length and checks that at least n*unit bytes follow, so that
// no length field can make a reader allocate more than the frame holds.
func (r *rbuf) n(unit int) int {
	x := r.uv()
	if x > uint64(len(r.b)/unit) {
		r.fail()
		return 0
	}
	return int(x)
}

// bytes returns a fresh, never nil copy of a length-prefixed byte string.
func (r *rbuf) bytes() []byte { return r.bytesInto(nil) }

// bytesInto is bytes into dst's array where it has room.
func (r *rbuf) bytesInto(dst []byte) []byte {
	n := r.n(1)
	out := sized(dst, n)
	if out == nil {
		out = []byte{}
	}
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

// maxInts bounds the ints of a list (ranks of a communicator), which
// runs encode in fewer bytes than they have: a corrupt length cannot make
// a reader allocate more than 8 × maxInts bytes.
const maxInts = 1 << 22

func (r *rbuf) ints() []int { return r.intsLike(nil) }

// intsLike reads a list of ints; when it equals like, it returns like
// (no list of its own: the coordinator of a Create gets every member's
// list, the same as its own).
func (r *rbuf) intsLike(like []int) []int {
	x := r.uv()
	if x > maxInts {
		r.fail()
		return nil
	}
	n := int(x)
	if n == 0 {
		return nil
	}
	var out []int
	same := len(like) == n // out is like[:at] while same
	at := 0
	for at < n && r.err == nil {
		v, k := r.iv(), r.uv()
		if k == 0 || k > uint64(n-at) {
			r.fail()
			break
		}
		for j := range int(k) {
			if same && like[at] != v+j {
				same, out = false, append(make([]int, 0, n), like[:at]...)
			}
			if !same {
				out = append(out, v+j)
			}
			at++
		}
	}
	if same && r.err == nil {
		return like
	}
	return out
}

func (r *rbuf) strs() []string {
	out := make([]string, r.n(1))
	for i := range out {
		out[i] = r.str()
	}
	return out
}

// sized returns n values in dst's array where it has room for them, else
// in a new one.
func sized[T any](dst []T, n int) []T {
	if cap(dst) < n {
		return make([]T, n)
	}
	return dst[:n]
}

// vecInto decodes a vector of TimeRanks into dst's array where it has
// room.
func (r *rbuf) vecInto(dst []TimeRank) []TimeRank {
	v := sized(dst, r.n(9))
	for i := range v {
		if len(r.b) < 8 {
			r.fail()
			return nil
		}
		v[i].Time = math.Float64frombits(binary.LittleEndian.Uint64(r.b))
		r.b = r.b[8:]
		v[i].Rank = r.iv()
	}
	return v
}

// floatsInto decodes a vector of floats into dst's array where it has
// room.
func (r *rbuf) floatsInto(dst []float64) []float64 {
	v := sized(dst, r.n(8))
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(r.b))
		r.b = r.b[8:]
	}
	return v
}

func (r *rbuf) error() error {
	kind, msg := r.byte1(), r.str()
	if kind == kindMismatch {
		return &opError{kind: ErrMismatch, rank: -1, msg: msg}
	}
	return &wireError{msg: msg, kind: kind}
}

// dataHeader bounds the bytes of a data frame before its payload.
const dataHeader = 1 + 4*binary.MaxVarintLen64

// encodeData encodes a data frame for rank dst.
func encodeData(k key, dst int, payload []byte) []byte {
	return appendData(make([]byte, 0, dataHeader+len(payload)), k, dst, payload)
}

// appendData appends a data frame for rank dst to b.
func appendData(b []byte, k key, dst int, payload []byte) []byte {
	w := wbuf(b).b(frameData).uv(k.comm).uv(uint64(k.src)).uv(uint64(dst)).iv(k.tag)
	return append(w, payload...)
}

// decodeData decodes a data frame after its type byte; the payload
// aliases msg.
func decodeData(msg []byte) (key, int, []byte, error) {
	r := &rbuf{b: msg}
	k := key{comm: r.uv(), src: int(r.uv())}
	dst := int(r.uv())
	k.tag = r.iv()
	if r.err != nil {
		return k, 0, nil, r.err
	}
	if r.b == nil {
		return k, dst, []byte{}, nil
	}
	return k, dst, r.b, nil
}

// encodeExit encodes the exit of rank; a failed rank's exit carries the
// run's first failure as its process knows it.
func encodeExit(rank int, failed bool, f *failure) []byte {
	w := wbuf{frameExit}.iv(rank).flag(failed && f != nil)
	if failed && f != nil {
		w = w.flag(f.kind == ErrDeadlock).iv(f.rank).flag(f.cause != nil)
		if f.cause != nil {
			w = w.err(f.cause)
		}
		w = w.strs(f.state)
	}
	return w
}

// decodeExit decodes an exit frame after its type byte.
func decodeExit(msg []byte, n int) (rank int, failed bool, f *failure, err error) {
	r := &rbuf{b: msg}
	rank, failed = r.iv(), r.flag()
	if failed {
		f = &failure{kind: ErrAborted}
		if r.flag() {
			f.kind = ErrDeadlock
		}
		f.rank = r.iv()
		if r.flag() {
			f.cause = r.error()
		}
		if f.state = r.strs(); len(f.state) == 0 {
			f.state = nil
		}
		if (f.kind == ErrAborted && f.cause == nil) || (f.state != nil && len(f.state) != n) {
			r.fail()
		}
	}
	return rank, failed, f, r.err
}

// encodeProbe encodes process 0's probe of a wave.
func encodeProbe(epoch uint64, wantState bool) []byte {
	return wbuf{frameProbe}.uv(epoch).flag(wantState)
}

func decodeProbe(msg []byte) (epoch uint64, wantState bool, err error) {
	r := &rbuf{b: msg}
	epoch, wantState = r.uv(), r.flag()
	return epoch, wantState, r.err
}

// encodeAck encodes a process's answer to probe epoch.
func encodeAck(epoch uint64, a *ack) []byte {
	w := wbuf{frameAck}.uv(epoch).flag(a.idle).uv(uint64(a.alive)).uv(a.sent).uv(a.recvd).uv(uint64(len(a.state)))
	for _, n := range a.state {
		w = w.iv(n.rank).str(n.note).flag(n.coll != nil)
		if n.coll != nil {
			w = w.uv(n.coll.comm).iv(n.coll.seq).ints(n.coll.members)
		}
	}
	return w
}

func decodeAck(msg []byte) (uint64, *ack, error) {
	r := &rbuf{b: msg}
	epoch := r.uv()
	a := &ack{idle: r.flag(), alive: int(r.uv()), sent: r.uv(), recvd: r.uv()}
	for range r.n(3) {
		x := rankNote{rank: r.iv(), note: r.str()}
		if r.flag() {
			x.coll = &collNote{comm: r.uv(), seq: r.iv(), members: r.ints()}
		}
		a.state = append(a.state, x)
	}
	return epoch, a, r.err
}

// encodeStrings encodes a frame of type t holding strings.
func encodeStrings(t byte, xs []string) []byte { return wbuf{t}.strs(xs) }

func decodeStrings(msg []byte) ([]string, error) {
	r := &rbuf{b: msg}
	xs := r.strs()
	return xs, r.err
}

// encodeContrib appends to dst the encoding of a member's collective
// call and the error of its own check ("" if valid).
func encodeContrib(dst []byte, ct *contrib, callErr string) []byte {
	return wbuf(dst).b(byte(ct.kind)).iv(ct.root).b(byte(ct.op)).vec(ct.vec).floats(ct.fvec).bytes(ct.data).ints(ct.members).iv(ct.color).str(callErr)
}

// decodeContrib decodes a member's call into ct (nil: a new one), whose
// vectors and data it reuses.
func decodeContrib(msg []byte, like []int, ct *contrib) (*contrib, string, error) {
	r := &rbuf{b: msg}
	if ct == nil {
		ct = &contrib{}
	}
	*ct = contrib{kind: collKind(r.byte1()), root: r.iv(), op: Op(r.byte1()), vec: r.vecInto(ct.vec), fvec: r.floatsInto(ct.fvec),
		data: r.bytesInto(ct.data), members: r.intsLike(like), color: r.iv()}
	callErr := r.str()
	if r.err == nil && (ct.kind < kAllreduce || ct.kind >= numCollKinds) {
		r.fail()
	}
	return ct, callErr, r.err
}

// Reply status bytes.
const (
	replyOK byte = iota
	replyErr
)

// encodeReplyErr encodes a failed collective.
func encodeReplyErr(dst []byte, err error) []byte { return wbuf(dst).b(replyErr).err(err) }

// encodeReply appends to dst the encoding of member i's share of the
// result of a collective.
func encodeReply(dst []byte, kind collKind, i int, out *reply) []byte {
	w := wbuf(dst).b(replyOK)
	switch kind {
	case kAllreduce:
		w = w.vec(out.vec)
	case kScan:
		w = w.vec(out.vecs[i])
	case kAllreduceFloats:
		w = w.floats(out.fvec)
	case kReduceFloats:
		if i == out.root {
			w = w.floats(out.fvec)
		} else {
			w = w.floats(nil)
		}
	case kBcast:
		w = w.bytes(out.data)
	case kGather:
		var datas [][]byte
		if i == out.root {
			datas = out.datas
		}
		w = w.uv(uint64(len(datas)))
		for _, d := range datas {
			w = w.bytes(d)
		}
	case kCreate, kSplit:
		nc := out.comms[i]
		if nc == nil {
			return w.flag(false)
		}
		w = w.flag(true).uv(nc.id).uv(uint64(out.newRank[i])).str(nc.name).ints(nc.members)
	}
	return w
}

// decodeReply decodes member i's reply into res (nil: a new one), whose
// vectors and data it reuses; a failed collective returns its error.
func decodeReply(kind collKind, i int, msg []byte, res *reply) (*reply, error) {
	r := &rbuf{b: msg}
	if r.byte1() == replyErr {
		err := r.error()
		if r.err != nil {
			return nil, r.err
		}
		return nil, err
	}
	if res == nil {
		res = &reply{}
	}
	*res = reply{member: true, vec: res.vec[:0], fvec: res.fvec[:0], data: res.data[:0]}
	switch kind {
	case kAllreduce, kScan:
		res.vec = r.vecInto(res.vec)
	case kAllreduceFloats, kReduceFloats:
		res.fvec = r.floatsInto(res.fvec)
	case kBcast:
		res.data = r.bytesInto(res.data)
	case kGather:
		for range r.n(1) {
			res.datas = append(res.datas, r.bytes())
		}
	case kCreate, kSplit:
		if r.flag() {
			res.comm = &commInfo{id: r.uv()}
			res.rank = int(r.uv())
			res.comm.name, res.comm.members = r.str(), r.ints()
		}
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w (reply to %s)", r.err, collNames[kind])
	}
	return res, nil
}
