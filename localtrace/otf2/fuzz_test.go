package otf2

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"scout/internal/tracetest"
)

// fuzzChunk is the chunk size fuzz inputs are decoded with; real files of
// the seed corpus are smaller than one chunk.
const fuzzChunk = 1 << 16

func addSeeds(f *testing.F, pattern string) {
	m, _ := filepath.Glob(filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender", pattern))
	for _, p := range m {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzDecodeEvents feeds arbitrary bytes to the event decoder: it must
// return events or an error, never panic or loop.
func FuzzDecodeEvents(f *testing.F) {
	addSeeds(f, "traces/*.evt")
	ld := &LocalDefs{ClockOffsets: []ClockOffset{{Time: 10, Offset: 5}, {Time: 1 << 40, Offset: -7}}}
	ld.Maps[MapRegion] = &IDMap{Dense: []uint64{3, 2, 1}}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewEventReader(bytes.NewReader(data), "fuzz.evt", 1, fuzzChunk, ld)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i <= len(data); i++ { // every event takes at least one byte
			if _, err := r.Next(); err != nil {
				if err != io.EOF && r.Count > uint64(len(data)) {
					t.Fatalf("decoded %d events from %d bytes", r.Count, len(data))
				}
				return
			}
		}
		t.Fatalf("decoder did not stop after %d bytes", len(data))
	})
}

// FuzzDecodeDefs feeds arbitrary bytes to the global and local definition
// decoders and the anchor parser.
func FuzzDecodeDefs(f *testing.F) {
	addSeeds(f, "traces.def")
	addSeeds(f, "traces/*.def")
	addSeeds(f, "traces.otf2")
	f.Fuzz(func(t *testing.T, data []byte) {
		DecodeGlobalDefs(bytes.NewReader(data), "fuzz.def", fuzzChunk)
		DecodeLocalDefs(bytes.NewReader(data), "fuzz.def", fuzzChunk)
		parseAnchor(data)
	})
}
