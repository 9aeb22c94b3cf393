package hpc

import (
	"fmt"
	"slices"
	"sync"
)

// Collectives of a communicator whose members all run in this process
// (every communicator in-process; a rank's own teams under RunHosted)
// meet in a shared place instead of messages to and from the
// coordinator: each member leaves its call there, and the last to arrive
// checks the calls and computes the result, as the coordinator would (in
// rank order, so results are bit-identical), and hands it to the members
// that wait. A collective then costs one hand-off per waiting member
// instead of two hops through the coordinator
// (BenchmarkInProcessAllreduce, 4 ranks on 2 processors: 2.0-2.1 µs per
// collective before, 0.9-1.6 µs with the meeting and the ranks' turns on
// workers, coop.go). Gathers stay one-way as
// on the wire (see collective): a member that is not the root leaves a
// copy of its data and goes on, so calls of a communicator may be open
// at once; they complete in order, since a member calls them in order.

// meeting is the shared place of a communicator's collectives.
type meeting struct {
	mu    sync.Mutex
	base  int         // call number of open[0]
	open  []*meetCall // the calls not yet complete, from base on
	spare []*meetCall // complete calls, for reuse
	out   reply       // the result of the last complete call (see finish)
}

// meetCall is one open call: the members' calls so far.
type meetCall struct {
	in      []*contrib
	errs    []string
	arrived int
	waiting []int // members waiting for the result
}

type wakeMember struct {
	r *rank
	k key
}

// tagMeet is the internal tag of a meeting's results: a waiting member
// gets them from itself.
const tagMeet = -3

// meets reports whether the communicator's collectives meet here: all
// its members run in this process.
func (c *comm) meets() bool {
	if c.local == 0 {
		c.local = 1
		for _, m := range c.info.members {
			if c.w.ranks[m] == nil {
				c.local = 2
				break
			}
		}
	}
	return c.local == 1
}

// call returns open call seq, made if it is the first member's (n
// members).
func (mt *meeting) call(seq, n int) (*meetCall, error) {
	i := seq - mt.base
	if i < 0 || i > len(mt.open) {
		return nil, fmt.Errorf("hpc: call %d of a meeting whose open calls are %d to %d", seq, mt.base, mt.base+len(mt.open)-1)
	}
	if i == len(mt.open) {
		var call *meetCall
		if k := len(mt.spare); k > 0 {
			call, mt.spare = mt.spare[k-1], mt.spare[:k-1]
		} else {
			call = &meetCall{in: make([]*contrib, n), errs: make([]string, n)}
		}
		mt.open = append(mt.open, call)
	}
	return mt.open[i], nil
}

// meet runs collective call seq of the caller, whose own check gave
// callErr, at the communicator's meeting.
func (c *comm) meet(ct *contrib, seq int, callErr string) (*reply, error) {
	w := c.w
	mt := &c.info.meeting
	n := len(c.info.members)
	oneWay := ct.kind == kGather && callErr == "" && c.rank != ct.root && seq%gatherCredit != gatherCredit-1
	if oneWay {
		ct = c.oneWayCall(ct, seq) // the caller may reuse its data at once
	}
	mt.mu.Lock()
	call, err := mt.call(seq, n)
	if err != nil {
		mt.mu.Unlock()
		return nil, err
	}
	call.in[c.rank], call.errs[c.rank] = ct, callErr
	call.arrived++
	if call.arrived < n {
		if oneWay {
			mt.mu.Unlock()
			return nil, nil
		}
		call.waiting = append(call.waiting, c.rank)
		missing := slices.Index(call.in, nil)
		mt.mu.Unlock()
		m, err := w.await(c.me, wait{key: key{comm: c.info.id, src: c.me.id, tag: tagMeet}, c: c, peer: missing, tag: tagMeet, ct: ct, seq: seq}, nil)
		if err != nil {
			return nil, err
		}
		return m.out, m.err
	}
	// The last to arrive completes the call. Calls complete in order:
	// every member called the ones before.
	if seq != mt.base {
		mt.mu.Unlock()
		return nil, fmt.Errorf("hpc: call %d of comm %s complete before call %d", seq, c.info.name, mt.base)
	}
	var out *reply
	err = c.admit(call.in, call.errs, seq)
	if err == nil {
		out = c.finish(&mt.out, call.in, seq, w.ranks[c.info.members[0]])
	}
	var buf [8]wakeMember
	wake := buf[:0]
	for _, i := range call.waiting {
		m := c.info.members[i]
		wake = append(wake, wakeMember{w.ranks[m], key{comm: c.info.id, src: m, tag: tagMeet}})
	}
	clear(call.in)
	clear(call.errs)
	call.arrived, call.waiting = 0, call.waiting[:0]
	// shifted, not resliced: a slice taken from the front loses that
	// capacity, and appending then reallocated every few calls
	last := copy(mt.open, mt.open[1:])
	mt.open[last] = nil
	mt.open = mt.open[:last]
	mt.base++
	mt.spare = append(mt.spare, call)
	mt.mu.Unlock()
	// (the next call cannot complete before every member that waits
	// has its result: it needs them)
	if err != nil {
		// A member that returns the call's error fails the run; a
		// member woken after that would see the failure first and
		// return the abort instead of the call's error.
		w.deliverAll(wake, message{kind: msgReply, err: err})
	} else {
		for _, wm := range wake {
			w.deliver(wm.r, wm.k, message{kind: msgReply, out: out})
		}
	}
	if oneWay {
		return nil, nil // a failed gather fails on the root
	}
	return out, err
}
