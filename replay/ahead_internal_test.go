package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// chunk encodes records (channel, payload) as one chunk of a batch.
func chunk(flag byte, recs ...any) []byte {
	b := []byte{flag}
	for k := 0; k < len(recs); k += 2 {
		ch, p := recs[k].(channel), recs[k+1].(string)
		b = binary.AppendUvarint(b, uint64(ch.comm))
		b = binary.AppendUvarint(b, uint64(ch.tag))
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return b
}

// TestInboxChunks: payloads come out per channel in the order shipped,
// across chunks, and chunks taken in full are released.
func TestInboxChunks(t *testing.T) {
	a, b := channel{1, 7}, channel{1, 9}
	in := &inbox{batches: map[int]*batch{}}
	for _, c := range [][]byte{
		chunk(chunkMore, a, "a1", b, "b1", a, "a2"),
		chunk(chunkMore),
		chunk(chunkLast, b, "b2", a, "a3"),
	} {
		if err := in.add(3, c); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, ch := range []channel{b, a, a, b, a} {
		p, err := in.take(nil, 3, ch)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(p))
	}
	if diff := cmp.Diff([]string{"b1", "a1", "a2", "b2", "a3"}, got); diff != "" {
		t.Errorf("payloads (-want +got):\n%s", diff)
	}
	for k, c := range in.batches[3].chunks {
		if c != nil {
			t.Errorf("chunk %d still held after all its payloads were taken", k)
		}
	}
	if _, err := in.take(nil, 3, a); !errors.Is(err, ErrUnmatched) {
		t.Errorf("a take beyond the last payload: %v, want ErrUnmatched", err)
	}
}

// TestInboxMalformed: damaged chunks are errors, not panics.
func TestInboxMalformed(t *testing.T) {
	good := chunk(chunkLast, channel{0, 1}, "xyz")
	for k, data := range [][]byte{
		nil,
		{7},
		good[:len(good)-1],
		append([]byte{chunkMore}, 0xff, 0xff),
	} {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			in := &inbox{batches: map[int]*batch{}}
			if err := in.add(0, data); !errors.Is(err, ErrPayload) {
				t.Errorf("add(%x): %v, want ErrPayload", data, err)
			}
		})
	}
	in := &inbox{batches: map[int]*batch{}}
	if err := in.add(0, good); err != nil {
		t.Fatal(err)
	}
	if err := in.add(0, good); !errors.Is(err, ErrPayload) {
		t.Errorf("a chunk after the last: %v, want ErrPayload", err)
	}
}
