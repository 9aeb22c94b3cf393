package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
)

// outputs tracks the files a run writes, so that a run stopped by a
// signal (Ctrl-C, or SIGTERM from a batch system's time limit) leaves
// neither temporary files nor some outputs without the others.
var outputs struct {
	sync.Mutex
	expected []string        // final paths this run will write
	written  map[string]bool // final paths this run has written
	done     bool            // all outputs are complete
}

// expectOutput registers path as an output this run is about to write.
func expectOutput(path string) {
	outputs.Lock()
	defer outputs.Unlock()
	outputs.expected = append(outputs.expected, path)
}

// wroteOutput records that path is complete.
func wroteOutput(path string) {
	outputs.Lock()
	defer outputs.Unlock()
	if outputs.written == nil {
		outputs.written = map[string]bool{}
	}
	outputs.written[path] = true
}

// outputsDone marks the run's outputs complete: a signal no longer
// removes them.
func outputsDone() {
	outputs.Lock()
	defer outputs.Unlock()
	outputs.done = true
}

// removeOutputs deletes the temporary files of the expected outputs and
// the outputs already written, unless the run is done. The caller holds
// outputs.
func removeOutputs() {
	if outputs.done {
		return
	}
	for _, p := range outputs.expected {
		tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(p), tempPattern(p)))
		for _, t := range tmps {
			os.Remove(t)
		}
		if outputs.written[p] {
			os.Remove(p)
		}
	}
}

// handleSignals makes SIGINT and SIGTERM end the process after removing
// the partial outputs, with exit status 128 + the signal number.
func handleSignals(stderr io.Writer) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-ch
		outputs.Lock() // held until exit: no output completes any more
		removeOutputs()
		fmt.Fprintf(stderr, "scout: stopped by %v; no report written\n", s)
		code := 1
		if n, ok := s.(syscall.Signal); ok {
			code = 128 + int(n)
		}
		os.Exit(code)
	}()
}
