package localtrace

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

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
			lv := tc.Events[e.B]
			if lv.Kind != KindLeave || lv.B != uint32(i) || lv.A != e.A || lv.C != e.C {
				t.Fatalf("event %d: Enter not matched by its Leave", i)
			}
			if tc.Callpaths[e.C].Region != e.A {
				t.Fatalf("event %d: call path region mismatch", i)
			}
		case KindIsend, KindIrecvRequest:
			if e.C != None {
				k := tc.Events[e.C].Kind
				if (e.Kind == KindIsend && k != KindIsendComplete) || (e.Kind == KindIrecvRequest && k != KindIrecv) {
					t.Fatalf("event %d (%v) linked to %v", i, e.Kind, k)
				}
				if tc.Events[e.C].C != uint32(i) {
					t.Fatalf("event %d: request link not symmetric", i)
				}
			}
		case KindCollEnd:
			if e.C != None && (tc.Events[e.C].Kind != KindCollBegin || tc.Events[e.C].B != e.B) {
				t.Fatalf("event %d: CollEnd not linked to its CollBegin", i)
			}
		}
		if e.Kind != KindEnter && e.Kind != KindLeave && e.B != None {
			en := tc.Events[e.B]
			if en.Kind != KindEnter || en.B < uint32(i) || e.B > uint32(i) {
				t.Fatalf("event %d (%v): enclosing Enter %d does not enclose it", i, e.Kind, e.B)
			}
		}
		if i > 0 && e.Time < tc.Events[i-1].Time {
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
				if e.C == None {
					t.Errorf("location %d event %d: Isend never completed", l.Self, i)
				}
			case KindIrecv:
				recvs++
				if e.C == None {
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
		tr.Events = append(tr.Events, Event{Kind: KindSend, A: uint32(len(tr.Messages))})
		tr.addMessage(Message{Comm: 1, Peer: uint32(i), Tag: 3}, n)
	}
	var got []uint64
	for i := range tr.Events {
		got = append(got, tr.MessageBytes(i))
		if m := tr.Message(i); m.Peer != uint32(i) || m.Comm != 1 || m.Tag != 3 {
			t.Errorf("message %d: %+v", i, *m)
		}
	}
	if diff := cmp.Diff(sizes, got); diff != "" {
		t.Errorf("sizes (-want +got):\n%s", diff)
	}
	if n := unsafe.Sizeof(Message{}); n != 16 {
		t.Errorf("a message takes %d bytes, want 16", n)
	}
}
