package patterns

import "math"

// SetClcTesting makes the timestamp correction's skeletons of single
// steps only (steps), with every synchronisation's begin among the rare
// ones (begins), until reset is called.
func SetClcTesting(steps, begins bool) (reset func()) {
	if steps {
		clcZone = math.MaxFloat64 / 4
	}
	clcAllBegins = begins
	return func() { clcZone, clcAllBegins = startZone, false }
}
