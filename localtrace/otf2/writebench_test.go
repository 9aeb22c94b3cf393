package otf2

import (
	"io"
	"testing"
)

// BenchmarkWriteEvents writes a 1 M-event synthetic stream (the
// SyntheticEvents mix) to io.Discard.
func BenchmarkWriteEvents(b *testing.B) {
	const n = 1_000_000
	var events uint64
	for b.Loop() {
		got, err := SyntheticEvents(io.Discard, n, DefaultChunkSizeEvents)
		if err != nil {
			b.Fatal(err)
		}
		events += got
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkWriteEventsGeneric writes the same kind of stream through the
// generic Write path.
func BenchmarkWriteEventsGeneric(b *testing.B) {
	w, err := NewEventWriter(io.Discard, DefaultChunkSizeEvents)
	if err != nil {
		b.Fatal(err)
	}
	ev := Event{}
	var t uint64
	for b.Loop() {
		t += 13
		ev.Time = t
		switch t % 10 {
		case 0:
			ev.Type, ev.Args = EvMpiSend, [MaxArgs]uint64{1, 0, 5, 8}
		case 1, 3, 5, 7:
			ev.Type, ev.Args = EvEnter, [MaxArgs]uint64{uint64(t % 7)}
		default:
			ev.Type, ev.Args = EvLeave, [MaxArgs]uint64{uint64(t % 7)}
		}
		if err := w.Write(&ev); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(w.Count())/b.Elapsed().Seconds(), "events/s")
}
