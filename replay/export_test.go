package replay

// SetWindows sets, for a test, the number of events a location ships
// ahead at once, the number of a communicator's collectives whose
// exchanges run together and how often a skipped message goes all the
// same (0 keeps a value), and returns a function that restores them.
func SetWindows(stretch, colls, gate int) (restore func()) {
	s, c, g := aheadStretch, collWindow, gateEvery
	if stretch > 0 {
		aheadStretch = stretch
	}
	if colls > 0 {
		collWindow = colls
	}
	if gate > 0 {
		gateEvery = uint32(gate)
	}
	return func() { aheadStretch, collWindow, gateEvery = s, c, g }
}
