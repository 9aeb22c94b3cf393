package patterns

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/replay"
)

// TestRunExact checks that a run composed by span.add reaches, from any
// clock, the clock that stepping event by event (advance) reaches, to the
// bit, where the solution accepts it (below the top of its binade): for
// runs of random times with small and large steps, and clocks from the
// times on to far ahead of them.
func TestRunExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	runs, checked := 0, 0
	for range 2000 {
		t0 := math.Ldexp(1+rng.Float64(), rng.IntN(12)-6) // 1/64 s .. 64 s
		e0 := exponentOf(t0)
		times := []float64{t0}
		sp := emptySpan
		prevE := e0
		for range 1 + rng.IntN(50) {
			prev := times[len(times)-1]
			var dt float64
			switch rng.IntN(4) {
			case 0:
				dt = 0 // (δ steps)
			case 1:
				dt = rng.Float64() * 1e-9
			default:
				dt = rng.Float64() * math.Ldexp(1, -8-rng.IntN(20))
			}
			cur := prev + dt
			bn := newBinade(prevE, 0)
			if !sp.add(&bn, exponentOf(cur), stepOf(prev, cur), cur) {
				break
			}
			prevE = exponentOf(cur)
			times = append(times, cur)
		}
		if len(times) < 2 {
			continue
		}
		runs++
		for range 20 {
			// the clock at the run's first event: its time or ahead
			x := times[0] + rng.Float64()*math.Ldexp(1, -rng.IntN(40))
			seq := x
			for i := 1; i < len(times); i++ {
				seq = advance(seq, times[i-1], times[i])
			}
			got := clockAt(x, sp.a, sp.b)
			if got >= binadeTop(sp.e) {
				continue // (the solution builds the skeletons again)
			}
			checked++
			if got != seq {
				t.Fatalf("run of %d events from %v, clock %v: composed %v, stepped %v", len(times), times[0], x, got, seq)
			}
		}
	}
	if runs < 1000 || checked < 10000 {
		t.Fatalf("only %d runs, %d clocks checked", runs, checked)
	}
}

// TestBinadeStep: a step half-way between two multiples of the binade's ulp
// (a tie) is refused, as is one out of the binade; others are rounded
// to a multiple of the ulp.
func TestBinadeStep(t *testing.T) {
	bn := newBinade(1023, 0) // [1, 2): ulp 2^-52
	u := math.Ldexp(1, -52)
	for _, tc := range []struct {
		name string
		s    float64
		want float64
		ok   bool
	}{
		{"multiple", 3 * u, 3 * u, true},
		{"below half", 3*u + u/4, 3 * u, true},
		{"above half", 3*u + 3*u/4, 4 * u, true},
		{"tie", 3*u + u/2, 0, false},
		{"out of the binade", 1, 0, false},
	} {
		got, ok := bn.step(tc.s)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%s: step(%g) = %g, %v; want %g, %v", tc.name, tc.s, got, ok, tc.want, tc.ok)
		}
	}
}

// skel writes skeletons by hand: records as builder.entry makes them.
type skel struct{ b []byte }

func newSkel(start float64, comms int) *skel {
	s := &skel{b: []byte{1, recordStart}}
	s.b = appendFloat(s.b, start)
	s.b = binary.LittleEndian.AppendUint32(s.b, uint32(comms))
	return s
}

func (s *skel) channel(peer, comm, tag uint32, recv bool) *skel {
	s.b = append(s.b, recordChan)
	for _, v := range []uint32{peer, comm, tag} {
		s.b = binary.LittleEndian.AppendUint32(s.b, v)
	}
	dir := byte(0)
	if recv {
		dir = 1
	}
	s.b = append(s.b, dir)
	return s
}

// run is an exact run by a: to the time b, nothing else (b ≥ x + a)
func run(a, b float64) span { return span{a, b, 1023} }

func (s *skel) message(kind byte, ch uint32, sp span) *skel {
	s.b = append(s.b, kind)
	s.b = binary.LittleEndian.AppendUint32(s.b, ch)
	s.b = appendSpan(s.b, sp)
	return s
}

func (s *skel) barrier(me, size uint32, back uint32, sp, begin span) *skel {
	s.b = append(s.b, entryColl, byte(replay.CollBarrier), 3)
	for _, v := range []uint32{0, me, size, 0, back} {
		s.b = binary.LittleEndian.AppendUint32(s.b, v)
	}
	s.b = appendSpan(appendSpan(s.b, sp), begin)
	return s
}

func (s *skel) end() []byte { return append(s.b, recordEnd) }

// solve solves skeletons and returns each rank's clocks and bounds
// (those of its sends of messages from the final message), receives
// moved, and its final message's status and text.
type solvedRank struct {
	status         byte
	clocks, bounds []float64
	sendBounds     []float64
	moved          int
	text           string
}

func solve(t *testing.T, skels ...[]byte) []solvedRank {
	t.Helper()
	out := make([]solvedRank, len(skels))
	emit := func(l int, msg []byte) error {
		if msg[0] != clocksChunk || (len(msg)-1)%16 != 0 {
			t.Fatalf("rank %d: clocks message of kind %d, %d bytes", l, msg[0], len(msg))
		}
		for b := msg[1:]; len(b) > 0; b = b[16:] {
			out[l].clocks = append(out[l].clocks, getFloat(b))
			out[l].bounds = append(out[l].bounds, getFloat(b[8:]))
		}
		return nil
	}
	for l, msg := range solveClocks(sources(skels...), startZone, emit) {
		r := &out[l]
		r.status = msg[0]
		switch msg[0] {
		case solvedOK:
			r.moved = int(binary.LittleEndian.Uint64(msg[1:]))
			for b := msg[9:]; len(b) > 0; b = b[8:] {
				r.sendBounds = append(r.sendBounds, getFloat(b))
			}
		case solvedStuck:
			r.text = string(msg[5:])
		case solvedAgain:
			r.sendBounds = []float64{getFloat(msg[1:])} // (the zone)
		default:
			r.text = string(msg[1:])
		}
	}
	return out
}

func sources(skels ...[]byte) []source {
	srcs := make([]source, len(skels))
	for i, b := range skels {
		srcs[i] = func() ([]byte, error) { return b, nil }
	}
	return srcs
}

// TestSolveClocks solves small skeletons whose clocks follow by hand:
// a receive moved past its send plus the latency, a barrier that moves
// the early members' ends past the latest begin, and the bounds of the
// sends and begins.
func TestSolveClocks(t *testing.T) {
	const λ = clcLatency
	nan := math.NaN()
	// rank 0 sends at 1.5 (its clock starts at 1.0, the run to the send
	// adds 0.5); rank 1 receives at 1.2: moved to 1.5 + λ; then both
	// enter a barrier (rank 0 at 1.7, rank 1 at its clock + 0.1) and
	// leave it 0.05 later
	s0 := newSkel(1.0, 2).channel(1, 0, 7, false).message(entrySend, 0, run(0.5, 1.5)).
		barrier(0, 2, 0, run(0.25, 1.75), run(0.2, 1.7)).end()
	s1 := newSkel(1.0, 2).channel(0, 0, 7, true).message(entryRecv, 0, run(0.2, 1.2)).
		barrier(1, 2, 0, run(0.15, 1.3), run(0.1, 1.2)).end()
	got := solve(t, s0, s1)
	recv := 1.5 + λ
	begin1 := recv + 0.1
	latest := max(1.7, begin1) + λ
	barrierBound := max(latest, min(1.75, recv+0.15))
	want := []solvedRank{
		{status: solvedOK, moved: 2, clocks: []float64{1.5, max(latest, 1.75)}, bounds: []float64{nan, barrierBound}, sendBounds: []float64{recv}},
		{status: solvedOK, moved: 2, clocks: []float64{recv, max(latest, recv+0.15)}, bounds: []float64{nan, barrierBound}},
	}
	// (moved: the message, rank 0's barrier end)
	if d := cmp.Diff(want, got, cmp.AllowUnexported(solvedRank{}), cmp.Comparer(func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) })); d != "" {
		t.Errorf("solution (-want +got):\n%s", d)
	}
}

// TestSolveClocksFailures: a receive without its send and a collective
// that a member does not reach leave their ranks stuck; a send without
// its receive where some receive moved leaves the sender stuck; a
// skeleton cut short, or one whose run leaves its binade, fails or asks
// for the skeletons again.
func TestSolveClocksFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		skels  [][]byte
		status []byte
		text   []string // by rank, in the message ("" for none)
	}{
		{"receive without send", [][]byte{
			newSkel(1, 0).end(),
			newSkel(1, 1).channel(0, 0, 7, true).message(entryRecv, 0, run(0.2, 1.2)).end()},
			[]byte{solvedOK, solvedStuck}, []string{"", "waits for a message that no rank sends"}},
		{"barrier not reached", [][]byte{
			newSkel(1, 1).barrier(0, 2, 0, run(0.1, 1.1), emptySpan).end(),
			newSkel(1, 0).end()},
			[]byte{solvedStuck, solvedOK}, []string{"not every member reaches", ""}},
		{"send without receive", [][]byte{
			newSkel(1, 2).channel(1, 0, 7, false).message(entrySend, 0, run(0.5, 1.5)).message(entrySend, 0, run(0.1, 1.6)).end(),
			newSkel(1, 1).channel(0, 0, 7, true).message(entryRecv, 0, run(0.2, 1.2)).end()},
			[]byte{solvedStuck, solvedOK}, []string{"rank 1 received fewer messages", ""}},
		{"cut short", [][]byte{newSkel(1, 0).b[:5], newSkel(1, 0).end()},
			[]byte{solvedFailed, solvedFailed}, []string{"cut short", "cut short"}},
		{"no end", [][]byte{newSkel(1, 0).b, newSkel(1, 0).end()},
			[]byte{solvedFailed, solvedFailed}, []string{"without its end", "without its end"}},
		{"unknown record", [][]byte{append(newSkel(1, 0).b, 99), newSkel(1, 0).end()},
			[]byte{solvedFailed, solvedFailed}, []string{"unknown kind 99", "unknown kind 99"}},
		{"out of its binade and stuck", [][]byte{
			newSkel(1.9, 1).channel(1, 0, 7, false).message(entrySend, 0, run(0.5, 1.5)).end(),
			newSkel(1, 2).channel(0, 0, 7, true).message(entryRecv, 0, run(0.2, 1.2)).message(entryRecv, 0, run(0.1, 1.3)).end()},
			[]byte{solvedFailed, solvedStuck}, []string{"rank 1 cannot finish", "waits for a message that no rank sends"}},
		{"run out of its binade", [][]byte{
			newSkel(1.9, 1).channel(1, 0, 7, false).message(entrySend, 0, run(0.5, 1.5)).end(),
			newSkel(1, 1).channel(0, 0, 7, true).message(entryRecv, 0, run(0.2, 1.2)).end()},
			[]byte{solvedAgain, solvedAgain}, []string{"", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := solve(t, tc.skels...)
			for r, g := range got {
				if g.status != tc.status[r] {
					t.Errorf("rank %d: status %d (%s), want %d", r, g.status, g.text, tc.status[r])
				}
				if !strings.Contains(g.text, tc.text[r]) {
					t.Errorf("rank %d: %q does not mention %q", r, g.text, tc.text[r])
				}
			}
			if tc.status[0] == solvedAgain {
				if zone := got[0].sendBounds[0]; zone < 2*startZone {
					t.Errorf("the zone to build again with is %g", zone)
				}
			}
		})
	}
}

// BenchmarkSolveClocks solves the skeletons of four ranks that pass
// messages round a ring and meet in a barrier, 100 000 times (1.2 M
// entries, about what the 8 M-event bench trace of `make
// timecorrect-bench` gives): the serial part of the correction, on
// location 0.
func BenchmarkSolveClocks(b *testing.B) {
	const ranks, rounds = 4, 100_000
	skels := make([][]byte, ranks)
	for r := range ranks {
		s := newSkel(1.0, 3*rounds).channel(uint32((r+1)%ranks), 0, 7, false).channel(uint32((r+ranks-1)%ranks), 0, 7, true)
		x := 1.0
		for range rounds {
			// (small steps: every clock stays in the binade [1, 2))
			s = s.message(entrySend, 0, run(1e-7, x+1e-7)).message(entryRecv, 1, run(1e-7, x+2e-7)).
				barrier(uint32(r), ranks, 0, run(2e-7, x+4e-7), run(1e-7, x+3e-7))
			x += 4e-7
		}
		skels[r] = s.end()
	}
	emit := func(int, []byte) error { return nil }
	for b.Loop() {
		if msg := solveClocks(sources(skels...), startZone, emit)[0]; msg[0] != solvedOK {
			b.Fatalf("not solved: %q", msg)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(3*rounds*ranks), "ns/entry")
}
