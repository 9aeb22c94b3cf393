package patterns

import "scout/localtrace"

// SetClcTesting makes the timestamp correction start with the given zone
// below the top of each binade (math.MaxFloat64/4: every event a single
// step; a tiny one: skeletons built again and again), with every
// synchronisation's begin among the rare ones (begins) and location 0
// sending the clocks of every communication event at once (each), until
// reset is called; zone 0 keeps the default.
func SetClcTesting(zone float64, begins, each bool) (reset func()) {
	if zone != 0 {
		clcZone = zone
	}
	clcAllBegins = begins
	if each {
		clcClocksSize = 1
	}
	return func() { clcZone, clcAllBegins, clcClocksSize = startZone, false, clocksSize }
}

// SetClcTimesStatistics makes the timestamp correction compute its final
// statistics from the final and the recorded times of all events (as it
// does where the backward amortization moved an event back), until reset
// is called.
func SetClcTimesStatistics() (reset func()) {
	clcTimesStatistics = true
	return func() { clcTimesStatistics = false }
}

// ClcRounds returns the number of solutions of the timestamp correction
// that location 0 began so far.
func ClcRounds() int64 { return clcRounds.Load() }

// SumTimemaps sums the time maps of t's events in consecutive intervals
// of width events, as the bwc pass asks for them, and returns the number
// of entries they had (BenchmarkTimemaps).
func SumTimemaps(t *localtrace.Trace, width int) int {
	var tm timemaps
	var out cpvec
	n := 0
	for lo := 0; lo+width <= len(t.Events); lo += width {
		tm.runtimes(t, lo, lo+width, &out)
		n += len(out.cp)
	}
	return n
}
