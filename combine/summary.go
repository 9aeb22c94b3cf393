package combine

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"scout/patterns"
)

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

// RankValue is a metric total of one rank.
type RankValue struct {
	Rank  string
	Value float64
}

// Summarize lists the wait states of a report, largest first, at most
// top of them, with the total time they are measured against. It names
// only the call paths it shows: naming all of a deep call tree costs the
// square of its depth.
func (r *Report) Summarize(top int) (total float64, states []WaitState) {
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
	return summarizeCells(cells, r.Metrics, top, func(n int32) string { return r.CallpathName(uint32(n)) })
}

// Summarize lists the wait states among cells (canonical cells of any
// report), largest first, at most top of them, with the total time they
// are measured against. The wait states are the metrics in seconds of
// metrics other than time.
func Summarize(cells []Cell, metrics []patterns.Metric, top int) (total float64, states []WaitState) {
	return summarizeCells(cells, metrics, top, nil)
}

// cpKey is a call path in a summary: a node of a report's tree (named
// when shown), or a name.
type cpKey struct {
	node int32 // node + 1; 0: by name
	name string
}

// summarizeCells is Summarize for cells whose call paths are either names or
// nodes of a tree (Cell.node) that name names.
func summarizeCells(cells []Cell, metrics []patterns.Metric, top int, name func(int32) string) (total float64, states []WaitState) {
	cpName := func(k cpKey) string {
		if k.node > 0 {
			return name(k.node - 1)
		}
		return k.name
	}
	idx := map[string]int{}
	for _, m := range metrics {
		if m.Unit == "sec" && m.Name != "time" {
			idx[m.Name] = len(states)
			states = append(states, WaitState{Metric: m.Name, Display: m.Display})
		}
	}
	byCp := make([]map[cpKey]float64, len(states))
	byRank := make([]map[string]float64, len(states))
	for _, c := range cells {
		if c.Metric == "time" {
			total += c.Value
			continue
		}
		i, ok := idx[c.Metric]
		if !ok {
			continue
		}
		if byCp[i] == nil {
			byCp[i], byRank[i] = map[cpKey]float64{}, map[string]float64{}
		}
		states[i].Total += c.Value
		byCp[i][cpKey{c.node, c.Callpath}] += c.Value
		byRank[i][c.Rank] += c.Value
	}
	out := states[:0]
	for i, ws := range states {
		if ws.Total <= 0 {
			continue
		}
		var best cpKey
		found := false
		for cp, v := range byCp[i] {
			// names only for ties at the maximum
			if !found || v > ws.CpValue || (v == ws.CpValue && cpName(cp) < cpName(best)) {
				best, ws.CpValue, found = cp, v, true
			}
		}
		ws.Callpath = cpName(best)
		for rank, v := range byRank[i] {
			if v > 0 {
				ws.Ranks = append(ws.Ranks, RankValue{rank, v})
			}
		}
		sort.Slice(ws.Ranks, func(a, b int) bool {
			if ws.Ranks[a].Value != ws.Ranks[b].Value {
				return ws.Ranks[a].Value > ws.Ranks[b].Value
			}
			return rankLess(ws.Ranks[a].Rank, ws.Ranks[b].Rank)
		})
		if total > 0 {
			ws.Share = ws.Total / total
		}
		out = append(out, ws)
	}
	states = out
	sort.SliceStable(states, func(i, j int) bool { return states[i].Total > states[j].Total })
	if len(states) > top {
		states = states[:top]
	}
	return total, states
}

// WriteSummary prints a short text summary of the report's wait states
// for people without a report browser.
func (r *Report) WriteSummary(w io.Writer, top int) error {
	total, states := r.Summarize(top)
	return writeSummary(w, total, states, len(r.Results), top)
}

// WriteSummary prints a short text summary of the wait states among
// cells, a report of nloc locations.
func WriteSummary(w io.Writer, cells []Cell, metrics []patterns.Metric, nloc, top int) error {
	total, states := Summarize(cells, metrics, top)
	return writeSummary(w, total, states, nloc, top)
}

func writeSummary(w io.Writer, total float64, states []WaitState, nloc, top int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Total time %.6g s over %d locations.\n", total, nloc)
	switch {
	case top == 0: // only the total asked for
	case len(states) == 0:
		b.WriteString("No wait states found.\n")
	default:
		b.WriteString("Top wait states (share of total time):\n")
	}
	for _, s := range states {
		fmt.Fprintf(&b, "  %5.1f%%  %-28s %.6g s, most in %s (%.6g s)\n", 100*s.Share, s.Display, s.Total, s.Callpath, s.CpValue)
		var rs []string
		for i, rv := range s.Ranks {
			if i == 3 {
				break
			}
			rs = append(rs, fmt.Sprintf("rank %s %s", rv.Rank, percent(100*rv.Value/s.Total)))
		}
		fmt.Fprintf(&b, "          ranks: %s\n", strings.Join(rs, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// percent formats a share for the summary: whole percents, or two
// significant digits below 1% (with a thousand ranks each holds ~0.1%).
func percent(p float64) string {
	if p >= 1 || p == 0 {
		return fmt.Sprintf("%.0f%%", p)
	}
	return fmt.Sprintf("%.2g%%", p)
}
