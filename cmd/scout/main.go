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
	// The large tables (events, messages) live outside the Go heap
	// (internal/offheap); the heap holds the passes' working data.
	// Collecting when it has grown by half (not doubled, GOGC's
	// default) keeps the peak near the live data; collecting more often
	// than that cost more time than it saved memory (a small live heap
	// is collected hundreds of times).
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
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
