package combine

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"scout/patterns"
)

// Summary is what the terminal summary says of a report: the total time,
// the largest wait states, their largest root causes and the critical
// path. Each list holds at most the number of entries asked for.
type Summary struct {
	Total      float64     // seconds over all locations and call paths (time)
	WaitStates []WaitState // largest first
	// RootCauses are the call paths whose delay caused the most waiting
	// (delay costs), largest first; none when the report has no delay
	// costs.
	RootCauses []RootCause
	// Path is the critical path; nil when the report has none.
	Path *CriticalPath
	// Correction is what the timestamp correction did; nil without one.
	Correction *patterns.Correction
	// Violations counts the clock-condition violations the analysis met
	// (after the correction, if any).
	Violations int
}

// WaitState is one wait-state metric's total in a summary.
type WaitState struct {
	Metric   string
	Display  string
	Total    float64 // seconds over all locations and call paths
	Share    float64 // fraction of the total time
	Callpath string  // the call path with the largest value
	CpValue  float64
	Ranks    []RankValue // most affected ranks, largest first
}

// RootCause is a call path whose delay made others wait: its delay costs
// summed over the ranks and the kinds of wait states it caused.
type RootCause struct {
	Callpath  string
	Total     float64 // ShortTerm + LongTerm
	ShortTerm float64 // waiting caused directly (delay_latesender, …)
	LongTerm  float64 // waiting caused through the wait states it caused first (…_longterm)
	Share     float64 // Total as a fraction of the total time
	Cause     string  // the kind of wait state it caused most, e.g. "Late Sender"
	Ranks     []RankValue
}

// CriticalPath is the critical path in a summary.
type CriticalPath struct {
	// Length is the sum of critical_path over all call paths and ranks.
	Length float64
	// Imbalance is the imbalance impact (critical_imbalance_impact, all
	// call paths and ranks); ImbalanceShare its fraction of the total
	// time.
	Imbalance, ImbalanceShare float64
	// Callpaths are the call paths that dominate the path, largest first.
	Callpaths []PathShare
}

// PathShare is a call path's part of the critical path.
type PathShare struct {
	Callpath string
	Value    float64     // seconds of the path in this call path
	Share    float64     // fraction of the path's length
	Ranks    []RankValue // the ranks that executed it on the path, largest first
}

// RankValue is a metric total of one rank.
type RankValue struct {
	Rank  string
	Value float64
}

// The metrics of the root causes and the critical path, by unique name.
const (
	criticalPathMetric    = "critical_path"
	imbalanceImpactMetric = "critical_imbalance_impact"
)

// delayKinds are the delay costs by kind of wait state: the short- and
// long-term metric, the kind's display name and whether it is one of
// MPI's, as the derived tree's delay_*_aggregate metrics have them.
var delayKinds = func() (ks []struct {
	short, long, display string
	mpi                  bool
}) {
	for _, m := range metricTree {
		mpi := m.Parent == "delay_p2p" || m.Parent == "delay_collective"
		if (mpi || m.Parent == "delay_omp") && len(m.terms) == 2 {
			ks = append(ks, struct {
				short, long, display string
				mpi                  bool
			}{m.terms[0], m.terms[1], m.Display, mpi})
		}
	}
	return ks
}()

// Summarize summarizes the report, with at most top entries per list.
// It names only the call paths it shows: naming all of a deep call tree
// costs the square of its depth.
func (r *Report) Summarize(top int) Summary {
	var cells []Cell
	for id, m := range r.Metrics {
		if m.Unit != "sec" {
			continue
		}
		for _, res := range r.Results {
			rank := r.Placements[res.Location].Label()
			for cp, v := range res.Row(id) {
				if v != 0 {
					cells = append(cells, Cell{Metric: m.Name, Rank: rank, Value: v, node: int32(cp) + 1})
				}
			}
		}
	}
	sum := summarizeCells(cells, r.Metrics, top, func(n int32) string { return r.CallpathName(uint32(n)) })
	sum.Correction, sum.Violations = r.Correction, r.CCV.P2P+r.CCV.Coll
	return sum
}

// Summarize summarizes cells (canonical cells of any report, by the
// metrics' unique names), with at most top entries per list. The wait
// states are the metrics in seconds among metrics other than time and
// those of the optional parts (patterns.Metric.Part); the root causes
// and the critical path come from the delay costs and the critical-path
// metrics, when the cells have them.
func Summarize(cells []Cell, metrics []patterns.Metric, top int) Summary {
	return summarizeCells(cells, metrics, top, nil)
}

// cpKey is a call path in a summary: a node of a report's tree (named
// when shown), or a name.
type cpKey struct {
	node int32 // node + 1; 0: by name
	name string
}

// tally sums a quantity by call path and by rank.
type tally struct {
	total  float64
	byCp   map[cpKey]float64
	byRank map[string]float64
}

func (t *tally) add(cp cpKey, rank string, v float64) {
	if t.byCp == nil {
		t.byCp, t.byRank = map[cpKey]float64{}, map[string]float64{}
	}
	t.total += v
	t.byCp[cp] += v
	if rank != "" {
		t.byRank[rank] += v
	}
}

// ranks returns the positive rank totals of t, largest first.
func (t *tally) ranks() []RankValue {
	var rs []RankValue
	for rank, v := range t.byRank {
		if v > 0 {
			rs = append(rs, RankValue{rank, v})
		}
	}
	sort.Slice(rs, func(a, b int) bool {
		if rs[a].Value != rs[b].Value {
			return rs[a].Value > rs[b].Value
		}
		return rankLess(rs[a].Rank, rs[b].Rank)
	})
	return rs
}

// overhead are the metrics of time computed besides the wait states: the
// management of OpenMP thread teams.
var overhead = map[string]bool{"omp_management": true, "omp_fork": true}

// summarizeCells is Summarize for cells whose call paths are either names or
// nodes of a tree (Cell.node) that name names.
func summarizeCells(cells []Cell, metrics []patterns.Metric, top int, name func(int32) string) Summary {
	cpName := func(k cpKey) string {
		if k.node > 0 {
			return name(k.node - 1)
		}
		return k.name
	}
	// largest returns the call path of m with the largest value (ties:
	// the first name).
	largest := func(m map[cpKey]float64) (best cpKey, bv float64) {
		found := false
		for cp, v := range m {
			// names only for ties at the maximum
			if !found || v > bv || (v == bv && cpName(cp) < cpName(best)) {
				best, bv, found = cp, v, true
			}
		}
		return best, bv
	}
	var s Summary
	idx := map[string]int{}
	for _, m := range metrics {
		if m.Unit == "sec" && m.Name != "time" && m.Part == 0 && !overhead[m.Name] {
			idx[m.Name] = len(s.WaitStates)
			s.WaitStates = append(s.WaitStates, WaitState{Metric: m.Name, Display: m.Display})
		}
	}
	kind := map[string]int{} // delay metric → kind, long-term ones negative (−kind − 1)
	for k, d := range delayKinds {
		kind[d.short], kind[d.long] = k, -k-1
	}
	waits := make([]tally, len(s.WaitStates))
	var short, long tally
	byKind := make([]tally, len(delayKinds)) // delay by kind, for the cause of each call path
	var path, imbalance tally
	pathRanks := map[cpKey]*tally{}
	for _, c := range cells {
		cp := cpKey{c.node, c.Callpath}
		if c.Metric == "time" {
			s.Total += c.Value
			continue
		}
		if i, ok := idx[c.Metric]; ok {
			waits[i].add(cp, c.Rank, c.Value)
			continue
		}
		if k, ok := kind[c.Metric]; ok {
			if k >= 0 {
				short.add(cp, c.Rank, c.Value)
			} else {
				k = -k - 1
				long.add(cp, c.Rank, c.Value)
			}
			byKind[k].add(cp, "", c.Value)
			continue
		}
		switch c.Metric {
		case criticalPathMetric:
			path.add(cp, c.Rank, c.Value)
			if pathRanks[cp] == nil {
				pathRanks[cp] = &tally{}
			}
			pathRanks[cp].add(cp, c.Rank, c.Value)
		case imbalanceImpactMetric:
			imbalance.add(cp, c.Rank, c.Value)
		}
	}
	share := func(v float64) float64 {
		if s.Total > 0 {
			return v / s.Total
		}
		return 0
	}

	// wait states
	out := s.WaitStates[:0]
	for i, ws := range s.WaitStates {
		if waits[i].total <= 0 {
			continue
		}
		ws.Total = waits[i].total
		var best cpKey
		best, ws.CpValue = largest(waits[i].byCp)
		ws.Callpath = cpName(best)
		ws.Ranks = waits[i].ranks()
		ws.Share = share(ws.Total)
		out = append(out, ws)
	}
	s.WaitStates = out
	sort.SliceStable(s.WaitStates, func(i, j int) bool { return s.WaitStates[i].Total > s.WaitStates[j].Total })
	s.WaitStates = s.WaitStates[:min(len(s.WaitStates), top)]

	// root causes: the call paths by delay costs, short- and long-term
	delays := map[cpKey]float64{}
	for cp, v := range short.byCp {
		delays[cp] += v
	}
	for cp, v := range long.byCp {
		delays[cp] += v
	}
	for len(s.RootCauses) < top && len(delays) > 0 {
		cp, v := largest(delays)
		delete(delays, cp)
		if !(v > 0) {
			break
		}
		rc := RootCause{Callpath: cpName(cp), Total: v, ShortTerm: short.byCp[cp], LongTerm: long.byCp[cp], Share: share(v)}
		var most float64
		for k := range byKind {
			if x := byKind[k].byCp[cp]; x > most {
				rc.Cause, most = delayKinds[k].display, x
			}
		}
		// the ranks: this call path's delay costs by rank
		var t tally
		for _, c := range cells {
			if _, ok := kind[c.Metric]; ok && (cpKey{c.node, c.Callpath}) == cp {
				t.add(cp, c.Rank, c.Value)
			}
		}
		rc.Ranks = t.ranks()
		s.RootCauses = append(s.RootCauses, rc)
	}

	// the critical path: its length and the call paths that dominate it
	if path.byCp != nil {
		p := &CriticalPath{Length: path.total, Imbalance: imbalance.total, ImbalanceShare: share(imbalance.total)}
		rest := map[cpKey]float64{}
		for cp, v := range path.byCp {
			rest[cp] = v
		}
		for len(p.Callpaths) < top && len(rest) > 0 {
			cp, v := largest(rest)
			delete(rest, cp)
			if !(v > 0) {
				break
			}
			ps := PathShare{Callpath: cpName(cp), Value: v, Ranks: pathRanks[cp].ranks()}
			if p.Length > 0 {
				ps.Share = v / p.Length
			}
			p.Callpaths = append(p.Callpaths, ps)
		}
		s.Path = p
	}
	return s
}

// WriteSummary prints a short text summary of the report's wait states,
// root causes and critical path for people without a report browser.
func (r *Report) WriteSummary(w io.Writer, top int) error {
	return writeSummary(w, r.Summarize(top), len(r.Results), top)
}

// WriteSummary prints a short text summary of the wait states, root
// causes and critical path among cells, a report of nloc locations.
func WriteSummary(w io.Writer, cells []Cell, metrics []patterns.Metric, nloc, top int) error {
	return writeSummary(w, Summarize(cells, metrics, top), nloc, top)
}

func writeSummary(w io.Writer, s Summary, nloc, top int) error {
	var b strings.Builder
	if c := s.Correction; c != nil {
		b.WriteString(CorrectionLine(c, s.Violations) + "\n")
	}
	fmt.Fprintf(&b, "Total time %.6g s over %d locations.\n", s.Total, nloc)
	if top == 0 { // only the total asked for
		_, err := io.WriteString(w, b.String())
		return err
	}
	ranks := func(rs []RankValue, total float64) {
		var out []string
		for i, rv := range rs {
			if i == 3 {
				break
			}
			out = append(out, fmt.Sprintf("%s %s", rankName(rv.Rank), percent(100*rv.Value/total)))
		}
		fmt.Fprintf(&b, "          ranks: %s", strings.Join(out, ", "))
		if nloc > manyRanks {
			b.WriteString("; " + spread(rs, nloc))
		}
		b.WriteByte('\n')
	}
	if len(s.WaitStates) == 0 {
		b.WriteString("No wait states found.\n")
	} else {
		b.WriteString("Top wait states (share of total time):\n")
	}
	for _, ws := range s.WaitStates {
		fmt.Fprintf(&b, "  %5.1f%%  %-28s %.6g s, most in %s (%.6g s)\n", 100*ws.Share, ws.Display, ws.Total, ws.Callpath, ws.CpValue)
		ranks(ws.Ranks, ws.Total)
	}
	if len(s.RootCauses) > 0 {
		b.WriteString("Top root causes (delay that made others wait, share of total time):\n")
	}
	for _, rc := range s.RootCauses {
		fmt.Fprintf(&b, "  %5.1f%%  %s  %.6g s (short-term %.6g s, long-term %.6g s), causing mostly %s\n",
			100*rc.Share, rc.Callpath, rc.Total, rc.ShortTerm, rc.LongTerm, rc.Cause)
		ranks(rc.Ranks, rc.Total)
	}
	if p := s.Path; p != nil {
		fmt.Fprintf(&b, "Critical path %.6g s, imbalance impact %.6g s (%.1f%% of total time); on the path (share of its length):\n",
			p.Length, p.Imbalance, 100*p.ImbalanceShare)
		for _, ps := range p.Callpaths {
			fmt.Fprintf(&b, "  %5.1f%%  %s  %.6g s\n", 100*ps.Share, ps.Callpath, ps.Value)
			ranks(ps.Ranks, ps.Value)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCorrection prints the statistics of the timestamp correction as
// the reference analyzer does (nothing without a correction).
func (r *Report) WriteCorrection(w io.Writer) error {
	if r.Correction == nil {
		return nil
	}
	return WriteCorrection(w, r.Correction, r.CCV.P2P+r.CCV.Coll)
}

// CorrectionLine says in one line what correction c did; remaining is
// the number of clock-condition violations the analysis met afterwards
// (negative: unknown).
func CorrectionLine(c *patterns.Correction, remaining int) string {
	s := fmt.Sprintf("Timestamps corrected: %d receives came too early (%d point-to-point, %d collective); %d of %d events moved, by at most %.3g s",
		c.Violated, c.P2P, c.Coll, c.Moved, c.Events, c.MaxShift)
	if remaining >= 0 {
		s += fmt.Sprintf("; %d clock-condition violations remain", remaining)
	}
	return s + "."
}

// WriteCorrection prints the statistics of correction c as the reference
// analyzer does, and how many events moved; remaining is as for
// CorrectionLine.
func WriteCorrection(w io.Writer, c *patterns.Correction, remaining int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Timestamp correction (controlled logical clock):\n")
	fmt.Fprintf(&b, "\t# passes        : %d\n", c.Passes)
	fmt.Fprintf(&b, "\t# violated      : %d\n", c.Violated)
	if c.Violated > 0 {
		fmt.Fprintf(&b, "\t# corrected     : %d\n", c.Corrected)
		fmt.Fprintf(&b, "\t# reversed-p2p  : %d\n", c.P2P)
		fmt.Fprintf(&b, "\t# reversed-coll : %d\n", c.Coll)
		fmt.Fprintf(&b, "\t# reversed-omp  : %d\n", 0)
		fmt.Fprintf(&b, "\t# events        : %d\n", c.Events)
		fmt.Fprintf(&b, "\tmax. error      : %.6f [s]\n", c.MaxError)
		fmt.Fprintf(&b, "\terror at final. : %.6f [%%]\n", 100*c.FinalError)
		fmt.Fprintf(&b, "\tMax slope       : %.9f\n", c.MaxSlope)
	}
	fmt.Fprintf(&b, "\tevents moved    : %d (largest shift %.6f [s])\n", c.Moved, c.MaxShift)
	if remaining >= 0 {
		fmt.Fprintf(&b, "\tremaining       : %d clock-condition violations\n", remaining)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// manyRanks is the number of locations beyond which the summary gives
// the distribution of a value over the locations, not only the largest.
const manyRanks = 8

// spread describes how values rs (the positive ones, largest first) are
// spread over n locations (the others have none): the median and the
// largest value per location, and how many locations are above the mean.
func spread(rs []RankValue, n int) string {
	if len(rs) == 0 || n == 0 {
		return ""
	}
	sum := 0.0
	for _, rv := range rs {
		sum += rv.Value
	}
	mean := sum / float64(n)
	above := 0
	for _, rv := range rs {
		if rv.Value > mean {
			above++
		}
	}
	// rs is sorted largest first; the locations without a value are 0
	at := func(k int) float64 { // the k-th smallest of the n values
		if i := n - 1 - k; i < len(rs) {
			return rs[i].Value
		}
		return 0
	}
	median := at(n / 2)
	if n%2 == 0 {
		median = (at(n/2-1) + at(n/2)) / 2
	}
	return fmt.Sprintf("over %d locations: median %.3g s, max %.3g s, %d above the mean (%.3g s)", n, median, rs[0].Value, above, mean)
}

// rankName names a location by its label ("r", or "r.t" for thread t of
// rank r): "rank r", "rank r thread t".
func rankName(label string) string {
	if r, t, ok := strings.Cut(label, "."); ok {
		return "rank " + r + " thread " + t
	}
	return "rank " + label
}

// percent formats a share for the summary: whole percents, or two
// significant digits below 1% (with a thousand ranks each holds ~0.1%).
func percent(p float64) string {
	if p >= 1 || p == 0 {
		return fmt.Sprintf("%.0f%%", p)
	}
	return fmt.Sprintf("%.2g%%", p)
}
