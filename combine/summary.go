package combine

import (
	"fmt"
	"io"
	"sort"
	"strings"
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
// top of them, with the total time they are measured against.
func (r *Report) Summarize(top int) (total float64, states []WaitState) {
	names := make([]string, len(r.Tree.Nodes))
	for i := range names {
		names[i] = r.CallpathName(uint32(i))
	}
	for _, res := range r.Results {
		for _, v := range res.Values["time"] {
			total += v
		}
	}
	for _, m := range r.Metrics {
		if m.Unit != "sec" || m.Name == "time" {
			continue
		}
		ws := WaitState{Metric: m.Name, Display: m.Display}
		byCp := make([]float64, len(names))
		for _, res := range r.Results {
			var sum float64
			for cp, v := range res.Values[m.Name] {
				byCp[cp] += v
				sum += v
			}
			if sum > 0 {
				ws.Ranks = append(ws.Ranks, RankValue{r.Placements[res.Location].Label(), sum})
			}
			ws.Total += sum
		}
		if ws.Total <= 0 {
			continue
		}
		for cp, v := range byCp {
			if v > ws.CpValue {
				ws.Callpath, ws.CpValue = names[cp], v
			}
		}
		sort.SliceStable(ws.Ranks, func(i, j int) bool { return ws.Ranks[i].Value > ws.Ranks[j].Value })
		if total > 0 {
			ws.Share = ws.Total / total
		}
		states = append(states, ws)
	}
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
	var b strings.Builder
	fmt.Fprintf(&b, "Total time %.6g s over %d locations.\n", total, len(r.Results))
	if len(states) == 0 {
		b.WriteString("No wait states found.\n")
	} else {
		b.WriteString("Top wait states (share of total time):\n")
	}
	for _, s := range states {
		fmt.Fprintf(&b, "  %5.1f%%  %-28s %.6g s, most in %s (%.6g s)\n", 100*s.Share, s.Display, s.Total, s.Callpath, s.CpValue)
		var rs []string
		for i, rv := range s.Ranks {
			if i == 3 {
				break
			}
			rs = append(rs, fmt.Sprintf("rank %s %.0f%%", rv.Rank, 100*rv.Value/s.Total))
		}
		fmt.Fprintf(&b, "          ranks: %s\n", strings.Join(rs, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
