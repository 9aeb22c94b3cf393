package hpc

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The hosted tests run the same bodies on RunInProcess and on RunHosted
// with several (ranks, processes) shapes and placements, and require the
// same results and errors rank by rank.

// runner runs fn on n ranks, RunInProcess-style.
type runner struct {
	name string
	run  func(n int, fn func(Comm) error) error
}

var inProcess = runner{"in-process", RunInProcess}

// placement names a placement function (see BlockPlacement).
type placement struct {
	name  string
	place func(n, procs int) []int
}

var placements = []placement{
	{"block", BlockPlacement},
	{"round-robin", RoundRobinPlacement},
	{"reversed", func(n, procs int) []int {
		p := BlockPlacement(n, procs)
		for i := range p {
			p[i] = procs - 1 - p[i]
		}
		return p
	}},
	{"lopsided", func(n, procs int) []int { // all on process 0 but one each
		p := make([]int, n)
		for i := range procs - 1 {
			p[n-1-i] = procs - 1 - i
		}
		return p
	}},
}

// hostedShapes are the (N, M) shapes every body runs with.
var hostedShapes = []struct{ n, procs int }{{4, 1}, {4, 2}, {5, 2}, {8, 3}, {4, 4}}

// hostedRunner runs on procs in-memory processes with the given
// placement.
func hostedRunner(procs int, pl placement) runner {
	return runner{fmt.Sprintf("hosted/M=%d/%s", procs, pl.name), func(n int, fn func(Comm) error) error {
		return errors.Join(runHostedMem(pl.place(n, procs), procs, fn)...)
	}}
}

// runHostedMem runs one hosted run on in-memory links and returns every
// process's RunHosted error.
func runHostedMem(place []int, procs int, fn func(Comm) error) []error {
	links := NewMemLinks(procs)
	errs := make([]error, procs)
	var wg sync.WaitGroup
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = RunHosted(links[p], place, fn)
			links[p].Close()
		}()
	}
	wg.Wait()
	return errs
}

// runOn runs fn with r and returns every rank's result and error, and
// the run's error; it fails the test if the run does not end in time.
func runOn[T any](t testing.TB, r runner, n int, fn func(Comm) (T, error)) ([]T, []error, error) {
	t.Helper()
	out, errs := make([]T, n), make([]error, n)
	done := make(chan error, 1)
	go func() {
		done <- r.run(n, func(c Comm) error {
			v, err := fn(c)
			out[c.Rank()], errs[c.Rank()] = v, err
			return err
		})
	}()
	select {
	case err := <-done:
		return out, errs, err
	case <-time.After(runTimeout):
		t.Fatalf("%s: run of %d ranks did not end within %v", r.name, n, runTimeout)
		return nil, nil, nil
	}
}

// errMode says how errors are compared between the runners.
type errMode int

const (
	errExact errMode = iota // same message and kinds
	errKinds                // same sentinel kinds
	errAfter                // same kinds and, unless a mismatch, message from " called "
)

func errSig(err error, mode errMode) string {
	if err == nil {
		return ""
	}
	var kinds []string
	for _, k := range []error{ErrAborted, ErrDeadlock, ErrMismatch, ErrFreed, ErrPanic} {
		if errors.Is(err, k) {
			kinds = append(kinds, k.Error())
		}
	}
	sig := "error[" + strings.Join(kinds, ",") + "]"
	switch mode {
	case errExact:
		sig += " " + err.Error()
	case errAfter:
		// In-process messages name the first member to arrive.
		if i := strings.Index(err.Error(), " called "); i >= 0 && !errors.Is(err, ErrMismatch) {
			sig += err.Error()[i:]
		}
	}
	return sig
}

// compareHosted runs body in-process and hosted with every shape and
// placement, and compares results and errors rank by rank.
func compareHosted[T any](t *testing.T, mode errMode, body func(Comm) (T, error)) {
	t.Helper()
	type ref struct {
		out  []T
		errs []string
		run  bool
	}
	refs := map[int]ref{}
	for _, sh := range hostedShapes {
		want, ok := refs[sh.n]
		if !ok {
			out, errs, runErr := runOn(t, inProcess, sh.n, body)
			want = ref{out: out, run: runErr != nil}
			for _, e := range errs {
				want.errs = append(want.errs, errSig(e, mode))
			}
			refs[sh.n] = want
		}
		for _, pl := range placements {
			r := hostedRunner(sh.procs, pl)
			t.Run(fmt.Sprintf("N=%d/%s", sh.n, r.name), func(t *testing.T) {
				out, errs, runErr := runOn(t, r, sh.n, body)
				if diff := cmp.Diff(want.out, out); diff != "" {
					t.Errorf("results by rank (-in-process +hosted):\n%s", diff)
				}
				var sigs []string
				for _, e := range errs {
					sigs = append(sigs, errSig(e, mode))
				}
				if diff := cmp.Diff(want.errs, sigs); diff != "" {
					t.Errorf("errors by rank (-in-process +hosted):\n%s", diff)
				}
				if (runErr != nil) != want.run {
					t.Errorf("run error %v, in-process failed: %v", runErr, want.run)
				}
			})
		}
	}
}

// transcript records results and errors of a sequence of calls.
type transcript []any

func (tr *transcript) add(v any, err error) {
	switch x := v.(type) {
	case Vector:
		v = vecBits(x)
	case []float64:
		v = vecBits(Float64s(x))
	}
	*tr = append(*tr, v)
	if err != nil {
		*tr = append(*tr, "error: "+err.Error())
	}
}

// vecBits shows float vectors as their bits, so that the comparison is
// bit-exact (NaN, -0).
func vecBits(v Vector) any {
	switch x := v.(type) {
	case Float64s:
		if x == nil {
			return []uint64(nil)
		}
		out := make([]string, len(x))
		for i, f := range x {
			out[i] = fmt.Sprintf("%v/%#x", f, math.Float64bits(f))
		}
		return out
	case TimeRanks:
		out := make([]string, len(x))
		for i, p := range x {
			out[i] = fmt.Sprintf("%v/%#x@%d", p.Time, math.Float64bits(p.Time), p.Rank)
		}
		return out
	}
	return v
}

// collOps runs every collective with every root, operation and vector
// type on c and records the results.
func collOps(c Comm) (transcript, error) {
	me, n := c.Rank(), c.Size()
	var tr transcript
	tr.add(nil, c.Barrier())
	// Values whose sums depend on the order of addition.
	fv := []float64{1 + float64(me)*0.1, -float64(me) / 3, float64(me%3) - 1}
	if me == 0 {
		fv[0] = 1e16
	}
	if me == n-1 {
		fv[2] = math.Copysign(0, -1)
	}
	uv := []uint64{uint64(me*7%5 + 1), 1 << (me % 64), math.MaxUint64 - uint64(me)}
	tv := []TimeRank{{float64(me * 5 / 3 % 3), me}, {1, n - me}, {float64(-me), me}}
	for root := range n {
		b, err := c.Bcast(root, fmt.Appendf(nil, "bcast %d from %d", root, me))
		tr.add(b, err)
		g, err := c.Gather(root, []byte(strings.Repeat("g", (me+root)%3)))
		tr.add(g, err)
		for _, op := range []Op{Sum, Max, Min} {
			r, err := c.Reduce(root, op, Float64s(fv))
			tr.add(r, err)
		}
		for _, op := range []Op{Sum, Max, Min, Bor} {
			r, err := c.Reduce(root, op, Uint64s(uv))
			tr.add(r, err)
		}
		for _, op := range []Op{MaxLoc, MinLoc} {
			r, err := c.Reduce(root, op, TimeRanks(tv))
			tr.add(r, err)
		}
	}
	ag, err := c.Allgather([]byte(strings.Repeat("a", me%3)))
	tr.add(ag, err)
	type red func(Comm, Op, Vector) (Vector, error)
	for _, f := range []red{
		func(c Comm, op Op, v Vector) (Vector, error) { return c.Allreduce(op, v) },
		func(c Comm, op Op, v Vector) (Vector, error) { return c.Scan(op, v) },
		func(c Comm, op Op, v Vector) (Vector, error) { return c.Exscan(op, v) },
	} {
		for _, op := range []Op{Sum, Max, Min} {
			tr.add(f(c, op, Float64s(fv)))
		}
		for _, op := range []Op{Sum, Max, Min, Bor} {
			tr.add(f(c, op, Uint64s(uv)))
		}
		for _, op := range []Op{MaxLoc, MinLoc} {
			tr.add(f(c, op, TimeRanks(tv)))
		}
		tr.add(f(c, Sum, Float64s(nil)))
		tr.add(f(c, Bor, Uint64s{}))
	}
	// The generic wrappers.
	s, err := Allreduce(c, Sum, []float64{fv[0], fv[1]})
	tr.add(s, err)
	e, err := Exscan(c, MaxLoc, []TimeRank{tv[0]})
	tr.add(e, err)
	return tr, nil
}

// TestHostedCollectives runs every collective on the world, on
// communicators made by Split and Create, and on Self.
func TestHostedCollectives(t *testing.T) {
	compareHosted(t, errExact, func(w Comm) ([]transcript, error) {
		me, n := w.Rank(), w.Size()
		var out []transcript
		run := func(c Comm) error {
			if c == nil {
				out = append(out, nil)
				return nil
			}
			tr, err := collOps(c)
			out = append(out, tr)
			return err
		}
		sub, err := w.Split(me%2, -me)
		if err != nil {
			return nil, err
		}
		rev := make([]int, n)
		for i := range rev {
			rev[i] = n - 1 - i
		}
		cr, err := w.Create(rev)
		if err != nil {
			return nil, err
		}
		pair, err := w.Create([]int{n - 1, 0}[:min(n, 2)])
		if err != nil {
			return nil, err
		}
		for _, c := range []Comm{w, sub, cr, pair, w.Self()} {
			if err := run(c); err != nil {
				return nil, err
			}
		}
		return out, nil
	})
}

// TestHostedWorkload runs the determinism workload (point-to-point and
// order-sensitive reductions) hosted.
func TestHostedWorkload(t *testing.T) {
	compareHosted(t, errExact, workload)
}

// TestHostedPointToPoint checks matching by source and tag, the
// non-overtaking order, Send and Isend, self-sends, empty and large
// messages, receives posted before the sends, and no aliasing.
func TestHostedPointToPoint(t *testing.T) {
	compareHosted(t, errExact, func(c Comm) ([]string, error) {
		me, n := c.Rank(), c.Size()
		var got []string
		// Every rank to every rank, three tags, three messages each,
		// Send and Isend alternating; tag 2 carries empty payloads.
		buf := make([]byte, 0, 64)
		for d := range n {
			for i := range 3 {
				for tag := range 3 {
					buf = fmt.Appendf(buf[:0], "%d>%d#%d.%d", me, d, tag, i)
					if tag == 2 {
						buf = buf[:0]
					}
					if (i+tag)%2 == 0 {
						if err := c.Send(d, tag, buf); err != nil {
							return nil, err
						}
						continue
					}
					req, err := c.Isend(d, tag, buf)
					if err != nil {
						return nil, err
					}
					if done, err := req.Test(); !done || err != nil {
						return nil, fmt.Errorf("Test = %v, %v", done, err)
					}
					copy(buf, "XXXXXXXX") // must not reach the receiver
				}
			}
		}
		for s := n - 1; s >= 0; s-- {
			for _, tag := range []int{2, 0, 1} {
				for range 3 {
					b, err := c.Recv(s, tag)
					if err != nil {
						return nil, err
					}
					if b == nil {
						return nil, errors.New("nil payload")
					}
					got = append(got, string(b))
					b = append(b[:0], "scribble"...) // must not reach anybody
					_ = b
				}
			}
		}
		// Receives posted before the sends, in a ring.
		next, prev := (me+1)%n, (me+n-1)%n
		for i := range 3 * n {
			if me == i%n {
				if err := c.Send(next, 100+i, []byte{byte(i)}); err != nil {
					return nil, err
				}
			}
			if me == (i+1)%n {
				b, err := c.Recv(prev, 100+i)
				if err != nil {
					return nil, err
				}
				got = append(got, fmt.Sprint("ring ", b))
			}
		}
		// A large message.
		big := make([]byte, 1<<17)
		for i := range big {
			big[i] = byte(i*7 + me)
		}
		if err := c.Send(prev, 7, big); err != nil {
			return nil, err
		}
		b, err := c.Recv(next, 7)
		if err != nil {
			return nil, err
		}
		got = append(got, fmt.Sprintf("big %d %x", len(b), b[len(b)-8:]))
		return got, nil
	})
}

// TestHostedCommunicators checks the communicators made by Split and
// Create (ranks, sizes, names, members), nested ones, Self, and that
// each has its own message space.
func TestHostedCommunicators(t *testing.T) {
	compareHosted(t, errExact, func(w Comm) ([]any, error) {
		me, n := w.Rank(), w.Size()
		var out []any
		note := func(c Comm, err error) (Comm, error) {
			if err != nil {
				return nil, err
			}
			info, err := describe(c, me)
			out = append(out, info)
			return c, err
		}
		undef := func(color int) int {
			if me%3 == 1 {
				return Undefined
			}
			return color
		}
		half := (n + 1) / 2
		steps := []func() (Comm, error){
			func() (Comm, error) { return w.Split(me%2, -me) },
			func() (Comm, error) { return w.Split(undef(7-me%3), 0) },
			func() (Comm, error) { return w.Split(me, 0) },
			func() (Comm, error) { return w.Create([]int{n - 1, 0}[:min(n, 2)]) },
			func() (Comm, error) { return w.Create([]int{n / 2}) },
			func() (Comm, error) { return w.Create(nil) },
			func() (Comm, error) { return w.Self(), nil },
			func() (Comm, error) { return w.Self().Split(0, 5) },
		}
		for _, step := range steps {
			if _, err := note(step()); err != nil {
				return nil, err
			}
		}
		h, err := note(w.Split(me/half, 0))
		if err != nil {
			return nil, err
		}
		hc, err := note(h.Create([]int{h.Size() - 1, 0}[:min(h.Size(), 2)]))
		if err != nil {
			return nil, err
		}
		if hc != nil {
			if _, err := note(hc.Split(0, -hc.Rank())); err != nil {
				return nil, err
			}
		}
		// Same tags on the world, a sub-communicator and Self.
		sub, err := w.Split(me%2, 0)
		if err != nil {
			return nil, err
		}
		sn, sm := sub.Size(), sub.Rank()
		if err := w.Send((me+1)%n, 0, fmt.Appendf(nil, "world from %d", me)); err != nil {
			return nil, err
		}
		if err := sub.Send((sm+1)%sn, 0, fmt.Appendf(nil, "sub from %d", me)); err != nil {
			return nil, err
		}
		self := w.Self()
		if err := self.Send(0, 0, []byte("self")); err != nil {
			return nil, err
		}
		for _, rc := range []struct {
			c   Comm
			src int
		}{{self, 0}, {sub, (sm + sn - 1) % sn}, {w, (me + n - 1) % n}} {
			b, err := rc.c.Recv(rc.src, 0)
			if err != nil {
				return nil, err
			}
			out = append(out, string(b))
		}
		if w.Self() != sub.Self() || w.Self() != self.Self() {
			return nil, errors.New("Self differs between communicators")
		}
		sub.SetName("renamed")
		out = append(out, sub.Name(), w.Name())
		return out, nil
	})
}

// TestHostedSizeOne runs every collective on Self and size-1
// communicators.
func TestHostedSizeOne(t *testing.T) {
	compareHosted(t, errExact, func(w Comm) ([]transcript, error) {
		one, err := w.Create([]int{w.Size() - 1})
		if err != nil {
			return nil, err
		}
		single, err := w.Split(w.Rank(), 0)
		if err != nil {
			return nil, err
		}
		var out []transcript
		for _, c := range []Comm{w.Self(), one, single} {
			if c == nil {
				continue
			}
			tr, err := collOps(c)
			if err != nil {
				return nil, err
			}
			out = append(out, tr)
		}
		return out, nil
	})
}

var calledBy = regexp.MustCompile(`rank \d+ called`)

// TestHostedCallErrors checks errors that RunInProcess reports
// identically: bad arguments, freed communicators, names in messages.
func TestHostedCallErrors(t *testing.T) {
	compareHosted(t, errExact, func(w Comm) ([]string, error) {
		n := w.Size()
		var out []string
		note := func(err error) {
			if err == nil {
				out = append(out, "ok")
				return
			}
			// In-process messages of invalid collectives name the first
			// member to arrive.
			msg := calledBy.ReplaceAllString(err.Error(), "rank * called")
			out = append(out, fmt.Sprintf("%v (freed=%v)", msg, errors.Is(err, ErrFreed)))
		}
		note(w.Send(n, 0, nil))
		_, err := w.Isend(-1, 0, nil)
		note(err)
		note(w.Send(0, -4, nil))
		_, err = w.Recv(n+2, 0)
		note(err)
		sub, err := w.Create([]int{0, n - 1})
		if err != nil {
			return nil, err
		}
		if sub != nil {
			sub.SetName("app comm 3")
			note(sub.Free())
			note(sub.Send(0, 0, nil))
			note(sub.Barrier())
			_, err = sub.Recv(0, 0)
			note(err)
			_, err = sub.Allreduce(Sum, Float64s{1})
			note(err)
			note(sub.Free())
		}
		note(w.Free())
		note(w.Self().Free())
		// Invalid collective calls fail on every member, and the
		// communicator stays usable.
		_, err = w.Allreduce(Bor, Float64s{1})
		note(err)
		_, err = w.Bcast(n, nil)
		note(err)
		_, err = w.Reduce(0, MaxLoc, nil)
		note(err)
		s, err := Allreduce(w, Sum, []uint64{1})
		out = append(out, fmt.Sprint(s, err))
		return out, nil
	})
}

// TestHostedCollectiveErrors checks mismatched and invalid collectives:
// every member fails, with the same kind of error as in-process.
func TestHostedCollectiveErrors(t *testing.T) {
	tests := []struct {
		name string
		call func(w Comm) error
	}{
		{"create different lists", func(w Comm) error {
			_, err := w.Create([]int{w.Rank(), (w.Rank() + 1) % w.Size()})
			return err
		}},
		{"create duplicate member", func(w Comm) error { _, err := w.Create([]int{1, 1}); return err }},
		{"create member out of range", func(w Comm) error { _, err := w.Create([]int{0, w.Size()}); return err }},
		{"different collectives", func(w Comm) error {
			if w.Rank() == w.Size()-1 {
				return w.Barrier()
			}
			_, err := w.Bcast(0, nil)
			return err
		}},
		{"different roots", func(w Comm) error { _, err := w.Gather(w.Rank()%2, nil); return err }},
		{"different lengths", func(w Comm) error {
			_, err := w.Allreduce(Sum, make(Uint64s, w.Rank()%2))
			return err
		}},
		{"different types", func(w Comm) error {
			v := Vector(Float64s{1})
			if w.Rank() == 1 {
				v = Uint64s{1}
			}
			_, err := w.Scan(Max, v)
			return err
		}},
		{"one bad op", func(w Comm) error {
			op := Sum
			if w.Rank() == 2 {
				op = MaxLoc
			}
			_, err := w.Allreduce(op, Float64s{1})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			compareHosted(t, errAfter, func(w Comm) (string, error) {
				err := tt.call(w)
				// The communicator stays usable. (Returning err would
				// abort the run while the replies of the Allreduce may
				// still be in flight between processes.)
				s, err2 := Allreduce(w, Sum, []uint64{1})
				return errSig(err, errAfter) + fmt.Sprint(s, err2), nil
			})
		})
	}
}

// TestHostedAbort has one rank fail while the others are blocked in
// receives or collectives: every rank returns, the others with
// ErrAborted.
func TestHostedAbort(t *testing.T) {
	modes := []struct {
		name string
		fail func(w Comm) error
		wait func(w Comm, failing int) error
	}{
		{"error, others in Recv", func(Comm) error { return errors.New("boom") },
			func(w Comm, failing int) error { _, err := w.Recv(failing, 0); return err }},
		{"panic, others in Recv", func(Comm) error { panic("boom") },
			func(w Comm, failing int) error { _, err := w.Recv(failing, 0); return err }},
		{"error, others in Barrier", func(Comm) error { return errors.New("boom") },
			func(w Comm, _ int) error { return w.Barrier() }},
		{"error after collectives, others in Allreduce", func(w Comm) error {
			if _, err := w.Allgather([]byte{1}); err != nil {
				return err
			}
			return errors.New("late boom")
		}, func(w Comm, _ int) error {
			if _, err := w.Allgather([]byte{1}); err != nil {
				return err
			}
			_, err := w.Allreduce(Sum, Float64s{1})
			return err
		}},
	}
	for _, m := range modes {
		for _, failing := range []int{0, 1, 3} {
			t.Run(fmt.Sprintf("%s/rank %d", m.name, failing), func(t *testing.T) {
				compareHosted(t, errKinds, func(w Comm) (int, error) {
					if w.Rank() == failing {
						return 0, m.fail(w)
					}
					return 0, m.wait(w, failing)
				})
			})
		}
	}
}

// TestHostedAbortReachesEveryProcess checks that a process whose ranks
// all succeeded still reports another process's failure.
func TestHostedAbortReachesEveryProcess(t *testing.T) {
	const n, procs = 5, 3
	place := []int{0, 0, 1, 1, 2}
	errs := runHostedMemTimeout(t, place, procs, func(w Comm) error {
		if w.Rank() == n-1 {
			time.Sleep(20 * time.Millisecond)
			panic("late failure")
		}
		return nil
	})
	for p, err := range errs {
		if !errors.Is(err, ErrAborted) && !errors.Is(err, ErrPanic) {
			t.Errorf("process %d: error %v, want ErrAborted or ErrPanic", p, err)
		}
		if err == nil || !strings.Contains(err.Error(), "late failure") {
			t.Errorf("process %d: error %v does not name the failure", p, err)
		}
	}
	if !errors.Is(errs[2], ErrPanic) {
		t.Errorf("failing process: error %v, want ErrPanic", errs[2])
	}
	if !errors.Is(errs[0], ErrPanic) {
		t.Errorf("process 0: error %v does not carry the remote ErrPanic", errs[0])
	}
}

func runHostedMemTimeout(t *testing.T, place []int, procs int, fn func(Comm) error) []error {
	t.Helper()
	done := make(chan []error, 1)
	go func() { done <- runHostedMem(place, procs, fn) }()
	select {
	case errs := <-done:
		return errs
	case <-time.After(runTimeout):
		t.Fatalf("hosted run did not end within %v", runTimeout)
		return nil
	}
}

// TestHostedDeadlock checks the deadlocks a hosted run detects: waiting
// for a rank that returned, for itself, or (one process) for each other.
func TestHostedDeadlock(t *testing.T) {
	t.Run("recv from a finished rank", func(t *testing.T) {
		compareHosted(t, errKinds, func(w Comm) (int, error) {
			if w.Rank() == 0 {
				_, err := w.Recv(w.Size()-1, 0)
				return 0, err
			}
			return 0, nil
		})
	})
	t.Run("recv from self", func(t *testing.T) {
		compareHosted(t, errKinds, func(w Comm) (int, error) {
			_, err := w.Recv(w.Rank(), 0)
			return 0, err
		})
	})
	t.Run("collective a rank left", func(t *testing.T) {
		compareHosted(t, errKinds, func(w Comm) (int, error) {
			if w.Rank() == 1 {
				return 0, nil
			}
			return 0, w.Barrier()
		})
	})
	// Deadlocks that span processes, found by process 0's probes.
	t.Run("cycle across processes", func(t *testing.T) {
		compareHosted(t, errKinds, func(w Comm) (int, error) {
			_, err := w.Recv((w.Rank()+1)%w.Size(), 0)
			return 0, err
		})
	})
	t.Run("tag mismatch", func(t *testing.T) {
		compareHosted(t, errKinds, func(w Comm) (int, error) {
			n := w.Size()
			if err := w.Send((w.Rank()+1)%n, 1, []byte{1}); err != nil {
				return 0, err
			}
			_, err := w.Recv((w.Rank()+n-1)%n, 2)
			return 0, err
		})
	})
	t.Run("collectives of different counts", func(t *testing.T) {
		compareHosted(t, errKinds, func(w Comm) (int, error) {
			calls := 2
			if w.Rank() == w.Size()-1 {
				calls = 3
			}
			for range calls {
				if err := w.Barrier(); err != nil {
					return 0, err
				}
			}
			_, err := w.Recv(0, 0) // rank 0 never sends
			return 0, err
		})
	})
	t.Run("cycle on one process", func(t *testing.T) {
		const n = 4
		_, errs, runErr := runOn(t, hostedRunner(1, placements[0]), n, func(w Comm) (int, error) {
			_, err := w.Recv((w.Rank()+1)%n, 0)
			return 0, err
		})
		for r, err := range errs {
			if !errors.Is(err, ErrDeadlock) {
				t.Errorf("rank %d: error %v, want ErrDeadlock", r, err)
			}
		}
		if runErr == nil || !strings.Contains(runErr.Error(), "blocked in Recv(src=") {
			t.Errorf("run error %v does not describe the blocked ranks", runErr)
		}
	})
}

// TestHostedLinkFailure breaks the links while every rank but one waits
// for a message that never comes, and the last one still runs: every rank
// and process fails, naming the link.
func TestHostedLinkFailure(t *testing.T) {
	const n, procs = 5, 2
	links := NewMemLinks(procs)
	place := RoundRobinPlacement(n, procs)
	var blocked sync.WaitGroup
	blocked.Add(n)
	release := make(chan struct{})
	rankErrs := make([]error, n)
	errs := make([]error, procs)
	var wg sync.WaitGroup
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = RunHosted(links[p], place, func(w Comm) error {
				blocked.Done()
				if w.Rank() == 0 { // running: no deadlock yet
					<-release
				}
				_, err := w.Recv((w.Rank()+1)%n, 0)
				rankErrs[w.Rank()] = err
				return err
			})
		}()
	}
	blocked.Wait()
	time.Sleep(10 * time.Millisecond)
	links[0].(*memLink).net.breakAll(errors.New("cable cut"))
	close(release)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(runTimeout):
		t.Fatal("hosted run did not end after the link failed")
	}
	for r, err := range rankErrs {
		if !errors.Is(err, ErrAborted) || !strings.Contains(err.Error(), "cable cut") {
			t.Errorf("rank %d: error %v, want ErrAborted naming the link failure", r, err)
		}
	}
	for p, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "link failed: cable cut") {
			t.Errorf("process %d: error %v, want the link failure", p, err)
		}
	}
}

func TestHostedArgs(t *testing.T) {
	links := NewMemLinks(2)
	fn := func(Comm) error { return nil }
	if err := RunHosted(links[0], nil, fn); err == nil {
		t.Error("RunHosted with no ranks: no error")
	}
	if err := RunHosted(links[0], []int{0, 2}, fn); err == nil {
		t.Error("RunHosted with a rank on process 2 of 2: no error")
	}
}

// TestHostedIdleProcess runs with a process that hosts no rank.
func TestHostedIdleProcess(t *testing.T) {
	want, _, err := runOn(t, inProcess, 4, workload)
	if err != nil {
		t.Fatal(err)
	}
	r := runner{"idle", func(n int, fn func(Comm) error) error {
		return errors.Join(runHostedMem([]int{0, 2, 0, 2}, 3, fn)...)
	}}
	got, _, err := runOn(t, r, 4, workload)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-in-process +hosted):\n%s", diff)
	}
}

func TestPlacements(t *testing.T) {
	got := [][]int{BlockPlacement(8, 3), RoundRobinPlacement(5, 2), BlockPlacement(4, 4)}
	want := [][]int{{0, 0, 0, 1, 1, 1, 2, 2}, {0, 1, 0, 1, 0}, {0, 1, 2, 3}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestMemLinkOrder checks the in-memory link: FIFO per pair, copies,
// errors after Close.
func TestMemLinkOrder(t *testing.T) {
	links := NewMemLinks(3)
	msg := []byte{0}
	for i := range 100 {
		msg[0] = byte(i)
		for _, from := range []int{0, 2} {
			if err := links[from].Send(1, msg); err != nil {
				t.Fatal(err)
			}
		}
	}
	next := map[int]byte{}
	for range 200 {
		from, b, err := links[1].Recv()
		if err != nil {
			t.Fatal(err)
		}
		if b[0] != next[from] {
			t.Fatalf("from %d: got %d, want %d", from, b[0], next[from])
		}
		next[from]++
	}
	links[1].Close()
	if _, _, err := links[1].Recv(); !errors.Is(err, ErrLinkClosed) {
		t.Errorf("Recv after Close: %v", err)
	}
	if err := links[0].Send(1, nil); !errors.Is(err, ErrLinkClosed) {
		t.Errorf("Send to a closed link: %v", err)
	}
}

func BenchmarkHostedAllreduce(b *testing.B) {
	for _, procs := range []int{1, 2} {
		b.Run(fmt.Sprintf("N=8/M=%d", procs), func(b *testing.B) {
			errs := runHostedMem(BlockPlacement(8, procs), procs, func(w Comm) error {
				v := []TimeRank{{float64(w.Rank()), w.Rank()}}
				for i := 0; i < b.N; i++ {
					if _, err := Allreduce(w, MaxLoc, v); err != nil {
						return err
					}
				}
				return nil
			})
			if err := errors.Join(errs...); err != nil {
				b.Fatal(err)
			}
		})
	}
}
