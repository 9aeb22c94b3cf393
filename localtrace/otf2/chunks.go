package otf2

import (
	"errors"
	"fmt"
	"io"
	"os"
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
}

func newChunkStream(r io.Reader, path string, chunkSize uint64) *chunkStream {
	return &chunkStream{r: r, path: path, size: int(chunkSize)}
}

// read loads the next chunk and returns a cursor positioned after its
// header; io.EOF when the file has no more bytes.
func (s *chunkStream) read() (cursor, error) {
	if s.buf == nil {
		s.buf = make([]byte, s.size)
	}
	n, err := io.ReadFull(s.r, s.buf[:s.size])
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

// openChunks opens a chunked file; a missing file is reported with
// os.ErrNotExist in the chain.
func openChunks(path string, chunkSize uint64) (*os.File, *chunkStream, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return f, newChunkStream(f, path, chunkSize), nil
}
