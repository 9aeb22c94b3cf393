// Package intern numbers distinct values in the order they are first
// seen, so that a large table can hold a small index instead of the
// value (a message's channel, say).
package intern

import "slices"

// Table numbers distinct values of K: Values[i] is the value numbered i.
// The zero Table is empty and ready to use.
type Table[K comparable] struct {
	Values []K
	at     map[K]uint32
}

// scanned is how many values Index finds by scanning them, before it
// makes a map (most tables stay that small: a ring's location has two
// channels, and a location of a run of 65 536 ranks had a map for each).
const scanned = 8

// Index returns the number of v, numbering it if it is new.
func (t *Table[K]) Index(v K) uint32 {
	if t.at == nil {
		for i, w := range t.Values {
			if w == v {
				return uint32(i)
			}
		}
	} else if i, ok := t.at[v]; ok {
		return i
	}
	i := uint32(len(t.Values))
	t.Values = append(t.Values, v)
	switch {
	case t.at != nil:
		t.at[v] = i
	case len(t.Values) > scanned:
		t.at = make(map[K]uint32, 2*len(t.Values))
		for j, w := range t.Values {
			t.at[w] = uint32(j)
		}
	}
	return i
}

// Seal drops the index from values to numbers, keeping Values: Index
// must not be called afterwards (it would scan every value).
func (t *Table[K]) Seal() { t.at = nil }

// Len returns the number of distinct values.
func (t *Table[K]) Len() int { return len(t.Values) }

// Order returns the numbers of the values in the order compare puts the
// values in.
func (t *Table[K]) Order(compare func(a, b K) int) []uint32 {
	order := make([]uint32, len(t.Values))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int { return compare(t.Values[a], t.Values[b]) })
	return order
}
