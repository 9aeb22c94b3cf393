package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"scout/analysis"

	"scout/combine"
	"scout/cube"
	"scout/localtrace/otf2"
	"scout/patterns"
)

// errUsage marks a command-line mistake (exit status 2).
var errUsage = errors.New("usage")

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }
func (e usageError) Unwrap() error { return errUsage }

func exitCode(err error) int {
	if errors.Is(err, errUsage) {
		return 2
	}
	return 1
}

const analysisLong = `Analyzes the OTF2 trace TRACE (the anchor file traces.otf2 or the
directory holding it) of an MPI program for wait states, and writes the
report scout.cubex, the statistics trace.stat and the HTML report
scout.html (one self-contained page that any browser opens from disk;
--no-html leaves it out).

Besides the wait states, the analysis finds by default their root causes
(delay costs: which call paths on which ranks made others wait, directly
or through the wait states they caused; which wait states propagated)
and the critical path (the activities that determine the run time, and
the imbalance impact). Each needs further replays of the trace:
--no-rootcause and --no-critical-path leave one out, --single-pass both
(the wait states alone, in two replays, as fast as possible). The report
then has no metrics of the parts left out.

Clocks of different nodes (or cores) drift: a trace may show a message
received before it was sent. scout counts such clock-condition violations
and clamps the wait states near them. --time-correct first corrects the
times with the controlled logical clock (as the reference analyzer's
--time-correct does): receives move to after their sends plus 1 us, the
events before and after them follow smoothly; it prints what it moved.
`

// options are the analysis command's settings.
type options struct {
	trace  string
	outDir string
	csv    string
	quiet  bool
	jobs   int
	// skip are the parts of the analysis left out
	skip patterns.Parts
	// timeCorrect corrects the times before the analysis
	timeCorrect bool
	// verbose prints details (the correction's statistics)
	verbose bool
	// noHTML leaves out the HTML report
	noHTML bool
	// commCSV, sizesCSV: the communication matrix and the message sizes
	// as CSV ("": none)
	commCSV, sizesCSV string
	// profileCSV: the time profile as CSV ("": none)
	profileCSV string
}

// analysisCmd declares the flags of the analysis on fs and returns what
// it runs.
func analysisCmd(fs *pflag.FlagSet) func(e *cmdEnv, args []string) error {
	var o options
	fs.StringVarP(&o.outDir, "output", "o", "", "write the report (scout.cubex), statistics (trace.stat) and HTML report (scout.html) into `DIR` (default: the trace's directory)")
	fs.StringVar(&o.csv, "csv", "", "write every non-zero metric value as CSV (metric,callpath,rank,value) to `FILE` (- for stdout)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "print no progress messages")
	fs.IntVarP(&o.jobs, "jobs", "j", 0, "load and analyze at most `N` locations at once (default: number of CPUs)")
	noRC := fs.Bool("no-rootcause", false, "no root-cause analysis: no delay costs, no indirect or propagating wait states")
	noCP := fs.Bool("no-critical-path", false, "no critical-path analysis: no critical path, no performance impact")
	single := fs.Bool("single-pass", false, "wait states only (--no-rootcause --no-critical-path): no further replays")
	rc := fs.Bool("rootcause", true, "root-cause analysis, as the reference names it")
	cp := fs.Bool("critical-path", true, "critical-path analysis, as the reference names it")
	fs.BoolVar(&o.timeCorrect, "time-correct", false, "correct the timestamps (controlled logical clock) before the analysis, so that no message is received before it was sent")
	noTC := fs.Bool("no-time-correct", false, "analyze the timestamps as recorded (the default)")
	fs.BoolVarP(&o.verbose, "verbose", "v", false, "print details: the statistics of the timestamp correction")
	fs.BoolVar(&o.noHTML, "no-html", false, "do not write the HTML report scout.html")
	fs.StringVar(&o.commCSV, "comm-csv", "", "write the point-to-point communication matrix as CSV (from,to,messages,bytes,syncs) to `FILE` (- for stdout)")
	fs.StringVar(&o.sizesCSV, "sizes-csv", "", "write the message-size histogram as CSV (min_bytes,max_bytes,messages) to `FILE` (- for stdout)")
	fs.StringVar(&o.profileCSV, "profile-csv", "", "write the time profile as CSV (rank,thread,bin,start,end,computation,mpi,openmp,waiting) to `FILE` (- for stdout)")
	return func(e *cmdEnv, args []string) error {
		if len(args) != 1 {
			e.usage()
			return usageError{fmt.Sprintf("expected one trace argument, got %d", len(args))}
		}
		if err := checkJobs(o.jobs); err != nil {
			return err
		}
		for _, f := range []struct {
			on, off string
			part    patterns.Parts
			skip    bool
		}{{"rootcause", "no-rootcause", patterns.PartRootCause, *noRC || !*rc}, {"critical-path", "no-critical-path", patterns.PartCriticalPath, *noCP || !*cp}} {
			if fs.Changed(f.on) && f.skip {
				return usageError{fmt.Sprintf("--%s contradicts --%s", f.on, f.off)}
			}
			if fs.Changed(f.on) && *single {
				return usageError{fmt.Sprintf("--%s contradicts --single-pass", f.on)}
			}
			if f.skip || *single {
				o.skip |= f.part
			}
		}
		if o.timeCorrect && *noTC {
			return usageError{"--time-correct contradicts --no-time-correct"}
		}
		o.trace = args[0]
		return analyze(o, e.stdout, e.stderr)
	}
}

// checkJobs checks the value of -j/--jobs.
func checkJobs(n int) error {
	if n < 0 {
		return usageError{fmt.Sprintf("-j/--jobs %d: the number of locations at once must be 0 (all CPUs) or more", n)}
	}
	return nil
}

// analyze runs the analysis of o and writes its outputs.
func analyze(o options, stdout, stderr io.Writer) error {
	prog := newProgress(stderr, o.quiet)
	// The outputs are checked before the analysis: a destination that
	// cannot be written, or that is one of the trace's files, fails now.
	outs, files, err := analysisOutputs(o)
	if err != nil {
		return err
	}
	plan := analysis.Plan{Trace: o.trace, Jobs: o.jobs, Log: prog, Skip: o.skip, TimeCorrect: o.timeCorrect}
	var rep *combine.Report
	if underMPILauncher() {
		// Under mpirun every rank would race to unify; there the
		// archive must be unified beforehand (RunMPI says so).
		rep, err = analysis.RunMPI(context.Background(), plan)
		if err == nil && rep == nil {
			return nil // an MPI rank other than 0: rank 0 writes the outputs
		}
	} else {
		if err := unifyIfNeeded(o.trace, prog); err != nil {
			return err
		}
		rep, err = analysis.Run(context.Background(), plan)
	}
	if err != nil {
		return err
	}
	if err := writeAnalysis(outs, rep, files, stdout); err != nil {
		return err
	}
	if !o.quiet {
		rep.WriteSummary(stderr, 5)
	}
	if o.verbose {
		rep.WriteCorrection(stderr)
	}
	if files.html != "" {
		prog.Printf("wrote %s, %s and %s", files.report, files.stat, files.html)
	} else {
		prog.Printf("wrote %s and %s", files.report, files.stat)
	}
	for _, f := range []string{o.csv, o.commCSV, o.sizesCSV, o.profileCSV} {
		if f != "" && f != "-" {
			prog.Printf("wrote %s", f)
		}
	}
	return nil
}

// analysisFiles are the outputs of an analysis.
type analysisFiles struct {
	report, stat string // scout.cubex and trace.stat
	html         string // scout.html ("": not written)
	csv          string // the CSV ("": none, "-": standard output)
	comm, sizes  string // the communication matrix's and message sizes' CSV (the same)
	profile      string // the time profile's CSV (the same)
	trace        string // the trace, as the page names it
}

// analysisOutputs declares and checks the outputs of an analysis: the
// report, the statistics and the HTML report in the output directory
// (made if missing), and the CSV if asked for; the trace's files are
// inputs.
func analysisOutputs(o options) (*outputSet, analysisFiles, error) {
	dir := o.outDir
	if dir == "" {
		dir = traceDir(o.trace)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, analysisFiles{}, fmt.Errorf("creating output directory: %w", err)
	}
	s := &outputSet{}
	if a, err := otf2.Open(o.trace); err == nil { // else the analysis says why
		s.input(a.AnchorPath(), a.GlobalDefPath())
		s.inputDir(filepath.Join(a.Dir, a.Name))
	}
	f := analysisFiles{report: filepath.Join(dir, "scout.cubex"), stat: filepath.Join(dir, "trace.stat"), csv: o.csv,
		comm: o.commCSV, sizes: o.sizesCSV, profile: o.profileCSV, trace: o.trace}
	if !o.noHTML {
		f.html = filepath.Join(dir, "scout.html")
	}
	for _, p := range []string{f.report, f.stat, f.html, f.csv, f.comm, f.sizes, f.profile} {
		if p == "" {
			continue
		}
		if err := s.add(p); err != nil {
			return nil, analysisFiles{}, usageError{err.Error() + " (choose another with -o, --csv, --comm-csv, --sizes-csv or --profile-csv)"}
		}
	}
	return s, f, nil
}

// writeAnalysis writes the outputs of an analysis, all or none.
func writeAnalysis(s *outputSet, rep *combine.Report, f analysisFiles, stdout io.Writer) error {
	return s.writeAll(func() error {
		var (
			cr   *cube.Report
			page *combine.HTML
			err  error
		)
		if f.html != "" {
			cr, page, err = rep.CubeAndHTML(combine.HTMLOptions{Title: f.trace, Source: "analysis of the trace"})
		} else {
			cr, err = rep.Cube()
		}
		if err != nil {
			return fmt.Errorf("building the report: %w", err)
		}
		if err := s.writeCube(f.report, cr); err != nil {
			return fmt.Errorf("writing the report: %w (choose another directory with -o)", err)
		}
		if err := s.write(f.stat, stdout, rep.WriteStats); err != nil {
			return fmt.Errorf("writing statistics: %w (choose another directory with -o)", err)
		}
		if page != nil {
			if err := s.write(f.html, stdout, page.Write); err != nil {
				return fmt.Errorf("writing the HTML report: %w (choose another directory with -o, or --no-html)", err)
			}
		}
		if f.csv != "" {
			if err := s.write(f.csv, stdout, rep.WriteCSV); err != nil {
				return fmt.Errorf("writing CSV: %w", err)
			}
		}
		for _, c := range []struct {
			path, what string
			write      func(io.Writer, *combine.CommStats) error
		}{{f.comm, "the communication matrix", combine.WriteCommCSV}, {f.sizes, "the message sizes", combine.WriteSizeCSV}} {
			if c.path == "" {
				continue
			}
			if err := s.write(c.path, stdout, func(w io.Writer) error { return c.write(w, rep.Comm) }); err != nil {
				return fmt.Errorf("writing %s: %w", c.what, err)
			}
		}
		if f.profile != "" {
			if err := s.write(f.profile, stdout, func(w io.Writer) error { return combine.WriteTimeProfileCSV(w, rep) }); err != nil {
				return fmt.Errorf("writing the time profile: %w", err)
			}
		}
		return nil
	})
}

// traceDir is the directory holding the trace's anchor file.
func traceDir(trace string) string {
	if st, err := os.Stat(trace); err == nil && st.IsDir() {
		return trace
	}
	return filepath.Dir(trace)
}

// underMPILauncher reports whether mpirun or srun started this process
// as one of several.
func underMPILauncher() bool {
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"} {
		if n, err := strconv.Atoi(os.Getenv(v)); err == nil && n > 0 {
			return true
		}
	}
	if os.Getenv("OMPI_COMM_WORLD_RANK") != "" || os.Getenv("PMIX_RANK") != "" {
		return true
	}
	// srun sets the step's task count for the tasks it starts (a batch
	// script itself has no step task count)
	n, err := strconv.Atoi(os.Getenv("SLURM_STEP_NUM_TASKS"))
	return err == nil && n > 1
}

// Warnf prints a warning; warnings are printed even when quiet.
func (p *progress) Warnf(format string, args ...any) {
	fmt.Fprintf(p.w, "scout: warning: "+format+"\n", args...)
}

// progress prints phase messages on stderr unless quiet.
type progress struct {
	w     io.Writer
	quiet bool
}

func newProgress(w io.Writer, quiet bool) *progress { return &progress{w: w, quiet: quiet} }

// Printf prints a progress message unless quiet.
func (p *progress) Printf(format string, args ...any) {
	if p.quiet {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	fmt.Fprint(p.w, "scout: "+msg)
}
