package offheap

import "syscall"

// mapAnon maps n bytes (rounded up to whole pages) of private anonymous
// memory, aligned to a huge page and advised to use them when n spans
// two or more, and returns its start.
func mapAnon(n uintptr) (uintptr, bool) {
	n = roundUp(n, pageSize)
	extra := uintptr(0)
	if n >= 2*hugePage {
		extra = hugePage
	}
	start, _, errno := syscall.Syscall6(syscall.SYS_MMAP, 0, n+extra, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE, ^uintptr(0), 0)
	if errno != 0 {
		return 0, false
	}
	if extra == 0 {
		return start, true
	}
	aligned := roundUp(start, hugePage)
	if aligned > start {
		unmap(start, aligned-start)
	}
	if end := start + n + extra; end > aligned+n {
		unmap(aligned+n, end-aligned-n)
	}
	// advice: where the kernel does not follow it, nothing changes
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, aligned, n, 14 /* MADV_HUGEPAGE */)
	return aligned, true
}

func unmap(start, n uintptr) {
	if n > 0 {
		_, _, _ = syscall.Syscall(syscall.SYS_MUNMAP, start, n, 0)
	}
}
