package combine

import (
	"bufio"
	"io"
	"math"
	"slices"
	"strconv"

	"scout/patterns"
)

// Timeline is one location's time profile (patterns.TimeProfile): the
// seconds of each activity (computation, MPI, OpenMP synchronization,
// waiting) in bins of Width seconds from the trace's time 0; bins after
// the last with activity are absent.
type Timeline struct {
	Width float64
	Bins  []patterns.Activities
}

// TimeProfile is the time profile of a report: every location's
// timeline, at one bin width.
type TimeProfile struct {
	Width float64 // seconds per bin; bin k starts at k·Width
	Bins  int     // number of bins, up to the last with activity on any location
	// Rows are the locations' bins, by result (Report.Results: by rank
	// and thread), each Bins long; nil for a location without a timeline.
	Rows [][]patterns.Activities
}

// TimeProfile returns the report's time profile, every location's
// timeline brought to the widest bin width of any (bin widths differ by
// powers of two: patterns.TimeProfile); nil when no location has one (a
// report read from a CUBE file, which does not hold it). Rows that need
// no change are the locations' own bins: read them only.
func (r *Report) TimeProfile() *TimeProfile {
	tp := &TimeProfile{Rows: make([][]patterns.Activities, len(r.Results))}
	any := false
	for _, res := range r.Results {
		if res.Timeline != nil {
			tp.Width, any = max(tp.Width, res.Timeline.Width), true
		}
	}
	if !any {
		return nil
	}
	for i, res := range r.Results {
		tl := res.Timeline
		if tl == nil {
			continue
		}
		bins := tl.Bins
		if tl.Width > 0 && tl.Width < tp.Width {
			bins = patterns.WidenBins(slices.Clone(bins), math.Round(tp.Width/tl.Width))
		}
		tp.Rows[i] = bins
		tp.Bins = max(tp.Bins, len(bins))
	}
	for i, row := range tp.Rows {
		if row != nil && len(row) < tp.Bins {
			// a copy: the location's own bins are the report's
			tp.Rows[i] = append(slices.Clip(row), make([]patterns.Activities, tp.Bins-len(row))...)
		}
	}
	return tp
}

// WriteTimeProfileCSV writes the report's time profile as CSV: the header
//
//	rank,thread,bin,start,end,computation,mpi,openmp,waiting
//
// then, for every location (by rank and thread) and every bin, the
// bin's start and end in seconds from the trace's time 0 and the seconds
// the location spent in each activity in it: computation (in regions
// neither MPI nor OpenMP synchronization), MPI and OpenMP
// synchronization without the waiting, and waiting in wait states. The
// rest of a bin the location spent outside every region (before its
// first event, a worker thread between parallel regions). A report
// without a time profile writes the header alone.
func WriteTimeProfileCSV(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("rank,thread,bin,start,end,computation,mpi,openmp,waiting\n")
	tp := r.TimeProfile()
	if tp == nil {
		return bw.Flush()
	}
	var b []byte
	for i, row := range tp.Rows {
		if row == nil {
			continue
		}
		pl := r.Placements[r.Results[i].Location]
		for k, bin := range row {
			b = strconv.AppendInt(b[:0], int64(pl.Rank), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(pl.Thread), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(k), 10)
			b = append(b, ',')
			b = strconv.AppendFloat(b, float64(k)*tp.Width, 'g', -1, 64)
			b = append(b, ',')
			b = strconv.AppendFloat(b, float64(k+1)*tp.Width, 'g', -1, 64)
			for _, v := range bin {
				b = append(b, ',')
				b = strconv.AppendFloat(b, v, 'g', -1, 64)
			}
			b = append(b, '\n')
			bw.Write(b)
		}
	}
	return bw.Flush()
}
