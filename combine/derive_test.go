package combine

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"scout/cube"
	"scout/internal/tracetest"
	"scout/localtrace"
	"scout/localtrace/otf2"
	"scout/patterns"
	"scout/unify"
)

// openTrace opens the archive in dir and reads its global definitions
// and the places of its locations.
func openTrace(t *testing.T, dir string) (*otf2.Archive, *otf2.Defs, map[uint64]localtrace.Placement) {
	t.Helper()
	a, err := otf2.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := a.ReadGlobalDefs()
	if err != nil {
		t.Fatal(err)
	}
	pl, err := localtrace.Placements(defs)
	if err != nil {
		t.Fatal(err)
	}
	return a, defs, pl
}

// reportFromCSV builds the Report the analysis would make of a reference
// trace from its expected result CSV: the archive's global definitions
// and locations (with their ranks and threads), the global call tree the
// analysis builds from the trace (callTree) and the values of the metrics
// the analysis computes (patterns.Catalog).
func reportFromCSV(t *testing.T, tr tracetest.Trace) *Report {
	t.Helper()
	cells, err := tracetest.ReadCSV(tr.Expected("scout.csv"))
	if err != nil {
		t.Fatal(err)
	}
	a, defs, pl := openTrace(t, tr.Dir)
	rep := New(defs, callTree(t, a, defs, pl), pl, patterns.Catalog)

	index := map[string]int{} // call-path key → call path
	for i, k := range rep.callpathKeys() {
		index[k] = i
	}
	labels := map[string]uint64{} // rank label ("r" or "r.t") → location
	results := map[uint64]*Result{}
	for loc, p := range pl {
		labels[p.Label()] = loc
		results[loc] = &Result{Location: loc, Values: make([][]float64, len(patterns.Catalog))}
	}
	id := map[string]int{}
	for i, m := range patterns.Catalog {
		id[m.Name] = i
	}
	for k, v := range cells {
		m, ok := id[k.Metric]
		if !ok {
			continue
		}
		cp, ok := index[k.Callpath]
		if !ok {
			t.Fatalf("%v: no such call path in the trace", k)
		}
		loc, ok := labels[k.Rank]
		if !ok {
			t.Fatalf("%v: no such location in the trace", k)
		}
		vals := results[loc].Values
		if vals[m] == nil {
			vals[m] = make([]float64, len(rep.Tree.Nodes))
		}
		vals[m][cp] = v
	}
	for _, res := range results {
		if err := rep.Add(*res); err != nil {
			t.Fatal(err)
		}
	}
	rep.Sort()
	return rep
}

// callTree builds the global call tree of a trace as the analysis does:
// the call paths of every location, those of a rank's worker threads
// continuing their master's (localtrace.AdoptThread), unified in the
// order of the location ids. Its order, the order in which the reference
// numbers the call paths too, is the order of the remapper's walk over
// OpenMP constructs (deriver.idleThreads).
func callTree(t *testing.T, a *otf2.Archive, defs *otf2.Defs, pl map[uint64]localtrace.Placement) *unify.CallTree {
	t.Helper()
	traces := map[uint64]*localtrace.Trace{}
	master := map[int]uint64{}
	var locs []uint64
	for _, l := range defs.Locations {
		tr, err := localtrace.Load(a, defs, l.Self)
		if err != nil {
			t.Fatal(err)
		}
		traces[l.Self] = tr
		locs = append(locs, l.Self)
		if pl[l.Self].Thread == 0 {
			master[pl[l.Self].Rank] = l.Self
		}
	}
	slices.Sort(locs)
	locals := make([][]localtrace.Callpath, len(locs))
	for i, l := range locs {
		if p := pl[l]; p.Thread != 0 {
			if err := localtrace.AdoptThread(traces[l], traces[master[p.Rank]]); err != nil {
				t.Fatal(err)
			}
		}
		locals[i] = traces[l].Callpaths
	}
	tree, _, err := unify.Unify(locals)
	if err != nil {
		t.Fatal(err)
	}
	return tree
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
		"bytes_rma": true, "mpi_rma_wait_at_create": true, "mpi_rma_wait_at_free": true, "mpi_rma_sync_late_post": true,
		"mpi_rma_early_wait": true, "mpi_rma_wait_at_fence": true, "mpi_rma_sync_lock_competition": true,
		"mpi_rma_sync_wait_for_progress": true, "mpi_rma_comm_late_post": true,
		"mpi_rma_comm_lock_competition": true, "mpi_rma_comm_wait_for_progress": true,
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
	for n := range leftOut {
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
	omp := func(name string, role uint8) RegionInfo {
		return RegionInfo{Name: name, Paradigm: otf2.ParadigmOpenMP, Role: role, File: "OMP"}
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
		{omp("!$omp parallel @a.c:3", otf2.RoleParallel), cExecution | hasOpenMP},
		{omp("!$omp ibarrier", otf2.RoleImplicitBarrier), cExecution | hasOpenMP | cOMPSyncIBarrier},
		{omp("!$omp implicit barrier @a.c:9", otf2.RoleImplicitBarrier), cExecution | hasOpenMP | cOMPSyncIBarrier},
		{omp("!$omp barrier @a.c:5", otf2.RoleBarrier), cExecution | hasOpenMP | cOMPSyncEBarrier},
		{omp("!$omp critical @a.c:7", otf2.RoleCritical), cExecution | hasOpenMP | cOMPSyncCritical},
		{omp("!$omp critical sblock @a.c:7", otf2.RoleCriticalSblock), cExecution | hasOpenMP},
		{omp("!$omp atomic @a.c:8", otf2.RoleAtomic), cExecution | hasOpenMP | cOMPSyncCritical},
		{omp("!$omp ordered @a.c:4", otf2.RoleOrdered), cExecution | hasOpenMP | cOMPSyncOrdered},
		{omp("!$omp taskwait @a.c:6", otf2.RoleTaskWait), cExecution | hasOpenMP | cOMPSyncTaskwait},
		{omp("!$omp flush @a.c:2", otf2.RoleFlush), cExecution | hasOpenMP | cOMPFlush},
		{omp("omp_set_lock", otf2.RoleFunction), cExecution | hasOpenMP | cOMPSyncLockAPI},
		{omp("omp_init_nest_lock", 2 /* wrapper */), cExecution | hasOpenMP | cOMPSyncLockAPI},
		{omp("omp_get_thread_num", 2 /* wrapper */), cExecution | hasOpenMP},
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

// TestCallTreeOrder checks that the call tree the analysis builds (as
// callTree builds it) numbers the call paths as the reference's report
// does: the remapper walks them in that order (deriver.idleThreads). It
// needs the reference reports of ../shared.
func TestCallTreeOrder(t *testing.T) {
	dir := tracetest.SharedDir()
	if dir == "" {
		t.Skip("../shared/traces is absent")
	}
	cubes, err := filepath.Glob(filepath.Join(filepath.Dir(dir), "traces*", "*", "expected", "scout.cubex"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cubes) == 0 {
		t.Skip("no reference reports in ../shared")
	}
	for _, path := range cubes {
		traceDir := filepath.Dir(filepath.Dir(path))
		t.Run(filepath.Base(traceDir), func(t *testing.T) {
			ref, err := cube.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			cnodes := ref.AllCnodes()
			slices.SortFunc(cnodes, func(a, b *cube.Cnode) int { return a.ID - b.ID })
			pos := map[*cube.Cnode]int{}
			parent, name := make([]int, len(cnodes)), make([]string, len(cnodes))
			for i, c := range cnodes {
				pos[c] = i
				parent[i], name[i] = -1, c.Region.Name
				if c.Parent != nil {
					parent[i] = pos[c.Parent]
				}
			}
			want := cube.PathKeys(parent, name)

			a, defs, pl := openTrace(t, traceDir)
			got := New(defs, callTree(t, a, defs, pl), pl, nil).callpathKeys()
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("call paths in id order (-reference +ours):\n%s", diff)
			}
		})
	}
}

// TestIdleThreads checks the remapper's idle-thread step and the OpenMP
// metrics derived from it on a small hybrid profile: rank 0 with a
// worker thread, rank 1 without. Each call path is listed in id order
// with the exclusive time of locations 0, 0.1 and 1.
func TestIdleThreads(t *testing.T) {
	const (
		roleWrapper uint8 = 2  // OTF2_REGION_ROLE_WRAPPER
		roleMaster  uint8 = 11 // OTF2_REGION_ROLE_MASTER
	)
	type cpDef struct {
		path     string
		paradigm uint8
		role     uint8
		time     []float64
	}
	var (
		main     = cpDef{"main", otf2.ParadigmCompiler, otf2.RoleFunction, []float64{1, 0, 1}}
		init     = cpDef{"main/MPI_Init", otf2.ParadigmMPI, otf2.RoleFunction, []float64{2, 0, 2}}
		initLock = cpDef{"main/omp_init_lock", otf2.ParadigmOpenMP, roleWrapper, []float64{0.5, 0, 0.25}}
		par      = cpDef{"main/!$omp parallel", otf2.ParadigmOpenMP, otf2.RoleParallel, []float64{1, 1, 1}}
		parWork  = cpDef{"main/!$omp parallel/work", otf2.ParadigmCompiler, otf2.RoleFunction, []float64{3, 2, 3}}
		barrier  = cpDef{"main/!$omp parallel/!$omp implicit barrier", otf2.ParadigmOpenMP, otf2.RoleImplicitBarrier, []float64{0, 1, 0}}
		master   = cpDef{"main/!$omp parallel/!$omp master", otf2.ParadigmOpenMP, roleMaster, []float64{0.1, 0, 0.1}}
		work     = cpDef{"main/work", otf2.ParadigmCompiler, otf2.RoleFunction, []float64{5, 0, 5}}
		recv     = cpDef{"main/!$omp parallel/!$omp master/MPI_Recv", otf2.ParadigmMPI, otf2.RolePoint2Point, []float64{1.5, 0, 0}}
	)
	profile := func(cps ...cpDef) *Profile {
		p := &Profile{
			Locations: []localtrace.Placement{{Rank: 0}, {Rank: 0, Thread: 1}, {Rank: 1}},
			Values:    map[string][][]float64{"time": nil, "visits": nil, "omp_management": nil},
		}
		index := map[string]int{}
		for i, c := range cps {
			parent := -1
			if j := strings.LastIndexByte(c.path, '/'); j >= 0 {
				parent = index[c.path[:j]]
			}
			index[c.path] = i
			name := c.path[strings.LastIndexByte(c.path, '/')+1:]
			p.Callpaths = append(p.Callpaths, Callpath{Parent: parent, Region: RegionInfo{Name: name, Paradigm: c.paradigm, Role: c.role}})
			p.Values["time"] = append(p.Values["time"], c.time)
			p.Values["visits"] = append(p.Values["visits"], []float64{1, 1, 1})
			var mgmt []float64
			if c.path == par.path {
				mgmt = []float64{0.2, 0.2, 0.2}
			}
			p.Values["omp_management"] = append(p.Values["omp_management"], mgmt)
		}
		return p
	}
	key := func(m, cp, r string) tracetest.Key { return tracetest.Key{Metric: m, Callpath: cp, Rank: r} }
	metrics := []string{"time", "omp_idle_threads", "omp_limited_parallelism", "execution",
		"mpi", "omp_time", "omp_lock_api", "omp_ibarrier", "comp"}
	// cells adds the cells common to both call-path orders.
	cells := func(extra tracetest.Cells) tracetest.Cells {
		want := tracetest.Cells{}
		for _, c := range []cpDef{main, init, initLock, par, parWork, barrier, master, work, recv} {
			for l, r := range []string{"0", "0.1", "1"} {
				if x := c.time[l]; x != 0 {
					want[key("time", c.path, r)] = x
					want[key("execution", c.path, r)] = x
				}
			}
		}
		// The worker idles at the serial call paths while its master runs,
		// and for the master's whole time in omp_init_lock.
		for _, c := range []cpDef{main, init, work} {
			want[key("time", c.path, "0.1")] = c.time[0]
			want[key("omp_idle_threads", c.path, "0.1")] = c.time[0]
		}
		want[key("time", initLock.path, "0.1")] = 0.5
		want[key("omp_idle_threads", initLock.path, "0.1")] = 0.5
		want[key("omp_limited_parallelism", initLock.path, "0.1")] = 0.5
		for _, r := range []string{"0", "1"} {
			want[key("mpi", init.path, r)] = 2
			want[key("comp", main.path, r)] = 1
			want[key("comp", par.path, r)] = 0.8
			want[key("comp", parWork.path, r)] = 3
			want[key("comp", master.path, r)] = 0.1
			want[key("comp", work.path, r)] = 5
		}
		want[key("mpi", recv.path, "0")] = 1.5
		for _, r := range []string{"0", "0.1", "1"} {
			want[key("omp_time", par.path, r)] = 0.2
		}
		want[key("comp", par.path, "0.1")] = 0.8
		want[key("comp", parWork.path, "0.1")] = 2
		for r, x := range map[string]float64{"0": 0.5, "1": 0.25} {
			want[key("omp_lock_api", initLock.path, r)] = x
			want[key("omp_time", initLock.path, r)] = x
		}
		want[key("omp_ibarrier", barrier.path, "0.1")] = 1
		want[key("omp_time", barrier.path, "0.1")] = 1
		for k, v := range extra {
			want[k] = v
		}
		return want
	}
	tests := []struct {
		name string
		p    *Profile
		want tracetest.Cells
	}{
		{
			// MPI_Recv, numbered after the parallel region's construct has
			// closed, is serial: the worker idles there; in the construct
			// the worker falls 0.1 s short of its master (in !$omp master).
			name: "receive numbered last",
			p:    profile(main, init, initLock, par, parWork, barrier, master, work, recv),
			want: cells(tracetest.Cells{
				key("time", recv.path, "0.1"):                   1.5,
				key("omp_idle_threads", recv.path, "0.1"):       1.5,
				key("time", par.path, "0.1"):                    1.1,
				key("execution", par.path, "0.1"):               1,
				key("omp_idle_threads", par.path, "0.1"):        0.1,
				key("omp_limited_parallelism", par.path, "0.1"): 0.1,
			}),
		},
		{
			// Numbered inside the construct, it is part of it: the worker
			// falls 1.6 s short of its master there.
			name: "receive numbered in the construct",
			p:    profile(main, init, initLock, par, parWork, barrier, master, recv, work),
			want: cells(tracetest.Cells{
				key("time", par.path, "0.1"):                    2.6,
				key("execution", par.path, "0.1"):               1,
				key("omp_idle_threads", par.path, "0.1"):        1.6,
				key("omp_limited_parallelism", par.path, "0.1"): 1.6,
			}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toTestCells(Derive(tt.p).Cells(tt.p)).Only(metrics...)
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("derived cells (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeriveGrids: the wavefront refill metrics exist by the trace's
// process grids: the four corner metrics with a 2-D grid, the eight
// octant metrics with a 3-D grid, all twelve with both, each below Late
// Sender, and none without a grid.
func TestDeriveGrids(t *testing.T) {
	corners := []string{"mpi_latesender_refill_nw", "mpi_latesender_refill_ne", "mpi_latesender_refill_sw",
		"mpi_latesender_refill_se"}
	octants := []string{"mpi_latesender_refill_nwf", "mpi_latesender_refill_nef", "mpi_latesender_refill_swf",
		"mpi_latesender_refill_sef", "mpi_latesender_refill_nwb", "mpi_latesender_refill_neb",
		"mpi_latesender_refill_swb", "mpi_latesender_refill_seb"}
	for _, tc := range []struct {
		name           string
		grid2D, grid3D bool
		want           []string
	}{
		{"no grid", false, false, nil},
		{"2-D grid", true, false, corners},
		{"3-D grid", false, true, octants},
		{"both", true, true, append(slices.Clone(corners), octants...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Profile{
				Callpaths: []Callpath{
					{Parent: -1, Region: RegionInfo{Name: "main", Paradigm: otf2.ParadigmCompiler, Role: otf2.RoleFunction}},
					{Parent: 0, Region: RegionInfo{Name: "MPI_Recv", Paradigm: otf2.ParadigmMPI, Role: otf2.RolePoint2Point}},
				},
				Locations: []localtrace.Placement{{Rank: 0}},
				Values: map[string][][]float64{"time": {{1}, {2}}, "mpi_latesender": {nil, {1}},
					"mpi_latesender_refill_swb": {nil, {0.5}}},
				Grid2D: tc.grid2D, Grid3D: tc.grid3D,
			}
			d := Derive(p)
			var got []string
			for _, m := range d.Metrics {
				if strings.HasPrefix(m.Unique, "mpi_latesender_refill_") {
					got = append(got, m.Unique)
					if m.Parent != "mpi_latesender" || !m.Own {
						t.Errorf("%s: parent %s, own %v", m.Unique, m.Parent, m.Own)
					}
				}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("refill metrics (-want +got):\n%s", diff)
			}
			if v := d.Values["mpi_latesender_refill_swb"]; tc.grid3D != (v != nil && v[1][0] == 0.5) {
				t.Errorf("mpi_latesender_refill_swb: %v", v)
			}
		})
	}
}
