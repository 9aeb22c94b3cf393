package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"scout/patterns"
	"scout/tracegen"
)

// command is an entry of scout's command table, as the go command has
// one: the name, the usage text and the flags of a command, and what it
// runs. The analysis itself is the entry without a name.
type command struct {
	name  string // "" for the analysis
	args  string // the arguments, for the usage line
	short string // what it does, in the list of commands
	// long is the text between the usage line and the flags.
	long func() string
	// flags declares the command's flags on fs and returns what the
	// command runs with the arguments left after the flags.
	flags func(fs *pflag.FlagSet) func(e *cmdEnv, args []string) error
}

// cmdEnv is what a running command gets besides its flags and arguments.
type cmdEnv struct {
	stdout, stderr io.Writer
	usage          func() // prints the usage to stderr
}

// commands is the command table: the analysis first.
var commands []*command

func init() {
	commands = []*command{
		{"", "[flags] TRACE", "analyze the OTF2 trace TRACE (anchor file or its directory)", func() string { return analysisLong }, analysisCmd},
		{"tracegen", "[flags]", "write a synthetic trace", func() string { return fmt.Sprintf(tracegenLong, tracegen.KindUsage()) }, tracegenCmd},
		{"unify", "[flags] ARCHIVE", "build global definitions of a local-definitions archive", func() string { return unifyLong }, unifyCmd},
		{"correct", "-o OUT [flags] TRACE", "write a copy of TRACE with corrected timestamps", func() string { return correctLong }, correctCmd},
		{"whatif", "[flags] TRACE", "predict the run time if activities took less time", func() string {
			return fmt.Sprintf(whatifLong, strings.Join(patterns.WaitClassNames(), ", "))
		}, whatifCmd},
		{"reduce", "-o OUT [flags] TRACE", "write a reduced copy of TRACE for what-if predictions", func() string { return reduceLong }, reduceCmd},
		{"report", "[flags] FILE.cubex", "summarize a report (--csv: all its values)", func() string { return reportLong }, reportCmd},
		{"combine", "-o OUT.cubex PART.cubex...", "merge partial reports", func() string { return combineLong }, combineCmd},
	}
}

// run runs the command of args: a subcommand named by args[0], else the
// analysis. A trace whose path equals a subcommand's name can be given
// as ./NAME.
func run(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		for _, c := range commands[1:] {
			if c.name == args[0] {
				return c.run(args[1:], stdout, stderr)
			}
		}
	}
	return commands[0].run(args, stdout, stderr)
}

// usageLine is the command's "scout NAME ARGS".
func (c *command) usageLine() string {
	return strings.Join(strings.Fields("scout "+c.name+" "+c.args), " ")
}

// usage writes the command's usage text and flags to w.
func (c *command) usage(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "Usage: %s\n", c.usageLine())
	if c.name == "" {
		for _, o := range commands[1:] {
			fmt.Fprintf(w, "       %-40s %s\n", o.usageLine(), o.short)
		}
	}
	fmt.Fprintf(w, "\n%s\n\nFlags:\n", strings.TrimSpace(c.long()))
	printDefaults(fs, w)
}

// run parses the command's flags from args (-h/--help prints the usage)
// and runs it.
func (c *command) run(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet(c.usageLine(), pflag.ContinueOnError)
	fs.SetOutput(stderr)
	do := c.flags(fs)
	help := fs.BoolP("help", "h", false, "show this help")
	fs.Usage = func() { c.usage(stderr, fs) }
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if *help {
		c.usage(stdout, fs)
		return nil
	}
	return do(&cmdEnv{stdout: stdout, stderr: stderr, usage: fs.Usage}, fs.Args())
}

// printDefaults prints the flags of fs to w as GNU tools list them: a
// boolean flag as "-q, --quiet", not "--quiet[=true|false]" (pflag's
// way of saying that it takes an optional value).
func printDefaults(fs *pflag.FlagSet, w io.Writer) {
	const opt = "[=true|false]"
	fmt.Fprint(w, strings.ReplaceAll(fs.FlagUsages(), opt, strings.Repeat(" ", len(opt))))
}
