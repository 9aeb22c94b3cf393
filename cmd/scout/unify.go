package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"scout/unify"
)

const unifyLong = `Unifies an OTF2 archive that holds only per-location (local) definitions,
as measurement systems write them before unification: builds the global
definitions (strings and regions matched by content, communicators by
their member groups) and each location's mapping tables, and writes them
into the archive. Only definition files are read. scout runs this step
itself when it is given an archive without global definitions.
`

// unifyCmd declares the flags of "scout unify" on fs and returns what the
// command runs.
func unifyCmd(fs *pflag.FlagSet) func(e *cmdEnv, args []string) error {
	quiet := fs.BoolP("quiet", "q", false, "print no progress messages")
	return func(e *cmdEnv, args []string) error {
		stderr := e.stderr
		if len(args) != 1 {
			e.usage()
			return usageError{fmt.Sprintf("expected one archive argument, got %d", len(args))}
		}
		return unifyArchive(args[0], newProgress(stderr, *quiet))
	}
}

// unifyArchive runs the unification pre-step on the archive at path.
func unifyArchive(path string, prog *progress) error {
	start := time.Now()
	prog.Printf("unifying the local definitions of %s", path)
	res, err := unify.Definitions(path)
	if err != nil {
		return err
	}
	prog.Printf("unified %d locations (%d local definitions into %d global ones) in %.2fs",
		res.Locations, res.LocalDefs, res.GlobalDefs, time.Since(start).Seconds())
	return nil
}

// unifyIfNeeded unifies the archive at path when it has no global
// definitions yet.
func unifyIfNeeded(path string, prog *progress) error {
	need, err := unify.NeedsUnification(path)
	if err != nil || !need {
		return err
	}
	if err := unifyArchive(path, prog); !errors.Is(err, unify.ErrUnified) {
		return err
	}
	return nil // another analysis unified it meanwhile
}
