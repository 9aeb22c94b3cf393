// Package intern numbers distinct values in the order they are first
// seen, so that a large table can hold a small index instead of the
// value (a message's channel, say).
package intern

// Table numbers distinct values of K: Values[i] is the value numbered i.
// The zero Table is empty and ready to use.
type Table[K comparable] struct {
	Values []K
	at     map[K]uint32
}

// Index returns the number of v, numbering it if it is new.
func (t *Table[K]) Index(v K) uint32 {
	if i, ok := t.at[v]; ok {
		return i
	}
	if t.at == nil {
		t.at = map[K]uint32{}
	}
	i := uint32(len(t.Values))
	t.Values = append(t.Values, v)
	t.at[v] = i
	return i
}

// Seal drops the index from values to numbers, keeping Values: Index
// must not be called afterwards.
func (t *Table[K]) Seal() { t.at = nil }

// Len returns the number of distinct values.
func (t *Table[K]) Len() int { return len(t.Values) }
