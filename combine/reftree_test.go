package combine

import (
	"strings"
	"testing"

	"scout/internal/tracetest"
)

// referenceTree is the user-facing metric tree of Scalasca 2.6's report
// (its remapping specification, summarized in scout-patterns.md §1.2), in
// report order. Each line names a parent ("-" for a root metric) and,
// after the colon, children of it in order; a child's unit is "sec"
// unless it carries a suffix ":occ" or ":bytes". The reference's
// expected/trace.csv files list values only, so the places of their
// metrics are checked against this table.
const referenceTree = `
-: time
time: execution
execution: comp
comp: opencl_kernel_executions cuda_kernel_executions
execution: mpi
mpi: mpi_management
mpi_management: mpi_init_exit
mpi_init_exit: mpi_init_completion mpi_finalize_wait
mpi_management: mpi_mgmt_comm mpi_mgmt_file mpi_mgmt_win
mpi_mgmt_win: mpi_rma_wait_at_create mpi_rma_wait_at_free
mpi: mpi_synchronization
mpi_synchronization: mpi_sync_collective
mpi_sync_collective: mpi_barrier_wait mpi_barrier_completion
mpi_synchronization: mpi_rma_synchronization
mpi_rma_synchronization: mpi_rma_sync_active
mpi_rma_sync_active: mpi_rma_sync_late_post mpi_rma_early_wait
mpi_rma_early_wait: mpi_rma_late_complete
mpi_rma_sync_active: mpi_rma_wait_at_fence
mpi_rma_wait_at_fence: mpi_rma_early_fence
mpi_rma_synchronization: mpi_rma_sync_passive
mpi_rma_sync_passive: mpi_rma_sync_lock_competition mpi_rma_sync_wait_for_progress
mpi: mpi_communication
mpi_communication: mpi_point2point
mpi_point2point: mpi_latesender
mpi_latesender: mpi_latesender_wo
mpi_latesender_wo: mpi_lswo_different mpi_lswo_same
mpi_point2point: mpi_latereceiver
mpi_communication: mpi_collective
mpi_collective: mpi_earlyreduce mpi_earlyscan mpi_latebroadcast mpi_wait_nxn mpi_nxn_completion
mpi_communication: mpi_rma_communication
mpi_rma_communication: mpi_rma_comm_late_post mpi_rma_comm_lock_competition mpi_rma_comm_wait_for_progress
mpi: mpi_io
mpi_io: mpi_io_individual mpi_io_collective
execution: omp_time
omp_time: omp_management
omp_management: omp_fork
omp_time: omp_synchronization
omp_synchronization: omp_barrier
omp_barrier: omp_ebarrier
omp_ebarrier: omp_ebarrier_wait
omp_barrier: omp_ibarrier
omp_ibarrier: omp_ibarrier_wait
omp_synchronization: omp_critical
omp_critical: omp_lock_contention_critical
omp_synchronization: omp_lock_api
omp_lock_api: omp_lock_contention_api
omp_synchronization: omp_ordered omp_taskwait
omp_time: omp_flush
execution: pthread_time
pthread_time: pthread_management pthread_synchronization
pthread_synchronization: pthread_lock_api
pthread_lock_api: pthread_lock_contention_mutex_lock
pthread_synchronization: pthread_conditional
pthread_conditional: pthread_lock_contention_conditional
execution: openacc_time
openacc_time: openacc_setup openacc_comm openacc_sync openacc_kernel_launches
execution: opencl_time
opencl_time: opencl_setup opencl_comm opencl_sync opencl_kernel_launches
execution: cuda_time
cuda_time: cuda_setup cuda_comm cuda_sync cuda_kernel_launches
time: overhead omp_idle_threads
omp_idle_threads: omp_limited_parallelism
-: visits:occ
-: syncs:occ
syncs: syncs_p2p:occ
syncs_p2p: syncs_send:occ
syncs_send: mpi_slr_count:occ
syncs_p2p: syncs_recv:occ
syncs_recv: mpi_sls_count:occ
mpi_sls_count: mpi_slswo_count:occ
syncs: syncs_coll:occ syncs_rma:occ
syncs_rma: syncs_rma_active:occ syncs_rma_passive:occ
-: mpi_rma_pairsync_count:occ
mpi_rma_pairsync_count: mpi_rma_pairsync_unneeded_count:occ
-: comms:occ
comms: comms_p2p:occ
comms_p2p: comms_send:occ
comms_send: mpi_clr_count:occ
comms_p2p: comms_recv:occ
comms_recv: mpi_cls_count:occ
mpi_cls_count: mpi_clswo_count:occ
comms: comms_coll:occ
comms_coll: comms_cxch:occ comms_csrc:occ comms_cdst:occ
comms: comms_rma:occ
comms_rma: comms_rma_puts:occ comms_rma_gets:occ comms_rma_atomics:occ
-: mpi_file_ops:occ
mpi_file_ops: mpi_file_iops:occ
mpi_file_iops: mpi_file_irops:occ mpi_file_iwops:occ
mpi_file_ops: mpi_file_cops:occ
mpi_file_cops: mpi_file_crops:occ mpi_file_cwops:occ
-: bytes:bytes
bytes: bytes_p2p:bytes
bytes_p2p: bytes_sent:bytes bytes_rcvd:bytes
bytes: bytes_coll:bytes
bytes_coll: bytes_cout:bytes bytes_cin:bytes
bytes: bytes_rma:bytes
bytes_rma: bytes_put:bytes bytes_get:bytes
-: delay
delay: delay_mpi
delay_mpi: delay_p2p
delay_p2p: delay_latesender_aggregate
delay_latesender_aggregate: delay_latesender delay_latesender_longterm
delay_p2p: delay_latereceiver_aggregate
delay_latereceiver_aggregate: delay_latereceiver delay_latereceiver_longterm
delay_mpi: delay_collective
delay_collective: delay_barrier_aggregate
delay_barrier_aggregate: delay_barrier delay_barrier_longterm
delay_collective: delay_n21_aggregate
delay_n21_aggregate: delay_n21 delay_n21_longterm
delay_collective: delay_12n_aggregate
delay_12n_aggregate: delay_12n delay_12n_longterm
delay_collective: delay_n2n_aggregate
delay_n2n_aggregate: delay_n2n delay_n2n_longterm
delay: delay_omp
delay_omp: delay_ompbarrier_aggregate
delay_ompbarrier_aggregate: delay_ompbarrier delay_ompbarrier_longterm
delay_omp: delay_ompidle_aggregate
delay_ompidle_aggregate: delay_ompidle delay_ompidle_longterm
-: waitstates_propagating_vs_terminal
waitstates_propagating_vs_terminal: mpi_wait_propagating
mpi_wait_propagating: mpi_wait_propagating_ls mpi_wait_propagating_lr
waitstates_propagating_vs_terminal: mpi_wait_terminal
mpi_wait_terminal: mpi_wait_terminal_ls mpi_wait_terminal_lr
-: waitstates_direct_vs_indirect
waitstates_direct_vs_indirect: mpi_wait_direct
mpi_wait_direct: mpi_wait_direct_latesender mpi_wait_direct_latereceiver
waitstates_direct_vs_indirect: mpi_wait_indirect
mpi_wait_indirect: mpi_wait_indirect_latesender mpi_wait_indirect_latereceiver
-: critical_path
critical_path: critical_path_imbalance
-: performance_impact
performance_impact: performance_impact_criticalpath
performance_impact_criticalpath: critical_path_activities critical_imbalance_impact
critical_imbalance_impact: intra_partition_imbalance inter_partition_imbalance
performance_impact: non_critical_path_activities
-: imbalance
imbalance: imbalance_above
imbalance_above: imbalance_above_single
imbalance: imbalance_below
imbalance_below: imbalance_below_bypass
imbalance_below_bypass: imbalance_below_singularity`

// notAnalyzed are the metrics of referenceTree that scout does not
// produce, by the analysis they need; none can occur for the bundled
// traces, whose reference reports have no one-sided or Pthread activity.
var notAnalyzed = map[string][]string{
	"MPI one-sided wait states and counts": {"mpi_rma_wait_at_create", "mpi_rma_wait_at_free", "mpi_rma_sync_late_post",
		"mpi_rma_early_wait", "mpi_rma_late_complete", "mpi_rma_wait_at_fence", "mpi_rma_early_fence",
		"mpi_rma_sync_lock_competition", "mpi_rma_sync_wait_for_progress", "mpi_rma_comm_late_post",
		"mpi_rma_comm_lock_competition", "mpi_rma_comm_wait_for_progress",
		"mpi_rma_pairsync_count", "mpi_rma_pairsync_unneeded_count", "bytes_rma", "bytes_put", "bytes_get"},
	"Pthread lock contention": {"pthread_lock_contention_mutex_lock", "pthread_lock_contention_conditional"},
}

// refMetric is one metric of referenceTree.
type refMetric struct {
	parent, unit string
	pos          int // position in report order
}

func parseReferenceTree(t *testing.T) map[string]refMetric {
	t.Helper()
	ref := map[string]refMetric{}
	for _, line := range strings.Split(strings.TrimSpace(referenceTree), "\n") {
		parent, children, ok := strings.Cut(line, ": ")
		if !ok {
			t.Fatalf("reference tree: bad line %q", line)
		}
		if _, known := ref[parent]; parent != "-" && !known {
			t.Fatalf("reference tree: parent %s before its own line", parent)
		}
		for _, c := range strings.Fields(children) {
			name, unit, _ := strings.Cut(c, ":")
			if unit == "" {
				unit = "sec"
			}
			if _, dup := ref[name]; dup {
				t.Fatalf("reference tree: %s twice", name)
			}
			p := parent
			if p == "-" {
				p = ""
			}
			ref[name] = refMetric{parent: p, unit: unit, pos: len(ref)}
		}
	}
	return ref
}

// TestTreeMatchesReferenceTree checks every metric of our tree against the
// reference's: same parent, same unit, same relative order, and a display
// name and description; and that every reference metric we leave out is
// listed in notAnalyzed. Metrics of scout's own (MetricDef.Own) must not
// be the reference's and sit below a metric of the tree.
func TestTreeMatchesReferenceTree(t *testing.T) {
	ref := parseReferenceTree(t)
	left := map[string]bool{}
	for _, names := range notAnalyzed {
		for _, n := range names {
			if _, ok := ref[n]; !ok {
				t.Errorf("notAnalyzed: %s is not in the reference tree", n)
			}
			left[n] = true
		}
	}
	prev, prevName := -1, ""
	ours := map[string]bool{}
	for _, m := range MetricTree() {
		ours[m.Unique] = true
		r, ok := ref[m.Unique]
		if m.Own {
			// a metric of scout's own: not the reference's, placed
			// below one of ours that comes before it
			if ok {
				t.Errorf("%s is marked as our own but is in the reference tree", m.Unique)
			}
			if !ours[m.Parent] {
				t.Errorf("%s: parent %q is not in our tree before it", m.Unique, m.Parent)
			}
			if m.Display == "" || m.Descr == "" {
				t.Errorf("%s: no display name or description", m.Unique)
			}
			continue
		}
		if !ok {
			t.Errorf("%s is not in the reference tree", m.Unique)
			continue
		}
		if m.Parent != r.parent {
			t.Errorf("%s: parent %q, the reference's %q", m.Unique, m.Parent, r.parent)
		}
		if m.Unit != r.unit {
			t.Errorf("%s: unit %s, the reference's %s", m.Unique, m.Unit, r.unit)
		}
		if r.pos < prev {
			t.Errorf("%s comes after %s, the reference has it before", m.Unique, prevName)
		}
		prev, prevName = r.pos, m.Unique
		if m.Display == "" || m.Descr == "" {
			t.Errorf("%s: no display name or description", m.Unique)
		}
		if left[m.Unique] {
			t.Errorf("%s is in the tree and in notAnalyzed", m.Unique)
		}
	}
	for n := range ref {
		if !ours[n] && !left[n] {
			t.Errorf("reference metric %s is neither in the tree nor in notAnalyzed", n)
		}
	}
}

// TestTreeCoversTraceCSV checks that every metric of each reference
// trace's derived tree (expected/trace.csv) is in our tree, in the
// reference's place, and exists for that trace. The reference writes only
// the metrics of paradigms that occur in the trace, so each of them is
// one we must produce, unless scout leaves its part of the analysis out
// for the trace (the root causes and the critical path of hybrid
// traces): then it must not exist.
func TestTreeCoversTraceCSV(t *testing.T) {
	ref := parseReferenceTree(t)
	for _, tr := range tracetest.All(t) {
		t.Run(tr.Name, func(t *testing.T) {
			want, err := tracetest.ReadCSV(tr.Expected("trace.csv"))
			if err != nil {
				t.Fatal(err)
			}
			p := reportFromCSV(t, tr).Profile()
			exists := map[string]bool{}
			for _, m := range Derive(p).Metrics {
				exists[m.Unique] = true
			}
			seen := map[string]bool{}
			for k := range want {
				if seen[k.Metric] {
					continue
				}
				seen[k.Metric] = true
				r, ok := ref[k.Metric]
				if !ok {
					t.Errorf("%s is not in the reference tree table", k.Metric)
				}
				m, ok := LookupMetric(k.Metric)
				if !ok {
					t.Errorf("%s is not in our metric tree", k.Metric)
					continue
				}
				if m.Parent != r.parent || m.Unit != r.unit {
					t.Errorf("%s: parent %q unit %s, the reference's %q %s", k.Metric, m.Parent, m.Unit, r.parent, r.unit)
				}
				if !exists[k.Metric] {
					t.Errorf("%s does not exist in our derived tree for this trace", k.Metric)
				}
			}
			if len(seen) == 0 {
				t.Errorf("trace.csv has no metrics")
			}
		})
	}
}
