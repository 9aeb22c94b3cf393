package patterns

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/replay"
)

// point is a path point of a test: its kind, event and arguments.
type point struct {
	kind, ev int
	args     []int
}

// encodePart encodes the points of a location of events events as a
// part of its rank's message (pathPoints, solvePath).
func encodePart(events int, pts ...point) []byte {
	var body, leaves []byte
	prev, lprev, n := events, events, 0
	for _, p := range pts {
		body = append(body, byte(p.kind))
		body = binary.AppendUvarint(body, uint64(prev-p.ev))
		for _, a := range p.args {
			body = binary.AppendUvarint(body, uint64(a))
		}
		prev = p.ev
		if p.kind == ptLeave {
			leaves = binary.AppendUvarint(leaves, uint64(lprev-p.ev))
			lprev, n = p.ev, n+1
		}
	}
	out := binary.AppendUvarint(make([]byte, partHeader), uint64(n))
	out = append(append(out, leaves...), body...)
	binary.LittleEndian.PutUint32(out, uint32(events))
	binary.LittleEndian.PutUint32(out[4:], uint32(len(out)-partHeader))
	return out
}

// decodeSegs decodes a rank's segments, by thread.
func decodeSegs(t *testing.T, b []byte) [][]int {
	var out [][]int
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		seg := b[k : k+int(n)]
		b = b[k+int(n):]
		th := []int{}
		for len(seg) > 0 {
			from, k := binary.Uvarint(seg)
			d, j := binary.Uvarint(seg[k:])
			seg = seg[k+j:]
			th = append(th, int(from), int(from+d))
		}
		out = append(out, th)
	}
	return out
}

// TestWalkPath walks hand-made point lists: a Late Sender chain, a
// collective, a Late Receiver and a team of threads; the segments are
// the intervals from each wait state back to where the location joined
// the path, in bwc's order.
func TestWalkPath(t *testing.T) {
	env := &replay.Env{CommMembers: map[uint32][]int{0: {0, 1, 2}}}
	tests := []struct {
		name  string
		ranks [][]byte
		want  [][][]int // by rank, by thread: its (from, to) pairs
	}{{
		// rank 2 finalizes last and waited at its receive (event 50)
		// for rank 1, which waited at 30 for rank 0
		name: "late sender chain",
		ranks: [][]byte{
			encodePart(100, point{ptArrive, 20, []int{1, 30}}, point{ptInit, 1, nil}),
			encodePart(100, point{ptArrive, 60, []int{2, 50}}, point{ptLeave, 30, nil}, point{ptInit, 1, nil}),
			encodePart(100, point{ptFinalize, 90, nil}, point{ptLeave, 50, nil}, point{ptInit, 1, nil}),
		},
		want: [][][]int{{{1, 20}}, {{30, 60}}, {{50, 90}}},
	}, {
		// rank 0 finalizes last, waited at a barrier (instance 0 of
		// communicator 0) that rank 2 delayed; rank 1 did not wait
		name: "collective",
		ranks: [][]byte{
			encodePart(50, point{ptFinalize, 40, nil}, point{ptCollLeave, 20, []int{0, 0}}, point{ptInit, 1, nil}),
			encodePart(50, point{ptCollLeave, 20, []int{0, 0}}, point{ptInit, 1, nil}),
			encodePart(50, point{ptCollPass, 25, []int{0, 0}}, point{ptCollArrive, 25, []int{0, 0}}, point{ptInit, 2, nil}),
		},
		want: [][][]int{{{20, 40}}, {{}}, {{2, 25}}},
	}, {
		// rank 0's send completion at 30 waited for rank 1's receive
		// request at 10; the path, at rank 0 from Finalize, moves there
		name: "late receiver",
		ranks: [][]byte{
			encodePart(50, point{ptFinalize, 45, nil}, point{ptLeave, 30, nil}, point{ptInit, 1, nil}),
			encodePart(50, point{ptArrive, 10, []int{0, 30}}, point{ptInit, 1, nil}),
		},
		want: [][][]int{{{30, 45}}, {{1, 10}}},
	}, {
		// rank 0's master holds the path from Finalize into a parallel
		// region: at the barrier (both threads' Leave at 20) it waited,
		// so the worker, which did not, takes it; at the fork (5) it
		// returns to the master
		name: "team",
		ranks: [][]byte{append(
			encodePart(50, point{ptFinalize, 40, nil}, point{ptTeamLeave, 20, nil}, point{ptTeamLeave, 5, nil}, point{ptTeamTake, 5, nil}, point{ptInit, 1, nil}),
			encodePart(30, point{ptTeamLeave, 20, nil}, point{ptTeamTake, 20, nil}, point{ptTeamLeave, 3, nil})...)},
		want: [][][]int{{{20, 40, 1, 5}, {3, 20}}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := walkPath(env, tc.ranks)
			if err != nil {
				t.Fatal(err)
			}
			var got [][][]int
			for _, b := range out {
				got = append(got, decodeSegs(t, b))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("segments (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWalkPathBad: points that do not fit together, or are cut short,
// are errors, never a panic or a hang.
func TestWalkPathBad(t *testing.T) {
	env := &replay.Env{CommMembers: map[uint32][]int{0: {0, 1}}}
	good := encodePart(100, point{ptFinalize, 90, nil}, point{ptLeave, 50, nil})
	tests := []struct {
		name  string
		ranks [][]byte
		want  string
	}{
		{"each waits for the other", [][]byte{
			encodePart(100, point{ptArrive, 60, []int{1, 50}}, point{ptLeave, 40, nil}),
			encodePart(100, point{ptArrive, 55, []int{0, 40}}, point{ptLeave, 50, nil}),
		}, "do not match"},
		{"truncated part", [][]byte{good[:len(good)-1]}, "truncated"},
		{"truncated point", [][]byte{encodePart(100, point{ptArrive, 60, nil})}, "truncated"},
		{"bad kind", [][]byte{encodePart(100, point{numPointKinds, 60, nil})}, "kind"},
		{"after the end", [][]byte{encodePart(10, point{ptLeave, 20, nil})}, "bad path point"},
		{"no points", [][]byte{good, nil}, "no points"},
		{"partner outside", [][]byte{encodePart(100, point{ptArrive, 60, []int{7, 50}})}, "outside"},
		{"member missing", [][]byte{
			encodePart(100, point{ptCollPass, 60, []int{0, 0}}, point{ptCollArrive, 60, []int{0, 0}}),
			encodePart(100, point{ptCollPass, 60, []int{0, 1}}),
		}, "do not match"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := walkPath(env, tc.ranks)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one that says %q", err, tc.want)
			}
		})
	}
}

// FuzzWalkPath: any bytes as the points of two ranks give segments or
// an error, never a panic or a hang.
func FuzzWalkPath(f *testing.F) {
	f.Add(encodePart(100, point{ptArrive, 60, []int{1, 50}}, point{ptLeave, 40, nil}),
		encodePart(100, point{ptFinalize, 90, nil}, point{ptLeave, 50, nil}, point{ptCollArrive, 30, []int{0, 0}}))
	f.Add(encodePart(50, point{ptTeamLeave, 20, nil}, point{ptTeamTake, 20, nil}),
		encodePart(50, point{ptCollPass, 25, []int{0, 0}}, point{ptInit, 2, nil}))
	env := &replay.Env{CommMembers: map[uint32][]int{0: {0, 1}, 1: {1, 5}}}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		out, err := walkPath(env, [][]byte{a, b})
		if err == nil && len(out) != 2 {
			t.Fatalf("%d ranks' segments for 2", len(out))
		}
	})
}
