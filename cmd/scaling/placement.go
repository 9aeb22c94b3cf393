package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// placement analyzes one trace under mpirun with each process count of
// procs (0: in-process, without mpirun) and each variant (a set of scout
// flags, separated by spaces; "" for none; or a subcommand and its flags,
// such as "whatif --rank 10"; a variant that starts with @PATH analyzes
// the trace PATH instead, so that runs of two traces alternate), and
// prints wall time, throughput and the largest process's peak memory;
// it writes the table to DIR/placement.csv. A variant with a reference (another analyzer's
// figures) also gets our time and memory as ratios of the reference's.
//
// With repeat > 1 every configuration runs that many times, in rounds
// over all of them (so that a slow spell of the machine touches every
// configuration alike), and the table gives the median time with the
// fastest and slowest run and the highest peak memory.
func placement(stdout, stderr io.Writer, dir, bin string, procs []int, variants []string, refs map[string]reference, trace string, ranks int, events uint64, keep bool, repeat int) error {
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
	var configs []config
	for _, m := range procs {
		for _, v := range variants {
			configs = append(configs, newConfig(m, v, trace))
		}
	}
	counted := map[string]uint64{} // events, by trace (the default's too)
	for _, c := range append([]config{{trace: trace}}, configs...) {
		if _, ok := counted[c.trace]; !ok {
			if counted[c.trace], err = countEvents(c.trace); err != nil {
				return err
			}
		}
	}
	out := filepath.Join(dir, "placement-out")
	defer os.RemoveAll(out)
	for r := range max(repeat, 1) {
		for i := range configs {
			c := &configs[i]
			if repeat > 1 {
				fmt.Fprintf(stderr, "round %d/%d: %d processes, flags %q\n", r+1, repeat, c.procs, c.variant)
			}
			secs, rss, err := measure(stderr, c.command(bin, out))
			if err != nil {
				return fmt.Errorf("analyzing with %d processes (%s): %w", c.procs, c.variant, err)
			}
			c.seconds = append(c.seconds, secs)
			c.rssMiB = max(c.rssMiB, rss)
		}
	}
	var b strings.Builder
	b.WriteString("trace,events,processes,flags,runs,seconds,seconds_min,seconds_max,events_per_second,peak_rss_mib,time_vs_reference,memory_vs_reference\n")
	fmt.Fprintf(stdout, "%s: %d events\n%10s %-16s %10s %16s %14s %12s %10s %10s\n", trace, counted[trace], "processes", "flags", "time [s]", "runs [s]", "events/s", "peak [MiB]", "time/ref", "mem/ref")
	for _, c := range configs {
		secs, lo, hi := summarize(c.seconds)
		tr, mr := "-", "-"
		if ref, ok := refs[c.variant]; ok {
			// the reference's MB are 10^6 bytes
			tr, mr = fmt.Sprintf("%.2f", secs/ref.seconds), fmt.Sprintf("%.2f", c.rssMiB*(1<<20)/1e6/ref.mb)
		}
		runs := fmt.Sprintf("%.2f-%.2f", lo, hi)
		ne := counted[c.trace]
		fmt.Fprintf(stdout, "%10d %-16s %10.2f %16s %14.3g %12.1f %10s %10s\n", c.procs, c.variant, secs, runs, float64(ne)/secs, c.rssMiB, tr, mr)
		fmt.Fprintf(&b, "%s,%d,%d,%s,%d,%.4f,%.4f,%.4f,%.0f,%.1f,%s,%s\n", filepath.Base(c.trace), ne, c.procs, c.variant, len(c.seconds), secs, lo, hi, float64(ne)/secs, c.rssMiB, tr, mr)
	}
	csv := filepath.Join(dir, "placement.csv")
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", csv)
	return nil
}

// config is one configuration of the placement experiment and its runs.
type config struct {
	procs   int      // MPI processes, 0 for in-process
	variant string   // as given: [@TRACE] scout flags, or a subcommand and its flags
	trace   string   // the trace it analyzes
	flags   []string // the variant's flags, or its subcommand and flags
	seconds []float64
	rssMiB  float64 // the highest peak of the runs
}

// newConfig returns the configuration of procs processes (0:
// in-process) and variant v, which analyzes the trace v names (@PATH) or
// else trace.
func newConfig(procs int, v, trace string) config {
	t, flags := splitVariant(v)
	if t == "" {
		t = trace
	}
	return config{procs: procs, variant: v, trace: t, flags: flags}
}

// command returns the command that analyzes c's trace in configuration
// c with scout binary bin, writing its outputs into out.
func (c *config) command(bin, out string) *exec.Cmd {
	f := c.flags
	args := append(append([]string{"-q", "-o", out}, f...), c.trace)
	if len(f) > 0 && !strings.HasPrefix(f[0], "-") {
		// a subcommand (whatif, say): its name first, no outputs
		args = append(append([]string{f[0], "-q"}, f[1:]...), c.trace)
	}
	if c.procs > 0 {
		return exec.Command("mpirun", append([]string{"--allow-run-as-root", "--oversubscribe", "-np", strconv.Itoa(c.procs), bin}, args...)...)
	}
	return exec.Command(bin, args...)
}

// splitVariant returns the trace that variant v names (@PATH first; ""
// for none) and the rest of its fields.
func splitVariant(v string) (trace string, flags []string) {
	f := strings.Fields(v)
	if len(f) > 0 && strings.HasPrefix(f[0], "@") {
		return f[0][1:], f[1:]
	}
	return "", f
}

// summarize returns the median of xs (the mean of the middle two for an
// even count), its smallest and its largest value; xs is not empty.
func summarize(xs []float64) (median, lo, hi float64) {
	s := slices.Sorted(slices.Values(xs))
	k := len(s) / 2
	median = s[k]
	if len(s)%2 == 0 {
		median = (s[k-1] + s[k]) / 2
	}
	return median, s[0], s[len(s)-1]
}
