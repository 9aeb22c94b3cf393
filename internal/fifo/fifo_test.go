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

// TestKeepSpares: a queue that fills in bursts and drains between them
// takes no new blocks after its first burst when it may keep enough
// spares; with the default (one) it takes them again at every burst.
func TestKeepSpares(t *testing.T) {
	const burst = 20 * maxBlock
	tests := []struct {
		name       string
		keep       int  // 0: the default
		wantAllocs bool // a burst after the first allocates
	}{
		{"default", 0, true},
		{"enough", burst / maxBlock, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var q Queue[int]
			if tc.keep > 0 {
				q.KeepSpares(tc.keep)
			}
			next, want := 0, 0
			round := func() {
				for range burst {
					q.Push(next)
					next++
				}
				for q.Len() > 0 {
					if v := q.Pop(); v != want {
						t.Fatalf("Pop = %d, want %d", v, want)
					}
					want++
				}
			}
			round()
			allocs := testing.AllocsPerRun(5, round)
			if got := allocs > 0; got != tc.wantAllocs {
				t.Errorf("%.0f allocations per burst after the first, want some: %v", allocs, tc.wantAllocs)
			}
			if limit := burst + 2*maxBlock; tc.keep > 0 && q.held() > limit {
				t.Errorf("room for %d values after bursts of %d, want at most %d", q.held(), burst, limit)
			}
		})
	}
}
