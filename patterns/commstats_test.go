package patterns_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/internal/tinytrace"
	"scout/localtrace/otf2"
	"scout/patterns"
	"scout/replay"
)

// commResult is what the communication-matrix pattern counted on one
// rank.
type commResult struct {
	Peers []patterns.CommPeer
	Sizes []uint64
}

// replayComm replays the ranks' programs with the patterns register
// subscribes, on the definitions of tinytrace with a second
// communicator (id 1) of all ranks in reverse order, and returns what
// the communication-matrix pattern counted per rank (nil entries where
// it was not registered) and the message statistics.
func replayComm(t *testing.T, register func(*replay.Bus), progs ...[]step) ([]*commResult, map[string]float64) {
	t.Helper()
	d, traces := tinytrace.Build(t, progs...)
	n := len(progs)
	reversed := make([]uint64, n)
	for r := range n {
		reversed[r] = uint64(n - 1 - r)
	}
	d.Groups = append(d.Groups, otf2.Group{Self: 1, Name: d.Groups[0].Name, Members: reversed,
		Type: otf2.GroupTypeCommGroup, Paradigm: otf2.ParadigmMPI})
	d.Comms = append(d.Comms, otf2.Comm{Self: 1, Name: d.Comms[0].Name, Group: 1, Parent: 0})
	var db bytes.Buffer
	if _, err := otf2.EncodeGlobalDefs(&db, d, 1<<20); err != nil {
		t.Fatal(err)
	}
	d, err := otf2.DecodeGlobalDefs(&db, "defs", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*commResult, n)
	stats := map[string]float64{}
	replayTiny(t, d, traces, register, func(rank int, bus *replay.Bus, l *replay.Location) {
		if cc := patterns.CommCountsOf(bus); cc != nil {
			out[rank] = &commResult{Peers: cc.Peers(), Sizes: cc.Sizes()}
		}
		for metric, row := range patterns.Named(l.Sev) {
			for _, v := range row {
				stats[fmt.Sprint(metric, " ", rank)] += v
			}
		}
	})
	return out, stats
}

// sendOn is a blocking send on communicator comm.
func sendOn(ms float64, dst, comm, tag int, bytes uint64) step {
	return tinytrace.Raw(ms, otf2.EvMpiSend, uint64(dst), uint64(comm), uint64(tag), bytes)
}

// recvOn is a blocking receive on communicator comm.
func recvOn(ms float64, src, comm, tag int, bytes uint64) step {
	return tinytrace.Raw(ms, otf2.EvMpiRecv, uint64(src), uint64(comm), uint64(tag), bytes)
}

// TestCommStats: the pattern counts every send (blocking and
// non-blocking, of 0 bytes and more) by the receiver's world rank, and
// by size; its rows sum to the message statistics.
func TestCommStats(t *testing.T) {
	progs := [][]step{
		// rank 0 sends 100 B and 0 B to 1, 4 B to 2 (non-blocking), and
		// 5 B to rank 0 of the reversed communicator, world rank 2
		program(20,
			call("MPI_Send", 1, 2, send(1.5, 1, 0, 100)),
			call("MPI_Send", 2, 3, send(2.5, 1, 0, 0)),
			call("MPI_Isend", 3, 4, isend(3.5, 2, 1, 4, 1)),
			call("MPI_Wait", 4, 5, isendComplete(4.5, 1)),
			call("MPI_Send", 5, 6, sendOn(5.5, 0, 1, 2, 5))),
		// rank 1 receives both, and sends 1 KiB to 2 on the reversed
		// communicator (its rank 0 is world rank 2), twice
		program(20,
			call("MPI_Recv", 1, 2, recv(1.8, 0, 0, 100)),
			call("MPI_Recv", 2, 3, recv(2.8, 0, 0, 0)),
			call("MPI_Send", 6, 7, sendOn(6.5, 0, 1, 3, 1024)),
			call("MPI_Send", 7, 8, sendOn(7.5, 0, 1, 3, 1024))),
		// rank 2 receives, sends nothing
		program(20,
			call("MPI_Irecv", 0.5, 1, irecvRequest(0.8, 7)),
			call("MPI_Wait", 3, 4, irecv(3.8, 0, 1, 4, 7)),
			call("MPI_Recv", 5, 6, recvOn(5.8, 2, 1, 2, 5)),
			call("MPI_Recv", 6, 7, recvOn(6.8, 1, 1, 3, 1024)),
			call("MPI_Recv", 7, 8, recvOn(7.8, 1, 1, 3, 1024))),
	}
	got, stats := replayComm(t, patterns.Register, progs...)
	bins := func(set map[int]uint64) []uint64 {
		var s []uint64
		for k, n := range set {
			for len(s) <= k {
				s = append(s, 0)
			}
			s[k] = n
		}
		return s
	}
	want := []*commResult{
		{Peers: []patterns.CommPeer{{To: 1, Messages: 1, Bytes: 100, Syncs: 1}, {To: 2, Messages: 2, Bytes: 9}},
			Sizes: bins(map[int]uint64{0: 1, 3: 2, 7: 1})},
		{Peers: []patterns.CommPeer{{To: 2, Messages: 2, Bytes: 2048}}, Sizes: bins(map[int]uint64{11: 2})},
		{},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// the rows sum to the message statistics
	for r, res := range got {
		var sum patterns.CommPeer
		for _, p := range res.Peers {
			sum.Messages += p.Messages
			sum.Bytes += p.Bytes
			sum.Syncs += p.Syncs
		}
		stat := func(metric string) uint64 { return uint64(stats[fmt.Sprint(metric, " ", r)]) }
		want := patterns.CommPeer{Messages: stat("comms_send"), Bytes: stat("bytes_sent"), Syncs: stat("syncs_send")}
		if sum != want {
			t.Errorf("rank %d: row sums %+v, message statistics %+v", r, sum, want)
		}
		var n uint64
		for _, k := range res.Sizes {
			n += k
		}
		if n != sum.Messages+sum.Syncs {
			t.Errorf("rank %d: %d messages in the size histogram, %d sent", r, n, sum.Messages+sum.Syncs)
		}
	}
}

// TestCommStatsUnregistered: without the pattern, CommCountsOf is nil,
// and the pattern alone runs the forward pass only.
func TestCommStatsUnregistered(t *testing.T) {
	progs := [][]step{
		program(10, call("MPI_Send", 1, 2, send(1.5, 1, 0, 8))),
		program(10, call("MPI_Recv", 1, 3, recv(2.5, 0, 0, 8))),
	}
	var table []patterns.Pattern
	for _, p := range patterns.Patterns {
		if p.Name != "communication matrix" {
			table = append(table, p)
		}
	}
	if len(table) != len(patterns.Patterns)-1 {
		t.Fatal(`no pattern "communication matrix" in the pattern table`)
	}
	got, _ := replayComm(t, func(bus *replay.Bus) {
		for _, p := range table {
			p.Register(bus)
		}
	}, progs...)
	if d := cmp.Diff([]*commResult{nil, nil}, got); d != "" {
		t.Errorf("without the pattern (-want +got):\n%s", d)
	}
	for _, p := range patterns.Patterns {
		if p.Name != "communication matrix" {
			continue
		}
		bus := &replay.Bus{}
		p.Register(bus)
		if !bus.Runs(replay.Forward) || bus.Runs(replay.Backward) {
			t.Errorf("passes: forward %v, backward %v; want forward only", bus.Runs(replay.Forward), bus.Runs(replay.Backward))
		}
		got, _ := replayComm(t, p.Register, progs...)
		want := []*commResult{{Peers: []patterns.CommPeer{{To: 1, Messages: 1, Bytes: 8}}, Sizes: []uint64{0, 0, 0, 0, 1}}, {}}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("the pattern alone (-want +got):\n%s", d)
		}
	}
}

func TestCommSizeBin(t *testing.T) {
	for _, tc := range []struct {
		bytes uint64
		bin   int
	}{{0, 0}, {1, 1}, {2, 2}, {3, 2}, {4, 3}, {1 << 20, 21}, {1<<20 + 1, 21}, {1<<64 - 1, 64}} {
		if got := patterns.CommSizeBin(tc.bytes); got != tc.bin {
			t.Errorf("CommSizeBin(%d) = %d, want %d", tc.bytes, got, tc.bin)
		}
	}
	if patterns.CommSizeBins != patterns.CommSizeBin(1<<64-1)+1 {
		t.Errorf("CommSizeBins = %d", patterns.CommSizeBins)
	}
}
