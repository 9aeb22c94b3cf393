// Package tracegen writes synthetic Score-P-like OTF2 traces of MPI
// programs (and hybrid MPI+OpenMP programs) with known wait states, and
// the closed-form analysis results they must give.
//
// A Scenario runs its phases one after the other, each for the same number
// of iterations, on N ranks (one location each). Every iteration of a
// phase starts at the same time on all ranks; inside it each rank enters
// the phase's region, computes (region "compute") for a time that may
// depend on the rank, and communicates (most kinds after computing; the
// timelines are at gen.iterLength). Records of one rank are Gap ticks
// apart unless a rank waits. Timestamps are nanoseconds (timer resolution
// 1 GHz) and the clocks are synchronous, so the wait states follow from
// the compute times alone.
//
// The grid kinds (Halo2D, Halo3D, Wavefront, Wavefront3D, RowAllreduce) run on a
// Cartesian process grid. Their communicators (MPI_Cart_create with a
// Cartesian topology definition, or MPI_Comm_split into the grid's rows)
// are made once after MPI_Comm_size and freed before MPI_Finalize, so
// that the definitions do not grow with the iterations.
package tracegen

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync"
	"time"

	"scout/localtrace/otf2"
)

// Kind selects what the ranks do in a phase after computing.
type Kind int

// Phase kinds.
const (
	// Compute: only computation; imbalance shows as different compute times.
	Compute Kind = iota
	// LateSender: rank 0 sends a message to rank 1 (MPI_Send, MPI_Recv);
	// with Delay d, rank 1 waits d per message (Late Sender).
	LateSender
	// Ring: every rank calls MPI_Sendrecv, sending to rank+1 and receiving
	// from rank-1; a receiver whose left neighbour computed longer waits
	// for it (Late Sender).
	Ring
	// Allreduce: MPI_Allreduce over MPI_COMM_WORLD; each rank waits for the
	// last one to enter (Wait at N x N).
	Allreduce
	// Barrier: MPI_Barrier over MPI_COMM_WORLD (Wait at Barrier).
	Barrier
	// Bcast: MPI_Bcast from root 0; ranks entering before the root wait
	// for it (Late Broadcast).
	Bcast
	// Reduce: MPI_Reduce to root 0; the root waits for the last rank to
	// enter (Early Reduce). The other ranks leave at once.
	Reduce
	// Gather: MPI_Gather to root 0 (Early Reduce, as Reduce).
	Gather
	// Scatter: MPI_Scatter from root 0 (Late Broadcast, as Bcast).
	Scatter
	// Scan: MPI_Scan; rank r waits for the last of ranks 0..r to enter
	// (Early Scan).
	Scan
	// Allgather: MPI_Allgather (Wait at N x N, as Allreduce).
	Allgather
	// Alltoall: MPI_Alltoall (Wait at N x N, as Allreduce).
	Alltoall
	// LateSenderNB: LateSender with non-blocking calls: rank 1 posts
	// MPI_Irecv before computing and waits in MPI_Wait; rank 0 sends with
	// MPI_Isend and MPI_Wait (Late Sender in rank 1's MPI_Wait).
	LateSenderNB
	// Halo2D: halo exchange on a non-periodic 2-D Cartesian grid: every
	// rank posts MPI_Irecv from and MPI_Isend to each neighbour, then
	// waits in MPI_Waitall (Late Sender: the largest wait of the call).
	Halo2D
	// Halo3D: Halo2D on a 3-D grid.
	Halo3D
	// Wavefront: 2-D wavefront sweep: rank (i,j) receives from (i-1,j)
	// and (i,j-1) (MPI_Recv), computes, and sends to (i+1,j) and (i,j+1)
	// (MPI_Send); the waits propagate along the longest path. With
	// Phase.Sweeps the iterations sweep from other corners too, and a
	// change of corner refills the pipeline (mpi_latesender_refill_*).
	Wavefront
	// Wavefront3D: Wavefront on a 3-D grid: rank (i,j,k) receives from
	// (i-1,j,k), (i,j-1,k) and (i,j,k-1), computes, and sends to
	// (i+1,j,k), (i,j+1,k) and (i,j,k+1), as SWEEP3D decomposed in three
	// dimensions; Phase.Sweeps over the octant corners (NWF … SEB).
	Wavefront3D
	// MasterWorker: rank 0 computes and sends a task to every worker;
	// each worker computes and sends its result back; rank 0 receives
	// the results in rank order (Late Sender on both sides).
	MasterWorker
	// RowAllreduce: MPI_Allreduce on the row communicators of a 2-D grid
	// made by MPI_Comm_split (Wait at N x N per row).
	RowAllreduce
	// DelayChain: a chain of Late Senders for the root-cause analysis:
	// rank 0 computes and sends to rank 1; every rank r > 0 computes,
	// receives from rank r-1 (MPI_Recv) and then sends to rank r+1
	// (MPI_Send; the last rank only receives). With Delay d on rank 0,
	// rank 1 waits d and passes the wait on down the chain: its summary
	// includes the delay costs and the propagation of the waits.
	DelayChain
	// DelayBarrier: Barrier with the closed form of its delay costs
	// (delay_barrier, on the last rank to enter).
	DelayBarrier
	// DelayNxN: Allreduce with the closed form of its delay costs
	// (delay_n2n, on the last rank to enter).
	DelayNxN
	// OmpParallel: an imbalanced OpenMP parallel region: the master forks
	// a team of all the rank's threads; thread t computes Work +
	// t×Imbalance, then waits in the implicit barrier at the region's end
	// (omp_ibarrier_wait; the fork and join give omp_fork and
	// omp_management, see Phase.Lag).
	OmpParallel
	// OmpBarrier: OmpParallel with an explicit barrier ("!$omp barrier")
	// between two computations: thread t computes Work + t×Imbalance,
	// waits in the barrier (omp_ebarrier_wait), computes the time of
	// thread T−1−t and waits in the implicit barrier (omp_ibarrier_wait).
	OmpBarrier
	// OmpCritical: in a parallel region every thread enters the same
	// critical section ("!$omp critical") and computes in it for its time
	// (Work + t×Imbalance), in thread order (the lock's acquisition order
	// is the thread order): thread t waits for thread t−1's release
	// (omp_lock_contention_critical).
	OmpCritical
	// OmpLock: OmpCritical with the lock API: the master makes a lock
	// (omp_init_lock) before the region and frees it (omp_destroy_lock)
	// after; every thread computes between omp_set_lock and
	// omp_unset_lock, in thread order (omp_lock_contention_api).
	OmpLock
	numKinds
)

var kindNames = [numKinds]string{"compute_phase", "late_sender", "sendrecv_ring", "wait_nxn", "wait_barrier", "late_broadcast",
	"early_reduce", "early_gather", "late_scatter", "early_scan", "wait_allgather", "wait_alltoall", "late_sender_nb",
	"halo_2d", "halo_3d", "wavefront_2d", "wavefront_3d", "master_worker", "subcomm_nxn", "delay_chain",
	"delay_barrier", "delay_nxn", "omp_parallel", "omp_barrier", "omp_critical", "omp_lock"}

// String returns the default region name of the phase kind.
func (k Kind) String() string {
	if k < 0 || k >= numKinds {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// Phase is one phase of a scenario. Rank r computes, per iteration,
// Work + r×Imbalance, plus Delay on rank 0, plus a jitter in [0, Jitter)
// drawn once per phase and rank from the scenario's seed. In the OpenMP
// kinds thread t of rank r computes Work + t×Imbalance, plus Delay on
// rank 0, plus a jitter drawn once per phase, rank and thread.
type Phase struct {
	Kind      Kind
	Name      string // region name of the phase; default Kind.String()
	Work      time.Duration
	Imbalance time.Duration
	Delay     time.Duration
	Jitter    time.Duration
	// Lag is the OpenMP kinds' wake-up lag: thread t begins its part in
	// the team t×Lag after the master and leaves the implicit barrier at
	// the region's end t×Lag after it (fixed gaps, so that omp_fork and
	// omp_management have a closed form). Only for the OpenMP kinds.
	Lag time.Duration
	// Dims is the process grid of Halo2D, Halo3D, Wavefront, Wavefront3D
	// and RowAllreduce (2 or 3 sizes whose product is the number of ranks;
	// ranks are numbered row-major, the last dimension varying fastest).
	// Empty: as MPI_Dims_create chooses, as square or cubic as possible.
	Dims []int
	// Sweeps are the corners the iterations of a Wavefront phase sweep
	// from, in turn (iteration k from Sweeps[k mod len(Sweeps)]), like
	// the octants of SWEEP3D; empty: all from the north-west corner
	// (rank 0; west and north are the low ends of dimensions 0 and 1).
	// A sweep from corner k runs as the north-west one on the grid
	// mirrored so that k is its north-west corner. Only for Wavefront
	// (NW, NE, SW, SE) and Wavefront3D (the octant corners NWF … SEB;
	// front is the low end of dimension 2; empty: all from NWF).
	Sweeps []Corner
}

// Scenario describes a synthetic trace.
type Scenario struct {
	Program    string // program name (program region); default "tracegen"
	Locations  int    // number of MPI ranks
	Threads    int    // OpenMP threads (locations) per rank; default 1: one location per rank
	Iterations int    // iterations of every phase
	Phases     []Phase
	Seed       uint64        // seed of the jitter
	Gap        time.Duration // time between consecutive records; default 1 µs
	ChunkSize  uint64        // event chunk size; default otf2.DefaultChunkSizeEvents
	Workers    int           // goroutines writing event files; default GOMAXPROCS
	// LocalDefs writes the archive as a measurement system does before
	// unification: no global definition file; each location's
	// traces/<loc>.def defines the strings, system tree, location group,
	// location, regions, groups, communicators and attribute it uses under
	// its own identifiers (a permutation drawn from Seed and the rank), and
	// its events carry those identifiers. The timer resolution is the
	// anchor property otf2.PropTimerResolution. unify.Definitions turns
	// such an archive into a normal one. A rank defines only the
	// communicators it belongs to, and no Cartesian topologies (which
	// unification does not support). A worker thread defines its
	// location (in its rank's location group), the regions it enters and
	// its thread team (the OpenMP groups and communicator), nothing of
	// MPI.
	LocalDefs bool
	// ClockOffset and ClockDrift skew the ranks' clocks: rank r (all its
	// threads) writes the time t as t + r×ClockOffset + r×ClockDrift×(t −
	// t0), t0 the program's begin, as unsynchronised clocks would
	// (messages then arrive before they were sent, on the clocks). The
	// summary describes the program without skew, which timestamp
	// correction approaches.
	ClockOffset time.Duration
	ClockDrift  float64 // seconds per second
}

// Summary reports what Generate wrote and what an analysis of the trace
// must find. Call paths are region names from the root (the program
// region) joined by "/", e.g. "tracegen/main/late_sender/MPI_Recv".
// Values are per location, indexed r×Threads + t for thread t of rank r
// (location id t<<32 | r; the rank itself without threads); Label gives
// the rank label of the location, "r" or "r.t".
type Summary struct {
	Dir        string   // archive directory (holding traces.otf2)
	Events     []uint64 // event records per location (numberOfEvents)
	Threads    int      // threads (locations) per rank
	Resolution uint64   // timer ticks per second
	Callpaths  []string // every call path, in first-visit order
	// Time is the exclusive time in seconds per call path and location;
	// Visits the number of visits.
	Time   map[string][]float64
	Visits map[string][]uint64
	// Waits holds the wait states per Scalasca metric ("mpi_latesender",
	// "mpi_latesender_wo", "mpi_lswo_different", "mpi_latereceiver",
	// "mpi_wait_nxn", "mpi_barrier_wait", "mpi_latebroadcast",
	// "mpi_earlyreduce", "mpi_earlyscan"; the Wavefront sweeps'
	// "mpi_latesender_refill_nw", "_ne", "_sw", "_se", the Wavefront3D
	// sweeps' "mpi_latesender_refill_nwf" … "_seb"; the OpenMP kinds' "omp_fork",
	// "omp_management", "omp_ebarrier_wait", "omp_ibarrier_wait",
	// "omp_lock_contention_critical", "omp_lock_contention_api"), call
	// path and location, in seconds. Metrics and call paths without
	// waiting time are absent. For the
	// scenarios whose root causes have a closed form (see delayExact)
	// it also holds the delay costs and the propagation of the waits:
	// "delay_latesender", "delay_latesender_longterm",
	// "mpi_wait_indirect_latesender", "mpi_wait_propagating_ls",
	// "delay_barrier", "delay_n2n" (all the other root-cause metrics of
	// those kinds are zero, and their long-term collective costs too);
	// not with Threads > 1, whose root causes (with the workers' idle and
	// barrier delays) have no closed form here.
	Waits map[string]map[string][]float64
}

// Label is the rank label of location index i: "r" for a rank's master
// thread, "r.t" for its thread t > 0.
func (s *Summary) Label(i int) string {
	nt := max(s.Threads, 1)
	if i%nt == 0 {
		return strconv.Itoa(i / nt)
	}
	return strconv.Itoa(i/nt) + "." + strconv.Itoa(i%nt)
}

// Location is the OTF2 location id of location index i.
func (s *Summary) Location(i int) uint64 {
	nt := max(s.Threads, 1)
	return uint64(i%nt)<<32 | uint64(i/nt)
}

// TotalEvents is the number of event records of all locations.
func (s *Summary) TotalEvents() uint64 {
	var n uint64
	for _, e := range s.Events {
		n += e
	}
	return n
}

const (
	startTicks = 1_000_000_000 // time of ProgramBegin
	resolution = 1_000_000_000 // ticks per second
	maxRanks   = 1 << 20
	maxThreads = 1 << 12 // per rank; and maxRanks locations in all
)

// Generate writes the archive of s into dir (dir/traces.otf2,
// dir/traces.def, dir/traces/; no traces.def with s.LocalDefs) and
// returns its summary. Event files are streamed with one chunk buffer per
// worker.
func Generate(dir string, s Scenario) (*Summary, error) {
	g, err := newGen(s)
	if err != nil {
		return nil, err
	}
	props := []otf2.Property{{Name: "OTF2::MPI_COMMUNICATION_COMPLETE", Value: "true"}}
	if s.LocalDefs {
		props = append(props, otf2.Property{Name: otf2.PropTimerResolution, Value: strconv.Itoa(resolution)})
		g.canon = g.defs()
	}
	aw, err := otf2.CreateArchive(dir, "traces", otf2.Anchor{ChunkSizeEvents: g.s.ChunkSize, Creator: "scout tracegen",
		Properties: props})
	if err != nil {
		return nil, fmt.Errorf("tracegen: %w", err)
	}
	sum := g.summary()
	sum.Dir = dir
	if err := g.writeEvents(aw, sum.Events); err != nil {
		return nil, err
	}
	if s.LocalDefs {
		err = aw.CloseLocal(uint64(g.n * g.nt))
	} else if err = aw.WriteGlobalDefs(g.defs()); err == nil {
		err = aw.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("tracegen: %w", err)
	}
	return sum, nil
}

// writeEvents writes the event and local definition files of all
// locations, checking each one's count against the closed form.
func (g *gen) writeEvents(aw *otf2.ArchiveWriter, want []uint64) error {
	workers := g.s.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	nloc := g.n * g.nt
	locs := make(chan int)
	errs := make([]error, nloc)
	var wg sync.WaitGroup
	for range min(workers, nloc) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range locs {
				errs[i] = g.writeLocation(aw, i/g.nt, i%g.nt, want[i])
			}
		}()
	}
	for i := range nloc {
		locs <- i
	}
	close(locs)
	wg.Wait()
	return errors.Join(errs...)
}

// writeLocation writes the files of thread th of rank r.
func (g *gen) writeLocation(aw *otf2.ArchiveWriter, r, th int, want uint64) error {
	loc := uint64(th)<<32 | uint64(r)
	ld := &otf2.LocalDefs{ClockOffsets: []otf2.ClockOffset{{Time: startTicks}, {Time: g.end}}}
	id := g.global
	if g.s.LocalDefs {
		id = g.localDefs(ld, r, th) // the Location's NumEvents is set below
	} else if err := aw.WriteLocalDefs(loc, ld); err != nil {
		return fmt.Errorf("tracegen: %w", err)
	}
	w, err := aw.CreateEvents(loc)
	if err != nil {
		return fmt.Errorf("tracegen: %w", err)
	}
	if g.s.ClockOffset != 0 || g.s.ClockDrift != 0 {
		off := float64(r) * float64(g.s.ClockOffset.Nanoseconds()) * resolution / 1e9
		drift := float64(r) * g.s.ClockDrift
		w.SetClock(func(t uint64) uint64 {
			return uint64(math.Round(float64(t) + off + drift*float64(t-startTicks)))
		})
	}
	who := fmt.Sprintf("rank %d", r)
	if th == 0 {
		err = g.rank(w, r, id)
	} else {
		who = fmt.Sprintf("rank %d thread %d", r, th)
		err = g.thread(w, r, th, id)
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("tracegen: %s: %w", who, err)
	}
	if w.Count() != want {
		return fmt.Errorf("tracegen: %s: wrote %d events, the closed form says %d (generator bug)", who, w.Count(), want)
	}
	if g.s.LocalDefs {
		ld.Defs.Locations[0].NumEvents = w.Count()
		if err := aw.WriteLocalDefs(loc, ld); err != nil {
			return fmt.Errorf("tracegen: %w", err)
		}
	}
	return nil
}
