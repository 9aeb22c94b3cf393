package patterns

import "scout/replay"

// Metric describes one metric of the analysis report.
type Metric struct {
	Name    string // unique name, e.g. "mpi_latesender"
	Display string // display name
	Unit    string // "sec", "occ" or "bytes"
	Integer bool   // values are counts
	Parent  string // parent metric's unique name, "" for a root
	Descr   string
	// Part is the optional part of the analysis that computes the metric
	// (0: always computed), that of its pattern.
	Part Parts
	// Own marks a metric of scout's own, which the reference analyzer
	// (Scalasca's scout) does not compute: comparisons with the
	// reference's results (expected/scout.csv, trace.csv) leave it out,
	// and the reference's metric tree has no place for it.
	Own bool
}

func sec(name, display, parent, descr string) Metric {
	return Metric{Name: name, Display: display, Unit: "sec", Parent: parent, Descr: descr}
}

func occ(name, display, parent, descr string) Metric {
	return Metric{Name: name, Display: display, Unit: "occ", Integer: true, Parent: parent, Descr: descr}
}

func bytesM(name, display, parent, descr string) Metric {
	return Metric{Name: name, Display: display, Unit: "bytes", Integer: true, Parent: parent, Descr: descr}
}

// The metrics of the catalog, by id: a pattern adds to a metric by its
// id (Ctx.Add), so that a misspelt metric is a compile error; names
// appear only in the output.
const (
	Time                      replay.Metric = iota // time
	Visits                                         // visits
	InitCompletion                                 // mpi_init_completion
	FinalizeWait                                   // mpi_finalize_wait
	BarrierWait                                    // mpi_barrier_wait
	BarrierCompletion                              // mpi_barrier_completion
	LateSender                                     // mpi_latesender
	LateSenderWO                                   // mpi_latesender_wo
	WrongOrderDifferent                            // mpi_lswo_different
	WrongOrderSame                                 // mpi_lswo_same
	LateReceiver                                   // mpi_latereceiver
	EarlyReduce                                    // mpi_earlyreduce
	EarlyScan                                      // mpi_earlyscan
	LateBroadcast                                  // mpi_latebroadcast
	WaitNxN                                        // mpi_wait_nxn
	NxNCompletion                                  // mpi_nxn_completion
	SyncsSend                                      // syncs_send
	SLRCount                                       // mpi_slr_count
	SyncsRecv                                      // syncs_recv
	SLSCount                                       // mpi_sls_count
	SLSWOCount                                     // mpi_slswo_count
	SyncsColl                                      // syncs_coll
	CommsSend                                      // comms_send
	CLRCount                                       // mpi_clr_count
	CommsRecv                                      // comms_recv
	CLSCount                                       // mpi_cls_count
	CLSWOCount                                     // mpi_clswo_count
	CommsCxch                                      // comms_cxch
	CommsCsrc                                      // comms_csrc
	CommsCdst                                      // comms_cdst
	BytesSent                                      // bytes_sent
	BytesRcvd                                      // bytes_rcvd
	BytesCout                                      // bytes_cout
	BytesCin                                       // bytes_cin
	CriticalPath                                   // critical_path
	CriticalPathActivities                         // critical_path_activities
	CriticalImbalanceImpact                        // critical_imbalance_impact
	InterPartitionImbalance                        // inter_partition_imbalance
	NonCriticalPathActivities                      // non_critical_path_activities
	DelayLateSender                                // delay_latesender
	DelayLateReceiver                              // delay_latereceiver
	DelayBarrier                                   // delay_barrier
	DelayNxN                                       // delay_n2n
	DelayOneToN                                    // delay_12n
	DelayNToOne                                    // delay_n21
	DelayLateSenderLT                              // delay_latesender_longterm
	DelayLateReceiverLT                            // delay_latereceiver_longterm
	DelayBarrierLT                                 // delay_barrier_longterm
	DelayNxNLT                                     // delay_n2n_longterm
	DelayOneToNLT                                  // delay_12n_longterm
	DelayNToOneLT                                  // delay_n21_longterm
	IndirectLS                                     // mpi_wait_indirect_latesender
	IndirectLR                                     // mpi_wait_indirect_latereceiver
	PropagatingLS                                  // mpi_wait_propagating_ls
	PropagatingLR                                  // mpi_wait_propagating_lr
	OmpManagement                                  // omp_management
	OmpFork                                        // omp_fork
	OmpEBarrierWait                                // omp_ebarrier_wait
	OmpIBarrierWait                                // omp_ibarrier_wait
	OmpLockContentionCritical                      // omp_lock_contention_critical
	OmpLockContentionAPI                           // omp_lock_contention_api
	DelayOmpBarrier                                // delay_ompbarrier
	DelayOmpBarrierLT                              // delay_ompbarrier_longterm
	DelayOmpIdle                                   // delay_ompidle
	DelayOmpIdleLT                                 // delay_ompidle_longterm
	RefillNW                                       // mpi_latesender_refill_nw
	RefillNE                                       // mpi_latesender_refill_ne
	RefillSW                                       // mpi_latesender_refill_sw
	RefillSE                                       // mpi_latesender_refill_se
	RefillNWF                                      // mpi_latesender_refill_nwf
	RefillNEF                                      // mpi_latesender_refill_nef
	RefillSWF                                      // mpi_latesender_refill_swf
	RefillSEF                                      // mpi_latesender_refill_sef
	RefillNWB                                      // mpi_latesender_refill_nwb
	RefillNEB                                      // mpi_latesender_refill_neb
	RefillSWB                                      // mpi_latesender_refill_swb
	RefillSEB                                      // mpi_latesender_refill_seb
	numMetrics
)

// Catalog lists the metrics this analysis computes, by id (parents
// before children). Values are metric inclusive: a metric's value
// includes its children's (Late Sender includes Late Sender, wrong
// order). Declare adds to it.
var Catalog = catalog[:]

// Declare adds metric m to the catalog and returns its id. It is meant
// for package initialization (var X = patterns.Declare(...)), before any
// analysis runs; a name declared twice or a parent not yet declared is a
// programming error and panics.
func Declare(m Metric) replay.Metric {
	if _, ok := Lookup(m.Name); ok {
		panic("patterns: metric " + m.Name + " declared twice")
	}
	if _, ok := Lookup(m.Parent); m.Parent != "" && !ok {
		panic("patterns: metric " + m.Name + ": parent " + m.Parent + " not declared")
	}
	Catalog = append(Catalog[:len(Catalog):len(Catalog)], m)
	return replay.Metric(len(Catalog) - 1)
}

var catalog = [numMetrics]Metric{
	Time:                sec("time", "Time", "", "Elapsed wall-clock time a location spent in a call path, counting also threads that were allocated but had no work to do."),
	Visits:              occ("visits", "Visits", "", "How many times a location entered the call path."),
	InitCompletion:      sec("mpi_init_completion", "Initialization Completion", "", "Time a rank remains inside MPI initialization after the earliest rank has already returned from it."),
	FinalizeWait:        sec("mpi_finalize_wait", "Wait at Finalize", "", "Time a rank idles in MPI_Finalize until the last rank of the program has also called it."),
	BarrierWait:         sec("mpi_barrier_wait", "Wait at Barrier", "", "Time a rank idles in an MPI barrier before the last member of the communicator arrives."),
	BarrierCompletion:   sec("mpi_barrier_completion", "Barrier Completion", "", "Time a rank still spends in an MPI barrier after the earliest member has already left it."),
	LateSender:          sec("mpi_latesender", "Late Sender", "", "Time a blocking receive or wait call idles because the matching send started only after the receive had begun."),
	LateSenderWO:        sec("mpi_latesender_wo", "Messages in Wrong Order", "mpi_latesender", "Share of Late Sender idle time during which a message sent earlier was already available but the program chose to receive a later-sent one first."),
	WrongOrderDifferent: sec("mpi_lswo_different", "From different sources", "mpi_latesender_wo", "Wrong-order Late Sender idle time in which the message that could have been taken first came from another sending rank."),
	WrongOrderSame:      sec("mpi_lswo_same", "From same source", "mpi_latesender_wo", "Wrong-order Late Sender idle time in which the awaited message and the one already available came from one and the same sending rank."),
	LateReceiver:        sec("mpi_latereceiver", "Late Receiver", "", "Time a blocking send, or the wait call completing it, idles because the destination rank posted its matching receive only later."),
	EarlyReduce:         sec("mpi_earlyreduce", "Early Reduce", "", "Time the root of a reduction or gather idles before the last contributing rank has entered the operation."),
	EarlyScan:           sec("mpi_earlyscan", "Early Scan", "", "Time a rank idles in a prefix scan until every lower-ranked contributor has entered the call."),
	LateBroadcast:       sec("mpi_latebroadcast", "Late Broadcast", "", "Time the non-root ranks of a broadcast or scatter idle until the root has entered the operation."),
	WaitNxN:             sec("mpi_wait_nxn", "Wait at N x N", "", "Time a rank idles in an all-to-all style collective until the last participant has joined it."),
	NxNCompletion:       sec("mpi_nxn_completion", "N x N Completion", "", "Time a rank stays in an all-to-all style collective after the earliest participant has already finished it."),
	SyncsSend:           occ("syncs_send", "Sends", "", "Count of point-to-point sends that carried no payload and thus served only to synchronize ranks."),
	SLRCount:            occ("mpi_slr_count", "Late Receivers", "syncs_send", "Count of payload-free sends that stalled because their receiver was late."),
	SyncsRecv:           occ("syncs_recv", "Receives", "", "Count of point-to-point receives of zero-byte messages, which act purely as synchronization."),
	SLSCount:            occ("mpi_sls_count", "Late Senders", "syncs_recv", "Count of zero-byte receives that stalled because their sender was late."),
	SLSWOCount:          occ("mpi_slswo_count", "Messages in Wrong Order", "mpi_sls_count", "Count of stalled zero-byte receives whose delay arose from taking messages out of their send order."),
	SyncsColl:           occ("syncs_coll", "Collective", "", "Count of MPI collective calls in which a rank neither sent nor received any data."),
	CommsSend:           occ("comms_send", "Sends", "", "Count of point-to-point sends that transferred a non-empty payload."),
	CLRCount:            occ("mpi_clr_count", "Late Receivers", "comms_send", "Count of data-carrying sends that stalled because their receiver was late."),
	CommsRecv:           occ("comms_recv", "Receives", "", "Count of point-to-point receives of messages with a non-empty payload."),
	CLSCount:            occ("mpi_cls_count", "Late Senders", "comms_recv", "Count of data-carrying receives that stalled because their sender was late."),
	CLSWOCount:          occ("mpi_clswo_count", "Messages in Wrong Order", "mpi_cls_count", "Count of stalled data-carrying receives whose delay arose from taking messages out of their send order."),
	CommsCxch:           occ("comms_cxch", "Exchange", "", "Count of MPI collective calls in which a rank both contributed and obtained data."),
	CommsCsrc:           occ("comms_csrc", "As source", "", "Count of MPI collective calls in which a rank only contributed data and obtained none."),
	CommsCdst:           occ("comms_cdst", "As destination", "", "Count of MPI collective calls in which a rank only obtained data and contributed none."),
	BytesSent:           bytesM("bytes_sent", "Sent", "", "Payload volume, in bytes, that a rank handed to point-to-point send calls."),
	BytesRcvd:           bytesM("bytes_rcvd", "Received", "", "Payload volume, in bytes, that a rank took in through point-to-point receives, as announced by the matching sends."),
	BytesCout:           bytesM("bytes_cout", "Outgoing", "", "Payload volume, in bytes, that a rank contributed to MPI collective calls."),
	BytesCin:            bytesM("bytes_cin", "Incoming", "", "Payload volume, in bytes, that a rank obtained from MPI collective calls."),
	CriticalPath: sec("critical_path", "Critical path", "",
		"A rank's share of the critical path, the chain of dependent activities that sets the program's total run time, by call path."),
	CriticalPathActivities: sec("critical_path_activities", "Activity impact", "",
		"Critical-path time of a call path, capped at the rank's own wait-free time there, which is what speeding up that code could save."),
	CriticalImbalanceImpact: sec("critical_imbalance_impact", "Imbalance impact", "",
		"Critical-path time beyond the ranks' own wait-free times in the same call paths, which shows up as waiting on the other ranks."),
	InterPartitionImbalance: sec("inter_partition_imbalance", "Inter-partition imbalance", "critical_imbalance_impact",
		"Imbalance impact of critical-path call paths that some ranks never execute, so that ranks doing different work differ in load."),
	DelayLateSender: sec("delay_latesender", "Short-term", "",
		"Lag a sender built up behind its receiver since their previous synchronization, charged where it arose, as far as it caused the receiver's Late Sender wait directly."),
	DelayLateReceiver: sec("delay_latereceiver", "Short-term", "",
		"Lag a receiver built up behind its sender since their previous synchronization, charged where it arose, as far as it caused the sender's Late Receiver wait directly."),
	DelayBarrier: sec("delay_barrier", "Short-term", "",
		"Lag the last rank to enter a barrier built up behind the others since they last all synchronized, as far as it caused their waits directly."),
	DelayNxN: sec("delay_n2n", "Short-term", "",
		"Lag the last rank to enter an N-to-N operation built up behind the others since they last all synchronized, as far as it caused their waits directly."),
	DelayOneToN: sec("delay_12n", "Short-term", "",
		"Lag the root of a 1-to-N operation built up behind the other ranks since they last all synchronized, as far as it caused their waits directly."),
	DelayNToOne: sec("delay_n21", "Short-term", "",
		"Lag the last sender of an N-to-1 operation built up behind the root since they last all synchronized, as far as it caused the root's wait directly."),
	DelayLateSenderLT: sec("delay_latesender_longterm", "Long-term", "",
		"Lag of senders that led to Late Sender waits only by way of other wait states it had caused first."),
	DelayLateReceiverLT: sec("delay_latereceiver_longterm", "Long-term", "",
		"Lag of receivers that led to Late Receiver waits only by way of other wait states it had caused first."),
	DelayBarrierLT: sec("delay_barrier_longterm", "Long-term", "",
		"Lag that led to barrier waits only by way of other wait states it had caused first."),
	DelayNxNLT: sec("delay_n2n_longterm", "Long-term", "",
		"Lag that led to N-to-N waits only by way of other wait states it had caused first."),
	DelayOneToNLT: sec("delay_12n_longterm", "Long-term", "",
		"Lag that led to 1-to-N waits only by way of other wait states it had caused first."),
	DelayNToOneLT: sec("delay_n21_longterm", "Long-term", "",
		"Lag that led to N-to-1 waits only by way of other wait states it had caused first."),
	IndirectLS: sec("mpi_wait_indirect_latesender", "Late Sender", "",
		"Share of Late Sender idle time that stems from the sender having had to wait itself before it could send."),
	IndirectLR: sec("mpi_wait_indirect_latereceiver", "Late Receiver", "",
		"Share of Late Receiver idle time that stems from the receiver having had to wait itself before it could post the receive."),
	PropagatingLS: sec("mpi_wait_propagating_ls", "Late Sender", "",
		"Share of Late Sender idle time that held this rank up so long that a partner of a later message had to wait in turn."),
	PropagatingLR: sec("mpi_wait_propagating_lr", "Late Receiver", "",
		"Share of Late Receiver idle time that held this rank up so long that a partner of a later message had to wait in turn."),
	OmpManagement: sec("omp_management", "OMP Management", "",
		"Time a thread of an OpenMP team spends on the team's management: from the fork of the team until it starts its part of the parallel region, and from the end of its part until the team has joined."),
	OmpFork: sec("omp_fork", "OMP Fork", "omp_management",
		"Management time of an OpenMP team from the fork until the thread starts its part of the parallel region."),
	OmpEBarrierWait: sec("omp_ebarrier_wait", "OMP Wait at Explicit Barrier", "",
		"Time a thread idles in an explicit OpenMP barrier until the last thread of its team has arrived."),
	OmpIBarrierWait: sec("omp_ibarrier_wait", "OMP Wait at Implicit Barrier", "",
		"Time a thread idles in an implicit OpenMP barrier (at the end of a worksharing construct or parallel region) until the last thread of its team has arrived."),
	OmpLockContentionCritical: sec("omp_lock_contention_critical", "OMP Critical Contention", "",
		"Time a thread idles at the entry of an OpenMP critical section while another thread holds it."),
	OmpLockContentionAPI: sec("omp_lock_contention_api", "OMP Lock API Contention", "",
		"Time a thread idles in an OpenMP lock call (omp_set_lock and the like) while another thread holds the lock."),
	DelayOmpBarrier: sec("delay_ompbarrier", "Short-term", "",
		"Lag the last thread to enter an OpenMP barrier built up behind the others of its team since they last synchronized, as far as it caused their waits directly."),
	DelayOmpBarrierLT: sec("delay_ompbarrier_longterm", "Long-term", "",
		"Lag that led to OpenMP barrier waits only by way of other wait states it had caused first."),
	DelayOmpIdle: sec("delay_ompidle", "Short-term", "",
		"Time the master thread runs alone outside parallel regions, charged where it runs, for the worker threads it leaves idle."),
	DelayOmpIdleLT: sec("delay_ompidle_longterm", "Long-term", "",
		"Lag that left OpenMP worker threads idle only by way of other wait states it had caused first."),
	NonCriticalPathActivities: sec("non_critical_path_activities", "Non-critical path activities", "",
		"Wait-free time of a rank in a call path beyond that call path's critical-path time, which does not lengthen the run."),
	RefillNW: own(sec("mpi_latesender_refill_nw", "Refill from North-West", "mpi_latesender",
		"Late Sender idle time in the first step of a pipelined wavefront on a 2-D Cartesian grid that came from the north-west corner after a wavefront from another corner had passed.")),
	RefillNE: own(sec("mpi_latesender_refill_ne", "Refill from North-East", "mpi_latesender",
		"Late Sender idle time in the first step of a pipelined wavefront on a 2-D Cartesian grid that came from the north-east corner after a wavefront from another corner had passed.")),
	RefillSW: own(sec("mpi_latesender_refill_sw", "Refill from South-West", "mpi_latesender",
		"Late Sender idle time in the first step of a pipelined wavefront on a 2-D Cartesian grid that came from the south-west corner after a wavefront from another corner had passed.")),
	RefillSE: own(sec("mpi_latesender_refill_se", "Refill from South-East", "mpi_latesender",
		"Late Sender idle time in the first step of a pipelined wavefront on a 2-D Cartesian grid that came from the south-east corner after a wavefront from another corner had passed.")),
	RefillNWF: refill3D("nwf", "North-West-Front", "north-west-front"),
	RefillNEF: refill3D("nef", "North-East-Front", "north-east-front"),
	RefillSWF: refill3D("swf", "South-West-Front", "south-west-front"),
	RefillSEF: refill3D("sef", "South-East-Front", "south-east-front"),
	RefillNWB: refill3D("nwb", "North-West-Back", "north-west-back"),
	RefillNEB: refill3D("neb", "North-East-Back", "north-east-back"),
	RefillSWB: refill3D("swb", "South-West-Back", "south-west-back"),
	RefillSEB: refill3D("seb", "South-East-Back", "south-east-back"),
}

// refill3D declares the wavefront refill metric of an octant corner of a
// 3-D grid (suffix of the name, display form, words of the description).
func refill3D(suffix, display, words string) Metric {
	return own(sec("mpi_latesender_refill_"+suffix, "Refill from "+display, "mpi_latesender",
		"Late Sender idle time in the first step of a pipelined wavefront on a 3-D Cartesian grid that came from the "+
			words+" corner after a wavefront from another corner had passed."))
}

// own marks m as a metric of scout's own (Metric.Own).
func own(m Metric) Metric {
	m.Own = true
	return m
}

// Named returns a location's values by metric name, for the output.
func Named(s *replay.Severities) map[string][]float64 {
	out := map[string][]float64{}
	for m, row := range s.Rows() {
		if row != nil {
			out[Catalog[m].Name] = row
		}
	}
	return out
}

// Lookup returns the catalog entry of a metric.
func Lookup(name string) (Metric, bool) {
	for _, m := range Catalog {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}
