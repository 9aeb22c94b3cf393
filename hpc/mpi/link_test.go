//go:build mpi

package mpi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"scout/hpc"
)

// The link tests run under mpirun with any number of processes (make
// test-mpi uses 4; 2 gives the N=5-on-2 case). MPI calls stay on the
// test's goroutine, locked to its thread, as the other tests of this
// package do: Init ran on the main goroutine, which m.Run leaves idle.

func TestMain(m *testing.M) {
	Init()
	code := m.Run()
	Finalize()
	os.Exit(code)
}

// TestLinkOrder sends from several goroutines to every process and
// checks that each pair of processes keeps its order.
func TestLinkOrder(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w := World()
	l := NewLink(w, 901)
	me, n := l.Proc(), l.Procs()
	const per = 200
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // Send from another goroutine while Recv drives MPI.
		defer wg.Done()
		for i := range per {
			for p := range n {
				msg := fmt.Appendf(nil, "%d>%d#%d", me, p, i)
				if i == per-1 {
					msg = append(msg, make([]byte, 1<<20)...) // beyond eager sizes
				}
				if err := l.Send(p, msg); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	next := make([]int, n)
	for range per * n {
		from, msg, err := l.Recv()
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%d>%d#%d", from, me, next[from])
		if !strings.HasPrefix(string(msg), want) {
			t.Fatalf("from %d: got %.20q, want %q", from, msg, want)
		}
		next[from]++
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Send(0, nil); !errors.Is(err, hpc.ErrLinkClosed) {
		t.Errorf("Send after Close: %v", err)
	}
	if err := w.Barrier(); err != nil {
		t.Fatal(err)
	}
}

// hostedBody exercises every call: point-to-point traffic between every
// pair of ranks, reductions with ties, a broadcast and new communicators.
func hostedBody(c hpc.Comm) []string {
	var out []string
	me, n := c.Rank(), c.Size()
	rec := func(what string, v any, err error) {
		out = append(out, fmt.Sprintf("%s: %v %v", what, v, err))
	}
	for d := range n {
		for tag := range 2 {
			for i := range 2 {
				rec("send", nil, c.Send(d, tag, fmt.Appendf(nil, "%d>%d#%d.%d", me, d, tag, i)))
			}
		}
	}
	for s := n - 1; s >= 0; s-- {
		for tag := 1; tag >= 0; tag-- {
			for range 2 {
				m, err := c.Recv(s, tag)
				rec("recv", string(m), err)
			}
		}
	}
	v := []hpc.TimeRank{{Time: float64(me % 2), Rank: me}, {Time: math.Float64frombits(uint64(me)), Rank: n - me}}
	a, err := c.Allreduce(hpc.MaxLoc, v)
	rec("maxloc", a, err)
	sc, err := c.Scan(hpc.MinLoc, v)
	rec("scan", sc, err)
	b, err := c.Bcast(n-1, []byte{byte(me)})
	rec("bcast", b, err)
	var odd []int
	for r := n - 1; r >= 0; r -= 2 {
		odd = append(odd, r)
	}
	sub, err := c.Create(odd)
	rec("create", sub != nil, err)
	if sub != nil {
		rec("sub", fmt.Sprint(sub.Name(), sub.Rank(), sub.Size()), nil)
		x, err := sub.Allreduce(hpc.MaxLoc, []hpc.TimeRank{{Time: 1, Rank: sub.Rank()}})
		rec("sub maxloc", x, err)
	}
	return out
}

// TestLinkHosted runs hosted bodies with more virtual ranks than
// processes, and as many, and compares every local rank's transcript
// with the in-process run.
func TestLinkHosted(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w := World()
	procs := w.Size()
	type config struct {
		n     int
		place []int
	}
	var configs []config
	for _, n := range []int{procs + 3, procs} {
		configs = append(configs, config{n, hpc.BlockPlacement(n, procs)}, config{n, hpc.RoundRobinPlacement(n, procs)})
	}
	for i, cf := range configs {
		t.Run(fmt.Sprintf("N=%d/%v", cf.n, cf.place), func(t *testing.T) {
			want := make([][]string, cf.n)
			if err := hpc.RunInProcess(cf.n, func(c hpc.Comm) error {
				want[c.Rank()] = hostedBody(c)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			got := make([][]string, cf.n)
			l := NewLink(w, 910+i)
			start := time.Now()
			err := hpc.RunHosted(l, cf.place, func(c hpc.Comm) error {
				got[c.Rank()] = hostedBody(c)
				return nil
			})
			if cerr := l.Close(); cerr != nil {
				t.Error(cerr)
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("process %d: hosted run in %v", w.Rank(), time.Since(start))
			for v, p := range cf.place {
				if p != w.Rank() {
					continue
				}
				if d := cmp.Diff(want[v], got[v]); d != "" {
					t.Errorf("rank %d on process %d: (-in-process +hosted):\n%s", v, p, d)
				}
			}
		})
	}
	if err := w.Barrier(); err != nil {
		t.Fatal(err)
	}
}

// TestLinkHostedAbort has the last virtual rank fail while the others
// wait for it: every process's run ends with an error, the others'
// ranks with ErrAborted.
func TestLinkHostedAbort(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w := World()
	n := w.Size() + 3
	place := hpc.RoundRobinPlacement(n, w.Size())
	l := NewLink(w, 930)
	errs := make([]error, n)
	err := hpc.RunHosted(l, place, func(c hpc.Comm) error {
		var err error
		if c.Rank() == n-1 {
			time.Sleep(10 * time.Millisecond)
			err = errors.New("rank failed on purpose")
		} else {
			_, err = c.Recv(n-1, 0)
		}
		errs[c.Rank()] = err
		return err
	})
	if cerr := l.Close(); cerr != nil {
		t.Error(cerr)
	}
	if err == nil || !strings.Contains(err.Error(), "rank failed on purpose") {
		t.Errorf("process %d: run error %v, want the failure", w.Rank(), err)
	}
	for v, p := range place {
		if p == w.Rank() && v != n-1 && !errors.Is(errs[v], hpc.ErrAborted) {
			t.Errorf("rank %d: error %v, want ErrAborted", v, errs[v])
		}
	}
	if err := w.Barrier(); err != nil {
		t.Fatal(err)
	}
}

// TestLinkIdleCPU checks that a process whose ranks sleep or wait for a
// long time uses little CPU: a router waiting for messages does not spin
// while the ranks sleep, and ranks hosted two to a process that wait for
// another process's slow rank, and drive the link themselves meanwhile
// (over MPI_THREAD_SERIALIZED), spin only briefly before they nap
// between looks at it.
func TestLinkIdleCPU(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w := World()
	const nap = 500 * time.Millisecond
	tests := []struct {
		name    string
		perProc int
		sleeps  func(rank, n int) bool
	}{
		{"ranks sleep", 1, func(int, int) bool { return true }},
		{"hosted ranks wait", 2, func(rank, n int) bool { return rank == n-1 }},
	}
	for i, tc := range tests {
		l := NewLink(w, 940+i)
		n := tc.perProc * w.Size()
		before, start := cpuTime(t), time.Now()
		err := hpc.RunHosted(l, hpc.BlockPlacement(n, w.Size()), func(c hpc.Comm) error {
			if tc.sleeps(c.Rank(), n) {
				time.Sleep(nap)
			}
			_, err := c.Allreduce(hpc.MaxLoc, nil)
			return err
		})
		if cerr := l.Close(); cerr != nil {
			t.Error(cerr)
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		share := float64(cpuTime(t)-before) / float64(time.Since(start))
		t.Logf("%s: process %d: %.1f%% of a CPU", tc.name, w.Rank(), 100*share)
		if share > 0.5 {
			t.Errorf("%s: process %d used %.0f%% of a CPU", tc.name, w.Rank(), 100*share)
		}
		if err := w.Barrier(); err != nil {
			t.Fatal(err)
		}
	}
}

func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestLinkDeadlock: ranks of different processes that wait for each
// other end in ErrDeadlock on every process, as in-process.
func TestLinkDeadlock(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w := World()
	for i, n := range []int{w.Size(), w.Size() + 3} {
		l := NewLink(w, 950+i)
		errs := make([]error, n)
		err := hpc.RunHosted(l, hpc.BlockPlacement(n, w.Size()), func(c hpc.Comm) error {
			_, err := c.Recv((c.Rank()+1)%n, 0)
			errs[c.Rank()] = err
			return err
		})
		if cerr := l.Close(); cerr != nil {
			t.Error(cerr)
		}
		if !errors.Is(err, hpc.ErrDeadlock) {
			t.Errorf("N=%d, process %d: run error %v, want ErrDeadlock", n, w.Rank(), err)
		}
		if err := w.Barrier(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWorld checks the calls on the world communicator that collect the
// results: sends of any length, broadcast, gathers, split.
func TestWorld(t *testing.T) {
	w := World()
	me, n := w.Rank(), w.Size()
	if err := w.Send((me+1)%n, 5, bytes.Repeat([]byte{byte(me)}, 1<<16+me)); err != nil {
		t.Fatal(err)
	}
	got, err := w.Recv((me+n-1)%n, 5)
	if err != nil || len(got) != 1<<16+(me+n-1)%n || got[0] != byte((me+n-1)%n) {
		t.Errorf("Recv: %d bytes, %v", len(got), err)
	}
	if b, err := w.Bcast(n-1, []byte{byte(me), 7}); err != nil || !bytes.Equal(b, []byte{byte(n - 1), 7}) {
		t.Errorf("Bcast = %v, %v", b, err)
	}
	parts, err := w.Gather(0, bytes.Repeat([]byte{1}, me))
	if err != nil || (me == 0) != (parts != nil) {
		t.Fatalf("Gather: %v, %v", parts, err)
	}
	for r, p := range parts {
		if len(p) != r {
			t.Errorf("Gather: part %d has %d bytes", r, len(p))
		}
	}
	all, err := w.Allgather([]byte{byte(me)})
	if err != nil || len(all) != n {
		t.Fatalf("Allgather: %v, %v", all, err)
	}
	for r, p := range all {
		if !bytes.Equal(p, []byte{byte(r)}) {
			t.Errorf("Allgather: part %d is %v", r, p)
		}
	}
	half, err := w.Split(me%2, -me)
	if err != nil {
		t.Fatal(err)
	}
	if want := (n - me%2 + 1) / 2; half.Size() != want {
		t.Errorf("Split: size %d, want %d", half.Size(), want)
	}
	if err := half.Free(); err != nil {
		t.Error(err)
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
}

// TestExchange: in rounds r = 0…n−1 every process sends to me+r and
// receives from me−r what that process sent it, of any size (empty, and
// beyond the eager sizes).
func TestExchange(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w := World()
	me, n := w.Rank(), w.Size()
	msg := func(from, to int) []byte {
		b := fmt.Appendf(nil, "%d>%d", from, to)
		switch (from + to) % 3 {
		case 0:
			return nil
		case 1:
			return append(b, bytes.Repeat([]byte{byte(from)}, 1<<20)...)
		}
		return b
	}
	for r := range n {
		to, from := (me+r)%n, (me-r+n)%n
		got, err := w.Exchange(to, from, 940, msg(me, to))
		if err != nil {
			t.Fatal(err)
		}
		if want := msg(from, me); !bytes.Equal(got, want) {
			t.Errorf("round %d: got %d bytes from %d, want %d", r, len(got), from, len(want))
		}
	}
}

// TestSetEnv checks when Init narrows Open MPI's point-to-point layer to
// ob1: on one node, unless the user chose a layer.
func TestSetEnv(t *testing.T) {
	tests := []struct {
		name             string
		size, local, pml string // "-": unset
		want             string // OMPI_MCA_pml afterwards, "-": unset
	}{
		{"one node", "4", "4", "-", "ob1"},
		{"two nodes", "4", "2", "-", "-"},
		{"user's layer", "4", "4", "ucx", "ucx"},
		{"user's empty layer", "4", "4", "", ""},
		{"not Open MPI's launcher", "-", "-", "-", "-"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(hwlocBlacklist, os.Getenv(hwlocBlacklist)) // restored after the test
			for _, v := range []struct{ name, val string }{
				{"OMPI_COMM_WORLD_SIZE", tc.size}, {"OMPI_COMM_WORLD_LOCAL_SIZE", tc.local}, {ompiPML, tc.pml},
			} {
				t.Setenv(v.name, v.val)
				if v.val == "-" {
					os.Unsetenv(v.name)
				}
			}
			setEnv()
			got, ok := os.LookupEnv(ompiPML)
			if !ok {
				got = "-"
			}
			if got != tc.want {
				t.Errorf("OMPI_MCA_pml = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestLinkReuse: large messages travel in reused buffers (frames sent,
// messages received and handed back with Release, collective messages
// decoded), and each arrives intact, whatever ranks send meanwhile: every
// rank sends each other rank large messages of a pattern of its own and
// checks what it receives, with Gathers of large data in between.
func TestLinkReuse(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w := World()
	procs := w.Size()
	for i, n := range []int{procs, 2 * procs} {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			const rounds, size = 20, 100 << 10
			msg := func(from, to, k int) []byte {
				b := make([]byte, size+k) // sizes vary around the rounding
				for j := range b {
					b[j] = byte(from*31 + to*7 + k + j)
				}
				return b
			}
			l := NewLink(w, 920+i)
			err := hpc.RunHosted(l, hpc.BlockPlacement(n, procs), func(c hpc.Comm) error {
				me := c.Rank()
				for k := range rounds {
					for to := range n {
						if to != me {
							if err := c.Send(to, k, msg(me, to, k)); err != nil {
								return err
							}
						}
					}
					for from := range n {
						if from == me {
							continue
						}
						got, err := c.RecvOwned(from, k)
						if err != nil {
							return err
						}
						if !bytes.Equal(got, msg(from, me, k)) {
							return fmt.Errorf("round %d: the message from rank %d to %d arrived damaged", k, from, me)
						}
						c.Release(got)
					}
					all, err := c.Gather(0, msg(me, 0, -k))
					if err != nil {
						return err
					}
					for from, d := range all {
						if !bytes.Equal(d, msg(from, 0, -k)) {
							return fmt.Errorf("round %d: rank %d's gathered data arrived damaged", k, from)
						}
					}
				}
				return nil
			})
			if cerr := l.Close(); cerr != nil {
				t.Error(cerr)
			}
			if err != nil {
				t.Fatal(err)
			}
			if procs > 1 && l.reused == 0 {
				t.Errorf("process %d reused no buffer", w.Rank())
			}
		})
	}
	if err := w.Barrier(); err != nil {
		t.Fatal(err)
	}
}

// TestLinkCloseDropsOwn: frames a process sent itself over a link and
// never received (the probe ticker's, as a run ended) do not outlive
// Close, so the next user of the tag on the communicator receives only
// its own messages. (TestExchange, on the tag of TestLinkIdleCPU's first
// link, once received such a frame.)
func TestLinkCloseDropsOwn(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w := World()
	const tag, frames = 960, 3
	l := NewLink(w, tag)
	for i := range frames {
		if err := l.Send(w.Rank(), []byte{byte(i), 1, 2}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l.dropped != frames {
		t.Errorf("Close dropped %d frames, want %d", l.dropped, frames)
	}
	got, err := w.Exchange(w.Rank(), w.Rank(), tag, []byte("mine"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "mine" {
		t.Errorf("exchange with itself on the link's tag got %d bytes (%q...), want %q", len(got), got[:min(len(got), 8)], "mine")
	}
	if err := w.Barrier(); err != nil {
		t.Fatal(err)
	}
}

// TestLinkResched: Poll and Progress pass their caller through Go's
// scheduler once no driver has for reschedEvery (resched), and not more
// often.
func TestLinkResched(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	l := NewLink(World(), 930)
	defer l.Close()
	for _, call := range []struct {
		name string
		fn   func() error
	}{
		{"Progress", l.Progress},
		{"Poll", func() error { _, _, _, err := l.Poll(0); return err }},
	} {
		long := -int64(2 * reschedEvery)
		l.sched.Store(long) // long ago
		if err := call.fn(); err != nil {
			t.Fatal(err)
		}
		at := l.sched.Load()
		if at == long {
			t.Errorf("%s: no pass through the scheduler after %v without one", call.name, 2*reschedEvery+time.Since(l.epoch))
		}
		if err := call.fn(); err != nil {
			t.Fatal(err)
		}
		if again := l.sched.Load(); again != at && time.Duration(again-at) < reschedEvery {
			t.Errorf("%s: passed through the scheduler again after %v", call.name, time.Duration(again-at))
		}
	}
}

// TestLinkPack: with Batch, frames to one process travel packed, fewer
// messages than frames, and arrive complete and in order from every
// process (itself included), a frame too large for a pack among them.
func TestLinkPack(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w := World()
	procs, me := w.Size(), w.Rank()
	const frames, large = 3*packCount + 5, 77
	frame := func(from, to, k int) []byte {
		n := 3 + k%50
		if k == large {
			n = packFrameMax + 1
		}
		b := make([]byte, n)
		b[0], b[1], b[2] = byte(from), byte(to), byte(k)
		for i := 3; i < n; i++ {
			b[i] = byte(from*7 + k + i)
		}
		return b
	}
	l := NewLink(w, 940)
	l.Batch(true)
	for k := range frames {
		for to := range procs {
			if err := l.Send(to, frame(me, to, k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	next := make([]int, procs) // the next frame expected from each process
	for n := 0; n < procs*frames; n++ {
		var from int
		var msg []byte
		for {
			f, m, ok, err := l.Poll(time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				from, msg = f, m
				break
			}
		}
		if from < 0 || from >= procs || next[from] >= frames {
			t.Fatalf("a frame from process %d beyond the %d sent", from, frames)
		}
		if want := frame(from, me, next[from]); !bytes.Equal(msg, want) {
			t.Fatalf("frame %d from process %d: %d bytes %v…, want %d bytes %v…", next[from], from, len(msg), msg[:min(len(msg), 3)], len(want), want[:3])
		}
		next[from]++
	}
	l.Batch(false)
	if l.msgs >= procs*frames/2 {
		t.Errorf("%d frames went in %d messages", procs*frames, l.msgs)
	}
	if err := w.Barrier(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLinkUnpack: a message that is not a frame or a valid pack of
// frames is an error naming the sender, not a panic.
func TestLinkUnpack(t *testing.T) {
	pack := func(frames ...[]byte) []byte {
		b := []byte{packMany}
		for _, f := range frames {
			b = binary.AppendUvarint(b, uint64(len(f)))
			b = append(b, f...)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		msg  []byte
		want [][]byte // frames; nil: an error
	}{
		{"one", []byte{packOne, 1, 2}, [][]byte{{1, 2}}},
		{"one empty", []byte{packOne}, [][]byte{{}}},
		{"pack", pack([]byte{1}, nil, []byte{2, 3}), [][]byte{{1}, {}, {2, 3}}},
		{"empty", nil, nil},
		{"unknown kind", []byte{7, 1}, nil},
		{"empty pack", []byte{packMany}, nil},
		{"length beyond the end", append(pack([]byte{1}), 5, 1), nil},
		{"bad varint", append(pack([]byte{1}), 0xff), nil},
	} {
		l := &Link{}
		first, err := l.unpack(3, tc.msg)
		if tc.want == nil {
			if err == nil || !strings.Contains(err.Error(), "process 3") {
				t.Errorf("%s: error %v, want one naming process 3", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := [][]byte{first}
		for {
			from, f, ok := l.unpacked()
			if !ok {
				break
			}
			if from != 3 {
				t.Errorf("%s: a frame from %d, want 3", tc.name, from)
			}
			got = append(got, f)
		}
		if d := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%s: frames (-want +got):\n%s", tc.name, d)
		}
	}
}
