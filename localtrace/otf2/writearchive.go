package otf2

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// ArchiveWriter creates an OTF2 archive on disk: the anchor file
// <dir>/<name>.otf2, the global definitions <dir>/<name>.def and, per
// location, <dir>/<name>/<loc>.def and <loc>.evt. Write the event files
// (CreateEvents) and local definitions in any order, then the global
// definitions, then Close, which writes the anchor with the number of
// locations and global definitions. Event writers of different locations
// may be used from different goroutines.
type ArchiveWriter struct {
	Archive // where the files go, and the anchor written by Close

	mu        sync.Mutex
	counts    map[uint64]uint64 // events written, by closed location
	open      map[uint64]bool   // event writers not yet closed
	errs      []error           // errors of event writers
	globalDef bool
	closed    bool
}

// CreateArchive makes the directory layout of archive name in dir (dir is
// created if needed) and returns its writer. an supplies the anchor
// fields; zero fields get defaults: anchor format 3, trace format 2,
// version 3.0.3, Score-P's chunk sizes, POSIX substrate, no compression,
// creator "scout". NumLocations and NumGlobalDefs are computed.
func CreateArchive(dir, name string, an Anchor) (*ArchiveWriter, error) {
	if name == "" || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("otf2: invalid archive name %q", name)
	}
	setAnchorDefaults(&an)
	if err := checkChunkSize(an.ChunkSizeEvents); err != nil {
		return nil, fmt.Errorf("otf2: event chunk size: %w", err)
	}
	if err := checkChunkSize(an.ChunkSizeDefs); err != nil {
		return nil, fmt.Errorf("otf2: definition chunk size: %w", err)
	}
	if an.Substrate != SubstratePOSIX || an.Compression != CompressionNone {
		return nil, fmt.Errorf("otf2: can only write POSIX files without compression (substrate %d, compression %d)",
			an.Substrate, an.Compression)
	}
	w := &ArchiveWriter{Archive: Archive{Dir: dir, Name: name, Anchor: an},
		counts: make(map[uint64]uint64), open: make(map[uint64]bool)}
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		return nil, fmt.Errorf("otf2: creating archive: %w", err)
	}
	return w, nil
}

func setAnchorDefaults(an *Anchor) {
	if an.AnchorFormat == 0 {
		an.AnchorFormat = 3
	}
	if an.TraceFormat == 0 {
		an.TraceFormat = 2
	}
	if an.Version == [3]uint8{} {
		an.Version = [3]uint8{3, 0, 3}
	}
	if an.ChunkSizeEvents == 0 {
		an.ChunkSizeEvents = DefaultChunkSizeEvents
	}
	if an.ChunkSizeDefs == 0 {
		an.ChunkSizeDefs = DefaultChunkSizeDefs
	}
	if an.Substrate == 0 {
		an.Substrate = SubstratePOSIX
	}
	if an.Compression == 0 {
		an.Compression = CompressionNone
	}
	if an.Creator == "" {
		an.Creator = "scout"
	}
	an.BigEndian = false
}

// CreateEvents creates location loc's event file and returns its writer.
// Closing the writer closes the file and records its event count, which
// WriteGlobalDefs then writes as the location's NumEvents.
func (w *ArchiveWriter) CreateEvents(loc uint64) (*EventWriter, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, errors.New("otf2: archive writer is closed")
	}
	if _, done := w.counts[loc]; done || w.open[loc] {
		return nil, fmt.Errorf("otf2: events of location %d written twice", loc)
	}
	f, err := os.Create(w.EventPath(loc))
	if err != nil {
		return nil, fmt.Errorf("otf2: location %d: %w", loc, err)
	}
	ew, err := NewEventWriter(f, w.Anchor.ChunkSizeEvents)
	if err != nil {
		f.Close()
		return nil, err
	}
	ew.closer = f
	ew.done = func(n uint64, err error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.open, loc)
		if err != nil {
			w.errs = append(w.errs, fmt.Errorf("location %d: %w", loc, err))
			return
		}
		w.counts[loc] = n
	}
	w.open[loc] = true
	return ew, nil
}

// WriteLocalDefs writes location loc's local definition file (nil: an
// empty one).
func (w *ArchiveWriter) WriteLocalDefs(loc uint64, l *LocalDefs) error {
	if l == nil {
		l = &LocalDefs{}
	}
	err := writeFile(w.LocalDefPath(loc), func(bw *bufio.Writer) error {
		_, err := EncodeLocalDefs(bw, l, w.Anchor.ChunkSizeDefs)
		return err
	})
	if err != nil {
		return fmt.Errorf("otf2: location %d: %w", loc, err)
	}
	return nil
}

// WriteGlobalDefs writes the global definition file from d. A Location
// whose event writer was closed before gets the number of events written
// as NumEvents (d itself is not modified); writing the global definitions
// while an event writer is still open is an error.
func (w *ArchiveWriter) WriteGlobalDefs(d *Defs) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.open) > 0 {
		return fmt.Errorf("otf2: writing global definitions while the event files of %d locations are open", len(w.open))
	}
	if w.globalDef {
		return errors.New("otf2: global definitions written twice")
	}
	if len(w.counts) > 0 {
		c := *d
		c.Locations = append([]Location(nil), d.Locations...)
		for i := range c.Locations {
			if n, ok := w.counts[c.Locations[i].Self]; ok {
				c.Locations[i].NumEvents = n
			}
		}
		d = &c
	}
	var n uint64
	err := writeFile(w.GlobalDefPath(), func(bw *bufio.Writer) error {
		var err error
		n, err = EncodeGlobalDefs(bw, d, w.Anchor.ChunkSizeDefs)
		return err
	})
	if err != nil {
		return err
	}
	w.Anchor.NumGlobalDefs = n
	w.Anchor.NumLocations = uint64(len(d.Locations))
	w.globalDef = true
	return nil
}

// closing marks the archive closed and checks that it was not closed
// before and that every event writer was closed without error. The
// caller holds w.mu.
func (w *ArchiveWriter) closing() error {
	if w.closed {
		return errors.New("otf2: archive writer closed twice")
	}
	w.closed = true
	if len(w.open) > 0 {
		locs := make([]uint64, 0, len(w.open))
		for l := range w.open {
			locs = append(locs, l)
		}
		sort.Slice(locs, func(i, j int) bool { return locs[i] < locs[j] })
		return fmt.Errorf("otf2: event writers of locations %v not closed", locs)
	}
	if len(w.errs) > 0 {
		return fmt.Errorf("otf2: writing events: %w", errors.Join(w.errs...))
	}
	return nil
}

// Close checks that every event writer was closed without error and the
// global definitions were written, then writes the anchor file.
func (w *ArchiveWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.closing(); err != nil {
		return err
	}
	if !w.globalDef {
		return errors.New("otf2: archive closed without global definitions")
	}
	return writeFile(w.AnchorPath(), func(bw *bufio.Writer) error { return EncodeAnchor(bw, &w.Anchor) })
}

// EventCount returns the number of events written for location loc, once
// its event writer is closed.
func (w *ArchiveWriter) EventCount(loc uint64) (uint64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, ok := w.counts[loc]
	return n, ok
}

// writeFile creates path and fills it through a buffered writer.
func writeFile(path string, fill func(*bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("otf2: %w", err)
	}
	bw := bufio.NewWriter(f)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("otf2: writing %s: %w", path, err)
	}
	return nil
}
