// Command scaling runs a weak-scaling experiment: it generates synthetic
// traces with a fixed number of events per location for a range of
// location counts, analyzes each with scout, and prints a table of wall
// time, throughput and peak memory, plus an SVG plot of time against
// locations.
//
//	go run ./cmd/scaling [-o DIR] [--locations 2,4,...,64] [--events-per-location N] [--mpi]
//
// With --procs it instead measures placement: one trace (--trace, or one
// generated with --ranks and --events) analyzed under mpirun with each of
// the given numbers of analysis processes (M ≤ N ranks; M < N hosts
// several ranks per process).
//
//	go run ./cmd/scaling --procs 1,2,4 [--trace DIR | --ranks N --events E] [--variant FLAGS ...] [--repeat N]
//
// (--procs 0 runs in-process; each --variant is a set of scout flags,
// e.g. --variant "" --variant --single-pass compares the full analysis
// with the wait states alone.)
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"scout/localtrace/otf2"
)

type point struct {
	locations int
	events    uint64
	seconds   float64
	rssMiB    float64
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "scaling: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("scaling", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.StringP("output", "o", "scaling", "write traces, table and plot into `DIR`")
	locs := fs.String("locations", "2,4,8,16,32,64", "comma-separated location counts")
	perLoc := fs.Uint64("events-per-location", 250_000, "events per location (weak scaling)")
	scout := fs.String("scout", "", "scout binary (default: build it into DIR)")
	useMPI := fs.Bool("mpi", false, "run the MPI version under mpirun with one process per location")
	keep := fs.Bool("keep", false, "keep the generated traces")
	procs := fs.String("procs", "", "placement experiment: comma-separated numbers of MPI processes (0: in-process, without mpirun)")
	variants := fs.StringArray("variant", nil, "placement experiment: run with these scout flags too (repeatable; \"\" for none; default: none)")
	trace := fs.String("trace", "", "placement experiment: the trace to analyze (default: generate one)")
	ranks := fs.Int("ranks", 8, "placement experiment: ranks of the generated trace")
	events := fs.Uint64("events", 20_000_000, "placement experiment: events of the generated trace")
	repeat := fs.Int("repeat", 1, "placement experiment: run every configuration `N` times, in rounds, and report the median time and the range")
	refs := fs.StringArray("reference", nil, "placement experiment: `FLAGS=SECONDS,MB`, another analyzer's time and peak memory per process for the variant FLAGS (repeatable): print ours as ratios of it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *procs != "" {
		ms, err := parseCounts("--procs", *procs, 0)
		if err != nil {
			return err
		}
		vs := *variants
		if len(vs) == 0 {
			vs = []string{""}
		}
		ref, err := parseReferences(*refs)
		if err != nil {
			return err
		}
		if *repeat < 1 {
			return fmt.Errorf("--repeat %d: at least 1", *repeat)
		}
		return placement(stdout, stderr, *out, *scout, ms, vs, ref, *trace, *ranks, *events, *keep, *repeat)
	}
	counts, err := parseCounts("--locations", *locs, 2)
	if err != nil {
		return err
	}
	bin, err := buildScout(stderr, *out, *scout, *useMPI)
	if err != nil {
		return err
	}
	var pts []point
	fmt.Fprintf(stdout, "%10s %12s %10s %14s %16s %12s\n", "locations", "events", "time [s]", "events/s", "events/s/loc", "peak [MiB]")
	for _, n := range counts {
		trace := filepath.Join(*out, fmt.Sprintf("trace-%d", n))
		if err := generate(stderr, bin, trace, n, *perLoc*uint64(n)); err != nil {
			return fmt.Errorf("generating %d locations: %w", n, err)
		}
		events, err := countEvents(trace)
		if err != nil {
			return err
		}
		var cmd *exec.Cmd
		if *useMPI {
			cmd = exec.Command("mpirun", "--allow-run-as-root", "--oversubscribe", "-np", strconv.Itoa(n), bin, "-q", "-o", trace, trace)
		} else {
			cmd = exec.Command(bin, "-q", "-o", trace, trace)
		}
		p := point{locations: n, events: events}
		if p.seconds, p.rssMiB, err = measure(stderr, cmd); err != nil {
			return fmt.Errorf("analyzing %d locations: %w", n, err)
		}
		pts = append(pts, p)
		fmt.Fprintf(stdout, "%10d %12d %10.2f %14.3g %16.3g %12.1f\n", n, events, p.seconds, float64(events)/p.seconds,
			float64(events)/p.seconds/float64(n), p.rssMiB)
		if !*keep {
			os.RemoveAll(trace)
		}
	}
	if err := writeTable(filepath.Join(*out, "scaling.csv"), pts); err != nil {
		return err
	}
	svg, per := filepath.Join(*out, "scaling.svg"), filepath.Join(*out, "per-event.svg")
	if err := os.WriteFile(svg, plot(pts, *useMPI), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(per, plotPerEvent(pts, *useMPI), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s, %s and %s\n", filepath.Join(*out, "scaling.csv"), svg, per)
	return nil
}

// reference is another analyzer's wall time and peak memory per
// process for one variant.
type reference struct{ seconds, mb float64 }

// parseReferences parses --reference values FLAGS=SECONDS,MB by variant.
func parseReferences(list []string) (map[string]reference, error) {
	out := map[string]reference{}
	for _, v := range list {
		k := strings.LastIndex(v, "=")
		var r reference
		if k >= 0 {
			if _, err := fmt.Sscanf(v[k+1:], "%g,%g", &r.seconds, &r.mb); err != nil || r.seconds <= 0 || r.mb <= 0 {
				k = -1
			}
		}
		if k < 0 {
			return nil, fmt.Errorf("--reference %q: want FLAGS=SECONDS,MB with positive numbers", v)
		}
		out[v[:k]] = r
	}
	return out, nil
}

// parseCounts parses a comma-separated list of integers ≥ least.
func parseCounts(flag, list string, least int) ([]int, error) {
	var counts []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < least {
			return nil, fmt.Errorf("%s: bad count %q (need integers ≥ %d)", flag, f, least)
		}
		counts = append(counts, n)
	}
	return counts, nil
}

// buildScout returns bin, or builds scout (the MPI version if mpi) into
// dir when bin is empty.
func buildScout(stderr io.Writer, dir, bin string, mpi bool) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if bin != "" {
		return bin, nil
	}
	bin = filepath.Join(dir, "scout")
	build := exec.Command("go", "build", "-o", bin, "./cmd/scout")
	if mpi {
		build = exec.Command("go", "build", "-tags", "mpi", "-o", bin, "./cmd/scout")
	}
	build.Stderr = stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building scout: %w", err)
	}
	return bin, nil
}

// generate writes the experiments' synthetic trace of ranks locations and
// about events events into dir: computation with imbalance and jitter, a
// ring exchange, a late sender, an allreduce and a barrier.
func generate(stderr io.Writer, bin, dir string, ranks int, events uint64) error {
	gen := exec.Command(bin, "tracegen", "-q", "--force", "-o", dir, "--ranks", strconv.Itoa(ranks),
		"--events", strconv.FormatUint(events, 10), "--seed", "1",
		"--phase", "compute:imbalance=10us,jitter=50us", "--phase", "ring:jitter=100us",
		"--phase", "late_sender:delay=20us", "--phase", "allreduce:jitter=50us", "--phase", "barrier")
	gen.Stderr = stderr
	return gen.Run()
}

// measure runs cmd and returns its wall time in seconds and the peak
// memory of its largest process in MiB (for mpirun: of its largest
// child).
func measure(stderr io.Writer, cmd *exec.Cmd) (seconds, rssMiB float64, err error) {
	cmd.Stderr = stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, err
	}
	seconds = time.Since(start).Seconds()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rssMiB = float64(ru.Maxrss) / 1024
	}
	return seconds, rssMiB, nil
}

// countEvents sums the locations' numberOfEvents of a trace.
func countEvents(trace string) (uint64, error) {
	a, err := otf2.Open(trace)
	if err != nil {
		return 0, err
	}
	defs, err := a.ReadGlobalDefs()
	if err != nil {
		return 0, err
	}
	var n uint64
	for _, l := range defs.Locations {
		n += l.NumEvents
	}
	return n, nil
}

func writeTable(path string, pts []point) error {
	var b strings.Builder
	b.WriteString("locations,events,seconds,events_per_second,peak_rss_mib\n")
	for _, p := range pts {
		fmt.Fprintf(&b, "%d,%d,%.4f,%.0f,%.1f\n", p.locations, p.events, p.seconds, float64(p.events)/p.seconds, p.rssMiB)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// plot draws wall time against locations (log2 x axis) as SVG.
func plot(pts []point, mpi bool) []byte {
	if len(pts) == 0 {
		return nil
	}
	mode := "in-process"
	if mpi {
		mode = "mpirun, one process per location"
	}
	maxT := 0.0
	for _, p := range pts {
		maxT = max(maxT, p.seconds)
	}
	return chart(pts, fmt.Sprintf("scout weak scaling (%d events per location, %s)", pts[0].events/uint64(pts[0].locations), mode),
		"wall time [s]", 1.1*maxT, []series{{"", "#1f77b4", func(p point) float64 { return p.seconds }}}, 0)
}

// plotPerEvent draws time and peak memory per event against locations,
// each relative to the smallest run's (flat: cost per event constant),
// with the line at 1.5 as SVG.
func plotPerEvent(pts []point, mpi bool) []byte {
	if len(pts) == 0 {
		return nil
	}
	mode := "in-process"
	if mpi {
		mode = "mpirun"
	}
	rel := func(v func(point) float64) func(point) float64 {
		return func(p point) float64 { return v(p) / float64(p.events) / (v(pts[0]) / float64(pts[0].events)) }
	}
	ss := []series{
		{"time per event", "#1f77b4", rel(func(p point) float64 { return p.seconds })},
		{"peak memory per event", "#d62728", rel(func(p point) float64 { return p.rssMiB })},
	}
	maxY := 2.0
	for _, s := range ss {
		for _, p := range pts {
			maxY = max(maxY, 1.1*s.v(p))
		}
	}
	return chart(pts, fmt.Sprintf("cost per event relative to %d locations (%d events per location, %s)",
		pts[0].locations, pts[0].events/uint64(pts[0].locations), mode), "relative to the smallest run", maxY, ss, 1.5)
}

// series is one line of a chart.
type series struct {
	name, color string // name "": no legend
	v           func(point) float64
}

// chart draws the series against locations (one step per point) as SVG,
// the y axis from 0 to maxY, with a dashed line at ref if not 0.
func chart(pts []point, title, ylabel string, maxY float64, ss []series, ref float64) []byte {
	right := 20.0
	for _, s := range ss {
		if s.name != "" {
			right = 150
		}
	}
	const w, h, left, top, bottom = 640.0, 400.0, 70.0, 40.0, 50.0
	x := func(i int) float64 {
		if len(pts) == 1 {
			return left + (w-left-right)/2
		}
		return left + float64(i)*(w-left-right)/float64(len(pts)-1)
	}
	y := func(v float64) float64 { return h - bottom - v/maxY*(h-top-bottom) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="20" text-anchor="middle" font-size="14">%s</text>`+"\n", w/2, title)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", left, h-bottom, w-right, h-bottom)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", left, top, left, h-bottom)
	for k := 0; k <= 4; k++ {
		v := maxY * float64(k) / 4
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%.2g</text>`+"\n", left-6, y(v)+4, v)
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#ddd"/>`+"\n", left, y(v), w-right, y(v))
	}
	if ref != 0 {
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#888" stroke-dasharray="6 4"/>`+"\n", left, y(ref), w-right, y(ref))
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" fill="#888">%g</text>`+"\n", w-right+6, y(ref)+4, ref)
	}
	for i, p := range pts {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%d</text>`+"\n", x(i), h-bottom+18, p.locations)
	}
	for k, s := range ss {
		var path strings.Builder
		for i, p := range pts {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x(i), y(s.v(p)), s.color)
			cmd := "L"
			if i == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&path, "%s%.1f,%.1f ", cmd, x(i), y(s.v(p)))
		}
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.TrimSpace(path.String()), s.color)
		if s.name != "" {
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" fill="%s">%s</text>`+"\n", w-right+6, top+20+float64(k)*18, s.color, s.name)
		}
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">locations</text>`+"\n", (left+w-right)/2, h-12)
	fmt.Fprintf(&b, `<text x="16" y="%.0f" text-anchor="middle" transform="rotate(-90 16 %.0f)">%s</text>`+"\n", (top+h-bottom)/2, (top+h-bottom)/2, ylabel)
	b.WriteString("</svg>\n")
	return []byte(b.String())
}
