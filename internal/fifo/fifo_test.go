package fifo

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestQueue: values come out in order (Peek shows the next), and a queue that is never empty
// (its consumer a few values behind) keeps memory for its backlog, not
// for every value that passed.
func TestQueue(t *testing.T) {
	tests := []struct {
		name    string
		backlog int // values queued before the steady state
		pushes  int
	}{
		{"empty between values", 0, 100000},
		{"one behind", 1, 100000},
		{"many behind", 1000, 100000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var q Queue[int]
			var got, want []int
			next := 0
			for range tc.backlog {
				q.Push(next)
				want = append(want, next)
				next++
			}
			most := 0 // room held at most in the steady state
			for range tc.pushes {
				q.Push(next)
				want = append(want, next)
				next++
				if q.Peek() != want[len(got)] {
					t.Fatalf("Peek = %d, want %d", q.Peek(), want[len(got)])
				}
				got = append(got, q.Pop())
				most = max(most, q.held())
			}
			for q.Len() > 0 {
				if q.Peek() != want[len(got)] {
					t.Fatalf("Peek = %d, want %d", q.Peek(), want[len(got)])
				}
				got = append(got, q.Pop())
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("values out (-want +got):\n%s", diff)
			}
			if limit := tc.backlog + 3*maxBlock; most > limit {
				t.Errorf("room for %d values with a backlog of %d, want at most %d", most, tc.backlog, limit)
			}
		})
	}
}
