package hpc

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type sendOp struct {
	dest, tag int
	data      string
	isend     bool
}

type recvOp struct{ src, tag int }

func TestPointToPoint(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		sends map[int][]sendOp // by rank, done before the receives
		recvs map[int][]recvOp
		want  [][]string // received payloads by rank
	}{{
		name:  "fifo per tag",
		n:     2,
		sends: map[int][]sendOp{0: {{1, 0, "a", false}, {1, 0, "b", false}, {1, 0, "c", false}}},
		recvs: map[int][]recvOp{1: {{0, 0}, {0, 0}, {0, 0}}},
		want:  [][]string{nil, {"a", "b", "c"}},
	}, {
		name:  "tag matching out of send order",
		n:     2,
		sends: map[int][]sendOp{0: {{1, 1, "x", false}, {1, 2, "y", false}, {1, 1, "z", false}}},
		recvs: map[int][]recvOp{1: {{0, 2}, {0, 1}, {0, 1}}},
		want:  [][]string{nil, {"y", "x", "z"}},
	}, {
		name: "source matching",
		n:    3,
		sends: map[int][]sendOp{
			0: {{2, 5, "from0", false}},
			1: {{2, 5, "from1", false}},
		},
		recvs: map[int][]recvOp{2: {{1, 5}, {0, 5}}},
		want:  [][]string{nil, nil, {"from1", "from0"}},
	}, {
		name:  "send and isend keep one order",
		n:     2,
		sends: map[int][]sendOp{1: {{0, 3, "s1", false}, {0, 3, "i2", true}, {0, 3, "s3", false}, {0, 3, "i4", true}}},
		recvs: map[int][]recvOp{0: {{1, 3}, {1, 3}, {1, 3}, {1, 3}}},
		want:  [][]string{{"s1", "i2", "s3", "i4"}, nil},
	}, {
		name:  "send to self",
		n:     1,
		sends: map[int][]sendOp{0: {{0, 0, "me", false}, {0, 1, "me too", true}}},
		recvs: map[int][]recvOp{0: {{0, 1}, {0, 0}}},
		want:  [][]string{{"me too", "me"}},
	}, {
		name:  "empty message",
		n:     2,
		sends: map[int][]sendOp{0: {{1, 0, "", false}, {1, 0, "after", false}}},
		recvs: map[int][]recvOp{1: {{0, 0}, {0, 0}}},
		want:  [][]string{nil, {"", "after"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustRun(t, tt.n, func(c Comm) ([]string, error) {
				for _, s := range tt.sends[c.Rank()] {
					if !s.isend {
						if err := c.Send(s.dest, s.tag, []byte(s.data)); err != nil {
							return nil, err
						}
						continue
					}
					req, err := c.Isend(s.dest, s.tag, []byte(s.data))
					if err != nil {
						return nil, err
					}
					if err := req.Wait(); err != nil {
						return nil, err
					}
				}
				var got []string
				for _, r := range tt.recvs[c.Rank()] {
					b, err := c.Recv(r.src, r.tag)
					if err != nil {
						return nil, err
					}
					if b == nil {
						return nil, fmt.Errorf("Recv(%d, %d) returned nil", r.src, r.tag)
					}
					got = append(got, string(b))
				}
				return got, nil
			})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("received payloads (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRecvBeforeSend has receivers block before the matching sends, in
// a ring, many times over.
func TestRecvBeforeSend(t *testing.T) {
	const n, rounds = 5, 200
	got := mustRun(t, n, func(c Comm) (int, error) {
		next, prev := (c.Rank()+1)%n, (c.Rank()+n-1)%n
		sum := 0
		for i := range rounds {
			if c.Rank() == i%n {
				if err := c.Send(next, i, []byte{byte(i)}); err != nil {
					return 0, err
				}
				continue
			}
			if c.Rank() == (i+1)%n {
				b, err := c.Recv(prev, i)
				if err != nil {
					return 0, err
				}
				sum += int(b[0])
			}
		}
		return sum, nil
	})
	want := make([]int, n)
	for i := range rounds {
		want[(i+1)%n] += i % 256
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sums (-want +got):\n%s", diff)
	}
}

func TestIsendRequest(t *testing.T) {
	got := mustRun(t, 2, func(c Comm) (string, error) {
		if c.Rank() == 0 {
			req, err := c.Isend(1, 9, []byte("payload"))
			if err != nil {
				return "", err
			}
			done, err := req.Test()
			if err != nil || !done {
				return "", fmt.Errorf("Test = %v, %v; want true, nil", done, err)
			}
			return "", req.Wait()
		}
		b, err := c.Recv(0, 9)
		return string(b), err
	})
	if diff := cmp.Diff([]string{"", "payload"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestNoAliasing checks that neither the sender's later writes nor the
// receiver's writes reach the other side.
func TestNoAliasing(t *testing.T) {
	got := mustRun(t, 2, func(c Comm) (string, error) {
		if c.Rank() == 0 {
			buf := []byte("abc")
			if err := c.Send(1, 0, buf); err != nil {
				return "", err
			}
			req, err := c.Isend(1, 1, buf)
			if err != nil {
				return "", err
			}
			copy(buf, "XYZ")
			if err := req.Wait(); err != nil {
				return "", err
			}
			if err := c.Barrier(); err != nil {
				return "", err
			}
			return string(buf), nil
		}
		a, err := c.Recv(0, 0)
		if err != nil {
			return "", err
		}
		if err := c.Barrier(); err != nil { // the sender has overwritten buf
			return "", err
		}
		b, err := c.Recv(0, 1)
		if err != nil {
			return "", err
		}
		copy(a, "123")
		return string(a) + string(b), nil
	})
	if diff := cmp.Diff([]string{"XYZ", "123abc"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestPointToPointArgs(t *testing.T) {
	tests := []struct {
		name string
		call func(c Comm) error
		want string
	}{
		{"dest too large", func(c Comm) error { return c.Send(2, 0, nil) },
			"hpc: rank 0: Send(dest=2, tag=0) on comm WORLD: dest 2 out of range [0, 2)"},
		{"negative dest", func(c Comm) error { _, err := c.Isend(-1, 0, nil); return err },
			"hpc: rank 0: Isend(dest=-1, tag=0) on comm WORLD: dest -1 out of range [0, 2)"},
		{"negative tag", func(c Comm) error { return c.Send(1, -4, nil) },
			"hpc: rank 0: Send(dest=1, tag=-4) on comm WORLD: negative tag"},
		{"bad src", func(c Comm) error { _, err := c.Recv(7, 0); return err },
			"hpc: rank 0: Recv(src=7, tag=0) on comm WORLD: src 7 out of range [0, 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustRun(t, 2, func(c Comm) (string, error) {
				if c.Rank() != 0 {
					return "", nil
				}
				err := tt.call(c)
				if err == nil {
					return "", errors.New("no error")
				}
				return err.Error(), nil
			})
			if got[0] != tt.want {
				t.Errorf("error = %q, want %q", got[0], tt.want)
			}
		})
	}
}

// TestManyTags exercises many queues at once with interleaved senders.
func TestManyTags(t *testing.T) {
	const n, tags = 4, 50
	got := mustRun(t, n, func(c Comm) (string, error) {
		for tag := range tags {
			for d := range n {
				if err := c.Send(d, tag, fmt.Appendf(nil, "%d>%d#%d", c.Rank(), d, tag)); err != nil {
					return "", err
				}
			}
		}
		var b strings.Builder
		for tag := tags - 1; tag >= 0; tag-- {
			for s := n - 1; s >= 0; s-- {
				m, err := c.Recv(s, tag)
				if err != nil {
					return "", err
				}
				b.Write(m)
				b.WriteByte(' ')
			}
		}
		return b.String(), nil
	})
	for r, s := range got {
		var want strings.Builder
		for tag := tags - 1; tag >= 0; tag-- {
			for s := n - 1; s >= 0; s-- {
				fmt.Fprintf(&want, "%d>%d#%d ", s, r, tag)
			}
		}
		if s != want.String() {
			t.Errorf("rank %d received %q, want %q", r, s, want.String())
		}
	}
}

// TestTokenRing passes a token around many ranks: at every moment all
// ranks but one are blocked, which must not look like a deadlock.
func TestTokenRing(t *testing.T) {
	const n, rounds = 100, 10
	got := mustRun(t, n, func(c Comm) (int, error) {
		next, prev := (c.Rank()+1)%n, (c.Rank()+n-1)%n
		hops := 0
		for range rounds {
			if c.Rank() == 0 {
				if err := c.Send(next, 0, []byte{0}); err != nil {
					return 0, err
				}
			}
			b, err := c.Recv(prev, 0)
			if err != nil {
				return 0, err
			}
			hops = int(b[0]) + 1
			if c.Rank() != 0 {
				if err := c.Send(next, 0, []byte{byte(hops)}); err != nil {
					return 0, err
				}
			}
		}
		return hops, nil
	})
	if got[0] != n {
		t.Errorf("token made %d hops, want %d", got[0], n)
	}
}
