package patterns

import "scout/replay"

// collectivePattern is a wait-state pattern of collective operations: the
// communication handler has exchanged the begin and end times of all
// participants and computed this location's Idle and Completion times;
// the pattern attributes one of them to the collective's call path.
type collectivePattern struct {
	metric     replay.Metric
	topic      replay.Topic
	completion bool // use Completion instead of Idle
	syncOnly   bool // only at synchronisation points
}

// collectivePatterns lists the collective wait states:
//
//	mpi_barrier_wait:       waiting in a barrier for the last process to enter
//	mpi_barrier_completion: time in a barrier after the first process left
//	mpi_wait_nxn:           waiting in an N-to-N operation for the last process
//	mpi_nxn_completion:     time in an N-to-N operation after the first left
//	mpi_latebroadcast:      non-roots of a 1-to-N operation waiting for the root
//	mpi_earlyreduce:        the root of an N-to-1 operation waiting for the last sender
//	mpi_earlyscan:          a scan participant waiting for a lower rank
//	mpi_init_completion:    time in MPI_Init after the first process left it
//	mpi_finalize_wait:      waiting in MPI_Finalize for the last process to enter
var collectivePatterns = []collectivePattern{
	{BarrierWait, replay.FwBarrier, false, false},
	{BarrierCompletion, replay.FwBarrier, true, false},
	{WaitNxN, replay.FwNxN, false, true},
	{NxNCompletion, replay.FwNxN, true, true},
	{LateBroadcast, replay.FwOneToN, false, false},
	{EarlyReduce, replay.FwNToOne, false, false},
	{EarlyScan, replay.FwScan, false, false},
	{InitCompletion, replay.FwInit, true, false},
	{FinalizeWait, replay.FwFinalize, false, false},
}

func registerCollectives(bus *replay.Bus) {
	for _, p := range collectivePatterns {
		bus.On(p.topic, func(c *replay.Ctx) error {
			if p.syncOnly && !c.Coll.SyncPoint {
				return nil
			}
			v := c.Idle
			if p.completion {
				v = c.Completion
			}
			if v > 0 {
				c.Add(p.metric, c.Callpath(c.Index), v)
			}
			return nil
		})
	}
}
