package combine

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"testing"

	"scout/cube"
)

// numbers finds the numeric attribute values of anchor.xml: ids, sizes,
// counts, ranks, lines.
var numbers = regexp.MustCompile(`="(\d+)"`)

// FuzzCombineSizes reads a report whose anchor.xml has one numeric
// attribute replaced by any value (ids, sizes and counts that claim what
// the file does not hold, 2^32-1, 2^63-1) and merges it as scout combine
// does: no panic, every failure an error, and no more memory than such a
// small report can need.
func FuzzCombineSizes(f *testing.F) {
	members := reportMembers(f)
	f.Add(uint16(0), uint64(1<<32-1))
	f.Add(uint16(3), uint64(1<<63-1))
	f.Add(uint16(17), uint64(0))
	f.Add(uint16(40), uint64(1<<31))
	f.Fuzz(func(t *testing.T, which uint16, value uint64) {
		anchor := members["anchor.xml"]
		locs := numbers.FindAllSubmatchIndex(anchor, -1)
		if len(locs) == 0 {
			t.Skip()
		}
		m := locs[int(which)%len(locs)]
		mutated := append(append(append([]byte{}, anchor[:m[2]]...), strconv.FormatUint(value, 10)...), anchor[m[3]:]...)
		data := tarOf(t, members, mutated)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r, err := cube.Read(bytes.NewReader(data), int64(len(data)))
		if err == nil {
			var merged *cube.Report
			if merged, err = MergeCubes([]*cube.Report{r}, []string{"fuzzed"}); err == nil {
				err = merged.CSV(io.Discard)
			}
		}
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
			t.Errorf("attribute %d set to %d: %d MiB allocated for a %d-byte report (err %v)", which, value, grew>>20, len(data), err)
		}
	})
}

// reportMembers writes a small report with scout's writer and returns its
// archive members by name.
func reportMembers(f *testing.F) map[string][]byte {
	f.Helper()
	src := smallReport(f)
	path := filepath.Join(f.TempDir(), "r.cubex")
	if err := cube.WriteFile(path, src); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	out := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			f.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			f.Fatal(err)
		}
		out[h.Name] = data
	}
	if out["anchor.xml"] == nil {
		f.Fatal("no anchor.xml in the report")
	}
	return out
}

// smallReport is a report of 3 call paths, 2 locations and 2 metrics.
func smallReport(f *testing.F) *cube.Report {
	r := &cube.Report{}
	g := r.AddRegion(&cube.Region{Name: "main", Paradigm: "user", Role: "function"})
	h := r.AddRegion(&cube.Region{Name: "MPI_Recv", Paradigm: "mpi", Role: "function"})
	root := r.AddCnode(nil, g)
	r.AddCnode(root, h)
	r.AddCnode(root, g)
	node := r.AddSystemNode(nil, "machine", "machine")
	for rank := range 2 {
		r.AddLocation(r.AddGroup(node, "rank", rank), "thread", 0)
	}
	for i, name := range []string{"time", "visits"} {
		m := r.AddMetric(nil, &cube.Metric{UniqName: name, DispName: name, Type: cube.Exclusive, DataType: cube.Double})
		if i == 1 {
			m.DataType = cube.Uint64
		}
		sev := &cube.Severity{}
		if i == 0 {
			sev.Float = [][]float64{{1, 2}, {3, 4}, nil}
		} else {
			sev.Uint = [][]uint64{{1, 1}, nil, {2, 2}}
		}
		if r.Values == nil {
			r.Values = map[int]*cube.Severity{}
		}
		r.Values[m.ID] = sev
	}
	return r
}

// tarOf is the report archive of members with anchor.xml replaced.
func tarOf(t *testing.T, members map[string][]byte, anchor []byte) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	names := []string{"anchor.xml"}
	for n := range members {
		if n != "anchor.xml" {
			names = append(names, n)
		}
	}
	for _, n := range names {
		data := members[n]
		if n == "anchor.xml" {
			data = anchor
		}
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(data))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
