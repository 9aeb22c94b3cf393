package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// handleSignals makes SIGINT, SIGTERM (a batch system's time limit) and
// SIGHUP (a closed terminal or session) end the process after removing
// the temporary files of the running command's outputs, with exit status
// 128 + the signal number. It never removes a final output: one that a
// command has committed stays, and the earlier ones it would have
// replaced are untouched until the commit, which a signal waits for.
//
// SIGXFSZ (a write beyond the file size limit, RLIMIT_FSIZE, that batch
// systems set) is ignored, so that the write fails with an error and the
// command removes its partial outputs instead of being killed.
func handleSignals(stderr io.Writer) {
	signal.Ignore(syscall.SIGXFSZ)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-ch
		outputs.Lock() // held until exit: no output completes any more
		if outputs.active != nil {
			outputs.active.removeTemps()
		}
		fmt.Fprintf(stderr, "scout: stopped by %v; no new output written\n", s)
		code := 1
		if n, ok := s.(syscall.Signal); ok {
			code = 128 + int(n)
		}
		os.Exit(code)
	}()
}
