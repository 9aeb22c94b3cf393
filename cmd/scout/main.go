// Command scout analyzes OTF2 event traces of MPI programs for wait states
// and writes a report.
package main

import (
	"errors"
	"fmt"
	"os"

	"runtime/debug"
	"scout/analysis"
)

func main() {
	// Nearly all of scout's heap is long-lived and pointer-free (the
	// events), so collecting more often is cheap, and it keeps the peak
	// heap near the live data instead of twice it (GOGC's default).
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(25)
	}
	handleSignals(os.Stderr)
	stopProfiles := startProfiles()
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	stopProfiles()
	if err != nil {
		if !errors.Is(err, analysis.ErrReported) {
			fmt.Fprintf(os.Stderr, "scout: %v\n", err)
		}
		os.Exit(exitCode(err))
	}
}
