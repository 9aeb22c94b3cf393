package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"scout/analysis"
	"scout/combine"
)

const correctLong = `Corrects the timestamps of the OTF2 trace TRACE with the controlled
logical clock, as the analysis does with --time-correct, and writes the
corrected trace as a new OTF2 archive into the directory OUT (which must
not exist), for other tools to use: no message is received before it
was sent plus 1 us, no collective left before the data it receives was
sent. scout analyzes the corrected archive to the values of
"scout --time-correct TRACE". The corrected times fall between the
original timer's ticks: the new archive's timer counts 2^k ticks per
second (k = 58 for a trace of 5 s), which holds them exactly.
`

// correctCmd declares the flags of "scout correct" on fs and returns
// what the command runs.
func correctCmd(fs *pflag.FlagSet) func(e *cmdEnv, args []string) error {
	out := fs.StringP("output", "o", "", "write the corrected archive into the new directory `OUT` (required)")
	quiet := fs.BoolP("quiet", "q", false, "print no progress messages")
	jobs := fs.IntP("jobs", "j", 0, "load at most `N` locations at once (default: number of CPUs)")
	verbose := fs.BoolP("verbose", "v", false, "print the statistics of the correction")
	return func(e *cmdEnv, args []string) error {
		if len(args) != 1 {
			e.usage()
			return usageError{fmt.Sprintf("expected one trace argument, got %d", len(args))}
		}
		if *out == "" {
			return usageError{"-o/--output OUT is required: the corrected archive goes into a new directory"}
		}
		if err := checkJobs(*jobs); err != nil {
			return err
		}
		if underMPILauncher() {
			return fmt.Errorf("scout correct runs as one process: run it without mpirun")
		}
		prog := newProgress(e.stderr, *quiet)
		if err := unifyIfNeeded(args[0], prog); err != nil {
			return err
		}
		c, err := analysis.Correct(context.Background(), analysis.Plan{Trace: args[0], Jobs: *jobs, Log: prog}, *out)
		if err != nil {
			return err
		}
		if !*quiet {
			fmt.Fprintln(e.stderr, combine.CorrectionLine(c, -1))
		}
		if *verbose {
			combine.WriteCorrection(e.stderr, c, -1)
		}
		return nil
	}
}
