package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// placement analyzes one trace under mpirun with each process count of
// procs (0: in-process, without mpirun) and each variant (a set of scout
// flags, separated by spaces; "" for none; or a subcommand and its flags,
// such as "whatif --rank 10"), and prints wall time,
// throughput and the largest process's peak memory; it writes the table
// to DIR/placement.csv. A variant with a reference (another analyzer's
// figures) also gets our time and memory as ratios of the reference's.
func placement(stdout, stderr io.Writer, dir, bin string, procs []int, variants []string, refs map[string]reference, trace string, ranks int, events uint64, keep bool) error {
	bin, err := buildScout(stderr, dir, bin, true)
	if err != nil {
		return err
	}
	if trace == "" {
		trace = filepath.Join(dir, fmt.Sprintf("trace-%dx%d", ranks, events))
		start := time.Now()
		if err := generate(stderr, bin, trace, ranks, events); err != nil {
			return fmt.Errorf("generating the trace: %w", err)
		}
		fmt.Fprintf(stderr, "generated %s in %.1fs\n", trace, time.Since(start).Seconds())
		if !keep {
			defer os.RemoveAll(trace)
		}
	}
	n, err := countEvents(trace)
	if err != nil {
		return err
	}
	out := filepath.Join(dir, "placement-out")
	defer os.RemoveAll(out)
	var b strings.Builder
	b.WriteString("trace,events,processes,flags,seconds,events_per_second,peak_rss_mib,time_vs_reference,memory_vs_reference\n")
	fmt.Fprintf(stdout, "%s: %d events\n%10s %-16s %10s %14s %12s %10s %10s\n", trace, n, "processes", "flags", "time [s]", "events/s", "peak [MiB]", "time/ref", "mem/ref")
	for _, m := range procs {
		for _, v := range variants {
			args := append(append([]string{"-q", "-o", out}, strings.Fields(v)...), trace)
			if f := strings.Fields(v); len(f) > 0 && !strings.HasPrefix(f[0], "-") {
				// a subcommand (whatif, say): its name first, no outputs
				args = append(append([]string{f[0], "-q"}, f[1:]...), trace)
			}
			cmd := exec.Command(bin, args...)
			if m > 0 {
				cmd = exec.Command("mpirun", append([]string{"--allow-run-as-root", "--oversubscribe", "-np", strconv.Itoa(m), bin}, args...)...)
			}
			secs, rss, err := measure(stderr, cmd)
			if err != nil {
				return fmt.Errorf("analyzing with %d processes (%s): %w", m, v, err)
			}
			tr, mr := "-", "-"
			if ref, ok := refs[v]; ok {
				// the reference's MB are 10^6 bytes
				tr, mr = fmt.Sprintf("%.2f", secs/ref.seconds), fmt.Sprintf("%.2f", rss*(1<<20)/1e6/ref.mb)
			}
			fmt.Fprintf(stdout, "%10d %-16s %10.2f %14.3g %12.1f %10s %10s\n", m, v, secs, float64(n)/secs, rss, tr, mr)
			fmt.Fprintf(&b, "%s,%d,%d,%s,%.4f,%.0f,%.1f,%s,%s\n", filepath.Base(trace), n, m, v, secs, float64(n)/secs, rss, tr, mr)
		}
	}
	csv := filepath.Join(dir, "placement.csv")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", csv)
	return nil
}
