package localtrace

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestAdviseHuge: the whole huge pages of a large event array are marked
// for transparent huge pages (VmFlags "hg" in /proc/self/smaps), and a
// small array is left alone.
func TestAdviseHuge(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage"); err != nil {
		t.Skip("no transparent huge pages in this kernel")
	}
	tests := []struct {
		name   string
		events int
		want   bool
	}{
		{"large", 1 << 20, true}, // 24 MiB
		{"small", 1 << 10, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := make([]Event, 0, tc.events)
			adviseHuge(s)
			start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
			mid := start + uintptr(tc.events)*unsafe.Sizeof(Event{})/2
			if got := hugeAdvised(t, mid); got != tc.want {
				t.Errorf("the middle of a %d-event array marked for huge pages: %v, want %v", tc.events, got, tc.want)
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
