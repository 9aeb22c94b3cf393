package cube

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// part is one archive member for makeArchive.
type part struct {
	name string
	data []byte
}

// makeArchive builds a CubeW-style tar from parts.
func makeArchive(t testing.TB, parts []part) []byte {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "archive")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tw := newTarWriter(f, 0)
	for _, p := range parts {
		if err := tw.addFile(p.name, p.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.finish(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// specParts returns the members of the spec example, in CubeW's order.
func specParts(t testing.TB) []part {
	t.Helper()
	path := filepath.Join(t.TempDir(), "spec.cubex")
	if err := WriteFile(path, specExample()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := readTar(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var out []part
	for _, m := range ms {
		out = append(out, part{m.name, append([]byte(nil), b[m.off:m.off+m.size]...)})
	}
	return out
}

// edit returns parts with member name replaced by f(old content); a nil
// result drops the member.
func edit(parts []part, name string, f func([]byte) []byte) []part {
	var out []part
	for _, p := range parts {
		if p.name == name {
			p.data = f(append([]byte(nil), p.data...))
			if p.data == nil {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

func replace(old, new string) func([]byte) []byte {
	return func(b []byte) []byte { return bytes.Replace(b, []byte(old), []byte(new), 1) }
}

// TestReadCorrupt feeds damaged reports to Read and checks that each
// fails with an *Error naming the member and offset of the damage.
func TestReadCorrupt(t *testing.T) {
	good := makeArchive(t, specParts(t))
	if _, err := Read(bytes.NewReader(good), int64(len(good))); err != nil {
		t.Fatalf("undamaged archive: %v", err)
	}
	archiveOf := func(f func([]part) []part) []byte { return makeArchive(t, f(specParts(t))) }
	flip := func(off int) []byte {
		b := bytes.Clone(good)
		b[off] ^= 0x40
		return b
	}
	for _, tc := range []struct {
		name       string
		data       []byte
		member     string
		offset     int64 // -2: any
		wantSubstr string
	}{
		{"empty file", nil, "", -1, "has no members"},
		{"not a tar", []byte(strings.Repeat("hello world\n", 100)), "", 0, "not a ustar"},
		{"truncated header", good[:1200], "", 1024, "truncated tar header"},
		{"truncated in padding", good[:700], "", 700, "truncated file?"},
		{"truncated in a member", good[:len(good)-1500], "", -2, "truncated file?"},
		{"bad checksum", flip(3), "", -2, "checksum"},
		{"no anchor", archiveOf(func(p []part) []part {
			return edit(p, anchorName, func([]byte) []byte { return nil })
		}), "", -1, "no anchor.xml"},
		{"anchor not XML", archiveOf(func(p []part) []part {
			return edit(p, anchorName, replace("</program>", "</progrXm>"))
		}), anchorName, -2, "</progrXm>"},
		{"anchor truncated", archiveOf(func(p []part) []part {
			return edit(p, anchorName, func(b []byte) []byte { return b[:len(b)/2] })
		}), anchorName, -2, "unexpected EOF"},
		{"unsupported version", archiveOf(func(p []part) []part {
			return edit(p, anchorName, replace(`<cube version="4.4">`, `<cube version="3.0">`))
		}), anchorName, -2, "unsupported CUBE version"},
		{"duplicate metric ID", archiveOf(func(p []part) []part {
			return edit(p, anchorName, replace(`<metric id="1"`, `<metric id="0"`))
		}), anchorName, -2, "used twice"},
		{"unknown region", archiveOf(func(p []part) []part {
			return edit(p, anchorName, replace(`calleeId="1"`, `calleeId="7"`))
		}), anchorName, -2, "calleeId 7 names no region"},
		{"location ID gap", archiveOf(func(p []part) []part {
			return edit(p, anchorName, replace(`<location Id="1">`, `<location Id="2">`))
		}), anchorName, -2, "location ID 2 out of range"},
		{"bad index marker", archiveOf(func(p []part) []part {
			return edit(p, "1.index", replace("CUBEX.INDEX", "CUBEX.INDEY"))
		}), "1.index", 0, "bad marker"},
		{"bad endianness", archiveOf(func(p []part) []part {
			return edit(p, "0.index", func(b []byte) []byte { b[11] = 7; return b })
		}), "0.index", 11, "endianness"},
		{"unknown index format", archiveOf(func(p []part) []part {
			return edit(p, "0.index", func(b []byte) []byte { b[17] = 2; return b })
		}), "0.index", 17, "unknown index format 2"},
		{"truncated sparse index", archiveOf(func(p []part) []part {
			return edit(p, "1.index", func(b []byte) []byte { return b[:len(b)-2] })
		}), "1.index", -2, "sparse index of 1 rows needs 26 bytes, has 24"},
		{"row position out of range", archiveOf(func(p []part) []part {
			return edit(p, "1.index", func(b []byte) []byte { b[22] = 9; return b })
		}), "1.index", 22, "out of range"},
		{"bad data marker", archiveOf(func(p []part) []part {
			return edit(p, "0.data", replace("CUBEX.DATA", "CUBEZ.DATA"))
		}), "0.data", 0, "bad marker"},
		{"truncated data", archiveOf(func(p []part) []part {
			return edit(p, "0.data", func(b []byte) []byte { return b[:len(b)-3] })
		}), "0.data", -2, "has 39 bytes, want 42"},
		{"compressed data", archiveOf(func(p []part) []part {
			return edit(p, "0.data", func(b []byte) []byte { return append([]byte("Z"), b...) })
		}), "0.data", 0, "not supported"},
		{"index without data", archiveOf(func(p []part) []part {
			return edit(p, "1.data", func([]byte) []byte { return nil })
		}), "1.index", -1, "no 1.data member"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(tc.data), int64(len(tc.data)))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want a *cube.Error", err, err)
			}
			if e.Member != tc.member || (tc.offset != -2 && e.Offset != tc.offset) || !strings.Contains(err.Error(), tc.wantSubstr) {
				t.Errorf("error %q (member %q, offset %d); want member %q, offset %d, text containing %q",
					err, e.Member, e.Offset, tc.member, tc.offset, tc.wantSubstr)
			}
		})
	}
	t.Run("ReadFile names the file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "broken.cubex")
		writeFile(t, path, good[:len(good)-1500])
		_, err := ReadFile(path)
		if err == nil || !strings.HasPrefix(err.Error(), "cube: "+path+": ") {
			t.Errorf("error %q does not start with the file name", err)
		}
	})
}

// TestReadTolerant checks inputs that are unusual but valid: a missing
// end-of-archive, a standard tar (archive/tar's padding, a member of
// 512 bytes before the anchor), big-endian values, a metric without data
// members, a gzip-compressed anchor (CubeW with zlib), an indented
// anchor.
func TestReadTolerant(t *testing.T) {
	want := normalize(specExample())
	parts := specParts(t)
	read := func(t *testing.T, b []byte) *Report {
		t.Helper()
		r, err := Read(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	t.Run("no end-of-archive blocks", func(t *testing.T) {
		b := makeArchive(t, parts)
		for _, cut := range []int{2 * blockSize, blockSize + 100} {
			if diff := diffReports(want, read(t, b[:len(b)-cut])); diff != "" {
				t.Errorf("cut %d: %s", cut, diff)
			}
		}
	})
	t.Run("standard tar", func(t *testing.T) {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		all := append([]part{{"notes.txt", bytes.Repeat([]byte("n"), 512)}}, parts...)
		for _, p := range all {
			if err := tw.WriteHeader(&tar.Header{Name: p.name, Mode: 0o644, Size: int64(len(p.data)), Format: tar.FormatUSTAR}); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.Write(p.data); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		got := read(t, buf.Bytes())
		if len(got.Misc) != 1 || got.Misc[0].Name != "notes.txt" {
			t.Errorf("misc members %v, want notes.txt", got.Misc)
		}
		got.Misc = nil
		if diff := diffReports(want, got); diff != "" {
			t.Error(diff)
		}
	})
	t.Run("big-endian", func(t *testing.T) {
		swapped := edit(parts, "0.index", func(b []byte) []byte { copy(b[11:15], []byte{0, 0, 0, 1}); return b })
		swapped = edit(swapped, "1.index", func(b []byte) []byte {
			copy(b[11:15], []byte{0, 0, 0, 1})
			binary.BigEndian.PutUint32(b[18:], 1)
			binary.BigEndian.PutUint32(b[22:], 1)
			return b
		})
		for _, name := range []string{"0.data", "1.data"} {
			swapped = edit(swapped, name, func(b []byte) []byte {
				for i := 10; i+8 <= len(b); i += 8 {
					binary.BigEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:]))
				}
				return b
			})
		}
		if diff := diffReports(want, read(t, makeArchive(t, swapped))); diff != "" {
			t.Error(diff)
		}
	})
	t.Run("metric without members", func(t *testing.T) {
		p := edit(parts, "1.data", func([]byte) []byte { return nil })
		p = edit(p, "1.index", func([]byte) []byte { return nil })
		got := read(t, makeArchive(t, p))
		if got.Values[1] != nil || got.Values[0] == nil {
			t.Errorf("values: %v, want metric 0 only", got.Values)
		}
	})
	t.Run("gzip-compressed anchor", func(t *testing.T) {
		p := edit(parts, anchorName, func(b []byte) []byte {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(b)
			zw.Close()
			return z.Bytes()
		})
		if diff := diffReports(want, read(t, makeArchive(t, p))); diff != "" {
			t.Error(diff)
		}
	})
	t.Run("indented anchor", func(t *testing.T) {
		p := edit(parts, anchorName, func(b []byte) []byte {
			return bytes.ReplaceAll(b, []byte(">\n<"), []byte(">\n  \t<"))
		})
		if diff := diffReports(want, read(t, makeArchive(t, p))); diff != "" {
			t.Error(diff)
		}
	})
}

// FuzzRead checks that Read never panics, that every failure is an
// *Error, and that whatever it accepts can be turned into cells.
func FuzzRead(f *testing.F) {
	spec := makeArchive(f, specParts(f))
	f.Add(spec)
	f.Add(spec[:len(spec)/2])
	f.Add(spec[:3*blockSize+7])
	tiny := roundTripCases[0].build()
	tiny.Metrics[0].Type = Inclusive
	tiny.Topologies = []*Cartesian{{Dims: []Dim{{Size: 1}}, Coords: []Coord{{CoordLocation, 0, []int{0}}}}}
	path := filepath.Join(f.TempDir(), "tiny.cubex")
	if err := WriteFile(path, tiny); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is a %T, not a *cube.Error", err, err)
			}
			return
		}
		if err := r.CSV(io.Discard); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzReadMembers fuzzes the contents of anchor.xml and one metric's
// index and data members inside a valid container (the tar checksums
// keep FuzzRead from reaching them often).
func FuzzReadMembers(f *testing.F) {
	parts := specParts(f)
	get := func(name string) []byte {
		for _, p := range parts {
			if p.name == name {
				return p.data
			}
		}
		f.Fatalf("no member %s", name)
		return nil
	}
	f.Add(get(anchorName), get("0.index"), get("0.data"))
	f.Add(get(anchorName), get("1.index"), get("1.data"))
	f.Fuzz(func(t *testing.T, anchor, index, data []byte) {
		b := makeArchive(t, []part{{anchorName, anchor}, {"0.index", index}, {"0.data", data}})
		r, err := Read(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is a %T, not a *cube.Error", err, err)
			}
			return
		}
		if err := r.CSV(io.Discard); err != nil {
			t.Fatal(err)
		}
	})
}
