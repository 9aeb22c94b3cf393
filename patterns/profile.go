// Package patterns computes the analysis metrics of one location: the
// profile metrics (time, visits) and the wait-state patterns.
package patterns

import "scout/localtrace"

// Profile computes the time and visits metrics of a location, indexed by
// its local call path: time is the call-path exclusive time in seconds
// (time spent in the call path minus the time of its callees) and visits
// the number of times the call path was entered. A region entered
// outside every region of the location (a worker thread's parallel
// region, whose call path continues the master's: see
// localtrace.AdoptThread) takes no time from its parent call path.
func Profile(t *localtrace.Trace) (time []float64, visits []uint64) {
	time = make([]float64, len(t.Callpaths))
	visits = make([]uint64, len(t.Callpaths))
	depth := 0
	for i := range t.Events {
		e := &t.Events[i]
		switch e.Kind {
		case localtrace.KindEnter:
		case localtrace.KindLeave:
			depth--
			continue
		default:
			continue
		}
		d := t.Time(int(t.Match(i))) - t.Time(i)
		visits[e.Arg]++
		time[e.Arg] += d
		if p := t.Callpaths[e.Arg].Parent; p != localtrace.None && depth > 0 {
			time[p] -= d
		}
		depth++
	}
	return time, visits
}
