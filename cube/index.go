package cube

import (
	"encoding/binary"
	"math"
	"strconv"
)

// Index and data members (see the package documentation for the order of
// rows):
//
//	N.index: "CUBEX.INDEX" uint32(1) uint16(0) uint8(format)
//	         format 3 = dense; 1 = sparse, followed by uint32 n, uint32 pos[n]
//	N.data:  "CUBEX.DATA" then the stored rows, each one value per location
//
// All numbers are little-endian when written; a reader swaps bytes when
// the endianness word does not read back as 1.

const (
	indexMarker  = "CUBEX.INDEX"
	dataMarker   = "CUBEX.DATA"
	zdataMarker  = "ZCUBEX.DATA"
	indexDense   = 3
	indexSparse  = 1
	indexHdrSize = len(indexMarker) + 4 + 2 + 1
)

// memberNames returns the data and index member names of m.
func memberNames(m *Metric) (data, index string) {
	base := strconv.Itoa(m.ID)
	if m.Viz == VizGhost {
		base = "ghost_" + base
	}
	return base + ".data", base + ".index"
}

// appendIndex appends the index member for rows stored at positions
// (ascending) to b: dense when dense is set (positions are then all rows
// and are not listed), sparse otherwise.
func appendIndex(b []byte, positions []uint32, dense bool) []byte {
	b = append(b, indexMarker...)
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint16(b, 0)
	if dense {
		return append(b, indexDense)
	}
	b = append(b, indexSparse)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(positions)))
	for _, p := range positions {
		b = binary.LittleEndian.AppendUint32(b, p)
	}
	return b
}

// decodeIndex parses the index member called name. It returns the stored
// positions (nil for a dense index, meaning all nrows rows) and the byte
// order of the index and its data member.
func decodeIndex(name string, b []byte, nrows int) ([]uint32, binary.ByteOrder, error) {
	if len(b) < indexHdrSize {
		return nil, nil, errAt(name, int64(len(b)), "truncated index header (%d bytes, want %d)", len(b), indexHdrSize)
	}
	if string(b[:len(indexMarker)]) != indexMarker {
		return nil, nil, errAt(name, 0, "bad marker %q, want %q", b[:len(indexMarker)], indexMarker)
	}
	var order binary.ByteOrder = binary.LittleEndian
	switch e := b[11:15]; {
	case binary.LittleEndian.Uint32(e) == 1:
	case binary.BigEndian.Uint32(e) == 1:
		order = binary.BigEndian
	default:
		return nil, nil, errAt(name, 11, "bad endianness word % x", e)
	}
	switch b[17] {
	case indexDense:
		if len(b) != indexHdrSize {
			return nil, nil, errAt(name, int64(indexHdrSize), "dense index has %d bytes, want %d", len(b), indexHdrSize)
		}
		return nil, order, nil
	case indexSparse:
	default:
		return nil, nil, errAt(name, 17, "unknown index format %d", b[17])
	}
	if len(b) < indexHdrSize+4 {
		return nil, nil, errAt(name, int64(len(b)), "truncated sparse index (no row count)")
	}
	n := uint64(order.Uint32(b[indexHdrSize:]))
	if want := uint64(indexHdrSize+4) + 4*n; uint64(len(b)) != want {
		return nil, nil, errAt(name, int64(len(b)), "sparse index of %d rows needs %d bytes, has %d", n, want, len(b))
	}
	pos := make([]uint32, n)
	for i := range pos {
		off := indexHdrSize + 4 + 4*i
		pos[i] = order.Uint32(b[off:])
		if int64(pos[i]) >= int64(nrows) || (i > 0 && pos[i] <= pos[i-1]) {
			return nil, nil, errAt(name, int64(off), "row position %d is out of range [0,%d) or not ascending", pos[i], nrows)
		}
	}
	return pos, order, nil
}

// putValue encodes bits (IEEE bits of a float, or an integer's two's
// complement pattern) as one value of type s.
func putValue(b []byte, s scalar, order binary.ByteOrder, bits uint64) {
	switch s.size {
	case 8:
		order.PutUint64(b, bits)
	case 4:
		order.PutUint32(b, uint32(bits))
	case 2:
		order.PutUint16(b, uint16(bits))
	case 1:
		b[0] = byte(bits)
	}
}

// getValue decodes one value of type s. Floats come back as their IEEE
// bits; integers are sign- or zero-extended to 64 bits.
func getValue(b []byte, s scalar, order binary.ByteOrder) uint64 {
	switch s.size {
	case 8:
		return order.Uint64(b)
	case 4:
		if s.signed {
			return uint64(int64(int32(order.Uint32(b))))
		}
		return uint64(order.Uint32(b))
	case 2:
		if s.signed {
			return uint64(int64(int16(order.Uint16(b))))
		}
		return uint64(order.Uint16(b))
	default:
		if s.signed {
			return uint64(int64(int8(b[0])))
		}
		return uint64(b[0])
	}
}

// floatBits converts a float64 to the stored representation of s: IEEE
// bits for float types, otherwise the rounded integer, saturated to the
// range of the type (NaN becomes 0).
func floatBits(s scalar, v float64) uint64 {
	if s.float {
		return math.Float64bits(v)
	}
	v = math.Round(v)
	bits := uint(8 * s.size)
	if s.signed {
		lo, hi := -math.Ldexp(1, int(bits)-1), math.Ldexp(1, int(bits)-1)
		switch {
		case v != v:
			return 0
		case v >= hi:
			return 1<<(bits-1) - 1
		case v < lo:
			return uint64(int64(-1) << (bits - 1))
		}
		return uint64(int64(v))
	}
	hi := math.Ldexp(1, int(bits))
	switch {
	case v != v || v <= 0:
		return 0
	case v >= hi:
		return 1<<bits - 1
	}
	return uint64(v)
}

// mask returns the bits of a value of s within a uint64.
func (s scalar) mask() uint64 {
	if s.size >= 8 {
		return math.MaxUint64
	}
	return 1<<(8*s.size) - 1
}
