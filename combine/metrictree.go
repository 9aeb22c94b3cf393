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
	// computational imbalance heuristic and the OpenMP idle threads.
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
	// Own marks a metric of scout's own (patterns.Metric.Own), which the
	// reference's tree does not have.
	Own bool

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
	d.part, d.Own = m.Part, m.Own
	return d
}

// timeMask is a Masked metric over the execution time: the time less the
// idle-thread time the remapper adds for OpenMP worker threads
// (omp_idle_threads, zero without OpenMP).
func timeMask(mask class, unique, display, parent, descr string) MetricDef {
	m := metric(Masked, "sec", unique, display, parent, descr)
	m.mask, m.terms = mask, []string{"time", "-omp_idle_threads"}
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
// the one-sided ones, count as zero) and less the idle-thread time, the
// OpenMP team management time and the whole time in ordered regions.
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
// metrics of Scalasca 2.6's scout.spec that this analysis can produce,
// and the metrics of scout's own (MetricDef.Own: the wavefront refill
// refinements of Late Sender) after their siblings from the reference.
// Left out are the metrics computed by analyses scout does not run yet
// (one-sided and Pthread wait states) and the sums made only of them.
var metricTree = slices.Concat(
	[]MetricDef{
		copied("time", ""),
		timeMask(cExecution, "execution", "Execution", "time", "Time the locations spent running the program, leaving out threads that were allocated but idle."),
		summed("sec", "comp", "Computation", "execution", "Execution time outside MPI and the threading and accelerator run-time systems, that is, time in the application's own code.",
			"execution", "-mpi", "-omp_time", "-pthread_time", "-openacc_time", "-opencl_time", "-cuda_time"),
	},
	needing(hasOpenCLKernels,
		timeMask(cOpenCLKernelExecutions, "opencl_kernel_executions", "OpenCL kernels", "comp", "Device time taken by OpenCL kernels while they ran.")),
	needing(hasCUDAKernels,
		timeMask(cCUDAKernelExecutions, "cuda_kernel_executions", "CUDA kernels", "comp", "Device time taken by CUDA kernels while they ran.")),
	needing(hasMPI,
		timeMask(cMPI, "mpi", "MPI", "execution", "Time the locations spent inside any MPI library call."),
		summed("sec", "mpi_management", "Management", "mpi", "Time in MPI calls that set up or tear down the environment, communicators, files and windows rather than move data.",
			"mpi_init_exit", "mpi_mgmt_comm", "mpi_mgmt_file", "mpi_mgmt_win"),
		timeMask(cMPIMgmtStartup, "mpi_init_exit", "Init/Finalize", "mpi_management", "Time in the MPI calls that start up, shut down or query the state of the MPI environment."),
		copied("mpi_init_completion", "mpi_init_exit"),
		copied("mpi_finalize_wait", "mpi_init_exit"),
		timeMask(cMPIMgmtComm, "mpi_mgmt_comm", "Communicator", "mpi_management", "Time in MPI calls that create, split, query or free communicators and process topologies."),
		timeMask(cMPIMgmtFile, "mpi_mgmt_file", "File", "mpi_management", "Time in MPI calls that open, close, seek in or configure files without reading or writing data."),
		timeMask(cMPIMgmtWin, "mpi_mgmt_win", "Window", "mpi_management", "Time in MPI calls that create, attach memory to or free one-sided communication windows."),
		summed("sec", "mpi_synchronization", "Synchronization", "mpi", "Time in MPI calls whose only purpose is to synchronize ranks, namely barriers and one-sided epoch control.",
			"mpi_sync_collective", "mpi_rma_synchronization"),
		timeMask(cMPISyncCollective, "mpi_sync_collective", "Collective", "mpi_synchronization", "Duration of MPI barrier calls, covering both waiting and completion."),
		copied("mpi_barrier_wait", "mpi_sync_collective"),
		copied("mpi_barrier_completion", "mpi_sync_collective"),
		summed("sec", "mpi_rma_synchronization", "One-sided", "mpi_synchronization", "Time in MPI calls that open, close or synchronize one-sided access and exposure epochs.",
			"mpi_rma_sync_active", "mpi_rma_sync_passive"),
		timeMask(cMPISyncRMAActive, "mpi_rma_sync_active", "Active Target", "mpi_rma_synchronization", "Time in active-target epoch control calls such as fences, post, start, complete, wait and their tests."),
		timeMask(cMPISyncRMAPassive, "mpi_rma_sync_passive", "Passive Target", "mpi_rma_synchronization", "Time in passive-target calls that lock, unlock, flush or sync a window."),
		summed("sec", "mpi_communication", "Communication", "mpi", "Time in MPI calls that move data, whether point-to-point, collective or one-sided.",
			"mpi_point2point", "mpi_collective", "mpi_rma_communication"),
		timeMask(cMPICommP2P, "mpi_point2point", "Point-to-point", "mpi_communication", "Time in MPI send and receive calls and in the test and wait calls that complete them."),
		copied("mpi_latesender", "mpi_point2point"),
		copied("mpi_latesender_wo", "mpi_latesender"),
		copied("mpi_lswo_different", "mpi_latesender_wo"),
		copied("mpi_lswo_same", "mpi_latesender_wo"),
	),
	// Wavefront refill (scout's own metrics): on a 2-D process grid.
	needing(hasGrid2D,
		copied("mpi_latesender_refill_nw", "mpi_latesender"),
		copied("mpi_latesender_refill_ne", "mpi_latesender"),
		copied("mpi_latesender_refill_sw", "mpi_latesender"),
		copied("mpi_latesender_refill_se", "mpi_latesender"),
	),
	// on a 3-D process grid, by octant corner
	needing(hasGrid3D,
		copied("mpi_latesender_refill_nwf", "mpi_latesender"),
		copied("mpi_latesender_refill_nef", "mpi_latesender"),
		copied("mpi_latesender_refill_swf", "mpi_latesender"),
		copied("mpi_latesender_refill_sef", "mpi_latesender"),
		copied("mpi_latesender_refill_nwb", "mpi_latesender"),
		copied("mpi_latesender_refill_neb", "mpi_latesender"),
		copied("mpi_latesender_refill_swb", "mpi_latesender"),
		copied("mpi_latesender_refill_seb", "mpi_latesender"),
	),
	needing(hasMPI,
		copied("mpi_latereceiver", "mpi_point2point"),
		timeMask(cMPICommCollective, "mpi_collective", "Collective", "mpi_communication", "Time in MPI collective calls that exchange data, such as broadcasts, reductions and all-to-all operations."),
		copied("mpi_earlyreduce", "mpi_collective"),
		copied("mpi_earlyscan", "mpi_collective"),
		copied("mpi_latebroadcast", "mpi_collective"),
		copied("mpi_wait_nxn", "mpi_collective"),
		copied("mpi_nxn_completion", "mpi_collective"),
		timeMask(cMPICommRMA, "mpi_rma_communication", "One-sided", "mpi_communication", "Time in MPI put, get and atomic one-sided data-access calls."),
		summed("sec", "mpi_io", "File I/O", "mpi", "Time in MPI calls that read or write file data.",
			"mpi_io_individual", "mpi_io_collective"),
		timeMask(cMPIFileIndividual, "mpi_io_individual", "Individual", "mpi_io", "Time in MPI file reads and writes that a rank issues on its own."),
		timeMask(cMPIFileCollective, "mpi_io_collective", "Collective", "mpi_io", "Time in MPI file reads and writes that all ranks sharing the file issue together."),
	),
	needing(hasOpenMP,
		summed("sec", "omp_time", "OpenMP", "execution", "Time in the OpenMP runtime for thread-team management, synchronization constructs and memory flushes.",
			"omp_management", "omp_synchronization", "omp_flush"),
		copied("omp_management", "omp_time"),
		copied("omp_fork", "omp_management"),
		summed("sec", "omp_synchronization", "Synchronization", "omp_time", "Time OpenMP threads spend in barriers, critical sections, locks, ordered regions and task waits.",
			"omp_barrier", "omp_critical", "omp_lock_api", "omp_ordered", "omp_taskwait"),
		summed("sec", "omp_barrier", "Barrier", "omp_synchronization", "Time OpenMP threads spend in explicit and implicit barriers together.",
			"omp_ebarrier", "omp_ibarrier"),
		timeMask(cOMPSyncEBarrier, "omp_ebarrier", "Explicit", "omp_barrier", "Time OpenMP threads spend in barriers written explicitly in the source code."),
		copied("omp_ebarrier_wait", "omp_ebarrier"),
		timeMask(cOMPSyncIBarrier, "omp_ibarrier", "Implicit", "omp_barrier", "Time OpenMP threads spend in the barriers implied at the end of worksharing and parallel constructs."),
		copied("omp_ibarrier_wait", "omp_ibarrier"),
		timeMask(cOMPSyncCritical, "omp_critical", "Critical", "omp_synchronization", "Time OpenMP threads spend entering and leaving critical sections and atomic updates."),
		copied("omp_lock_contention_critical", "omp_critical"),
		timeMask(cOMPSyncLockAPI, "omp_lock_api", "Lock API", "omp_synchronization", "Time in the OpenMP library routines that set, test and unset locks."),
		copied("omp_lock_contention_api", "omp_lock_api"),
		timeMask(cOMPSyncOrdered, "omp_ordered", "Ordered", "omp_synchronization", "Time OpenMP threads spend in the ordered parts of loops, which run one iteration at a time."),
		timeMask(cOMPSyncTaskwait, "omp_taskwait", "Task Wait", "omp_synchronization", "Time OpenMP threads block in taskwait constructs until their child tasks finish."),
		timeMask(cOMPFlush, "omp_flush", "Flush", "omp_time", "Time OpenMP threads spend making their view of memory consistent in flush constructs."),
	),
	needing(hasPthread,
		summed("sec", "pthread_time", "POSIX threads", "execution", "Duration of all calls into the POSIX threads library.",
			"pthread_management", "pthread_synchronization"),
		timeMask(cPthreadMgmt, "pthread_management", "Management", "pthread_time", "Time in POSIX threads calls that create, join, detach, cancel or end threads."),
		summed("sec", "pthread_synchronization", "Synchronization", "pthread_time", "Time in POSIX threads mutex and condition-variable calls together.",
			"pthread_lock_api", "pthread_conditional"),
		timeMask(cPthreadSyncMutex, "pthread_lock_api", "Mutex", "pthread_synchronization", "Time in calls that initialize, lock, unlock or destroy POSIX mutexes."),
		timeMask(cPthreadSyncCondition, "pthread_conditional", "Condition", "pthread_synchronization", "Time in calls that wait on, signal or broadcast POSIX condition variables."),
	),
	needing(hasOpenACC,
		timeMask(cOpenACC, "openacc_time", "OpenACC", "execution", "Time the host spends in OpenACC directives and runtime library calls."),
		timeMask(cOpenACCSetup, "openacc_setup", "Initialization and Finalization", "openacc_time", "Time in OpenACC calls that start up or shut down the accelerator runtime."),
		timeMask(cOpenACCComm, "openacc_comm", "Memory management", "openacc_time", "Time in OpenACC calls that allocate or free device memory or copy data between host and device."),
		timeMask(cOpenACCSync, "openacc_sync", "Synchronization", "openacc_time", "Time in OpenACC calls that wait for asynchronous device work to finish."),
		timeMask(cOpenACCKernelLaunches, "openacc_kernel_launches", "Kernel launches", "openacc_time", "Time the host spends starting OpenACC compute kernels."),
	),
	needing(hasOpenCL,
		withTerms(timeMask(cOpenCL, "opencl_time", "OpenCL", "execution", "Time in OpenCL API calls and device activity other than kernel execution."),
			"time", "-opencl_kernel_executions", "-omp_idle_threads"),
		timeMask(cOpenCLSetup, "opencl_setup", "General management", "opencl_time", "Time in OpenCL calls for platform, device, context, queue and event handling that neither move data nor launch kernels."),
		timeMask(cOpenCLComm, "opencl_comm", "Memory management", "opencl_time", "Time in OpenCL calls that allocate or free buffers or copy data between host and device."),
		timeMask(cOpenCLSync, "opencl_sync", "Synchronization", "opencl_time", "Time in OpenCL calls that wait for queued commands or events to finish."),
		timeMask(cOpenCLKernelLaunches, "opencl_kernel_launches", "Kernel launches", "opencl_time", "Time the host spends enqueueing OpenCL kernels."),
	),
	needing(hasCUDA,
		withTerms(timeMask(cCUDA, "cuda_time", "CUDA", "execution", "Time in CUDA API calls and device activity other than kernel execution."),
			"time", "-cuda_kernel_executions", "-omp_idle_threads"),
		timeMask(cCUDASetup, "cuda_setup", "General management", "cuda_time", "Time in CUDA calls for device, context, stream, event and other runtime handling that neither move data nor launch kernels."),
		timeMask(cCUDAComm, "cuda_comm", "Memory management", "cuda_time", "Time in CUDA calls that allocate or free memory or copy data between host and device, memset calls excepted."),
		timeMask(cCUDASync, "cuda_sync", "Synchronization", "cuda_time", "Time in CUDA calls that wait for streams, events or the whole device to finish."),
		timeMask(cCUDAKernelLaunches, "cuda_kernel_launches", "Kernel launches", "cuda_time", "Time the host spends starting CUDA kernels, memset calls included."),
	),
	[]MetricDef{
		timeMask(cOverhead, "overhead", "Overhead", "time", "Time the measurement system itself used, such as for flushing trace buffers to disk."),
	},
	needing(hasOpenMP,
		remapped("omp_idle_threads", "Idle threads", "time", "Time OpenMP worker threads are reserved but have nothing to run, outside parallel regions or left out of them."),
		remapped("omp_limited_parallelism", "Limited parallelism", "omp_idle_threads", "Part of the idle worker-thread time at OpenMP constructs the master thread ran without a full team, such as lock set-up calls outside parallel regions."),
	),
	[]MetricDef{
		copied("visits", ""),
	},
	needing(hasMPI,
		summed("occ", "syncs", "MPI synchronizations", "", "Count of MPI operations that synchronized ranks without moving data.",
			"syncs_p2p", "syncs_coll", "syncs_rma"),
		summed("occ", "syncs_p2p", "Point-to-point", "syncs", "Count of zero-byte point-to-point sends and receives.",
			"syncs_send", "syncs_recv"),
		copied("syncs_send", "syncs_p2p"),
		copied("mpi_slr_count", "syncs_send"),
		copied("syncs_recv", "syncs_p2p"),
		copied("mpi_sls_count", "syncs_recv"),
		copied("mpi_slswo_count", "mpi_sls_count"),
		copied("syncs_coll", "syncs"),
		summed("occ", "syncs_rma", "One-sided", "syncs", "Count of MPI calls that control one-sided access and exposure epochs.",
			"syncs_rma_active", "syncs_rma_passive"),
		visitMask(cMPISyncRMAActive, "syncs_rma_active", "Active target", "syncs_rma", "Count of active-target one-sided epoch control calls."),
		visitMask(cMPISyncRMAPassive, "syncs_rma_passive", "Passive target", "syncs_rma", "Count of passive-target one-sided lock, unlock, flush and sync calls."),
		summed("occ", "comms", "MPI communications", "", "Count of MPI operations that transferred data.",
			"comms_p2p", "comms_coll", "comms_rma"),
		summed("occ", "comms_p2p", "Point-to-point", "comms", "Count of point-to-point sends and receives that carried a payload.",
			"comms_send", "comms_recv"),
		copied("comms_send", "comms_p2p"),
		copied("mpi_clr_count", "comms_send"),
		copied("comms_recv", "comms_p2p"),
		copied("mpi_cls_count", "comms_recv"),
		copied("mpi_clswo_count", "mpi_cls_count"),
		summed("occ", "comms_coll", "Collective", "comms", "Count of MPI collective calls in which a rank contributed or obtained data.",
			"comms_cxch", "comms_csrc", "comms_cdst"),
		copied("comms_cxch", "comms_coll"),
		copied("comms_csrc", "comms_coll"),
		copied("comms_cdst", "comms_coll"),
		summed("occ", "comms_rma", "One-sided", "comms", "Count of one-sided put, get and atomic calls.",
			"comms_rma_puts", "comms_rma_gets", "comms_rma_atomics"),
		visitMask(cMPICommRMAPuts, "comms_rma_puts", "Puts", "comms_rma", "Count of one-sided calls that write data into a remote window."),
		visitMask(cMPICommRMAGets, "comms_rma_gets", "Gets", "comms_rma", "Count of one-sided calls that read data from a remote window."),
		visitMask(cMPICommRMAAtomics, "comms_rma_atomics", "Atomics", "comms_rma", "Count of one-sided read-modify-write and accumulate calls."),
		summed("occ", "mpi_file_ops", "MPI file operations", "", "Count of MPI calls that read, write or otherwise act on files.",
			"mpi_file_iops", "mpi_file_cops"),
		visitMask(cMPIFileIops, "mpi_file_iops", "Individual", "mpi_file_ops", "Count of MPI file calls a rank makes on its own rather than together with the other ranks."),
		visitMask(cMPIFileIrops, "mpi_file_irops", "Reads", "mpi_file_iops", "Count of MPI file reads a rank makes on its own."),
		visitMask(cMPIFileIwops, "mpi_file_iwops", "Writes", "mpi_file_iops", "Count of MPI file writes a rank makes on its own."),
		visitMask(cMPIFileCops, "mpi_file_cops", "Collective", "mpi_file_ops", "Count of MPI file calls that all ranks sharing the file make together."),
		visitMask(cMPIFileCrops, "mpi_file_crops", "Reads", "mpi_file_cops", "Count of MPI file reads that the ranks sharing the file perform together."),
		visitMask(cMPIFileCwops, "mpi_file_cwops", "Writes", "mpi_file_cops", "Count of MPI file writes that the ranks sharing the file perform together."),
		// bytes_rma (bytes_put + bytes_get) is left out: one-sided byte
		// counts are not computed.
		summed("bytes", "bytes", "MPI bytes transferred", "", "Payload volume, in bytes, moved by MPI data transfers of every kind.",
			"bytes_p2p", "bytes_coll", "bytes_rma"),
		summed("bytes", "bytes_p2p", "Point-to-point", "bytes", "Payload volume, in bytes, that a rank sent and received through point-to-point messages.",
			"bytes_sent", "bytes_rcvd"),
		copied("bytes_sent", "bytes_p2p"),
		copied("bytes_rcvd", "bytes_p2p"),
		summed("bytes", "bytes_coll", "Collective", "bytes", "Payload volume, in bytes, that a rank contributed to and obtained from MPI collective calls.",
			"bytes_cout", "bytes_cin"),
		copied("bytes_cout", "bytes_coll"),
		copied("bytes_cin", "bytes_coll"),
	),
	// The delay costs (root-cause analysis).
	needing(hasMPI|hasOpenMP, computedBy(patterns.PartRootCause,
		summed("sec", "delay", "Delay costs", "", "Time by which ranks or threads lagged behind their partners, charged to the call paths where the lag built up, as far as it made others wait.", "delay_mpi", "delay_omp"),
	)...),
	needing(hasMPI, computedBy(patterns.PartRootCause,
		summed("sec", "delay_mpi", "MPI", "delay", "Part of the delay costs that led to waiting inside MPI calls.", "delay_p2p", "delay_collective"),
		summed("sec", "delay_p2p", "Point-to-point", "delay_mpi", "Part of the MPI delay costs that made a send or receive partner wait.",
			"delay_latesender_aggregate", "delay_latereceiver_aggregate"),
		summed("sec", "delay_latesender_aggregate", "Late Sender", "delay_p2p", "Delay costs charged to senders for the Late Sender waits of their receivers.",
			"delay_latesender", "delay_latesender_longterm"),
		copied("delay_latesender", "delay_latesender_aggregate"),
		copied("delay_latesender_longterm", "delay_latesender_aggregate"),
		summed("sec", "delay_latereceiver_aggregate", "Late Receiver", "delay_p2p", "Delay costs charged to receivers for the Late Receiver waits of their senders.",
			"delay_latereceiver", "delay_latereceiver_longterm"),
		copied("delay_latereceiver", "delay_latereceiver_aggregate"),
		copied("delay_latereceiver_longterm", "delay_latereceiver_aggregate"),
		summed("sec", "delay_collective", "Collective", "delay_mpi", "Part of the MPI delay costs that made other members of a barrier or collective operation wait.",
			"delay_barrier_aggregate", "delay_n21_aggregate", "delay_12n_aggregate", "delay_n2n_aggregate"),
		summed("sec", "delay_barrier_aggregate", "Wait at Barrier", "delay_collective", "Delay costs charged to the last rank to reach a barrier for the waits of the others.",
			"delay_barrier", "delay_barrier_longterm"),
		copied("delay_barrier", "delay_barrier_aggregate"),
		copied("delay_barrier_longterm", "delay_barrier_aggregate"),
		summed("sec", "delay_n21_aggregate", "Early Reduce", "delay_collective", "Delay costs charged to the late senders of an N-to-1 operation for the root's wait.",
			"delay_n21", "delay_n21_longterm"),
		copied("delay_n21", "delay_n21_aggregate"),
		copied("delay_n21_longterm", "delay_n21_aggregate"),
		summed("sec", "delay_12n_aggregate", "Late Broadcast", "delay_collective", "Delay costs charged to the late root of a 1-to-N operation for the waits of the other ranks.",
			"delay_12n", "delay_12n_longterm"),
		copied("delay_12n", "delay_12n_aggregate"),
		copied("delay_12n_longterm", "delay_12n_aggregate"),
		summed("sec", "delay_n2n_aggregate", "Wait at N x N", "delay_collective", "Delay costs charged to the last rank to join an N-to-N operation for the waits of the others.",
			"delay_n2n", "delay_n2n_longterm"),
		copied("delay_n2n", "delay_n2n_aggregate"),
		copied("delay_n2n_longterm", "delay_n2n_aggregate"),
	)...),
	needing(hasOpenMP, computedBy(patterns.PartRootCause,
		summed("sec", "delay_omp", "OpenMP", "delay", "Part of the delay costs that made OpenMP threads wait at barriers or sit idle.",
			"delay_ompbarrier_aggregate", "delay_ompidle_aggregate"),
		summed("sec", "delay_ompbarrier_aggregate", "Wait at Barrier", "delay_omp", "Delay costs charged to the last thread of a team to reach an OpenMP barrier for the waits of the others.",
			"delay_ompbarrier", "delay_ompbarrier_longterm"),
		copied("delay_ompbarrier", "delay_ompbarrier_aggregate"),
		copied("delay_ompbarrier_longterm", "delay_ompbarrier_aggregate"),
		summed("sec", "delay_ompidle_aggregate", "Idleness delay costs", "delay_omp", "Delay costs charged to serial work of the master thread for the time its worker threads spend idle.",
			"delay_ompidle", "delay_ompidle_longterm"),
		copied("delay_ompidle", "delay_ompidle_aggregate"),
		copied("delay_ompidle_longterm", "delay_ompidle_aggregate"),
	)...),
	// Wait-state propagation (root-cause analysis).
	needing(hasMPI, computedBy(patterns.PartRootCause,
		summed("sec", "waitstates_propagating_vs_terminal", "MPI p2p wait states (propagating vs. terminal)", "",
			"Point-to-point idle time divided into the share that went on to make other ranks wait and the share that did not.",
			"mpi_wait_propagating", "mpi_wait_terminal"),
		summed("sec", "mpi_wait_propagating", "Propagating wait states", "waitstates_propagating_vs_terminal",
			"Share of point-to-point idle time that held a rank up so long that partners of later messages had to wait in turn.", "mpi_wait_propagating_ls", "mpi_wait_propagating_lr"),
		copied("mpi_wait_propagating_ls", "mpi_wait_propagating"),
		copied("mpi_wait_propagating_lr", "mpi_wait_propagating"),
		summed("sec", "mpi_wait_terminal", "Terminal wait states", "waitstates_propagating_vs_terminal",
			"Share of point-to-point idle time that made no other rank wait.", "mpi_wait_terminal_ls", "mpi_wait_terminal_lr"),
		summed("sec", "mpi_wait_terminal_ls", "Late Sender", "mpi_wait_terminal",
			"Share of Late Sender idle time that made no other rank wait.", "mpi_latesender", "-mpi_wait_propagating_ls"),
		summed("sec", "mpi_wait_terminal_lr", "Late Receiver", "mpi_wait_terminal",
			"Share of Late Receiver idle time that made no other rank wait.", "mpi_latereceiver", "-mpi_wait_propagating_lr"),
		summed("sec", "waitstates_direct_vs_indirect", "MPI p2p wait states (direct vs. indirect)", "",
			"Point-to-point idle time divided into the share caused by the partner's own work and the share passed on from the partner's own waiting.",
			"mpi_wait_direct", "mpi_wait_indirect"),
		summed("sec", "mpi_wait_direct", "Direct wait states", "waitstates_direct_vs_indirect",
			"Share of point-to-point idle time caused by the partner being busy with other work.", "mpi_wait_direct_latesender", "mpi_wait_direct_latereceiver"),
		summed("sec", "mpi_wait_direct_latesender", "Late Sender", "mpi_wait_direct",
			"Share of Late Sender idle time caused by the sender being busy with other work before it sent.", "mpi_latesender", "-mpi_wait_indirect_latesender"),
		summed("sec", "mpi_wait_direct_latereceiver", "Late Receiver", "mpi_wait_direct",
			"Share of Late Receiver idle time caused by the receiver being busy with other work before it posted the receive.", "mpi_latereceiver", "-mpi_wait_indirect_latereceiver"),
		summed("sec", "mpi_wait_indirect", "Indirect wait states", "waitstates_direct_vs_indirect",
			"Share of point-to-point idle time passed on from waits that the partner itself had suffered earlier.",
			"mpi_wait_indirect_latesender", "mpi_wait_indirect_latereceiver"),
		copied("mpi_wait_indirect_latesender", "mpi_wait_indirect"),
		copied("mpi_wait_indirect_latereceiver", "mpi_wait_indirect"),
	)...),
	needing(hasMPI|hasOpenMP, computedBy(patterns.PartCriticalPath,
		copied("critical_path", ""),
		formula("critical_path_imbalance", "Imbalance", "critical_path",
			"Part of a call path's critical-path time beyond its average wait-free time per location, shared among the ranks by their part of the path.",
			waitFreeTime...),
		summed("sec", "performance_impact", "Performance impact", "", "All wait-free and waiting time split by its effect on run time: activities and imbalance on the critical path plus activities off it.",
			"performance_impact_criticalpath", "non_critical_path_activities"),
		summed("sec", "performance_impact_criticalpath", "Critical-path activities", "performance_impact", "Time attributable to the critical path, as the sum of its activities' own cost and of the imbalance that makes other ranks wait.",
			"critical_path_activities", "critical_imbalance_impact"),
		copied("critical_path_activities", "performance_impact_criticalpath"),
		copied("critical_imbalance_impact", "performance_impact_criticalpath"),
		summed("sec", "intra_partition_imbalance", "Intra-partition imbalance", "critical_imbalance_impact", "Imbalance impact of critical-path call paths that every rank executes, so that ranks doing the same work differ in speed.",
			"critical_imbalance_impact", "-inter_partition_imbalance"),
		copied("inter_partition_imbalance", "critical_imbalance_impact"),
		copied("non_critical_path_activities", "performance_impact"),
	)...),
	[]MetricDef{
		remapped("imbalance", "Computational imbalance", "", "Deviation of a location's exclusive computation time in a call path from the average over all locations, as a heuristic for load imbalance."),
		remapped("imbalance_above", "Overload", "imbalance", "Excess of a location's exclusive computation time in a call path over the average of all locations."),
		remapped("imbalance_above_single", "Single participant", "imbalance_above", "Excess charged to the sole location that executed a call path, the average time there multiplied by the number of other locations."),
		remapped("imbalance_below", "Underload", "imbalance", "Shortfall of a location's exclusive computation time in a call path below the average of all locations."),
		remapped("imbalance_below_bypass", "Non-participation", "imbalance_below", "Shortfall of a location that never entered a call path some others executed, equal to the average time there."),
		remapped("imbalance_below_singularity", "Singularity", "imbalance_below_bypass", "Shortfall of a location that skipped a call path only one location executed, equal to the average time there."),
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
