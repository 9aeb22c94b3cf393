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
	return slices.Grow(s, Cap(len(s), done, total)-len(s))
}

// Cap returns the capacity Room gives a full table of n elements after
// done of total steps.
func Cap(n, done, total int) int {
	c := 2 * n
	if done >= 1024 && total > done { // a share of the first steps may mislead
		c = max(c, int(float64(n+1)*float64(total)/float64(done)*17/16))
	}
	return max(c, 16)
}
