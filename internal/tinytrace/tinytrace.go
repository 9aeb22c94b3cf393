// Package tinytrace builds tiny hand-written traces in memory for the
// unit tests of the replay and the patterns: each rank's events as a
// list of steps at times in milliseconds, on a world communicator of all
// ranks, with the regions of Regions.
package tinytrace

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"testing"

	"scout/localtrace"
	"scout/localtrace/otf2"
)

// Regions of the test traces, by id.
var Regions = []string{"main", "work", "MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Wait",
	"MPI_Waitall", "MPI_Barrier", "MPI_Allreduce", "MPI_Bcast", "MPI_Reduce", "MPI_Sendrecv",
	"MPI_Init", "MPI_Finalize"}

// Region returns the id of the region named r; it panics for an unknown
// name.
func Region(r string) uint32 {
	i := slices.Index(Regions, r)
	if i < 0 {
		panic("unknown region " + r)
	}
	return uint32(i)
}

// Step is one event of a test trace.
type Step func(w *otf2.EventWriter) error

const tick = 1e6 // timer ticks per millisecond (resolution 1 GHz)

func ts(ms float64) uint64 { return uint64(math.Round(ms * tick)) }

// Enter enters region r at ms.
func Enter(ms float64, r string) Step {
	return func(w *otf2.EventWriter) error { return w.Enter(ts(ms), Region(r)) }
}

// Leave leaves region r at ms.
func Leave(ms float64, r string) Step {
	return func(w *otf2.EventWriter) error { return w.Leave(ts(ms), Region(r)) }
}

// Call is region r entered at from and left at to, with inner events.
func Call(r string, from, to float64, inner ...Step) []Step {
	return append(append([]Step{Enter(from, r)}, inner...), Leave(to, r))
}

// Send is a blocking send to dst.
func Send(ms float64, dst, tag int, bytes uint64) Step {
	return func(w *otf2.EventWriter) error { return w.MpiSend(ts(ms), uint32(dst), 0, uint32(tag), bytes) }
}

// Recv is a blocking receive from src.
func Recv(ms float64, src, tag int, bytes uint64) Step {
	return func(w *otf2.EventWriter) error { return w.MpiRecv(ts(ms), uint32(src), 0, uint32(tag), bytes) }
}

// Raw is an OTF2 event of type typ with args.
func Raw(ms float64, typ uint8, args ...uint64) Step {
	return func(w *otf2.EventWriter) error {
		ev := &otf2.Event{Type: typ, Time: ts(ms)}
		copy(ev.Args[:], args)
		return w.Write(ev)
	}
}

// Isend is a non-blocking send request.
func Isend(ms float64, dst, tag int, bytes, req uint64) Step {
	return Raw(ms, otf2.EvMpiIsend, uint64(dst), 0, uint64(tag), bytes, req)
}

// IsendComplete completes request req of an Isend.
func IsendComplete(ms float64, req uint64) Step { return Raw(ms, otf2.EvMpiIsendComplete, req) }

// IrecvRequest posts receive request req.
func IrecvRequest(ms float64, req uint64) Step { return Raw(ms, otf2.EvMpiIrecvRequest, req) }

// Irecv completes receive request req.
func Irecv(ms float64, src, tag int, bytes, req uint64) Step {
	return Raw(ms, otf2.EvMpiIrecv, uint64(src), 0, uint64(tag), bytes, req)
}

// Coll is a collective call of op (OTF2 collective operation) in region
// name from begin to end, on the world communicator.
func Coll(name string, op uint8, root int, from, to float64) []Step {
	return Call(name, from, to,
		func(w *otf2.EventWriter) error { return w.MpiCollectiveBegin(ts(from)) },
		func(w *otf2.EventWriter) error { return w.MpiCollectiveEnd(ts(to), op, 0, uint32(root), 8, 8) })
}

// OTF2 collective operations.
const (
	OpBarrier   = 0
	OpBcast     = 1
	OpReduce    = 12
	OpAllreduce = 11
)

// Program is a rank's events inside main, from 0 to end ms.
func Program(end float64, steps ...[]Step) []Step {
	var all []Step
	for _, s := range steps {
		all = append(all, s...)
	}
	return Call("main", 0, end, all...)
}

// Defs are the global definitions of an n-rank test trace.
func Defs(n int) *otf2.Defs {
	d := &otf2.Defs{HasClock: true, Clock: otf2.ClockProperties{TimerResolution: tick * 1000, TraceLength: ts(1e6), Realtime: otf2.Undef64}}
	str := func(s string) uint32 {
		d.Strings = append(d.Strings, otf2.String{Self: uint32(len(d.Strings)), Value: s})
		return uint32(len(d.Strings) - 1)
	}
	empty := str("")
	for i, r := range Regions {
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

// Build writes the ranks' programs and reads them back, through the
// encoders and decoders as a trace comes: it returns the global
// definitions and each rank's trace.
func Build(t testing.TB, progs ...[]Step) (*otf2.Defs, []*localtrace.Trace) {
	t.Helper()
	var db bytes.Buffer
	if _, err := otf2.EncodeGlobalDefs(&db, Defs(len(progs)), 1<<20); err != nil {
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
	return d, traces
}

// Path names a call path of t by its regions, "main/MPI_Recv".
func Path(t *localtrace.Trace, cp uint32) string {
	var names []string
	for ; cp != localtrace.None; cp = t.Callpaths[cp].Parent {
		names = append([]string{Regions[t.Callpaths[cp].Region]}, names...)
	}
	s := names[0]
	for _, n := range names[1:] {
		s += "/" + n
	}
	return s
}
