package localtrace

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"testing"

	"scout/localtrace/otf2"
)

// BenchmarkLoadBundled loads every location of the largest bundled trace.
func BenchmarkLoadBundled(b *testing.B) {
	a, d := open(b, bundled("ps_mixed_np8"))
	var events, mem int
	b.ResetTimer()
	for b.Loop() {
		events, mem = 0, 0
		for _, l := range d.Locations {
			tc, err := Load(a, d, l.Self)
			if err != nil {
				b.Fatal(err)
			}
			events += len(tc.Events)
			mem += tc.Bytes()
		}
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(mem)/float64(events), "bytes/event")
}

// synthStream writes n events of a Score-P-like mix into a chunked event
// stream: nested Enter/Leave pairs with a point-to-point message every
// tenth region, one timestamp per event.
func synthStream(n int, chunk int) ([]byte, int) {
	data, n, _ := synthStreamTicks(n, chunk, func(int) uint64 { return 17 })
	return data, n
}

// synthStreamTicks is synthStream with step(i) ticks before event i
// (after the first); it returns the events' timestamps too.
func synthStreamTicks(n int, chunk int, step func(i int) uint64) ([]byte, int, []uint64) {
	var out bytes.Buffer
	var c []byte
	newChunk := func() {
		if c != nil {
			out.Write(c)
			out.Write(make([]byte, chunk-len(c)))
		}
		c = append(make([]byte, 0, chunk), 0x03, 0x42)
		c = append(c, make([]byte, 16)...)
	}
	newChunk()
	t := uint64(1000)
	var ticks []uint64
	depth := 0
	for i := 0; i < n; {
		var rec []byte
		ts := binary.LittleEndian.AppendUint64([]byte{0x05}, t)
		switch {
		case depth < 3 && i%7 != 6:
			rec = append(ts, otf2.EvEnter, 1, byte(3+depth))
			depth++
		case depth > 0 && i%10 == 5:
			rec = append(ts, otf2.EvMpiSend, 8, 1, 1, 1, 1, 1, 11, 1, 4)
		case depth > 0:
			depth--
			rec = append(ts, otf2.EvLeave, 1, byte(3+depth))
		default:
			rec = append(ts, otf2.EvEnter, 1, 3)
			depth++
		}
		if len(c)+len(rec)+1 > chunk {
			newChunk()
		}
		c = append(c, rec...)
		ticks = append(ticks, t)
		i++
		t += step(i)
	}
	for depth > 0 {
		depth--
		n++
		c = append(c, 0x05)
		c = binary.LittleEndian.AppendUint64(c, t)
		c = append(c, otf2.EvLeave, 1, byte(3+depth))
		ticks = append(ticks, t)
	}
	c = append(c, 0x02)
	out.Write(c)
	return out.Bytes(), n, ticks
}

// decodeSynthetic decodes a stream of synthStream's, in chunks of
// chunk bytes, with the count of events numEvents.
func decodeSynthetic(tb testing.TB, data []byte, chunk int, d *otf2.Defs, numEvents int) *Trace {
	tb.Helper()
	r, err := otf2.NewEventReader(bytes.NewReader(data), "synthetic", 0, uint64(chunk), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tc, err := Decode(r, d, 0, uint64(numEvents))
	if err != nil {
		tb.Fatal(err)
	}
	return tc
}

// BenchmarkDecodeSynthetic decodes an in-memory stream of 10 M events
// into a Trace.
func BenchmarkDecodeSynthetic(b *testing.B) {
	data, n := synthStream(10_000_000, 1<<20)
	_, d := open(b, bundled("ps_late_sender"))
	var events, size int
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		tc := decodeSynthetic(b, data, 1<<20, d, n)
		// Every decode pays for fresh memory, as a process's does. The
		// tables live outside the heap until a collection finds the
		// trace unreachable, which the small heap would not start.
		b.StopTimer()
		events, size = len(tc.Events), tc.Bytes()
		runtime.GC()
		b.StartTimer()
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(size)/float64(events), "bytes/event")
}

// BenchmarkDecodeSyntheticReuse is BenchmarkDecodeSynthetic decoding into
// the same memory every time: the decoder's CPU cost without the cost of
// touching fresh memory.
func BenchmarkDecodeSyntheticReuse(b *testing.B) {
	data, n := synthStream(10_000_000, 1<<20)
	_, d := open(b, bundled("ps_late_sender"))
	tc := &Trace{Events: make([]Event, 0, n)}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		r, err := otf2.NewEventReader(bytes.NewReader(data), "synthetic", 0, 1<<20, nil)
		if err != nil {
			b.Fatal(err)
		}
		if tc, err = DecodeInto(tc, r, d, 0, uint64(n)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(tc.Events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
