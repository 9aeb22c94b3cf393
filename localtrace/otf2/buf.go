package otf2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Chunk and buffer markers (OTF2_InternalBufferEvents).
const (
	tagEndOfChunk  = 0x00
	tagEndOfBuffer = 0x01
	tagEndOfFile   = 0x02
	tagChunkHeader = 0x03
	tagTimestamp   = 0x05
	tagAttrList    = 0x06

	endianBig    = 0x23
	endianLittle = 0x42

	chunkHeaderSize = 18
)

// errShort is the sticky error a cursor records when a field runs past the
// end of its buffer. The caller turns it into a message with file and offset.
var errShort = errors.New("unexpected end of data")

// cursor decodes OTF2 primitive encodings from one chunk (or one record).
// It never panics: reading past the end records errShort in err and
// returns zero values, so a caller checks err once per record.
type cursor struct {
	b   []byte
	p   int
	big bool // chunk byte order is big-endian
	err error
}

func (c *cursor) fail(err error) {
	if c.err == nil {
		c.err = err
	}
	c.p = len(c.b)
}

func (c *cursor) u8() uint8 {
	if c.p >= len(c.b) {
		c.fail(errShort)
		return 0
	}
	v := c.b[c.p]
	c.p++
	return v
}

func (c *cursor) u16() uint16 {
	if len(c.b)-c.p < 2 {
		c.fail(errShort)
		return 0
	}
	var v uint16
	if c.big {
		v = binary.BigEndian.Uint16(c.b[c.p:])
	} else {
		v = binary.LittleEndian.Uint16(c.b[c.p:])
	}
	c.p += 2
	return v
}

func (c *cursor) u32f() uint32 {
	if len(c.b)-c.p < 4 {
		c.fail(errShort)
		return 0
	}
	var v uint32
	if c.big {
		v = binary.BigEndian.Uint32(c.b[c.p:])
	} else {
		v = binary.LittleEndian.Uint32(c.b[c.p:])
	}
	c.p += 4
	return v
}

// u64f reads 8 raw bytes (timestamps and other "full" fields).
func (c *cursor) u64f() uint64 {
	if len(c.b)-c.p < 8 {
		c.fail(errShort)
		return 0
	}
	var v uint64
	if c.big {
		v = binary.BigEndian.Uint64(c.b[c.p:])
	} else {
		v = binary.LittleEndian.Uint64(c.b[c.p:])
	}
	c.p += 8
	return v
}

func (c *cursor) f64() float64 { return math.Float64frombits(c.u64f()) }

// compressed reads a size-prefixed compressed integer of at most max payload
// bytes; 0xFF means all ones for the field width.
func (c *cursor) compressed(max int, ones uint64) uint64 {
	if c.p >= len(c.b) {
		c.fail(errShort)
		return 0
	}
	s := int(c.b[c.p])
	c.p++
	switch {
	case s == 0:
		return 0
	case s == 0xFF:
		return ones
	case s > max:
		c.fail(fmt.Errorf("compressed integer of %d bytes exceeds %d", s, max))
		return 0
	case len(c.b)-c.p < s:
		c.fail(errShort)
		return 0
	}
	var v uint64
	if !c.big && len(c.b)-c.p >= 8 {
		// fast path: one 8-byte load, keep the low s bytes
		v = binary.LittleEndian.Uint64(c.b[c.p:]) & (^uint64(0) >> (64 - 8*uint(s)))
		c.p += s
		return v
	}
	d := c.b[c.p : c.p+s]
	if c.big {
		for _, x := range d {
			v = v<<8 | uint64(x)
		}
	} else {
		for i := s - 1; i >= 0; i-- {
			v = v<<8 | uint64(d[i])
		}
	}
	c.p += s
	return v
}

func (c *cursor) u32c() uint32 { return uint32(c.compressed(4, math.MaxUint32)) }
func (c *cursor) u64c() uint64 { return c.compressed(8, math.MaxUint64) }
func (c *cursor) i64c() int64  { return int64(c.compressed(8, math.MaxUint64)) }

// str reads a NUL-terminated inline string.
func (c *cursor) str() string {
	for i := c.p; i < len(c.b); i++ {
		if c.b[i] == 0 {
			s := string(c.b[c.p:i])
			c.p = i + 1
			return s
		}
	}
	c.fail(errors.New("unterminated string"))
	return ""
}

// recLen reads a record length: one byte, or 0xFF followed by a u64f.
func (c *cursor) recLen() int {
	l := c.u8()
	if l != 0xFF {
		return int(l)
	}
	v := c.u64f()
	if v > uint64(len(c.b)) {
		c.fail(fmt.Errorf("record length %d exceeds the chunk", v))
		return 0
	}
	return int(v)
}

// sub returns a cursor over the next n bytes and advances past them.
func (c *cursor) sub(n int) cursor {
	if n < 0 || len(c.b)-c.p < n {
		c.fail(fmt.Errorf("record of %d bytes runs past the end of its chunk", n))
		return cursor{big: c.big}
	}
	s := cursor{b: c.b[c.p : c.p+n], big: c.big}
	c.p += n
	return s
}

// more reports whether unread bytes remain (optional trailing fields).
func (c *cursor) more() bool { return c.p < len(c.b) }
