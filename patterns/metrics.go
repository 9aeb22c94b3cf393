package patterns

// Metric describes one metric of the analysis report.
type Metric struct {
	Name    string // unique name, e.g. "mpi_latesender"
	Display string // display name
	Unit    string // "sec", "occ" or "bytes"
	Integer bool   // values are counts
	Parent  string // parent metric's unique name, "" for a root
	Descr   string
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

// Catalog lists the metrics this analysis computes, parents before
// children. Values are metric inclusive: a metric's value includes its
// children's (Late Sender includes Late Sender, wrong order).
var Catalog = []Metric{
	sec("time", "Time", "", "Total time spent in the call path"),
	occ("visits", "Visits", "", "Number of times the call path was entered"),
	sec("mpi_init_completion", "Initialization Completion", "", "Time in MPI_Init after the first process left it"),
	sec("mpi_finalize_wait", "Wait at Finalize", "", "Waiting in MPI_Finalize for the last process to enter"),
	sec("mpi_barrier_wait", "Wait at Barrier", "", "Waiting in a barrier for the last process to enter"),
	sec("mpi_barrier_completion", "Barrier Completion", "", "Time in a barrier after the first process left"),
	sec("mpi_latesender", "Late Sender", "", "A receive blocked waiting for a message not yet sent"),
	sec("mpi_latesender_wo", "Late Sender, wrong order", "mpi_latesender", "Late Sender caused by receiving messages in a different order than they were sent"),
	sec("mpi_lswo_different", "From different sources", "mpi_latesender_wo", "Wrong order among messages from different senders"),
	sec("mpi_lswo_same", "From same source", "mpi_latesender_wo", "Wrong order among messages from the same sender"),
	sec("mpi_latereceiver", "Late Receiver", "", "A send blocked until the receiver was ready"),
	sec("mpi_earlyreduce", "Early Reduce", "", "The root of an N-to-1 operation waiting for the last sender"),
	sec("mpi_earlyscan", "Early Scan", "", "A scan participant waiting for a lower rank"),
	sec("mpi_latebroadcast", "Late Broadcast", "", "Non-roots of a 1-to-N operation waiting for the root"),
	sec("mpi_wait_nxn", "Wait at N x N", "", "Waiting in an N-to-N operation for the last process to enter"),
	sec("mpi_nxn_completion", "N x N Completion", "", "Time in an N-to-N operation after the first process left"),
	occ("syncs_send", "Sends", "", "Point-to-point sends of zero bytes"),
	occ("mpi_slr_count", "Late Receivers", "syncs_send", "Late Receiver instances of zero-byte sends"),
	occ("syncs_recv", "Receives", "", "Point-to-point receives of zero bytes"),
	occ("mpi_sls_count", "Late Senders", "syncs_recv", "Late Sender instances of zero-byte receives"),
	occ("mpi_slswo_count", "Messages in Wrong Order", "mpi_sls_count", "Wrong-order Late Sender instances of zero-byte receives"),
	occ("syncs_coll", "Collective", "", "Collective operations that moved no data"),
	occ("comms_send", "Sends", "", "Point-to-point sends of data"),
	occ("mpi_clr_count", "Late Receivers", "comms_send", "Late Receiver instances of sends of data"),
	occ("comms_recv", "Receives", "", "Point-to-point receives of data"),
	occ("mpi_cls_count", "Late Senders", "comms_recv", "Late Sender instances of receives of data"),
	occ("mpi_clswo_count", "Messages in Wrong Order", "mpi_cls_count", "Wrong-order Late Sender instances of receives of data"),
	occ("comms_cxch", "Exchange", "", "Collective operations that sent and received data"),
	occ("comms_csrc", "As source", "", "Collective operations that only sent data"),
	occ("comms_cdst", "As destination", "", "Collective operations that only received data"),
	bytesM("bytes_sent", "Sent", "", "Bytes sent in point-to-point messages"),
	bytesM("bytes_rcvd", "Received", "", "Bytes received in point-to-point messages"),
	bytesM("bytes_cout", "Outgoing", "", "Bytes sent in collective operations"),
	bytesM("bytes_cin", "Incoming", "", "Bytes received in collective operations"),
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
