package tracegen

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"scout/localtrace"
	"scout/localtrace/otf2"
	"scout/unify"
)

// hybrid is a scenario of every OpenMP kind and some MPI kinds on ranks
// of three threads.
var hybrid = Scenario{Locations: 3, Threads: 3, Iterations: 3, Seed: 4, Phases: []Phase{
	{Kind: OmpParallel, Work: ms, Imbalance: ms / 2, Lag: 10 * time.Microsecond},
	{Kind: LateSender, Work: ms, Delay: ms},
	{Kind: OmpBarrier, Work: ms, Imbalance: ms / 4, Jitter: ms},
	{Kind: OmpCritical, Work: ms / 2, Jitter: ms / 10, Lag: 20 * time.Microsecond},
	{Kind: Halo2D, Work: ms, Jitter: ms},
	{Kind: OmpLock, Work: ms / 5, Imbalance: ms / 10, Delay: ms},
}}

// openArchive opens the archive in dir and reads its global definitions
// and the places of its locations.
func openArchive(t *testing.T, dir string) (*otf2.Archive, *otf2.Defs, map[uint64]localtrace.Placement) {
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

// TestThreadsArchive checks the locations, event counts and thread
// records of a hybrid archive: every rank's location group holds its
// threads (ids thread<<32 | rank), the workers have events only inside
// the teams, the master forks and joins as often as every thread
// begins and ends a team.
func TestThreadsArchive(t *testing.T) {
	dir := t.TempDir()
	sum, err := Generate(dir, hybrid)
	if err != nil {
		t.Fatal(err)
	}
	a, defs, pl := openArchive(t, dir)
	if n := hybrid.Locations * hybrid.Threads; len(defs.Locations) != n || len(sum.Events) != n {
		t.Fatalf("%d locations, summary %d; want %d", len(defs.Locations), len(sum.Events), n)
	}
	teams := uint64(hybrid.Iterations * 4) // OpenMP phases × iterations
	for i, l := range defs.Locations {
		r, th := i/hybrid.Threads, i%hybrid.Threads
		if l.Self != sum.Location(i) || l.Self != uint64(th)<<32|uint64(r) || pl[l.Self] != (localtrace.Placement{Rank: r, Thread: th}) {
			t.Errorf("location %d: id %d, placement %+v; want thread %d of rank %d", i, l.Self, pl[l.Self], th, r)
		}
		if l.NumEvents != sum.Events[i] {
			t.Errorf("location %d: %d events, summary %d", l.Self, l.NumEvents, sum.Events[i])
		}
		if got, want := sum.Label(i), map[bool]string{true: "1.2", false: ""}[i == 5]; want != "" && got != want {
			t.Errorf("label of location index %d: %q, want %q", i, got, want)
		}
		counts := map[uint8]uint64{}
		er, err := a.OpenEvents(l.Self, nil)
		if err != nil {
			t.Fatal(err)
		}
		for {
			ev, err := er.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			counts[ev.Type]++
		}
		er.Close()
		if counts[otf2.EvThreadTeamBegin] != teams || counts[otf2.EvThreadTeamEnd] != teams {
			t.Errorf("location %d: %d team begins, %d ends; want %d", l.Self, counts[otf2.EvThreadTeamBegin],
				counts[otf2.EvThreadTeamEnd], teams)
		}
		forks := teams
		if th > 0 {
			forks = 0
			if counts[otf2.EvMpiSend]+counts[otf2.EvMpiRecv]+counts[otf2.EvProgramBegin] != 0 {
				t.Errorf("worker %d has MPI or program records: %v", l.Self, counts)
			}
		}
		if counts[otf2.EvThreadFork] != forks || counts[otf2.EvThreadJoin] != forks {
			t.Errorf("location %d: %d forks, %d joins; want %d", l.Self, counts[otf2.EvThreadFork], counts[otf2.EvThreadJoin], forks)
		}
		// per iteration 2 acquisitions and releases (critical, lock)
		if locks := uint64(hybrid.Iterations * 2); counts[otf2.EvThreadAcquireLock] != locks || counts[otf2.EvThreadReleaseLock] != locks {
			t.Errorf("location %d: %d acquisitions, %d releases; want %d", l.Self, counts[otf2.EvThreadAcquireLock],
				counts[otf2.EvThreadReleaseLock], locks)
		}
	}
}

// TestThreadsOtf2Print validates a hybrid archive with the OTF2 library.
func TestThreadsOtf2Print(t *testing.T) {
	if _, err := exec.LookPath("otf2-print"); err != nil {
		t.Skip("otf2-print not installed")
	}
	dir := t.TempDir()
	sum, err := Generate(dir, hybrid)
	if err != nil {
		t.Fatal(err)
	}
	otf2Print(t, dir, sum)
}

// TestThreadsLocalDefs checks a hybrid archive written before
// unification: a worker defines its location in its rank's location
// group, the OpenMP regions it enters and its team, and no MPI (a master
// its MPI communicators: world, self, the grid's, and its team); after
// unification the archive has the locations, teams and placements of
// the one with global definitions.
func TestThreadsLocalDefs(t *testing.T) {
	sc := hybrid
	sc.LocalDefs = true
	dir := t.TempDir()
	sum, err := Generate(dir, sc)
	if err != nil {
		t.Fatal(err)
	}
	a, err := otf2.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.Anchor.NumLocations != uint64(len(sum.Events)) {
		t.Errorf("anchor announces %d locations, want %d", a.Anchor.NumLocations, len(sum.Events))
	}
	for i := range sum.Events {
		loc := sum.Location(i)
		ld, err := a.ReadLocalDefs(loc)
		if err != nil {
			t.Fatal(err)
		}
		d := &ld.Defs
		if len(d.Locations) != 1 || d.Locations[0].Self != loc || d.Locations[0].NumEvents != sum.Events[i] {
			t.Errorf("location %d: defines %+v", loc, d.Locations)
		}
		var names []string
		for _, r := range d.Regions {
			names = append(names, d.Str(r.Name))
		}
		all := strings.Join(names, ",")
		worker := loc>>32 != 0
		if worker == strings.Contains(all, "MPI_") || !strings.Contains(all, "!$omp parallel") ||
			worker == strings.Contains(all, "omp_init_lock") || !strings.Contains(all, "omp_set_lock") {
			t.Errorf("location %d defines regions %s", loc, all)
		}
		teams := 0
		for _, g := range d.Groups {
			if g.Paradigm == otf2.ParadigmOpenMP && g.Type == otf2.GroupTypeCommGroup {
				teams++
			}
		}
		if comms := map[bool]int{true: 1, false: 4}[worker]; teams != 1 || len(d.Comms) != comms {
			t.Errorf("location %d: %d team groups, %d communicators; want 1 and %d", loc, teams, len(d.Comms), comms)
		}
	}
	if _, err := unify.Definitions(dir); err != nil {
		t.Fatal(err)
	}
	_, _, pl := openArchive(t, dir)
	for i := range sum.Events {
		loc := sum.Location(i)
		if want := (localtrace.Placement{Rank: i / sc.Threads, Thread: i % sc.Threads}); pl[loc] != want {
			t.Errorf("location %d: placement %+v, want %+v", loc, pl[loc], want)
		}
	}
}

// TestOneThread: Threads 1 writes the archive of Threads 0 (the default),
// an MPI-only trace, byte for byte.
func TestOneThread(t *testing.T) {
	read := func(sc Scenario) map[string][]byte {
		dir := t.TempDir()
		if _, err := Generate(dir, sc); err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				files[strings.TrimPrefix(p, dir)] = b
			}
			return nil
		})
		return files
	}
	for _, name := range []string{"mixed", "grids"} {
		sc := scenarios[name]
		want := read(sc)
		sc.Threads = 1
		got := read(sc)
		for f, b := range want {
			if !bytes.Equal(got[f], b) {
				t.Errorf("%s: %s differs with Threads 1", name, f)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d files with Threads 1, %d without", name, len(got), len(want))
		}
	}
}

func TestBadThreadScenarios(t *testing.T) {
	for name, sc := range map[string]Scenario{
		"negative threads":   {Locations: 2, Threads: -1},
		"too many threads":   {Locations: 2, Threads: maxThreads + 1},
		"too many locations": {Locations: maxRanks / 4, Threads: 8},
		"lag of MPI kind":    {Locations: 2, Phases: []Phase{{Kind: Allreduce, Lag: ms}}},
		"negative lag":       {Locations: 2, Threads: 2, Phases: []Phase{{Kind: OmpParallel, Lag: -1}}},
	} {
		if _, err := Generate(t.TempDir(), sc); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := ParsePhase("wait_nxn:lag=1ms"); err == nil || !strings.Contains(err.Error(), "OpenMP") {
		t.Errorf("lag of wait_nxn: error %v", err)
	}
	p, err := ParsePhase("lock:work=2ms,lag=3us")
	if err != nil || p.Kind != OmpLock || p.Work != 2*ms || p.Lag != 3*time.Microsecond {
		t.Errorf("ParsePhase(lock:work=2ms,lag=3us) = %+v, %v", p, err)
	}
	sc, err := ParseScenario(strings.NewReader("ranks 2\nthreads 4\nphase omp_critical\n"), "x")
	if err != nil || sc.Threads != 4 || sc.Phases[0].Kind != OmpCritical {
		t.Errorf("ParseScenario: %+v, %v", sc, err)
	}
}

// BenchmarkGenerateHybrid writes the hybrid benchmark trace, 4 ranks × 4
// threads and about 8 M events, as
//
//	scout tracegen -o DIR --ranks 4 --threads 4 --events 8000000 \
//	  --phase omp_barrier:work=100us,imbalance=20us,jitter=10us,lag=2us \
//	  --phase omp_critical:work=5us,lag=1us --phase omp_lock:work=5us,imbalance=1us \
//	  --phase wait_nxn:work=50us,imbalance=10us
//
// does, and reports the peak live heap (constant: the events stream).
// Run it explicitly: go test -bench GenerateHybrid -benchtime 1x ./tracegen
func BenchmarkGenerateHybrid(b *testing.B) {
	sc := Scenario{Locations: 4, Threads: 4, Seed: 1}
	for _, s := range []string{"omp_barrier:work=100us,imbalance=20us,jitter=10us,lag=2us", "omp_critical:work=5us,lag=1us",
		"omp_lock:work=5us,imbalance=1us", "wait_nxn:work=50us,imbalance=10us"} {
		p, err := ParsePhase(s)
		if err != nil {
			b.Fatal(err)
		}
		sc.Phases = append(sc.Phases, p)
	}
	benchGenerate(b, sc, 8_000_000)
}
