package otf2

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Substrate and compression values of the anchor file.
const (
	SubstratePOSIX = 1
	SubstrateSION  = 2
	SubstrateNone  = 3

	CompressionNone = 1
	CompressionZlib = 2
)

// Anchor is the content of an archive's anchor file (traces.otf2).
type Anchor struct {
	AnchorFormat     uint8
	TraceFormat      uint8
	Version          [3]uint8 // OTF2 version that wrote the archive
	ChunkSizeEvents  uint64
	ChunkSizeDefs    uint64
	Substrate        uint8
	Compression      uint8
	NumLocations     uint64
	NumGlobalDefs    uint64
	MachineName      string
	Creator          string
	Description      string
	Properties       []Property
	TraceID          uint64
	NumSnapshots     uint32
	NumThumbnails    uint32
	BigEndian        bool
	HasGlobalDefFile bool // set by Open: whether <name>.def exists
}

// Property is one name/value pair of the anchor file.
type Property struct{ Name, Value string }

// Archive locates the files of one OTF2 archive on disk.
type Archive struct {
	Dir    string // directory holding the anchor file
	Name   string // archive name: the anchor's base name without ".otf2"
	Anchor Anchor
}

// AnchorPath is the path of the anchor file.
func (a *Archive) AnchorPath() string { return filepath.Join(a.Dir, a.Name+".otf2") }

// GlobalDefPath is the path of the global definition file.
func (a *Archive) GlobalDefPath() string { return filepath.Join(a.Dir, a.Name+".def") }

// LocalDefPath is the path of location loc's local definition file.
func (a *Archive) LocalDefPath(loc uint64) string {
	return filepath.Join(a.Dir, a.Name, strconv.FormatUint(loc, 10)+".def")
}

// EventPath is the path of location loc's event file.
func (a *Archive) EventPath(loc uint64) string {
	return filepath.Join(a.Dir, a.Name, strconv.FormatUint(loc, 10)+".evt")
}

// Open finds the anchor file at path (the anchor itself, or a directory
// holding exactly one, preferring traces.otf2), reads it and checks that the
// archive is one this reader supports: POSIX substrate, no compression,
// trace format at most 2.
func Open(path string) (*Archive, error) {
	anchor, err := findAnchor(path)
	if err != nil {
		return nil, err
	}
	data, err := readAnchor(anchor)
	if err != nil {
		return nil, err
	}
	an, err := parseAnchor(data)
	if err != nil {
		return nil, fmt.Errorf("otf2: %s: %w", anchor, err)
	}
	a := &Archive{Dir: filepath.Dir(anchor), Name: strings.TrimSuffix(filepath.Base(anchor), ".otf2"), Anchor: an}
	if err := a.check(); err != nil {
		return nil, fmt.Errorf("otf2: %s: %w", anchor, err)
	}
	if _, err := os.Stat(a.GlobalDefPath()); err == nil {
		a.Anchor.HasGlobalDefFile = true
	}
	return a, nil
}

// maxAnchorSize bounds an anchor file: a header and a few properties,
// a few kilobytes in practice.
const maxAnchorSize = 1 << 20

// readAnchor reads an anchor file, which must be a regular file of at
// most maxAnchorSize bytes (not, say, a link to /dev/zero).
func readAnchor(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("otf2: reading anchor: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("otf2: reading anchor: %w", err)
	}
	if !st.Mode().IsRegular() || st.Size() > maxAnchorSize {
		return nil, fmt.Errorf("otf2: %s is not an OTF2 anchor file (%s, %d bytes; an anchor is a regular file of at most %d bytes)", path, st.Mode().Type(), st.Size(), maxAnchorSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxAnchorSize+1))
	if err != nil {
		return nil, fmt.Errorf("otf2: reading anchor %s: %w", path, err)
	}
	if len(data) > maxAnchorSize {
		return nil, fmt.Errorf("otf2: %s is not an OTF2 anchor file (more than %d bytes)", path, maxAnchorSize)
	}
	return data, nil
}

func findAnchor(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("otf2: no trace archive at %s: %w", path, err)
	}
	if !st.IsDir() {
		return path, nil
	}
	if p := filepath.Join(path, "traces.otf2"); fileExists(p) {
		return p, nil
	}
	m, _ := filepath.Glob(filepath.Join(path, "*.otf2"))
	switch len(m) {
	case 0:
		return "", fmt.Errorf("otf2: no anchor file (*.otf2) in directory %s", path)
	case 1:
		return m[0], nil
	}
	return "", fmt.Errorf("otf2: several anchor files in %s (%s); name one", path, strings.Join(m, ", "))
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func parseAnchor(data []byte) (Anchor, error) {
	var an Anchor
	if len(data) < 2 || data[0] != tagChunkHeader {
		return an, errors.New("not an OTF2 anchor file (bad header byte)")
	}
	c := cursor{b: data, p: 2}
	switch data[1] {
	case endianBig:
		c.big = true
	case endianLittle:
	default:
		return an, fmt.Errorf("not an OTF2 anchor file (bad byte-order mark 0x%02x)", data[1])
	}
	an.BigEndian = c.big
	if magic := c.str(); magic != "OTF2" || c.err != nil {
		return an, errors.New("not an OTF2 anchor file (magic \"OTF2\" missing)")
	}
	an.AnchorFormat = c.u8()
	if an.AnchorFormat == 0 && c.err == nil {
		return an, errors.New("invalid anchor format 0")
	}
	an.TraceFormat = c.u8()
	an.Version = [3]uint8{c.u8(), c.u8(), c.u8()}
	an.ChunkSizeEvents = c.u64f()
	an.ChunkSizeDefs = c.u64f()
	an.Substrate = c.u8()
	an.Compression = c.u8()
	an.NumLocations = c.u64f()
	an.NumGlobalDefs = c.u64f()
	an.MachineName = c.str()
	an.Creator = c.str()
	an.Description = c.str()
	if an.AnchorFormat >= 2 {
		n := c.u32f()
		if uint64(n) > uint64(len(data)) {
			return an, fmt.Errorf("anchor claims %d properties in %d bytes", n, len(data))
		}
		for i := uint32(0); i < n && c.err == nil; i++ {
			an.Properties = append(an.Properties, Property{c.str(), c.str()})
		}
		an.TraceID = c.u64f()
	}
	if an.AnchorFormat >= 3 {
		an.NumSnapshots = c.u32f()
		an.NumThumbnails = c.u32f()
		if c.err == nil && c.u8() != tagEndOfFile {
			return an, fmt.Errorf("anchor: missing end-of-file marker at offset %d", c.p-1)
		}
	}
	if c.err != nil {
		return an, fmt.Errorf("anchor truncated at offset %d: %w", len(data), c.err)
	}
	return an, nil
}

func (a *Archive) check() error {
	an := &a.Anchor
	switch an.Substrate {
	case SubstratePOSIX:
	case SubstrateSION:
		return errors.New("archive uses the SIONlib substrate, which scout cannot read; re-record with SCOREP_TRACING_USE_SION=false")
	default:
		return fmt.Errorf("unsupported file substrate %d (only POSIX files are supported)", an.Substrate)
	}
	if an.Compression == CompressionZlib {
		return errors.New("archive is zlib-compressed, which scout cannot read; decompress it first (e.g. otf2-copy from OTF2 2.x)")
	}
	if an.Compression != CompressionNone && an.Compression != 0 {
		return fmt.Errorf("unsupported compression %d", an.Compression)
	}
	if an.TraceFormat > 2 {
		return fmt.Errorf("unsupported trace format %d (this reader knows formats up to 2)", an.TraceFormat)
	}
	if an.ChunkSizeEvents == 0 || an.ChunkSizeDefs == 0 || an.ChunkSizeEvents > 1<<30 || an.ChunkSizeDefs > 1<<30 {
		return fmt.Errorf("implausible chunk sizes (events %d, definitions %d)", an.ChunkSizeEvents, an.ChunkSizeDefs)
	}
	return nil
}
