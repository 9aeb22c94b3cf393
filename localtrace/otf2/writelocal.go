package otf2

import (
	"bufio"
	"errors"
)

// PropTimerResolution is the anchor property that carries the timer
// resolution (ticks per second, decimal) of an archive written with local
// definitions only: ClockProperties is a global-only record, so such an
// archive has no other place for it. Unification (package unify) reads it
// to write the global ClockProperties.
const PropTimerResolution = "SCOUT::TIMER_RESOLUTION"

// CloseLocal finishes an archive written before unification: like Close
// it checks that every event writer was closed without error, but it
// requires that no global definitions were written, and writes an anchor
// announcing numLocations locations and no global definitions. The
// archive then holds the anchor, traces/<loc>.def and traces/<loc>.evt,
// and no global definition file.
func (w *ArchiveWriter) CloseLocal(numLocations uint64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.closing(); err != nil {
		return err
	}
	if w.globalDef {
		return errors.New("otf2: CloseLocal on an archive with global definitions (use Close)")
	}
	w.Anchor.NumLocations = numLocations
	w.Anchor.NumGlobalDefs = 0
	return writeFile(w.AnchorPath(), func(bw *bufio.Writer) error { return EncodeAnchor(bw, &w.Anchor) })
}

// NewSparseIDMap returns a sparse mapping table holding pairs (local,
// global, local, global, ...; sorted by local identifier, as OTF2 writes
// them), usable both for writing and for Map.
func NewSparseIDMap(pairs []uint64) *IDMap {
	m := &IDMap{Sparse: true, Pairs: pairs, lookup: make(map[uint64]uint64, len(pairs)/2)}
	for i := 0; i+1 < len(pairs); i += 2 {
		m.lookup[pairs[i]] = pairs[i+1]
	}
	return m
}
