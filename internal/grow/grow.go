// Package grow sizes tables that fill while a location's events are
// read or walked: one allocation for a trace of one kind throughout,
// where append's 1.25-fold growth of a large array copied it about four
// times over (touching fresh memory for each copy, which on a VM costs
// more than the work that fills it) and left the copies to the
// collector.
package grow

import "slices"

// Room returns s with room for one more element, after done of total
// steps (events read, events walked) filled it. A full table grows to
// what its share of the steps so far predicts for all of them, plus
// 1/16, and at least doubles.
func Room[T any](s []T, done, total int) []T {
	if len(s) < cap(s) {
		return s
	}
	n := 2 * len(s)
	if done >= 1024 && total > done { // a share of the first steps may mislead
		n = max(n, int(float64(len(s)+1)*float64(total)/float64(done)*17/16))
	}
	n = max(n, 16)
	return slices.Grow(s, n-len(s))
}
