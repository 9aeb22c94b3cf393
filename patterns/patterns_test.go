package patterns_test

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"scout/hpc"
	"scout/localtrace"
	"scout/localtrace/otf2"
	"scout/patterns"
	"scout/replay"
)

// The pattern tests replay tiny hand-built traces: each rank's events
// as a list of steps at times in milliseconds, with the values every
// pattern must compute from them in closed form.

// Regions of the test traces, by id.
var regions = []string{"main", "work", "MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Wait",
	"MPI_Waitall", "MPI_Barrier", "MPI_Allreduce", "MPI_Bcast", "MPI_Reduce", "MPI_Sendrecv"}

func region(name string) uint32 {
	i := slices.Index(regions, name)
	if i < 0 {
		panic("unknown region " + name)
	}
	return uint32(i)
}

// step is one event of a test trace.
type step func(w *otf2.EventWriter) error

const tick = 1e6 // timer ticks per millisecond (resolution 1 GHz)

func ts(ms float64) uint64 { return uint64(math.Round(ms * tick)) }

func enter(ms float64, r string) step {
	return func(w *otf2.EventWriter) error { return w.Enter(ts(ms), region(r)) }
}

func leave(ms float64, r string) step {
	return func(w *otf2.EventWriter) error { return w.Leave(ts(ms), region(r)) }
}

// call is a region entered at from and left at to, with inner events.
func call(r string, from, to float64, inner ...step) []step {
	return append(append([]step{enter(from, r)}, inner...), leave(to, r))
}

func send(ms float64, dst, tag int, bytes uint64) step {
	return func(w *otf2.EventWriter) error { return w.MpiSend(ts(ms), uint32(dst), 0, uint32(tag), bytes) }
}

func recv(ms float64, src, tag int, bytes uint64) step {
	return func(w *otf2.EventWriter) error { return w.MpiRecv(ts(ms), uint32(src), 0, uint32(tag), bytes) }
}

func raw(ms float64, typ uint8, args ...uint64) step {
	return func(w *otf2.EventWriter) error {
		ev := &otf2.Event{Type: typ, Time: ts(ms)}
		copy(ev.Args[:], args)
		return w.Write(ev)
	}
}

func isend(ms float64, dst, tag int, bytes, req uint64) step {
	return raw(ms, otf2.EvMpiIsend, uint64(dst), 0, uint64(tag), bytes, req)
}

func isendComplete(ms float64, req uint64) step { return raw(ms, otf2.EvMpiIsendComplete, req) }
func irecvRequest(ms float64, req uint64) step  { return raw(ms, otf2.EvMpiIrecvRequest, req) }

func irecv(ms float64, src, tag int, bytes, req uint64) step {
	return raw(ms, otf2.EvMpiIrecv, uint64(src), 0, uint64(tag), bytes, req)
}

// coll is a collective call of op (OTF2 collective op) from begin to
// end, on the world communicator.
func coll(name string, op uint8, root int, from, to float64) []step {
	return call(name, from, to,
		func(w *otf2.EventWriter) error { return w.MpiCollectiveBegin(ts(from)) },
		func(w *otf2.EventWriter) error { return w.MpiCollectiveEnd(ts(to), op, 0, uint32(root), 8, 8) })
}

// OTF2 collective operations.
const (
	opBarrier   = 0
	opBcast     = 1
	opReduce    = 12
	opAllreduce = 11
)

// program is a rank's events inside main, from 0 to end ms.
func program(end float64, steps ...[]step) []step {
	var all []step
	for _, s := range steps {
		all = append(all, s...)
	}
	return call("main", 0, end, all...)
}

// defs are the global definitions of an n-rank test trace.
func defs(n int) *otf2.Defs {
	d := &otf2.Defs{HasClock: true, Clock: otf2.ClockProperties{TimerResolution: tick * 1000, TraceLength: ts(1e6), Realtime: otf2.Undef64}}
	str := func(s string) uint32 {
		d.Strings = append(d.Strings, otf2.String{Self: uint32(len(d.Strings)), Value: s})
		return uint32(len(d.Strings) - 1)
	}
	empty := str("")
	for i, r := range regions {
		p := uint8(otf2.ParadigmMPI)
		if i < 2 {
			p = 2 // compiler instrumentation
		}
		d.Regions = append(d.Regions, otf2.Region{Self: uint32(i), Name: str(r), Canonical: str(r), Description: empty,
			Paradigm: p, File: empty, Role: 1})
	}
	members := make([]uint64, n)
	for r := range n {
		members[r] = uint64(r)
		d.LocationGroups = append(d.LocationGroups, otf2.LocationGroup{Self: uint32(r), Name: str(fmt.Sprint("rank ", r)),
			Type: otf2.LocationGroupTypeProcess, Parent: otf2.Undef32, Creator: otf2.Undef32})
		d.Locations = append(d.Locations, otf2.Location{Self: uint64(r), Name: empty, Type: otf2.LocationTypeCPUThread, Group: uint32(r)})
	}
	d.Groups = []otf2.Group{{Self: 0, Name: empty, Members: members, Type: otf2.GroupTypeCommGroup, Paradigm: otf2.ParadigmMPI}}
	d.Comms = []otf2.Comm{{Self: 0, Name: str("MPI_COMM_WORLD"), Group: 0, Parent: otf2.Undef32}}
	return d
}

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
	// Through the encoder and decoder, as a trace's definitions come.
	var db bytes.Buffer
	if _, err := otf2.EncodeGlobalDefs(&db, defs(len(progs)), 1<<20); err != nil {
		t.Fatal(err)
	}
	d, err := otf2.DecodeGlobalDefs(&db, "defs", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	traces := make([]*localtrace.Trace, len(progs))
	for r, p := range progs {
		var buf bytes.Buffer
		w, err := otf2.NewEventWriter(&buf, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range p {
			if err := s(w); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		rd, err := otf2.NewEventReader(bytes.NewReader(buf.Bytes()), fmt.Sprint("rank ", r), uint64(r), 1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		if traces[r], err = localtrace.Decode(rd, d, uint64(r), w.Count()); err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	env, err := replay.NewEnv(d)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	var mu sync.Mutex
	err = hpc.RunInProcess(len(progs), func(c hpc.Comm) error {
		tr := traces[c.Rank()]
		l, err := replay.NewLocation(env, tr, c.Rank(), c)
		if err != nil {
			return err
		}
		bus := &replay.Bus{}
		register(bus)
		if err := replay.NewReplayer(bus, l).Run(); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for metric, row := range patterns.Named(l.Sev) {
			for cp, v := range row {
				if v != 0 {
					got[fmt.Sprintf("%s %s %d", metric, path(d, tr, uint32(cp)), c.Rank())] += v
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// path names a call path by its regions, "main/MPI_Recv".
func path(d *otf2.Defs, t *localtrace.Trace, cp uint32) string {
	var names []string
	for ; cp != localtrace.None; cp = t.Callpaths[cp].Parent {
		names = append([]string{regions[t.Callpaths[cp].Region]}, names...)
	}
	s := names[0]
	for _, n := range names[1:] {
		s += "/" + n
	}
	return s
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
			if name := regions[c.Event().A]; name == "MPI_Recv" {
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
