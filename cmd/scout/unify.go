package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"scout/unify"
)

const unifyUsage = `Usage: scout unify [flags] ARCHIVE

Unifies an OTF2 archive that holds only per-location (local) definitions,
as measurement systems write them before unification: builds the global
definitions (strings and regions matched by content, communicators by
their member groups) and each location's mapping tables, and writes them
into the archive. Only definition files are read. scout runs this step
itself when it is given an archive without global definitions.

Flags:
`

// runUnify is the "scout unify" subcommand.
func runUnify(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("scout unify", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	quiet := fs.BoolP("quiet", "q", false, "print no progress messages")
	help := fs.BoolP("help", "h", false, "show this help")
	fs.Usage = func() {
		fmt.Fprint(stderr, unifyUsage)
		printDefaults(fs, stderr)
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if *help {
		fmt.Fprint(stdout, unifyUsage)
		printDefaults(fs, stdout)
		return nil
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageError{fmt.Sprintf("expected one archive argument, got %d", fs.NArg())}
	}
	return unifyArchive(fs.Arg(0), newProgress(stderr, *quiet))
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
