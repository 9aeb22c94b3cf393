package patterns

import (
	"iter"

	"scout/internal/intern"
)

// CollInstances holds a location's instances in collective operations,
// in the order found, column by column in chunks. The instances of one
// operation on the location (its wait and its completion, say) share
// their end, call path, operation and rank, which a row holds once;
// each instance adds its pattern, begin and duration. Two instances of
// an N×N operation take 55 bytes, where two Instances took 96: an
// HPCG-like location holds some 190 000 of them.
type CollInstances struct {
	chunks []*collChunk
	groups intern.Table[collGroup] // the rows' communicators and ranks
	n      int
}

// collGroup is a communicator and a rank of rows.
type collGroup struct {
	comm uint32
	rank int32
}

// collChunk is a chunk of rows and of their instances; neither of its
// columns ever grows beyond its first capacity (a full chunk is
// followed by a new one), so nothing is ever copied.
type collChunk struct {
	// rows
	exit     []float64
	callpath []uint32
	seq      []int32
	group    []uint32
	count    []uint8 // the row's instances
	// instances
	pattern    []uint8
	enter, dur []float64
}

func newCollChunk(rows int) *collChunk {
	return &collChunk{
		exit: make([]float64, 0, rows), callpath: make([]uint32, 0, rows), seq: make([]int32, 0, rows),
		group: make([]uint32, 0, rows), count: make([]uint8, 0, rows),
		pattern: make([]uint8, 0, 2*rows), enter: make([]float64, 0, 2*rows), dur: make([]float64, 0, 2*rows),
	}
}

// Len returns the number of instances.
func (c *CollInstances) Len() int { return c.n }

// Add appends instance in.
func (c *CollInstances) Add(in Instance) {
	gi := c.groups.Index(collGroup{in.Coll.Comm, in.Rank})
	k := c.last()
	if r := len(k.exit) - 1; r < 0 || k.exit[r] != in.Exit || k.callpath[r] != in.Callpath || k.seq[r] != in.Coll.Seq ||
		k.group[r] != gi || k.count[r] == 255 || len(k.pattern) == cap(k.pattern) {
		if len(k.exit) == cap(k.exit) || len(k.pattern) == cap(k.pattern) {
			k = newCollChunk(min(2*cap(k.exit), maxInstanceChunk))
			c.chunks = append(c.chunks, k)
		}
		k.exit = append(k.exit, in.Exit)
		k.callpath = append(k.callpath, in.Callpath)
		k.seq = append(k.seq, in.Coll.Seq)
		k.group = append(k.group, gi)
		k.count = append(k.count, 0)
	}
	k.count[len(k.count)-1]++
	k.pattern = append(k.pattern, in.Pattern)
	k.enter = append(k.enter, in.Enter)
	k.dur = append(k.dur, in.Duration)
	c.n++
}

// last returns the chunk rows go to, made if there is none.
func (c *CollInstances) last() *collChunk {
	if len(c.chunks) == 0 {
		c.chunks = append(c.chunks, newCollChunk(minInstanceChunk))
	}
	return c.chunks[len(c.chunks)-1]
}

// All yields the instances in the order they were added.
func (c *CollInstances) All(yield func(Instance) bool) {
	for _, k := range c.chunks {
		if !k.each(c.groups.Values, yield) {
			return
		}
	}
}

// Drain is All, releasing each chunk once its instances were yielded
// (and the rest when yield stops): c is empty afterwards.
func (c *CollInstances) Drain(yield func(Instance) bool) {
	chunks, groups := c.chunks, c.groups.Values
	*c = CollInstances{}
	for i, k := range chunks {
		chunks[i] = nil
		if !k.each(groups, yield) {
			break
		}
	}
}

// each yields the instances of k, whose rows' groups index groups.
func (k *collChunk) each(groups []collGroup, yield func(Instance) bool) bool {
	j := 0
	for r := range k.exit {
		g := groups[k.group[r]]
		for range k.count[r] {
			in := Instance{Enter: k.enter[j], Exit: k.exit[r], Duration: k.dur[j], Callpath: k.callpath[r], Rank: g.rank,
				Coll: CollKey{g.comm, k.seq[r]}, Pattern: k.pattern[j]}
			j++
			if !yield(in) {
				return false
			}
		}
	}
	return true
}

// Select yields the instances of the operations for which keep is true,
// each with its index in the order of All. keep sees each row once (an
// operation on the location, whose instances follow one another), so
// that a caller that splits the instances by operation skips the others
// at the cost of a call per row.
func (c *CollInstances) Select(keep func(CollKey) bool) iter.Seq2[int, Instance] {
	return func(yield func(int, Instance) bool) {
		at := 0
		for _, k := range c.chunks {
			j := 0
			for r, seq := range k.seq {
				n := int(k.count[r])
				g := c.groups.Values[k.group[r]]
				if !keep(CollKey{g.comm, seq}) {
					j += n
					continue
				}
				for x := range n {
					in := Instance{Enter: k.enter[j+x], Exit: k.exit[r], Duration: k.dur[j+x], Callpath: k.callpath[r], Rank: g.rank,
						Coll: CollKey{g.comm, seq}, Pattern: k.pattern[j+x]}
					if !yield(at+j+x, in) {
						return
					}
				}
				j += n
			}
			at += j
		}
	}
}

// MapCallpaths replaces every instance's call path cp by f(cp).
func (c *CollInstances) MapCallpaths(f func(uint32) uint32) {
	for _, k := range c.chunks {
		for r, cp := range k.callpath {
			k.callpath[r] = f(cp)
		}
	}
}
