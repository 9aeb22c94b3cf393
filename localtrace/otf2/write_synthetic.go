package otf2

import (
	"fmt"
	"io"
)

// Region identifiers used by SyntheticEvents. They need no definitions for
// decoding, but an analysis that names regions should be given
// definitions with these identifiers.
const (
	SynthMain      = 0 // the outermost region
	SynthWork      = 1 // one iteration
	SynthCompute   = 2 // computation, entered three times per iteration
	SynthSend      = 3 // MPI_Send
	SynthRecv      = 4 // MPI_Recv
	SynthAllreduce = 5 // MPI_Allreduce
)

// SyntheticEvents writes a synthetic event stream of about n events (at
// least n, at most n+15) to w, chunked with the given chunk size, and
// returns the number of events written. The mix is Score-P-like: mostly
// nested Enter/Leave, with an MPI_Send or MPI_Recv (Enter, MpiSend or
// MpiRecv on communicator 0, Leave) every iteration and an MPI_Allreduce
// (Enter, MpiCollectiveBegin, MpiCollectiveEnd, Leave) every tenth.
// Timestamps start at 1000 ticks and advance by pseudo-random steps; the
// stream is the same for the same arguments. Region ids are the Synth*
// constants.
func SyntheticEvents(w io.Writer, n int, chunkSize uint64) (uint64, error) {
	ew, err := NewEventWriter(w, chunkSize)
	if err != nil {
		return 0, err
	}
	t := uint64(1000)
	x := uint32(12345)
	step := func() uint64 { // xorshift: cheap deterministic jitter
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		t += 10 + uint64(x%500)
		return t
	}
	// The writer's errors are sticky: the checked Leave of every
	// iteration reports an error of any call before it.
	ew.Enter(step(), SynthMain)
	for it := 0; it == 0 || ew.Count()+1 < uint64(n); it++ {
		ew.Enter(step(), SynthWork)
		for k := 0; k < 3; k++ {
			ew.Enter(step(), SynthCompute)
			ew.Leave(step(), SynthCompute)
		}
		if it%2 == 0 {
			ew.Enter(step(), SynthSend)
			ew.MpiSend(step(), 1, 0, uint32(it%32), 8)
			ew.Leave(step(), SynthSend)
		} else {
			ew.Enter(step(), SynthRecv)
			ew.MpiRecv(step(), 1, 0, uint32((it-1)%32), 8)
			ew.Leave(step(), SynthRecv)
		}
		if it%10 == 9 {
			ew.Enter(step(), SynthAllreduce)
			ew.MpiCollectiveBegin(t)
			ew.MpiCollectiveEnd(step(), 11, 0, Undef32, 16, 16)
			ew.Leave(step(), SynthAllreduce)
		}
		if err := ew.Leave(step(), SynthWork); err != nil {
			return 0, fmt.Errorf("otf2: synthetic stream: %w", err)
		}
	}
	if err := ew.Leave(step(), SynthMain); err != nil {
		return 0, fmt.Errorf("otf2: synthetic stream: %w", err)
	}
	if err := ew.Close(); err != nil {
		return 0, fmt.Errorf("otf2: synthetic stream: %w", err)
	}
	return ew.Count(), nil
}
