package otf2

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Mapping types of local mapping tables (OTF2_MappingType).
const (
	MapString = iota
	MapAttribute
	MapLocation
	MapRegion
	MapGroup
	MapMetric
	MapComm
	MapParameter
	MapRmaWin
	MapSourceCodeLocation
	MapCallingContext
	MapInterruptGenerator
	MapIoFile
	MapIoHandle
	MapLocationGroup
	NumMappingTypes
)

// IDMap translates a location's local identifiers of one kind to global ones.
// Identifiers it does not list map to themselves.
type IDMap struct {
	Sparse bool     // written in sparse mode
	Dense  []uint64 // dense mode: Dense[local] = global
	Pairs  []uint64 // sparse mode: local, global, local, global, ...
	lookup map[uint64]uint64
}

// Map returns the global identifier of local id.
func (m *IDMap) Map(id uint64) uint64 {
	if m == nil {
		return id
	}
	if !m.Sparse {
		if id < uint64(len(m.Dense)) {
			return m.Dense[id]
		}
		return id
	}
	if g, ok := m.lookup[id]; ok {
		return g
	}
	return id
}

// ClockOffset is one clock synchronisation point of a location.
type ClockOffset struct {
	Time   uint64  // local clock ticks
	Offset int64   // global minus local at Time
	StdDev float64 // standard deviation of the measurement
}

// LocalDefs is the content of a location's local definition file.
type LocalDefs struct {
	Maps         [NumMappingTypes]*IDMap
	ClockOffsets []ClockOffset
	Defs         Defs // other local definitions (Score-P writes them only in debug builds)
}

// ReadGlobalDefs reads the archive's global definition file.
func (a *Archive) ReadGlobalDefs() (*Defs, error) {
	f, err := os.Open(a.GlobalDefPath())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("otf2: archive %s has no global definition file %s (an archive with only local definitions must be unified first: scout unify)", a.AnchorPath(), a.GlobalDefPath())
		}
		return nil, fmt.Errorf("otf2: %w", err)
	}
	defer f.Close()
	return DecodeGlobalDefs(f, a.GlobalDefPath(), a.Anchor.ChunkSizeDefs)
}

// DecodeGlobalDefs decodes a global definition file held in r, chunked
// with the given chunk size; name is used in error messages.
func DecodeGlobalDefs(r io.Reader, name string, chunkSize uint64) (*Defs, error) {
	s := newChunkStream(r, name, chunkSize)
	d := &Defs{}
	err := readDefFile(s, func(t uint8, c *cursor) bool {
		return d.decodeGlobalOnly(t, c) || d.decodeDef(t, c)
	}, d)
	if err != nil {
		return nil, err
	}
	if !d.HasClock {
		return nil, fmt.Errorf("otf2: %s: no ClockProperties definition", name)
	}
	if d.Clock.TimerResolution == 0 {
		return nil, fmt.Errorf("otf2: %s: timer resolution is 0", name)
	}
	d.index()
	return d, nil
}

// ReadLocalDefs reads location loc's local definitions. A missing file
// means no mapping tables and no clock offsets, if no location has one;
// when others have theirs, the file is missing from the archive, and
// reading the location's events with identity mappings would give wrong
// results: that is an error naming the file.
func (a *Archive) ReadLocalDefs(loc uint64) (*LocalDefs, error) {
	f, err := os.Open(a.LocalDefPath(loc))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if others, _ := filepath.Glob(filepath.Join(a.Dir, a.Name, "*.def")); len(others) > 0 {
				return nil, fmt.Errorf("otf2: location %d: local definition file %s is missing (other locations have theirs, e.g. %s)", loc, a.LocalDefPath(loc), others[0])
			}
			return &LocalDefs{}, nil
		}
		return nil, fmt.Errorf("otf2: location %d: %w", loc, err)
	}
	defer f.Close()
	l, err := DecodeLocalDefs(f, a.LocalDefPath(loc), a.Anchor.ChunkSizeDefs)
	if err != nil {
		return nil, fmt.Errorf("otf2: location %d: %w", loc, err)
	}
	return l, nil
}

// DecodeLocalDefs decodes a local definition file held in r, chunked with
// the given chunk size; name is used in error messages.
func DecodeLocalDefs(r io.Reader, name string, chunkSize uint64) (*LocalDefs, error) {
	s := newChunkStream(r, name, chunkSize)
	l := &LocalDefs{}
	var dupErr error
	err := readDefFile(s, func(t uint8, c *cursor) bool {
		switch t {
		case DefMappingTable:
			mt := c.u8()
			m := readIDMap(c)
			if int(mt) >= NumMappingTypes {
				return true // unknown mapping types are ignored
			}
			if l.Maps[mt] != nil && dupErr == nil {
				dupErr = fmt.Errorf("%s: two mapping tables of type %d", name, mt)
			}
			l.Maps[mt] = m
			return true
		case DefClockOffset:
			l.ClockOffsets = append(l.ClockOffsets, ClockOffset{c.u64f(), c.i64c(), c.f64()})
			return true
		}
		return l.Defs.decodeDef(t, c)
	}, &l.Defs)
	if err == nil {
		err = dupErr
	}
	if err != nil {
		return nil, err
	}
	l.Defs.index()
	return l, nil
}

func readIDMap(c *cursor) *IDMap {
	n := c.u64c()
	mode := c.u8()
	if n > uint64(len(c.b)) { // each entry takes at least one byte
		c.fail(fmt.Errorf("mapping table claims %d entries", n))
		return nil
	}
	m := &IDMap{Sparse: mode == 1}
	if m.Sparse {
		m.Pairs = make([]uint64, 2*n)
		m.lookup = make(map[uint64]uint64, n)
		for i := uint64(0); i < n; i++ {
			l, g := c.u64c(), c.u64c()
			m.Pairs[2*i], m.Pairs[2*i+1] = l, g
			m.lookup[l] = g
		}
		return m
	}
	m.Dense = make([]uint64, n)
	for i := range m.Dense {
		m.Dense[i] = c.u64c()
	}
	return m
}

// readDefFile walks the records of a chunked definition file. decode
// handles one record and reports whether it knew its type; other records
// are kept raw in d.Other.
func readDefFile(s *chunkStream, decode func(t uint8, c *cursor) bool, d *Defs) error {
	for {
		c, err := s.read()
		if err == io.EOF {
			return &FormatError{File: s.path, Offset: s.next, Err: errors.New("file ends without an end-of-file record (truncated)")}
		}
		if err != nil {
			return err
		}
	chunk:
		for c.p < len(c.b) {
			start := c.p
			t := c.u8()
			switch t {
			case tagEndOfChunk:
				break chunk
			case tagEndOfFile:
				return nil
			}
			n := c.recLen()
			rec := c.sub(n)
			if c.err != nil {
				return s.wrap(start, c.err)
			}
			if !decode(t, &rec) {
				d.Other = append(d.Other, RawRecord{Type: t, Payload: append([]byte(nil), rec.b...)})
			}
			if rec.err != nil {
				return s.wrap(start, fmt.Errorf("definition record type %d: %w", t, rec.err))
			}
			d.Count++
		}
		if c.p >= len(c.b) && len(c.b) < s.size {
			return &FormatError{File: s.path, Offset: s.next, Err: errors.New("file ends without an end-of-file record (truncated)")}
		}
	}
}

func (d *Defs) index() {
	d.strIdx = make(map[uint64]int, len(d.Strings))
	for i, s := range d.Strings {
		d.strIdx[uint64(s.Self)] = i
	}
	d.regIdx = make(map[uint64]int, len(d.Regions))
	for i, r := range d.Regions {
		d.regIdx[uint64(r.Self)] = i
	}
	d.grpIdx = make(map[uint64]int, len(d.Groups))
	for i, g := range d.Groups {
		d.grpIdx[uint64(g.Self)] = i
	}
	d.commIdx = make(map[uint64]int, len(d.Comms))
	for i, c := range d.Comms {
		d.commIdx[uint64(c.Self)] = i
	}
	d.locIdx = make(map[uint64]int, len(d.Locations))
	for i, l := range d.Locations {
		d.locIdx[l.Self] = i
	}
}

// Str returns the string with id ref, or "" if undefined.
func (d *Defs) Str(ref uint32) string {
	if i, ok := d.strIdx[uint64(ref)]; ok {
		return d.Strings[i].Value
	}
	return ""
}

// Region returns the region with id ref.
func (d *Defs) Region(ref uint32) (*Region, bool) {
	i, ok := d.regIdx[uint64(ref)]
	if !ok {
		return nil, false
	}
	return &d.Regions[i], true
}

// Group returns the group with id ref.
func (d *Defs) Group(ref uint32) (*Group, bool) {
	i, ok := d.grpIdx[uint64(ref)]
	if !ok {
		return nil, false
	}
	return &d.Groups[i], true
}

// Comm returns the communicator with id ref.
func (d *Defs) Comm(ref uint32) (*Comm, bool) {
	i, ok := d.commIdx[uint64(ref)]
	if !ok {
		return nil, false
	}
	return &d.Comms[i], true
}

// Location returns the location with id ref.
func (d *Defs) Location(ref uint64) (*Location, bool) {
	i, ok := d.locIdx[ref]
	if !ok {
		return nil, false
	}
	return &d.Locations[i], true
}
