//go:build !linux

package localtrace

// adviseHuge does nothing where transparent huge pages do not exist.
func adviseHuge[T any](s []T) {}
