package patterns

import "scout/replay"

// collectivePattern is a wait-state pattern of collective operations: the
// communication handler has exchanged the begin and end times of all
// participants and computed this location's Idle and Completion times;
// the pattern attributes one of them to the collective's call path.
type collectivePattern struct {
	metric     string
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
	{"mpi_barrier_wait", replay.FwBarrier, false, false},
	{"mpi_barrier_completion", replay.FwBarrier, true, false},
	{"mpi_wait_nxn", replay.FwNxN, false, true},
	{"mpi_nxn_completion", replay.FwNxN, true, true},
	{"mpi_latebroadcast", replay.FwOneToN, false, false},
	{"mpi_earlyreduce", replay.FwNToOne, false, false},
	{"mpi_earlyscan", replay.FwScan, false, false},
	{"mpi_init_completion", replay.FwInit, true, false},
	{"mpi_finalize_wait", replay.FwFinalize, false, false},
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
