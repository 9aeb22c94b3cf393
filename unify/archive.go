package unify

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"scout/localtrace/otf2"
)

// ErrUnified is returned (wrapped) by Definitions for an archive that
// already has a global definition file, as every Score-P archive does.
var ErrUnified = errors.New("unify: the archive already has global definitions")

// tmpSuffix marks the files Definitions writes before renaming them into
// place; leftovers of an interrupted run are removed by the next one.
const tmpSuffix = ".unify-tmp"

// batch is the number of locations read, merged and written at a time:
// memory is bounded by the global definitions plus one batch of local ones.
const batch = 256

// testHookRename, if set, is called after each rename of a finished file
// (n renames done); an error stops Definitions there, as an interruption
// would.
var testHookRename func(n int) error

// Result describes a unification.
type Result struct {
	Locations  int    // local definition files merged
	LocalDefs  uint64 // definition records read from them
	GlobalDefs uint64 // records in the new global definition file
}

// NeedsUnification reports whether the archive at path (its anchor file
// or the directory holding it) has local definitions only: no global
// definition file, so it must go through Definitions before analysis.
func NeedsUnification(path string) (bool, error) {
	a, err := otf2.Open(path)
	if err != nil {
		return false, err
	}
	return !a.Anchor.HasGlobalDefFile, nil
}

// Definitions unifies the local definitions of the archive at path (its
// anchor file or the directory holding it): an archive as a measurement
// system writes it before unification, with the anchor, each location's
// events under its own identifiers and its definitions in
// <name>/<loc>.def, and no global definition file. The anchor must carry
// the timer resolution as property otf2.PropTimerResolution.
//
// Definitions merges the local definitions into global ones and gives
// every location mapping tables (STRING, LOCATION_GROUP, REGION, GROUP,
// COMM, ATTRIBUTE, PARAMETER, RMA_WIN; none for an identity) from its
// identifiers to the global ones. Definitions match by content: strings
// by value; regions, attributes, parameters, system tree nodes and
// location groups by all fields, references compared globally; groups
// by their fields and member lists; communicators and RMA windows by
// name, group(s), parent and flags and, among a location's equal ones,
// by their order of definition. Location identifiers are global already;
// the file <loc>.def must define location <loc>. Global identifiers are
// given in order of first appearance, locations taken in identifier
// order, so they are deterministic. ClockProperties span the first to
// the last clock offset of all locations (in global time).
//
// Definitions then writes <name>.def, rewrites each <loc>.def as mapping tables,
// clock offsets and the location's original definitions (the layout of
// Score-P's unification debug mode; readers use the mapping tables), and
// updates the anchor's counts. Afterwards the archive reads like any
// Score-P archive. Only definition files are read, never event files.
//
// Every file is first written under a temporary name and then renamed
// into place, the global definition file last. An interrupted run
// leaves an archive that still needs unification and that a new run
// unifies (the rewritten local files keep their definitions). A second
// run on a unified archive fails with ErrUnified.
func Definitions(path string) (*Result, error) {
	a, err := otf2.Open(path)
	if err != nil {
		return nil, err
	}
	if a.Anchor.HasGlobalDefFile {
		return nil, fmt.Errorf("%w: %s exists", ErrUnified, a.GlobalDefPath())
	}
	// One unification of an archive at a time: a second one (another
	// analysis of the same archive started meanwhile) waits, then finds
	// the archive unified.
	unlock, err := lockArchive(a)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := os.Stat(a.GlobalDefPath()); err == nil {
		return nil, fmt.Errorf("%w: %s exists", ErrUnified, a.GlobalDefPath())
	}
	res, err := timerResolution(a)
	if err != nil {
		return nil, err
	}
	locs, err := listLocations(a)
	if err != nil {
		return nil, err
	}
	m := newMerger()
	r := &Result{Locations: len(locs)}
	var renames [][2]string // temporary → final
	defer func() {
		for _, p := range renames { // left over after an error
			os.Remove(p[0])
		}
	}()
	for start := 0; start < len(locs); start += batch {
		part := locs[start:min(start+batch, len(locs))]
		lds := make([]*otf2.LocalDefs, len(part))
		err := parallel(len(part), func(i int) error {
			var err error
			lds[i], err = readLocal(a, part[i])
			return err
		})
		if err != nil {
			return nil, err
		}
		for i, loc := range part {
			maps, err := m.add(a.LocalDefPath(loc), loc, lds[i])
			if err != nil {
				return nil, fmt.Errorf("unify: %w", err)
			}
			r.LocalDefs += lds[i].Defs.Count
			lds[i].Maps = maps
		}
		err = parallel(len(part), func(i int) error {
			return writeTemp(a.LocalDefPath(part[i])+tmpSuffix, func(w *bufio.Writer) error {
				_, err := otf2.EncodeLocalDefs(w, lds[i], a.Anchor.ChunkSizeDefs)
				return err
			})
		})
		for _, loc := range part {
			p := a.LocalDefPath(loc)
			renames = append(renames, [2]string{p + tmpSuffix, p})
		}
		if err != nil {
			return nil, err
		}
	}
	global := m.global(res)
	an := a.Anchor
	an.NumLocations = uint64(len(global.Locations))
	err = writeTemp(a.GlobalDefPath()+tmpSuffix, func(w *bufio.Writer) error {
		n, err := otf2.EncodeGlobalDefs(w, global, a.Anchor.ChunkSizeDefs)
		an.NumGlobalDefs = n
		return err
	})
	renames = append(renames, [2]string{a.AnchorPath() + tmpSuffix, a.AnchorPath()},
		[2]string{a.GlobalDefPath() + tmpSuffix, a.GlobalDefPath()})
	if err != nil {
		return nil, err
	}
	r.GlobalDefs = an.NumGlobalDefs
	if err := writeTemp(a.AnchorPath()+tmpSuffix, func(w *bufio.Writer) error { return otf2.EncodeAnchor(w, &an) }); err != nil {
		return nil, err
	}
	for len(renames) > 0 {
		if err := os.Rename(renames[0][0], renames[0][1]); err != nil {
			return nil, fmt.Errorf("unify: %w (the archive still needs unification; run it again)", err)
		}
		renames = renames[1:]
		if testHookRename != nil {
			if err := testHookRename(r.Locations + 2 - len(renames)); err != nil {
				return nil, err
			}
		}
	}
	syncDir(filepath.Join(a.Dir, a.Name))
	syncDir(a.Dir)
	return r, nil
}

// timerResolution reads the anchor property otf2.PropTimerResolution.
func timerResolution(a *otf2.Archive) (uint64, error) {
	for _, p := range a.Anchor.Properties {
		if p.Name == otf2.PropTimerResolution {
			v, err := strconv.ParseUint(strings.TrimSpace(p.Value), 10, 64)
			if err != nil || v == 0 {
				return 0, fmt.Errorf("unify: %s: property %s = %q is not a positive integer", a.AnchorPath(), p.Name, p.Value)
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("unify: %s: no property %s (the timer resolution, needed for the global ClockProperties)",
		a.AnchorPath(), otf2.PropTimerResolution)
}

// listLocations finds the locations by their local definition files,
// checks that every event file has one and that the anchor announces as
// many, and removes the temporary files of an interrupted run.
func listLocations(a *otf2.Archive) ([]uint64, error) {
	dir := filepath.Join(a.Dir, a.Name)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("unify: %w", err)
	}
	for _, p := range []string{a.AnchorPath(), a.GlobalDefPath()} {
		if err := os.Remove(p + tmpSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("unify: %w", err)
		}
	}
	defs := map[uint64]bool{}
	var evts []uint64
	for _, e := range ents {
		name := e.Name()
		if strings.HasSuffix(name, tmpSuffix) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return nil, fmt.Errorf("unify: %w", err)
			}
			continue
		}
		base, ext, _ := strings.Cut(name, ".")
		loc, err := strconv.ParseUint(base, 10, 64)
		if err != nil || strconv.FormatUint(loc, 10) != base || e.IsDir() {
			continue
		}
		switch ext {
		case "def":
			defs[loc] = true
		case "evt":
			evts = append(evts, loc)
		}
	}
	slices.Sort(evts)
	for _, loc := range evts {
		if !defs[loc] {
			return nil, fmt.Errorf("unify: local definition file %s is missing (location %d has the event file %s)",
				a.LocalDefPath(loc), loc, a.EventPath(loc))
		}
	}
	if len(defs) == 0 {
		return nil, fmt.Errorf("unify: no local definition files (<location>.def) in %s", dir)
	}
	if a.Anchor.NumLocations != uint64(len(defs)) {
		return nil, fmt.Errorf("unify: %s announces %d locations, but %s holds %d local definition files",
			a.AnchorPath(), a.Anchor.NumLocations, dir, len(defs))
	}
	locs := make([]uint64, 0, len(defs))
	for loc := range defs {
		locs = append(locs, loc)
	}
	slices.Sort(locs)
	return locs, nil
}

// lockArchive takes an exclusive lock on the archive (a lock file beside
// its anchor), waiting for another process's unification to end. An
// archive whose directory cannot be written cannot be unified in place:
// that is an error that says so.
func lockArchive(a *otf2.Archive) (unlock func(), err error) {
	p := a.AnchorPath() + ".unify-lock"
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("unify: the archive %s has only local definitions, and they cannot be unified in place: %w (unify a writable copy: scout unify COPY)", a.Dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("unify: locking %s: %w", p, err)
	}
	return func() {
		os.Remove(p)
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

func readLocal(a *otf2.Archive, loc uint64) (*otf2.LocalDefs, error) {
	p := a.LocalDefPath(loc)
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("unify: %w", err)
	}
	defer f.Close()
	ld, err := otf2.DecodeLocalDefs(bufio.NewReader(f), p, a.Anchor.ChunkSizeDefs)
	if err != nil {
		return nil, fmt.Errorf("unify: %w", err)
	}
	return ld, nil
}

// writeTemp writes a file through fill and flushes it to disk.
func writeTemp(path string, fill func(*bufio.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return fmt.Errorf("unify: %w", err)
	}
	w := bufio.NewWriter(f)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("unify: writing %s: %w", path, err)
	}
	return nil
}

// syncDir flushes a directory's entries (the renames) to disk, if the
// system allows it.
func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}

// parallel runs fn(0..n-1) on up to GOMAXPROCS goroutines and returns the
// error of the smallest index that failed.
func parallel(n int, fn func(i int) error) error {
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
