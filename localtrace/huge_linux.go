package localtrace

import (
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on the platforms
// scout runs on (x86-64, arm64 with 4 KiB pages).
const hugePage = 2 << 20

// adviseHuge asks the kernel to back the whole huge pages inside s's
// array with transparent huge pages (madvise MADV_HUGEPAGE) before it is
// first touched: an event array of tens of megabytes then costs a few
// dozen page faults instead of thousands, which on a virtual machine
// took about 3 ms a MiB, a quarter of the load. The advice is advice:
// where the kernel does not follow it (THP disabled), nothing changes.
func adviseHuge[T any](s []T) {
	var zero T
	n := uintptr(cap(s)) * unsafe.Sizeof(zero)
	if n < 2*hugePage {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(s))
	start := uintptr(p)
	lo := (start + hugePage - 1) &^ (hugePage - 1)
	hi := (start + n) &^ (hugePage - 1)
	if hi <= lo {
		return
	}
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, lo-start)), hi-lo), syscall.MADV_HUGEPAGE)
}
