package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"scout/combine"
	"scout/cube"
	"scout/patterns"
)

const reportUsage = `Usage: scout report [flags] FILE.cubex

Prints a summary of a CUBE4 report (written by scout or by Scalasca):
total time and the top wait states with their call paths and the most
affected ranks. With --csv it writes every value of the report in the
canonical form metric,callpath,rank,value.

Flags:
`

// runReport is the "scout report" subcommand.
func runReport(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("scout report", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	csvOut := fs.String("csv", "", "write every non-zero value as CSV to `FILE` (- for stdout)")
	top := fs.IntP("top", "n", 5, "show the `N` largest wait states (0: only the total time)")
	help := fs.BoolP("help", "h", false, "show this help")
	fs.Usage = func() {
		fmt.Fprint(stderr, reportUsage)
		printDefaults(fs, stderr)
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if *help {
		fmt.Fprint(stdout, reportUsage)
		printDefaults(fs, stdout)
		return nil
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageError{fmt.Sprintf("expected one report argument, got %d", fs.NArg())}
	}
	if *top < 0 {
		return usageError{fmt.Sprintf("-n/--top %d: the number of wait states to show must be 0 or more", *top)}
	}
	outs := &outputSet{}
	outs.input(fs.Arg(0))
	if *csvOut != "" {
		if err := outs.add(*csvOut); err != nil {
			return usageError{"--csv: " + err.Error()}
		}
	}
	rep, err := cube.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	cells := rep.Cells()
	if *csvOut != "" {
		if err := outs.writeAll(func() error { return outs.write(*csvOut, stdout, rep.CSV) }); err != nil {
			return fmt.Errorf("writing CSV: %w", err)
		}
		if *csvOut == "-" {
			return nil
		}
	}
	// The summary ranks the wait-state metrics scout knows, by their
	// unique names, whatever their display names in the file.
	var cc []combine.Cell
	for _, c := range cells {
		cc = append(cc, combine.Cell{Metric: c.Metric, Callpath: c.Callpath, Rank: c.Rank, Value: c.Value, Integer: c.Integer})
	}
	fmt.Fprintf(stdout, "Report %s: %d metrics, %d call paths, %d locations.\n", fs.Arg(0),
		len(rep.AllMetrics()), len(rep.AllCnodes()), len(rep.Locations()))
	return combine.WriteSummary(stdout, cc, patterns.Catalog, len(rep.Locations()), *top)
}
