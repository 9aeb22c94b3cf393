package combine

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"iter"
	"maps"
	"math"
	"math/big"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"scout/internal/intern"
	"scout/patterns"
)

// The statistics file summarises every wait-state instance of the trace.
// Under MPI the instances stay where the analysis found them: every
// process summarises its own locations into a StatPart, parts merge in
// any order, and the process that writes the file holds parts, not
// instances. Three steps:
//
//  1. Every process computes the StatBasis of its locations (how many
//     observations each pattern has, and its bound); the bases merge
//     into one that all processes share.
//  2. The instances of a collective operation are aggregated over its
//     participants (CollParts); under MPI the partial aggregates of each
//     operation meet at one process, its owner.
//  3. Every process summarises its locations and the aggregates it owns
//     (SummarizeStats); the parts merge (StatPart.Merge) and give the
//     statistics (StatPart.Stats).
//
// Sums are exact until the end (xsum), so that the result does not depend
// on how the locations are spread over processes. What depends on an
// order is fixed by the locations' places: a rank's density estimate
// takes its observations location by location in thread order, and ties
// among the most severe instances go to the lower rank, thread and
// position in the location (StatPos).

// StatSource is what one location contributes to the statistics: its
// wait-state instances as patterns.Statistics collected them, with
// global call paths.
type StatSource struct {
	Rank, Thread int32
	*patterns.Statistics
}

// StatBasis is what the statistics of all locations agree on before
// any location's observations are summarised: by index into
// patterns.StatPatterns, the number of observations (waits longer than
// 0), the largest bound of the locations, and the largest observation
// (the scale of a pattern without a bound).
type StatBasis struct {
	Counts []int64
	Bounds []float64
	MaxObs []float64
}

// NewStatBasis returns the basis of srcs.
func NewStatBasis(srcs []StatSource) StatBasis {
	seal(srcs)
	n := len(patterns.StatPatterns)
	b := StatBasis{Counts: make([]int64, n), Bounds: make([]float64, n), MaxObs: make([]float64, n)}
	for _, s := range srcs {
		for i, v := range s.Bounds[:min(n, len(s.Bounds))] {
			b.Bounds[i] = max(b.Bounds[i], v)
		}
		for p, chunks := range s.Waits[:min(n, len(s.Waits))] {
			for _, chunk := range chunks {
				for _, v := range chunk {
					b.MaxObs[p] = max(b.MaxObs[p], v)
				}
				b.Counts[p] += int64(len(chunk))
			}
		}
	}
	return b
}

// Merge adds the basis of other locations to b.
func (b *StatBasis) Merge(o StatBasis) {
	for i := range b.Counts[:min(len(b.Counts), len(o.Counts))] {
		b.Counts[i] += o.Counts[i]
	}
	for i := range b.Bounds[:min(len(b.Bounds), len(o.Bounds))] {
		b.Bounds[i] = max(b.Bounds[i], o.Bounds[i])
	}
	for i := range b.MaxObs[:min(len(b.MaxObs), len(o.MaxObs))] {
		b.MaxObs[i] = max(b.MaxObs[i], o.MaxObs[i])
	}
}

// scale returns what pattern p's observations are multiplied by for the
// quantile estimate: one over its bound (see Report.Stats).
func (b *StatBasis) scale(p int) float64 {
	bound := b.Bounds[p]
	if !(bound > 0) {
		bound = b.MaxObs[p]
	}
	return 1 / bound
}

// StatPos is the place of an instance in the order of the statistics:
// by rank, thread and position in its location.
type StatPos struct {
	Rank, Thread int32
	Index        int64
}

func (a StatPos) compare(b StatPos) int {
	if c := cmp.Compare(a.Rank, b.Rank); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Thread, b.Thread); c != 0 {
		return c
	}
	return cmp.Compare(a.Index, b.Index)
}

// CollPart is the aggregate of some of the instances of one pattern in
// one collective operation: the sum of their waits, the earliest begin,
// the latest end, the rank that waited longest (the lowest of equals),
// and the call path of the first participant (StatPos).
type CollPart struct {
	partHead
	Wait    xsum
	MaxWait float64
	MaxRank int32
}

// partHead is what CollPart and onePart share: the pattern and the
// operation, the first participant and its call path, the earliest
// begin and the latest end.
type partHead struct {
	Pattern  uint8
	Key      patterns.CollKey
	First    StatPos
	Callpath uint32
	Enter    float64
	Exit     float64
}

func (c *CollPart) merge(o *CollPart) {
	if o.First.compare(c.First) < 0 {
		c.First, c.Callpath = o.First, o.Callpath
	}
	c.Enter = math.Min(c.Enter, o.Enter)
	c.Exit = math.Max(c.Exit, o.Exit)
	c.Wait.addSum(o.Wait)
	if o.MaxWait > c.MaxWait || (o.MaxWait == c.MaxWait && o.MaxRank < c.MaxRank) {
		c.MaxWait, c.MaxRank = o.MaxWait, o.MaxRank
	}
}

// CollParts aggregates the collective instances of srcs, one part per
// pattern and operation, in groups: the operations are spread over
// workers (collOwner), each of which returns its parts ordered as
// MergeCollParts orders them; srcs keep their instances. In each worker
// the location with the most instances comes first (its operations
// become the parts), the others join them (partJoin). (One worker took
// a sixth of the in-process wait-state analysis of an allreduce-heavy
// 8 M-event trace, while the other processor idled.)
func CollParts(srcs []StatSource) [][]CollPart { return collParts(srcs, 0) }

// collParts is CollParts on up to workers goroutines (0: GOMAXPROCS;
// 1: the caller's alone).
func collParts(srcs []StatSource, workers int) [][]CollPart {
	seal(srcs)
	order, total := collOrder(srcs)
	if total == 0 {
		return nil
	}
	if workers == 0 {
		workers = cmp.Or(collWorkers, runtime.GOMAXPROCS(0))
	}
	workers = max(1, min(workers, total/minCollsPerWorker))
	out := make([][]CollPart, workers)
	runWorkers(workers, func(w int) { out[w] = groupParts(srcs, order, w, workers) })
	return out
}

// collOrder returns the indexes of the sources with collective
// instances, the one with the most first (its operations become the
// parts, the others join them), and their number of instances.
func collOrder(srcs []StatSource) ([]int, int) {
	first, total := -1, 0
	for i, s := range srcs {
		total += s.Colls.Len()
		if first < 0 || s.Colls.Len() > srcs[first].Colls.Len() {
			first = i
		}
	}
	if total == 0 {
		return nil, 0
	}
	order := []int{first}
	for i, s := range srcs {
		if i != first && s.Colls.Len() > 0 {
			order = append(order, i)
		}
	}
	return order, total
}

// groupParts returns the parts of group w of n: the operations that
// collOwner gives it.
func groupParts(srcs []StatSource, order []int, w, n int) []CollPart {
	return (&partJoin{}).group(srcs, order, w, n)
}

// group is groupParts with j's buffers (empty, or those of a group whose
// parts are no longer used).
func (j *partJoin) group(srcs []StatSource, order []int, w, n int) []CollPart {
	j.acc, j.rest, j.sums = j.acc[:0], j.rest[:0], j.sums[:0]
	for _, k := range order {
		j.fill(srcs[k], func(op patterns.CollKey) bool { return n == 1 || collOwner(op, n) == w })
		j.join()
	}
	return j.parts()
}

// serialGroups yields the parts of the operations of srcs in n groups,
// each made on the caller's goroutine when the one before is done with:
// one group's parts at a time, not all operations' (48 of the root-cause
// bench trace's 272 MiB in-process, while its traces were held).
func serialGroups(srcs []StatSource, n int) iter.Seq[[]CollPart] {
	return func(yield func([]CollPart) bool) {
		seal(srcs)
		order, total := collOrder(srcs)
		if total == 0 {
			return
		}
		n = max(1, min(n, total/minCollsPerWorker))
		j := &partJoin{} // its buffers serve every group in turn
		for w := range n {
			if !yield(j.group(srcs, order, w, n)) {
				return
			}
		}
	}
}

// runWorkers runs work(0) to work(workers-1), each on a goroutine of its
// own and returns when all have, or work(0) on the caller's goroutine
// when workers is 1.
func runWorkers(workers int, work func(w int)) {
	if workers == 1 {
		work(0)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(w)
		}()
	}
	wg.Wait()
}

// CollParts has up to GOMAXPROCS workers (collWorkers, where set), each
// of which takes at least minCollsPerWorker instances (variables for
// the tests).
var (
	collWorkers       = 0
	minCollsPerWorker = 1 << 14
)

// partJoin aggregates collective instances, a batch at a time, into one
// part per pattern and operation. Mostly every location takes part in
// the same operations: the first batch's operations become the parts,
// and the instances of later batches join them in place, each batch put
// in order (fill, or sortParts for the chunks other processes send) and
// walked along the parts; instances of
// operations without a part meet in a list of their own, merged at the
// end. A part per instance of all locations, sorted, took a third of
// the in-process wait-state analysis of an allreduce-heavy 8 M-event
// trace of 4 ranks (100 MB of fresh memory, 0.2 s to make, 0.25 s to
// sort); the batches' buffers are reused, and made at their size at once
// (grown by append, the collector's assists on the new memory took
// 0.8 s).
type partJoin struct {
	buf  []onePart  // the batch to join
	tmp  []onePart  // sortParts' second buffer
	acc  []CollPart // the operations' parts, in order
	rest []CollPart // parts of operations acc lacks, in no order
	sums []float64  // room for the parts' sums, a few partials each
}

// room makes room for a batch of n parts in buf (empty).
func (j *partJoin) room(n int) {
	if cap(j.buf) < n {
		j.buf = make([]onePart, 0, n)
	}
}

// fill puts the parts of the instances of s that keep keeps into buf
// (empty), ordered by pattern, communicator and sequence number as join
// needs them: a first walk counts the instances of each pattern and
// communicator, a second puts each part at its place (partBuckets). A
// location finds the instances of one pattern on one communicator in
// the order of their operations, mostly, but those of several patterns
// interleaved: making the parts in the order found and sorting them
// (sortParts) moved every part once more.
func (j *partJoin) fill(s StatSource, keep func(op patterns.CollKey) bool) {
	var pb partBuckets
	for _, in := range s.Colls.Select(keep) {
		pb.count(in.Pattern, in.Coll.Comm)
	}
	total := pb.place()
	j.room(total)
	buf := j.buf[:total]
	for i, in := range s.Colls.Select(keep) {
		buf[pb.slot(in.Pattern, in.Coll.Comm)] = instancePart(&in, StatPos{s.Rank, s.Thread, int64(i)}) // its wait is MaxWait
	}
	pb.sortEach(buf)
	j.buf = buf
}

// partBuckets orders parts by pattern and communicator, counting them
// first (count), then handing out each one's place (slot) in the
// buckets' order; the parts of a bucket come in the order counted.
type partBuckets struct {
	keys    intern.Table[uint64] // pattern<<32 | communicator, by bucket
	n, next []int                // parts by bucket; the next place in each
}

// bucket returns the bucket of pattern and comm, made at the first
// sight of them.
func (pb *partBuckets) bucket(pattern uint8, comm uint32) int {
	b := int(pb.keys.Index(uint64(pattern)<<32 | uint64(comm)))
	if b == len(pb.n) {
		pb.n = append(pb.n, 0)
	}
	return b
}

// count counts a part of pattern on communicator comm.
func (pb *partBuckets) count(pattern uint8, comm uint32) { pb.n[pb.bucket(pattern, comm)]++ }

// place sets every bucket's first place, in the order of the keys, and
// returns the number of parts counted.
func (pb *partBuckets) place() int {
	pb.next = make([]int, len(pb.n))
	at := 0
	for _, b := range pb.keys.Order(cmp.Compare[uint64]) {
		pb.next[b] = at
		at += pb.n[b]
	}
	return at
}

// slot returns the place of the next part of pattern on comm.
func (pb *partBuckets) slot(pattern uint8, comm uint32) int {
	b := pb.bucket(pattern, comm)
	i := pb.next[b]
	pb.next[b]++
	return i
}

// sortEach sorts by sequence number the buckets of parts, once every part
// is in its place, where one is out of order.
func (pb *partBuckets) sortEach(parts []onePart) {
	for b, end := range pb.next {
		if seg := parts[end-pb.n[b] : end]; !slices.IsSortedFunc(seg, compareOnes) {
			slices.SortFunc(seg, compareOnes)
		}
	}
}

// own returns the part of b with a sum of its own, which later
// instances extend in place.
func (j *partJoin) own(b *onePart) CollPart {
	const n = 4 // room for partials (more move)
	if cap(j.sums)-len(j.sums) < n {
		j.sums = make([]float64, 0, 4*max(1<<10, cap(j.buf)))
	}
	at := len(j.sums)
	j.sums = j.sums[:at+n]
	c := b.part()
	c.Wait = append(xsum(j.sums[at:at:at+n]), b.Wait)
	return c
}

// join joins the batch in buf and empties it.
func (j *partJoin) join() {
	buf, spare := sortParts(j.buf, j.tmp)
	j.buf, j.tmp = buf[:0], spare
	if len(j.acc) == 0 && len(j.rest) == 0 { // the first batch with instances
		j.acc = slices.Grow(j.acc[:0], len(buf))
		for i := range buf {
			if n := len(j.acc); n > 0 && compareKeys(&j.acc[n-1], &buf[i]) == 0 {
				joinPart(&j.acc[n-1], &buf[i])
			} else {
				j.acc = append(j.acc, j.own(&buf[i]))
			}
		}
		return
	}
	acc, k := j.acc, 0
	for i := range buf {
		b := &buf[i]
		if k < len(acc) && compareKeys(&acc[k], b) < 0 {
			// the next operation, else a search of the rest
			if k+1 < len(acc) && compareKeys(&acc[k+1], b) >= 0 {
				k++
			} else {
				k += sort.Search(len(acc)-k, func(x int) bool { return compareKeys(&acc[k+x], b) >= 0 })
			}
		}
		if k < len(acc) && compareKeys(&acc[k], b) == 0 {
			joinPart(&acc[k], b)
		} else {
			j.rest = append(j.rest, j.own(b))
		}
	}
}

// parts returns the parts of all batches joined, ordered as
// MergeCollParts orders them.
func (j *partJoin) parts() []CollPart {
	if len(j.rest) > 0 {
		j.acc = mergeSortedParts(j.acc, MergeCollParts(j.rest))
		j.rest = nil
	}
	return j.acc
}

// sortParts orders parts as MergeCollParts does, using tmp (made anew if
// too small), and returns them and the other buffer. The
// parts go to their pattern and communicator's bucket in the order they
// come (partBuckets), and only a bucket out of order is sorted.
func sortParts(parts, tmp []onePart) ([]onePart, []onePart) {
	if slices.IsSortedFunc(parts, compareOnes) {
		return parts, tmp
	}
	var pb partBuckets
	for i := range parts {
		pb.count(parts[i].Pattern, parts[i].Key.Comm)
	}
	pb.place()
	if cap(tmp) < len(parts) {
		tmp = make([]onePart, len(parts))
	}
	tmp = tmp[:len(parts)]
	for i := range parts {
		tmp[pb.slot(parts[i].Pattern, parts[i].Key.Comm)] = parts[i]
	}
	pb.sortEach(tmp)
	return tmp, parts[:0]
}

// comparePartKeys orders parts by pattern, communicator and sequence
// number (MergeCollParts); 0 means the same operation.
func comparePartKeys(a, b CollPart) int {
	return compareKey(a.Pattern, a.Key, b.Pattern, b.Key)
}

// compareOnes orders the parts of single instances as comparePartKeys
// orders parts.
func compareOnes(a, b onePart) int {
	return compareKey(a.Pattern, a.Key, b.Pattern, b.Key)
}

// compareKeys compares the operations of part a and instance b as
// comparePartKeys does.
func compareKeys(a *CollPart, b *onePart) int {
	return compareKey(a.Pattern, a.Key, b.Pattern, b.Key)
}

// compareKey orders by pattern, communicator and sequence number.
func compareKey(p uint8, k patterns.CollKey, q uint8, l patterns.CollKey) int {
	if c := cmp.Compare(p, q); c != 0 {
		return c
	}
	if c := cmp.Compare(k.Comm, l.Comm); c != 0 {
		return c
	}
	return cmp.Compare(k.Seq, l.Seq)
}

// joinPart merges the instance of b into c.
func joinPart(c *CollPart, b *onePart) {
	o := b.part()
	c.merge(&o) // (its sum empty)
	c.Wait.add(b.Wait)
}

// mergeSortedParts returns the parts of a and b, both sorted and each of
// distinct operations, sorted, merging the parts of an operation that
// both have.
func mergeSortedParts(a, b []CollPart) []CollPart {
	out := make([]CollPart, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := comparePartKeys(a[i], b[j]); {
		case c < 0:
			out = append(out, a[i])
			i++
		case c > 0:
			out = append(out, b[j])
			j++
		default:
			p := a[i]
			p.merge(&b[j])
			out = append(out, p)
			i, j = i+1, j+1
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// seal completes the waits of srcs (patterns.Statistics.Seal).
func seal(srcs []StatSource) {
	for _, s := range srcs {
		s.Seal()
	}
}

// MergeCollParts merges the parts of each pattern and operation into
// one, in place, and returns them ordered by pattern, communicator and
// sequence number. Merging does not depend on the order of the parts,
// and sorting them needs no index beside them (a map per pattern took
// as much memory again as the parts).
func MergeCollParts(parts []CollPart) []CollPart {
	slices.SortFunc(parts, comparePartKeys)
	k := 0
	for i := range parts {
		if k > 0 && parts[k-1].Pattern == parts[i].Pattern && parts[k-1].Key == parts[i].Key {
			parts[k-1].merge(&parts[i])
			continue
		}
		parts[k] = parts[i]
		k++
	}
	clear(parts[k:])
	return parts[:k]
}

// collOwner returns which of procs processes aggregates the instances of
// collective operation key, of all patterns (a hash, so that the
// operations of one communicator spread; the instances of one
// operation on a location follow one another, CollInstances.Select).
func collOwner(key patterns.CollKey, procs int) int {
	h := uint64(key.Comm)*0x9e3779b97f4a7c15 ^ uint64(uint32(key.Seq))*0xc2b2ae3d27d4eb4f
	h ^= h >> 29
	return int(h % uint64(procs))
}

// Severe is a candidate for the list of a pattern's most severe
// instances, with its place in the order of the statistics.
type Severe struct {
	patterns.Instance
	Pos StatPos
}

// before orders the candidates: longest wait first, then by place.
func (a *Severe) before(b *Severe) bool {
	if a.Duration != b.Duration {
		return a.Duration > b.Duration
	}
	return a.Pos.compare(b.Pos) < 0
}

// PatternPart is what some locations contribute to one pattern's
// statistics.
type PatternPart struct {
	Count    int64
	Min, Max float64
	// Sum and Squares are the exact sums of the observations and of
	// their squares.
	Sum, Squares xsum
	// Est is the sum of the locations' density estimates, each weighted
	// by its share of all observations (StatBasis.Counts).
	Est estimateSum
	// Severe holds the most severe instance of each call path, at most
	// maxSevere of them.
	Severe []Severe
}

// StatPart is what some locations contribute to the statistics, by
// index into patterns.StatPatterns.
type StatPart struct {
	Patterns []PatternPart
}

func newStatPart() StatPart {
	p := StatPart{Patterns: make([]PatternPart, len(patterns.StatPatterns))}
	for i := range p.Patterns {
		p.Patterns[i].Min = math.Inf(1)
	}
	return p
}

// SummarizeStats summarises srcs, which hold every location of their
// ranks, and the collective aggregates colls, which must be complete
// (every participant's instance merged), on the basis all parts share.
// It computes the ranks' density estimates in parallel.
func SummarizeStats(srcs []StatSource, colls [][]CollPart, basis StatBasis) StatPart {
	return summarizeStats(srcs, slices.Values(colls), basis, 0)
}

// summarizeStats is SummarizeStats on up to workers goroutines (0:
// GOMAXPROCS; 1: the caller's alone), with the collective aggregates in
// groups that it takes one after the other.
func summarizeStats(srcs []StatSource, colls iter.Seq[[]CollPart], basis StatBasis, workers int) StatPart {
	seal(srcs)
	srcs = slices.Clone(srcs)
	slices.SortStableFunc(srcs, func(a, b StatSource) int { return StatPos{a.Rank, a.Thread, 0}.compare(StatPos{b.Rank, b.Thread, 0}) })
	var ranks [][]StatSource // the sources of one rank, in thread order
	for i, s := range srcs {
		if i == 0 || s.Rank != srcs[i-1].Rank {
			ranks = append(ranks, nil)
		}
		ranks[len(ranks)-1] = append(ranks[len(ranks)-1], s)
	}
	np := len(patterns.StatPatterns)
	scales := make([]float64, np)
	for p := range scales {
		scales[p] = basis.scale(p)
	}
	// Every worker sums into a part of its own; the sums are exact, so
	// the merged part does not depend on which worker took which rank.
	workers = max(1, min(cmp.Or(workers, runtime.GOMAXPROCS(0)), len(ranks)))
	parts := make([]StatPart, workers)
	best := make([][]map[uint32]Severe, workers) // by pattern: call path → most severe instance
	var next atomic.Int64
	for wk := range workers {
		parts[wk] = newStatPart()
		best[wk] = make([]map[uint32]Severe, np)
	}
	runWorkers(workers, func(wk int) {
		part, best := &parts[wk], best[wk]
		ests := make([]densityEstimate, np)
		for k := int(next.Add(1) - 1); k < len(ranks); k = int(next.Add(1) - 1) {
			clear(ests)
			for _, s := range ranks[k] {
				for p, chunks := range s.Waits[:min(np, len(s.Waits))] {
					pp := &part.Patterns[p]
					for _, chunk := range chunks {
						for _, v := range chunk {
							pp.Count++
							pp.Min, pp.Max = math.Min(pp.Min, v), math.Max(pp.Max, v)
							pp.Sum.add(v)
							sq := v * v
							pp.Squares.add(sq)
							pp.Squares.add(math.FMA(v, v, -sq))
						}
						ests[p].addAll(chunk, scales[p])
					}
				}
				for p, cs := range s.Severe[:min(np, len(s.Severe))] {
					for _, c := range cs {
						offer(&best[p], Severe{c.Instance, StatPos{s.Rank, s.Thread, c.Index}})
					}
				}
			}
			for p := range ests {
				if ests[p].n > 0 {
					part.Patterns[p].Est.add(&ests[p], float64(basis.Counts[p]))
				}
			}
		}
	})
	all := newStatPart()
	for wk := range parts {
		all.Merge(parts[wk])
	}
	// by pattern: call path → most severe instance (the locations',
	// then the collective operations', which any order gives alike)
	ms := make([]map[uint32]Severe, len(all.Patterns))
	for p := range ms {
		for wk := range best {
			for _, c := range best[wk][p] {
				offer(&ms[p], c)
			}
		}
	}
	for group := range colls {
		for i := range group {
			c := &group[i]
			if int(c.Pattern) >= len(ms) {
				continue
			}
			in := patterns.Instance{Enter: c.Enter, Exit: c.Exit, Duration: c.Wait.value(), Callpath: c.Callpath, Rank: c.MaxRank, Coll: c.Key, Pattern: c.Pattern}
			if in.Duration > 0 {
				offer(&ms[c.Pattern], Severe{in, c.First})
			}
		}
	}
	for p := range all.Patterns {
		all.Patterns[p].Severe = topSevere(slices.Collect(maps.Values(ms[p])))
	}
	return all
}

// offer keeps c in m if it is its call path's most severe instance so far.
func offer(m *map[uint32]Severe, c Severe) {
	if *m == nil {
		*m = map[uint32]Severe{}
	}
	if b, ok := (*m)[c.Callpath]; !ok || c.before(&b) {
		(*m)[c.Callpath] = c
	}
}

// topSevere returns the maxSevere most severe of cs, which hold at most
// one instance per call path, most severe first.
func topSevere(cs []Severe) []Severe {
	slices.SortFunc(cs, func(a, b Severe) int {
		if a.before(&b) {
			return -1
		}
		if b.before(&a) {
			return 1
		}
		return 0
	})
	return cs[:min(len(cs), maxSevere)]
}

// Merge adds part o, of other locations, to p.
func (p *StatPart) Merge(o StatPart) {
	for i := range p.Patterns[:min(len(p.Patterns), len(o.Patterns))] {
		a, b := &p.Patterns[i], &o.Patterns[i]
		if b.Count == 0 && len(b.Severe) == 0 {
			continue
		}
		a.Count += b.Count
		a.Min, a.Max = math.Min(a.Min, b.Min), math.Max(a.Max, b.Max)
		a.Sum.addSum(b.Sum)
		a.Squares.addSum(b.Squares)
		a.Est.merge(&b.Est)
		var m map[uint32]Severe
		for _, c := range a.Severe {
			offer(&m, c)
		}
		for _, c := range b.Severe {
			offer(&m, c)
		}
		a.Severe = topSevere(slices.Collect(maps.Values(m)))
	}
}

// Stats returns the statistics of every pattern with observations, in
// the order of patterns.StatPatterns, from the part of all locations.
func (p *StatPart) Stats(basis StatBasis) []PatternStats {
	var out []PatternStats
	for i, name := range patterns.StatPatterns {
		if i >= len(p.Patterns) || p.Patterns[i].Count == 0 {
			continue
		}
		pp := &p.Patterns[i]
		n := float64(pp.Count)
		s := PatternStats{Pattern: name, Count: int(pp.Count), Min: pp.Min, Max: pp.Max, Sum: pp.Sum.value()}
		s.Mean = s.Sum / n
		s.Variance = variance(pp.Sum, pp.Squares, n)
		est := pp.Est.estimate(n)
		s.Quartile25, s.Median, s.Q75 = est.quartiles(basis.scale(i))
		for _, c := range pp.Severe {
			s.Severe = append(s.Severe, c.Instance)
		}
		out = append(out, s)
	}
	return out
}

// StatsOf returns the statistics of the locations srcs, all in this
// process, computed on up to GOMAXPROCS goroutines.
func StatsOf(srcs []StatSource) []PatternStats { return statsOf(srcs, 0) }

// StatsOn is StatsOf computed on the calling goroutine alone: for a
// caller that runs it beside other work, on a thread of its own at a
// low priority.
func StatsOn(srcs []StatSource) []PatternStats { return statsOf(srcs, 1) }

func statsOf(srcs []StatSource, workers int) []PatternStats {
	basis := NewStatBasis(srcs)
	var colls iter.Seq[[]CollPart]
	if workers == 1 {
		colls = serialGroups(srcs, serialCollGroups)
	} else {
		colls = slices.Values(collParts(srcs, workers))
	}
	part := summarizeStats(srcs, colls, basis, workers)
	return part.Stats(basis)
}

// serialCollGroups is the number of groups StatsOn aggregates the
// collective operations in, one after the other.
var serialCollGroups = 8

// variance returns the population variance of n observations from the
// exact sums of the observations and of their squares: (S2 − S1²/n)/n,
// computed exactly and rounded once.
func variance(sum, squares xsum, n float64) float64 {
	const prec = 4600 // holds S1² and n·S2 of any float64 sums exactly
	s1, s2 := sum.exact(prec), squares.exact(prec)
	bn := new(big.Float).SetPrec(prec).SetFloat64(n)
	num := new(big.Float).SetPrec(prec).Mul(s2, bn)
	num.Sub(num, new(big.Float).SetPrec(prec).Mul(s1, s1))
	num.Quo(num, new(big.Float).SetPrec(prec).Mul(bn, bn))
	v, _ := num.Float64()
	return math.Max(v, 0)
}

// xsum is an exact sum of float64 values: non-overlapping partial sums in
// increasing magnitude (Shewchuk's expansion, as Python's math.fsum keeps
// it). Its value, rounded once, does not depend on the order of the
// additions.
type xsum []float64

// add adds x exactly.
func (s *xsum) add(x float64) {
	ps := *s
	i := 0
	for _, y := range ps {
		if math.Abs(x) < math.Abs(y) {
			x, y = y, x
		}
		hi := x + y
		lo := y - (hi - x)
		if lo != 0 {
			ps[i] = lo
			i++
		}
		x = hi
	}
	*s = append(ps[:i], x)
}

// addSum adds the exact sum o.
func (s *xsum) addSum(o xsum) {
	for _, x := range o {
		s.add(x)
	}
}

// value returns the sum rounded to the nearest float64 (ties to even).
func (s xsum) value() float64 {
	n := len(s)
	if n == 0 {
		return 0
	}
	n--
	hi, lo := s[n], 0.0
	for n > 0 {
		x, y := hi, s[n-1]
		n--
		hi = x + y
		lo = y - (hi - x)
		if lo != 0 {
			break
		}
	}
	// Round half to even where the rest of the partials decides it.
	if n > 0 && ((lo < 0 && s[n-1] < 0) || (lo > 0 && s[n-1] > 0)) {
		y := lo * 2
		x := hi + y
		if y == x-hi {
			hi = x
		}
	}
	return hi
}

// exact returns the exact sum as a big.Float of precision prec.
func (s xsum) exact(prec uint) *big.Float {
	z := new(big.Float).SetPrec(prec)
	for _, x := range s {
		z.Add(z, new(big.Float).SetFloat64(x))
	}
	return z
}

// estimateSum merges the density estimates of disjoint sets of
// observations: by term, the exact sums of each estimate's means weighted
// by its share of all observations.
type estimateSum struct {
	Coef, Sqrs [densityTerms]xsum
}

// add adds estimate d, one of estimates of n observations in all.
func (e *estimateSum) add(d *densityEstimate, n float64) {
	w := d.n / n
	for k := range d.coef {
		e.Coef[k].add(w * d.coef[k])
		e.Sqrs[k].add(w * d.sqrs[k])
	}
}

func (e *estimateSum) merge(o *estimateSum) {
	for k := range e.Coef {
		e.Coef[k].addSum(o.Coef[k])
		e.Sqrs[k].addSum(o.Sqrs[k])
	}
}

// estimate returns the merged estimate of n observations.
func (e *estimateSum) estimate(n float64) densityEstimate {
	d := densityEstimate{n: n}
	for k := range d.coef {
		d.coef[k] = e.Coef[k].value()
		d.sqrs[k] = e.Sqrs[k].value()
	}
	return d
}

// instanceSize is the encoded size of the part of one collective
// instance (appendInstance).
const instanceSize = 1 + 4 + 4 + 4 + 4 + 8 + 4 + 8 + 8 + 8 + 4

// chunkHeader is the size of an exchanged chunk's header: whether more
// chunks follow, and the number of instances in it.
const chunkHeader = 1 + 4

// exchangeChunk bounds the bytes of one chunk of ExchangeCollParts (a
// variable for the tests).
var exchangeChunk = 256 << 10

// ExchangeCollParts aggregates the collective instances of srcs, this
// process's locations, at the processes that own them (collOwner) and
// returns the parts process me owns, merged (MergeCollParts) with those
// of every other process. exchange(to, from, b) sends b to process to
// and returns what process from sent this one (which ExchangeCollParts
// reads before its next call: exchange may reuse it). The processes
// meet pairwise, each pair once, in rounds (partner), and exchange
// chunks of the instances each owns, as many as the one with more has
// (a chunk's header says whether more follow), each a header and
// appendInstance for each instance (gob took a third of the
// statistics' time for 50 000 parts).
//
// The chunks are made and joined as they go, in buffers of
// exchangeChunk bytes reused throughout: a buffer per owner holding all
// its instances at once took 9 MB of fresh memory per process on the
// HPCG-like bench trace at M = 4, and the received ones as much again;
// at this machine's 3 ns a byte for fresh memory, half the exchange's
// time. The own instances join first, location by location, so that the
// parts of this process's operations are there when others' come
// (partJoin). srcs' Colls are empty afterwards.
func ExchangeCollParts(srcs []StatSource, procs, me int, exchange func(to, from int, b []byte) ([]byte, error)) ([]CollPart, error) {
	seal(srcs) // before the instances go
	defer func() {
		for _, s := range srcs {
			s.Colls.Drain(func(patterns.Instance) bool { return false })
		}
	}()
	mine := &partJoin{}
	for _, s := range srcs {
		mine.fill(s, func(op patterns.CollKey) bool { return collOwner(op, procs) == me })
		mine.join()
	}
	// The received chunks join in batches of their own.
	mine.room(exchangeChunk / instanceSize)
	out := make([]byte, chunkHeader, exchangeChunk)
	for r := range rounds(procs) {
		to := partner(me, r, procs)
		if to == me {
			continue // (an odd number of processes: one rests)
		}
		from := to
		peerMore := true
		flush := func(more bool) error {
			out[0] = 0
			if more {
				out[0] = 1
			}
			binary.LittleEndian.PutUint32(out[1:], uint32((len(out)-chunkHeader)/instanceSize))
			b, err := exchange(to, from, out)
			out = out[:chunkHeader]
			if err != nil {
				return err
			}
			if peerMore, err = decodeChunk(&mine.buf, b); err != nil {
				return fmt.Errorf("process %d: %w", from, err)
			}
			mine.join()
			return nil
		}
		theirs := func(op patterns.CollKey) bool { return collOwner(op, procs) == to }
		for _, s := range srcs {
			for i, in := range s.Colls.Select(theirs) {
				if len(out)+instanceSize > cap(out) {
					if err := flush(true); err != nil {
						return nil, err
					}
				}
				out = appendInstance(out, &in, StatPos{s.Rank, s.Thread, int64(i)})
			}
		}
		if err := flush(false); err != nil {
			return nil, err
		}
		for peerMore {
			if err := flush(false); err != nil {
				return nil, err
			}
		}
	}
	return mine.parts(), nil
}

// rounds returns the number of rounds in which n processes meet
// pairwise, each pair once (partner).
func rounds(n int) int {
	return n - 1 + n%2
}

// partner returns the process that process p of n meets in round r of
// rounds(n), or p itself where it rests in that round (n odd). The
// schedule is the circle method: with m = n rounded up to even,
// processes p, q < m-1 meet in round (p+q) mod (m-1), and process m-1
// (absent where n is odd) meets the one that would meet itself.
func partner(p, r, n int) int {
	m := n + n%2
	if p == m-1 {
		return r * (m / 2) % (m - 1) // q with 2q = r mod m-1
	}
	q := (r - p%(m-1) + m - 1) % (m - 1)
	if q == p {
		q = m - 1
	}
	if q >= n {
		return p
	}
	return q
}

// onePart is the part of a single collective instance, as partJoin's
// batches hold them: no sum (its wait is the one), no pointer, so that
// making, moving and sorting batches of them costs the collector
// nothing (as CollParts, they took write barriers on every move while
// the collector ran, and a large batch's buffer was scanned, faulting
// in its untouched pages, before it was filled).
type onePart struct {
	partHead
	Wait float64
	Rank int32
}

// part returns b as a CollPart (without a sum: Wait is nil).
func (b *onePart) part() CollPart {
	return CollPart{partHead: b.partHead, MaxWait: b.Wait, MaxRank: b.Rank}
}

// instancePart is the part of collective instance in, found at pos.
func instancePart(in *patterns.Instance, pos StatPos) onePart {
	return onePart{partHead{Pattern: in.Pattern, Key: in.Coll, First: pos, Callpath: in.Callpath,
		Enter: in.Enter, Exit: in.Exit}, in.Duration, in.Rank}
}

// appendInstance appends the encoding of the part of collective instance
// in, found at pos (instancePart), to b.
func appendInstance(b []byte, in *patterns.Instance, pos StatPos) []byte {
	n := len(b)
	b = slices.Grow(b, instanceSize)[:n+instanceSize]
	e, le := b[n:], binary.LittleEndian
	e[0] = in.Pattern
	le.PutUint32(e[1:], in.Coll.Comm)
	le.PutUint32(e[5:], uint32(in.Coll.Seq))
	le.PutUint32(e[9:], uint32(pos.Rank))
	le.PutUint32(e[13:], uint32(pos.Thread))
	le.PutUint64(e[17:], uint64(pos.Index))
	le.PutUint32(e[25:], in.Callpath)
	le.PutUint64(e[29:], math.Float64bits(in.Enter))
	le.PutUint64(e[37:], math.Float64bits(in.Exit))
	le.PutUint64(e[45:], math.Float64bits(in.Duration))
	le.PutUint32(e[53:], uint32(in.Rank))
	return b
}

// decodeChunk appends the parts of a chunk of ExchangeCollParts to
// *parts and tells whether more chunks follow.
func decodeChunk(parts *[]onePart, b []byte) (more bool, err error) {
	if len(b) < chunkHeader || b[0] > 1 {
		return false, fmt.Errorf("collective parts: bad chunk header (%d bytes)", len(b))
	}
	le := binary.LittleEndian
	more, n := b[0] == 1, int(le.Uint32(b[1:]))
	if b = b[chunkHeader:]; len(b) != n*instanceSize {
		return false, fmt.Errorf("collective parts: a chunk of %d instances has %d bytes, want %d", n, len(b), n*instanceSize)
	}
	for i := range n {
		e := b[i*instanceSize : (i+1)*instanceSize]
		*parts = append(*parts, onePart{
			partHead: partHead{
				Pattern:  e[0],
				Key:      patterns.CollKey{Comm: le.Uint32(e[1:]), Seq: int32(le.Uint32(e[5:]))},
				First:    StatPos{Rank: int32(le.Uint32(e[9:])), Thread: int32(le.Uint32(e[13:])), Index: int64(le.Uint64(e[17:]))},
				Callpath: le.Uint32(e[25:]),
				Enter:    math.Float64frombits(le.Uint64(e[29:])),
				Exit:     math.Float64frombits(le.Uint64(e[37:])),
			},
			Wait: math.Float64frombits(le.Uint64(e[45:])),
			Rank: int32(le.Uint32(e[53:])),
		})
	}
	return more, nil
}
