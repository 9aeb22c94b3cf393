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
	Time:                sec("time", "Time", "", "Total CPU allocation time (includes time allocated for idle threads)"),
	Visits:              occ("visits", "Visits", "", "Number of visits"),
	InitCompletion:      sec("mpi_init_completion", "Initialization Completion", "", "Time needed to finish MPI initialization"),
	FinalizeWait:        sec("mpi_finalize_wait", "Wait at Finalize", "", "Waiting time in front of MPI_Finalize"),
	BarrierWait:         sec("mpi_barrier_wait", "Wait at Barrier", "", "Waiting time in front of MPI barriers"),
	BarrierCompletion:   sec("mpi_barrier_completion", "Barrier Completion", "", "Time needed to finish MPI barriers"),
	LateSender:          sec("mpi_latesender", "Late Sender", "", "Time in MPI point-to-point receive operation waiting for a message"),
	LateSenderWO:        sec("mpi_latesender_wo", "Messages in Wrong Order", "mpi_latesender", "Late Sender situation due to MPI messages received in the wrong order"),
	WrongOrderDifferent: sec("mpi_lswo_different", "From different sources", "mpi_latesender_wo", "Late Sender, Wrong Order situation due to MPI messages received from different sources"),
	WrongOrderSame:      sec("mpi_lswo_same", "From same source", "mpi_latesender_wo", "Late Sender, Wrong Order situation due to MPI messages received from the same source"),
	LateReceiver:        sec("mpi_latereceiver", "Late Receiver", "", "Time in MPI point-to-point send operation waiting for the receiver to become ready"),
	EarlyReduce:         sec("mpi_earlyreduce", "Early Reduce", "", "Waiting time due to an early receiver in MPI n-to-1 operations"),
	EarlyScan:           sec("mpi_earlyscan", "Early Scan", "", "Waiting time due to an early receiver in an MPI scan operation"),
	LateBroadcast:       sec("mpi_latebroadcast", "Late Broadcast", "", "Waiting time due to a late sender in MPI 1-to-n operations"),
	WaitNxN:             sec("mpi_wait_nxn", "Wait at N x N", "", "Waiting time due to inherent synchronization in MPI n-to-n operations"),
	NxNCompletion:       sec("mpi_nxn_completion", "N x N Completion", "", "Time needed to finish an MPI n-to-n collective operation"),
	SyncsSend:           occ("syncs_send", "Sends", "", "Number of MPI point-to-point send synchronization operations"),
	SLRCount:            occ("mpi_slr_count", "Late Receivers", "syncs_send", "Number of Late Receiver instances in MPI synchronizations"),
	SyncsRecv:           occ("syncs_recv", "Receives", "", "Number of MPI point-to-point receive synchronization operations"),
	SLSCount:            occ("mpi_sls_count", "Late Senders", "syncs_recv", "Number of Late Sender instances in MPI synchronizations"),
	SLSWOCount:          occ("mpi_slswo_count", "Messages in Wrong Order", "mpi_sls_count", "Number of Late Sender instances in MPI synchronizations where messages are received in wrong order"),
	SyncsColl:           occ("syncs_coll", "Collective", "", "Number of MPI collective synchronization operations"),
	CommsSend:           occ("comms_send", "Sends", "", "Number of MPI point-to-point send communication operations"),
	CLRCount:            occ("mpi_clr_count", "Late Receivers", "comms_send", "Number of Late Receiver instances in MPI communications"),
	CommsRecv:           occ("comms_recv", "Receives", "", "Number of MPI point-to-point receive communication operations"),
	CLSCount:            occ("mpi_cls_count", "Late Senders", "comms_recv", "Number of Late Sender instances MPI in communications"),
	CLSWOCount:          occ("mpi_clswo_count", "Messages in Wrong Order", "mpi_cls_count", "Number of Late Sender instances in MPI communications where messages are received in wrong order"),
	CommsCxch:           occ("comms_cxch", "Exchange", "", "Number of MPI collective communications as source and destination"),
	CommsCsrc:           occ("comms_csrc", "As source", "", "Number of MPI collective communications as source"),
	CommsCdst:           occ("comms_cdst", "As destination", "", "Number of MPI collective communications as destination"),
	BytesSent:           bytesM("bytes_sent", "Sent", "", "Number of bytes sent in MPI point-to-point communication operations"),
	BytesRcvd:           bytesM("bytes_rcvd", "Received", "", "Number of bytes received in MPI point-to-point communication operations"),
	BytesCout:           bytesM("bytes_cout", "Outgoing", "", "Number of bytes outgoing in MPI collective communication operations"),
	BytesCin:            bytesM("bytes_cin", "Incoming", "", "Number of bytes incoming in MPI collective communication operations"),
	CriticalPath: sec("critical_path", "Critical path", "",
		"Time of each call path on the critical path, the chain of activities that determines the program's run time, by the rank that executed it"),
	CriticalPathActivities: sec("critical_path_activities", "Activity impact", "",
		"Time of each call path on the critical path, up to the rank's own time in it without waiting: what shortening it would save"),
	CriticalImbalanceImpact: sec("critical_imbalance_impact", "Imbalance impact", "",
		"Time on the critical path beyond the ranks' own times in the same call paths, which other ranks spend waiting"),
	InterPartitionImbalance: sec("inter_partition_imbalance", "Inter-partition imbalance", "critical_imbalance_impact",
		"Imbalance impact of critical-path call paths that some ranks do not execute at all"),
	DelayLateSender: sec("delay_latesender", "Short-term", "",
		"Time by which a sender of a Late Sender wait state was behind the receiver since they last synchronised, as far as it caused the wait directly"),
	DelayLateReceiver: sec("delay_latereceiver", "Short-term", "",
		"Time by which a receiver of a Late Receiver wait state was behind the sender since they last synchronised, as far as it caused the wait directly"),
	DelayBarrier: sec("delay_barrier", "Short-term", "",
		"Time by which the last rank to enter a barrier was behind the others since they last synchronised, as far as it caused their waits directly"),
	DelayNxN: sec("delay_n2n", "Short-term", "",
		"Time by which the last rank to enter an N-to-N operation was behind the others since they last synchronised, as far as it caused their waits directly"),
	DelayOneToN: sec("delay_12n", "Short-term", "",
		"Time by which the root of a 1-to-N operation was behind the others since they last synchronised, as far as it caused their waits directly"),
	DelayNToOne: sec("delay_n21", "Short-term", "",
		"Time by which the last sender of an N-to-1 operation was behind the root since they last synchronised, as far as it caused its wait directly"),
	DelayLateSenderLT: sec("delay_latesender_longterm", "Long-term", "",
		"Delay that caused Late Sender wait states indirectly, through the wait states it caused first"),
	DelayLateReceiverLT: sec("delay_latereceiver_longterm", "Long-term", "",
		"Delay that caused Late Receiver wait states indirectly, through the wait states it caused first"),
	DelayBarrierLT: sec("delay_barrier_longterm", "Long-term", "",
		"Delay that caused barrier wait states indirectly, through the wait states it caused first"),
	DelayNxNLT: sec("delay_n2n_longterm", "Long-term", "",
		"Delay that caused N-to-N wait states indirectly, through the wait states it caused first"),
	DelayOneToNLT: sec("delay_12n_longterm", "Long-term", "",
		"Delay that caused 1-to-N wait states indirectly, through the wait states it caused first"),
	DelayNToOneLT: sec("delay_n21_longterm", "Long-term", "",
		"Delay that caused N-to-1 wait states indirectly, through the wait states it caused first"),
	IndirectLS: sec("mpi_wait_indirect_latesender", "Late Sender", "",
		"Part of Late Sender waits caused by the sender waiting itself before it sent"),
	IndirectLR: sec("mpi_wait_indirect_latereceiver", "Late Receiver", "",
		"Part of Late Receiver waits caused by the receiver waiting itself before it posted the receive"),
	PropagatingLS: sec("mpi_wait_propagating_ls", "Late Sender", "",
		"Part of Late Sender waits that made this rank late for a later message, so that a partner waited in turn"),
	PropagatingLR: sec("mpi_wait_propagating_lr", "Late Receiver", "",
		"Part of Late Receiver waits that made this rank late for a later message, so that a partner waited in turn"),
	NonCriticalPathActivities: sec("non_critical_path_activities", "Non-critical path activities", "",
		"Time of a rank in a call path beyond that call path's time on the critical path, which does not delay the program"),
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
