package intern

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTable: values are numbered from 0 in the order first seen, and a
// value seen again keeps its number.
func TestTable(t *testing.T) {
	var tab Table[string]
	var got []uint32
	for _, v := range []string{"b", "a", "b", "c", "a"} {
		got = append(got, tab.Index(v))
	}
	if d := cmp.Diff([]uint32{0, 1, 0, 2, 1}, got); d != "" {
		t.Errorf("numbers (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"b", "a", "c"}, tab.Values); d != "" || tab.Len() != 3 {
		t.Errorf("values (-want +got):\n%s", d)
	}
	tab.Seal()
	if tab.Values[2] != "c" {
		t.Error("Seal dropped the values")
	}
}

// TestTableLarge: beyond the values it scans, the table numbers through
// its map alike.
func TestTableLarge(t *testing.T) {
	var tab Table[int]
	for round := range 3 {
		for v := range 100 {
			if got := tab.Index(v * 7); got != uint32(v) {
				t.Fatalf("round %d: Index(%d) = %d, want %d", round, v*7, got, v)
			}
		}
	}
	if tab.Len() != 100 {
		t.Errorf("%d values, want 100", tab.Len())
	}
}

// TestTableOrder: Order gives the numbers of the values sorted.
func TestTableOrder(t *testing.T) {
	var tab Table[int]
	for _, v := range []int{30, 10, 20, 10} {
		tab.Index(v)
	}
	if d := cmp.Diff([]uint32{1, 2, 0}, tab.Order(func(a, b int) int { return a - b })); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
	var empty Table[string]
	if got := empty.Order(strings.Compare); len(got) != 0 {
		t.Errorf("order of an empty table: %v", got)
	}
}
