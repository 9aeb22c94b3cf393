package combine

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"scout/internal/tracetest"
	"scout/localtrace"
	"scout/localtrace/otf2"
	"scout/patterns"
	"scout/unify"
)

// reportFromCSV builds the Report the analysis would make of a reference
// trace from its expected result CSV: the archive's global definitions, a
// call tree from the call-path names (regions looked up by name) and the
// values of the metrics the analysis computes (patterns.Catalog).
func reportFromCSV(t *testing.T, tr tracetest.Trace) *Report {
	t.Helper()
	cells, err := tracetest.ReadCSV(tr.Expected("scout.csv"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := otf2.Open(tr.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := a.ReadGlobalDefs()
	if err != nil {
		t.Fatal(err)
	}
	regionID := map[string]uint32{}
	for _, r := range defs.Regions {
		if _, dup := regionID[defs.Str(r.Name)]; !dup {
			regionID[defs.Str(r.Name)] = r.Self
		}
	}

	tree := &unify.CallTree{}
	index := map[string]uint32{}
	var node func(path string) uint32
	node = func(path string) uint32 {
		if i, ok := index[path]; ok {
			return i
		}
		parent, name := unify.None, path
		if i := strings.LastIndexByte(path, '/'); i >= 0 {
			parent, name = node(path[:i]), path[i+1:]
		}
		id, ok := regionID[name]
		if !ok {
			t.Fatalf("call path %q: no region %q", path, name)
		}
		n := uint32(len(tree.Nodes))
		tree.Nodes = append(tree.Nodes, unify.Node{Region: id, Parent: parent})
		if parent == unify.None {
			tree.Roots = append(tree.Roots, n)
		} else {
			tree.Nodes[parent].Children = append(tree.Nodes[parent].Children, n)
		}
		index[path] = n
		return n
	}
	var paths []string
	labels := map[string]uint64{}
	for k := range cells {
		paths = append(paths, k.Callpath)
		labels[k.Rank] = 0
	}
	sort.Strings(paths)
	for _, path := range paths {
		node(path)
	}

	pl := map[uint64]localtrace.Placement{}
	for label := range labels {
		loc := uint64(len(pl))
		labels[label] = loc
		pl[loc] = parseLabel(t, label)
	}
	rep := New(defs, tree, pl, patterns.Catalog)
	id := map[string]int{}
	for i, m := range patterns.Catalog {
		id[m.Name] = i
	}
	results := map[uint64]*Result{}
	for loc := range pl {
		results[loc] = &Result{Location: loc, Values: make([][]float64, len(patterns.Catalog))}
	}
	for k, v := range cells {
		m, ok := id[k.Metric]
		if !ok {
			continue
		}
		vals := results[labels[k.Rank]].Values
		if vals[m] == nil {
			vals[m] = make([]float64, len(tree.Nodes))
		}
		vals[m][index[k.Callpath]] = v
	}
	for _, res := range results {
		if err := rep.Add(*res); err != nil {
			t.Fatal(err)
		}
	}
	rep.Sort()
	return rep
}

func parseLabel(t *testing.T, s string) localtrace.Placement {
	t.Helper()
	r, th, _ := strings.Cut(s, ".")
	var pl localtrace.Placement
	var err error
	if pl.Rank, err = strconv.Atoi(r); err != nil {
		t.Fatalf("bad rank label %q", s)
	}
	if th != "" {
		if pl.Thread, err = strconv.Atoi(th); err != nil {
			t.Fatalf("bad rank label %q", s)
		}
	}
	return pl
}

func toTestCells(cs []Cell) tracetest.Cells {
	out := tracetest.Cells{}
	for _, c := range cs {
		out[tracetest.Key{Metric: c.Metric, Callpath: c.Callpath, Rank: c.Rank}] = c.Value
	}
	return out
}

// approx equates values within 1e-9, absolute or relative.
var approx = cmpopts.EquateApprox(1e-9, 1e-9)

// TestDeriveReference derives the metric tree from each reference trace's
// analysis result and compares it with the reference's derived tree
// (expected/trace.csv), for every metric of the tree.
func TestDeriveReference(t *testing.T) {
	var tree []string
	for _, m := range MetricTree() {
		tree = append(tree, m.Unique)
	}
	for _, tr := range tracetest.All(t) {
		t.Run(tr.Name, func(t *testing.T) {
			want, err := tracetest.ReadCSV(tr.Expected("trace.csv"))
			if err != nil {
				t.Skip(err)
			}
			want = want.Only(tree...)
			p := reportFromCSV(t, tr).Profile()
			d := Derive(p)
			got := toTestCells(d.Cells(p))
			if lines := tracetest.Diff(got, want, 20); len(lines) > 0 {
				t.Errorf("derived tree differs from trace.csv (%d cells): \n%s", len(lines), strings.Join(lines, "\n"))
			}
			for _, m := range d.Metrics {
				if m.Unique == "mpi" {
					return
				}
			}
			t.Errorf("metric mpi does not exist for an MPI trace")
		})
	}
}

// TestMetricTree checks the structure of the tree: unique names, parents
// before children, terms naming tree metrics or metrics known to be left
// out, and data types matching units.
func TestMetricTree(t *testing.T) {
	leftOut := map[string]bool{ // Scalasca metrics that scout does not compute
		"omp_management": true, "bytes_rma": true,
		"mpi_rma_wait_at_create": true, "mpi_rma_wait_at_free": true, "mpi_rma_sync_late_post": true,
		"mpi_rma_early_wait": true, "mpi_rma_wait_at_fence": true, "mpi_rma_sync_lock_competition": true,
		"mpi_rma_sync_wait_for_progress": true, "mpi_rma_comm_late_post": true,
		"mpi_rma_comm_lock_competition": true, "mpi_rma_comm_wait_for_progress": true,
		"omp_ebarrier_wait": true, "omp_ibarrier_wait": true, "omp_lock_contention_critical": true,
		"omp_lock_contention_api": true, "omp_idle_threads": true,
	}
	seen := map[string]bool{}
	for _, m := range MetricTree() {
		if seen[m.Unique] {
			t.Errorf("%s: duplicate", m.Unique)
		}
		if m.Parent != "" && !seen[m.Parent] {
			t.Errorf("%s: parent %q does not precede it", m.Unique, m.Parent)
		}
		seen[m.Unique] = true
		if m.Integer != (m.Unit != "sec") {
			t.Errorf("%s: unit %s but Integer=%v", m.Unique, m.Unit, m.Integer)
		}
		if m.Display == "" || m.Descr == "" {
			t.Errorf("%s: no display name or description", m.Unique)
		}
		if (m.Origin == Masked || m.Origin == Summed || m.Origin == Formula) != (len(m.Terms()) > 0) {
			t.Errorf("%s: origin %v with terms %v", m.Unique, m.Origin, m.Terms())
		}
	}
	for _, m := range MetricTree() {
		for _, n := range m.Terms() {
			n = strings.TrimPrefix(n, "-")
			if _, ok := LookupMetric(n); !ok && !leftOut[n] {
				t.Errorf("%s: term %q is not a metric of the tree", m.Unique, n)
			}
		}
	}
	for _, n := range []string{"omp_idle_threads"} {
		if _, ok := LookupMetric(n); ok {
			t.Errorf("%s is in the tree but is not computed", n)
		}
	}
}

// TestClassify checks call-path categories of typical regions.
func TestClassify(t *testing.T) {
	mpi := func(name string, role uint8) RegionInfo {
		return RegionInfo{Name: name, Paradigm: otf2.ParadigmMPI, Role: role}
	}
	tests := []struct {
		r    RegionInfo
		want class
	}{
		{RegionInfo{Name: "main", Paradigm: otf2.ParadigmCompiler, Role: otf2.RoleFunction}, cExecution},
		{RegionInfo{Name: "TRACE BUFFER FLUSH", Paradigm: otf2.ParadigmMeasurementSystem, Role: otf2.RoleArtificial}, cOverhead},
		{mpi("MPI_Init", otf2.RoleFunction), cExecution | hasMPI | cMPI | cMPIMgmtStartup},
		{mpi("MPI_Comm_split", otf2.RoleFunction), cExecution | hasMPI | cMPI | cMPIMgmtComm},
		{mpi("MPI_Barrier", otf2.RoleBarrier), cExecution | hasMPI | cMPI | cMPISyncCollective},
		{mpi("MPI_Recv", otf2.RolePoint2Point), cExecution | hasMPI | cMPI | cMPICommP2P},
		{mpi("MPI_Waitall", otf2.RoleFunction), cExecution | hasMPI | cMPI | cMPICommP2P},
		{mpi("MPI_Allreduce", otf2.RoleCollAll2All), cExecution | hasMPI | cMPI | cMPICommCollective},
		{mpi("MPI_Put", otf2.RoleRMA), cExecution | hasMPI | cMPI | cMPICommRMA | cMPICommRMAPuts},
		{mpi("MPI_Accumulate", otf2.RoleAtomic), cExecution | hasMPI | cMPI | cMPICommRMA | cMPICommRMAAtomics},
		{mpi("MPI_Win_fence", otf2.RoleBarrier), cExecution | hasMPI | cMPI | cMPISyncCollective | cMPISyncRMAActive},
		{mpi("MPI_Win_lock", otf2.RoleFunction), cExecution | hasMPI | cMPI | cMPISyncRMAPassive},
		{mpi("MPI_Win_create", otf2.RoleFunction), cExecution | hasMPI | cMPI | cMPIMgmtWin},
		{mpi("MPI_File_open", otf2.RoleFunction), cExecution | hasMPI | cMPI | cMPIMgmtFile | cMPIFileCops},
		{mpi("MPI_File_seek", otf2.RoleFunction), cExecution | hasMPI | cMPI | cMPIMgmtFile | cMPIFileIops},
		{mpi("MPI_File_read_at", otf2.RoleFunction), cExecution | hasMPI | cMPI | cMPIFileIndividual | cMPIFileIops | cMPIFileIrops},
		{mpi("MPI_File_write_all", otf2.RoleFunction), cExecution | hasMPI | cMPI | cMPIFileCollective | cMPIFileCops | cMPIFileCwops},
		{mpi("PARALLEL", otf2.RoleFunction), cExecution | hasMPI},
		{RegionInfo{Name: "!$omp ibarrier", Paradigm: otf2.ParadigmOpenMP, Role: otf2.RoleImplicitBarrier}, cExecution | hasOpenMP | cOMPSyncIBarrier},
		{RegionInfo{Name: "omp_set_lock", Paradigm: otf2.ParadigmOpenMP, Role: otf2.RoleFunction}, cExecution | hasOpenMP | cOMPSyncLockAPI},
		{RegionInfo{Name: "pthread_mutex_lock", Paradigm: otf2.ParadigmPthread, Role: otf2.RoleFunction}, cExecution | hasPthread | cPthreadSyncMutex},
		{RegionInfo{Name: "cudaMemcpy", Paradigm: otf2.ParadigmCUDA, Role: otf2.RoleFunction}, cExecution | hasCUDA | cCUDA | cCUDAComm},
		{RegionInfo{Name: "cuLaunchKernel_v2", Paradigm: otf2.ParadigmCUDA, Role: otf2.RoleFunction}, cExecution | hasCUDA | cCUDA | cCUDAKernelLaunches},
		{RegionInfo{Name: "BUFFER FLUSH", Paradigm: otf2.ParadigmOpenCL}, hasOpenCL | cOverhead},
		{RegionInfo{Name: "vecadd", Paradigm: otf2.ParadigmOpenCL, File: "OPENCL_KERNEL"}, cExecution | hasOpenCL | cOpenCL | hasOpenCLKernels | cOpenCLKernelExecutions},
		{RegionInfo{Name: "acc_wait@foo.c:12", Paradigm: otf2.ParadigmOpenACC}, cExecution | hasOpenACC | cOpenACC | cOpenACCSync},
	}
	for _, tt := range tests {
		if got := classify(tt.r); got != tt.want {
			t.Errorf("classify(%+v) = %#x, want %#x", tt.r, uint64(got), uint64(tt.want))
		}
	}
}

// TestDeriveSynthetic checks the derivation on a small hand-made profile:
// masks, sums, metric existence and the imbalance heuristic.
func TestDeriveSynthetic(t *testing.T) {
	p := &Profile{
		Callpaths: []Callpath{
			{Parent: -1, Region: RegionInfo{Name: "prog", Paradigm: otf2.ParadigmMeasurementSystem, Role: otf2.RoleArtificial}},
			{Parent: 0, Region: RegionInfo{Name: "main", Paradigm: otf2.ParadigmCompiler, Role: otf2.RoleFunction}},
			{Parent: 1, Region: RegionInfo{Name: "MPI_Recv", Paradigm: otf2.ParadigmMPI, Role: otf2.RolePoint2Point}},
			{Parent: 1, Region: RegionInfo{Name: "work", Paradigm: otf2.ParadigmCompiler, Role: otf2.RoleFunction}},
			{Parent: 1, Region: RegionInfo{Name: "TRACE BUFFER FLUSH", Paradigm: otf2.ParadigmMeasurementSystem, Role: otf2.RoleArtificial}},
		},
		Locations: []localtrace.Placement{{Rank: 0}, {Rank: 1}, {Rank: 2}},
		Values: map[string][][]float64{
			"time":           {{1, 1, 1}, {2, 2, 2}, {3, 1, 0}, {6, 0, 0}, {0, 0.5, 0}},
			"visits":         {{1, 1, 1}, {1, 1, 1}, {2, 2, 0}, {1, 0, 0}, {0, 1, 0}},
			"mpi_latesender": {nil, nil, {2, 0, 0}, nil, nil},
			"syncs_recv":     {nil, nil, {1, 0, 0}, nil, nil},
			"comms_recv":     {nil, nil, {1, 2, 0}, nil, nil},
		},
	}
	d := Derive(p)
	got := toTestCells(d.Cells(p))
	key := func(m, cp, r string) tracetest.Key { return tracetest.Key{Metric: m, Callpath: cp, Rank: r} }
	const (
		prog  = "prog"
		main  = "prog/main"
		recv  = "prog/main/MPI_Recv"
		work  = "prog/main/work"
		flush = "prog/main/TRACE BUFFER FLUSH"
	)
	want := tracetest.Cells{}
	for cp, row := range p.Values["time"] {
		for l, x := range row {
			if x != 0 {
				want[key("time", p.CallpathNames()[cp], p.Locations[l].Label())] = x
			}
		}
	}
	for k, v := range want {
		if k.Callpath != flush {
			want[key("execution", k.Callpath, k.Rank)] = v
			if k.Callpath != recv {
				want[key("comp", k.Callpath, k.Rank)] = v
			}
		}
	}
	add := func(metrics []string, cp, r string, v float64) {
		for _, m := range metrics {
			want[key(m, cp, r)] = v
		}
	}
	mpiTime := []string{"mpi", "mpi_communication", "mpi_point2point"}
	add(mpiTime, recv, "0", 3)
	add(mpiTime, recv, "1", 1)
	add([]string{"mpi_latesender"}, recv, "0", 2)
	// without root-cause values, all of the Late Sender is direct and terminal
	add([]string{"waitstates_direct_vs_indirect", "mpi_wait_direct", "mpi_wait_direct_latesender",
		"waitstates_propagating_vs_terminal", "mpi_wait_terminal", "mpi_wait_terminal_ls"}, recv, "0", 2)
	add([]string{"overhead"}, flush, "1", 0.5)
	for cp, row := range p.Values["visits"] {
		for l, x := range row {
			if x != 0 {
				want[key("visits", p.CallpathNames()[cp], p.Locations[l].Label())] = x
			}
		}
	}
	add([]string{"syncs", "syncs_p2p", "syncs_recv"}, recv, "0", 1)
	add([]string{"comms", "comms_p2p", "comms_recv"}, recv, "0", 1)
	add([]string{"comms", "comms_p2p", "comms_recv"}, recv, "1", 2)
	// work: only rank 0 visited it (6 s), the average is 2.
	add([]string{"imbalance", "imbalance_above"}, work, "0", 4)
	add([]string{"imbalance_above_single"}, work, "0", 4)
	add([]string{"imbalance", "imbalance_below", "imbalance_below_bypass", "imbalance_below_singularity"}, work, "1", 2)
	add([]string{"imbalance", "imbalance_below", "imbalance_below_bypass", "imbalance_below_singularity"}, work, "2", 2)
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("derived cells (-want +got):\n%s", diff)
	}

	exist := map[string]bool{}
	for _, m := range d.Metrics {
		exist[m.Unique] = true
	}
	for _, n := range []string{"time", "execution", "comp", "mpi", "mpi_io", "bytes", "overhead", "imbalance_below_singularity"} {
		if !exist[n] {
			t.Errorf("metric %s does not exist", n)
		}
	}
	for _, n := range []string{"omp_time", "pthread_time", "cuda_time", "opencl_kernel_executions"} {
		if exist[n] {
			t.Errorf("metric %s exists without its paradigm", n)
		}
	}

	// Without MPI regions the MPI metrics do not exist.
	p.Callpaths[2].Region.Paradigm = otf2.ParadigmUser
	d = Derive(p)
	for _, m := range d.Metrics {
		if strings.HasPrefix(m.Unique, "mpi") || m.Unique == "syncs" || m.Unique == "bytes" {
			t.Errorf("metric %s exists without MPI regions", m.Unique)
		}
	}
}

// TestImbalanceThreads checks that worker threads take part in the
// imbalance heuristic only inside OpenMP parallel regions.
func TestImbalanceThreads(t *testing.T) {
	p := &Profile{
		Callpaths: []Callpath{
			{Parent: -1, Region: RegionInfo{Name: "main", Paradigm: otf2.ParadigmCompiler, Role: otf2.RoleFunction}},
			{Parent: 0, Region: RegionInfo{Name: "!$omp parallel", Paradigm: otf2.ParadigmOpenMP, Role: otf2.RoleParallel}},
			{Parent: 1, Region: RegionInfo{Name: "loop", Paradigm: otf2.ParadigmCompiler, Role: otf2.RoleFunction}},
		},
		Locations: []localtrace.Placement{{Rank: 0}, {Rank: 0, Thread: 1}},
		Values: map[string][][]float64{
			"time":   {{4, 9}, nil, {3, 1}},
			"visits": {{1, 1}, {1, 1}, {1, 1}},
		},
	}
	d := Derive(p)
	got := toTestCells(d.Cells(p)).Only("imbalance")
	want := tracetest.Cells{
		{Metric: "imbalance", Callpath: "main/!$omp parallel/loop", Rank: "0"}:   1,
		{Metric: "imbalance", Callpath: "main/!$omp parallel/loop", Rank: "0.1"}: 1,
	}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("imbalance (-want +got):\n%s", diff)
	}
	if _, ok := d.Values["omp_time"]; !ok {
		t.Errorf("omp_time does not exist with an OpenMP region")
	}
}

func ExampleDerive() {
	p := &Profile{
		Callpaths: []Callpath{
			{Parent: -1, Region: RegionInfo{Name: "main", Paradigm: otf2.ParadigmCompiler, Role: otf2.RoleFunction}},
			{Parent: 0, Region: RegionInfo{Name: "MPI_Barrier", Paradigm: otf2.ParadigmMPI, Role: otf2.RoleBarrier}},
		},
		Locations: []localtrace.Placement{{Rank: 0}, {Rank: 1}},
		Values: map[string][][]float64{
			"time":             {{1, 2}, {2, 1}},
			"visits":           {{1, 1}, {1, 1}},
			"mpi_barrier_wait": {{0, 0}, {1, 0}},
		},
	}
	d := Derive(p)
	for _, c := range d.Cells(p) {
		if strings.HasPrefix(c.Metric, "mpi") || strings.HasPrefix(c.Metric, "imbalance") {
			fmt.Println(c.Metric, c.Callpath, c.Rank, FormatValue(c.Value, c.Integer))
		}
	}
	// Output:
	// imbalance main 0 0.5
	// imbalance main 1 0.5
	// imbalance_above main 1 0.5
	// imbalance_below main 0 0.5
	// mpi main/MPI_Barrier 0 2
	// mpi main/MPI_Barrier 1 1
	// mpi_barrier_wait main/MPI_Barrier 0 1
	// mpi_sync_collective main/MPI_Barrier 0 2
	// mpi_sync_collective main/MPI_Barrier 1 1
	// mpi_synchronization main/MPI_Barrier 0 2
	// mpi_synchronization main/MPI_Barrier 1 1
}
