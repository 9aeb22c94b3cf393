package combine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/patterns"
)

// TestXsum checks the exact sum against sums whose float64 evaluation
// loses terms in some orders.
func TestXsum(t *testing.T) {
	tests := []struct {
		name string
		vals []float64
		want float64
	}{
		{"empty", nil, 0},
		{"cancellation", []float64{1e16, 1, -1e16}, 1},
		{"tenths", slices.Repeat([]float64{0.1}, 10), 1},
		{"tiny beside large", []float64{1, 1e-30, -1}, 1e-30},
		{"half-way, to even", []float64{1, 0x1p-53, 0x1p-106}, 1 + 0x1p-52},
		{"half-way, exact", []float64{1, 0x1p-53}, 1},
		{"durations", []float64{3e-6, 7e-9, 2.5e-3, 1e-9}, 0.002503008},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// every rotation of the order gives the same value
			for r := range max(1, len(tc.vals)) {
				var s xsum
				for i := range tc.vals {
					s.add(tc.vals[(i+r)%len(tc.vals)])
				}
				if got := s.value(); got != tc.want {
					t.Errorf("rotation %d: %v, want %v", r, got, tc.want)
				}
			}
		})
	}
}

// source returns the statistics source of the instances ins of one
// location, with bounds (nil: none).
func source(rank, thread int32, bounds []float64, ins []patterns.Instance) StatSource {
	s := StatSource{Rank: rank, Thread: thread, Statistics: patterns.NewStatistics()}
	copy(s.Bounds, bounds)
	for _, in := range ins {
		s.Add(in)
	}
	return s
}

// randomSources returns the instances of a made-up analysis: ranks with
// one or two threads, point-to-point waits, and collective operations
// with a wait on every member (some zero), ties included; and each
// source's instances in the order added.
func randomSources(rng *rand.Rand, ranks int) ([]StatSource, [][]patterns.Instance) {
	ls := uint8(slices.Index(patterns.StatPatterns, "mpi_latesender"))
	nxn := uint8(slices.Index(patterns.StatPatterns, "mpi_wait_nxn"))
	var (
		srcs []StatSource
		all  [][]patterns.Instance
	)
	for r := range ranks {
		for th := range 1 + r%2 {
			bounds := make([]float64, len(patterns.StatPatterns))
			bounds[ls] = 0.02
			var ins []patterns.Instance
			for i := range 50 + rng.IntN(50) {
				d := float64(1+rng.IntN(1000)) * 1e-6
				if i%7 == 0 {
					d = 1e-3 // ties
				}
				ins = append(ins, patterns.Instance{Pattern: ls, Enter: float64(i), Exit: float64(i) + 0.01, Duration: d,
					Callpath: uint32(rng.IntN(9)), Rank: int32(r), Coll: patterns.CollKey{Seq: -1}})
			}
			if th == 0 {
				for seq := range 40 {
					d := float64(rng.IntN(5)) * 1e-5
					ins = append(ins, patterns.Instance{Pattern: nxn, Enter: float64(seq) + float64(r)*1e-3, Exit: float64(seq) + 0.1, Duration: d,
						Callpath: uint32(10 + (seq+r)%3), Rank: int32(r), Coll: patterns.CollKey{Comm: uint32(seq % 2), Seq: int32(seq)}})
				}
			}
			srcs = append(srcs, source(int32(r), int32(th), bounds, ins))
			all = append(all, ins)
		}
	}
	return srcs, all
}

// statsSpread computes the statistics of srcs as processes that host
// blocks of ranks do (analysis.statisticsMPI): a merged basis, the
// collective aggregates at their owners, one part per process.
func statsSpread(srcs []StatSource, procs int) []PatternStats {
	var blocks [][]StatSource
	for _, s := range srcs {
		p := int(s.Rank) % procs
		for len(blocks) <= p {
			blocks = append(blocks, nil)
		}
		// ExchangeCollParts releases the instances: a copy of them
		st := *s.Statistics
		st.Colls = patterns.CollInstances{}
		for in := range s.Colls.All {
			st.Colls.Add(in)
		}
		s.Statistics = &st
		blocks[p] = append(blocks[p], s)
	}
	basis := NewStatBasis(nil)
	for _, b := range blocks {
		basis.Merge(NewStatBasis(b))
	}
	for len(blocks) < procs {
		blocks = append(blocks, nil) // processes without ranks take part too
	}
	// the processes exchange their parts at once, over channels, as
	// over MPI
	wire := make([][]chan []byte, procs) // from → to
	for p := range wire {
		wire[p] = make([]chan []byte, procs)
		for q := range wire[p] {
			wire[p][q] = make(chan []byte, 1)
		}
	}
	owned := make([][]CollPart, procs)
	errs := make([]error, procs)
	var wg sync.WaitGroup
	for me, b := range blocks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owned[me], errs[me] = ExchangeCollParts(b, procs, me, func(to, from int, b []byte) ([]byte, error) {
				wire[me][to] <- bytes.Clone(b)
				return <-wire[from][me], nil
			})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		panic(err)
	}
	all := newStatPart()
	for p := len(blocks) - 1; p >= 0; p-- {
		all.Merge(SummarizeStats(blocks[p], [][]CollPart{owned[p]}, basis))
	}
	return all.Stats(basis)
}

// TestStatsPlacement: the statistics do not depend on how the locations
// are spread over processes, nor on the order the parts merge in, nor
// on the goroutines that compute them.
func TestStatsPlacement(t *testing.T) {
	srcs, _ := randomSources(rand.New(rand.NewPCG(1, 2)), 7)
	want := StatsOf(srcs)
	if len(want) != 2 {
		t.Fatalf("%d patterns with statistics, want 2", len(want))
	}
	// on the caller's goroutine alone
	if d := cmp.Diff(want, StatsOn(srcs)); d != "" {
		t.Errorf("one goroutine (-workers +one):\n%s", d)
	}
	// the collective instances aggregated by three workers, and on the
	// caller's goroutine in groups, one after the other
	func() {
		defer func(w, m, g int) { collWorkers, minCollsPerWorker, serialCollGroups = w, m, g }(collWorkers, minCollsPerWorker, serialCollGroups)
		collWorkers, minCollsPerWorker = 3, 1
		if d := cmp.Diff(want, StatsOf(srcs)); d != "" {
			t.Errorf("three workers (-one +three):\n%s", d)
		}
		for _, g := range []int{2, 5} {
			serialCollGroups = g
			if d := cmp.Diff(want, StatsOn(srcs)); d != "" {
				t.Errorf("one goroutine, %d groups (-workers +groups):\n%s", g, d)
			}
		}
	}()
	for _, procs := range []int{1, 2, 3, 7} {
		if d := cmp.Diff(want, statsSpread(srcs, procs)); d != "" {
			t.Errorf("%d processes (-one +spread):\n%s", procs, d)
		}
	}
	// each round in chunks of one to three instances, so that the
	// processes send different numbers of chunks
	defer func(m int) { exchangeChunk = m }(exchangeChunk)
	for _, n := range []int{1, 3} {
		exchangeChunk = chunkHeader + n*instanceSize
		for _, procs := range []int{2, 3} {
			if d := cmp.Diff(want, statsSpread(srcs, procs)); d != "" {
				t.Errorf("%d processes, chunks of %d instances (-one +spread):\n%s", procs, n, d)
			}
		}
	}
}

// TestStatsDirect compares the statistics with a direct computation from
// all instances: sorted sum, two-pass variance, collective operations
// aggregated, most severe instance per call path by wait, then place.
func TestStatsDirect(t *testing.T) {
	srcs, all := randomSources(rand.New(rand.NewPCG(3, 4)), 5)
	got := StatsOf(srcs)
	for _, st := range got {
		p := uint8(slices.Index(patterns.StatPatterns, st.Pattern))
		var obs []float64
		agg := map[patterns.CollKey]*Severe{}
		var cands []*Severe
		for k, s := range srcs {
			for i, in := range all[k] {
				if in.Pattern != p {
					continue
				}
				if in.Duration > 0 {
					obs = append(obs, in.Duration)
				}
				c := &Severe{in, StatPos{s.Rank, s.Thread, int64(i)}}
				if in.Coll.Seq < 0 {
					cands = append(cands, c)
					continue
				}
				if a := agg[in.Coll]; a == nil {
					agg[in.Coll] = c
					cands = append(cands, c)
				} else {
					a.Duration += in.Duration
					a.Enter, a.Exit = min(a.Enter, in.Enter), max(a.Exit, in.Exit)
				}
			}
		}
		sort.Float64s(obs)
		sum := 0.0
		for _, v := range obs {
			sum += v
		}
		mean := sum / float64(len(obs))
		vr := 0.0
		for _, v := range obs {
			vr += (v - mean) * (v - mean)
		}
		vr /= float64(len(obs))
		if st.Count != len(obs) || st.Min != obs[0] || st.Max != obs[len(obs)-1] ||
			math.Abs(st.Sum-sum) > 1e-12*sum || math.Abs(st.Variance-vr) > 1e-9*vr {
			t.Errorf("%s: count %d min %v max %v sum %v variance %v, want %d %v %v %v %v", st.Pattern,
				st.Count, st.Min, st.Max, st.Sum, st.Variance, len(obs), obs[0], obs[len(obs)-1], sum, vr)
		}
		slices.SortStableFunc(cands, func(a, b *Severe) int {
			if math.Abs(a.Duration-b.Duration) > 1e-15 {
				return -cmpFloat(a.Duration, b.Duration)
			}
			return a.Pos.compare(b.Pos)
		})
		var want []patterns.Instance
		seen := map[uint32]bool{}
		for _, c := range cands {
			if len(want) < maxSevere && c.Duration > 0 && !seen[c.Callpath] {
				seen[c.Callpath] = true
				want = append(want, c.Instance)
			}
		}
		if d := cmp.Diff(want, st.Severe, cmp.Comparer(func(a, b patterns.Instance) bool {
			return a.Callpath == b.Callpath && a.Coll == b.Coll && a.Enter == b.Enter && a.Exit == b.Exit && math.Abs(a.Duration-b.Duration) < 1e-15
		})); d != "" {
			t.Errorf("%s: most severe instances (-direct +got):\n%s", st.Pattern, d)
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestChunkEncoding: the parts of single instances survive a chunk's
// encoding; a cut, extended or malformed chunk is an error, never a
// panic.
func TestChunkEncoding(t *testing.T) {
	srcs, _ := randomSources(rand.New(rand.NewPCG(7, 8)), 3)
	var want []onePart
	b := make([]byte, chunkHeader)
	for _, s := range srcs {
		i := 0
		for in := range s.Colls.All {
			pos := StatPos{s.Rank, s.Thread, int64(i)}
			want = append(want, instancePart(&in, pos))
			b = appendInstance(b, &in, pos)
			i++
		}
	}
	if len(want) < 10 {
		t.Fatalf("%d instances, want some more", len(want))
	}
	b[0] = 1
	binary.LittleEndian.PutUint32(b[1:], uint32(len(want)))
	var got []onePart
	more, err := decodeChunk(&got, b)
	if err != nil || !more {
		t.Fatalf("decodeChunk: more %v, error %v; want true, nil", more, err)
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(onePart{})); d != "" {
		t.Errorf("decoded parts differ (-sent +got):\n%s", d)
	}
	for _, cut := range []int{0, 1, chunkHeader, len(b) / 2, len(b) - 1} {
		if _, err := decodeChunk(&got, b[:cut]); err == nil {
			t.Errorf("%d of %d bytes decoded without an error", cut, len(b))
		}
	}
	if _, err := decodeChunk(&got, append(b, 0)); err == nil {
		t.Error("a trailing byte decoded without an error")
	}
	bad := slices.Clone(b)
	bad[0] = 2
	if _, err := decodeChunk(&got, bad); err == nil {
		t.Error("a bad flag decoded without an error")
	}
	binary.LittleEndian.PutUint32(bad[1:], 1<<31)
	if _, err := decodeChunk(&got, bad); err == nil {
		t.Error("a huge count decoded without an error")
	}
}

// TestCollPartsMerge: CollParts, which merges the locations one at a
// time, makes the parts that merging a part per instance makes
// (MergeCollParts), whatever order the locations found their instances
// in: several collective patterns and communicators, operations that
// only some locations take part in, a rank without collectives, threads,
// and ties of waits and places.
func TestCollPartsMerge(t *testing.T) {
	var colls []uint8
	for _, name := range []string{"mpi_wait_nxn", "mpi_nxn_completion", "mpi_latebroadcast", "mpi_barrier_wait"} {
		if i := slices.Index(patterns.StatPatterns, name); i >= 0 {
			colls = append(colls, uint8(i))
		}
	}
	if len(colls) < 2 {
		t.Fatalf("collective patterns %v", colls)
	}
	for _, order := range []string{"found in order", "reversed", "shuffled"} {
		t.Run(order, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, uint64(len(order))))
			var srcs []StatSource
			var want []CollPart
			for r := range 6 {
				for th := range 1 + r%2 {
					var ins []patterns.Instance
					if r != 3 {
						for seq := range 60 {
							if rng.IntN(5) == 0 && r > 0 {
								continue // an operation this location has no instance of
							}
							for _, p := range colls[:1+rng.IntN(len(colls))] {
								d := float64(rng.IntN(4)) * 1e-5 // ties
								ins = append(ins, patterns.Instance{Pattern: p, Enter: float64(seq) + float64(rng.IntN(3))*1e-3, Exit: float64(seq) + float64(rng.IntN(3))*1e-2,
									Duration: d, Callpath: uint32(rng.IntN(5)), Rank: int32(r), Coll: patterns.CollKey{Comm: uint32(seq % 3), Seq: int32(seq / 3)}})
							}
						}
					}
					switch order {
					case "reversed":
						slices.Reverse(ins)
					case "shuffled":
						rng.Shuffle(len(ins), func(i, j int) { ins[i], ins[j] = ins[j], ins[i] })
					}
					srcs = append(srcs, source(int32(r), int32(th), nil, ins))
					for i, in := range ins {
						one := instancePart(&in, StatPos{int32(r), int32(th), int64(i)})
						c := one.part()
						c.Wait = xsum{in.Duration}
						want = append(want, c)
					}
				}
			}
			want = MergeCollParts(want)
			// one worker, and three that take a few instances each
			defer func(w, m int) { collWorkers, minCollsPerWorker = w, m }(collWorkers, minCollsPerWorker)
			for _, workers := range []int{1, 3} {
				collWorkers, minCollsPerWorker = workers, 1
				groups := CollParts(srcs)
				if len(groups) != workers {
					t.Errorf("%d workers returned %d groups", workers, len(groups))
				}
				for _, g := range groups {
					if !slices.IsSortedFunc(g, comparePartKeys) {
						t.Errorf("%d workers: a group out of order", workers)
					}
				}
				got := slices.Concat(groups...)
				slices.SortFunc(got, comparePartKeys)
				opt := cmp.Comparer(func(a, b xsum) bool { return a.value() == b.value() })
				if d := cmp.Diff(want, got, opt, cmp.AllowUnexported(CollPart{})); d != "" {
					t.Errorf("%d workers: CollParts (-a part per instance, merged +CollParts):\n%s", workers, d)
				}
			}
		})
	}
}

// TestPartner: in the rounds of partner, every process meets every
// other exactly once, and a process's partner has it as its partner.
func TestPartner(t *testing.T) {
	for n := 1; n <= 9; n++ {
		met := map[[2]int]int{}
		for r := range rounds(n) {
			for p := range n {
				q := partner(p, r, n)
				if q < 0 || q >= n {
					t.Fatalf("n %d, round %d: process %d meets %d", n, r, p, q)
				}
				if back := partner(q, r, n); back != p {
					t.Errorf("n %d, round %d: %d meets %d, which meets %d", n, r, p, q, back)
				}
				if q != p {
					met[[2]int{p, q}]++
				}
			}
		}
		for p := range n {
			for q := range n {
				if want := min(1, abs(p-q)); met[[2]int{p, q}] != want {
					t.Errorf("n %d: %d met %d %d times, want %d", n, p, q, met[[2]int{p, q}], want)
				}
			}
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// BenchmarkExchangeCollParts aggregates the collective instances of an
// HPCG-like trace at M = 4 (ExchangeCollParts, four processes over
// channels): a rank per process, 66 666 N×N operations each with a wait
// and a completion instance on every rank.
func BenchmarkExchangeCollParts(b *testing.B) {
	const procs, ops = 4, 66666
	nxn := uint8(slices.Index(patterns.StatPatterns, "mpi_wait_nxn"))
	compl := uint8(slices.Index(patterns.StatPatterns, "mpi_nxn_completion"))
	rng := rand.New(rand.NewPCG(5, 6))
	sources := func() [][]StatSource {
		blocks := make([][]StatSource, procs)
		for r := range procs {
			s := source(int32(r), 0, nil, nil)
			for op := range ops {
				at := float64(op) * 1e-4
				key := patterns.CollKey{Comm: 0, Seq: int32(op)}
				s.Add(patterns.Instance{Pattern: nxn, Enter: at, Exit: at + 5e-5, Duration: float64(rng.IntN(50)) * 1e-6,
					Callpath: 7, Rank: int32(r), Coll: key})
				s.Add(patterns.Instance{Pattern: compl, Enter: at + 4e-5, Exit: at + 5e-5, Duration: 1e-6,
					Callpath: 7, Rank: int32(r), Coll: key})
			}
			blocks[r] = []StatSource{s}
		}
		return blocks
	}
	for b.Loop() {
		b.StopTimer()
		blocks := sources()
		wire := make([][]chan []byte, procs) // from → to
		for p := range wire {
			wire[p] = make([]chan []byte, procs)
			for q := range wire[p] {
				wire[p][q] = make(chan []byte, 1)
			}
		}
		b.StartTimer()
		var wg sync.WaitGroup
		for me := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				parts, err := ExchangeCollParts(blocks[me], procs, me, func(to, from int, b []byte) ([]byte, error) {
					wire[me][to] <- bytes.Clone(b)
					return <-wire[from][me], nil
				})
				if err != nil || len(parts) == 0 {
					panic(fmt.Sprint(len(parts), err))
				}
			}()
		}
		wg.Wait()
	}
}
