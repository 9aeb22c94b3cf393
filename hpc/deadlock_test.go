package hpc

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// errorBound is how soon a blocked run must end with an error.
const errorBound = 2 * time.Second

var errBoom = errors.New("boom")

func TestDeadlocks(t *testing.T) {
	tests := []struct {
		name string
		n    int
		fn   func(w Comm) error
		// want holds, by rank, the exact error or, ending in "...", its
		// prefix; "" means no error.
		want []string
		is   error // every non-nil error wraps it
	}{{
		name: "recv with no sender",
		n:    2,
		fn: func(w Comm) error {
			if w.Rank() == 0 {
				_, err := w.Recv(1, 7)
				return err
			}
			return nil
		},
		want: []string{"hpc: deadlock: rank 0 blocked in Recv(src=1, tag=7) on comm WORLD; rank 1 exited", ""},
		is:   ErrDeadlock,
	}, {
		name: "recv with the wrong tag",
		n:    2,
		fn: func(w Comm) error {
			if w.Rank() == 0 {
				_, err := w.Recv(1, 2)
				return err
			}
			return w.Send(0, 1, []byte("tag 1"))
		},
		want: []string{"hpc: deadlock: rank 0 blocked in Recv(src=1, tag=2) on comm WORLD; rank 1 exited", ""},
		is:   ErrDeadlock,
	}, {
		name: "recv from self",
		n:    1,
		fn:   func(w Comm) error { _, err := w.Recv(0, 0); return err },
		want: []string{"hpc: deadlock: rank 0 blocked in Recv(src=0, tag=0) on comm WORLD..."},
		is:   ErrDeadlock,
	}, {
		name: "circular recv",
		n:    3,
		fn: func(w Comm) error {
			_, err := w.Recv((w.Rank()+1)%3, 0)
			return err
		},
		want: []string{
			"hpc: deadlock: rank 0 blocked in Recv(src=1, tag=0) on comm WORLD; rank 1 blocked in Recv(src=2, tag=0) on comm WORLD; rank 2 blocked in Recv(src=0, tag=0) on comm WORLD",
			"hpc: deadlock: rank 1 blocked in Recv(src=2, tag=0) on comm WORLD; rank 0 blocked in Recv(src=1, tag=0) on comm WORLD; rank 2 blocked in Recv(src=0, tag=0) on comm WORLD",
			"hpc: deadlock: rank 2 blocked in Recv(src=0, tag=0) on comm WORLD; rank 0 blocked in Recv(src=1, tag=0) on comm WORLD; rank 1 blocked in Recv(src=2, tag=0) on comm WORLD",
		},
		is: ErrDeadlock,
	}, {
		name: "missing collective participant",
		n:    3,
		fn: func(w Comm) error {
			if w.Rank() == 2 {
				return nil
			}
			return w.Barrier()
		},
		want: []string{
			"hpc: deadlock: rank 0 blocked in Barrier on comm WORLD (call 0) waiting for rank ...",
			"hpc: deadlock: rank 1 blocked in Barrier on comm WORLD (call 0) waiting for rank ...",
			"",
		},
		is: ErrDeadlock,
	}, {
		name: "collective against a blocked recv",
		n:    2,
		fn: func(w Comm) error {
			if w.Rank() == 0 {
				_, err := w.Recv(1, 3)
				return err
			}
			_, err := w.Allreduce(MaxLoc, TimeRanks{{1, 1}})
			return err
		},
		want: []string{
			"hpc: deadlock: rank 0 blocked in Recv(src=1, tag=3) on comm WORLD; rank 1 blocked in Allreduce(MaxLoc, TimeRanks[1]) on comm WORLD (call 0) waiting for rank 0",
			"hpc: deadlock: rank 1 blocked in Allreduce(MaxLoc, TimeRanks[1]) on comm WORLD (call 0) waiting for rank 0; rank 0 blocked in Recv(src=1, tag=3) on comm WORLD",
		},
		is: ErrDeadlock,
	}, {
		name: "sub-communicator",
		n:    3,
		fn: func(w Comm) error {
			sub, err := w.Create([]int{2, 0})
			if err != nil || sub == nil {
				return err
			}
			sub.SetName("comm 3")
			_, err = sub.Recv(1-sub.Rank(), 5)
			return err
		},
		want: []string{
			"hpc: deadlock: rank 0 blocked in Recv(src=0, tag=5) on comm comm 3 (rank 1 of 2) from rank 2; rank 1 exited; rank 2 blocked in Recv(src=1, tag=5) on comm comm 3 (rank 0 of 2) from rank 0",
			"",
			"hpc: deadlock: rank 2 blocked in Recv(src=1, tag=5) on comm comm 3 (rank 0 of 2) from rank 0; rank 0 blocked in Recv(src=0, tag=5) on comm comm 3 (rank 1 of 2) from rank 2; rank 1 exited",
		},
		is: ErrDeadlock,
	}, {
		name: "split with a member missing",
		n:    2,
		fn: func(w Comm) error {
			if w.Rank() == 1 {
				return nil
			}
			_, err := w.Split(0, 0)
			return err
		},
		want: []string{"hpc: deadlock: rank 0 blocked in Split(color=0, key=0) on comm WORLD (call 0) waiting for rank 1; rank 1 exited", ""},
		is:   ErrDeadlock,
	}, {
		name: "one rank fails",
		n:    3,
		fn: func(w Comm) error {
			switch w.Rank() {
			case 0:
				_, err := w.Recv(1, 0)
				return err
			case 1:
				return errBoom
			}
			return w.Barrier()
		},
		want: []string{
			"hpc: aborted: rank 0 blocked in Recv(src=1, tag=0) on comm WORLD: rank 1 failed: boom",
			"boom",
			"hpc: aborted: rank 2 blocked in Barrier on comm WORLD (call 0) waiting for rank ...",
		},
		is: ErrAborted,
	}, {
		name: "one rank panics",
		n:    2,
		fn: func(w Comm) error {
			if w.Rank() == 1 {
				panic("oops")
			}
			return w.Barrier()
		},
		want: []string{
			"hpc: aborted: rank 0 blocked in Barrier on comm WORLD (call 0) waiting for rank 1: rank 1 failed: hpc: rank 1 panicked: oops ...",
			"",
		},
		is: ErrAborted,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			errs := rankErrs(t, tt.n, tt.fn)
			if d := time.Since(start); d > errorBound {
				t.Errorf("run took %v, want under %v", d, errorBound)
			}
			for r, err := range errs {
				got := ""
				if err != nil {
					got = err.Error()
				}
				want := tt.want[r]
				if p, ok := strings.CutSuffix(want, "..."); ok {
					if !strings.HasPrefix(got, p) {
						t.Errorf("rank %d error:\n got %q\nwant prefix %q", r, got, p)
					}
				} else if got != want {
					t.Errorf("rank %d error:\n got %q\nwant %q", r, got, want)
				}
				if err != nil && tt.is != nil && !errors.Is(err, tt.is) && !errors.Is(err, errBoom) {
					t.Errorf("rank %d error %v does not wrap %v", r, err, tt.is)
				}
			}
		})
	}
}

// TestAbortWrapsCause checks that aborted ranks can tell what failed.
func TestAbortWrapsCause(t *testing.T) {
	errs := rankErrs(t, 2, func(w Comm) error {
		if w.Rank() == 0 {
			return fmt.Errorf("reading trace: %w", errBoom)
		}
		_, err := w.Recv(0, 0)
		return err
	})
	if !errors.Is(errs[1], ErrAborted) || !errors.Is(errs[1], errBoom) {
		t.Errorf("rank 1 error %v: want ErrAborted wrapping errBoom", errs[1])
	}
}

// TestRunError checks the joined error of RunInProcess.
func TestRunError(t *testing.T) {
	err := RunInProcess(3, func(w Comm) error {
		switch w.Rank() {
		case 1:
			return errBoom
		case 2:
			panic("oops")
		}
		return nil
	})
	lines := strings.Split(err.Error(), "\n")
	if lines[0] != "rank 1: boom" || lines[1] != "hpc: rank 2 panicked: oops" {
		t.Errorf("RunInProcess error starts %q, want rank 1's then rank 2's", lines[:2])
	}
	if !strings.Contains(err.Error(), "deadlock_test.go") {
		t.Errorf("panic error lacks the stack:\n%v", err)
	}
	if !errors.Is(err, ErrPanic) {
		t.Errorf("run error %v does not wrap ErrPanic", err)
	}
	if got := RunInProcess(0, nil); got == nil {
		t.Error("RunInProcess(0) succeeded")
	}
}

// TestCallsAfterFailureReturn checks that a rank that ignores errors and
// keeps calling still ends: every later call fails at once.
func TestCallsAfterFailureReturn(t *testing.T) {
	got, err := runRanks(t, 3, func(w Comm) ([]string, error) {
		if w.Rank() == 2 {
			return nil, errBoom
		}
		var out []string
		for i := 0; i < 3; i++ {
			var err error
			switch i {
			case 0:
				_, err = w.Recv(2, 0)
			case 1:
				err = w.Send(1-w.Rank(), 0, nil)
			case 2:
				err = w.Barrier()
			}
			out = append(out, fmt.Sprint(errors.Is(err, ErrAborted)))
		}
		return out, nil
	})
	if !errors.Is(err, errBoom) {
		t.Errorf("run error %v, want errBoom", err)
	}
	want := [][]string{{"true", "true", "true"}, {"true", "true", "true"}, nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ErrAborted by rank and call (-want +got):\n%s", diff)
	}
}

// TestLargeDeadlock checks that a deadlock among many ranks is found
// quickly and the message stays short.
func TestLargeDeadlock(t *testing.T) {
	const n = 200
	start := time.Now()
	errs := rankErrs(t, n, func(w Comm) error {
		if err := w.Barrier(); err != nil {
			return err
		}
		_, err := w.Recv((w.Rank()+1)%n, 1)
		return err
	})
	if d := time.Since(start); d > errorBound {
		t.Errorf("run took %v, want under %v", d, errorBound)
	}
	want := "hpc: deadlock: rank 7 blocked in Recv(src=8, tag=1) on comm WORLD; rank 0 blocked in Recv(src=1, tag=1) on comm WORLD; "
	if got := errs[7].Error(); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "; and 191 more") {
		t.Errorf("rank 7 error %q, want prefix %q and suffix %q", got, want, "; and 191 more")
	}
	for r, err := range errs {
		if !errors.Is(err, ErrDeadlock) {
			t.Fatalf("rank %d: error %v, want ErrDeadlock", r, err)
		}
	}
}

// TestNoFalseDeadlock has ranks block while one rank is busy outside
// the package; that is no deadlock.
func TestNoFalseDeadlock(t *testing.T) {
	got := mustRun(t, 3, func(w Comm) (string, error) {
		if w.Rank() == 2 {
			time.Sleep(50 * time.Millisecond)
			if err := w.Send(0, 0, []byte("late")); err != nil {
				return "", err
			}
			return "", w.Barrier()
		}
		if err := w.Barrier(); err != nil {
			return "", err
		}
		if w.Rank() == 0 {
			b, err := w.Recv(2, 0)
			return string(b), err
		}
		return "", nil
	})
	if diff := cmp.Diff([]string{"late", "", ""}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
