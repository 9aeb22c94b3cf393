package hpc

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// commInfo describes a rank's new communicator: nil, or its rank, size,
// name and the world ranks of its members (learned by Allgather).
type commInfo struct {
	Rank, Size int
	Name       string
	World      []int
}

func describe(c Comm, worldRank int) (*commInfo, error) {
	if c == nil {
		return nil, nil
	}
	all, err := c.Allgather([]byte{byte(worldRank)})
	if err != nil {
		return nil, err
	}
	info := &commInfo{Rank: c.Rank(), Size: c.Size(), Name: c.Name()}
	for _, b := range all {
		info.World = append(info.World, int(b[0]))
	}
	return info, nil
}

func TestSplitCreate(t *testing.T) {
	tests := []struct {
		name string
		n    int
		make func(world Comm) (Comm, error)
		want []*commInfo
	}{{
		name: "split by parity, reversed keys",
		n:    5,
		make: func(w Comm) (Comm, error) { return w.Split(w.Rank()%2, -w.Rank()) },
		want: []*commInfo{
			{2, 3, "WORLD.0[color 0]", []int{4, 2, 0}},
			{1, 2, "WORLD.0[color 1]", []int{3, 1}},
			{1, 3, "WORLD.0[color 0]", []int{4, 2, 0}},
			{0, 2, "WORLD.0[color 1]", []int{3, 1}},
			{0, 3, "WORLD.0[color 0]", []int{4, 2, 0}},
		},
	}, {
		name: "split with equal keys keeps rank order, undefined color",
		n:    4,
		make: func(w Comm) (Comm, error) {
			color := []int{7, Undefined, 7, -5}[w.Rank()]
			return w.Split(color, 0)
		},
		want: []*commInfo{
			{0, 2, "WORLD.0[color 7]", []int{0, 2}},
			nil,
			{1, 2, "WORLD.0[color 7]", []int{0, 2}},
			nil,
		},
	}, {
		name: "split into singletons",
		n:    3,
		make: func(w Comm) (Comm, error) { return w.Split(w.Rank(), 0) },
		want: []*commInfo{
			{0, 1, "WORLD.0[color 0]", []int{0}},
			{0, 1, "WORLD.0[color 1]", []int{1}},
			{0, 1, "WORLD.0[color 2]", []int{2}},
		},
	}, {
		name: "create in given order",
		n:    4,
		make: func(w Comm) (Comm, error) { return w.Create([]int{3, 1}) },
		want: []*commInfo{nil, {1, 2, "WORLD.0", []int{3, 1}}, nil, {0, 2, "WORLD.0", []int{3, 1}}},
	}, {
		name: "create size 1",
		n:    3,
		make: func(w Comm) (Comm, error) { return w.Create([]int{2}) },
		want: []*commInfo{nil, nil, {0, 1, "WORLD.0", []int{2}}},
	}, {
		name: "create empty",
		n:    2,
		make: func(w Comm) (Comm, error) { return w.Create(nil) },
		want: []*commInfo{nil, nil},
	}, {
		name: "create of a split, after other collectives",
		n:    6,
		make: func(w Comm) (Comm, error) {
			if err := w.Barrier(); err != nil {
				return nil, err
			}
			half, err := w.Split(w.Rank()/3, 0) // {0,1,2} {3,4,5}
			if err != nil {
				return nil, err
			}
			return half.Create([]int{2, 0}) // ranks of half
		},
		want: []*commInfo{
			{1, 2, "WORLD.1[color 0].0", []int{2, 0}}, nil, {0, 2, "WORLD.1[color 0].0", []int{2, 0}},
			{1, 2, "WORLD.1[color 1].0", []int{5, 3}}, nil, {0, 2, "WORLD.1[color 1].0", []int{5, 3}},
		},
	}, {
		name: "self",
		n:    2,
		make: func(w Comm) (Comm, error) { return w.Self(), nil },
		want: []*commInfo{{0, 1, "SELF", []int{0}}, {0, 1, "SELF", []int{1}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustRun(t, tt.n, func(w Comm) (*commInfo, error) {
				c, err := tt.make(w)
				if err != nil {
					return nil, err
				}
				return describe(c, w.Rank())
			})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("new communicators by world rank (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSubcommIsolation sends with the same tags on the world and on sub-
// communicators, and checks that each receive sees only its own.
func TestSubcommIsolation(t *testing.T) {
	got := mustRun(t, 4, func(w Comm) (string, error) {
		sub, err := w.Split(w.Rank()%2, 0) // {0,2} {1,3}
		if err != nil {
			return "", err
		}
		peer := 1 - sub.Rank()
		// Both on tag 0: world ring and sub-communicator pair.
		if err := w.Send((w.Rank()+1)%4, 0, fmt.Appendf(nil, "world from %d", w.Rank())); err != nil {
			return "", err
		}
		if err := sub.Send(peer, 0, fmt.Appendf(nil, "sub from %d", w.Rank())); err != nil {
			return "", err
		}
		self := w.Self()
		if err := self.Send(0, 0, []byte("self")); err != nil {
			return "", err
		}
		s, err := self.Recv(0, 0)
		if err != nil {
			return "", err
		}
		a, err := sub.Recv(peer, 0)
		if err != nil {
			return "", err
		}
		b, err := w.Recv((w.Rank()+3)%4, 0)
		if err != nil {
			return "", err
		}
		sum, err := Allreduce(sub, Sum, []uint64{uint64(w.Rank())})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s|%s|%s|%d", s, a, b, sum[0]), nil
	})
	want := []string{
		"self|sub from 2|world from 3|2",
		"self|sub from 3|world from 0|4",
		"self|sub from 0|world from 1|2",
		"self|sub from 1|world from 2|4",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestSizeOneCollectives runs every collective on Self and on size-1
// communicators from Create and Split.
func TestSizeOneCollectives(t *testing.T) {
	got := mustRun(t, 2, func(w Comm) ([]string, error) {
		one, err := w.Create([]int{1})
		if err != nil {
			return nil, err
		}
		single, err := w.Split(w.Rank(), 0)
		if err != nil {
			return nil, err
		}
		if one == nil {
			one = single
		}
		var out []string
		for _, c := range []Comm{w.Self(), one} {
			if err := c.Barrier(); err != nil {
				return nil, err
			}
			b, err := c.Bcast(0, []byte("b"))
			if err != nil {
				return nil, err
			}
			g, err := c.Gather(0, []byte("g"))
			if err != nil {
				return nil, err
			}
			ag, err := c.Allgather([]byte("a"))
			if err != nil {
				return nil, err
			}
			r, err := Reduce(c, 0, Sum, []float64{1.5})
			if err != nil {
				return nil, err
			}
			ar, err := Allreduce(c, MaxLoc, []TimeRank{{2, 9}})
			if err != nil {
				return nil, err
			}
			sc, err := Scan(c, Bor, []uint64{4})
			if err != nil {
				return nil, err
			}
			ex, err := Exscan(c, Sum, []uint64{4})
			if err != nil {
				return nil, err
			}
			sp, err := c.Split(0, 0)
			if err != nil {
				return nil, err
			}
			out = append(out, fmt.Sprintf("%s %q %q %v %v %v %v %d", b, g, ag, r, ar, sc, ex, sp.Size()))
		}
		return out, nil
	})
	line := `b ["g"] ["a"] [1.5] [{2 9}] [4] [] 1`
	want := [][]string{{line, line}, {line, line}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSelfIsShared(t *testing.T) {
	mustRun(t, 1, func(w Comm) (any, error) {
		sub, err := w.Split(0, 0)
		if err != nil {
			return nil, err
		}
		if w.Self() != sub.Self() || w.Self() != w.Self().Self() {
			return nil, errors.New("Self differs between communicators")
		}
		return nil, nil
	})
}

func TestFree(t *testing.T) {
	got := mustRun(t, 2, func(w Comm) ([]string, error) {
		sub, err := w.Create([]int{0, 1})
		if err != nil {
			return nil, err
		}
		sub.SetName("app comm 3")
		var out []string
		note := func(err error) {
			if err == nil {
				out = append(out, "ok")
				return
			}
			out = append(out, fmt.Sprintf("%v (freed=%v)", err, errors.Is(err, ErrFreed)))
		}
		note(sub.Free())
		note(sub.Send(0, 0, nil))
		note(sub.Barrier())
		_, err = sub.Recv(0, 0)
		note(err)
		note(sub.Free())
		note(w.Free())
		note(w.Self().Free())
		return out, nil
	})
	want := []string{
		"ok",
		"hpc: rank 0: Send(dest=0, tag=0) on comm app comm 3 (rank 0 of 2): communicator freed (freed=true)",
		"hpc: rank 0: Barrier on comm app comm 3 (rank 0 of 2): communicator freed (freed=true)",
		"hpc: rank 0: Recv(src=0, tag=0) on comm app comm 3 (rank 0 of 2): communicator freed (freed=true)",
		"hpc: rank 0: Free of comm app comm 3 (rank 0 of 2): already freed (freed=true)",
		"hpc: rank 0: Free of comm WORLD: not allowed (freed=false)",
		"hpc: rank 0: Free of comm SELF (rank 0 of 1): not allowed (freed=false)",
	}
	if diff := cmp.Diff(want, got[0]); diff != "" {
		t.Errorf("rank 0 (-want +got):\n%s", diff)
	}
}

func TestCreateErrors(t *testing.T) {
	tests := []struct {
		name    string
		members func(rank int) []int
		want    string
		is      error
	}{
		{"different lists", func(r int) []int { return []int{r, (r + 1) % 3} },
			"hpc: collective mismatch on comm WORLD (call 0): ", ErrMismatch},
		{"duplicate member", func(int) []int { return []int{1, 1} },
			"called Create(members=[1 1]) on comm WORLD (call 0): member 1 listed twice", nil},
		{"member out of range", func(int) []int { return []int{0, 3} },
			"called Create(members=[0 3]) on comm WORLD (call 0): member 3 out of range [0, 3)", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := rankErrs(t, 3, func(w Comm) error {
				c, err := w.Create(tt.members(w.Rank()))
				if c != nil {
					return errors.New("got a communicator")
				}
				return err
			})
			for r, err := range errs {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("rank %d: error %v, want it to contain %q", r, err, tt.want)
				}
				if tt.is != nil && !errors.Is(err, tt.is) {
					t.Errorf("rank %d: error %v is not %v", r, err, tt.is)
				}
			}
		})
	}
}

// TestCreateLongListMismatch checks lists that differ only past what the
// error message shows.
func TestCreateLongListMismatch(t *testing.T) {
	errs := rankErrs(t, 20, func(w Comm) error {
		ms := make([]int, 20)
		for i := range ms {
			ms[i] = i
		}
		if w.Rank() == 3 {
			ms[18], ms[19] = 19, 18
		}
		_, err := w.Create(ms)
		return err
	})
	for r, err := range errs {
		if !errors.Is(err, ErrMismatch) {
			t.Fatalf("rank %d: error %v, want ErrMismatch", r, err)
		}
	}
	if want := "(20 ranks)"; !strings.Contains(errs[0].Error(), want) {
		t.Errorf("error %q does not contain %q", errs[0], want)
	}
}
