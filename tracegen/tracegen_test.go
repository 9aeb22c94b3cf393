package tracegen

import (
	"bufio"
	"math"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"scout/localtrace"
	"scout/localtrace/otf2"
	"scout/patterns"
)

const ms = time.Millisecond

var scenarios = map[string]Scenario{
	"late_sender": {Locations: 4, Iterations: 3, Phases: []Phase{{Kind: LateSender, Work: ms, Delay: 10 * ms}}},
	"early_receiver": {Locations: 2, Iterations: 2, Gap: 100 * time.Nanosecond,
		Phases: []Phase{{Kind: LateSender, Work: ms, Imbalance: 50 * time.Nanosecond}}},
	"mixed": {Program: "mixed_app", Locations: 5, Iterations: 4, Seed: 7, Phases: []Phase{
		{Kind: Compute, Work: 2 * ms, Imbalance: ms / 2, Jitter: ms},
		{Kind: LateSender, Work: ms, Delay: 3 * ms, Jitter: ms / 3},
		{Kind: Ring, Work: ms, Delay: 2 * ms, Jitter: ms},
		{Kind: Allreduce, Work: ms, Imbalance: ms},
		{Kind: Barrier, Work: ms, Imbalance: ms, Jitter: ms / 7},
		{Kind: Bcast, Work: ms, Delay: 4 * ms, Jitter: ms},
		{Kind: Allreduce, Name: "wait_nxn", Work: ms, Delay: ms},
	}},
	"single": {Locations: 1, Iterations: 5, Phases: []Phase{{Kind: Compute, Work: ms}, {Kind: Allreduce, Work: ms},
		{Kind: Bcast, Work: ms}}},
	"chunked": {Locations: 3, Iterations: 2000, ChunkSize: 4096, Workers: 2,
		Phases: []Phase{{Kind: Ring, Work: ms, Jitter: ms}, {Kind: Barrier, Work: ms, Imbalance: ms}}},
	// every kind added after Bcast, with two grids of each shape
	"grids": {Locations: 12, Iterations: 3, Seed: 11, Phases: []Phase{
		{Kind: Reduce, Work: ms, Imbalance: ms}, {Kind: Gather, Work: ms, Jitter: ms},
		{Kind: Scatter, Work: ms, Delay: ms, Jitter: ms}, {Kind: Scan, Work: ms, Delay: ms, Jitter: ms},
		{Kind: Allgather, Work: ms, Imbalance: ms}, {Kind: Alltoall, Work: ms, Jitter: ms},
		{Kind: LateSenderNB, Work: ms, Delay: 3 * ms},
		{Kind: Halo2D, Work: ms, Jitter: ms}, {Kind: Halo2D, Name: "halo_6x2", Work: ms, Jitter: ms, Dims: []int{6, 2}},
		{Kind: Halo3D, Work: ms, Imbalance: ms / 10, Jitter: ms},
		{Kind: Wavefront, Work: ms, Jitter: ms}, {Kind: Wavefront, Name: "sweep", Work: ms, Dims: []int{2, 6}},
		{Kind: MasterWorker, Work: ms, Imbalance: ms / 10, Jitter: ms},
		{Kind: RowAllreduce, Work: ms, Jitter: ms}, {Kind: RowAllreduce, Name: "rows", Work: ms, Jitter: ms, Dims: []int{1, 12}},
	}},
	// communicators made and freed, no iteration
	"grids_idle": {Locations: 4, Phases: []Phase{{Kind: Halo2D}, {Kind: RowAllreduce}, {Kind: LateSenderNB}}},
}

// TestGenerate reads generated archives back and checks the event counts
// and the profile (time and visits per call path and rank) against the
// summary's closed form.
func TestGenerate(t *testing.T) {
	for name, sc := range scenarios {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			sum, err := Generate(dir, sc)
			if err != nil {
				t.Fatal(err)
			}
			checkProfile(t, dir, sum)
		})
	}
}

func checkProfile(t *testing.T, dir string, sum *Summary) {
	t.Helper()
	a, err := otf2.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := a.ReadGlobalDefs()
	if err != nil {
		t.Fatal(err)
	}
	if len(defs.Locations) != len(sum.Events) || a.Anchor.NumLocations != uint64(len(sum.Events)) {
		t.Fatalf("%d locations (anchor %d), summary has %d", len(defs.Locations), a.Anchor.NumLocations, len(sum.Events))
	}
	for r, l := range defs.Locations {
		if l.NumEvents != sum.Events[r] {
			t.Errorf("location %d: numberOfEvents %d, summary %d", r, l.NumEvents, sum.Events[r])
		}
		tr, err := localtrace.Load(a, defs, l.Self) // checks the count against numberOfEvents
		if err != nil {
			t.Fatal(err)
		}
		times, visits := patterns.Profile(tr)
		gotTime, gotVisits := map[string]float64{}, map[string]uint64{}
		for cp := range tr.Callpaths {
			path := callpathName(defs, tr, uint32(cp))
			if _, dup := gotTime[path]; dup {
				t.Errorf("rank %d: call path %s listed twice", r, path)
			}
			gotTime[path] = times[cp]
			gotVisits[path] = visits[cp]
		}
		seen := map[string]bool{}
		for path, got := range gotTime {
			seen[path] = true
			want, ok := sum.Time[path]
			if !ok {
				t.Errorf("rank %d: unexpected call path %s", r, path)
				continue
			}
			if math.Abs(got-want[r]) > 1e-9 {
				t.Errorf("rank %d: %s: time %.12f, want %.12f", r, path, got, want[r])
			}
			if gotVisits[path] != sum.Visits[path][r] {
				t.Errorf("rank %d: %s: visits %d, want %d", r, path, gotVisits[path], sum.Visits[path][r])
			}
		}
		for _, path := range sum.Callpaths {
			if !seen[path] && (sum.Visits[path][r] != 0 || sum.Time[path][r] != 0) {
				t.Errorf("rank %d: call path %s missing", r, path)
			}
		}
	}
}

func callpathName(d *otf2.Defs, tr *localtrace.Trace, cp uint32) string {
	var parts []string
	for ; cp != localtrace.None; cp = tr.Callpaths[cp].Parent {
		r, _ := d.Region(tr.Callpaths[cp].Region)
		parts = append(parts, d.Str(r.Name))
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, "/")
}

// TestWaits checks the closed-form wait states of simple scenarios.
func TestWaits(t *testing.T) {
	sum, err := Generate(t.TempDir(), scenarios["late_sender"])
	if err != nil {
		t.Fatal(err)
	}
	ls := sum.Waits["mpi_latesender"]["tracegen/main/late_sender/MPI_Recv"]
	if len(ls) != 4 || math.Abs(ls[1]-0.030) > 1e-12 || ls[0] != 0 || ls[2] != 0 {
		t.Errorf("late sender = %v, want 3 × 10 ms on rank 1", ls)
	}
	sum, err = Generate(t.TempDir(), Scenario{Locations: 4, Iterations: 2,
		Phases: []Phase{{Kind: Allreduce, Imbalance: ms}, {Kind: Bcast, Delay: 5 * ms}}})
	if err != nil {
		t.Fatal(err)
	}
	nxn := sum.Waits["mpi_wait_nxn"]["tracegen/main/wait_nxn/MPI_Allreduce"]
	for r, w := range nxn {
		if want := 2 * float64(3-r) * 1e-3; math.Abs(w-want) > 1e-12 {
			t.Errorf("wait at NxN rank %d = %g, want %g", r, w, want)
		}
	}
	lb := sum.Waits["mpi_latebroadcast"]["tracegen/main/late_broadcast/MPI_Bcast"]
	for r, w := range lb {
		if want := 0.010 * float64(min(r, 1)); math.Abs(w-want) > 1e-12 {
			t.Errorf("late broadcast rank %d = %g, want %g", r, w, want)
		}
	}
}

func TestDeterministic(t *testing.T) {
	sc := scenarios["mixed"]
	a, err := Generate(t.TempDir(), sc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(t.TempDir(), sc)
	if err != nil {
		t.Fatal(err)
	}
	cp := "mixed_app/main/compute_phase/compute"
	if a.Time[cp][2] != b.Time[cp][2] {
		t.Error("same seed, different traces")
	}
	sc.Seed++
	c, err := Generate(t.TempDir(), sc)
	if err != nil {
		t.Fatal(err)
	}
	if a.Time[cp][2] == c.Time[cp][2] {
		t.Error("another seed, same jitter")
	}
}

func TestBadScenarios(t *testing.T) {
	for name, sc := range map[string]Scenario{
		"no ranks":       {},
		"negative iters": {Locations: 2, Iterations: -1},
		"p2p on 1 rank":  {Locations: 1, Phases: []Phase{{Kind: Ring}}},
		"bad kind":       {Locations: 2, Phases: []Phase{{Kind: 42}}},
		"negative work":  {Locations: 2, Phases: []Phase{{Work: -1}}},
		"tiny chunks":    {Locations: 2, ChunkSize: 8},
		"grid too small": {Locations: 6, Phases: []Phase{{Kind: Halo2D, Dims: []int{2, 2}}}},
		"grid of 2-D":    {Locations: 8, Phases: []Phase{{Kind: Halo3D, Dims: []int{4, 2}}}},
		"grid of 0":      {Locations: 4, Phases: []Phase{{Kind: Wavefront, Dims: []int{0, 4}}}},
		"no grid kind":   {Locations: 4, Phases: []Phase{{Kind: Allreduce, Dims: []int{2, 2}}}},
		"halo on 1 rank": {Locations: 1, Phases: []Phase{{Kind: Halo2D}}},
		"master alone":   {Locations: 1, Phases: []Phase{{Kind: MasterWorker}}},
		"octant on 2-D":  {Locations: 4, Phases: []Phase{{Kind: Wavefront, Sweeps: []Corner{NW, SEB}}}},
		"corner on 3-D":  {Locations: 8, Phases: []Phase{{Kind: Wavefront3D, Sweeps: []Corner{SE}}}},
		"no corner":      {Locations: 8, Phases: []Phase{{Kind: Wavefront3D, Sweeps: []Corner{5}}}},
		"sweep 3-D of 2": {Locations: 8, Phases: []Phase{{Kind: Wavefront3D, Dims: []int{4, 2}}}},
		"sweeps of halo": {Locations: 8, Phases: []Phase{{Kind: Halo3D, Sweeps: []Corner{NWF}}}},
	} {
		if _, err := Generate(t.TempDir(), sc); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

var eventLine = regexp.MustCompile(`^[A-Z_]+ +\d+ +\d+`)

// TestOtf2Print validates generated archives with the OTF2 library.
func TestOtf2Print(t *testing.T) {
	if _, err := exec.LookPath("otf2-print"); err != nil {
		t.Skip("otf2-print not installed")
	}
	for _, name := range []string{"mixed", "grids"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			sum, err := Generate(dir, scenarios[name])
			if err != nil {
				t.Fatal(err)
			}
			otf2Print(t, dir, sum)
		})
	}
}

// otf2Print runs otf2-print on the archive in dir, which must print
// sum's events without warnings.
func otf2Print(t *testing.T, dir string, sum *Summary) {
	t.Helper()
	anchor := filepath.Join(dir, "traces.otf2")
	if out, err := exec.Command("otf2-print", "-A", "--silent", "-Werror", anchor).CombinedOutput(); err != nil {
		t.Fatalf("otf2-print -A: %v\n%s", err, out)
	}
	out, err := exec.Command("otf2-print", "-Werror", anchor).Output()
	if err != nil {
		t.Fatalf("otf2-print: %v", err)
	}
	var n uint64
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if eventLine.MatchString(sc.Text()) {
			n++
		}
	}
	if n != sum.TotalEvents() {
		t.Errorf("otf2-print printed %d events, want %d", n, sum.TotalEvents())
	}
}

func TestDimsCreate(t *testing.T) {
	for _, tc := range []struct {
		n, d int
		want string
	}{{1, 2, "1x1"}, {2, 2, "2x1"}, {4, 2, "2x2"}, {6, 2, "3x2"}, {7, 2, "7x1"}, {12, 2, "4x3"}, {16, 2, "4x4"},
		{2, 3, "2x1x1"}, {8, 3, "2x2x2"}, {12, 3, "3x2x2"}, {18, 3, "3x3x2"}, {24, 3, "4x3x2"}, {36, 3, "4x3x3"},
		{64, 3, "4x4x4"}, {97, 3, "97x1x1"}, {1 << 20, 3, "128x128x64"}} {
		if got := gridName(dimsCreate(tc.n, tc.d)); got != tc.want {
			t.Errorf("dimsCreate(%d, %d) = %s, want %s", tc.n, tc.d, got, tc.want)
		}
	}
}

func TestNeighbours(t *testing.T) {
	dims := []int{3, 4} // rank 5 = (1,1)
	if got := neighbours(dims, 5, nil); !slices.Equal(got, []int{1, 9, 4, 6}) {
		t.Errorf("neighbours of (1,1) in 3x4: %v", got)
	}
	if got := neighbours([]int{2, 2, 2}, 7, nil); !slices.Equal(got, []int{3, 5, 6}) {
		t.Errorf("neighbours of (1,1,1) in 2x2x2: %v", got)
	}
}
