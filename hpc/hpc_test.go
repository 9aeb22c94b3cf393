package hpc

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The tests run the same bodies in-process and hosted, with several
// (ranks, processes) shapes and placements on in-memory links, and
// require the same results and the same errors, rank by rank, to the
// letter: one runtime serves all placements.

// runTimeout bounds every run of the tests.
const runTimeout = 20 * time.Second

// runner runs fn on n ranks.
type runner struct {
	name string
	run  func(n int, fn func(Comm) error) error
}

var inProcess = runner{"in-process", RunInProcess}

var placements = []struct {
	name  string
	place func(n, procs int) []int
}{
	{"block", BlockPlacement},
	{"round-robin", RoundRobinPlacement},
	{"lopsided", func(n, procs int) []int { // all on process 0 but one each
		p := make([]int, n)
		for i := range procs - 1 {
			p[n-1-i] = procs - 1 - i
		}
		return p
	}},
}

// shapes are the (ranks, processes) shapes every body runs with: one
// process, several ranks per process, and one rank per process (whose
// rank drives the link itself).
var shapes = []struct{ n, procs int }{{4, 1}, {4, 2}, {5, 2}, {8, 3}, {4, 4}}

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

// runners returns in-process and every hosted shape for n ranks.
func runners(n int) []runner {
	rs := []runner{inProcess}
	for _, sh := range shapes {
		if sh.n != n {
			continue
		}
		for _, pl := range placements {
			place := pl.place(n, sh.procs)
			rs = append(rs, runner{fmt.Sprintf("hosted/M=%d/%s", sh.procs, pl.name), func(n int, fn func(Comm) error) error {
				return errors.Join(runHostedMem(place, sh.procs, fn)...)
			}})
		}
	}
	return rs
}

// runOn runs fn with r and returns every rank's result and error; it
// fails the test if the run does not end in time.
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
		pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
		t.Fatalf("%s: run of %d ranks did not end within %v", r.name, n, runTimeout)
		return nil, nil, nil
	}
}

// sig is an error as the tests compare it: its sentinel kinds and
// message.
func sig(err error) string {
	if err == nil {
		return ""
	}
	var kinds []string
	for _, k := range []error{ErrAborted, ErrDeadlock, ErrMismatch, ErrPanic} {
		if errors.Is(err, k) {
			kinds = append(kinds, k.Error())
		}
	}
	msg := err.Error()
	if i := strings.Index(msg, "\ngoroutine"); i >= 0 { // a panic's stack
		msg = msg[:i]
	}
	if errors.Is(err, ErrAborted) {
		// Whether a rank was already waiting when the failure came, or
		// called after it, is a matter of timing: compare the cause.
		if i := strings.Index(msg, " failed: "); i >= 0 {
			msg = "aborted by" + msg[strings.LastIndex(msg[:i], ": ")+1:]
		}
	}
	return "[" + strings.Join(kinds, ",") + "] " + msg
}

// same runs body with every runner for n ranks and requires the results
// and errors of each to equal the in-process ones; it returns those.
func same[T any](t *testing.T, n int, body func(Comm) (T, error)) ([]T, []string) {
	t.Helper()
	var want []T
	var wantErrs []string
	for i, r := range runners(n) {
		out, errs, _ := runOn(t, r, n, body)
		sigs := make([]string, n)
		for k, e := range errs {
			sigs[k] = sig(e)
		}
		if i == 0 {
			want, wantErrs = out, sigs
			continue
		}
		if diff := cmp.Diff(want, out); diff != "" {
			t.Errorf("%s: results by rank (-in-process +hosted):\n%s", r.name, diff)
		}
		if diff := cmp.Diff(wantErrs, sigs); diff != "" {
			t.Errorf("%s: errors by rank (-in-process +hosted):\n%s", r.name, diff)
		}
	}
	return want, wantErrs
}

// transcript records results and errors of a sequence of calls.
type transcript []string

func (tr *transcript) add(what string, v any, err error) {
	*tr = append(*tr, fmt.Sprintf("%s: %v", what, v))
	if err != nil {
		*tr = append(*tr, "error: "+sig(err))
	}
}

// workload exercises every call: point-to-point in every direction and
// with several tags, reductions whose results depend on the order of
// combination and on ties, broadcasts, and new communicators.
func workload(c Comm) (transcript, error) {
	var tr transcript
	me, n := c.Rank(), c.Size()
	for d := range n {
		for tag := range 2 {
			for i := range 2 {
				tr.add("send", d, c.Send(d, tag, fmt.Appendf(nil, "%d>%d#%d.%d", me, d, tag, i)))
			}
		}
	}
	for s := n - 1; s >= 0; s-- {
		for tag := 1; tag >= 0; tag-- {
			for range 2 {
				m, err := c.Recv(s, tag)
				tr.add("recv", string(m), err)
			}
		}
	}
	v := []TimeRank{{Time: float64(me % 2), Rank: me}, {Time: -float64(me), Rank: n - me}, {Time: math.Inf(1), Rank: me}}
	for _, op := range []Op{MaxLoc, MinLoc} {
		a, err := c.Allreduce(op, v)
		tr.add("allreduce "+op.String(), a, err)
		s, err := c.Scan(op, v)
		tr.add("scan "+op.String(), s, err)
	}
	b, err := c.Bcast(n-1, fmt.Appendf(nil, "from %d", me))
	tr.add("bcast", string(b), err)
	var evens []int
	for r := n - 1; r >= 0; r -= 2 {
		evens = append(evens, r)
	}
	sub, err := c.Create(evens)
	tr.add("create", sub != nil, err)
	if sub != nil {
		tr.add("sub", fmt.Sprint(sub.Name(), " ", sub.Rank(), "/", sub.Size()), nil)
		x, err := sub.Allreduce(MaxLoc, []TimeRank{{Time: 1, Rank: sub.Rank()}})
		tr.add("sub allreduce", x, err)
		if err := sub.Send((sub.Rank()+1)%sub.Size(), 7, []byte{byte(me)}); err != nil {
			return tr, err
		}
		m, err := sub.Recv((sub.Rank()+sub.Size()-1)%sub.Size(), 7)
		tr.add("sub ring", m, err)
		inner, err := sub.Create([]int{0})
		tr.add("inner", inner != nil, err)
		if inner != nil {
			tr.add("inner name", inner.Name(), nil)
		}
	}
	color := me % 2 // a communicator of the even and one of the odd ranks, the last rank in none
	if me == n-1 {
		color = -1
	}
	part, err := c.Split(color)
	tr.add("split", part != nil, err)
	if part != nil {
		x, err := part.AllreduceFloats(Sum, []float64{float64(me)})
		tr.add("part", fmt.Sprint(part.Rank(), "/", part.Size(), " sum ", x), err)
	}
	b, err = c.Bcast(0, nil)
	tr.add("empty bcast", len(b), err)
	return tr, nil
}

// TestWorkload checks results against values computed by hand for 4
// ranks, and that every placement gives the same transcripts.
func TestWorkload(t *testing.T) {
	for _, n := range []int{4, 5, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			out, errs := same(t, n, workload)
			for r, e := range errs {
				if e != "" {
					t.Errorf("rank %d: %s", r, e)
				}
			}
			if n != 4 {
				return
			}
			want := map[int][]string{
				1: {"allreduce MaxLoc: [{1 1} {-0 4} {+Inf 0}]", "scan MinLoc: [{0 0} {-1 3} {+Inf 0}]",
					"allreduce MinLoc: [{0 0} {-3 1} {+Inf 0}]", "bcast: from 3",
					"sub: WORLD.5 1/2",   // rank 1 is rank 1 of [3 1]
					"part: 0/1 sum [1]"}, // the odd ranks but 3
				2: {"part: 1/2 sum [2]"}, // the even ranks 0 and 2
				3: {"sub: WORLD.5 0/2", "inner name: WORLD.5.1", "split: false"},
			}
			for r, lines := range want {
				for _, line := range lines {
					found := false
					for _, l := range out[r] {
						found = found || l == line
					}
					if !found {
						t.Errorf("rank %d's transcript lacks %q:\n%s", r, line, strings.Join(out[r], "\n"))
					}
				}
			}
			if got := out[2][len(out[2])-1]; got != "empty bcast: 0" {
				t.Errorf("rank 2's last line %q", got)
			}
		})
	}
}

// TestScanPrefixes checks Scan's inclusive prefixes rank by rank.
func TestScanPrefixes(t *testing.T) {
	out, _ := same(t, 5, func(c Comm) ([]TimeRank, error) {
		times := []float64{3, 1, 3, 7, 2}
		return c.Scan(MaxLoc, []TimeRank{{Time: times[c.Rank()], Rank: c.Rank()}})
	})
	want := [][]TimeRank{{{3, 0}}, {{3, 0}}, {{3, 0}}, {{7, 3}}, {{7, 3}}}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// orderSensitive are summands whose sum depends on the order of the
// additions.
var orderSensitive = [3]float64{1e16, 1, -1e16}

// TestFloatReductions: Sum adds in rank order, so that a result that
// depends on the order of the additions is the same in every placement;
// Max is an or on flags; ReduceFloats gives the result to the root only.
func TestFloatReductions(t *testing.T) {
	type result struct {
		Sum, Max, Reduced []float64
		Sub               []float64
		All, Gathered     []float64
		Bytes             [][]byte
	}
	for _, n := range []int{4, 5, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			out, errs := same(t, n, func(c Comm) (result, error) {
				var res result
				me := c.Rank()
				// (1e16 + 1) - 1e16 is 0, 1e16 + (1 - 1e16) is 2: the
				// order of the additions shows
				v := []float64{orderSensitive[me%3], 1, float64(me)}
				if me == 0 {
					v[1] = 0.5
				}
				s, err := c.AllreduceFloats(Sum, v)
				if err != nil {
					return res, err
				}
				res.Sum = slices.Clone(s)
				flags := []float64{0, 0, float64(me % 3)}
				if me == c.Size()-1 {
					flags[0] = 1
				}
				m, err := c.AllreduceFloats(Max, flags)
				if err != nil {
					return res, err
				}
				res.Max = slices.Clone(m)
				r, err := c.ReduceFloats(Sum, 1, []float64{float64(me), 0.1})
				if err != nil {
					return res, err
				}
				res.Reduced = slices.Clone(r)
				a, err := c.AllreduceFloats(Concat, []float64{float64(me)})
				if err != nil {
					return res, err
				}
				res.All = slices.Clone(a)
				g, err := c.ReduceFloats(Concat, 2, []float64{float64(me), -float64(me)})
				if err != nil {
					return res, err
				}
				res.Gathered = slices.Clone(g)
				bs, err := c.Gather(1, bytes.Repeat([]byte{byte(me)}, me))
				if err != nil {
					return res, err
				}
				for _, b := range bs {
					res.Bytes = append(res.Bytes, slices.Clone(b))
				}
				sub, err := c.Create([]int{c.Size() - 1, 0})
				if err != nil || sub == nil {
					return res, err
				}
				r, err = sub.ReduceFloats(Max, 0, []float64{float64(me)})
				res.Sub = slices.Clone(r)
				return res, err
			})
			for r, e := range errs {
				if e != "" {
					t.Errorf("rank %d: %s", r, e)
				}
			}
			// the sums in rank order
			sum, ones, ids, tenths := 0.0, 0.0, 0.0, 0.0
			for r := range n {
				one := 1.0
				if r == 0 {
					one = 0.5
				}
				sum += orderSensitive[r%3]
				ones += one
				ids += float64(r)
				tenths += 0.1
			}
			for r, got := range out {
				want := result{Sum: []float64{sum, ones, ids}, Max: []float64{1, 0, float64(min(n-1, 2))}}
				for k := range n {
					want.All = append(want.All, float64(k))
				}
				if r == 1 {
					want.Reduced = []float64{ids, tenths}
					for k := range n {
						want.Bytes = append(want.Bytes, bytes.Repeat([]byte{byte(k)}, k))
					}
				}
				if r == 2 {
					for k := range n {
						want.Gathered = append(want.Gathered, float64(k), -float64(k))
					}
				}
				if r == n-1 {
					want.Sub = []float64{float64(n - 1)}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("rank %d (-want +got):\n%s", r, diff)
				}
			}
		})
	}
}

// TestGatherOneWay: a Gather's members do not wait for its root, in
// one process and with one rank per process (hosted ranks synchronise).
// Every member but the root gathers, then sends the root a message; the
// root receives those messages before it calls the Gather itself, which
// would deadlock if the members waited for a reply. The root's result
// is every member's data, by rank, though the members reused their
// buffers at once. Gathers to different roots (a mismatch) end in
// errors, not a hang, in every placement.
func TestGatherOneWay(t *testing.T) {
	const n, root = 4, 2
	for _, r := range runners(n) {
		_, errs, _ := runOn(t, r, n, func(c Comm) (int, error) {
			_, err := c.Gather(c.Rank()%2, []byte{1})
			return 0, err
		})
		if errs[0] == nil && errs[1] == nil {
			t.Errorf("%s: gathers to roots 0 and 1 at once: no error on either root", r.name)
		}
		got, errs, err := runOn(t, r, n, func(c Comm) ([]string, error) {
			buf := []byte(fmt.Sprintf("rank %d", c.Rank()))
			if c.Rank() != root {
				if _, err := c.Gather(root, buf); err != nil {
					return nil, err
				}
				copy(buf, "XXXX") // the caller may reuse its buffer at once
				return nil, c.Send(root, 7, []byte("after"))
			}
			for i := range n {
				if i == root {
					continue
				}
				if m, err := c.Recv(i, 7); err != nil || string(m) != "after" {
					return nil, fmt.Errorf("from %d: %q, %v", i, m, err)
				}
			}
			bs, err := c.Gather(root, buf)
			var out []string
			for _, b := range bs {
				out = append(out, string(b))
			}
			return out, err
		})
		if err != nil {
			t.Fatalf("%s: %v (%v)", r.name, err, errs)
		}
		if want := []string{"rank 0", "rank 1", "rank 2", "rank 3"}; !slices.Equal(got[root], want) {
			t.Errorf("%s: root gathered %q, want %q", r.name, got[root], want)
		}
	}
}

// TestGatherCredit: the members of one-way gathers run at most
// gatherCredit calls ahead of the root, and every call's data arrives.
func TestGatherCredit(t *testing.T) {
	const n, root, calls = 4, 1, 3*gatherCredit + 5
	for _, r := range runners(n) {
		var done [n]atomic.Int64 // gathers each rank completed
		got, errs, err := runOn(t, r, n, func(c Comm) (int, error) {
			me := c.Rank()
			if me == root {
				time.Sleep(20 * time.Millisecond) // the members run ahead as far as they may
				for i := range n {
					if d := done[i].Load(); d > gatherCredit-1 {
						return 0, fmt.Errorf("rank %d completed %d gathers before the root's first", i, d)
					}
				}
			}
			gathered := 0
			for k := range calls {
				bs, err := c.Gather(root, []byte{byte(me), byte(k)})
				if err != nil {
					return 0, err
				}
				done[me].Add(1)
				if me != root {
					continue
				}
				for i, b := range bs {
					if !bytes.Equal(b, []byte{byte(i), byte(k)}) {
						return 0, fmt.Errorf("call %d: rank %d's data %v", k, i, b)
					}
				}
				gathered++
			}
			return gathered, nil
		})
		if err != nil {
			t.Fatalf("%s: %v (%v)", r.name, err, errs)
		}
		if got[root] != calls {
			t.Errorf("%s: the root gathered %d times, want %d", r.name, got[root], calls)
		}
	}
}

// TestCallErrors: invalid arguments and mismatched collectives fail on
// every member alike.
func TestCallErrors(t *testing.T) {
	cases := map[string]func(c Comm) (int, error){
		"recv out of range": func(c Comm) (int, error) { _, err := c.Recv(c.Size(), 0); return 0, err },
		"negative tag":      func(c Comm) (int, error) { return 0, c.Send(0, -1, nil) },
		"bad root":          func(c Comm) (int, error) { _, err := c.Bcast(-1, nil); return 0, err },
		"bad op":            func(c Comm) (int, error) { _, err := c.Allreduce(Op(9), nil); return 0, err },
		"float op on pairs": func(c Comm) (int, error) { _, err := c.Allreduce(Sum, nil); return 0, err },
		"pair op on floats": func(c Comm) (int, error) { _, err := c.AllreduceFloats(MaxLoc, nil); return 0, err },
		"bad reduce root":   func(c Comm) (int, error) { _, err := c.ReduceFloats(Sum, 4, nil); return 0, err },
		"float length mismatch": func(c Comm) (int, error) {
			_, err := c.AllreduceFloats(Sum, make([]float64, c.Rank()%2))
			return 0, err
		},
		"reduce root mismatch": func(c Comm) (int, error) {
			_, err := c.ReduceFloats(Max, c.Rank()%2, []float64{1})
			return 0, err
		},
		"member twice": func(c Comm) (int, error) {
			_, err := c.Create([]int{0, 0})
			return 0, err
		},
		"mismatch": func(c Comm) (int, error) {
			if c.Rank() == 2 {
				_, err := c.Bcast(0, nil)
				return 0, err
			}
			_, err := c.Allreduce(MaxLoc, []TimeRank{{}})
			return 0, err
		},
		"length mismatch": func(c Comm) (int, error) {
			_, err := c.Allreduce(MinLoc, make([]TimeRank, c.Rank()%2))
			return 0, err
		},
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			// A member may see the failed call's error or, having
			// called later, the abort it caused: both name the call.
			for _, r := range runners(4) {
				_, errs, _ := runOn(t, r, 4, body)
				for k, err := range errs {
					if err == nil || !strings.Contains(err.Error(), "hpc: ") {
						t.Errorf("%s: rank %d: error %v", r.name, k, err)
					}
				}
				if name == "mismatch" && sig(errs[0]) != "[hpc: collective mismatch] hpc: collective mismatch on comm WORLD (call 0): rank 0 called Allreduce(MaxLoc, TimeRanks[1]), rank 2 called Bcast(root=0)" {
					t.Errorf("%s: mismatch error: %s", r.name, sig(errs[0]))
				}
			}
		})
	}
}

// TestDeadlocks: every way a run can get stuck ends in ErrDeadlock on
// every blocked rank, with the same message wherever the ranks run.
func TestDeadlocks(t *testing.T) {
	cases := []struct {
		name string
		body func(c Comm) (int, error)
		want []string // rank 0's message contains these
	}{
		{"recv from a finished rank", func(c Comm) (int, error) {
			if c.Rank() == 0 {
				_, err := c.Recv(c.Size()-1, 0)
				return 0, err
			}
			return 0, nil
		}, []string{"hpc: deadlock: rank 0 blocked in Recv(src=3, tag=0) on comm WORLD; rank 1 exited; rank 2 exited; rank 3 exited"}},
		{"recv from self", func(c Comm) (int, error) {
			_, err := c.Recv(c.Rank(), 0)
			return 0, err
		}, []string{"rank 0 blocked in Recv(src=0, tag=0)"}},
		{"cycle", func(c Comm) (int, error) {
			_, err := c.Recv((c.Rank()+1)%c.Size(), 0)
			return 0, err
		}, []string{"rank 0 blocked in Recv(src=1, tag=0) on comm WORLD; rank 1 blocked in Recv(src=2, tag=0) on comm WORLD"}},
		{"tag mismatch", func(c Comm) (int, error) {
			n := c.Size()
			if err := c.Send((c.Rank()+1)%n, 1, []byte{1}); err != nil {
				return 0, err
			}
			_, err := c.Recv((c.Rank()+n-1)%n, 2)
			return 0, err
		}, []string{"Recv(src=3, tag=2)"}},
		{"collectives of different counts", func(c Comm) (int, error) {
			calls := 2
			if c.Rank() == c.Size()-1 {
				calls = 3
			}
			for range calls {
				if _, err := c.Allreduce(MaxLoc, nil); err != nil {
					return 0, err
				}
			}
			_, err := c.Recv(0, 0)
			return 0, err
		}, []string{"rank 0 blocked in Recv(src=0, tag=0) on comm WORLD; rank 1 blocked in Recv(src=0, tag=0) on comm WORLD; rank 2 blocked in Recv(src=0, tag=0) on comm WORLD; rank 3 blocked in Allreduce(MaxLoc, TimeRanks[0]) on comm WORLD (call 2) waiting for rank 0, 1, 2"}},
		{"collective a rank left", func(c Comm) (int, error) {
			if c.Rank() == 1 {
				return 0, nil
			}
			_, err := c.Bcast(0, nil)
			return 0, err
		}, []string{"rank 0 blocked in Bcast(root=0) on comm WORLD (call 0) waiting for rank 1; rank 1 exited"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := same(t, 4, tc.body)
			for r, e := range errs {
				if e != "" && !strings.HasPrefix(e, "[hpc: deadlock]") {
					t.Errorf("rank %d: %s, want a deadlock", r, e)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(errs[0], w) {
					t.Errorf("rank 0's error %q lacks %q", errs[0], w)
				}
			}
		})
	}
}

// TestAbort: a rank that fails makes every other rank's pending call
// fail with ErrAborted naming the cause, on every process.
func TestAbort(t *testing.T) {
	modes := []struct {
		name string
		fail func(c Comm) error
		wait func(c Comm, failing int) error
	}{
		{"error, others in Recv", func(Comm) error { return errors.New("boom") },
			func(c Comm, failing int) error { _, err := c.Recv(failing, 0); return err }},
		{"panic, others in a collective", func(Comm) error { panic("boom") },
			func(c Comm, _ int) error { _, err := c.Bcast(0, nil); return err }},
		{"error after a collective", func(c Comm) error {
			if _, err := c.Allreduce(MaxLoc, nil); err != nil {
				return err
			}
			return errors.New("late boom")
		}, func(c Comm, _ int) error {
			if _, err := c.Allreduce(MaxLoc, nil); err != nil {
				return err
			}
			_, err := c.Allreduce(MinLoc, nil)
			return err
		}},
	}
	for _, m := range modes {
		for _, failing := range []int{0, 1, 3} {
			t.Run(fmt.Sprintf("%s/rank %d", m.name, failing), func(t *testing.T) {
				_, errs := same(t, 4, func(c Comm) (int, error) {
					if c.Rank() == failing {
						return 0, m.fail(c)
					}
					return 0, m.wait(c, failing)
				})
				for r, e := range errs {
					if r != failing && !strings.HasPrefix(e, "[hpc: aborted") {
						t.Errorf("rank %d: %s, want ErrAborted", r, e)
					}
					if (r != failing || !strings.HasPrefix(m.name, "panic")) && !strings.Contains(e, "boom") {
						t.Errorf("rank %d: %s does not name the cause", r, e)
					}
				}
			})
		}
	}
}

// TestAbortReachesEveryProcess: a process whose ranks all succeeded
// still reports another process's failure.
func TestAbortReachesEveryProcess(t *testing.T) {
	errs := runHostedMem([]int{0, 0, 1, 1, 2}, 3, func(c Comm) error {
		if c.Rank() == 4 {
			time.Sleep(20 * time.Millisecond)
			panic("late failure")
		}
		return nil
	})
	for p, err := range errs {
		if !errors.Is(err, ErrPanic) || !strings.Contains(err.Error(), "late failure") {
			t.Errorf("process %d: error %v, want the remote panic", p, err)
		}
	}
}

// TestLinkFailure breaks the links while ranks wait and one still runs:
// every rank and process fails, naming the link.
func TestLinkFailure(t *testing.T) {
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
			errs[p] = RunHosted(links[p], place, func(c Comm) error {
				blocked.Done()
				if c.Rank() == 0 { // running: no deadlock yet
					<-release
				}
				_, err := c.Recv((c.Rank()+1)%n, 0)
				rankErrs[c.Rank()] = err
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
		if !errors.Is(err, ErrAborted) || !errors.Is(err, ErrLinkFailed) || !strings.Contains(err.Error(), "cable cut") {
			t.Errorf("rank %d: error %v, want ErrAborted naming the link failure", r, err)
		}
	}
	for p, err := range errs {
		if !errors.Is(err, ErrLinkFailed) {
			t.Errorf("process %d: error %v, want the link failure", p, err)
		}
	}
}

// TestIdleProcess runs with a process that hosts no rank.
func TestIdleProcess(t *testing.T) {
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

// TestArgs: runs of no ranks or bad placements are refused.
func TestArgs(t *testing.T) {
	fn := func(Comm) error { return nil }
	if err := RunInProcess(0, fn); err == nil {
		t.Error("RunInProcess(0): no error")
	}
	links := NewMemLinks(2)
	if err := RunHosted(links[0], nil, fn); err == nil {
		t.Error("RunHosted with no ranks: no error")
	}
	if err := RunHosted(links[0], []int{0, 2}, fn); err == nil {
		t.Error("RunHosted with a rank on process 2 of 2: no error")
	}
}

// TestPlacements checks the placement helpers.
func TestPlacements(t *testing.T) {
	if diff := cmp.Diff([]int{0, 0, 1, 1, 2}, BlockPlacement(5, 3)); diff != "" {
		t.Errorf("BlockPlacement(5, 3): %s", diff)
	}
	if diff := cmp.Diff([]int{0, 1, 2, 0, 1}, RoundRobinPlacement(5, 3)); diff != "" {
		t.Errorf("RoundRobinPlacement(5, 3): %s", diff)
	}
}

// FuzzFrames feeds arbitrary frames to a process: a corrupt frame fails
// the run with a clear error, never a panic.
func FuzzFrames(f *testing.F) {
	f.Add(encodeData(key{comm: 0, src: 1, tag: 3}, 0, []byte("x")))
	f.Add(encodeExit(1, true, &failure{kind: ErrDeadlock, rank: -1, state: []string{"a", "b"}}))
	f.Add(encodeAck(1, &ack{idle: true, alive: 1, state: []rankNote{{rank: 1, note: "n", coll: &collNote{members: []int{0, 1}}}}}))
	f.Add(encodeStrings(frameDeadlock, []string{"a", "b"}))
	f.Add(encodeContrib(nil, &contrib{kind: kCreate, members: []int{1}}, ""))
	f.Add(encodeContrib(nil, &contrib{kind: kReduceFloats, root: 1, op: Sum, fvec: []float64{1, 2}}, ""))
	f.Fuzz(func(t *testing.T, msg []byte) {
		w := newWorld(NewMemLinks(2)[0], []int{0, 1})
		w.mu.Lock()
		defer w.mu.Unlock()
		w.handle(1, msg)
		decodeContrib(msg, nil, nil)
		decodeContrib(msg, []int{1}, nil)
		for k := range numCollKinds {
			decodeReply(k, 0, msg, nil)
		}
	})
}

// TestRecvOwned: a message received with RecvOwned stays intact when a
// later message arrives after the next Recv (which, after a plain Recv,
// recycles the earlier buffer for it).
func TestRecvOwned(t *testing.T) {
	for _, owned := range []bool{true, false} {
		var kept string
		err := RunInProcess(2, func(c Comm) error {
			if c.Rank() == 0 {
				if err := c.Send(1, 3, []byte("first")); err != nil {
					return err
				}
				if _, err := c.Recv(1, 4); err != nil { // rank 1 holds "first"
					return err
				}
				return c.Send(1, 3, []byte("XXXXX"))
			}
			recv := c.Recv
			if owned {
				recv = c.RecvOwned
			}
			first, err := recv(0, 3)
			if err != nil {
				return err
			}
			if err := c.Send(0, 4, nil); err != nil {
				return err
			}
			if _, err := c.Recv(0, 3); err != nil {
				return err
			}
			kept = string(first)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if owned && kept != "first" {
			t.Errorf("the owned message reads %q after a later receive, want %q", kept, "first")
		}
		if !owned && kept == "first" {
			t.Logf("a plain Recv's buffer was not recycled (the test shows nothing about RecvOwned)")
		}
	}
}

// TestSendOwned: in-process, SendOwned hands the receiver the sender's
// buffer itself (Send a copy); both arrive intact and in order with
// other messages.
func TestSendOwned(t *testing.T) {
	big := bytes.Repeat([]byte("owned"), 1<<12)
	var same, copied bool
	err := RunInProcess(2, func(c Comm) error {
		if c.Rank() == 0 {
			if err := c.Send(1, 3, []byte("before")); err != nil {
				return err
			}
			if err := c.SendOwned(1, 3, big); err != nil {
				return err
			}
			return c.Send(1, 3, big)
		}
		var got [3][]byte
		for i := range got {
			m, err := c.RecvOwned(0, 3)
			if err != nil {
				return err
			}
			got[i] = m
		}
		if string(got[0]) != "before" || !bytes.Equal(got[1], big) || !bytes.Equal(got[2], big) {
			return fmt.Errorf("received %.10q, %.10q, %.10q", got[0], got[1], got[2])
		}
		same, copied = &got[1][0] == &big[0], &got[2][0] != &big[0]
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !same || !copied {
		t.Errorf("SendOwned handed over its buffer: %v, Send copied: %v; want both", same, copied)
	}
}

// TestFreeBuffersBounded: a sender far ahead of its receiver makes a
// buffer per message in flight; received, they go back to the
// receiver's spare buffers, of which it keeps at most maxFree.
func TestFreeBuffersBounded(t *testing.T) {
	const inFlight = 4 * maxFree
	free := -1
	err := RunInProcess(2, func(c Comm) error {
		if c.Rank() == 0 {
			if err := sendNumbered(c, 1, 1, inFlight); err != nil {
				return err
			}
			if err := c.Send(1, 2, nil); err != nil { // all sent
				return err
			}
			return c.Send(1, 3, nil)
		}
		if _, err := c.Recv(0, 2); err != nil {
			return err
		}
		if err := recvNumbered(c, 0, 1, inFlight); err != nil {
			return err
		}
		if _, err := c.Recv(0, 3); err != nil { // hands the last buffer back
			return err
		}
		r := c.(*comm).me
		r.mu.Lock()
		free = len(r.free)
		r.mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if free < 1 || free > maxFree {
		t.Errorf("rank 1 keeps %d spare buffers after %d messages in flight, want 1 to %d", free, inFlight, maxFree)
	}
}

// sendNumbered sends messages 0 to n-1 to rank to with tag, each its
// number in one byte.
func sendNumbered(c Comm, to, tag, n int) error {
	for i := range n {
		if err := c.Send(to, tag, []byte{byte(i)}); err != nil {
			return err
		}
	}
	return nil
}

// recvNumbered receives n messages from rank from with tag and checks
// that they are sendNumbered's, in order.
func recvNumbered(c Comm, from, tag, n int) error {
	for i := range n {
		m, err := c.Recv(from, tag)
		if err != nil {
			return err
		}
		if len(m) != 1 || m[0] != byte(i) {
			return fmt.Errorf("message %d from rank %d reads %v", i, from, m)
		}
	}
	return nil
}

// TestMeetNoAllocs: in-process collectives that meet reuse the
// meeting's list of open calls; a list taken from the front reallocated
// it at every call.
func TestMeetNoAllocs(t *testing.T) {
	const calls = 2000
	var before, after runtime.MemStats
	err := RunInProcess(4, func(c Comm) error {
		v := []float64{float64(c.Rank())}
		run := func(n int) error {
			for range n {
				if _, err := c.AllreduceFloats(Max, v); err != nil {
					return err
				}
			}
			return nil
		}
		if err := run(100); err != nil { // warm up
			return err
		}
		if c.Rank() == 0 {
			runtime.ReadMemStats(&before)
		}
		if err := run(calls); err != nil {
			return err
		}
		if c.Rank() == 0 {
			runtime.ReadMemStats(&after)
		}
		return run(1)
	})
	if err != nil {
		t.Fatal(err)
	}
	// (rank 0 reads between the same two collectives of every member)
	if per := float64(after.Mallocs-before.Mallocs) / calls; per > 0.5 {
		t.Errorf("%.2f allocations per collective, want none", per)
	}
}

// TestIntsRuns: lists of ints travel as runs of consecutive values and
// come back equal; a list equal to the reader's own comes back as that
// list, without a copy.
func TestIntsRuns(t *testing.T) {
	for _, xs := range [][]int{nil, {7}, {0, 1, 2, 3}, {5, 4, 3}, {0, 1, 5, 6, 7, 2, -3, -2}, {1, 1, 2, 2}} {
		enc := wbuf{}.ints(xs)
		r := &rbuf{b: enc}
		got := r.ints()
		if r.err != nil || len(r.b) != 0 || !slices.Equal(got, xs) {
			t.Errorf("%v: decoded %v (%v, %d bytes left)", xs, got, r.err, len(r.b))
		}
		like := slices.Clone(xs)
		r = &rbuf{b: enc}
		if got := r.intsLike(like); len(xs) > 0 && &got[0] != &like[0] {
			t.Errorf("%v: a copy, not the reader's list", xs)
		}
		other := append(slices.Clone(xs), 9)
		r = &rbuf{b: enc}
		if got := r.intsLike(other); !slices.Equal(got, xs) || (len(xs) > 0 && &got[0] == &other[0]) {
			t.Errorf("%v like %v: decoded %v", xs, other, got)
		}
	}
	if n := len(wbuf{}.ints([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})); n > 3 {
		t.Errorf("10 consecutive ints take %d bytes", n)
	}
	// a run longer than the list is corrupt
	r := &rbuf{b: wbuf{}.uv(2).iv(0).uv(3)}
	if r.ints(); r.err == nil {
		t.Error("a run of 3 in a list of 2 decoded")
	}
}

// TestDrain: a rank that drives the link itself and never waits (its
// messages are there when it needs them) still takes in what its
// partners sent ahead, a few frames every drainEvery sends, so that they
// wait in its mailbox rather than in the link's buffers.
func TestDrain(t *testing.T) {
	const ahead, sends = 2000, 5 * drainEvery
	links := NewMemLinks(2)
	box := links[0].(*memLink).net.boxes[0]
	queued := func() int {
		box.mu.Lock()
		defer box.mu.Unlock()
		return box.msgs.Len()
	}
	sent := make(chan struct{})
	var before, after int
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for p := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = RunHosted(links[p], []int{0, 1}, func(c Comm) error {
				if c.Rank() == 1 {
					if err := sendNumbered(c, 0, 1, ahead); err != nil {
						return err
					}
					close(sent)
					for range sends {
						if _, err := c.Recv(0, 2); err != nil {
							return err
						}
					}
					return nil
				}
				<-sent // rank 1's messages are in this process's link
				before = queued()
				for range sends {
					if err := c.Send(1, 2, nil); err != nil {
						return err
					}
				}
				after = queued()
				return recvNumbered(c, 1, 1, ahead)
			})
		}()
	}
	wg.Wait()
	for p, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", p, err)
		}
	}
	// (process 0 receives its probe ticks meanwhile too)
	if want := before - sends/2; before < ahead || after > want {
		t.Errorf("frames in the link: %d before %d sends, %d after, want at most %d", before, sends, after, want)
	}
}

// TestUnshare: Shared gives every call the same value until Unshare
// drops it; the next Shared makes a new one.
func TestUnshare(t *testing.T) {
	out, _ := same(t, 4, func(c Comm) (bool, error) {
		mk := func() any { return new(int) }
		a := c.Shared("k", mk)
		if c.Shared("k", mk) != a {
			return false, errors.New("a second value before Unshare")
		}
		if _, err := c.AllreduceFloats(Sum, []float64{1}); err != nil { // every rank has a
			return false, err
		}
		c.Unshare("k")
		return c.Shared("k", mk) != a, nil
	})
	if diff := cmp.Diff([]bool{true, true, true, true}, out); diff != "" {
		t.Errorf("a new value after Unshare, by rank (-want +got):\n%s", diff)
	}
}

// BenchmarkInProcessHandOffs measures the in-process hand-offs of a
// backward replay's shape: four ranks on a ring, each sending its
// successor a small message and receiving one from its predecessor,
// then handing a small contribution to a Gather's root, which takes
// turns; per hand-off (message or contribution).
func BenchmarkInProcessHandOffs(b *testing.B) {
	const ranks, rounds = 4, 20000
	data := make([]byte, 96)
	for b.Loop() {
		err := RunInProcess(ranks, func(c Comm) error {
			me := c.Rank()
			for i := range rounds {
				if err := c.Send((me+1)%ranks, 1, data); err != nil {
					return err
				}
				if _, err := c.Recv((me+ranks-1)%ranks, 1); err != nil {
					return err
				}
				if _, err := c.Gather(i%ranks, data); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(ranks*rounds*2), "ns/hand-off")
}

// BenchmarkInProcessAllreduce measures an in-process collective of the
// timestamp correction's shape: four ranks reducing two floats, one
// call after another; per collective.
func BenchmarkInProcessAllreduce(b *testing.B) {
	const ranks, rounds = 4, 20000
	for b.Loop() {
		err := RunInProcess(ranks, func(c Comm) error {
			v := []float64{float64(c.Rank()), 1}
			for range rounds {
				if _, err := c.AllreduceFloats(Max, v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rounds, "ns/collective")
}

// TestTurns: in-process ranks take turns on workers; Serial moves the
// callers to the first worker (and lets them go again), where no other
// worker takes them, a worker with nothing to run takes a waiting rank
// from another, and results are those of any schedule.
func TestTurns(t *testing.T) {
	defer func(f func(int) int) { workerCount = f }(workerCount)
	workerCount = func(n int) int { return min(n, 3) }
	const n, rounds = 6, 50
	var world atomic.Pointer[world]
	where := func(c Comm) *worker { // the worker that runs the caller
		world.Store(c.(*comm).w)
		return workerOf(c.(*comm).me)
	}
	work := func(c Comm, tag int) error {
		me := c.Rank()
		for k := range rounds {
			if err := c.Send((me+1)%n, tag, []byte{byte(me), byte(k)}); err != nil {
				return err
			}
			m, err := c.Recv((me+n-1)%n, tag)
			if err != nil {
				return err
			}
			if !bytes.Equal(m, []byte{byte((me + n - 1) % n), byte(k)}) {
				return fmt.Errorf("round %d: got %v", k, m)
			}
			v, err := c.AllreduceFloats(Sum, []float64{float64(me + k)})
			if err != nil {
				return err
			}
			if want := float64(n*(n-1)/2 + n*k); v[0] != want {
				return fmt.Errorf("round %d: sum %g, want %g", k, v[0], want)
			}
		}
		return nil
	}
	err := RunInProcess(n, func(c Comm) error {
		if err := work(c, 1); err != nil {
			return err
		}
		Serial(c, true)
		if got := where(c); got != world.Load().turns.workers[0] {
			return fmt.Errorf("rank %d: serial on worker %p, not the first", c.Rank(), got)
		}
		if err := work(c, 2); err != nil {
			return err
		}
		if got := where(c); got != world.Load().turns.workers[0] {
			return fmt.Errorf("rank %d: serial moved off the first worker", c.Rank())
		}
		Serial(c, false)
		if c.(*comm).me.turn.pinned {
			return fmt.Errorf("rank %d: still kept on the first worker", c.Rank())
		}
		return work(c, 3)
	})
	if err != nil {
		t.Fatal(err)
	}
	if k := len(world.Load().turns.workers); k != 3 {
		t.Errorf("%d workers, want 3", k)
	}
	// Ranks 0 and 1 share the first of two workers and compute without
	// waiting while ranks 2 and 3 wait for them: the second worker
	// takes rank 1 over.
	workerCount = func(n int) int { return 2 }
	var ran [4]*worker
	err = RunInProcess(4, func(c Comm) error {
		if c.Rank() < 2 {
			for until := time.Now().Add(100 * time.Millisecond); time.Now().Before(until); {
			}
			ran[c.Rank()] = where(c)
		}
		_, err := c.AllreduceFloats(Max, []float64{1})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if ran[0] == ran[1] {
		t.Errorf("ranks 0 and 1 both computed on worker %p", ran[0])
	}
}

// workerOf returns the worker that runs (or will run) r.
func workerOf(r *rank) *worker {
	t := r.turn
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.wk
}

// TestTurnsAtOnce: a worker with nothing of its own to run takes a rank
// in lockstep that waits behind a running one on another worker at once
// (stealAfter is an hour here), and the rank goes back to its own worker
// when it is woken after a wait. Ranks 0 and 1 start on the first
// worker, rank 2 on the second; flags, not times, order the steps.
func TestTurnsAtOnce(t *testing.T) {
	defer func(f func(int) int, d time.Duration) { workerCount, stealAfter = f, d }(workerCount, stealAfter)
	workerCount = func(int) int { return 2 }
	stealAfter = time.Hour
	var running0, taken, running2, done1 atomic.Bool
	var r1 atomic.Pointer[rank]
	// where rank 1 ran when taken, where it was made ready when woken
	// next, where it ran then, and its own worker
	var first, woken, back, home *worker
	until := func(what string, cond func() bool) error {
		for end := time.Now().Add(10 * time.Second); !cond(); runtime.Gosched() {
			if time.Now().After(end) {
				return errors.New(what)
			}
		}
		return nil
	}
	parked := func() bool {
		tn := r1.Load().turn
		tn.mu.Lock()
		defer tn.mu.Unlock()
		return tn.parked
	}
	err := RunInProcess(3, func(c Comm) error {
		switch c.Rank() {
		case 0:
			if _, err := c.Recv(1, 0); err != nil { // rank 1 runs first
				return err
			}
			if err := c.Send(1, 1, nil); err != nil { // rank 1 waits behind rank 0
				return err
			}
			running0.Store(true)
			if err := until("rank 1 was not taken while rank 0 ran", taken.Load); err != nil {
				return err
			}
			if err := until("rank 1 did not wait", parked); err != nil {
				return err
			}
			if err := c.Send(2, 2, nil); err != nil {
				return err
			}
			if err := until("rank 2 did not run", running2.Load); err != nil {
				return err
			}
			// both workers are busy: none takes rank 1 meanwhile
			if err := c.Send(1, 3, nil); err != nil {
				return err
			}
			woken = workerOf(r1.Load())
			return nil
		case 1:
			r1.Store(c.(*comm).me)
			home = c.(*comm).me.turn.home
			Lockstep(c, true)
			if err := c.Send(0, 0, nil); err != nil {
				return err
			}
			if _, err := c.Recv(0, 1); err != nil {
				return err
			}
			first = workerOf(c.(*comm).me)
			taken.Store(true)
			if _, err := c.Recv(0, 3); err != nil {
				return err
			}
			back = workerOf(c.(*comm).me)
			done1.Store(true)
			return nil
		default:
			// keeps the second worker busy until rank 0 runs, then
			// leaves it nothing of its own to run
			if err := until("rank 0 did not run", running0.Load); err != nil {
				return err
			}
			if _, err := c.Recv(0, 2); err != nil {
				return err
			}
			running2.Store(true)
			return until("rank 1 did not end", done1.Load)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if first == home {
		t.Errorf("rank 1 ran on its own worker %p, behind rank 0", home)
	}
	if woken != home || back != home {
		t.Errorf("woken, rank 1 was made ready on worker %p and ran on %p, not on its own %p", woken, back, home)
	}
}

// TestDecodeInto: a call or result decoded into the struct of an earlier
// one (its vectors and data reused) equals one decoded afresh, whatever
// the sizes before (an empty vector may be nil or not; a Bcast's data is
// never nil).
func TestDecodeInto(t *testing.T) {
	calls := []*contrib{
		{kind: kAllreduce, root: -1, op: MaxLoc, vec: []TimeRank{{1, 0}, {2, 1}, {3, 2}}},
		{kind: kAllreduceFloats, root: -1, op: Sum, fvec: []float64{1}},
		{kind: kGather, root: 1, data: []byte("some data")},
		{kind: kAllreduce, root: -1, op: MinLoc, vec: []TimeRank{{-1, 4}}},
		{kind: kBcast, root: 0},
		{kind: kReduceFloats, root: 2, op: Max, fvec: []float64{1, 2, 3, 4, 5}},
	}
	opts := cmp.AllowUnexported(contrib{}, reply{})
	var into contrib
	for i, ct := range calls {
		msg := encodeContrib(nil, ct, "")
		want, _, err := decodeContrib(msg, nil, nil)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		got, _, err := decodeContrib(msg, nil, &into)
		if err != nil {
			t.Fatalf("call %d, reused: %v", i, err)
		}
		if diff := cmp.Diff(want, got, opts, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("call %d decoded into the last (-fresh +reused):\n%s", i, diff)
		}
	}
	replies := []struct {
		kind collKind
		out  reply
	}{
		{kAllreduce, reply{vec: []TimeRank{{1, 0}, {2, 1}}}},
		{kBcast, reply{data: []byte("a longer payload")}},
		{kAllreduceFloats, reply{fvec: []float64{1, 2, 3}}},
		{kBcast, reply{data: []byte{}}},
		{kAllreduce, reply{vec: []TimeRank{{5, 3}}}},
		{kAllreduceFloats, reply{fvec: nil}},
	}
	var res reply
	for i, rp := range replies {
		msg := encodeReply(nil, rp.kind, 0, &rp.out)
		want, err := decodeReply(rp.kind, 0, msg, nil)
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		got, err := decodeReply(rp.kind, 0, msg, &res)
		if err != nil {
			t.Fatalf("reply %d, reused: %v", i, err)
		}
		if diff := cmp.Diff(want, got, opts, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("reply %d decoded into the last (-fresh +reused):\n%s", i, diff)
		}
		if rp.kind == kBcast && got.data == nil {
			t.Errorf("reply %d: a Bcast's data is nil", i)
		}
	}
}
