package hpc

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// workload is a small replay-like program: messages in a pattern that
// depends on the rank, float sums whose value depends on the order of
// addition, MAXLOC/MINLOC with ties, scans and sub-communicators. It
// returns a transcript of everything rank w.Rank() saw.
func workload(w Comm) ([]string, error) {
	n, me := w.Size(), w.Rank()
	var out []string
	logf := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	sub, err := w.Split(me%3, n-me)
	if err != nil {
		return nil, err
	}
	for round := range 20 {
		// Every rank sends to two others with two tags, then receives.
		for _, d := range []int{(me + 1) % n, (me + round + 2) % n} {
			for tag := range 2 {
				msg := binary.LittleEndian.AppendUint64(nil, math.Float64bits(float64(me)+float64(round)/10))
				if err := w.Send(d, tag, msg); err != nil {
					return nil, err
				}
			}
		}
		for _, s := range []int{(me + n - 1) % n, (me - round - 2 + 2*n*21) % n} {
			for tag := 1; tag >= 0; tag-- {
				b, err := w.Recv(s, tag)
				if err != nil {
					return nil, err
				}
				logf("r%d recv %d/%d %v", round, s, tag, math.Float64frombits(binary.LittleEndian.Uint64(b)))
			}
		}
		// Sums whose result depends on order: 1e16 + small values.
		v := 1.0 + float64(me)*0.1
		if me == 0 {
			v = 1e16
		}
		sum, err := Allreduce(w, Sum, []float64{v, -v})
		if err != nil {
			return nil, err
		}
		t := float64((me * 5 / 3) % 4)
		mx, err := Allreduce(w, MaxLoc, []TimeRank{{t, me}})
		if err != nil {
			return nil, err
		}
		mn, err := Allreduce(sub, MinLoc, []TimeRank{{t, sub.Rank()}})
		if err != nil {
			return nil, err
		}
		sc, err := Scan(w, Sum, []float64{v})
		if err != nil {
			return nil, err
		}
		logf("r%d sum %v max %v min %v scan %v", round, sum, mx, mn, sc)
	}
	return out, nil
}

// TestDeterministic runs the workload several times and requires
// identical transcripts.
func TestDeterministic(t *testing.T) {
	const n, runs = 7, 5
	first := mustRun(t, n, workload)
	for i := 1; i < runs; i++ {
		got := mustRun(t, n, workload)
		if diff := cmp.Diff(first, got); diff != "" {
			t.Fatalf("run %d differs from run 0 (-run0 +run%d):\n%s", i, i, diff)
		}
	}
}

func BenchmarkPingPong(b *testing.B) {
	for _, size := range []int{8, 1 << 10} {
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			payload := make([]byte, size)
			start := time.Now()
			err := RunInProcess(2, func(w Comm) error {
				peer := 1 - w.Rank()
				for i := 0; i < b.N; i++ {
					if w.Rank() == 0 {
						if err := w.Send(peer, 0, payload); err != nil {
							return err
						}
						if _, err := w.Recv(peer, 0); err != nil {
							return err
						}
						continue
					}
					if _, err := w.Recv(peer, 0); err != nil {
						return err
					}
					if err := w.Send(peer, 0, payload); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(2*b.N)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}

func BenchmarkAllreduce(b *testing.B) {
	for _, n := range []int{4, 64} {
		b.Run(fmt.Sprintf("ranks=%d", n), func(b *testing.B) {
			start := time.Now()
			err := RunInProcess(n, func(w Comm) error {
				v := []TimeRank{{float64(w.Rank()), w.Rank()}}
				for i := 0; i < b.N; i++ {
					if _, err := Allreduce(w, MaxLoc, v); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "allreduces/s")
		})
	}
}
