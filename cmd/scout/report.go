package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"scout/combine"
	"scout/cube"
	"scout/patterns"
)

const reportLong = `Prints a summary of a CUBE4 report (written by scout or by Scalasca):
total time and the top wait states with their call paths and the most
affected ranks; when the report has them, the top root causes (the call
paths whose delay made others wait, short- and long-term, and on which
ranks) and the critical path (its length, the call paths that dominate
it, the imbalance impact). With --csv it writes every value of the
report in the canonical form metric,callpath,rank,value; with --html the
HTML report of it (as scout.html: one self-contained page with the
summary, the metric and call trees and the values per location).
`

// reportCmd declares the flags of "scout report" on fs and returns what the
// command runs.
func reportCmd(fs *pflag.FlagSet) func(e *cmdEnv, args []string) error {
	csvOut := fs.String("csv", "", "write every non-zero value as CSV to `FILE` (- for stdout)")
	htmlOut := fs.String("html", "", "write the HTML report to `FILE` (- for stdout)")
	top := fs.IntP("top", "n", 5, "show the `N` largest wait states, root causes and critical-path call paths (0: only the total time)")
	return func(e *cmdEnv, args []string) error {
		stdout := e.stdout
		if len(args) != 1 {
			e.usage()
			return usageError{fmt.Sprintf("expected one report argument, got %d", len(args))}
		}
		if *top < 0 {
			return usageError{fmt.Sprintf("-n/--top %d: the number of entries to show must be 0 or more", *top)}
		}
		outs := &outputSet{}
		outs.input(args[0])
		if *csvOut != "" {
			if err := outs.add(*csvOut); err != nil {
				return usageError{"--csv: " + err.Error()}
			}
		}
		if *htmlOut != "" {
			if *htmlOut == "-" && *csvOut == "-" {
				return usageError{"--csv and --html cannot both write to standard output"}
			}
			if err := outs.add(*htmlOut); err != nil {
				return usageError{"--html: " + err.Error()}
			}
		}
		rep, err := cube.ReadFile(args[0])
		if err != nil {
			return err
		}
		cells := rep.Cells()
		if *csvOut != "" || *htmlOut != "" {
			err := outs.writeAll(func() error {
				if *csvOut != "" {
					if err := outs.write(*csvOut, stdout, rep.CSV); err != nil {
						return fmt.Errorf("writing CSV: %w", err)
					}
				}
				if *htmlOut != "" {
					page := combine.CubeHTML(rep, combine.HTMLOptions{Title: args[0], Source: "CUBE report"})
					if err := outs.write(*htmlOut, stdout, page.Write); err != nil {
						return fmt.Errorf("writing the HTML report: %w", err)
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			if *csvOut == "-" || *htmlOut == "-" {
				return nil
			}
		}
		// The summary ranks the wait states, delay costs and critical path
		// by the metrics' unique names, whatever their display names in
		// the file.
		var cc []combine.Cell
		for _, c := range cells {
			cc = append(cc, combine.Cell{Metric: c.Metric, Callpath: c.Callpath, Rank: c.Rank, Value: c.Value, Integer: c.Integer})
		}
		fmt.Fprintf(stdout, "Report %s: %d metrics, %d call paths, %d locations.\n", args[0],
			len(rep.AllMetrics()), len(rep.AllCnodes()), len(rep.Locations()))
		return combine.WriteSummary(stdout, cc, patterns.Catalog, len(rep.Locations()), *top)
	}
}
