package replay

// SetWindows sets the number of events a location ships ahead at once
// and the number of a communicator's collectives whose exchanges run
// together, for a test, and returns a function that restores them.
func SetWindows(stretch, colls int) (restore func()) {
	s, c := aheadStretch, collWindow
	aheadStretch, collWindow = stretch, colls
	return func() { aheadStretch, collWindow = s, c }
}
