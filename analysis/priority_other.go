//go:build !linux

package analysis

// lowerPriority does nothing where threads have no priority of their
// own that scout can set.
func lowerPriority() {}
