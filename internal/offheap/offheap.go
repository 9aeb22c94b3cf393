// Package offheap keeps large tables of plain values (no pointers)
// outside the Go heap, in anonymous memory mappings of their own.
//
// A loaded trace's event, message and collective tables are most of a
// process's memory. On the Go heap they count towards the collector's
// goal, which then leaves room for garbage in proportion to them
// (GOGC), and a table that grows is copied into a new array while the
// old one waits for the collector. In a mapping of its
// own a table costs what it holds: its capacity is address space that
// costs memory only where it is written, so a table is reserved once
// for the most it can hold and never copied; what is left over is
// unmapped, and the whole table is returned to the operating system
// the moment its owner lets go of it.
//
// The mappings of one owner are a Pages. The owner frees them with Free,
// typically from a cleanup (runtime.AddCleanup) once the owner is
// unreachable: a slice of a Pages must not outlive the object that owns
// the Pages.
package offheap

import (
	"slices"
	"sync"
	"unsafe"
)

// MinBytes is the smallest table Make maps; smaller ones belong on the
// heap, where they cost no mapping of their own (a process may hold
// only tens of thousands of mappings).
const MinBytes = 1 << 20

// hugePage is the size of a transparent huge page on the platforms
// scout runs on (x86-64, arm64 with 4 KiB pages): mappings of at least
// two of them are aligned to it and advised to use them, so a table of
// tens of megabytes costs a few dozen page faults instead of thousands.
const hugePage = 2 << 20

// Pages is the set of mappings of one owner. The zero value is empty
// and ready to use. Its methods may be called from several goroutines
// (a cleanup's Free, say), but a slice must not be used after another
// goroutine released it.
type Pages struct {
	mu   sync.Mutex
	maps map[uintptr]uintptr // start → length in bytes
}

// Make returns a slice of length 0 and capacity c in a new mapping of
// p, or nil when c values take less than MinBytes, no memory can be
// mapped on this platform, or p is nil: the caller then allocates on the
// heap. T must not contain pointers (the collector does not see the
// mapping).
func Make[T any](p *Pages, c int) []T {
	var zero T
	size := unsafe.Sizeof(zero)
	if p == nil || c <= 0 || size == 0 || uintptr(c) > (1<<46)/size {
		return nil
	}
	n := uintptr(c) * size
	if n < MinBytes {
		return nil
	}
	start, ok := mapAnon(n)
	if !ok {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.maps == nil {
		p.maps = make(map[uintptr]uintptr)
	}
	p.maps[start] = roundUp(n, pageSize)
	return unsafe.Slice((*T)(pointer(start)), c)[:0]
}

// MakeOr returns a slice of length 0 and capacity c: in a new mapping of
// p where Make makes one, else on the heap.
func MakeOr[T any](p *Pages, c int) []T {
	if s := Make[T](p, c); s != nil {
		return s
	}
	return make([]T, 0, max(c, 0))
}

// Fit returns s with no more capacity than it needs: trimmed (Trim) if
// its array is a mapping of p, else copied to a new array when it has
// capacity to spare.
func Fit[T any](p *Pages, s []T) []T {
	if Owns(p, s) {
		return Trim(p, s)
	}
	if cap(s) > len(s) {
		return slices.Clone(s)
	}
	return s
}

// pointer converts the start of a mapping, memory the Go runtime never
// moves or frees, to a pointer.
func pointer(start uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&start)) }

// Owns reports whether s's array is a mapping of p (never for a nil p).
func Owns[T any](p *Pages, s []T) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.owns(start(s))
}

func (p *Pages) owns(start uintptr) bool {
	_, ok := p.maps[start]
	return ok && start != 0
}

// start returns the address of s's array, 0 for none.
func start[T any](s []T) uintptr {
	if cap(s) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(s)))
}

// Release unmaps the mapping that holds s's array, if it is one of
// p's (p may be nil); s and every slice of it must not be used
// afterwards.
func Release[T any](p *Pages, s []T) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if at := start(s); p.owns(at) {
		unmap(at, p.maps[at])
		delete(p.maps, at)
	}
}

// Trim returns s with its capacity cut to its length (rounded up to a
// whole page) when its array is one of p's mappings, and unmaps the
// rest; other slices it returns as they are (all, for a nil p).
func Trim[T any](p *Pages, s []T) []T {
	if p == nil {
		return s
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	at := start(s)
	if !p.owns(at) {
		return s
	}
	var zero T
	size := unsafe.Sizeof(zero)
	keep := roundUp(uintptr(len(s))*size, pageSize)
	if keep == 0 {
		keep = pageSize // a mapping keeps its start
	}
	if n := p.maps[at]; keep < n {
		unmap(at+keep, n-keep)
		p.maps[at] = keep
	}
	return s[:len(s):int(min(uintptr(cap(s)), keep/size))]
}

// Bytes returns the bytes p has mapped.
func (p *Pages) Bytes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := uintptr(0)
	for _, l := range p.maps {
		n += l
	}
	return int(n)
}

// Free unmaps every mapping of p; no slice of them may be used
// afterwards.
func (p *Pages) Free() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for start, n := range p.maps {
		unmap(start, n)
	}
	p.maps = nil
}

const pageSize = 4096

func roundUp(n, to uintptr) uintptr { return (n + to - 1) &^ (to - 1) }
