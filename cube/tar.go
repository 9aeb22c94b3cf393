package cube

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// The container is a ustar tar archive written the way CubeW writes it:
// every member of size s > 0 is followed by (s/512+1)*512-s zero bytes,
// which is a whole extra zero block when s is a multiple of 512. CubeLib's
// reader skips exactly that much. Standard tar readers see the extra
// block as an empty header (a "lone zero block"); the writer avoids such
// sizes where it can (anchor.xml gets a trailing newline; data and index
// members of 8-byte types never hit them). Members of 0x1FFFFFFFF bytes
// or more get a one-record PAX header ("NN size=N\n"), the only form
// CubeLib parses.

const (
	blockSize  = 512
	paxMinSize = 1<<33 - 1 // members this large need a PAX size record
	anchorName = "anchor.xml"
)

// tarWriter writes CubeW-style tar members to a file. Member headers of
// streamed members are patched in place with WriteAt once the size is
// known.
type tarWriter struct {
	f     *os.File
	bw    *bufio.Writer
	off   int64 // bytes written so far, including buffered ones
	mtime int64
}

func newTarWriter(f *os.File, mtime int64) *tarWriter {
	return &tarWriter{f: f, bw: bufio.NewWriterSize(f, 1<<20), mtime: mtime}
}

func (t *tarWriter) write(p []byte) error {
	n, err := t.bw.Write(p)
	t.off += int64(n)
	return err
}

var zeroBlock [blockSize]byte

// pad writes CubeW's padding after a member of the given size.
func (t *tarWriter) pad(size int64) error {
	if size == 0 {
		return nil
	}
	return t.write(zeroBlock[:blockSize-size%blockSize])
}

// header returns a CubeW-style ustar header. Sizes that need PAX are
// written as 0; the real size is in the preceding PAX record.
func (t *tarWriter) header(name string, size int64, typeflag byte) []byte {
	h := make([]byte, blockSize)
	copy(h[0:100], name)
	copy(h[100:], "0000600\x00")
	copy(h[108:], "0000000\x00")
	copy(h[116:], "0000000\x00")
	if size >= paxMinSize {
		size = 0
	}
	putOctal(h[124:136], size)
	putOctal(h[136:148], t.mtime&paxMinSize)
	h[156] = typeflag
	copy(h[257:], "ustar\x0000")
	copy(h[265:], "nouser")
	copy(h[297:], "users")
	copy(h[148:156], "        ")
	sum := 0
	for _, b := range h {
		sum += int(b)
	}
	putOctal(h[148:155], int64(sum)) // "%06o\0", the 8th byte stays a space
	return h
}

// putOctal writes v as len(b)-1 zero-padded octal digits and a NUL.
func putOctal(b []byte, v int64) {
	b[len(b)-1] = 0
	for i := len(b) - 2; i >= 0; i-- {
		b[i] = byte('0' + v&7)
		v >>= 3
	}
}

// headers returns the header blocks of a member: a PAX header and its
// record block first when the size needs it.
func (t *tarWriter) headers(name string, size int64) []byte {
	if size < paxMinSize {
		return t.header(name, size, '0')
	}
	return t.paxHeaders(name, size)
}

// paxHeaders returns three blocks: a PAX header, its one-record block
// ("NN size=N\n", the only form CubeLib parses) and the member header.
func (t *tarWriter) paxHeaders(name string, size int64) []byte {
	rec := " size=" + strconv.FormatInt(size, 10) + "\n"
	rec = strconv.Itoa(len(rec)+2) + rec
	h := t.header("PaxHeader/"+name, int64(len(rec)), 'x')
	block := make([]byte, blockSize)
	copy(block, rec)
	h = append(h, block...)
	return append(h, t.header(name, size, '0')...)
}

// addFile writes a complete member holding data.
func (t *tarWriter) addFile(name string, data []byte) error {
	if err := t.write(t.headers(name, int64(len(data)))); err != nil {
		return err
	}
	if err := t.write(data); err != nil {
		return err
	}
	return t.pad(int64(len(data)))
}

// streamMember is a member whose header is written when it ends.
type streamMember struct {
	name   string
	hdrOff int64 // offset of the first reserved header block
	blocks int   // reserved header blocks: 1, or 3 for a PAX header
	start  int64 // offset of the first data byte
}

// begin reserves the header of a member of at most maxSize bytes.
func (t *tarWriter) begin(name string, maxSize int64) (*streamMember, error) {
	m := &streamMember{name: name, hdrOff: t.off, blocks: 1}
	if maxSize >= paxMinSize {
		m.blocks = 3
	}
	for range m.blocks {
		if err := t.write(zeroBlock[:]); err != nil {
			return nil, err
		}
	}
	m.start = t.off
	return m, nil
}

// flush writes buffered data to the file.
func (t *tarWriter) flush() error { return t.bw.Flush() }

// seekTo moves the end of the archive to off, after the data of the
// current member was rewritten in place with WriteAt. The caller must
// have flushed.
func (t *tarWriter) seekTo(off int64) error {
	if _, err := t.f.Seek(off, io.SeekStart); err != nil {
		return err
	}
	t.off = off
	return nil
}

// end pads the member and writes its real header(s) in place.
func (t *tarWriter) end(m *streamMember) error {
	size := t.off - m.start
	if err := t.pad(size); err != nil {
		return err
	}
	if err := t.bw.Flush(); err != nil {
		return err
	}
	var hdr []byte
	switch {
	case m.blocks == 3:
		// A PAX header was reserved: write one even if the member stayed
		// small (CubeLib reads it either way).
		hdr = t.paxHeaders(m.name, size)
	case size >= paxMinSize:
		return fmt.Errorf("member %s grew to %d bytes, beyond its reserved header", m.name, size)
	default:
		hdr = t.header(m.name, size, '0')
	}
	_, err := t.f.WriteAt(hdr, m.hdrOff)
	return err
}

// finish writes the two end-of-archive blocks and flushes.
func (t *tarWriter) finish() error {
	if err := t.write(zeroBlock[:]); err != nil {
		return err
	}
	if err := t.write(zeroBlock[:]); err != nil {
		return err
	}
	return t.bw.Flush()
}

// member locates one archive member's data.
type member struct {
	name      string
	off, size int64
}

// maxMembers bounds the number of archive members a reader accepts.
const maxMembers = 1 << 24

// readTar scans the archive headers the way CubeLib does: every header
// with a non-empty name is registered (a later member of the same name
// wins), headers with an empty name (zero blocks, CubeW's padding block)
// are skipped, and scanning goes on to the end of the file. Unlike
// CubeLib it verifies header checksums and member bounds. Members are
// returned in archive order; PAX and GNU long-name headers are not
// members.
func readTar(ra io.ReaderAt, size int64) ([]member, error) {
	var members []member
	index := map[string]int{}
	var hdr [blockSize]byte
	paxSize := int64(-1)
	for pos := int64(0); pos < size; {
		if size-pos < blockSize {
			if pos > 0 && allZero(ra, pos, size-pos) {
				break // a short zero tail after the archive
			}
			return nil, errAt("", pos, "truncated tar header (%d bytes left)", size-pos)
		}
		if _, err := ra.ReadAt(hdr[:], pos); err != nil {
			return nil, errAt("", pos, "reading tar header: %w", err)
		}
		if hdr[0] == 0 {
			if pos == 0 {
				return nil, errAt("", 0, "not a ustar tar archive (empty first header)")
			}
			pos += blockSize
			continue
		}
		name, msize, typ, err := parseHeader(hdr[:])
		if err != nil {
			return nil, errAt("", pos, "%w", err)
		}
		data := pos + blockSize
		if paxSize >= 0 && typ != 'x' {
			msize, paxSize = paxSize, -1
		}
		if msize > size-data {
			return nil, errAt("", pos, "member %q: size %d exceeds the %d bytes left (truncated file?)", name, msize, size-data)
		}
		switch typ {
		case 'x':
			if paxSize, err = readPAXSize(ra, data, msize); err != nil {
				return nil, errAt("", data, "PAX header %q: %w", name, err)
			}
		case 'g', 'L', 'K', '5':
			// global PAX header, GNU long names, directories: not members.
		default:
			if i, dup := index[name]; dup {
				members[i] = member{name, data, msize}
			} else {
				if len(members) >= maxMembers {
					return nil, errAt("", pos, "more than %d members", maxMembers)
				}
				index[name] = len(members)
				members = append(members, member{name, data, msize})
			}
		}
		pos = data + (msize+blockSize-1)/blockSize*blockSize
	}
	if len(members) == 0 {
		return nil, errAt("", -1, "archive of %d bytes has no members", size)
	}
	return members, nil
}

// endsEarly reports whether the archive of size bytes ends before the
// padding of its last member, a sign of truncation.
func endsEarly(members []member, size int64) bool {
	last := members[len(members)-1]
	for _, m := range members {
		if m.off > last.off {
			last = m
		}
	}
	return last.off+(last.size+blockSize-1)/blockSize*blockSize > size
}

// allZero reports whether the n bytes at off are all zero.
func allZero(ra io.ReaderAt, off, n int64) bool {
	buf := make([]byte, n)
	if _, err := ra.ReadAt(buf, off); err != nil {
		return false
	}
	return bytes.Count(buf, []byte{0}) == len(buf)
}

// parseHeader checks a non-empty ustar header and returns its name, size
// and type flag.
func parseHeader(h []byte) (name string, size int64, typ byte, err error) {
	if !bytes.HasPrefix(h[257:], []byte("ustar")) {
		return "", 0, 0, fmt.Errorf("not a ustar tar header (magic %q)", cstring(h[257:263]))
	}
	want, err := parseOctal(h[148:156])
	if err != nil {
		return "", 0, 0, fmt.Errorf("header checksum: %w", err)
	}
	var unsigned, signed int64
	for i, b := range h {
		if i >= 148 && i < 156 {
			b = ' '
		}
		unsigned += int64(b)
		signed += int64(int8(b))
	}
	if want != unsigned && want != signed {
		return "", 0, 0, fmt.Errorf("tar header checksum is %d, computed %d (corrupt header)", want, unsigned)
	}
	name = cstring(h[0:100])
	if prefix := cstring(h[345:500]); prefix != "" {
		name = prefix + "/" + name
	}
	if h[124]&0x80 != 0 {
		return "", 0, 0, fmt.Errorf("member %q: base-256 size field is not supported", name)
	}
	if size, err = parseOctal(h[124:136]); err != nil {
		return "", 0, 0, fmt.Errorf("member %q: size field: %w", name, err)
	}
	return name, size, h[156], nil
}

// cstring returns b up to its first NUL.
func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// parseOctal parses a tar numeric field: octal digits surrounded by
// spaces or NULs.
func parseOctal(b []byte) (int64, error) {
	s := string(bytes.Trim(b, " \x00"))
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 8, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad octal number %q", s)
	}
	return v, nil
}

// readPAXSize parses PAX records ("len key=value\n") and returns the
// value of "size", or -1 if there is none.
func readPAXSize(ra io.ReaderAt, off, n int64) (int64, error) {
	if n > 1<<20 {
		return 0, fmt.Errorf("PAX header of %d bytes is too large", n)
	}
	buf := make([]byte, n)
	if _, err := ra.ReadAt(buf, off); err != nil {
		return 0, err
	}
	size := int64(-1)
	for len(buf) > 0 {
		sp := bytes.IndexByte(buf, ' ')
		if sp <= 0 {
			return 0, fmt.Errorf("malformed PAX record %q", buf)
		}
		l, err := strconv.Atoi(string(buf[:sp]))
		if err != nil || l <= sp+1 || l > len(buf) || buf[l-1] != '\n' {
			return 0, fmt.Errorf("malformed PAX record %q", buf)
		}
		key, val, ok := bytes.Cut(buf[sp+1:l-1], []byte("="))
		if !ok {
			return 0, fmt.Errorf("malformed PAX record %q", buf[:l])
		}
		if string(key) == "size" {
			if size, err = strconv.ParseInt(string(val), 10, 64); err != nil || size < 0 {
				return 0, errors.New("bad PAX size " + strconv.Quote(string(val)))
			}
		}
		buf = buf[l:]
	}
	return size, nil
}
