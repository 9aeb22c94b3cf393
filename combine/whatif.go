package combine

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"scout/patterns"
)

// PredictionRow is one hypothesis of a what-if prediction as the table
// shows it.
type PredictionRow struct {
	Label string
	// Selected is the measured time the hypothesis changes, summed over
	// the ranks (exclusive time scaled, waits removed), s.
	Selected float64
	// Predicted is the predicted run time T′, s.
	Predicted float64
	// Gain is T − T′, s.
	Gain float64
}

// PredictionRows returns the rows of the report's prediction: the given
// hypotheses under labels, in order, then the ranking's candidates (call
// paths, then the removal of each wait class that waited at all), by
// gain; with ranked, all rows by gain.
func (r *Report) PredictionRows(labels []string, ranked bool) []PredictionRow {
	p := r.Prediction
	if p == nil {
		return nil
	}
	T := p.T()
	row := func(label string, k int) PredictionRow {
		return PredictionRow{Label: label, Selected: p.Selected[k], Predicted: p.Predicted(k), Gain: T - p.Predicted(k)}
	}
	var out []PredictionRow
	for k, l := range labels {
		out = append(out, row(l, k))
	}
	var cands []PredictionRow
	k := len(labels)
	for _, g := range p.Candidates {
		cands = append(cands, row(r.CallpathName(g), k))
		k++
	}
	for i, w := range patterns.WaitClasses() {
		if k < len(p.Ends) && p.Waits[i] > 0 {
			cands = append(cands, row("no "+w.String(), k))
		}
		k++
	}
	byGain := func(rs []PredictionRow) {
		slices.SortStableFunc(rs, func(a, b PredictionRow) int { return cmp.Compare(b.Gain, a.Gain) })
	}
	byGain(cands)
	out = append(out, cands...)
	if ranked {
		byGain(out)
	}
	return out
}

// WritePrediction writes the what-if prediction as a table: the measured
// run time, then each hypothesis (labels, then the ranked candidates;
// with ranked, all by gain) with the time it changes, the predicted run
// time and the gain.
func (r *Report) WritePrediction(w io.Writer, labels []string, ranked bool) error {
	p := r.Prediction
	if p == nil {
		return fmt.Errorf("the report has no what-if prediction")
	}
	T := p.T()
	fmt.Fprintf(w, "measured run time T = %.6f s (%d events)\n\n", T, p.Events)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "changed (s)\tpredicted T' (s)\tgain (s)\tgain\t  \thypothesis\t\n")
	for _, row := range r.PredictionRows(labels, ranked) {
		pc := 0.0
		if T > 0 {
			pc = 100 * row.Gain / T
		}
		fmt.Fprintf(tw, "%.6f\t%.6f\t%.6f\t%.1f %%\t  \t%s\t\n", row.Selected, row.Predicted, row.Gain, pc, row.Label)
	}
	return tw.Flush()
}

// DelaySource is a call path on a rank whose delay made others wait.
type DelaySource struct {
	Callpath uint32
	Rank     int
	// Cost is its delay costs, short- and long-term, of MPI wait states, s.
	Cost float64
}

// DelaySources returns the n call paths on ranks with the largest delay
// costs, largest first (none when the report has no root causes).
func (r *Report) DelaySources(n int) []DelaySource {
	type key struct {
		cp   uint32
		rank int
	}
	// the delay costs of MPI wait states, short- and long-term
	mpi := map[string]bool{}
	for _, d := range delayKinds {
		if d.mpi {
			mpi[d.short], mpi[d.long] = true, true
		}
	}
	var metrics []int
	for id, m := range r.Metrics {
		if mpi[m.Name] {
			metrics = append(metrics, id)
		}
	}
	byKey := map[key]float64{}
	for i := range r.Results {
		res := &r.Results[i]
		rank := r.Placements[res.Location].Rank
		for _, m := range metrics {
			for cp, v := range res.Row(m) {
				if v > 0 {
					byKey[key{uint32(cp), rank}] += v
				}
			}
		}
	}
	var out []DelaySource
	for k, v := range byKey {
		out = append(out, DelaySource{k.cp, k.rank, v})
	}
	slices.SortFunc(out, func(a, b DelaySource) int {
		return cmp.Or(cmp.Compare(b.Cost, a.Cost), cmp.Compare(a.Callpath, b.Callpath), cmp.Compare(a.Rank, b.Rank))
	})
	return out[:min(n, len(out))]
}
