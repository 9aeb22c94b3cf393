package combine

import (
	"slices"

	"scout/patterns"
)

// Origin tells how the value of a metric of the derived tree is obtained.
type Origin uint8

// The origins of derived-tree metrics, after Scalasca's remapping
// specification (scout.spec) and its remapper (cube_remap2).
const (
	// Copied metrics are computed by the trace analysis itself.
	Copied Origin = iota
	// Masked metrics (PREDERIVED_EXCLUSIVE) take, at the call paths of one
	// category, the time (or visits) spent there; zero elsewhere.
	Masked
	// Summed metrics (POSTDERIVED) are sums and differences of other
	// metrics' inclusive values.
	Summed
	// Remapped metrics are computed by the remapper itself: the
	// computational imbalance heuristic.
	Remapped
	// Formula metrics are computed by an expression of their own over
	// other metrics' values, call-path inclusive and summed over all
	// locations (the critical path's imbalance).
	Formula
)

// String returns the letter the reference documentation uses: S, P, Q, R
// or C.
func (o Origin) String() string {
	switch o {
	case Copied:
		return "S"
	case Masked:
		return "P"
	case Summed:
		return "Q"
	case Remapped:
		return "R"
	case Formula:
		return "C"
	}
	return "?"
}

// MetricDef is one metric of the user-facing metric tree that Scalasca's
// square step derives from the trace analysis.
type MetricDef struct {
	Unique  string // unique name, e.g. "mpi_point2point"
	Display string // display name as Cube shows it, e.g. "Point-to-point"
	Unit    string // "sec", "occ" or "bytes"
	Descr   string // one-sentence description
	Parent  string // parent's unique name, "" for a root
	Integer bool   // data type INTEGER (counts, bytes) rather than FLOAT
	Origin  Origin

	// mask selects the call paths of a Masked metric.
	mask class
	// terms are the summands of a Summed metric, the per-cell base of a
	// Masked one, or the operand a Formula metric's formula sums up; a
	// leading '-' subtracts.
	terms []string
	// needs is the paradigm flag (has…) without which the metric does not
	// exist; 0 when it always exists.
	needs class
	// part is the optional part of the analysis (patterns.Parts) that
	// computes the metric or what it is derived from; the metric does not
	// exist when the analysis left that part out (Profile.Skipped).
	part patterns.Parts
}

// Terms returns the summands of a Summed metric, the base values of a
// Masked one ("time", "visits"), or the summed operand of a Formula
// metric; a leading '-' marks a subtrahend.
func (m MetricDef) Terms() []string { return slices.Clone(m.terms) }

// The constructors of the tree's entries. Units: "sec" is FLOAT, "occ" and
// "bytes" are INTEGER.
func metric(o Origin, unit, unique, display, parent, descr string) MetricDef {
	return MetricDef{Unique: unique, Display: display, Unit: unit, Descr: descr, Parent: parent,
		Integer: unit != "sec", Origin: o}
}

// copied is a metric the analysis computes: its unit, display name and
// description are the ones its patterns declare (patterns.Catalog), and
// parent is its place in this tree.
func copied(unique, parent string) MetricDef {
	m, ok := patterns.Lookup(unique)
	if !ok {
		panic("combine: metric tree: " + unique + " is not in the patterns' catalog")
	}
	d := metric(Copied, m.Unit, unique, m.Display, parent, m.Descr)
	d.part = m.Part
	return d
}

func timeMask(mask class, unique, display, parent, descr string) MetricDef {
	m := metric(Masked, "sec", unique, display, parent, descr)
	m.mask, m.terms = mask, []string{"time"}
	return m
}

func visitMask(mask class, unique, display, parent, descr string) MetricDef {
	m := metric(Masked, "occ", unique, display, parent, descr)
	m.mask, m.terms = mask, []string{"visits"}
	return m
}

func summed(unit, unique, display, parent, descr string, terms ...string) MetricDef {
	m := metric(Summed, unit, unique, display, parent, descr)
	m.terms = terms
	return m
}

func remapped(unique, display, parent, descr string) MetricDef {
	return metric(Remapped, "sec", unique, display, parent, descr)
}

// formula is a metric computed by its own function (deriver.get names
// it), which sums terms as its operand.
func formula(unique, display, parent, descr string, terms ...string) MetricDef {
	m := metric(Formula, "sec", unique, display, parent, descr)
	m.terms = terms
	return m
}

// waitFreeTime is the time a location spends outside wait states, the
// operand of the critical path's imbalance: the time less every wait
// state the reference analysis can detect (those scout does not compute,
// one-sided and OpenMP ones and idle threads, count as zero), and less
// the OpenMP team management time and the whole time in ordered regions.
var waitFreeTime = []string{"time",
	"-mpi_finalize_wait", "-mpi_rma_wait_at_create", "-mpi_rma_wait_at_free", "-mpi_barrier_wait",
	"-mpi_rma_sync_late_post", "-mpi_rma_early_wait", "-mpi_rma_wait_at_fence",
	"-mpi_rma_sync_lock_competition", "-mpi_rma_sync_wait_for_progress",
	"-mpi_latesender", "-mpi_latereceiver", "-mpi_earlyreduce", "-mpi_earlyscan", "-mpi_latebroadcast", "-mpi_wait_nxn",
	"-mpi_rma_comm_late_post", "-mpi_rma_comm_lock_competition", "-mpi_rma_comm_wait_for_progress",
	"-omp_management", "-omp_ebarrier_wait", "-omp_ibarrier_wait",
	"-omp_lock_contention_critical", "-omp_lock_contention_api", "-omp_ordered", "-omp_idle_threads"}

// needing marks metrics as existing only when paradigm flag f is set.
func needing(f class, ms ...MetricDef) []MetricDef {
	for i := range ms {
		ms[i].needs = f
	}
	return ms
}

// computedBy marks metrics as derived from what the analysis computes
// in part p only.
func computedBy(p patterns.Parts, ms ...MetricDef) []MetricDef {
	for i := range ms {
		ms[i].part = p
	}
	return ms
}

// metricTree is the derived metric tree in report (preorder) order: the
// metrics of Scalasca 2.6's scout.spec that this analysis can produce.
// Left out are the metrics computed by analyses scout does not run yet
// (one-sided and OpenMP/Pthread wait states, idle threads) and the sums
// made only of them.
var metricTree = slices.Concat(
	[]MetricDef{
		copied("time", ""),
		timeMask(cExecution, "execution", "Execution", "time", "Execution time (does not include time allocated for idle threads)"),
		summed("sec", "comp", "Computation", "execution", "Time spent on computation",
			"execution", "-mpi", "-omp_time", "-pthread_time", "-openacc_time", "-opencl_time", "-cuda_time"),
	},
	needing(hasOpenCLKernels,
		timeMask(cOpenCLKernelExecutions, "opencl_kernel_executions", "OpenCL kernels", "comp", "Time spent executing OpenCL kernels")),
	needing(hasCUDAKernels,
		timeMask(cCUDAKernelExecutions, "cuda_kernel_executions", "CUDA kernels", "comp", "Time spent executing CUDA kernels")),
	needing(hasMPI,
		timeMask(cMPI, "mpi", "MPI", "execution", "Time spent in MPI calls"),
		summed("sec", "mpi_management", "Management", "mpi", "Time spent in MPI management operations",
			"mpi_init_exit", "mpi_mgmt_comm", "mpi_mgmt_file", "mpi_mgmt_win"),
		timeMask(cMPIMgmtStartup, "mpi_init_exit", "Init/Finalize", "mpi_management", "Time spent in MPI initialization/finalization calls"),
		copied("mpi_init_completion", "mpi_init_exit"),
		copied("mpi_finalize_wait", "mpi_init_exit"),
		timeMask(cMPIMgmtComm, "mpi_mgmt_comm", "Communicator", "mpi_management", "Time spent in MPI communicator management calls"),
		timeMask(cMPIMgmtFile, "mpi_mgmt_file", "File", "mpi_management", "Time spent in MPI file management calls"),
		timeMask(cMPIMgmtWin, "mpi_mgmt_win", "Window", "mpi_management", "Time spent in MPI window management calls"),
		summed("sec", "mpi_synchronization", "Synchronization", "mpi", "Time spent in MPI synchronization calls",
			"mpi_sync_collective", "mpi_rma_synchronization"),
		timeMask(cMPISyncCollective, "mpi_sync_collective", "Collective", "mpi_synchronization", "Time spent in MPI barriers"),
		copied("mpi_barrier_wait", "mpi_sync_collective"),
		copied("mpi_barrier_completion", "mpi_sync_collective"),
		summed("sec", "mpi_rma_synchronization", "One-sided", "mpi_synchronization", "Time spent in MPI one-sided synchronization calls",
			"mpi_rma_sync_active", "mpi_rma_sync_passive"),
		timeMask(cMPISyncRMAActive, "mpi_rma_sync_active", "Active Target", "mpi_rma_synchronization", "Time spent in MPI one-sided active target synchronization calls"),
		timeMask(cMPISyncRMAPassive, "mpi_rma_sync_passive", "Passive Target", "mpi_rma_synchronization", "Time spent in MPI one-sided passive target synchronization calls"),
		summed("sec", "mpi_communication", "Communication", "mpi", "Time spent in MPI communication calls",
			"mpi_point2point", "mpi_collective", "mpi_rma_communication"),
		timeMask(cMPICommP2P, "mpi_point2point", "Point-to-point", "mpi_communication", "Time spent in MPI point-to-point communication"),
		copied("mpi_latesender", "mpi_point2point"),
		copied("mpi_latesender_wo", "mpi_latesender"),
		copied("mpi_lswo_different", "mpi_latesender_wo"),
		copied("mpi_lswo_same", "mpi_latesender_wo"),
		copied("mpi_latereceiver", "mpi_point2point"),
		timeMask(cMPICommCollective, "mpi_collective", "Collective", "mpi_communication", "Time spent in MPI collective communication"),
		copied("mpi_earlyreduce", "mpi_collective"),
		copied("mpi_earlyscan", "mpi_collective"),
		copied("mpi_latebroadcast", "mpi_collective"),
		copied("mpi_wait_nxn", "mpi_collective"),
		copied("mpi_nxn_completion", "mpi_collective"),
		timeMask(cMPICommRMA, "mpi_rma_communication", "One-sided", "mpi_communication", "Time spent in MPI one-sided communication"),
		summed("sec", "mpi_io", "File I/O", "mpi", "Time spent in MPI file I/O calls",
			"mpi_io_individual", "mpi_io_collective"),
		timeMask(cMPIFileIndividual, "mpi_io_individual", "Individual", "mpi_io", "Time spent in individual MPI file I/O calls"),
		timeMask(cMPIFileCollective, "mpi_io_collective", "Collective", "mpi_io", "Time spent in collective MPI file I/O calls"),
	),
	needing(hasOpenMP,
		// omp_management (Copied) is not computed: OpenMP here is only the
		// time spent in synchronization and flush calls.
		summed("sec", "omp_time", "OpenMP", "execution", "Time spent in the OpenMP run-time system and API",
			"omp_management", "omp_synchronization", "omp_flush"),
		summed("sec", "omp_synchronization", "Synchronization", "omp_time", "Time spent on OpenMP synchronization",
			"omp_barrier", "omp_critical", "omp_lock_api", "omp_ordered", "omp_taskwait"),
		summed("sec", "omp_barrier", "Barrier", "omp_synchronization", "Time spent in OpenMP barrier synchronization",
			"omp_ebarrier", "omp_ibarrier"),
		timeMask(cOMPSyncEBarrier, "omp_ebarrier", "Explicit", "omp_barrier", "Time spent in explicit OpenMP barrier synchronization"),
		timeMask(cOMPSyncIBarrier, "omp_ibarrier", "Implicit", "omp_barrier", "Time spent in implicit OpenMP barrier synchronization"),
		timeMask(cOMPSyncCritical, "omp_critical", "Critical", "omp_synchronization", "Time spent waiting at OpenMP critical sections"),
		timeMask(cOMPSyncLockAPI, "omp_lock_api", "Lock API", "omp_synchronization", "Time spent in OpenMP lock API calls"),
		timeMask(cOMPSyncOrdered, "omp_ordered", "Ordered", "omp_synchronization", "Time spent waiting at OpenMP ordered regions"),
		timeMask(cOMPSyncTaskwait, "omp_taskwait", "Task Wait", "omp_synchronization", "Time spent waiting in OpenMP taskwait directives"),
		timeMask(cOMPFlush, "omp_flush", "Flush", "omp_time", "Time spent in OpenMP flush directives"),
	),
	needing(hasPthread,
		summed("sec", "pthread_time", "POSIX threads", "execution", "Time spent in the POSIX threads API",
			"pthread_management", "pthread_synchronization"),
		timeMask(cPthreadMgmt, "pthread_management", "Management", "pthread_time", "Time spent in POSIX threads management"),
		summed("sec", "pthread_synchronization", "Synchronization", "pthread_time", "Time spent on Pthread synchronization",
			"pthread_lock_api", "pthread_conditional"),
		timeMask(cPthreadSyncMutex, "pthread_lock_api", "Mutex", "pthread_synchronization", "Time spent in POSIX threads mutex API calls"),
		timeMask(cPthreadSyncCondition, "pthread_conditional", "Condition", "pthread_synchronization", "Time spent in POSIX threads condition API calls"),
	),
	needing(hasOpenACC,
		timeMask(cOpenACC, "openacc_time", "OpenACC", "execution", "Time spent in the OpenACC run-time system and API"),
		timeMask(cOpenACCSetup, "openacc_setup", "Initialization and Finalization", "openacc_time", "Time needed to initialize and finalize OpenACC"),
		timeMask(cOpenACCComm, "openacc_comm", "Memory management", "openacc_time", "Time spent on memory management including data transfer from host to device and vice versa"),
		timeMask(cOpenACCSync, "openacc_sync", "Synchronization", "openacc_time", "Time spent on OpenACC synchronization"),
		timeMask(cOpenACCKernelLaunches, "openacc_kernel_launches", "Kernel launches", "openacc_time", "Time needed to launch OpenACC kernels"),
	),
	needing(hasOpenCL,
		withTerms(timeMask(cOpenCL, "opencl_time", "OpenCL", "execution", "Time spent in the OpenCL run-time system, API and on device"),
			"time", "-opencl_kernel_executions"),
		timeMask(cOpenCLSetup, "opencl_setup", "General management", "opencl_time", "Time needed for general OpenCL setup, e.g. initialization, device and event control, etc."),
		timeMask(cOpenCLComm, "opencl_comm", "Memory management", "opencl_time", "Time spent on memory management including data transfer from host to device and vice versa"),
		timeMask(cOpenCLSync, "opencl_sync", "Synchronization", "opencl_time", "Time spent on OpenCL synchronization"),
		timeMask(cOpenCLKernelLaunches, "opencl_kernel_launches", "Kernel launches", "opencl_time", "Time needed to launch OpenCL kernels"),
	),
	needing(hasCUDA,
		withTerms(timeMask(cCUDA, "cuda_time", "CUDA", "execution", "Time spent in the CUDA run-time system, API and on device"),
			"time", "-cuda_kernel_executions"),
		timeMask(cCUDASetup, "cuda_setup", "General management", "cuda_time", "Time needed for general CUDA setup, e.g. initialization, control of version, device, primary context, context, streams, events, occupancy, etc."),
		timeMask(cCUDAComm, "cuda_comm", "Memory management", "cuda_time", "Time spent on memory management including data transfer from host to device and vice versa. (Note: 'memset' operations are considered in 'Kernel launches')."),
		timeMask(cCUDASync, "cuda_sync", "Synchronization", "cuda_time", "Time spent on CUDA synchronization"),
		timeMask(cCUDAKernelLaunches, "cuda_kernel_launches", "Kernel launches", "cuda_time", "Time spent to launch CUDA kernels, including 'memset' operations."),
	),
	[]MetricDef{
		timeMask(cOverhead, "overhead", "Overhead", "time", "Time spent performing tasks related to trace generation"),
		copied("visits", ""),
	},
	needing(hasMPI,
		summed("occ", "syncs", "MPI synchronizations", "", "Number of MPI synchronization operations",
			"syncs_p2p", "syncs_coll", "syncs_rma"),
		summed("occ", "syncs_p2p", "Point-to-point", "syncs", "Number of MPI point-to-point synchronization operations",
			"syncs_send", "syncs_recv"),
		copied("syncs_send", "syncs_p2p"),
		copied("mpi_slr_count", "syncs_send"),
		copied("syncs_recv", "syncs_p2p"),
		copied("mpi_sls_count", "syncs_recv"),
		copied("mpi_slswo_count", "mpi_sls_count"),
		copied("syncs_coll", "syncs"),
		summed("occ", "syncs_rma", "One-sided", "syncs", "Number of MPI one-sided synchronization operations",
			"syncs_rma_active", "syncs_rma_passive"),
		visitMask(cMPISyncRMAActive, "syncs_rma_active", "Active target", "syncs_rma", "Number of MPI one-sided active target synchronization operations"),
		visitMask(cMPISyncRMAPassive, "syncs_rma_passive", "Passive target", "syncs_rma", "Number of MPI one-sided passive target synchronization operations"),
		summed("occ", "comms", "MPI communications", "", "Number of MPI communication operations",
			"comms_p2p", "comms_coll", "comms_rma"),
		summed("occ", "comms_p2p", "Point-to-point", "comms", "Number of MPI point-to-point communication operations",
			"comms_send", "comms_recv"),
		copied("comms_send", "comms_p2p"),
		copied("mpi_clr_count", "comms_send"),
		copied("comms_recv", "comms_p2p"),
		copied("mpi_cls_count", "comms_recv"),
		copied("mpi_clswo_count", "mpi_cls_count"),
		summed("occ", "comms_coll", "Collective", "comms", "Number of MPI collective communication operations",
			"comms_cxch", "comms_csrc", "comms_cdst"),
		copied("comms_cxch", "comms_coll"),
		copied("comms_csrc", "comms_coll"),
		copied("comms_cdst", "comms_coll"),
		summed("occ", "comms_rma", "One-sided", "comms", "Number of MPI one-sided communication operations",
			"comms_rma_puts", "comms_rma_gets", "comms_rma_atomics"),
		visitMask(cMPICommRMAPuts, "comms_rma_puts", "Puts", "comms_rma", "Number of MPI one-sided put communication operations"),
		visitMask(cMPICommRMAGets, "comms_rma_gets", "Gets", "comms_rma", "Number of MPI one-sided get communication operations"),
		visitMask(cMPICommRMAAtomics, "comms_rma_atomics", "Atomics", "comms_rma", "Number of MPI one-sided atomic communication operations"),
		summed("occ", "mpi_file_ops", "MPI file operations", "", "Number of MPI file operations",
			"mpi_file_iops", "mpi_file_cops"),
		visitMask(cMPIFileIops, "mpi_file_iops", "Individual", "mpi_file_ops", "Number of individual MPI file operations"),
		visitMask(cMPIFileIrops, "mpi_file_irops", "Reads", "mpi_file_iops", "Number of individual MPI file read operations"),
		visitMask(cMPIFileIwops, "mpi_file_iwops", "Writes", "mpi_file_iops", "Number of individual MPI file write operations"),
		visitMask(cMPIFileCops, "mpi_file_cops", "Collective", "mpi_file_ops", "Number of collective MPI file operations"),
		visitMask(cMPIFileCrops, "mpi_file_crops", "Reads", "mpi_file_cops", "Number of collective MPI file read operations"),
		visitMask(cMPIFileCwops, "mpi_file_cwops", "Writes", "mpi_file_cops", "Number of collective MPI file write operations"),
		// bytes_rma (bytes_put + bytes_get) is left out: one-sided byte
		// counts are not computed.
		summed("bytes", "bytes", "MPI bytes transferred", "", "Number of bytes transferred in MPI communication/synchronization operations",
			"bytes_p2p", "bytes_coll", "bytes_rma"),
		summed("bytes", "bytes_p2p", "Point-to-point", "bytes", "Number of bytes transferred in MPI point-to-point communication operations",
			"bytes_sent", "bytes_rcvd"),
		copied("bytes_sent", "bytes_p2p"),
		copied("bytes_rcvd", "bytes_p2p"),
		summed("bytes", "bytes_coll", "Collective", "bytes", "Number of bytes transferred in MPI collective communication operations",
			"bytes_cout", "bytes_cin"),
		copied("bytes_cout", "bytes_coll"),
		copied("bytes_cin", "bytes_coll"),
	),
	// The delay costs (root-cause analysis; no OpenMP delays).
	needing(hasMPI, computedBy(patterns.PartRootCause,
		summed("sec", "delay", "Delay costs", "", "Time by which ranks were behind their partners and so caused wait states", "delay_mpi"),
		summed("sec", "delay_mpi", "MPI", "delay", "Delay costs of MPI wait states", "delay_p2p", "delay_collective"),
		summed("sec", "delay_p2p", "Point-to-point", "delay_mpi", "Delay costs of MPI point-to-point wait states",
			"delay_latesender_aggregate", "delay_latereceiver_aggregate"),
		summed("sec", "delay_latesender_aggregate", "Late Sender", "delay_p2p", "Delay costs of Late Sender wait states",
			"delay_latesender", "delay_latesender_longterm"),
		copied("delay_latesender", "delay_latesender_aggregate"),
		copied("delay_latesender_longterm", "delay_latesender_aggregate"),
		summed("sec", "delay_latereceiver_aggregate", "Late Receiver", "delay_p2p", "Delay costs of Late Receiver wait states",
			"delay_latereceiver", "delay_latereceiver_longterm"),
		copied("delay_latereceiver", "delay_latereceiver_aggregate"),
		copied("delay_latereceiver_longterm", "delay_latereceiver_aggregate"),
		summed("sec", "delay_collective", "Collective", "delay_mpi", "Delay costs of MPI collective wait states",
			"delay_barrier_aggregate", "delay_n21_aggregate", "delay_12n_aggregate", "delay_n2n_aggregate"),
		summed("sec", "delay_barrier_aggregate", "Wait at Barrier", "delay_collective", "Delay costs of wait states at barriers",
			"delay_barrier", "delay_barrier_longterm"),
		copied("delay_barrier", "delay_barrier_aggregate"),
		copied("delay_barrier_longterm", "delay_barrier_aggregate"),
		summed("sec", "delay_n21_aggregate", "Early Reduce", "delay_collective", "Delay costs of wait states in N-to-1 operations",
			"delay_n21", "delay_n21_longterm"),
		copied("delay_n21", "delay_n21_aggregate"),
		copied("delay_n21_longterm", "delay_n21_aggregate"),
		summed("sec", "delay_12n_aggregate", "Late Broadcast", "delay_collective", "Delay costs of wait states in 1-to-N operations",
			"delay_12n", "delay_12n_longterm"),
		copied("delay_12n", "delay_12n_aggregate"),
		copied("delay_12n_longterm", "delay_12n_aggregate"),
		summed("sec", "delay_n2n_aggregate", "Wait at N x N", "delay_collective", "Delay costs of wait states in N-to-N operations",
			"delay_n2n", "delay_n2n_longterm"),
		copied("delay_n2n", "delay_n2n_aggregate"),
		copied("delay_n2n_longterm", "delay_n2n_aggregate"),
	)...),
	// Wait-state propagation (root-cause analysis).
	needing(hasMPI, computedBy(patterns.PartRootCause,
		summed("sec", "waitstates_propagating_vs_terminal", "MPI p2p wait states (propagating vs. terminal)", "",
			"Point-to-point wait states split into the parts that caused further wait states and the rest",
			"mpi_wait_propagating", "mpi_wait_terminal"),
		summed("sec", "mpi_wait_propagating", "Propagating wait states", "waitstates_propagating_vs_terminal",
			"Parts of point-to-point wait states that caused further wait states", "mpi_wait_propagating_ls", "mpi_wait_propagating_lr"),
		copied("mpi_wait_propagating_ls", "mpi_wait_propagating"),
		copied("mpi_wait_propagating_lr", "mpi_wait_propagating"),
		summed("sec", "mpi_wait_terminal", "Terminal wait states", "waitstates_propagating_vs_terminal",
			"Parts of point-to-point wait states that caused no further wait states", "mpi_wait_terminal_ls", "mpi_wait_terminal_lr"),
		summed("sec", "mpi_wait_terminal_ls", "Late Sender", "mpi_wait_terminal",
			"Parts of Late Sender wait states that caused no further wait states", "mpi_latesender", "-mpi_wait_propagating_ls"),
		summed("sec", "mpi_wait_terminal_lr", "Late Receiver", "mpi_wait_terminal",
			"Parts of Late Receiver wait states that caused no further wait states", "mpi_latereceiver", "-mpi_wait_propagating_lr"),
		summed("sec", "waitstates_direct_vs_indirect", "MPI p2p wait states (direct vs. indirect)", "",
			"Point-to-point wait states split into the parts the partner caused directly and through its own waits",
			"mpi_wait_direct", "mpi_wait_indirect"),
		summed("sec", "mpi_wait_direct", "Direct wait states", "waitstates_direct_vs_indirect",
			"Parts of point-to-point wait states that the partner caused directly", "mpi_wait_direct_latesender", "mpi_wait_direct_latereceiver"),
		summed("sec", "mpi_wait_direct_latesender", "Late Sender", "mpi_wait_direct",
			"Parts of Late Sender wait states that the sender caused directly", "mpi_latesender", "-mpi_wait_indirect_latesender"),
		summed("sec", "mpi_wait_direct_latereceiver", "Late Receiver", "mpi_wait_direct",
			"Parts of Late Receiver wait states that the receiver caused directly", "mpi_latereceiver", "-mpi_wait_indirect_latereceiver"),
		summed("sec", "mpi_wait_indirect", "Indirect wait states", "waitstates_direct_vs_indirect",
			"Parts of point-to-point wait states that the partner caused through its own waits",
			"mpi_wait_indirect_latesender", "mpi_wait_indirect_latereceiver"),
		copied("mpi_wait_indirect_latesender", "mpi_wait_indirect"),
		copied("mpi_wait_indirect_latereceiver", "mpi_wait_indirect"),
	)...),
	needing(hasMPI, computedBy(patterns.PartCriticalPath,
		copied("critical_path", ""),
		formula("critical_path_imbalance", "Imbalance", "critical_path",
			"Critical-path time of call paths that take longer on the critical path than on average over the locations",
			waitFreeTime...),
		summed("sec", "performance_impact", "Performance impact", "", "Time of the critical path's activities and imbalance, and of the activities off it",
			"performance_impact_criticalpath", "non_critical_path_activities"),
		summed("sec", "performance_impact_criticalpath", "Critical-path activities", "performance_impact", "Time of the activities on the critical path and of its imbalance",
			"critical_path_activities", "critical_imbalance_impact"),
		copied("critical_path_activities", "performance_impact_criticalpath"),
		copied("critical_imbalance_impact", "performance_impact_criticalpath"),
		summed("sec", "intra_partition_imbalance", "Intra-partition imbalance", "critical_imbalance_impact", "Imbalance impact of critical-path call paths that every rank executes",
			"critical_imbalance_impact", "-inter_partition_imbalance"),
		copied("inter_partition_imbalance", "critical_imbalance_impact"),
		copied("non_critical_path_activities", "performance_impact"),
	)...),
	[]MetricDef{
		remapped("imbalance", "Computational imbalance", "", "Computational load imbalance heuristic (see Online Description for details)"),
		remapped("imbalance_above", "Overload", "imbalance", "Computational load imbalance heuristic (overload)"),
		remapped("imbalance_above_single", "Single participant", "imbalance_above", "Computational load imbalance heuristic (single participant)"),
		remapped("imbalance_below", "Underload", "imbalance", "Computational load imbalance heuristic (underload)"),
		remapped("imbalance_below_bypass", "Non-participation", "imbalance_below", "Computational load imbalance heuristic (non-participation)"),
		remapped("imbalance_below_singularity", "Singularity", "imbalance_below_bypass", "Computational load imbalance heuristic (non-participation in singularity)"),
	},
)

// withTerms replaces the base values of a Masked metric.
func withTerms(m MetricDef, terms ...string) MetricDef {
	m.terms = terms
	return m
}

// metricIndex maps unique names to positions in metricTree.
var metricIndex = func() map[string]int {
	idx := make(map[string]int, len(metricTree))
	for i, m := range metricTree {
		idx[m.Unique] = i
	}
	return idx
}()

// MetricTree returns every metric of the derived tree this package can
// produce, in report (preorder) order, whether or not it exists for a
// particular trace (see Derive).
func MetricTree() []MetricDef { return slices.Clone(metricTree) }

// LookupMetric returns the derived-tree metric with the given unique name.
func LookupMetric(unique string) (MetricDef, bool) {
	i, ok := metricIndex[unique]
	if !ok {
		return MetricDef{}, false
	}
	return metricTree[i], true
}
