package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

// startProfiles starts the profiles that developers ask for in the
// environment: SCOUT_CPUPROFILE=FILE writes a CPU profile (its samples
// labelled by replay pass and location: go tool pprof -tags),
// SCOUT_TRACE=FILE an execution trace (go tool trace: the scheduling of
// the workers and the waits between them), and SCOUT_MEMPROFILE=FILE a
// heap profile (in use at the end and allocated in all) when the command
// ends. Under mpirun each process appends ".RANK" to FILE. The returned
// function stops them; it is a no-op when none was asked for. They are
// environment variables, not flags, so that job scripts and the MPI
// build take them without a change of the command line.
func startProfiles() (stop func()) {
	suffix := ""
	if r := os.Getenv("OMPI_COMM_WORLD_RANK"); r != "" {
		suffix = "." + r
	} else if r := os.Getenv("PMI_RANK"); r != "" {
		suffix = "." + r
	}
	var stops []func()
	// streamed: a profile that writes to its file while the command runs
	streamed := func(env string, start func(io.Writer) error, stop func()) {
		name := os.Getenv(env)
		if name == "" {
			return
		}
		f, err := os.Create(name + suffix)
		if err == nil {
			if err = start(f); err != nil {
				f.Close()
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "scout: %s: %v\n", env, err)
			return
		}
		stops = append(stops, func() { stop(); f.Close() })
	}
	streamed("SCOUT_CPUPROFILE", pprof.StartCPUProfile, pprof.StopCPUProfile)
	streamed("SCOUT_TRACE", trace.Start, trace.Stop)
	if name := os.Getenv("SCOUT_MEMPROFILE"); name != "" {
		stops = append(stops, func() {
			f, err := os.Create(name + suffix)
			if err == nil {
				runtime.GC()
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "scout: SCOUT_MEMPROFILE: %v\n", err)
			}
		})
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}
