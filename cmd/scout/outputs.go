package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"scout/cube"
)

// outputSet is the files one command writes. They are declared, and
// checked, before any work starts (the destination is writable, and it is
// neither one of the inputs nor another output); each is written to a
// temporary file beside its destination, and commit renames them all
// into place only when all are complete. A failure or a signal before
// the commit leaves every earlier file untouched, and no signal ever
// deletes a final path (see handleSignals).
type outputSet struct {
	inputs  []string // files the command reads
	outs    []*output
	tmpDirs []string // temporary directories (a trace being generated)
}

type output struct {
	path string // destination ("-": standard output)
	tmp  string // the complete temporary file, once written
}

// active is the output set of the running command, whose temporary files
// a signal removes; outputs.Lock guards it.
var outputs struct {
	sync.Mutex
	active *outputSet
}

// tempPattern is the os.CreateTemp pattern of the temporary file of an
// output written to path.
func tempPattern(path string) string { return "." + filepath.Base(path) + ".*.tmp" }

// input records files the command reads; outputs must differ from them.
func (s *outputSet) input(paths ...string) { s.inputs = append(s.inputs, paths...) }

// inputDir records every file below dir as an input.
func (s *outputSet) inputDir(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			s.inputs = append(s.inputs, p)
		}
		return nil
	})
}

// add declares the output path ("-" for standard output) and checks it:
// not an input, not another output (by resolved path and by file
// identity), in a directory where this process can create files.
func (s *outputSet) add(path string) error {
	if path == "-" {
		s.outs = append(s.outs, &output{path: path})
		return nil
	}
	abs, err := resolve(path)
	if err != nil {
		return fmt.Errorf("output %s: cannot write into its directory: %w", path, err)
	}
	st, statErr := os.Stat(path)
	if statErr == nil && st.IsDir() {
		return fmt.Errorf("output %s is a directory", path)
	}
	same := func(other string) bool {
		if o, err := resolve(other); err == nil && o == abs {
			return true
		}
		ost, err := os.Stat(other)
		return statErr == nil && err == nil && os.SameFile(st, ost)
	}
	for _, in := range s.inputs {
		if same(in) {
			return fmt.Errorf("output %s is the input %s: refusing to overwrite what scout reads", path, in)
		}
	}
	for _, o := range s.outs {
		if o.path != "-" && same(o.path) {
			return fmt.Errorf("output %s is given twice (also as %s)", path, o.path)
		}
	}
	// Can files be created there? (Found now, not after the analysis.)
	if err := probeDir(path); err != nil {
		return fmt.Errorf("output %s: cannot write into its directory: %w", path, err)
	}
	s.outs = append(s.outs, &output{path: path})
	return nil
}

// probeDir creates and removes a temporary file beside path, under
// outputs.Lock: a signal that comes meanwhile waits, so that the probe
// never stays behind.
func probeDir(path string) error {
	outputs.Lock()
	defer outputs.Unlock()
	probe, err := os.CreateTemp(filepath.Dir(path), tempPattern(path))
	if err != nil {
		return err
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// resolve returns the absolute path of p with its directory's symbolic
// links resolved (the file itself need not exist).
func resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return "", err
	}
	base := filepath.Base(abs)
	if target, err := filepath.EvalSymlinks(abs); err == nil {
		return target, nil
	}
	return filepath.Join(dir, base), nil
}

// find returns the declared output path.
func (s *outputSet) find(path string) (*output, error) {
	for _, o := range s.outs {
		if o.path == path {
			return o, nil
		}
	}
	return nil, fmt.Errorf("internal error: output %s was not declared", path)
}

// writeAll writes the outputs with write (through s.write and
// s.writeCube) and commits them, or, if anything fails, removes them all.
func (s *outputSet) writeAll(write func() error) error {
	s.start()
	err := write()
	if err == nil {
		err = s.commit()
	}
	if err != nil {
		s.abort()
	}
	return err
}

// start makes s the active set: a signal from now on removes its
// temporary files.
func (s *outputSet) start() {
	outputs.Lock()
	defer outputs.Unlock()
	outputs.active = s
}

// write writes the declared output path with fn: to standard output for
// "-", else to a temporary file kept for commit.
func (s *outputSet) write(path string, stdout io.Writer, fn func(io.Writer) error) error {
	o, err := s.find(path)
	if err != nil {
		return err
	}
	if path == "-" {
		return fn(stdout)
	}
	f, err := s.temp(o)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// temp creates the temporary file of o, registered under outputs.Lock
// so that a signal finds it.
func (s *outputSet) temp(o *output) (*os.File, error) {
	outputs.Lock()
	defer outputs.Unlock()
	f, err := os.CreateTemp(filepath.Dir(o.path), tempPattern(o.path))
	if err != nil {
		return nil, err
	}
	o.tmp = f.Name()
	return f, nil
}

// writeCube writes the declared report path.
func (s *outputSet) writeCube(path string, r *cube.Report) error {
	o, err := s.find(path)
	if err != nil {
		return err
	}
	f, err := s.temp(o)
	if err != nil {
		return err
	}
	// Into the registered temporary file: the writer makes no file of
	// its own, so a signal, which removes the registered files under
	// outputs.Lock, leaves nothing behind (cube.WriteFile's own
	// temporary file could be renamed after the removal).
	if err := cube.Write(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// commit gives the outputs their final names, with the permissions of a
// file the user creates (0666 less the umask), and ends the set; a
// signal waits until it is done.
func (s *outputSet) commit() error {
	outputs.Lock()
	defer outputs.Unlock()
	mode := fs.FileMode(0o666 &^ fileUmask)
	var errs []error
	for _, o := range s.outs {
		if o.tmp == "" {
			continue
		}
		if err := os.Chmod(o.tmp, mode); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		for _, o := range s.outs {
			if o.tmp == "" {
				continue
			}
			if err := os.Rename(o.tmp, o.path); err != nil {
				errs = append(errs, fmt.Errorf("renaming %s to %s: %w", o.tmp, o.path, err))
				continue
			}
			o.tmp = ""
		}
	}
	s.removeTemps()
	outputs.active = nil
	return errors.Join(errs...)
}

// commitDir moves the entries of the complete directory tmp into dir,
// replacing entries of those names there, and removes tmp; a signal
// waits until it is done.
func (s *outputSet) commitDir(tmp, dir string, names []string) error {
	outputs.Lock()
	defer outputs.Unlock()
	for _, n := range names {
		if err := os.RemoveAll(filepath.Join(dir, n)); err != nil {
			return err
		}
	}
	for _, n := range names {
		src := filepath.Join(tmp, n)
		if _, err := os.Lstat(src); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := os.Rename(src, filepath.Join(dir, n)); err != nil {
			return err
		}
	}
	s.removeTemps()
	outputs.active = nil
	return nil
}

// abort removes the temporary files and ends the set.
func (s *outputSet) abort() {
	outputs.Lock()
	defer outputs.Unlock()
	s.removeTemps()
	if outputs.active == s {
		outputs.active = nil
	}
}

// removeTemps removes the set's temporary files. The caller holds
// outputs.Lock.
func (s *outputSet) removeTemps() {
	for _, d := range s.tmpDirs {
		os.RemoveAll(d)
	}
	s.tmpDirs = nil
	for _, o := range s.outs {
		if o.tmp != "" {
			os.Remove(o.tmp)
			o.tmp = ""
		}
	}
}

// fileUmask is the process's file mode creation mask, read once at start
// (reading it means setting it, which must not race with file creation).
var fileUmask = func() int {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return m
}()
