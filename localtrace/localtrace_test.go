package localtrace

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"scout/internal/offheap"
	"scout/internal/tracetest"
	"scout/localtrace/otf2"
)

func open(t testing.TB, dir string) (*otf2.Archive, *otf2.Defs) {
	t.Helper()
	a, err := otf2.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := a.ReadGlobalDefs()
	if err != nil {
		t.Fatal(err)
	}
	return a, d
}

func bundled(name string) string {
	return filepath.Join(tracetest.Root(), "testdata", "traces", name)
}

// TestLoadInvariants loads every reference trace and checks the
// navigation invariants every pattern relies on.
func TestLoadInvariants(t *testing.T) {
	for _, tr := range tracetest.Archives(t) {
		t.Run(tr.Name, func(t *testing.T) {
			a, d := open(t, tr.Dir)
			for _, l := range d.Locations {
				tc, err := Load(a, d, l.Self)
				if err != nil {
					t.Fatal(err)
				}
				if uint64(len(tc.Events)) != l.NumEvents {
					t.Errorf("location %d: %d events, want %d", l.Self, len(tc.Events), l.NumEvents)
				}
				checkInvariants(t, tc)
			}
		})
	}
}

func checkInvariants(t *testing.T, tc *Trace) {
	t.Helper()
	for i, e := range tc.Events {
		switch e.Kind {
		case KindEnter:
			m := tc.Match(i)
			lv := tc.Events[m]
			if lv.Kind != KindLeave || tc.Match(int(m)) != uint32(i) || lv.Arg != e.Arg {
				t.Fatalf("event %d: Enter not matched by its Leave", i)
			}
		case KindIsend, KindIrecvRequest:
			if l := tc.Link(i); l != None {
				k := tc.Events[l].Kind
				if (e.Kind == KindIsend && k != KindIsendComplete) || (e.Kind == KindIrecvRequest && k != KindIrecv) {
					t.Fatalf("event %d (%v) linked to %v", i, e.Kind, k)
				}
				if tc.Link(int(l)) != uint32(i) {
					t.Fatalf("event %d: request link not symmetric", i)
				}
			}
		case KindCollEnd:
			if l := tc.Link(i); l != None && (tc.Events[l].Kind != KindCollBegin || tc.EnterOf(int(l)) != tc.EnterOf(i)) {
				t.Fatalf("event %d: CollEnd not linked to its CollBegin", i)
			}
		}
		if en := tc.EnterOf(i); e.Kind != KindEnter && e.Kind != KindLeave && en != None {
			if tc.Events[en].Kind != KindEnter || tc.Match(int(en)) < uint32(i) || en > uint32(i) {
				t.Fatalf("event %d (%v): enclosing Enter %d does not enclose it", i, e.Kind, en)
			}
		}
		if i > 0 && tc.Time(i) < tc.Time(i-1) {
			t.Fatalf("event %d: time goes back", i)
		}
	}
}

func TestNonblockingLinks(t *testing.T) {
	a, d := open(t, bundled("ps_nonblocking"))
	var sends, recvs int
	for _, l := range d.Locations {
		tc, err := Load(a, d, l.Self)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range tc.Events {
			switch e.Kind {
			case KindIsend:
				sends++
				if tc.Link(i) == None {
					t.Errorf("location %d event %d: Isend never completed", l.Self, i)
				}
			case KindIrecv:
				recvs++
				if tc.Link(i) == None {
					t.Errorf("location %d event %d: Irecv without request", l.Self, i)
				}
			}
		}
	}
	if sends == 0 || recvs == 0 {
		t.Fatalf("expected non-blocking traffic, got %d Isend and %d Irecv", sends, recvs)
	}
}

func TestPlacements(t *testing.T) {
	_, d := open(t, bundled("ps_mixed_np8"))
	p, err := Placements(d)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]Placement{}
	for r := 0; r < 8; r++ {
		want[uint64(r)] = Placement{Rank: r}
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("placements (-want +got):\n%s", diff)
	}
	if got := (Placement{Rank: 3, Thread: 2}).Label(); got != "3.2" {
		t.Errorf("label = %q", got)
	}
}

// TestBytesPerEvent checks the in-memory size target of 32 bytes per
// event, side tables included, on the largest bundled trace.
func TestBytesPerEvent(t *testing.T) {
	a, d := open(t, bundled("ps_mixed_np8"))
	var bytes, events int
	for _, l := range d.Locations {
		tc, err := Load(a, d, l.Self)
		if err != nil {
			t.Fatal(err)
		}
		bytes += tc.Bytes()
		events += len(tc.Events)
	}
	if per := float64(bytes) / float64(events); per > 32 {
		t.Errorf("%.1f bytes/event, want ≤ 32", per)
	}
}

func TestUnbalancedRegions(t *testing.T) {
	// Build a stream by hand: Enter(main) Enter(x) Leave(main).
	a, d := open(t, bundled("ps_late_sender"))
	_ = a
	var buf bytes.Buffer
	buf.Write([]byte{0x03, 0x42})
	buf.Write(make([]byte, 16))
	buf.Write([]byte{0x05, 1, 0, 0, 0, 0, 0, 0, 0, 12, 1, 3})  // t=1 Enter(3 main)
	buf.Write([]byte{0x05, 2, 0, 0, 0, 0, 0, 0, 0, 12, 1, 16}) // t=2 Enter(16 compute)
	buf.Write([]byte{0x05, 3, 0, 0, 0, 0, 0, 0, 0, 13, 1, 3})  // t=3 Leave(3 main)
	buf.Write([]byte{0x02})
	r, err := otf2.NewEventReader(&buf, "hand.evt", 7, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Decode(r, d, 7, 0)
	if err == nil {
		t.Fatal("unbalanced Leave accepted")
	}
	for _, w := range []string{"location 7", "hand.evt", `"main"`, `"compute"`, "offset"} {
		if !bytes.Contains([]byte(err.Error()), []byte(w)) {
			t.Errorf("error %q does not mention %s", err, w)
		}
	}
}

func TestMissingLocation(t *testing.T) {
	a, d := open(t, bundled("ps_late_sender"))
	if _, err := Load(a, d, 99); err == nil {
		t.Fatal("undefined location loaded")
	}
}

// FuzzDecode feeds arbitrary event streams through the in-memory
// builder with real definitions: errors are fine, panics are not.
func FuzzDecode(f *testing.F) {
	dir := bundled("ps_nonblocking")
	m, _ := filepath.Glob(filepath.Join(dir, "traces", "*.evt"))
	for _, p := range m {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	_, d := open(f, dir)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := otf2.NewEventReader(bytes.NewReader(data), "fuzz.evt", 0, 1<<16, nil)
		if err != nil {
			t.Fatal(err)
		}
		tc, err := Decode(r, d, 0, 0)
		if err == nil {
			checkInvariants(t, tc)
		}
	})
}

// TestRanks checks the master-thread rule: thread 0 of each rank is its
// master, ranks numbered 0..n-1.
func TestRanks(t *testing.T) {
	defs := &otf2.Defs{Locations: []otf2.Location{{Self: 10}, {Self: 11}, {Self: 12}, {Self: 13}}}
	pl := map[uint64]Placement{10: {Rank: 1}, 11: {Rank: 0, Thread: 1}, 12: {Rank: 0}, 13: {Rank: 1, Thread: 1}}
	masters, threads, err := Ranks(defs, pl)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint64{12, 10}, masters); diff != "" {
		t.Errorf("masters (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]uint64{11, 13}, threads); diff != "" {
		t.Errorf("threads (-want +got):\n%s", diff)
	}
	pl[10] = Placement{Rank: 2}
	if _, _, err := Ranks(defs, pl); err == nil {
		t.Error("ranks 0 and 2 only: no error")
	}
	pl[10] = Placement{Rank: 0}
	if _, _, err := Ranks(defs, pl); err == nil {
		t.Error("two master threads of rank 0: no error")
	}
}

// TestMessageBytes: message sizes of 4 GiB − 1 bytes and more, which a
// message's 32-bit size field cannot hold, are kept exactly beside it.
func TestMessageBytes(t *testing.T) {
	sizes := []uint64{0, 5, math.MaxUint32 - 1, math.MaxUint32, 1 << 40, math.MaxUint64, 7}
	var tr Trace
	for i, n := range sizes {
		tr.Events = append(tr.Events, Event{Kind: KindSend, Arg: uint32(tr.NumMessages())})
		tr.addMessage(1, uint32(i), 3, n)
	}
	var got []uint64
	for i := range tr.Events {
		got = append(got, tr.MessageBytes(i))
		if m := tr.Message(i); m.Peer != uint32(i) || m.Comm != 1 || m.Tag != 3 {
			t.Errorf("message %d: %+v", i, m)
		}
	}
	if diff := cmp.Diff(sizes, got); diff != "" {
		t.Errorf("sizes (-want +got):\n%s", diff)
	}
	if n := unsafe.Sizeof(msgEntry{}); n != 8 {
		t.Errorf("a message takes %d bytes, want 8", n)
	}
	if n := unsafe.Sizeof(Event{}); n != 12 {
		t.Errorf("an event takes %d bytes, want 12", n)
	}
}

// navigation is what a trace's navigation methods return for every
// event.
func navigation(tc *Trace) [][5]uint32 {
	nav := make([][5]uint32, len(tc.Events))
	for i, e := range tc.Events {
		m := None
		if e.Kind == KindEnter || e.Kind == KindLeave {
			m = tc.Match(i)
		}
		nav[i] = [5]uint32{m, tc.EnterOf(i), tc.LeaveOf(i), tc.Callpath(i), tc.Link(i)}
	}
	return nav
}

// TestFarDistances: distances too long for an event's 24 bits (here,
// of 2 events or more) are kept beside the events, and every navigation
// method returns what it returns with the distances in the events.
func TestFarDistances(t *testing.T) {
	for _, name := range []string{"ps_nonblocking", "ps_wait_nxn"} {
		t.Run(name, func(t *testing.T) {
			a, d := open(t, bundled(name))
			for _, l := range d.Locations {
				tc, err := Load(a, d, l.Self)
				if err != nil {
					t.Fatal(err)
				}
				maxNear = 2
				far, err := Load(a, d, l.Self)
				maxNear = farAway
				if err != nil {
					t.Fatal(err)
				}
				if len(tc.far) != 0 || len(far.far) == 0 {
					t.Fatalf("location %d: %d and %d far distances, want none and some", l.Self, len(tc.far), len(far.far))
				}
				checkInvariants(t, far)
				if diff := cmp.Diff(navigation(tc), navigation(far)); diff != "" {
					t.Fatalf("location %d: navigation (-near +far):\n%s", l.Self, diff)
				}
			}
		})
	}
}

// TestTablesOffHeap: a large trace's tables are mappings of their own
// (internal/offheap) holding what the heap would hold, trimmed to their
// length also when the count of events in the definitions was too
// small, and unmapped once the trace is unreachable.
func TestTablesOffHeap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mappings of their own only on Linux")
	}
	data, n := synthStream(300_000, 1<<20)
	_, d := open(t, bundled("ps_late_sender"))
	decode := func(numEvents int) *Trace { return decodeSynthetic(t, data, 1<<20, d, numEvents) }
	mapTables = false
	heap := decode(n)
	mapTables = true
	same := func(a, b *Trace) string {
		switch {
		case !slices.Equal(a.Events, b.Events):
			return "events"
		case !slices.Equal(a.msgs, b.msgs) || !slices.Equal(a.chans.Values, b.chans.Values):
			return "messages"
		case !slices.Equal(a.links, b.links):
			return "links"
		case !slices.Equal(a.Collectives, b.Collectives):
			return "collectives"
		case !slices.Equal(a.Callpaths, b.Callpaths):
			return "call paths"
		}
		return ""
	}
	for _, tc := range []struct {
		name      string
		numEvents int
	}{{"count known", n}, {"count too small", n / 5}, {"count unknown", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			mapped := decode(tc.numEvents)
			if diff := same(heap, mapped); diff != "" {
				t.Fatalf("%s differ from the heap's", diff)
			}
			if len(mapped.msgs) == 0 {
				t.Fatal("no messages")
			}
			p := mapped.pages
			if !offheap.Owns(p, mapped.Events) {
				t.Fatal("events not mapped")
			}
			want := len(mapped.Events) * int(unsafe.Sizeof(Event{}))
			if offheap.Owns(p, mapped.msgs) && (len(mapped.links) == 0 || offheap.Owns(p, mapped.links)) {
				want += len(mapped.msgs)*int(unsafe.Sizeof(msgEntry{})) + len(mapped.links)*4
			} else if tc.numEvents*int(unsafe.Sizeof(msgEntry{})) >= offheap.MinBytes {
				t.Error("messages not mapped") // reserved for one per event
			}
			if got := p.Bytes(); got < want || got > want+2*4096 {
				t.Errorf("%d bytes mapped for %d bytes of tables", got, want)
			}
			// mapped is unreachable from here on
			for deadline := time.Now().Add(20 * time.Second); p.Bytes() != 0; {
				if time.Now().After(deadline) {
					t.Fatalf("%d bytes still mapped after the trace became unreachable", p.Bytes())
				}
				runtime.GC()
				time.Sleep(time.Millisecond)
			}
		})
	}
}

// TestTimes: an event's time is its recorded timestamp converted as the
// loader converts it, whether its ticks fit in the event's 32 bits
// after its block's base or not; Times makes them changeable without
// losing the recorded ones.
func TestTimes(t *testing.T) {
	_, d := open(t, bundled("ps_late_sender"))
	seconds := func(tk uint64) float64 {
		return float64(int64(tk-d.Clock.GlobalOffset)) / float64(d.Clock.TimerResolution)
	}
	tests := []struct {
		name        string
		events      int
		step        func(i int) uint64
		wide, dense bool
	}{
		{"steady", 5000, func(int) uint64 { return 17 }, false, false},
		{"gaps beyond 32 bits", 5000, func(i int) uint64 {
			if i%300 == 0 {
				return 5_000_000_000
			}
			return 3
		}, true, false},
		{"a few steps beyond 32 bits", 1000, func(int) uint64 { return 1 << 33 }, true, false},
		// a timer of 2^52 ticks a second (scout correct's archives)
		{"every step beyond 32 bits", 20000, func(int) uint64 { return 1 << 33 }, false, true},
		{"equal times", 5000, func(int) uint64 { return 0 }, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, n, ticks := synthStreamTicks(tc.events, 1<<16, tc.step)
			tr := decodeSynthetic(t, data, 1<<16, d, n)
			if len(tr.Events) != len(ticks) {
				t.Fatalf("%d events, want %d", len(tr.Events), len(ticks))
			}
			for i, tk := range ticks {
				if got, want := tr.Time(i), seconds(tk); got != want {
					t.Fatalf("event %d: time %v, want %v", i, got, want)
				}
			}
			if (len(tr.wide) > 0) != tc.wide || (tr.dense != nil) != tc.dense {
				t.Errorf("%d events with wide ticks, times in seconds %v; want wide ones %v, in seconds %v", len(tr.wide), tr.dense != nil, tc.wide, tc.dense)
			}
			if per := float64(tr.Bytes()) / float64(len(tr.Events)); per > 21 && !tc.wide {
				t.Errorf("%.1f bytes per event", per) // a map entry per event: the times belong in seconds
			}
			ts := tr.Times()
			ts[7] += 1
			for i, tk := range ticks {
				want := seconds(tk)
				if got := tr.RecordedTime(i); got != want {
					t.Fatalf("event %d: recorded time %v after Times, want %v", i, got, want)
				}
				if i == 7 {
					want++
				}
				if got := tr.Time(i); got != want {
					t.Fatalf("event %d: time %v after Times, want %v", i, got, want)
				}
			}
			for _, first := range []int{0, 1, 255, 256, 999} { // (in bulk, from within blocks too)
				dst := make([]float64, min(700, len(ticks)-first))
				tr.RecordedTimes(dst, first)
				for k, got := range dst {
					if want := seconds(ticks[first+k]); got != want {
						t.Fatalf("RecordedTimes from event %d: event %d's %v, want %v", first, first+k, got, want)
					}
				}
			}
		})
	}
}

// TestFillTimes: FillTimes calls its function for every block of events,
// in order, once their recorded times are filled (and no later ones);
// Time and Times then return the slice, which the caller changes (the
// recorded times stay); a trace whose times were made before hands those
// over in one block.
func TestFillTimes(t *testing.T) {
	_, d := open(t, bundled("ps_late_sender"))
	for _, n := range []int{100, fillBlock, 5*fillBlock + 7} {
		data, cnt, _ := synthStreamTicks(n, 1<<16, func(i int) uint64 { return uint64(3 + i%5) })
		tr := decodeSynthetic(t, data, 1<<16, d, cnt)
		want := make([]float64, len(tr.Events))
		for i := range want {
			want[i] = tr.RecordedTime(i)
		}
		next := 0
		ts := tr.FillTimes(func(lo, hi int) {
			if lo != next || hi <= lo || hi > len(want) {
				t.Fatalf("%d events: block %d to %d after %d", len(want), lo, hi, next)
			}
			next = hi
			if tr.times != nil {
				t.Fatalf("%d events: Time uses the times while they are filled", len(want))
			}
		})
		if next != len(want) || len(ts) != len(want) {
			t.Fatalf("%d events: filled %d of %d", len(want), next, len(ts))
		}
		for i := range ts { // as a pass does: read, then change
			if ts[i] != want[i] {
				t.Fatalf("%d events: event %d filled with %v, want %v", len(ts), i, ts[i], want[i])
			}
			ts[i] += 2
		}
		for i := range ts {
			if tr.Time(i) != want[i]+2 || tr.RecordedTime(i) != want[i] {
				t.Fatalf("%d events: event %d: time %v, recorded %v; want %v, %v", len(ts), i, tr.Time(i), tr.RecordedTime(i), want[i]+2, want[i])
			}
		}
		blocks := 0
		if again := tr.FillTimes(func(lo, hi int) { blocks++ }); &again[0] != &ts[0] || blocks != 1 {
			t.Errorf("%d events: FillTimes again made new times or called its function %d times", len(ts), blocks)
		}
	}
}

// TestTimeGoesBack: a timestamp before the previous one is an error that
// names both times.
func TestTimeGoesBack(t *testing.T) {
	_, d := open(t, bundled("ps_late_sender"))
	data, n, _ := synthStreamTicks(100, 1<<16, func(i int) uint64 {
		if i == 50 {
			return math.MaxUint64 - 999 // 1000 ticks back
		}
		return 2000
	})
	r, err := otf2.NewEventReader(bytes.NewReader(data), "synthetic", 0, 1<<16, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Decode(r, d, 0, uint64(n))
	res := float64(d.Clock.TimerResolution)
	prev := float64(int64(1000+49*2000-d.Clock.GlobalOffset)) / res
	want := fmt.Sprintf("timestamp %.9f s goes back in time (previous event at %.9f s)", prev-1000/res, prev)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want one containing %q", err, want)
	}
}

// TestDecodeIntoDense: decoding into a trace that keeps its times in
// seconds (a mapping of their own) unmaps them; the new times are
// right.
func TestDecodeIntoDense(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mappings of their own only on Linux")
	}
	_, d := open(t, bundled("ps_late_sender"))
	data, n, ticks := synthStreamTicks(300_000, 1<<20, func(int) uint64 { return 1 << 33 })
	tr := decodeSynthetic(t, data, 1<<20, d, n)
	if !offheap.Owns(tr.pages, tr.dense) {
		t.Fatal("the times in seconds are not mapped")
	}
	before := tr.pages.Bytes()
	r, err := otf2.NewEventReader(bytes.NewReader(data), "synthetic", 0, 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := DecodeInto(tr, r, d, 0, uint64(n))
	if err != nil {
		t.Fatal(err)
	}
	if again != tr {
		t.Fatal("DecodeInto did not reuse the trace")
	}
	if after := tr.pages.Bytes(); after > before {
		t.Errorf("%d bytes mapped after decoding into the trace, %d before: the old times stay mapped", after, before)
	}
	last := len(ticks) - 1
	if got, want := tr.Time(last), float64(int64(ticks[last]-d.Clock.GlobalOffset))/float64(d.Clock.TimerResolution); got != want {
		t.Errorf("last event at %v, want %v", got, want)
	}
}
