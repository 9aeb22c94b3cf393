package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/hpc"
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

// releases is a world whose Release records what it was handed back;
// the tests call nothing else of it.
type releases struct {
	hpc.Comm
	got []string
}

func (r *releases) Release(buf []byte) { r.got = append(r.got, string(buf)) }

// TestInboxChunks: payloads come out per channel in the order shipped,
// across chunks, and chunks taken in full are dropped, and handed back
// to the transport at the next take (once their last payload has been
// used).
func TestInboxChunks(t *testing.T) {
	a, b := channel{1, 7}, channel{1, 9}
	in := &inbox{batches: map[int]*batch{}}
	chunks := [][]byte{
		chunk(chunkMore, a, "a1", b, "b1", a, "a2"),
		chunk(chunkMore),
		chunk(chunkLast, b, "b2", a, "a3"),
	}
	for _, c := range chunks {
		if err := in.add(3, c); err != nil {
			t.Fatal(err)
		}
	}
	world := &releases{}
	var got []string
	var handed []int // releases after each take
	for _, ch := range []channel{b, a, a, b, a} {
		p, err := in.take(world, 3, ch)
		handed = append(handed, len(world.got))
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
	if _, err := in.take(world, 3, a); !errors.Is(err, ErrUnmatched) {
		t.Errorf("a take beyond the last payload: %v, want ErrUnmatched", err)
	}
	if diff := cmp.Diff([]int{0, 0, 0, 1, 1}, handed); diff != "" {
		t.Errorf("chunks handed back after each take (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{string(chunks[0]), string(chunks[2])}, world.got); diff != "" {
		t.Errorf("chunks handed back (-want +got):\n%s", diff)
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
