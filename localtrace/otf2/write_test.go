package otf2

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"scout/internal/tracetest"
)

var defsOpts = cmp.Options{cmpopts.IgnoreUnexported(Defs{}, IDMap{}), cmpopts.EquateEmpty()}

// archiveData is everything the reader gets out of an archive.
type archiveData struct {
	anchor Anchor
	defs   *Defs
	locals map[uint64]*LocalDefs
	raw    map[uint64][]Event // events as stored
	events map[uint64][]Event // clock-corrected, ids mapped
}

// normEvent copies the reader's reused event, dropping what the record
// type does not carry (the reader leaves stale slices of earlier records
// in place) and the file offset.
func normEvent(ev *Event) Event {
	e := Event{Type: ev.Type, Time: ev.Time, Args: ev.Args}
	e.Attrs = append([]AttrValue(nil), ev.Attrs...)
	spec := ev.Spec()
	if spec == nil {
		e.Payload = append([]byte(nil), ev.Payload...)
		e.Args = [MaxArgs]uint64{}
		return e
	}
	for i := len(spec.Fields); i < MaxArgs; i++ {
		e.Args[i] = 0
	}
	for _, f := range spec.Fields {
		switch f.Kind {
		case FArray32:
			e.Array = append([]uint64(nil), ev.Array...)
		case FMetricVal:
			e.Array = append([]uint64(nil), ev.Array...)
			e.ArrayTypes = append([]uint8(nil), ev.ArrayTypes...)
		}
	}
	return e
}

func readEvents(t *testing.T, a *Archive, loc uint64, ld *LocalDefs, raw bool) []Event {
	t.Helper()
	r, err := a.OpenEvents(loc, ld)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if raw {
		r.Raw()
	}
	var out []Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, normEvent(ev))
	}
}

func readArchive(t *testing.T, dir string) *archiveData {
	t.Helper()
	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := a.ReadGlobalDefs()
	if err != nil {
		t.Fatal(err)
	}
	ad := &archiveData{anchor: a.Anchor, defs: d, locals: map[uint64]*LocalDefs{},
		raw: map[uint64][]Event{}, events: map[uint64][]Event{}}
	for _, l := range d.Locations {
		ld, err := a.ReadLocalDefs(l.Self)
		if err != nil {
			t.Fatal(err)
		}
		ad.locals[l.Self] = ld
		ad.raw[l.Self] = readEvents(t, a, l.Self, ld, true)
		ad.events[l.Self] = readEvents(t, a, l.Self, ld, false)
	}
	return ad
}

// copyArchive writes src into a new archive in dir through the writer,
// from raw events, with the given chunk sizes (0: those of src).
func copyArchive(t *testing.T, src *archiveData, dir string, evChunk, defChunk uint64) {
	t.Helper()
	an := src.anchor
	if evChunk != 0 {
		an.ChunkSizeEvents, an.ChunkSizeDefs = evChunk, defChunk
	}
	w, err := CreateArchive(dir, "traces", an)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range src.defs.Locations {
		if err := w.WriteLocalDefs(l.Self, src.locals[l.Self]); err != nil {
			t.Fatal(err)
		}
		ew, err := w.CreateEvents(l.Self)
		if err != nil {
			t.Fatal(err)
		}
		for i := range src.raw[l.Self] {
			if err := ew.Write(&src.raw[l.Self][i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := ew.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteGlobalDefs(src.defs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func compareArchives(t *testing.T, want, got *archiveData, sameChunks bool) {
	t.Helper()
	wa, ga := want.anchor, got.anchor
	if !sameChunks {
		ga.ChunkSizeEvents, ga.ChunkSizeDefs = wa.ChunkSizeEvents, wa.ChunkSizeDefs
	}
	if diff := cmp.Diff(wa, ga, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("anchor differs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.defs, got.defs, defsOpts); diff != "" {
		t.Errorf("global definitions differ (-want +got):\n%s", diff)
	}
	for _, l := range want.defs.Locations {
		if diff := cmp.Diff(want.locals[l.Self], got.locals[l.Self], defsOpts); diff != "" {
			t.Errorf("location %d: local definitions differ (-want +got):\n%s", l.Self, diff)
		}
		if diff := cmp.Diff(want.raw[l.Self], got.raw[l.Self], cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("location %d: raw events differ (-want +got):\n%s", l.Self, diff)
		}
		if diff := cmp.Diff(want.events[l.Self], got.events[l.Self], cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("location %d: corrected events differ (-want +got):\n%s", l.Self, diff)
		}
		if n := uint64(len(got.raw[l.Self])); n != l.NumEvents {
			t.Errorf("location %d: %d events, definitions announce %d", l.Self, n, l.NumEvents)
		}
	}
}

// TestRoundTrip copies every reference trace through the writer, once
// with its own chunk sizes and once with tiny chunks that force many chunk
// switches, and checks that the copy reads back identically.
func TestRoundTrip(t *testing.T) {
	for _, tr := range tracetest.Archives(t) {
		t.Run(tr.Name, func(t *testing.T) {
			if size := dirSize(t, filepath.Join(tr.Dir, "traces")); size > 2<<20 {
				// comparing every event takes minutes under -race; the
				// smaller archives cover the writer
				t.Skipf("%d bytes of events", size)
			}
			src := readArchive(t, tr.Dir)
			dir := t.TempDir()
			copyArchive(t, src, dir, 0, 0)
			compareArchives(t, src, readArchive(t, dir), true)
			if src.anchor.Version[0] >= 3 {
				// written by OTF2 3.0 like our writer: the files must be identical
				compareFiles(t, tr.Dir, dir)
			}

			small := t.TempDir()
			copyArchive(t, src, small, 128, 4096) // (a local mapping table of ps_ccv_mixed_np8 takes 1167 bytes)
			compareArchives(t, src, readArchive(t, small), false)
			st, err := os.Stat(filepath.Join(small, "traces", "0.evt"))
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() <= 128 {
				t.Errorf("0.evt has %d bytes: expected several chunks of 128", st.Size())
			}
		})
	}
}

// compareFiles checks that the archive files in dir equal those in ref.
func compareFiles(t *testing.T, ref, dir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(ref, "traces.*"))
	more, _ := filepath.Glob(filepath.Join(ref, "traces", "*"))
	for _, f := range append(files, more...) {
		rel, _ := filepath.Rel(ref, f)
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, got) {
			n := 0
			for n < len(want) && n < len(got) && want[n] == got[n] {
				n++
			}
			t.Errorf("%s: copy differs from the original at byte %d (%d vs %d bytes)", rel, n, len(got), len(want))
		}
	}
}

// TestOtf2Print checks written archives with the OTF2 library's own
// reader: a copy of a reference trace and a synthetic archive spanning
// several 1 MiB chunks.
func TestOtf2Print(t *testing.T) {
	if _, err := exec.LookPath("otf2-print"); err != nil {
		t.Skip("otf2-print not installed (apt-get install otf2-tools)")
	}
	src := readArchive(t, filepath.Join(tracetest.Root(), "testdata", "traces", "ps_mixed_np4"))
	dir := t.TempDir()
	copyArchive(t, src, dir, 0, 0)
	var want uint64
	for _, l := range src.defs.Locations {
		want += l.NumEvents
	}
	checkOtf2Print(t, dir, want)

	syn := t.TempDir()
	n := writeSyntheticArchive(t, syn, 120_000)
	checkOtf2Print(t, syn, n)
	if st, err := os.Stat(filepath.Join(syn, "traces", "0.evt")); err != nil || st.Size() <= DefaultChunkSizeEvents {
		t.Errorf("synthetic event file should span 2 chunks: %v, %v", st.Size(), err)
	}
}

var eventLine = regexp.MustCompile(`^[A-Z_]+ +\d+ +\d+`)

func checkOtf2Print(t *testing.T, dir string, want uint64) {
	t.Helper()
	anchor := filepath.Join(dir, "traces.otf2")
	if out, err := exec.Command("otf2-print", "-A", "--silent", "-Werror", anchor).CombinedOutput(); err != nil {
		t.Fatalf("otf2-print -A: %v\n%s", err, out)
	}
	cmd := exec.Command("otf2-print", "-Werror", anchor)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var got uint64
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if eventLine.Match(sc.Bytes()) {
			got++
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("otf2-print: %v\n%s", err, stderr.String())
	}
	if got != want {
		t.Errorf("otf2-print printed %d events, want %d", got, want)
	}
}

// writeSyntheticArchive writes a one-location archive with a
// SyntheticEvents stream and the definitions it refers to.
func writeSyntheticArchive(t *testing.T, dir string, n int) uint64 {
	t.Helper()
	w, err := CreateArchive(dir, "traces", Anchor{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(w.EventPath(0))
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	got, err := SyntheticEvents(bw, n, DefaultChunkSizeEvents)
	if err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d := &Defs{Clock: ClockProperties{TimerResolution: 1e9, Realtime: Undef64}, HasClock: true}
	for i, s := range []string{"", "main", "work", "compute", "MPI_Send", "MPI_Recv", "MPI_Allreduce", "MPI", "node", "rank 0", "thread", "MPI_COMM_WORLD"} {
		d.Strings = append(d.Strings, String{uint32(i), s})
	}
	d.Paradigms = []Paradigm{{ParadigmMPI, 7, 0}}
	d.SystemTreeNodes = []SystemTreeNode{{0, 8, 8, Undef32}}
	d.LocationGroups = []LocationGroup{{0, 9, LocationGroupTypeProcess, 0, Undef32}}
	d.Locations = []Location{{0, 10, LocationTypeCPUThread, got, 0}}
	for i := uint32(0); i < 6; i++ {
		d.Regions = append(d.Regions, Region{Self: i, Name: i + 1, Description: 0, File: Undef32, Canonical: i + 1, Role: 1, Paradigm: 2})
	}
	d.Groups = []Group{{Self: 0, Name: 0, Members: []uint64{0}, Type: GroupTypeCommLocations, Paradigm: ParadigmMPI},
		{Self: 1, Name: 0, Members: []uint64{0}, Type: GroupTypeCommGroup, Paradigm: ParadigmMPI}}
	d.Comms = []Comm{{Self: 0, Name: 11, Group: 1, Parent: Undef32}}
	if err := w.WriteGlobalDefs(d); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestCompressedEncoding(t *testing.T) {
	for _, tc := range []struct {
		v, ones uint64
		want    []byte
	}{
		{0, math.MaxUint32, []byte{0}},
		{1, math.MaxUint32, []byte{1, 1}},
		{0xff, math.MaxUint32, []byte{1, 0xff}},
		{0x100, math.MaxUint32, []byte{2, 0, 1}},
		{math.MaxUint32, math.MaxUint32, []byte{0xff}},
		{math.MaxUint32, math.MaxUint64, []byte{4, 0xff, 0xff, 0xff, 0xff}},
		{math.MaxUint64, math.MaxUint64, []byte{0xff}},
		{math.MaxUint64 - 1, math.MaxUint64, []byte{8, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{1 << 40, math.MaxUint64, []byte{6, 0, 0, 0, 0, 0, 1}},
	} {
		got := appendCompressed(nil, tc.v, tc.ones)
		if !bytes.Equal(got, tc.want) {
			t.Errorf("compressed(%#x) = % x, want % x", tc.v, got, tc.want)
		}
		c := cursor{b: got}
		if back := c.compressed(8, tc.ones); back != tc.v || c.err != nil {
			t.Errorf("read back %#x = %#x (%v)", tc.v, back, c.err)
		}
	}
}

// sampleEvents returns one event of every type in EventSpecs with
// distinct field values, plus an unknown record type, some with
// attribute lists, at non-decreasing times.
func sampleEvents() []Event {
	var out []Event
	tm := uint64(100)
	for id, s := range EventSpecs {
		if s == nil {
			continue
		}
		ev := Event{Type: uint8(id), Time: tm}
		for i, f := range s.Fields {
			switch f.Kind {
			case FU8:
				ev.Args[i] = uint64(id + i)
			case FU32:
				ev.Args[i] = uint64(id*1000 + i)
			case FU64, FI64, FTime:
				ev.Args[i] = uint64(id)<<33 + uint64(i)
			case FArray32:
				ev.Array = []uint64{1, 0, math.MaxUint32, 70000}
				ev.Args[i] = 4
			case FMetricVal:
				ev.Array = []uint64{5, math.Float64bits(-2.5), math.MaxUint64}
				ev.ArrayTypes = []uint8{4, 10, 8}
				ev.Args[i] = 3
			}
		}
		if id%3 == 0 {
			ev.Attrs = []AttrValue{{Attr: 1, Type: 4, Value: uint64(id)}, {Attr: 2, Type: 1, Value: 200}}
		}
		out = append(out, ev)
		if id%2 == 0 {
			tm += 7
		}
	}
	out = append(out, Event{Type: 200, Time: tm, Payload: []byte{1, 2, 3}})
	return out
}

func writeStream(t *testing.T, evs []Event, chunk uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewEventWriter(&buf, chunk)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Count() != uint64(len(evs)) {
		t.Errorf("Count = %d, want %d", w.Count(), len(evs))
	}
	return buf.Bytes()
}

func readStream(t *testing.T, data []byte, chunk uint64) []Event {
	t.Helper()
	r, err := NewEventReader(bytes.NewReader(data), "stream", 0, chunk, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, normEvent(ev))
	}
}

// TestEveryRecordType writes one record of each known type generically
// and reads it back, in one big chunk and in chunks of 128 bytes.
func TestEveryRecordType(t *testing.T) {
	evs := sampleEvents()
	want := make([]Event, len(evs))
	for i := range evs {
		want[i] = normEvent(&evs[i])
	}
	for _, chunk := range []uint64{1 << 20, 128} {
		data := writeStream(t, evs, chunk)
		if diff := cmp.Diff(want, readStream(t, data, chunk), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("chunk %d: events differ (-want +got):\n%s", chunk, diff)
		}
		checkChunks(t, data, int(chunk))
	}
}

// checkChunks checks the chunk layout: headers, event numbers, a
// TIMESTAMP first in every chunk, full chunks but the last.
func checkChunks(t *testing.T, data []byte, size int) {
	t.Helper()
	var last uint64
	for off := 0; off < len(data); off += size {
		c := data[off:min(off+size, len(data))]
		if off+size < len(data) && len(c) != size {
			t.Fatalf("chunk at %d has %d bytes", off, len(c))
		}
		if c[0] != tagChunkHeader || c[1] != endianLittle {
			t.Fatalf("chunk at %d: header % x", off, c[:2])
		}
		first, lastEv := leU64(c[2:]), leU64(c[10:])
		if first != last+1 || lastEv < last {
			t.Errorf("chunk at %d: events %d..%d after %d", off, first, lastEv, last)
		}
		last = lastEv
		if lastEv >= first && c[chunkHeaderSize] != tagTimestamp {
			t.Errorf("chunk at %d does not start with a TIMESTAMP", off)
		}
	}
	if !bytes.HasSuffix(data, []byte{tagEndOfFile, tagEndOfBuffer}) {
		t.Errorf("stream does not end with END_OF_FILE, END_OF_BUFFER")
	}
}

func leU64(b []byte) uint64 {
	c := cursor{b: b}
	return c.u64f()
}

func TestLongRecords(t *testing.T) {
	args := make([]uint64, 300)
	for i := range args {
		args[i] = uint64(i * 1000)
	}
	attrs := make([]AttrValue, 100)
	for i := range attrs {
		attrs[i] = AttrValue{Attr: uint32(i), Type: uint8(i % 26), Value: uint64(i % 200)}
	}
	evs := []Event{{Type: EvProgramBegin, Time: 5, Args: [MaxArgs]uint64{7, 300}, Array: args, Attrs: attrs}}
	data := writeStream(t, evs, 4096)
	want := []Event{normEvent(&evs[0])}
	if diff := cmp.Diff(want, readStream(t, data, 4096), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("long record differs (-want +got):\n%s", diff)
	}
}

func TestWriteErrors(t *testing.T) {
	newW := func(chunk uint64) *EventWriter {
		w, err := NewEventWriter(io.Discard, chunk)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	if _, err := NewEventWriter(io.Discard, 10); err == nil {
		t.Error("a 10-byte chunk must be refused")
	}
	w := newW(64)
	big := Event{Type: EvProgramBegin, Array: make([]uint64, 60)}
	if err := w.Write(&big); !errors.Is(err, ErrRecordTooLarge) {
		t.Errorf("record larger than the chunk: err = %v", err)
	}
	if err := w.Enter(1, 1); err == nil {
		t.Error("errors must be sticky")
	}
	w = newW(1024)
	if err := w.Enter(10, 1); err != nil {
		t.Fatal(err)
	}
	if err := w.Leave(9, 1); err == nil || !strings.Contains(err.Error(), "goes back") {
		t.Errorf("decreasing time: err = %v", err)
	}
	for _, ev := range []Event{
		{Type: EvEnter, Args: [MaxArgs]uint64{1 << 32}},
		{Type: EvMpiSend, Args: [MaxArgs]uint64{0, 1 << 40}},
		{Type: EvMpiCollectiveEnd, Args: [MaxArgs]uint64{256}},
		{Type: EvEnter, Attrs: []AttrValue{{Type: 1, Value: 256}}},
		{Type: EvMetric, Array: []uint64{1}},
		{Type: tagTimestamp},
	} {
		w := newW(1024)
		if err := w.Write(&ev); err == nil {
			t.Errorf("%+v: no error", ev)
		}
	}
	var d Defs
	d.MetricClasses = []MetricClass{{Members: make([]uint32, 256)}}
	if _, err := EncodeGlobalDefs(io.Discard, &d, 1024); err == nil {
		t.Error("256 metric members must be refused")
	}
	d = Defs{Strings: []String{{0, "a\x00b"}}}
	if _, err := EncodeGlobalDefs(io.Discard, &d, 1024); err == nil {
		t.Error("a string with NUL must be refused")
	}
	l := LocalDefs{Defs: Defs{HasClock: true}}
	if _, err := EncodeLocalDefs(io.Discard, &l, 1024); err == nil {
		t.Error("local ClockProperties must be refused")
	}
	if _, err := CreateArchive(t.TempDir(), "a/b", Anchor{}); err == nil {
		t.Error("archive name with a slash must be refused")
	}
}

// TestSyntheticEvents decodes a synthetic stream and checks its size and
// mix.
func TestSyntheticEvents(t *testing.T) {
	var buf bytes.Buffer
	n, err := SyntheticEvents(&buf, 100_000, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	if n < 100_000 || n > 100_015 {
		t.Errorf("%d events for 100000 requested", n)
	}
	evs := readStream(t, buf.Bytes(), 1<<16)
	if uint64(len(evs)) != n {
		t.Fatalf("read %d events, wrote %d", len(evs), n)
	}
	kinds := map[uint8]int{}
	depth := 0
	for _, e := range evs {
		kinds[e.Type]++
		switch e.Type {
		case EvEnter:
			depth++
		case EvLeave:
			depth--
		}
		if depth < 0 {
			t.Fatal("Leave without Enter")
		}
	}
	if depth != 0 {
		t.Errorf("%d regions left open", depth)
	}
	el := kinds[EvEnter] + kinds[EvLeave]
	if el*100 < len(evs)*70 || kinds[EvMpiSend] == 0 || kinds[EvMpiRecv] == 0 || kinds[EvMpiCollectiveEnd] == 0 {
		t.Errorf("unrealistic mix: %v", kinds)
	}
	checkChunks(t, buf.Bytes(), 1<<16)
}

// dirSize is the size of the files in dir.
func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range es {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}
