package unify

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/hpc"
	"scout/localtrace"
)

// randomLocal makes a random local call tree of up to n call paths over
// a few regions, parents before children.
func randomLocal(rng *rand.Rand, n int) []localtrace.Callpath {
	var out []localtrace.Callpath
	seen := map[[2]uint32]bool{}
	for range n {
		parent := None
		if len(out) > 0 && rng.IntN(4) != 0 {
			parent = uint32(rng.IntN(len(out)))
		}
		region := uint32(rng.IntN(6))
		if seen[[2]uint32{parent, region}] {
			continue
		}
		seen[[2]uint32{parent, region}] = true
		out = append(out, localtrace.Callpath{Region: region, Parent: parent})
	}
	return out
}

// TestReduce checks that the parallel tree reduction gives every rank the
// tree that merging the locations one after another gives.
func TestReduce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 9; n++ {
		locals := make([][]localtrace.Callpath, n)
		for i := range locals {
			locals[i] = randomLocal(rng, 3+rng.IntN(30))
		}
		want, _, err := Unify(locals)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]*CallTree, n)
		err = hpc.RunInProcess(n, func(c hpc.Comm) error {
			local := FromLocal(locals[c.Rank()])
			before, _ := local.AppendBinary(nil)
			g, err := Reduce(c, local)
			if err != nil {
				return err
			}
			if after, _ := local.AppendBinary(nil); string(before) != string(after) {
				t.Errorf("rank %d: Reduce modified the local tree", c.Rank())
			}
			got[c.Rank()] = g
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for r, g := range got {
			if d := cmp.Diff(want, g, ignoreIndex); d != "" {
				t.Errorf("%d ranks, rank %d: reduced tree differs (-sequential +reduced):\n%s", n, r, d)
			}
		}
	}
}

func TestDecodeCallTreeErrors(t *testing.T) {
	good, _ := FromLocal(locA).AppendBinary(nil)
	if _, err := DecodeCallTree(good); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"empty":     nil,
		"truncated": good[:len(good)-1],
		"trailing":  append(append([]byte(nil), good...), 0),
		"forward":   {1, 5, 3}, // node 0 with parent 2
		"huge":      {0xff, 0xff, 0xff, 0xff, 0x0f},
	} {
		if _, err := DecodeCallTree(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
