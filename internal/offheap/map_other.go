//go:build !linux

package offheap

// mapAnon maps nothing where scout has no mappings of its own: tables
// stay on the heap.
func mapAnon(n uintptr) (uintptr, bool) { return 0, false }

func unmap(start, n uintptr) {}
