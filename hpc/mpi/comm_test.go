//go:build mpi

package mpi

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/hpc"
)

// TestHPCComm checks the hpc.Comm implementation against the in-process
// one: the same calls give the same results on every rank.
func TestHPCComm(t *testing.T) {
	h := World().Comm()
	me, n := h.Rank(), h.Size()
	got := body(h)
	var want []string
	err := hpc.RunInProcess(n, func(c hpc.Comm) error {
		res := body(c) // every rank must take part
		if c.Rank() == me {
			want = res
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rank %d: MPI vs in-process (-want +got):\n%s", me, d)
	}
	if err := h.Finish(); err != nil {
		t.Fatal(err)
	}
}

// body runs a sequence of calls and records their results as text.
func body(c hpc.Comm) []string {
	var out []string
	rec := func(what string, v any, err error) {
		out = append(out, fmt.Sprintf("%s: %v %v", what, v, err))
	}
	me, n := c.Rank(), c.Size()
	v, err := hpc.Allreduce(c, hpc.MaxLoc, []hpc.TimeRank{{Time: float64(me % 2), Rank: me}, {Time: -float64(me), Rank: me}})
	rec("maxloc", v, err)
	v, err = hpc.Allreduce(c, hpc.MinLoc, []hpc.TimeRank{{Time: float64(me % 2), Rank: me}})
	rec("minloc", v, err)
	v, err = hpc.Scan(c, hpc.MaxLoc, []hpc.TimeRank{{Time: float64((me * 7) % 3), Rank: me}})
	rec("scan maxloc", v, err)
	u, err := hpc.Allreduce(c, hpc.Bor, []uint64{1 << me, uint64(me)})
	rec("bor", u, err)
	u, err = hpc.Exscan(c, hpc.Sum, []uint64{uint64(me + 1)})
	rec("exscan", u, err)
	f, err := hpc.Reduce(c, n-1, hpc.Max, []float64{float64(me) / 3})
	rec("reduce", f, err)
	b, err := c.Bcast(n-1, []byte(fmt.Sprintf("from %d", me)))
	rec("bcast", string(b), err)
	all, err := c.Allgather([]byte{byte(me), byte(me * me)})
	rec("allgather", all, err)
	g, err := c.Gather(0, make([]byte, me))
	rec("gather", g, err)
	if n > 1 {
		dst, src := (me+1)%n, (me+n-1)%n
		for i := range 3 {
			rec("send", nil, c.Send(dst, 5, []byte{byte(me), byte(i)}))
		}
		for range 3 {
			m, err := c.Recv(src, 5)
			rec("recv", m, err)
		}
	}
	sub, err := c.Split(me%2, -me)
	rec("split", sub != nil, err)
	if sub != nil {
		rec("split rank", fmt.Sprint(sub.Rank(), sub.Size()), nil)
		v, err := hpc.Allreduce(sub, hpc.MaxLoc, []hpc.TimeRank{{Time: 1, Rank: me}})
		rec("split maxloc", v, err)
		rec("free", nil, sub.Free())
	}
	members := []int{n - 1, 0}
	if n == 1 {
		members = members[:1]
	}
	cr, err := c.Create(members)
	rec("create", cr != nil, err)
	if cr != nil {
		rec("create rank", fmt.Sprint(cr.Rank(), cr.Size()), nil)
		rec("create barrier", nil, cr.Barrier())
	}
	self := c.Self()
	v, err = hpc.Allreduce(self, hpc.MinLoc, []hpc.TimeRank{{Time: 3, Rank: me}})
	rec("self", v, err)
	return out
}
