package patterns_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"scout/hpc"
	"scout/internal/tinytrace"
	"scout/localtrace"
	"scout/localtrace/otf2"
	"scout/patterns"
	"scout/replay"
	"scout/unify"
)

// The pattern tests replay tiny hand-built traces: each rank's events
// as a list of steps at times in milliseconds, with the values every
// pattern must compute from them in closed form.

// The trace builder's steps, by the short names the tests use.
type step = tinytrace.Step

var (
	regions       = tinytrace.Regions
	call          = tinytrace.Call
	send          = tinytrace.Send
	recv          = tinytrace.Recv
	isend         = tinytrace.Isend
	isendComplete = tinytrace.IsendComplete
	irecvRequest  = tinytrace.IrecvRequest
	irecv         = tinytrace.Irecv
	coll          = tinytrace.Coll
	program       = tinytrace.Program
)

// OTF2 collective operations.
const (
	opBarrier   = tinytrace.OpBarrier
	opBcast     = tinytrace.OpBcast
	opReduce    = tinytrace.OpReduce
	opAllreduce = tinytrace.OpAllreduce
)

// analyze replays the ranks' programs with the pattern catalog and
// returns every non-zero value by "metric path rank", with the path of
// region names.
func analyze(t *testing.T, progs ...[]step) map[string]float64 {
	t.Helper()
	return analyzeWith(t, patterns.Register, progs...)
}

// analyzeWith is analyze with the patterns that register subscribes.
func analyzeWith(t *testing.T, register func(*replay.Bus), progs ...[]step) map[string]float64 {
	t.Helper()
	return analyzeDefs(t, nil, register, progs...)
}

// analyzeDefs is analyzeWith with the definitions that defs makes of the
// test trace's (nil: as they are).
func analyzeDefs(t *testing.T, defs func(*otf2.Defs) *otf2.Defs, register func(*replay.Bus), progs ...[]step) map[string]float64 {
	t.Helper()
	d, traces := tinytrace.Build(t, progs...)
	if defs != nil {
		d = defs(d)
	}
	got := map[string]float64{}
	replayTiny(t, d, traces, register, func(rank int, _ *replay.Bus, l *replay.Location) {
		for metric, row := range patterns.Named(l.Sev) {
			for cp, v := range row {
				if v != 0 {
					got[fmt.Sprintf("%s %s %d", metric, tinytrace.Path(l.Trace, uint32(cp)), rank)] += v
				}
			}
		}
	})
	return got
}

// replayTiny replays the traces (one per rank, with definitions d) in
// this process with the patterns register subscribes, and calls done
// with each rank's bus and location after its replay, one rank at a time.
func replayTiny(t *testing.T, d *otf2.Defs, traces []*localtrace.Trace, register func(*replay.Bus), done func(rank int, bus *replay.Bus, l *replay.Location)) {
	t.Helper()
	env, err := replay.NewEnv(d)
	if err != nil {
		t.Fatal(err)
	}
	locals := make([][]localtrace.Callpath, len(traces))
	for i, tr := range traces {
		locals[i] = tr.Callpaths
	}
	tree, global, err := unify.Unify(locals)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	err = hpc.RunInProcess(len(traces), func(c hpc.Comm) error {
		l, err := replay.NewLocation(env, traces[c.Rank()], c.Rank(), c)
		if err != nil {
			return err
		}
		l.Global, l.NumGlobal = global[c.Rank()], len(tree.Nodes)
		bus := &replay.Bus{}
		register(bus)
		if err := replay.NewReplayer(bus, l).Run(); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		done(c.Rank(), bus, l)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// seconds converts milliseconds.
func seconds(ms float64) float64 { return ms / 1000 }

// only keeps the metrics of want's keys' kinds: the wait states, not the
// message counts and bytes the tests do not spell out.
func only(got map[string]float64, metrics ...string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range got {
		for _, m := range metrics {
			if len(k) > len(m) && k[:len(m)+1] == m+" " {
				out[k] = v
			}
		}
	}
	return out
}

var approx = cmpopts.EquateApprox(0, 1e-12)

func TestPatterns(t *testing.T) {
	tests := []struct {
		name    string
		progs   [][]step
		metrics []string
		want    map[string]float64
	}{
		{
			name: "late sender: the receiver waits 3 ms",
			progs: [][]step{
				program(10, call("work", 1, 5), call("MPI_Send", 5, 6, send(5.5, 1, 7, 8))),
				program(10, call("MPI_Recv", 2, 7, recv(6.5, 0, 7, 8))),
			},
			metrics: []string{"mpi_latesender", "mpi_cls_count", "mpi_latereceiver"},
			want: map[string]float64{
				"mpi_latesender main/MPI_Recv 1": seconds(3),
				"mpi_cls_count main/MPI_Recv 1":  1,
			},
		},
		{
			name: "late receiver: a blocking send waits for the receive",
			progs: [][]step{
				program(10, call("MPI_Send", 1, 6, send(1.5, 1, 7, 0))),
				program(10, call("work", 1, 4), call("MPI_Recv", 4, 6, recv(5.5, 0, 7, 0))),
			},
			metrics: []string{"mpi_latesender", "mpi_latereceiver", "mpi_slr_count"},
			want: map[string]float64{
				"mpi_latereceiver main/MPI_Send 0": seconds(3),
				"mpi_slr_count main/MPI_Send 0":    1,
			},
		},
		{
			name: "late sender inside MPI_Waitall: only the largest wait counts",
			progs: [][]step{
				program(20, call("work", 0, 6), call("MPI_Send", 6, 7, send(6.5, 2, 1, 8))),
				program(20, call("work", 0, 9), call("MPI_Send", 9, 10, send(9.5, 2, 2, 8))),
				program(20,
					call("MPI_Irecv", 1, 1.1, irecvRequest(1.05, 1)), call("MPI_Irecv", 1.2, 1.3, irecvRequest(1.25, 2)),
					call("MPI_Waitall", 2, 11, irecv(7.5, 0, 1, 8, 1), irecv(10.5, 1, 2, 8, 2))),
			},
			metrics: []string{"mpi_latesender", "mpi_cls_count"},
			want: map[string]float64{
				// waits 9 - 2 = 7 ms for rank 1 (rank 0's 4 ms is smaller)
				"mpi_latesender main/MPI_Waitall 2": seconds(7),
				"mpi_cls_count main/MPI_Waitall 2":  1,
			},
		},
		{
			name: "wrong order: rank 2 receives first what was sent last",
			progs: [][]step{
				program(20, call("MPI_Send", 1, 2, send(1.5, 2, 1, 8))),
				program(20, call("work", 0, 5), call("MPI_Send", 5, 6, send(5.5, 2, 2, 8))),
				program(20, call("MPI_Recv", 3, 7, recv(6.5, 1, 2, 8)), call("MPI_Recv", 7, 8, recv(7.5, 0, 1, 8))),
			},
			metrics: []string{"mpi_latesender", "mpi_latesender_wo", "mpi_lswo_different", "mpi_lswo_same"},
			want: map[string]float64{
				// the first receive waits 5 - 3 = 2 ms for rank 1, while
				// rank 0's older message was already there
				"mpi_latesender main/MPI_Recv 2":     seconds(2),
				"mpi_latesender_wo main/MPI_Recv 2":  seconds(2),
				"mpi_lswo_different main/MPI_Recv 2": seconds(2),
			},
		},
		{
			name: "wrong order beyond the remembered Late Sender instances",
			// rank 1 waits 1 ms in each of 250 receives, then receives a
			// message sent before all of them: only the last 100
			// instances (the reference's buffer) are in wrong order
			progs:   lateThenOld(250),
			metrics: []string{"mpi_latesender", "mpi_latesender_wo", "mpi_lswo_different", "mpi_lswo_same"},
			want: map[string]float64{
				"mpi_latesender main/MPI_Recv 1":    seconds(250),
				"mpi_latesender_wo main/MPI_Recv 1": seconds(100),
				"mpi_lswo_same main/MPI_Recv 1":     seconds(100),
			},
		},
		{
			name: "barrier with one late rank",
			progs: [][]step{
				program(20, coll("MPI_Barrier", opBarrier, -1, 2, 10)),
				program(20, coll("MPI_Barrier", opBarrier, -1, 4, 10.5)),
				program(20, call("work", 0, 9), coll("MPI_Barrier", opBarrier, -1, 9, 11)),
			},
			metrics: []string{"mpi_barrier_wait", "mpi_barrier_completion"},
			want: map[string]float64{
				"mpi_barrier_wait main/MPI_Barrier 0": seconds(7),
				"mpi_barrier_wait main/MPI_Barrier 1": seconds(5),
				// completion: time after the first rank left (10 ms)
				"mpi_barrier_completion main/MPI_Barrier 1": seconds(0.5),
				"mpi_barrier_completion main/MPI_Barrier 2": seconds(1),
			},
		},
		{
			name: "late broadcast and early reduce",
			progs: [][]step{
				program(30, call("work", 0, 5), coll("MPI_Bcast", opBcast, 0, 5, 6), coll("MPI_Reduce", opReduce, 0, 7, 15)),
				program(30, coll("MPI_Bcast", opBcast, 0, 1, 6), call("work", 6, 14), coll("MPI_Reduce", opReduce, 0, 14, 15)),
			},
			metrics: []string{"mpi_latebroadcast", "mpi_earlyreduce"},
			want: map[string]float64{
				"mpi_latebroadcast main/MPI_Bcast 1": seconds(4),
				"mpi_earlyreduce main/MPI_Reduce 0":  seconds(7),
			},
		},
		{
			name: "non-blocking send completed in MPI_Wait after the receive",
			progs: [][]step{
				program(20, call("MPI_Isend", 1, 1.5, isend(1.2, 1, 3, 8, 9)), call("MPI_Wait", 2, 6, isendComplete(5.5, 9))),
				program(20, call("work", 0, 4), call("MPI_Recv", 4, 5, recv(4.5, 0, 3, 8))),
			},
			metrics: []string{"mpi_latesender", "mpi_latereceiver"},
			want: map[string]float64{
				"mpi_latereceiver main/MPI_Wait 0": seconds(2),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := only(analyze(t, tc.progs...), tc.metrics...)
			if diff := cmp.Diff(tc.want, got, approx); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// lateThenOld is two ranks: rank 0 sends a message on tag 2 first, then
// n messages on tag 1, each 1 ms after rank 1 began to receive it; rank 1
// receives the n messages, then the first one.
func lateThenOld(n int) [][]step {
	r0 := [][]step{call("MPI_Send", 0.1, 0.2, send(0.15, 1, 2, 8))}
	var r1 [][]step
	for i := range n {
		t0 := 1 + 2*float64(i)
		r0 = append(r0, call("MPI_Send", t0+1, t0+1.2, send(t0+1.1, 1, 1, 8)))
		r1 = append(r1, call("MPI_Recv", t0, t0+1.5, recv(t0+1.4, 0, 1, 8)))
	}
	end := 2*float64(n) + 10
	r1 = append(r1, call("MPI_Recv", end-5, end-4, recv(end-4.5, 0, 2, 8)))
	return [][]step{program(end, r0...), program(end, r1...)}
}

// TestMessageStatistics: counts and bytes of messages and collectives.
func TestMessageStatistics(t *testing.T) {
	got := analyze(t,
		program(10, call("MPI_Send", 1, 2, send(1.5, 1, 0, 100)), call("MPI_Send", 2, 3, send(2.5, 1, 0, 0)),
			coll("MPI_Allreduce", opAllreduce, -1, 4, 5)),
		program(10, call("MPI_Recv", 1, 2, recv(1.8, 0, 0, 100)), call("MPI_Recv", 2, 3, recv(2.8, 0, 0, 0)),
			coll("MPI_Allreduce", opAllreduce, -1, 4, 5)),
	)
	want := map[string]float64{
		"comms_send main/MPI_Send 0":      1,
		"syncs_send main/MPI_Send 0":      1,
		"bytes_sent main/MPI_Send 0":      100,
		"comms_recv main/MPI_Recv 1":      1,
		"syncs_recv main/MPI_Recv 1":      1,
		"bytes_rcvd main/MPI_Recv 1":      100,
		"comms_cxch main/MPI_Allreduce 0": 1,
		"comms_cxch main/MPI_Allreduce 1": 1,
		"bytes_cout main/MPI_Allreduce 0": 8,
		"bytes_cout main/MPI_Allreduce 1": 8,
		"bytes_cin main/MPI_Allreduce 0":  8,
		"bytes_cin main/MPI_Allreduce 1":  8,
	}
	got = only(got, "comms_send", "syncs_send", "bytes_sent", "comms_recv", "syncs_recv", "bytes_rcvd", "comms_cxch", "bytes_cout", "bytes_cin")
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestToyPattern adds a pattern in this file alone: it publishes an
// event of its own for every receive region it enters, a second
// subscriber counts them, and only the forward pass runs.
func TestToyPattern(t *testing.T) {
	type recvEntered struct{ region string }
	entered := replay.NewEvent[recvEntered]("RecvEntered")
	count := 0
	toy := func(bus *replay.Bus) {
		bus.On(replay.FwEnter, func(c *replay.Ctx) error {
			if name := regions[c.Trace.Region(c.Index)]; name == "MPI_Recv" {
				return replay.Emit(bus, entered, c, &recvEntered{name})
			}
			return nil
		})
		replay.Subscribe(bus, entered, func(c *replay.Ctx, e *recvEntered) error {
			count++
			c.Add(patterns.Visits, c.Callpath(c.Index), 1)
			return nil
		})
	}
	bus := &replay.Bus{}
	toy(bus)
	if !bus.Runs(replay.Forward) || bus.Runs(replay.Backward) {
		t.Errorf("passes run: forward %v, backward %v; want forward only", bus.Runs(replay.Forward), bus.Runs(replay.Backward))
	}
	got := analyzeWith(t, toy,
		program(10, call("MPI_Send", 1, 2, send(1.5, 1, 0, 8))),
		program(10, call("MPI_Recv", 1, 3, recv(2.5, 0, 0, 8)), call("MPI_Recv", 4, 5)),
	)
	if diff := cmp.Diff(map[string]float64{"visits main/MPI_Recv 1": 2}, got); diff != "" || count != 2 {
		t.Errorf("count %d, values (-want +got):\n%s", count, diff)
	}
}

// TestOpenMPSubscriptions: the OpenMP patterns subscribe to the events
// they analyze (every Enter and Leave, lock acquisitions) only when the
// trace defines an OpenMP region, or when its definitions are not known;
// the replay then skips the Enter events of an MPI-only trace.
func TestOpenMPSubscriptions(t *testing.T) {
	withOmp := func(name, file string) *otf2.Defs {
		d := tinytrace.Defs(2)
		s := uint32(len(d.Strings))
		d.Strings = append(d.Strings, otf2.String{Self: s, Value: name}, otf2.String{Self: s + 1, Value: file})
		d.Regions = append(d.Regions, otf2.Region{Self: uint32(len(d.Regions)), Name: s, Canonical: s, File: s + 1,
			Paradigm: uint8(otf2.ParadigmOpenMP), Role: 1})
		return d
	}
	tests := []struct {
		name string
		defs *otf2.Defs // nil: not known
		want []bool     // subscribers of FwEnter, FwLockAcquire
	}{
		{"MPI only", tinytrace.Defs(2), []bool{false, false}},
		{"parallel region", withOmp("!$omp parallel @a.c:1", "a.c"), []bool{true, true}},
		{"lock API", withOmp("omp_set_lock", "OMP"), []bool{true, true}},
		{"definitions not known", nil, []bool{true, true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bus := &replay.Bus{}
			if tc.defs != nil {
				var buf bytes.Buffer // (decoded definitions are indexed)
				if _, err := otf2.EncodeGlobalDefs(&buf, tc.defs, 1<<20); err != nil {
					t.Fatal(err)
				}
				d, err := otf2.DecodeGlobalDefs(&buf, "defs", 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				env, err := replay.NewEnv(d)
				if err != nil {
					t.Fatal(err)
				}
				bus.Env = env
			}
			patterns.Register(bus)
			patterns.RegisterStatistics(bus)
			got := []bool{bus.Has(replay.FwEnter), bus.Has(replay.FwLockAcquire)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("subscribed (-want +got):\n%s", diff)
			}
		})
	}
}
