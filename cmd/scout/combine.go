package main

import (
	"github.com/spf13/pflag"

	"scout/combine"
	"scout/cube"
)

const combineLong = `Merges partial reports, e.g. one per node written by separate runs, into
one report: metric trees, call trees and system trees are united and all
values kept. A location present in two parts is an error.
`

// combineCmd declares the flags of "scout combine" on fs and returns what the
// command runs.
func combineCmd(fs *pflag.FlagSet) func(e *cmdEnv, args []string) error {
	out := fs.StringP("output", "o", "", "write the merged report to `FILE` (must end in .cubex)")
	quiet := fs.BoolP("quiet", "q", false, "print no progress messages")
	return func(e *cmdEnv, args []string) error {
		stderr := e.stderr
		if *out == "" || len(args) == 0 {
			e.usage()
			return usageError{"combine needs -o OUT.cubex and at least one part"}
		}
		outs := &outputSet{}
		outs.input(args...)
		if err := outs.add(*out); err != nil {
			return usageError{"-o: " + err.Error()}
		}
		prog := newProgress(stderr, *quiet)
		var parts []*cube.Report
		for _, p := range args {
			r, err := cube.ReadFile(p)
			if err != nil {
				return err
			}
			parts = append(parts, r)
		}
		merged, err := combine.MergeCubes(parts, args)
		if err != nil {
			return err
		}
		if err := outs.writeAll(func() error { return outs.writeCube(*out, merged) }); err != nil {
			return err
		}
		prog.Printf("merged %d reports (%d locations, %d call paths) into %s", len(parts), len(merged.Locations()), len(merged.AllCnodes()), *out)
		return nil
	}
}
