package combine

import (
	"bufio"
	"encoding/csv"
	"io"
	"sort"
	"strconv"
)

// Cell is one non-zero value of a report.
type Cell struct {
	Metric, Callpath, Rank string
	Value                  float64
	Integer                bool
	node                   int32 // the call path's node + 1, when Callpath is not set
}

// Cells lists the report's non-zero values in the canonical order: by
// metric name, call-path name and rank (numerically).
func (r *Report) Cells() []Cell {
	var cells []Cell
	names := r.callpathKeys()
	for id, m := range r.Metrics {
		for _, res := range r.Results {
			rank := r.Placements[res.Location].Label()
			for cp, v := range res.Row(id) {
				if v != 0 {
					cells = append(cells, Cell{Metric: m.Name, Callpath: names[cp], Rank: rank, Value: v, Integer: m.Integer})
				}
			}
		}
	}
	sort.SliceStable(cells, func(i, j int) bool {
		a, b := &cells[i], &cells[j]
		if a.Metric != b.Metric {
			return a.Metric < b.Metric
		}
		if a.Callpath != b.Callpath {
			return a.Callpath < b.Callpath
		}
		return rankLess(a.Rank, b.Rank)
	})
	return cells
}

// rankLess orders rank labels "r" and "r.t" numerically.
func rankLess(a, b string) bool {
	ra, ta := splitRank(a)
	rb, tb := splitRank(b)
	if ra != rb {
		return ra < rb
	}
	return ta < tb
}

func splitRank(s string) (int, int) {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			r, _ := strconv.Atoi(s[:i])
			t, _ := strconv.Atoi(s[i+1:])
			return r, t
		}
	}
	r, _ := strconv.Atoi(s)
	return r, 0
}

// FormatValue prints a value at full precision: integers for counts, the
// shortest representation that reads back exactly otherwise.
func FormatValue(v float64, integer bool) string {
	if integer {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// WriteCSV writes the report as canonical CSV: a header
// "metric,callpath,rank,value" and one RFC 4180 row per non-zero cell;
// values are call-path exclusive.
func (r *Report) WriteCSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	cw := csv.NewWriter(bw)
	if err := cw.Write([]string{"metric", "callpath", "rank", "value"}); err != nil {
		return err
	}
	for _, c := range r.Cells() {
		if err := cw.Write([]string{c.Metric, c.Callpath, c.Rank, FormatValue(c.Value, c.Integer)}); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}
