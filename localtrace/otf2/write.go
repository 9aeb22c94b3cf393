package otf2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
)

// Default chunk sizes of the writers: Score-P's event chunk size and the
// definition chunk size it computes for small archives.
const (
	DefaultChunkSizeEvents = 1 << 20
	DefaultChunkSizeDefs   = 1 << 18
)

// MinWriteChunkSize is the smallest chunk size the writers accept. The
// OTF2 library itself only writes chunks of 256 KiB to 16 MiB (and may
// refuse to read others); smaller chunks exist to test chunk switches.
const MinWriteChunkSize = 64

// maxWriteChunkSize matches the largest chunk size the reader accepts.
const maxWriteChunkSize = 1 << 30

// ErrRecordTooLarge reports a record that does not fit into one chunk:
// OTF2 records never span chunks.
var ErrRecordTooLarge = errors.New("otf2: record larger than a chunk")

func checkChunkSize(size uint64) error {
	if size < MinWriteChunkSize || size > maxWriteChunkSize {
		return fmt.Errorf("otf2: chunk size %d outside [%d, %d]", size, MinWriteChunkSize, maxWriteChunkSize)
	}
	return nil
}

// appendCompressed appends v as a compressed integer of a field whose
// all-ones value is ones: 0x00 for 0, 0xFF for all ones, else the minimal
// number of little-endian payload bytes after a size byte.
func appendCompressed(b []byte, v, ones uint64) []byte {
	switch v {
	case 0:
		return append(b, 0)
	case ones:
		return append(b, 0xFF)
	}
	s := (bits.Len64(v) + 7) >> 3
	b = append(b, byte(s))
	b = binary.LittleEndian.AppendUint64(b, v)
	return b[:len(b)-8+s]
}

func appendU32c(b []byte, v uint32) []byte { return appendCompressed(b, uint64(v), math.MaxUint32) }
func appendU64c(b []byte, v uint64) []byte { return appendCompressed(b, v, math.MaxUint64) }

// appendI64c appends a compressed signed 64-bit integer as OTF2 writes it
// (OTF2_Buffer_WriteInt64): a non-negative value like an unsigned one,
// except that it is never the all-ones marker, and a negative value always
// with its full 8 bytes (so -1 is 08 FF×8, not the single byte FF).
func appendI64c(b []byte, v int64) []byte {
	if v < 0 {
		return binary.LittleEndian.AppendUint64(append(b, 8), uint64(v))
	}
	return appendU64c(b, uint64(v))
}

// appendI32c is appendI64c for 32-bit integers: a negative value takes
// its full 4 bytes.
func appendI32c(b []byte, v int32) []byte {
	if v < 0 {
		return binary.LittleEndian.AppendUint32(append(b, 4), uint32(v))
	}
	return appendU32c(b, uint32(v))
}

// appendU64f appends 8 raw little-endian bytes.
func appendU64f(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

func appendStr(b []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return b, fmt.Errorf("string %q contains a NUL byte", s)
		}
	}
	return append(append(b, s...), 0), nil
}

// beginRecord appends a record type and a one-byte length placeholder;
// it returns the offset of the payload for endRecord.
func beginRecord(b []byte, t uint8) ([]byte, int) {
	b = append(b, t, 0)
	return b, len(b)
}

// endRecord fills in the length of the record whose payload starts at
// start, switching to the long form (0xFF and 8 bytes) for 255 bytes or more.
func endRecord(b []byte, start int) []byte {
	n := len(b) - start
	if n < 0xFF {
		b[start-1] = byte(n)
		return b
	}
	b[start-1] = 0xFF
	b = append(b, make([]byte, 8)...)
	copy(b[start+8:], b[start:start+n])
	binary.LittleEndian.PutUint64(b[start:], uint64(n))
	return b
}

// chunkWriter writes a chunked OTF2 file (definitions or events) through a
// single chunk buffer: full chunks are padded with END_OF_CHUNK bytes, the
// last one ends with END_OF_FILE and is truncated.
type chunkWriter struct {
	w     io.Writer
	size  int
	buf   []byte // current chunk, header included
	first uint64 // number (1-based) of the first record in the chunk
	n     uint64 // records written so far
	empty bool   // no record in the current chunk yet
	defs  bool   // definition file: the header's event numbers stay 1 and 0
	err   error  // sticky error
	out   int64  // bytes written to w
}

func newChunkWriter(w io.Writer, size uint64) (*chunkWriter, error) {
	if err := checkChunkSize(size); err != nil {
		return nil, err
	}
	// 16 spare bytes let appendCompressed overrun the chunk end safely.
	c := &chunkWriter{w: w, size: int(size), buf: make([]byte, chunkHeaderSize, int(size)+16)}
	c.start()
	return c, nil
}

func (c *chunkWriter) start() {
	c.buf = c.buf[:chunkHeaderSize]
	c.first = c.n + 1
	c.empty = true
}

// fits reports whether n more bytes fit into the chunk, keeping two bytes
// for the END_OF_CHUNK or END_OF_FILE and END_OF_BUFFER markers.
func (c *chunkWriter) fits(n int) bool { return len(c.buf)+n+1 < c.size }

// flush writes the current chunk: padded to the chunk size, or, for the
// last chunk, terminated by END_OF_FILE and truncated.
func (c *chunkWriter) flush(last bool) error {
	if c.err != nil {
		return c.err
	}
	b := c.buf
	b[0], b[1] = tagChunkHeader, endianLittle
	first, lastEv := c.first, c.n
	if c.defs {
		first, lastEv = 1, 0 // as OTF2 writes definition chunks
	}
	binary.LittleEndian.PutUint64(b[2:], first)
	binary.LittleEndian.PutUint64(b[10:], lastEv)
	if last {
		// END_OF_FILE, then END_OF_BUFFER as the OTF2 library writes it
		b = append(b, tagEndOfFile, tagEndOfBuffer)
	} else {
		n := len(b)
		b = b[:c.size]
		clear(b[n:])
	}
	k, err := c.w.Write(b)
	c.out += int64(k)
	if err != nil {
		c.err = fmt.Errorf("otf2: writing chunk: %w", err)
		return c.err
	}
	c.start()
	return nil
}

// room makes room for a record of n bytes, starting a new chunk if needed.
func (c *chunkWriter) room(n int) error {
	if c.fits(n) {
		return nil
	}
	if c.empty {
		return fmt.Errorf("%w: %d bytes, chunk size %d", ErrRecordTooLarge, n, c.size)
	}
	if err := c.flush(false); err != nil {
		return err
	}
	if !c.fits(n) {
		return fmt.Errorf("%w: %d bytes, chunk size %d", ErrRecordTooLarge, n, c.size)
	}
	return nil
}

// record appends one complete definition record.
func (c *chunkWriter) record(rec []byte) error {
	if c.err != nil {
		return c.err
	}
	if err := c.room(len(rec)); err != nil {
		return err
	}
	c.buf = append(c.buf, rec...)
	c.empty = false
	c.n++
	return nil
}

// EncodeAnchor writes an anchor file. Fields are written as the anchor
// format an.AnchorFormat (1 to 3; 0 means 3) prescribes, always in
// little-endian byte order; an.BigEndian and an.HasGlobalDefFile are
// ignored.
func EncodeAnchor(w io.Writer, an *Anchor) error {
	b, err := appendAnchor(nil, an)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("otf2: writing anchor: %w", err)
	}
	return nil
}

func appendAnchor(b []byte, an *Anchor) ([]byte, error) {
	format := an.AnchorFormat
	if format == 0 {
		format = 3
	}
	if format > 3 {
		return nil, fmt.Errorf("otf2: cannot write anchor format %d (known: 1 to 3)", format)
	}
	le := binary.LittleEndian
	b = append(b, tagChunkHeader, endianLittle, 'O', 'T', 'F', '2', 0, format, an.TraceFormat,
		an.Version[0], an.Version[1], an.Version[2])
	b = le.AppendUint64(b, an.ChunkSizeEvents)
	b = le.AppendUint64(b, an.ChunkSizeDefs)
	b = append(b, an.Substrate, an.Compression)
	b = le.AppendUint64(b, an.NumLocations)
	b = le.AppendUint64(b, an.NumGlobalDefs)
	var err error
	for _, s := range []string{an.MachineName, an.Creator, an.Description} {
		if b, err = appendStr(b, s); err != nil {
			return nil, fmt.Errorf("otf2: anchor: %w", err)
		}
	}
	if format >= 2 {
		if uint64(len(an.Properties)) > math.MaxUint32 {
			return nil, fmt.Errorf("otf2: anchor: %d properties", len(an.Properties))
		}
		b = le.AppendUint32(b, uint32(len(an.Properties)))
		for _, p := range an.Properties {
			if b, err = appendStr(b, p.Name); err == nil {
				b, err = appendStr(b, p.Value)
			}
			if err != nil {
				return nil, fmt.Errorf("otf2: anchor property: %w", err)
			}
		}
		b = le.AppendUint64(b, an.TraceID)
	}
	if format >= 3 {
		b = le.AppendUint32(b, an.NumSnapshots)
		b = le.AppendUint32(b, an.NumThumbnails)
	}
	// END_OF_FILE, then END_OF_BUFFER and END_OF_CHUNK as OTF2 3.0 writes them.
	return append(b, tagEndOfFile, tagEndOfBuffer, tagEndOfChunk), nil
}
