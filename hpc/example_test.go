package hpc_test

import (
	"encoding/binary"
	"fmt"
	"math"

	"scout/hpc"
)

// A replay-like run: each rank sends its ENTER time of a send to the
// next rank with the application's tag, and the ranks of a sub-
// communicator find the latest entry into a collective with MAXLOC.
func ExampleRunInProcess() {
	enter := []float64{1.5, 0.5, 2.5, 2.5}
	lines := make([]string, len(enter))
	err := hpc.RunInProcess(len(enter), func(world hpc.Comm) error {
		me, n := world.Rank(), world.Size()
		msg := binary.LittleEndian.AppendUint64(nil, math.Float64bits(enter[me]))
		if err := world.Send((me+1)%n, 42, msg); err != nil {
			return err
		}
		b, err := world.Recv((me+n-1)%n, 42)
		if err != nil {
			return err
		}
		remote := math.Float64frombits(binary.LittleEndian.Uint64(b))

		// The application's communicator of world ranks 3, 2 and 0.
		sub, err := world.Create([]int{3, 2, 0})
		if err != nil || sub == nil {
			lines[me] = fmt.Sprintf("rank %d: remote enter %v", me, remote)
			return err
		}
		latest, err := hpc.Allreduce(sub, hpc.MaxLoc, []hpc.TimeRank{{Time: enter[me], Rank: sub.Rank()}})
		if err != nil {
			return err
		}
		lines[me] = fmt.Sprintf("rank %d: remote enter %v, latest %v on sub rank %d", me, remote, latest[0].Time, latest[0].Rank)
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// rank 0: remote enter 2.5, latest 2.5 on sub rank 0
	// rank 1: remote enter 1.5
	// rank 2: remote enter 0.5, latest 2.5 on sub rank 0
	// rank 3: remote enter 2.5, latest 2.5 on sub rank 0
}
