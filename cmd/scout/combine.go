package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"scout/combine"
	"scout/cube"
)

const combineUsage = `Usage: scout combine -o OUT.cubex PART.cubex...

Merges partial reports, e.g. one per node written by separate runs, into
one report: metric trees, call trees and system trees are united and all
values kept. A location present in two parts is an error.

Flags:
`

// runCombine is the "scout combine" subcommand.
func runCombine(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("scout combine", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.StringP("output", "o", "", "write the merged report to `FILE` (must end in .cubex)")
	quiet := fs.BoolP("quiet", "q", false, "print no progress messages")
	help := fs.BoolP("help", "h", false, "show this help")
	fs.Usage = func() {
		fmt.Fprint(stderr, combineUsage)
		printDefaults(fs, stderr)
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if *help {
		fmt.Fprint(stdout, combineUsage)
		printDefaults(fs, stdout)
		return nil
	}
	if *out == "" || fs.NArg() == 0 {
		fs.Usage()
		return usageError{"combine needs -o OUT.cubex and at least one part"}
	}
	outs := &outputSet{}
	outs.input(fs.Args()...)
	if err := outs.add(*out); err != nil {
		return usageError{"-o: " + err.Error()}
	}
	prog := newProgress(stderr, *quiet)
	var parts []*cube.Report
	for _, p := range fs.Args() {
		r, err := cube.ReadFile(p)
		if err != nil {
			return err
		}
		parts = append(parts, r)
	}
	merged, err := combine.MergeCubes(parts, fs.Args())
	if err != nil {
		return err
	}
	if err := outs.writeAll(func() error { return outs.writeCube(*out, merged) }); err != nil {
		return err
	}
	prog.Printf("merged %d reports (%d locations, %d call paths) into %s", len(parts), len(merged.Locations()), len(merged.AllCnodes()), *out)
	return nil
}
