package replay_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/hpc"
	"scout/internal/tinytrace"
	"scout/localtrace"
	"scout/replay"
)

// A toy backward pass with inverse messages, as the root-cause analysis
// needs: at each message the receiver ships its wait time and a time map
// to the sender; the sender answers over the inverse communicators with
// a flag; at each collective the members reduce and broadcast.
var (
	toyRecv     = replay.NewTopic("ToyRecv")
	toyRecvDone = replay.NewTopic("ToyRecvDone")
	toySend     = replay.NewTopic("ToySend")
	toySendDone = replay.NewTopic("ToySendDone")
	toyColl     = replay.NewTopic("ToyColl")
	toyPass     = replay.DefinePass(replay.PassSpec{
		Name: "toy", Order: replay.ReverseOrder, Inverse: true,
		Topics: []replay.Topic{toyRecv, toyRecvDone, toySend, toySendDone, toyColl},
		Steps: []replay.Step{
			{Kind: localtrace.KindRecv, Do: replay.Ship, Pre: toyRecv, Post: toyRecvDone},
			{Kind: localtrace.KindSend, Do: replay.Take, Pre: toySend, Post: toySendDone},
			{Kind: localtrace.KindCollEnd, Do: replay.Collective, Pre: toyColl},
		}})

	waitField  = replay.NewField("toy wait", replay.Float64Codec)
	timeField  = replay.NewField("toy timemap", replay.TimemapCodec)
	ackField   = replay.NewField("toy ack", replay.BoolCodec)
	delayField = replay.NewField("toy delayer", replay.Uint64Codec)
)

// seen is what a rank's toy pattern observed, in the order of its walk.
type seen struct {
	Got    []string // messages and inverse messages received
	Passes []string // passes finished
	Colls  []string // collective results
}

// toy subscribes the toy pattern, which records into s.
func toy(bus *replay.Bus, s *seen) {
	bus.On(toyRecv, func(c *replay.Ctx) error {
		wait := c.Time() - c.EnterTime(c.Index)
		replay.Put(c, waitField, wait)
		var tm replay.Timemap
		tm.Append(c.Callpath(c.Index), wait)
		tm.Append(99, 1)
		tm.Sort()
		replay.Put(c, timeField, tm)
		return nil
	})
	bus.On(toySendDone, func(c *replay.Ctx) error {
		wait, ok := replay.Get(c, waitField)
		tm, _ := replay.Get(c, timeField)
		s.Got = append(s.Got, fmt.Sprintf("from %d: wait %.1f ms (%v), timemap entries %d", c.Peer, wait*1000, ok, tm.Len()))
		if _, ok := replay.Get(c, ackField); ok {
			return errors.New("a field nobody put arrived")
		}
		replay.Put(c, ackField, true)
		return c.SendInverse()
	})
	bus.On(toyRecvDone, func(c *replay.Ctx) error {
		if err := c.RecvInverse(); err != nil {
			return err
		}
		ack, ok := replay.Get(c, ackField)
		s.Got = append(s.Got, fmt.Sprintf("inverse from %d: ack %v (%v)", c.Peer, ack, ok))
		return nil
	})
	bus.On(toyColl, func(c *replay.Ctx) error {
		me, size, err := c.CollMember()
		if err != nil {
			return err
		}
		// results are valid until the next helper call: keep copies
		sum, err := c.AllreduceSum([]float64{float64(me + 1), 0.5})
		if err != nil {
			return err
		}
		sum = slices.Clone(sum)
		red, err := c.ReduceSum(1, []float64{float64(10 * (me + 1))})
		if err != nil {
			return err
		}
		red = slices.Clone(red)
		flags, err := c.AllreduceMax([]float64{float64(me), 0})
		if err != nil {
			return err
		}
		replay.Put(c, delayField, uint64(100+me))
		if err := c.BcastFields(size - 1); err != nil {
			return err
		}
		delayer, _ := replay.Get(c, delayField)
		s.Colls = append(s.Colls, fmt.Sprintf("rank %d/%d: sum %v, reduce %v, max %v, delayer %d", me, size, sum, red, flags, delayer))
		return nil
	})
	bus.On(replay.Finished, func(c *replay.Ctx) error {
		s.Passes = append(s.Passes, c.Pass.String())
		return nil
	})
}

// progs are two ranks exchanging two messages head to head, then an
// Allreduce.
var progs = [][]tinytrace.Step{
	tinytrace.Program(20,
		tinytrace.Call("MPI_Send", 1, 2, tinytrace.Send(1.5, 1, 7, 8)),
		tinytrace.Call("MPI_Recv", 3, 6, tinytrace.Recv(5.5, 1, 8, 8)),
		tinytrace.Coll("MPI_Allreduce", tinytrace.OpAllreduce, -1, 10, 11)),
	tinytrace.Program(20,
		tinytrace.Call("MPI_Recv", 0.5, 2.5, tinytrace.Recv(2, 0, 7, 8)),
		tinytrace.Call("MPI_Send", 5, 5.5, tinytrace.Send(5.2, 0, 8, 8)),
		tinytrace.Coll("MPI_Allreduce", tinytrace.OpAllreduce, -1, 10, 11)),
}

// replayAll replays traces with register's patterns on the ranks run
// starts and returns what each rank saw.
func replayAll(t testing.TB, run func(int, func(hpc.Comm) error) error, register func(*replay.Bus, *seen), traces []*localtrace.Trace, env *replay.Env) []seen {
	t.Helper()
	out := make([]seen, len(traces))
	var mu sync.Mutex
	err := run(len(traces), func(c hpc.Comm) error {
		l, err := replay.NewLocation(env, traces[c.Rank()], c.Rank(), c)
		if err != nil {
			return err
		}
		var s seen
		bus := &replay.Bus{}
		register(bus, &s)
		if err := replay.NewReplayer(bus, l).Run(); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		out[c.Rank()] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// replayOnce replays traces in-process with the patterns register
// subscribes on each rank's bus and returns the run's error.
func replayOnce(env *replay.Env, traces []*localtrace.Trace, register func(*replay.Bus)) error {
	return hpc.RunInProcess(len(traces), func(c hpc.Comm) error {
		l, err := replay.NewLocation(env, traces[c.Rank()], c.Rank(), c)
		if err != nil {
			return err
		}
		bus := &replay.Bus{}
		register(bus)
		return replay.NewReplayer(bus, l).Run()
	})
}

// hosted runs ranks on one process each, over in-memory links.
func hosted(n int, fn func(hpc.Comm) error) error {
	links := hpc.NewMemLinks(n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for p := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[p] = hpc.RunHosted(links[p], hpc.BlockPlacement(n, n), fn)
			links[p].Close()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// TestToyPass replays the toy pass in-process and hosted: only it runs,
// backwards, and every value arrives where it should.
func TestToyPass(t *testing.T) {
	d, traces := tinytrace.Build(t, progs...)
	env, err := replay.NewEnv(d)
	if err != nil {
		t.Fatal(err)
	}
	bus := &replay.Bus{}
	toy(bus, &seen{})
	if !bus.Runs(toyPass) || bus.Runs(replay.Forward) || bus.Runs(replay.Backward) {
		t.Errorf("runs forward %v, backward %v, toy %v; want toy only", bus.Runs(replay.Forward), bus.Runs(replay.Backward), bus.Runs(toyPass))
	}
	want := []seen{
		{ // backwards: the receive from rank 1 first, then the send
			Got:    []string{"inverse from 1: ack true (true)", "from 1: wait 1.5 ms (true), timemap entries 2"},
			Passes: []string{"toy"},
			Colls:  []string{"rank 0/2: sum [3 1], reduce [], max [1 0], delayer 101"},
		},
		{
			Got:    []string{"from 0: wait 2.5 ms (true), timemap entries 2", "inverse from 0: ack true (true)"},
			Passes: []string{"toy"},
			Colls:  []string{"rank 1/2: sum [3 1], reduce [30], max [1 0], delayer 101"},
		},
	}
	for _, r := range []struct {
		name string
		run  func(int, func(hpc.Comm) error) error
	}{{"in-process", hpc.RunInProcess}, {"hosted", hosted}} {
		t.Run(r.name, func(t *testing.T) {
			got := replayAll(t, r.run, toy, traces, env)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestInverseNeedsInverseComms: an inverse message in a pass without
// inverse communicators is an error naming the event.
func TestInverseNeedsInverseComms(t *testing.T) {
	d, traces := tinytrace.Build(t, progs...)
	env, err := replay.NewEnv(d)
	if err != nil {
		t.Fatal(err)
	}
	err = replayOnce(env, traces, func(bus *replay.Bus) {
		bus.On(replay.FwPostSend, func(c *replay.Ctx) error { return c.SendInverse() })
	})
	if err == nil || !strings.Contains(err.Error(), "forward pass has no inverse communicators") {
		t.Errorf("error %v", err)
	}
}

// TestDefinePassChecks: inconsistent pass specs are refused.
func TestDefinePassChecks(t *testing.T) {
	free := replay.NewTopic("free")
	tests := []struct {
		name string
		spec replay.PassSpec
	}{
		{"topic of another pass", replay.PassSpec{Name: "x", Topics: []replay.Topic{replay.FwEnter}}},
		{"step topic not listed", replay.PassSpec{Name: "x", Topics: []replay.Topic{free},
			Steps: []replay.Step{{Kind: localtrace.KindEnter, Do: replay.Publish, Pre: replay.BwEnter}}}},
		{"ship at an Enter", replay.PassSpec{Name: "x", Topics: []replay.Topic{free},
			Steps: []replay.Step{{Kind: localtrace.KindEnter, Do: replay.Ship, Pre: free}}}},
		{"collective at a Leave", replay.PassSpec{Name: "x", Topics: []replay.Topic{free},
			Steps: []replay.Step{{Kind: localtrace.KindLeave, Do: replay.Collective, Pre: free}}}},
		{"two steps for a kind", replay.PassSpec{Name: "x", Topics: []replay.Topic{free}, Steps: []replay.Step{
			{Kind: localtrace.KindEnter, Do: replay.Publish, Pre: free}, {Kind: localtrace.KindEnter, Do: replay.Publish, Pre: free}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			replay.DefinePass(tc.spec)
		})
	}
}

// pingPong is two ranks exchanging n message pairs.
func pingPong(n int) [][]tinytrace.Step {
	var a, b [][]tinytrace.Step
	for i := range n {
		t := float64(10 * i)
		a = append(a, tinytrace.Call("MPI_Send", t+1, t+2, tinytrace.Send(t+1.5, 1, 1, 8)),
			tinytrace.Call("MPI_Recv", t+3, t+6, tinytrace.Recv(t+5.5, 1, 2, 8)))
		b = append(b, tinytrace.Call("MPI_Recv", t+0.5, t+2.5, tinytrace.Recv(t+2, 0, 1, 8)),
			tinytrace.Call("MPI_Send", t+5, t+5.5, tinytrace.Send(t+5.2, 0, 2, 8)))
	}
	end := float64(10*n + 10)
	return [][]tinytrace.Step{tinytrace.Program(end, a...), tinytrace.Program(end, b...)}
}

// fieldsBothWays subscribes patterns that put and get fields in the
// forward and backward passes, and the toy pass's inverse messages.
func fieldsBothWays(bus *replay.Bus, s *seen) {
	var sum float64
	bus.On(replay.FwPreSend, func(c *replay.Ctx) error {
		replay.Put(c, waitField, c.Time())
		return nil
	})
	bus.On(replay.FwPostRecv, func(c *replay.Ctx) error {
		v, _ := replay.Get(c, waitField)
		sum += v
		return nil
	})
	bus.On(replay.BwPreRecv, func(c *replay.Ctx) error {
		replay.Put(c, waitField, c.Time())
		return nil
	})
	bus.On(replay.BwPostSend, func(c *replay.Ctx) error {
		v, _ := replay.Get(c, waitField)
		sum += v
		return nil
	})
	bus.On(toySendDone, func(c *replay.Ctx) error {
		replay.Put(c, ackField, true)
		return c.SendInverse()
	})
	bus.On(toyRecvDone, func(c *replay.Ctx) error { return c.RecvInverse() })
}

// TestReplayAllocsPerMessage: in steady state a message costs no
// allocation in any pass.
func TestReplayAllocsPerMessage(t *testing.T) {
	allocs := func(n int) float64 {
		d, traces := tinytrace.Build(t, pingPong(n)...)
		env, err := replay.NewEnv(d)
		if err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(3, func() { replayAll(t, hpc.RunInProcess, fieldsBothWays, traces, env) })
	}
	small, large := allocs(50), allocs(1050)
	// 2000 more messages in each of three passes
	if per := (large - small) / 6000; per > 0.01 {
		t.Errorf("%.3f allocations per message (%v for 100 messages, %v for 2100)", per, small, large)
	}
}

// BenchmarkReplayMessages replays 2000 messages in the forward,
// backward and toy passes (with inverse messages).
func BenchmarkReplayMessages(b *testing.B) {
	d, traces := tinytrace.Build(b, pingPong(1000)...)
	env, err := replay.NewEnv(d)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		replayAll(b, hpc.RunInProcess, fieldsBothWays, traces, env)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2000/3, "ns/message")
}

// A pass that publishes at the Leaves of MPI_Init and MPI_Finalize only.
var (
	syncLeave = replay.NewTopic("SyncLeave")
	_         = replay.DefinePass(replay.PassSpec{Name: "syncleave", Topics: []replay.Topic{syncLeave},
		Steps: []replay.Step{{Kind: localtrace.KindLeave, Do: replay.PublishSync, Pre: syncLeave}}})
)

// TestPublishSync: a PublishSync step publishes at every Leave of
// MPI_Init and MPI_Finalize (an MPI_Init called twice included) and at
// no other Leave.
func TestPublishSync(t *testing.T) {
	d, traces := tinytrace.Build(t,
		tinytrace.Program(20,
			tinytrace.Call("MPI_Init", 0, 1),
			tinytrace.Call("work", 2, 3),
			tinytrace.Call("MPI_Init", 4, 5),
			tinytrace.Call("MPI_Send", 6, 7, tinytrace.Send(6.5, 1, 1, 8)),
			tinytrace.Call("MPI_Finalize", 18, 19)),
		tinytrace.Program(20,
			tinytrace.Call("MPI_Init", 0, 2),
			tinytrace.Call("MPI_Recv", 6, 8, tinytrace.Recv(7.5, 0, 1, 8)),
			tinytrace.Call("MPI_Finalize", 17, 19)))
	env, err := replay.NewEnv(d)
	if err != nil {
		t.Fatal(err)
	}
	got := make([][]string, len(traces))
	err = replayOnce(env, traces, func(bus *replay.Bus) {
		bus.On(syncLeave, func(c *replay.Ctx) error {
			name := "other"
			switch cls := c.RegionClass(c.Index); {
			case cls&replay.ClassInit != 0:
				name = "MPI_Init"
			case cls&replay.ClassFinalize != 0:
				name = "MPI_Finalize"
			}
			got[c.Loc.Rank] = append(got[c.Loc.Rank], fmt.Sprintf("%s at %g", name, c.Time()*1000))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"MPI_Init at 1", "MPI_Init at 5", "MPI_Finalize at 19"},
		{"MPI_Init at 2", "MPI_Finalize at 19"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("published at (-want +got):\n%s", diff)
	}
}

// A pass without steps.
var (
	noSteps     = replay.NewTopic("NoSteps")
	noStepsPass = replay.DefinePass(replay.PassSpec{Name: "nosteps", Topics: []replay.Topic{noSteps}})
)

// TestPassWithoutSteps: a pass without steps publishes its topic once per
// location, at index 0, between Started and Finished, and visits no
// event.
func TestPassWithoutSteps(t *testing.T) {
	d, traces := tinytrace.Build(t,
		tinytrace.Program(20, tinytrace.Call("MPI_Send", 6, 7, tinytrace.Send(6.5, 1, 1, 8))),
		tinytrace.Program(20, tinytrace.Call("MPI_Recv", 6, 8, tinytrace.Recv(7.5, 0, 1, 8))))
	env, err := replay.NewEnv(d)
	if err != nil {
		t.Fatal(err)
	}
	got := make([][]string, len(traces))
	err = replayOnce(env, traces, func(bus *replay.Bus) {
		note := func(what string) replay.Handler {
			return func(c *replay.Ctx) error {
				if c.Pass == noStepsPass {
					got[c.Loc.Rank] = append(got[c.Loc.Rank], fmt.Sprintf("%s %d", what, c.Index))
				}
				return nil
			}
		}
		bus.On(replay.Started, note("started"))
		bus.On(noSteps, note("topic"))
		bus.On(replay.Finished, note("finished"))
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"started 0", "topic 0", "finished 0"}
	if diff := cmp.Diff([][]string{want, want}, got); diff != "" {
		t.Errorf("published (-want +got):\n%s", diff)
	}
}
