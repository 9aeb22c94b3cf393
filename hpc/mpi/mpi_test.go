//go:build mpi

package mpi

import (
	"os"
	"testing"
)

// TestMain starts MPI once; run the test binary under mpirun to test with
// several processes (make test-mpi does), or alone for a singleton.
func TestMain(m *testing.M) {
	Init()
	code := m.Run()
	Finalize()
	os.Exit(code)
}

func TestCollectives(t *testing.T) {
	w := World()
	me, n := w.Rank(), w.Size()
	got, err := w.MaxLoc(TimeRank{float64(me % 2), me})
	if err != nil {
		t.Fatal(err)
	}
	want := TimeRank{0, 0}
	if n > 1 {
		want = TimeRank{1, 1} // ties go to the lowest rank
	}
	if got != want {
		t.Errorf("MaxLoc = %v, want %v", got, want)
	}
	if got, _ := w.MinLoc(TimeRank{float64(-me), me}); got != (TimeRank{float64(1 - n), n - 1}) {
		t.Errorf("MinLoc = %v", got)
	}
	if got, _ := w.ScanMaxLoc(TimeRank{float64(me), me}); got != (TimeRank{float64(me), me}) {
		t.Errorf("ScanMaxLoc = %v", got)
	}
	if v, _ := w.BcastFloat64(n-1, float64(me)+0.5); v != float64(n-1)+0.5 {
		t.Errorf("Bcast = %v", v)
	}
	s, _ := w.AllreduceUint64([]uint64{1, uint64(me)}, Sum)
	if s[0] != uint64(n) || s[1] != uint64(n*(n-1)/2) {
		t.Errorf("Allreduce sum = %v", s)
	}
	g, err := w.Gather(0, []byte{byte(me), byte(me)})
	if err != nil {
		t.Fatal(err)
	}
	if me == 0 {
		for r, b := range g {
			if len(b) != 2 || b[0] != byte(r) {
				t.Errorf("Gather[%d] = %v", r, b)
			}
		}
	}
}

func TestPointToPoint(t *testing.T) {
	w := World()
	me, n := w.Rank(), w.Size()
	next, prev := (me+1)%n, (me+n-1)%n
	var reqs []*Request
	for i := 0; i < 3; i++ { // non-overtaking: order kept
		r, err := w.Isend(next, 7, []byte{byte(me), byte(i)})
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, r)
	}
	for i := 0; i < 3; i++ {
		b, err := w.Recv(prev, 7)
		if err != nil {
			t.Fatal(err)
		}
		if b[0] != byte(prev) || b[1] != byte(i) {
			t.Errorf("message %d from %d = %v", i, prev, b)
		}
	}
	for _, r := range reqs {
		if err := r.Wait(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCreate(t *testing.T) {
	w := World()
	me, n := w.Rank(), w.Size()
	var evens []int
	for r := 0; r < n; r += 2 {
		evens = append(evens, r)
	}
	c, err := w.Create(evens)
	if err != nil {
		t.Fatal(err)
	}
	if (c != nil) != (me%2 == 0) {
		t.Fatalf("rank %d: membership wrong", me)
	}
	if c != nil {
		if c.Rank() != me/2 || c.Size() != len(evens) {
			t.Errorf("rank %d: sub rank %d size %d", me, c.Rank(), c.Size())
		}
		c.Free()
	}
	s, err := w.Split(me%2, -me)
	if err != nil {
		t.Fatal(err)
	}
	if s.Rank() != (n-1-me)/2 && s.Rank() != s.Size()-1-me/2 {
		t.Errorf("split rank %d for world rank %d", s.Rank(), me)
	}
	s.Free()
}
