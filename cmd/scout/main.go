// Command scout analyzes OTF2 event traces of MPI programs for wait states
// and writes a report.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "scout: %v\n", err)
		os.Exit(exitCode(err))
	}
}
