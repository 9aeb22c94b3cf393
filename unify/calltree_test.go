package unify

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"scout/localtrace"
)

// cps builds a local call tree from (region, parent) pairs.
func cps(pairs ...uint32) []localtrace.Callpath {
	var out []localtrace.Callpath
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, localtrace.Callpath{Region: pairs[i], Parent: pairs[i+1]})
	}
	return out
}

var (
	// rank 0: main → {a → x, b}; rank 1: main → {b → y, c}; rank 2: main → {c, a}; rank 3: other root
	locA = cps(1, None, 10, 0, 20, 0, 100, 1)
	locB = cps(1, None, 20, 0, 30, 0, 200, 1)
	locC = cps(1, None, 30, 0, 10, 0)
	locD = cps(2, None)
)

func TestUnifyIDs(t *testing.T) {
	g, maps, err := Unify([][]localtrace.Callpath{locA, locB, locC, locD})
	if err != nil {
		t.Fatal(err)
	}
	name := func(r uint32) string {
		return map[uint32]string{1: "main", 2: "other", 10: "a", 20: "b", 30: "c", 100: "x", 200: "y"}[r]
	}
	var paths []string
	for i := range g.Nodes {
		paths = append(paths, g.Path(uint32(i), name))
	}
	// ids: location 0's in first-entered order, then the others' new ones
	want := []string{"main", "main/a", "main/b", "main/a/x", "main/c", "main/b/y", "other"}
	if d := cmp.Diff(want, paths); d != "" {
		t.Errorf("paths (-want +got):\n%s", d)
	}
	wantMaps := [][]uint32{{0, 1, 2, 3}, {0, 2, 4, 5}, {0, 4, 1}, {6}}
	if d := cmp.Diff(wantMaps, maps); d != "" {
		t.Errorf("maps (-want +got):\n%s", d)
	}
}

// TestMergeAssociative checks that a pairwise (tree) reduction gives the
// same global tree as merging one location after another.
func TestMergeAssociative(t *testing.T) {
	seq := &CallTree{}
	for _, l := range [][]localtrace.Callpath{locA, locB, locC, locD} {
		seq.Merge(FromLocal(l))
	}
	left, right := FromLocal(locA), FromLocal(locC)
	left.Merge(FromLocal(locB))
	right.Merge(FromLocal(locD))
	left.Merge(right)
	if d := cmp.Diff(seq, left, ignoreIndex); d != "" {
		t.Errorf("tree reduction differs from sequential merge (-seq +tree):\n%s", d)
	}
}

func TestMapLocalMissing(t *testing.T) {
	g := FromLocal(locA)
	if _, err := g.MapLocal(locB); err == nil {
		t.Error("mapping a call path missing from the global tree must fail")
	}
}

// ignoreIndex leaves the trees' child indexes out of comparisons.
var ignoreIndex = cmpopts.IgnoreUnexported(CallTree{})
