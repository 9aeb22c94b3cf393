package hpc

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// collCase is a collective run on n ranks; call returns rank r's result.
type collCase struct {
	name string
	n    int
	call func(c Comm) (any, error)
	want []any
}

func runCollCases(t *testing.T, tests []collCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustRun(t, tt.n, tt.call)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("results by rank (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDataCollectives(t *testing.T) {
	runCollCases(t, []collCase{{
		name: "barrier",
		n:    4,
		call: func(c Comm) (any, error) { return c.Rank(), c.Barrier() },
		want: []any{0, 1, 2, 3},
	}, {
		name: "bcast from 2",
		n:    4,
		call: func(c Comm) (any, error) {
			b, err := c.Bcast(2, []byte(fmt.Sprint("from ", c.Rank())))
			return string(b), err
		},
		want: []any{"from 2", "from 2", "from 2", "from 2"},
	}, {
		name: "bcast empty",
		n:    2,
		call: func(c Comm) (any, error) { return c.Bcast(0, nil) },
		want: []any{[]byte{}, []byte{}},
	}, {
		name: "gather to 1, varying lengths",
		n:    3,
		call: func(c Comm) (any, error) {
			return c.Gather(1, []byte(strings.Repeat("x", c.Rank())))
		},
		want: []any{[][]byte(nil), [][]byte{{}, []byte("x"), []byte("xx")}, [][]byte(nil)},
	}, {
		name: "allgather",
		n:    3,
		call: func(c Comm) (any, error) { return c.Allgather([]byte{byte(10 * c.Rank())}) },
		want: []any{
			[][]byte{{0}, {10}, {20}},
			[][]byte{{0}, {10}, {20}},
			[][]byte{{0}, {10}, {20}},
		},
	}})
}

func TestReductions(t *testing.T) {
	// Rank r contributes f(r) to a reduction; each case names the op.
	f64 := func(op Op, f func(r int) []float64) func(c Comm) (any, error) {
		return func(c Comm) (any, error) { return Allreduce(c, op, f(c.Rank())) }
	}
	u64 := func(op Op, f func(r int) []uint64) func(c Comm) (any, error) {
		return func(c Comm) (any, error) { return Allreduce(c, op, f(c.Rank())) }
	}
	tr := func(op Op, times ...float64) func(c Comm) (any, error) {
		return func(c Comm) (any, error) {
			return Allreduce(c, op, []TimeRank{{times[c.Rank()], c.Rank()}})
		}
	}
	all := func(n int, v any) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	runCollCases(t, []collCase{
		{"float sum", 4, f64(Sum, func(r int) []float64 { return []float64{float64(r), 0.5} }),
			all(4, []float64{6, 2})},
		{"float max", 4, f64(Max, func(r int) []float64 { return []float64{float64(r % 3), -float64(r)} }),
			all(4, []float64{2, 0})},
		{"float min", 4, f64(Min, func(r int) []float64 { return []float64{float64(r % 3), -float64(r)} }),
			all(4, []float64{0, -3})},
		{"uint sum", 3, u64(Sum, func(r int) []uint64 { return []uint64{uint64(r + 1)} }),
			all(3, []uint64{6})},
		{"uint max min", 3, func(c Comm) (any, error) {
			mx, err := Allreduce(c, Max, []uint64{uint64(c.Rank() * 7 % 5)})
			if err != nil {
				return nil, err
			}
			mn, err := Allreduce(c, Min, []uint64{uint64(c.Rank()*7%5 + 1)})
			return append(mx, mn...), err
		}, all(3, []uint64{4, 1})},
		{"uint bor bitfield", 4, u64(Bor, func(r int) []uint64 { return []uint64{1 << r, 1 << (63 - r)} }),
			all(4, []uint64{0xf, 0xf << 60})},
		{"maxloc distinct", 4, tr(MaxLoc, 3, 9, 1, 4), all(4, []TimeRank{{9, 1}})},
		{"maxloc tie takes lowest rank", 4, tr(MaxLoc, 3, 5, 1, 5), all(4, []TimeRank{{5, 1}})},
		{"maxloc all equal", 4, tr(MaxLoc, 2, 2, 2, 2), all(4, []TimeRank{{2, 0}})},
		{"minloc distinct", 4, tr(MinLoc, 3, 9, 1, 4), all(4, []TimeRank{{1, 2}})},
		{"minloc tie takes lowest rank", 4, tr(MinLoc, 3, 1, 7, 1), all(4, []TimeRank{{1, 1}})},
		{"minloc tie on carried rank, not position", 3, func(c Comm) (any, error) {
			// Ranks carry 10, 5, 7: the tie goes to the lowest carried rank.
			carried := []int{10, 5, 7}
			return Allreduce(c, MinLoc, []TimeRank{{1, carried[c.Rank()]}})
		}, all(3, []TimeRank{{1, 5}})},
		{"maxloc vector", 2, func(c Comm) (any, error) {
			v := [][]TimeRank{{{1, 0}, {5, 0}}, {{2, 1}, {5, 1}}}
			return Allreduce(c, MaxLoc, v[c.Rank()])
		}, all(2, []TimeRank{{2, 1}, {5, 0}})},
		{"reduce to root 2", 3, func(c Comm) (any, error) {
			return Reduce(c, 2, Sum, []float64{float64(c.Rank()) + 1})
		}, []any{[]float64(nil), []float64(nil), []float64{6}}},
		{"reduce maxloc to root 0", 3, func(c Comm) (any, error) {
			return Reduce(c, 0, MaxLoc, []TimeRank{{float64(c.Rank() % 2), c.Rank()}})
		}, []any{[]TimeRank{{1, 1}}, []TimeRank(nil), []TimeRank(nil)}},
		{"empty vector", 2, f64(Sum, func(int) []float64 { return nil }), all(2, []float64{})},
		{"interface with Vector types", 2, func(c Comm) (any, error) {
			return c.Allreduce(Sum, Uint64s{uint64(c.Rank()) + 1})
		}, all(2, Uint64s{3})},
	})
}

func TestScans(t *testing.T) {
	runCollCases(t, []collCase{
		{"scan sum", 4, func(c Comm) (any, error) {
			return Scan(c, Sum, []float64{float64(c.Rank() + 1)})
		}, []any{[]float64{1}, []float64{3}, []float64{6}, []float64{10}}},
		{"exscan sum", 4, func(c Comm) (any, error) {
			return Exscan(c, Sum, []uint64{uint64(c.Rank() + 1)})
		}, []any{[]uint64(nil), []uint64{1}, []uint64{3}, []uint64{6}}},
		{"scan maxloc with ties", 5, func(c Comm) (any, error) {
			times := []float64{2, 1, 2, 5, 3}
			return Scan(c, MaxLoc, []TimeRank{{times[c.Rank()], c.Rank()}})
		}, []any{
			[]TimeRank{{2, 0}}, []TimeRank{{2, 0}}, []TimeRank{{2, 0}},
			[]TimeRank{{5, 3}}, []TimeRank{{5, 3}},
		}},
		{"exscan maxloc", 4, func(c Comm) (any, error) {
			times := []float64{4, 1, 6, 0}
			return Exscan(c, MaxLoc, []TimeRank{{times[c.Rank()], c.Rank()}})
		}, []any{[]TimeRank(nil), []TimeRank{{4, 0}}, []TimeRank{{4, 0}}, []TimeRank{{6, 2}}}},
		{"scan minloc", 3, func(c Comm) (any, error) {
			times := []float64{4, 1, 1}
			return Scan(c, MinLoc, []TimeRank{{times[c.Rank()], c.Rank()}})
		}, []any{[]TimeRank{{4, 0}}, []TimeRank{{1, 1}}, []TimeRank{{1, 1}}}},
		{"scan bor", 3, func(c Comm) (any, error) {
			return Scan(c, Bor, []uint64{1 << c.Rank()})
		}, []any{[]uint64{1}, []uint64{3}, []uint64{7}}},
		{"scan max min", 3, func(c Comm) (any, error) {
			v := []float64{2, 7, 1}[c.Rank()]
			mx, err := Scan(c, Max, []float64{v})
			if err != nil {
				return nil, err
			}
			mn, err := Exscan(c, Min, []float64{v})
			return append(mx, mn...), err
		}, []any{[]float64{2}, []float64{7, 2}, []float64{7, 2}}},
	})
}

// TestResultsNotShared has every rank scribble over its results, then
// checks that the other ranks' results are intact.
func TestResultsNotShared(t *testing.T) {
	const n = 3
	got := mustRun(t, n, func(c Comm) (string, error) {
		b, err := c.Bcast(0, []byte("root"))
		if err != nil {
			return "", err
		}
		all, err := c.Allgather([]byte{'a' + byte(c.Rank())})
		if err != nil {
			return "", err
		}
		sum, err := c.Allreduce(Sum, Float64s{1})
		if err != nil {
			return "", err
		}
		b[0] = byte('0' + c.Rank())
		all[c.Rank()][0] = 'X'
		all[0] = append(all[0], 'Y') // must not run into all[1]
		sum.(Float64s)[0] = float64(c.Rank())
		if err := c.Barrier(); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %q %v", b[1:], all, sum), nil
	})
	want := []string{
		`oot ["XY" "b" "c"] [0]`,
		`oot ["aY" "X" "c"] [1]`,
		`oot ["aY" "b" "X"] [2]`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCollectiveMismatch(t *testing.T) {
	tests := []struct {
		name string
		call func(c Comm) error
		want []string // in every rank's error, the two calls that differ
	}{{
		name: "different roots",
		call: func(c Comm) error { _, err := c.Bcast(min(c.Rank(), 1), nil); return err },
		want: []string{"called Bcast(root=0)", "called Bcast(root=1)"},
	}, {
		name: "different collectives",
		call: func(c Comm) error {
			if c.Rank() == 2 {
				_, err := c.Allgather(nil)
				return err
			}
			return c.Barrier()
		},
		want: []string{"called Barrier", "rank 2 called Allgather"},
	}, {
		name: "different vector lengths",
		call: func(c Comm) error { _, err := c.Allreduce(Sum, make(Float64s, 1+c.Rank()/2)); return err },
		want: []string{"called Allreduce(Sum, Float64s[1])", "rank 2 called Allreduce(Sum, Float64s[2])"},
	}, {
		name: "different types",
		call: func(c Comm) error {
			var v Vector = Uint64s{1}
			if c.Rank() == 1 {
				v = Float64s{1}
			}
			_, err := c.Scan(Max, v)
			return err
		},
		want: []string{"called Scan(Max, Uint64s[1])", "rank 1 called Scan(Max, Float64s[1])"},
	}, {
		name: "different ops",
		call: func(c Comm) error {
			op := MaxLoc
			if c.Rank() == 1 {
				op = MinLoc
			}
			_, err := c.Allreduce(op, TimeRanks{{}})
			return err
		},
		want: []string{"called Allreduce(MaxLoc, TimeRanks[1])", "rank 1 called Allreduce(MinLoc, TimeRanks[1])"},
	}, {
		name: "scan and exscan",
		call: func(c Comm) error {
			if c.Rank() == 0 {
				_, err := c.Scan(Sum, Float64s{1})
				return err
			}
			_, err := c.Exscan(Sum, Float64s{1})
			return err
		},
		want: []string{"rank 0 called Scan(Sum, Float64s[1])", "called Exscan(Sum, Float64s[1])"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := rankErrs(t, 3, tt.call)
			for r, err := range errs {
				if !errors.Is(err, ErrMismatch) {
					t.Errorf("rank %d: error %v, want ErrMismatch", r, err)
					continue
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, "hpc: collective mismatch on comm WORLD (call 0): ") {
					t.Errorf("rank %d: error %q lacks the mismatch prefix", r, msg)
				}
				for _, w := range tt.want {
					if !strings.Contains(msg, w) {
						t.Errorf("rank %d: error %q does not contain %q", r, msg, w)
					}
				}
			}
		})
	}
}

func TestCollectiveArgs(t *testing.T) {
	tests := []struct {
		name string
		call func(c Comm) error
		want string
	}{{
		name: "bor on floats",
		call: func(c Comm) error { _, err := c.Allreduce(Bor, Float64s{1}); return err },
		want: "called Allreduce(Bor, Float64s[1]) on comm WORLD (call 0): operation Bor does not apply to Float64s",
	}, {
		name: "maxloc on uints",
		call: func(c Comm) error { _, err := c.Scan(MaxLoc, Uint64s{1}); return err },
		want: "operation MaxLoc does not apply to Uint64s",
	}, {
		name: "sum on pairs",
		call: func(c Comm) error { _, err := c.Exscan(Sum, TimeRanks{}); return err },
		want: "operation Sum does not apply to TimeRanks",
	}, {
		name: "zero op",
		call: func(c Comm) error { _, err := c.Allreduce(0, Float64s{}); return err },
		want: "operation Op(0) does not apply to Float64s",
	}, {
		name: "nil vector",
		call: func(c Comm) error { _, err := c.Allreduce(Sum, nil); return err },
		want: "unsupported vector type nil",
	}, {
		name: "root out of range",
		call: func(c Comm) error { _, err := c.Gather(5, nil); return err },
		want: "called Gather(root=5) on comm WORLD (call 0): root 5 out of range [0, 2)",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := rankErrs(t, 2, tt.call)
			for r, err := range errs {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("rank %d: error %v, want it to contain %q", r, err, tt.want)
				}
			}
		})
	}
}

// TestCollectiveSequence mixes collectives and messages on one
// communicator many times, as a replay does.
func TestCollectiveSequence(t *testing.T) {
	const n, rounds = 4, 100
	got := mustRun(t, n, func(c Comm) ([]TimeRank, error) {
		var out []TimeRank
		for i := range rounds {
			enter := float64((c.Rank()*7 + i*3) % 11)
			latest, err := Allreduce(c, MaxLoc, []TimeRank{{enter, c.Rank()}})
			if err != nil {
				return nil, err
			}
			earliest, err := Allreduce(c, MinLoc, []TimeRank{{enter, c.Rank()}})
			if err != nil {
				return nil, err
			}
			if err := c.Send((c.Rank()+1)%n, i, nil); err != nil {
				return nil, err
			}
			if _, err := c.Recv((c.Rank()+n-1)%n, i); err != nil {
				return nil, err
			}
			out = append(out, latest[0], earliest[0])
		}
		return out, nil
	})
	for i := range rounds {
		lat, ear := TimeRank{-1, -1}, TimeRank{99, -1}
		for r := range n {
			e := float64((r*7 + i*3) % 11)
			if e > lat.Time {
				lat = TimeRank{e, r}
			}
			if e < ear.Time {
				ear = TimeRank{e, r}
			}
		}
		for r := range n {
			if diff := cmp.Diff([]TimeRank{lat, ear}, got[r][2*i:2*i+2]); diff != "" {
				t.Fatalf("round %d rank %d (-want +got):\n%s", i, r, diff)
			}
		}
	}
}
