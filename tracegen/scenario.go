package tracegen

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// KindByName returns the phase kind with the given name (see Kind.String),
// also accepting the short names compute, ring, allreduce, barrier, bcast.
func KindByName(name string) (Kind, bool) {
	for k := Kind(0); k < numKinds; k++ {
		if name == k.String() {
			return k, true
		}
	}
	k, ok := map[string]Kind{"compute": Compute, "ring": Ring, "sendrecv": Ring, "allreduce": Allreduce, "nxn": Allreduce,
		"barrier": Barrier, "bcast": Bcast, "broadcast": Bcast}[name]
	return k, ok
}

// KindNames lists the phase kind names ParsePhase accepts.
func KindNames() []string {
	var names []string
	for k := Kind(0); k < numKinds; k++ {
		names = append(names, k.String())
	}
	return names
}

// DefaultScenario is the scenario `scout tracegen` writes without flags:
// 4 ranks, 3 iterations of every kind of phase, each with a wait state
// of known size.
func DefaultScenario() Scenario {
	const ms = time.Millisecond
	return Scenario{Program: "tracegen", Locations: 4, Iterations: 3, Seed: 1, Phases: []Phase{
		{Kind: Compute, Work: 2 * ms, Imbalance: ms / 2},
		{Kind: LateSender, Work: ms, Delay: 10 * ms},
		{Kind: Ring, Work: ms, Delay: 2 * ms},
		{Kind: Allreduce, Work: ms, Imbalance: ms},
		{Kind: Barrier, Work: ms, Imbalance: ms},
		{Kind: Bcast, Work: ms, Delay: 4 * ms},
	}}
}

// ParsePhase parses a phase description "KIND[:key=value,...]" with keys
// work, imbalance, delay, jitter (durations such as 1ms or 250us) and
// name (the phase's region name), e.g. "late_sender:work=1ms,delay=10ms".
func ParsePhase(s string) (Phase, error) {
	kind, rest, _ := strings.Cut(strings.TrimSpace(s), ":")
	k, ok := KindByName(strings.TrimSpace(kind))
	if !ok {
		return Phase{}, fmt.Errorf("unknown phase kind %q (known: %s)", kind, strings.Join(KindNames(), ", "))
	}
	p := Phase{Kind: k, Work: time.Millisecond}
	if strings.TrimSpace(rest) == "" {
		return p, nil
	}
	for _, kv := range strings.FieldsFunc(rest, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		key, val, ok := strings.Cut(kv, "=")
		if !ok {
			return Phase{}, fmt.Errorf("phase %q: %q is not key=value", s, kv)
		}
		if key == "name" {
			if val == "" || strings.ContainsAny(val, "/,") {
				return Phase{}, fmt.Errorf("phase %q: bad region name %q", s, val)
			}
			p.Name = val
			continue
		}
		d, err := time.ParseDuration(val)
		if err != nil {
			return Phase{}, fmt.Errorf("phase %q: %s: %v", s, key, err)
		}
		if d < 0 {
			return Phase{}, fmt.Errorf("phase %q: %s is negative", s, key)
		}
		switch key {
		case "work":
			p.Work = d
		case "imbalance":
			p.Imbalance = d
		case "delay":
			p.Delay = d
		case "jitter":
			p.Jitter = d
		default:
			return Phase{}, fmt.Errorf("phase %q: unknown key %q (known: work, imbalance, delay, jitter, name)", s, key)
		}
	}
	return p, nil
}

// ParseScenario reads a scenario file: one setting per line, "#" starts
// a comment.
//
//	program   NAME
//	ranks     N
//	iterations K
//	seed      S
//	gap       DURATION
//	phase     KIND[:key=value,...]   (one line per phase, in order)
//
// name is used in error messages.
func ParseScenario(r io.Reader, name string) (Scenario, error) {
	var s Scenario
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
		}
		if len(f) < 2 {
			return s, bad("%q needs a value", f[0])
		}
		arg := strings.Join(f[1:], " ")
		var err error
		switch f[0] {
		case "program":
			s.Program = arg
		case "ranks", "locations":
			s.Locations, err = strconv.Atoi(arg)
		case "iterations":
			s.Iterations, err = strconv.Atoi(arg)
		case "seed":
			s.Seed, err = strconv.ParseUint(arg, 10, 64)
		case "gap":
			s.Gap, err = time.ParseDuration(arg)
		case "phase":
			var p Phase
			p, err = ParsePhase(arg)
			s.Phases = append(s.Phases, p)
		default:
			return s, bad("unknown setting %q (known: program, ranks, iterations, seed, gap, phase)", f[0])
		}
		if err != nil {
			return s, bad("%s: %v", f[0], err)
		}
	}
	if err := sc.Err(); err != nil {
		return s, fmt.Errorf("%s: %w", name, err)
	}
	if len(s.Phases) == 0 {
		return s, fmt.Errorf("%s: no phase lines", name)
	}
	return s, nil
}

// WriteCSV writes the closed-form results in the canonical CSV form
// (metric,callpath,rank,value; non-zero cells): time, visits and the
// wait-state metrics an analysis of the trace must report.
func (s *Summary) WriteCSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "metric,callpath,rank,value")
	row := func(metric, cp string, r int, v string) {
		if strings.ContainsAny(cp, ",\"") {
			cp = `"` + strings.ReplaceAll(cp, `"`, `""`) + `"`
		}
		fmt.Fprintf(bw, "%s,%s,%d,%s\n", metric, cp, r, v)
	}
	for _, cp := range s.Callpaths {
		for r, v := range s.Time[cp] {
			if v != 0 {
				row("time", cp, r, strconv.FormatFloat(v, 'g', 17, 64))
			}
		}
	}
	for _, cp := range s.Callpaths {
		for r, v := range s.Visits[cp] {
			if v != 0 {
				row("visits", cp, r, strconv.FormatUint(v, 10))
			}
		}
	}
	metrics := make([]string, 0, len(s.Waits))
	for m := range s.Waits {
		metrics = append(metrics, m)
	}
	sort.Strings(metrics)
	for _, m := range metrics {
		for _, cp := range s.Callpaths {
			for r, v := range s.Waits[m][cp] {
				if v != 0 && !math.IsNaN(v) {
					row(m, cp, r, strconv.FormatFloat(v, 'g', 17, 64))
				}
			}
		}
	}
	return bw.Flush()
}

// CountEvents returns the number of event records Generate would write
// for s, without writing anything.
func CountEvents(s Scenario) (uint64, error) {
	g, err := newGen(s)
	if err != nil {
		return 0, err
	}
	return g.summary().TotalEvents(), nil
}

// IterationsFor returns the number of iterations that makes s write at
// least total event records (at least 1).
func IterationsFor(s Scenario, total uint64) (int, error) {
	s.Iterations = 0
	base, err := CountEvents(s)
	if err != nil {
		return 0, err
	}
	s.Iterations = 1
	one, err := CountEvents(s)
	if err != nil {
		return 0, err
	}
	per := one - base
	if per == 0 {
		return 0, fmt.Errorf("tracegen: the scenario's phases write no events")
	}
	if total <= base+per {
		return 1, nil
	}
	it := (total - base + per - 1) / per
	if it > math.MaxInt32 {
		return 0, fmt.Errorf("tracegen: %d events need %d iterations, too many", total, it)
	}
	return int(it), nil
}
