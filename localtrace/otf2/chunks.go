package otf2

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// FormatError reports malformed data in one file of an archive.
type FormatError struct {
	File   string // path of the file
	Offset int64  // byte offset of the offending record or field
	Err    error
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("otf2: %s: offset %d: %v", e.File, e.Offset, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// chunkStream reads a chunked OTF2 file one chunk at a time into a reused
// buffer, so memory stays at one chunk whatever the file size.
type chunkStream struct {
	r    io.Reader
	path string
	size int    // chunk size
	buf  []byte // current chunk
	off  int64  // file offset of the current chunk
	next int64  // file offset of the next chunk
	hint int64  // file size if known, else 0
}

func newChunkStream(r io.Reader, path string, chunkSize uint64) *chunkStream {
	s := &chunkStream{r: r, path: path, size: int(chunkSize)}
	switch f := r.(type) {
	case interface{ Stat() (fs.FileInfo, error) }:
		if st, err := f.Stat(); err == nil {
			s.hint = st.Size()
		}
	case interface{ Size() int64 }:
		s.hint = f.Size()
	}
	return s
}

// read loads the next chunk and returns a cursor positioned after its
// header; io.EOF when the file has no more bytes.
func (s *chunkStream) read() (cursor, error) {
	if s.buf == nil {
		n := int64(s.size)
		if s.hint > 0 && s.hint < n {
			n = s.hint // a small file needs no full-size chunk buffer
		}
		s.buf = make([]byte, n)
	}
	n, err := io.ReadFull(s.r, s.buf)
	if n == 0 && (err == io.EOF || err == io.ErrUnexpectedEOF) {
		return cursor{}, io.EOF
	}
	if err != nil && err != io.ErrUnexpectedEOF {
		return cursor{}, fmt.Errorf("otf2: reading %s: %w", s.path, err)
	}
	s.off = s.next
	s.next += int64(n)
	c := cursor{b: s.buf[:n]}
	if n < chunkHeaderSize || c.b[0] != tagChunkHeader {
		return c, s.errorf(0, "chunk does not start with a chunk header (file damaged or not OTF2)")
	}
	switch c.b[1] {
	case endianBig:
		c.big = true
	case endianLittle:
	default:
		return c, s.errorf(1, "bad byte-order mark 0x%02x in chunk header", c.b[1])
	}
	c.p = chunkHeaderSize
	return c, nil
}

// errorf makes a FormatError at offset p of the current chunk.
func (s *chunkStream) errorf(p int, format string, args ...any) error {
	return &FormatError{File: s.path, Offset: s.off + int64(p), Err: fmt.Errorf(format, args...)}
}

// wrap turns a cursor error at offset p of the current chunk into a FormatError.
func (s *chunkStream) wrap(p int, err error) error {
	if errors.Is(err, errShort) {
		err = errors.New("record runs past the end of its chunk (file truncated or damaged)")
	}
	return &FormatError{File: s.path, Offset: s.off + int64(p), Err: err}
}
