package hpc

import (
	"strings"
	"testing"
	"time"
)

// runTimeout bounds every in-process run of the tests.
const runTimeout = 10 * time.Second

// runRanks runs fn on n in-process ranks and returns each rank's result
// by world rank and the run's error. It fails the test if the run does
// not end within runTimeout.
func runRanks[T any](t testing.TB, n int, fn func(c Comm) (T, error)) ([]T, error) {
	t.Helper()
	out := make([]T, n)
	done := make(chan error, 1)
	go func() {
		done <- RunInProcess(n, func(c Comm) error {
			v, err := fn(c)
			out[c.Rank()] = v
			return err
		})
	}()
	select {
	case err := <-done:
		return out, err
	case <-time.After(runTimeout):
		t.Fatalf("run of %d ranks did not end within %v", n, runTimeout)
		return nil, nil
	}
}

// mustRun is runRanks for runs that must succeed.
func mustRun[T any](t testing.TB, n int, fn func(c Comm) (T, error)) []T {
	t.Helper()
	out, err := runRanks(t, n, fn)
	if err != nil {
		t.Fatalf("RunInProcess(%d): %v", n, err)
	}
	return out
}

// rankErrs runs fn on n ranks and returns each rank's error message
// ("" for none), checking that the joined run error contains them all.
func rankErrs(t *testing.T, n int, fn func(c Comm) error) []error {
	t.Helper()
	errs, runErr := runRanks(t, n, func(c Comm) (error, error) {
		err := fn(c)
		return err, err
	})
	for r, err := range errs {
		if err != nil && (runErr == nil || !strings.Contains(runErr.Error(), err.Error())) {
			t.Errorf("rank %d error %q missing from run error %v", r, err, runErr)
		}
	}
	if runErr != nil && allNil(errs) {
		t.Errorf("run error %v but no rank failed", runErr)
	}
	return errs
}

func allNil(errs []error) bool {
	for _, e := range errs {
		if e != nil {
			return false
		}
	}
	return true
}
