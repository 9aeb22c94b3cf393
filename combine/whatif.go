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
// gain.
func (r *Report) PredictionRows(labels []string) []PredictionRow {
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
	var ranked []PredictionRow
	k := len(labels)
	for _, g := range p.Candidates {
		ranked = append(ranked, row(r.CallpathName(g), k))
		k++
	}
	for i, w := range patterns.WaitClasses() {
		if k < len(p.Ends) && p.Waits[i] > 0 {
			ranked = append(ranked, row("no "+w.String(), k))
		}
		k++
	}
	slices.SortStableFunc(ranked, func(a, b PredictionRow) int { return cmp.Compare(b.Gain, a.Gain) })
	return append(out, ranked...)
}

// WritePrediction writes the what-if prediction as a table: the measured
// run time, then each hypothesis (labels, then the ranked candidates)
// with the time it changes, the predicted run time and the gain.
func (r *Report) WritePrediction(w io.Writer, labels []string) error {
	p := r.Prediction
	if p == nil {
		return fmt.Errorf("the report has no what-if prediction")
	}
	T := p.T()
	fmt.Fprintf(w, "measured run time T = %.6f s (%d events)\n\n", T, p.Events)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "changed (s)\tpredicted T' (s)\tgain (s)\tgain\t  \thypothesis\t\n")
	for _, row := range r.PredictionRows(labels) {
		pc := 0.0
		if T > 0 {
			pc = 100 * row.Gain / T
		}
		fmt.Fprintf(tw, "%.6f\t%.6f\t%.6f\t%.1f %%\t  \t%s\t\n", row.Selected, row.Predicted, row.Gain, pc, row.Label)
	}
	return tw.Flush()
}
