//go:build linux

package offheap

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestHugePages: a mapping of two huge pages or more starts at a huge
// page and is marked for transparent huge pages (VmFlags "hg" in
// /proc/self/smaps); a smaller one is left alone.
func TestHugePages(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage"); err != nil {
		t.Skip("no transparent huge pages in this kernel")
	}
	tests := []struct {
		name  string
		bytes int
		want  bool
	}{
		{"large", 24 << 20, true},
		{"small", MinBytes, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p Pages
			defer p.Free()
			s := Make[uint64](&p, tc.bytes/8)
			if s == nil {
				t.Fatal("not mapped")
			}
			start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
			if tc.want && start%hugePage != 0 {
				t.Errorf("a mapping of %d bytes starts at %#x, not at a huge page", tc.bytes, start)
			}
			if got := hugeAdvised(t, start+uintptr(tc.bytes)/2); got != tc.want {
				t.Errorf("the middle of a mapping of %d bytes marked for huge pages: %v, want %v", tc.bytes, got, tc.want)
			}
		})
	}
}

// hugeAdvised reports whether the mapping holding addr has VmFlags hg.
func hugeAdvised(t *testing.T, addr uintptr) bool {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if fields := strings.Fields(line); len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			lo, hi, _ := strings.Cut(fields[0], "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(addr) >= a && uint64(addr) < b
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.Contains(line+" ", " hg ")
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return false
}
