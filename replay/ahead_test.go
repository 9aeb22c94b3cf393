package replay_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/hpc"
	"scout/internal/tinytrace"
	"scout/replay"
)

var (
	aheadSend = replay.NewField("ahead test send", replay.Float64Codec)
	aheadRecv = replay.NewField("ahead test recv", replay.Float64Codec)
)

// waitStates subscribes a pattern that ships every message's event time
// in the forward and the backward pass and records what arrives and what
// each collective's wait-state exchange found. With live, a second
// subscriber of each Ship step's Pre topic subscribes with On: the
// passes then replay message by message. Without synced, the replay is
// not told that the members' synced flags are read (they then are not
// gathered).
func waitStates(live, synced bool) func(*replay.Bus, *seen) {
	return func(bus *replay.Bus, s *seen) {
		if synced {
			bus.WantCollSynced()
		}
		bus.OnAhead(replay.FwPreSend, func(c *replay.Ctx) error {
			replay.Put(c, aheadSend, c.Time())
			return nil
		})
		bus.OnAhead(replay.BwPreRecv, func(c *replay.Ctx) error {
			replay.Put(c, aheadRecv, c.Time())
			return nil
		})
		if live {
			bus.On(replay.FwPreSend, func(*replay.Ctx) error { return nil })
			bus.On(replay.BwPreRecv, func(*replay.Ctx) error { return nil })
		}
		bus.On(replay.FwPostRecv, func(c *replay.Ctx) error {
			v, ok := replay.Get(c, aheadSend)
			s.Got = append(s.Got, fmt.Sprintf("fw %d from %d: %.6f (%v)", c.Index, c.Peer, v, ok))
			return nil
		})
		bus.On(replay.BwPostSend, func(c *replay.Ctx) error {
			v, ok := replay.Get(c, aheadRecv)
			s.Got = append(s.Got, fmt.Sprintf("bw %d from %d: %.6f (%v)", c.Index, c.Peer, v, ok))
			return nil
		})
		// the members the collective synchronised, as the exchange found
		// them before the walk and as the members tell
		for _, tp := range []replay.Topic{replay.FwNxN, replay.FwOneToN} {
			bus.On(tp, func(c *replay.Ctx) error {
				early, meEarly, ok := c.CollSynced()
				me, _, err := c.CollMember()
				if err != nil {
					return err
				}
				mine := 0.0
				if c.Coll.SyncPoint && !(tp == replay.FwOneToN && c.Coll.Root.Rank == me) {
					mine = 1
				}
				flags, err := c.Allgather([]float64{mine})
				if err != nil {
					return err
				}
				told := []int{}
				for r, f := range flags {
					if f > 0 {
						told = append(told, c.Env.CommMembers[c.Trace.Collective(c.Index).Comm][r])
					}
				}
				if ok && meEarly != (mine > 0) {
					return fmt.Errorf("synced %v, but the member says %v", meEarly, mine)
				}
				if early == nil {
					early = []int{}
				}
				s.Colls = append(s.Colls, fmt.Sprintf("%v at %d: synced %v (%v), told %v", tp, c.Index, early, ok, told))
				return nil
			})
		}
		for _, tp := range []replay.Topic{replay.FwBarrier, replay.FwNxN, replay.FwOneToN, replay.FwNToOne, replay.FwInit, replay.FwFinalize} {
			bus.On(tp, func(c *replay.Ctx) error {
				s.Colls = append(s.Colls, fmt.Sprintf("%v at %d: %+v idle %.6f completion %.6f", tp, c.Index, c.Coll, c.Idle, c.Completion))
				return nil
			})
		}
	}
}

// aheadProgs: three ranks with messages on two tags (the second out of
// the order they are received in), a self message, and collectives of
// every rooted and unrooted class.
var aheadProgs = [][]tinytrace.Step{
	tinytrace.Program(40,
		tinytrace.Call("MPI_Init", 0, 1),
		tinytrace.Call("MPI_Send", 2, 3, tinytrace.Send(2.5, 1, 7, 8)),
		tinytrace.Call("MPI_Send", 3, 4, tinytrace.Send(3.5, 1, 9, 8)),
		tinytrace.Call("MPI_Send", 4, 5, tinytrace.Send(4.5, 0, 1, 8)),
		tinytrace.Call("MPI_Recv", 5, 6, tinytrace.Recv(5.5, 0, 1, 8)),
		tinytrace.Call("MPI_Recv", 6, 12, tinytrace.Recv(11, 2, 3, 8)),
		tinytrace.Coll("MPI_Barrier", tinytrace.OpBarrier, -1, 13, 20),
		tinytrace.Coll("MPI_Bcast", tinytrace.OpBcast, 0, 21, 22),
		tinytrace.Coll("MPI_Reduce", tinytrace.OpReduce, 1, 23, 30),
		tinytrace.Coll("MPI_Allreduce", tinytrace.OpAllreduce, -1, 31, 35),
		tinytrace.Call("MPI_Finalize", 36, 39)),
	tinytrace.Program(40,
		tinytrace.Call("MPI_Init", 0, 1.5),
		tinytrace.Call("MPI_Recv", 2, 8, tinytrace.Recv(7.5, 0, 9, 8)),
		tinytrace.Call("MPI_Recv", 8, 9, tinytrace.Recv(8.5, 0, 7, 8)),
		tinytrace.Coll("MPI_Barrier", tinytrace.OpBarrier, -1, 10, 20),
		tinytrace.Coll("MPI_Bcast", tinytrace.OpBcast, 0, 20.5, 24),
		tinytrace.Coll("MPI_Reduce", tinytrace.OpReduce, 1, 25, 30),
		tinytrace.Coll("MPI_Allreduce", tinytrace.OpAllreduce, -1, 32, 35),
		tinytrace.Call("MPI_Finalize", 36, 38)),
	tinytrace.Program(40,
		tinytrace.Call("MPI_Init", 0, 1),
		tinytrace.Call("MPI_Send", 9, 10, tinytrace.Send(9.5, 0, 3, 8)),
		tinytrace.Coll("MPI_Barrier", tinytrace.OpBarrier, -1, 19, 20),
		tinytrace.Coll("MPI_Bcast", tinytrace.OpBcast, 0, 21.5, 22.5),
		tinytrace.Coll("MPI_Reduce", tinytrace.OpReduce, 1, 29, 29.5),
		tinytrace.Coll("MPI_Allreduce", tinytrace.OpAllreduce, -1, 34, 35),
		tinytrace.Call("MPI_Finalize", 36, 37)),
}

// TestShipAhead: the wait-state passes ship ahead, and every message
// field and collective result equals the message-by-message replay's,
// in-process and hosted, however many events a location ships at once
// and however many collectives' exchanges run together.
func TestShipAhead(t *testing.T) {
	d, traces := tinytrace.Build(t, aheadProgs...)
	env, err := replay.NewEnv(d)
	if err != nil {
		t.Fatal(err)
	}
	want := replayAll(t, hpc.RunInProcess, waitStates(true, true), traces, env)
	if len(want[0].Got) != 5 || len(want[1].Got) != 2 || len(want[0].Colls) != 8 {
		t.Fatalf("the message-by-message replay saw %d and %d messages on ranks 0 and 1 and %d collective records on rank 0, want 5, 2 and 8:\n%v",
			len(want[0].Got), len(want[1].Got), len(want[0].Colls), want)
	}
	for _, r := range []struct {
		name string
		run  func(int, func(hpc.Comm) error) error
	}{{"in-process", hpc.RunInProcess}, {"hosted", hosted}} {
		// the whole trace at once; an event and a collective at a time;
		// a few of each
		for _, w := range [][2]int{{0, 0}, {1, 1}, {3, 2}} {
			for _, live := range []bool{false, true} {
				if live && w != [2]int{} {
					continue // message by message: no windows
				}
				t.Run(fmt.Sprintf("%s, live %v, windows %v", r.name, live, w), func(t *testing.T) {
					if w != [2]int{} {
						defer replay.SetWindows(w[0], w[1], 0)()
					}
					got := replayAll(t, r.run, waitStates(live, true), traces, env)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("(-message by message +got):\n%s", diff)
					}
					for r, s := range got {
						for _, l := range s.Colls {
							if i := strings.Index(l, "synced "); i >= 0 {
								a, b, found := strings.Cut(l[i+len("synced "):], " (true), told ")
								if !found {
									t.Errorf("rank %d: %s: no synced members from the exchange", r, l)
								}
								if a != b {
									t.Errorf("rank %d: %s: the exchange's synced members differ from what the members tell", r, l)
								}
							}
						}
					}
				})
			}
		}
	}
}

// TestCollSyncedUnwanted: without a reader of the synced members
// (Bus.WantCollSynced) the exchange does not gather them.
func TestCollSyncedUnwanted(t *testing.T) {
	d, traces := tinytrace.Build(t, aheadProgs...)
	env, err := replay.NewEnv(d)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for r, s := range replayAll(t, hpc.RunInProcess, waitStates(false, false), traces, env) {
		for _, l := range s.Colls {
			if strings.Contains(l, "synced ") {
				n++
				if !strings.Contains(l, "synced [] (false)") {
					t.Errorf("rank %d: %s: synced members without a reader", r, l)
				}
			}
		}
	}
	if n == 0 {
		t.Error("no N×N or 1-to-N collective")
	}
}

// TestShipAheadUnmatched: a receive whose sender sent fewer messages of
// its communicator and tag ends in an error naming the receive.
func TestShipAheadUnmatched(t *testing.T) {
	d, traces := tinytrace.Build(t,
		tinytrace.Program(10, tinytrace.Call("MPI_Send", 1, 2, tinytrace.Send(1.5, 1, 7, 8))),
		tinytrace.Program(10,
			tinytrace.Call("MPI_Recv", 1, 3, tinytrace.Recv(2.5, 0, 7, 8)),
			tinytrace.Call("MPI_Recv", 4, 5, tinytrace.Recv(4.5, 0, 7, 8))))
	env, err := replay.NewEnv(d)
	if err != nil {
		t.Fatal(err)
	}
	err = replayOnce(env, traces, func(bus *replay.Bus) { waitStates(false, true)(bus, &seen{}) })
	for _, want := range []string{"rank 1 (location 1), event", "Recv at 0.004500000 s", "receive from rank 0", "unmatched message"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one with %q", err, want)
		}
	}
}

// TestOnAheadChecks: OnAhead subscribes to the Pre topics of Ship steps
// only.
func TestOnAheadChecks(t *testing.T) {
	for _, tp := range []replay.Topic{replay.FwPostRecv, replay.FwPreRecv, replay.BwPreSend, replay.FwEnter} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("OnAhead(%v) did not panic", tp)
				}
			}()
			(&replay.Bus{}).OnAhead(tp, func(*replay.Ctx) error { return nil })
		}()
	}
}

// TestSkipMessage: messages that both sides skip carry nothing, the
// others arrive as always, whether the pass ships ahead or not.
func TestSkipMessage(t *testing.T) {
	d, traces := tinytrace.Build(t, aheadProgs...)
	env, err := replay.NewEnv(d)
	if err != nil {
		t.Fatal(err)
	}
	skipTag7 := func(c *replay.Ctx) error {
		if c.Trace.Message(c.Index).Tag == 7 {
			c.SkipMessage()
		}
		return nil
	}
	for _, live := range []bool{false, true} {
		register := func(bus *replay.Bus, s *seen) {
			waitStates(live, true)(bus, s)
			bus.OnAhead(replay.FwPreSend, skipTag7)
			bus.On(replay.FwPreRecv, skipTag7)
		}
		got := replayAll(t, hpc.RunInProcess, register, traces, env)
		want := []string{"fw 4 from 0: 0.003500 (true)", "fw 7 from 0: 0.000000 (false)"}
		if diff := cmp.Diff(want, got[1].Got); diff != "" {
			t.Errorf("live %v: rank 1 (-want +got):\n%s", live, diff)
		}
	}
}

// TestSkipGates: of the messages both sides skip, every gate-th between
// two ranks on a communicator and tag goes all the same, empty; the
// fields of the others arrive as always, whatever the gate.
func TestSkipGates(t *testing.T) {
	steps0 := [][]tinytrace.Step{tinytrace.Call("MPI_Init", 0, 1)}
	steps1 := [][]tinytrace.Step{tinytrace.Call("MPI_Init", 0, 1)}
	for k := range 10 {
		at := float64(2 + 2*k)
		steps0 = append(steps0, tinytrace.Call("MPI_Send", at, at+1, tinytrace.Send(at+0.5, 1, 7, 8)))
		steps1 = append(steps1, tinytrace.Call("MPI_Recv", at, at+1.5, tinytrace.Recv(at+1.25, 0, 7, 8)))
	}
	steps0 = append(steps0, tinytrace.Call("MPI_Finalize", 30, 31))
	steps1 = append(steps1, tinytrace.Call("MPI_Finalize", 30, 31))
	d, traces := tinytrace.Build(t, tinytrace.Program(40, steps0...), tinytrace.Program(40, steps1...))
	env, err := replay.NewEnv(d)
	if err != nil {
		t.Fatal(err)
	}
	// message by message; both sides skip the messages k%3 != 0, by
	// their own count
	register := func(bus *replay.Bus, s *seen) {
		waitStates(true, true)(bus, s)
		var sent, taken int
		bus.On(replay.FwPreSend, func(c *replay.Ctx) error {
			if sent++; sent%3 != 1 {
				c.SkipMessage()
			}
			return nil
		})
		bus.On(replay.FwPreRecv, func(c *replay.Ctx) error {
			if taken++; taken%3 != 1 {
				c.SkipMessage()
			}
			return nil
		})
	}
	want := replayAll(t, hpc.RunInProcess, register, traces, env)[1].Got
	if len(want) != 10 || !strings.HasSuffix(want[0], "(true)") || !strings.HasSuffix(want[1], "(false)") || !strings.HasSuffix(want[3], "(true)") {
		t.Fatalf("rank 1 got %q, want the fields of messages 0, 3, 6 and 9 only", want)
	}
	for _, gate := range []int{1, 2, 4} {
		for _, r := range []struct {
			name string
			run  func(int, func(hpc.Comm) error) error
		}{{"in-process", hpc.RunInProcess}, {"hosted", hosted}} {
			func() {
				defer replay.SetWindows(0, 0, gate)()
				got := replayAll(t, r.run, register, traces, env)[1].Got
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s, gate %d: rank 1 (-default gate +got):\n%s", r.name, gate, diff)
				}
			}()
		}
	}
}
