package combine

import (
	"bytes"
	"encoding/base64"
	"testing"

	"github.com/google/go-cmp/cmp"

	"scout/localtrace"
	"scout/patterns"
)

// profileReport is a report of three locations: rank 0 with bins of
// 1 s, rank 1 with bins of 2 s, and a thread of rank 1 without a
// timeline.
func profileReport() *Report {
	return &Report{
		Placements: map[uint64]localtrace.Placement{10: {Rank: 0}, 11: {Rank: 1}, 12: {Rank: 1, Thread: 1}},
		Results: []Result{
			{Location: 10, Timeline: &Timeline{Width: 1, Bins: []patterns.Activities{{1}, {0.5, 0.5}, {0, 0, 0, 1}}}},
			{Location: 11, Timeline: &Timeline{Width: 2, Bins: []patterns.Activities{{0, 2}}}},
			{Location: 12},
		},
	}
}

// TestReportTimeProfile brings the timelines to the widest bins and to
// one length; a report without timelines has no profile.
func TestReportTimeProfile(t *testing.T) {
	r := profileReport()
	got := r.TimeProfile()
	want := &TimeProfile{Width: 2, Bins: 2, Rows: [][]patterns.Activities{
		{{1.5, 0.5}, {0, 0, 0, 1}},
		{{0, 2}, {}},
		nil,
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// the report's own timelines are left as they were
	if w := (Timeline{Width: 1, Bins: []patterns.Activities{{1}, {0.5, 0.5}, {0, 0, 0, 1}}}); !cmp.Equal(w, *r.Results[0].Timeline) {
		t.Errorf("TimeProfile changed a location's timeline: %v", *r.Results[0].Timeline)
	}
	if tp := (&Report{Results: []Result{{Location: 1}}}).TimeProfile(); tp != nil {
		t.Errorf("a report without timelines: %+v", tp)
	}
}

func TestWriteTimeProfileCSV(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTimeProfileCSV(&b, profileReport()); err != nil {
		t.Fatal(err)
	}
	want := `rank,thread,bin,start,end,computation,mpi,openmp,waiting
0,0,0,0,2,1.5,0.5,0,0
0,0,1,2,4,0,0,0,1
1,0,0,0,2,0,2,0,0
1,0,1,2,4,0,0,0,0
`
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	b.Reset()
	if err := WriteTimeProfileCSV(&b, &Report{}); err != nil || b.String() != "rank,thread,bin,start,end,computation,mpi,openmp,waiting\n" {
		t.Errorf("without a profile: %q, %v", b.String(), err)
	}
}

// TestProfileData checks the page's profile: totals over all locations,
// shares in 1/255ths, and rows of consecutive locations beyond
// maxProfileRows.
func TestProfileData(t *testing.T) {
	type page struct {
		Group, Locations int
		Rows             []string
		Sizes            []int
		Shares           []byte
	}
	layout := func(n int) (*jsProfile, page) {
		tp := &TimeProfile{Width: 1, Bins: 1}
		labels := make([]string, n)
		for i := range n {
			tp.Rows = append(tp.Rows, []patterns.Activities{{0.5, float64(i % 2)}})
			labels[i] = localtrace.Placement{Rank: i}.Label()
		}
		p := profileData(tp, labels)
		sh, err := base64.StdEncoding.DecodeString(p.Shares)
		if err != nil {
			t.Fatal(err)
		}
		return p, page{p.Group, p.Locations, p.Rows, p.Sizes, sh}
	}
	p, got := layout(2)
	want := page{1, 2, []string{"0", "1"}, []int{1, 1}, []byte{128, 0, 0, 0, 128, 255, 0, 0}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("2 locations (-want +got):\n%s", d)
	}
	if d := cmp.Diff(b64f64([]float64{1, 1, 0, 0}), p.Totals); d != "" {
		t.Errorf("totals (-want +got):\n%s", d)
	}
	// 300 locations: rows of 3, the shares their means
	p, got = layout(300)
	if got.Group != 3 || len(got.Rows) != 100 || got.Rows[1] != "3–5" || got.Sizes[99] != 3 || p.note() == "" {
		t.Errorf("300 locations: group %d, %d rows (the second %q), last of %d locations, note %q", got.Group, len(got.Rows), got.Rows[1], got.Sizes[99], p.note())
	}
	// the second row: locations 3, 4, 5 with MPI 1, 0, 1: 2/3
	if s := got.Shares[4:8]; !cmp.Equal(s, []byte{128, 170, 0, 0}) {
		t.Errorf("300 locations: shares of the second row %v", s)
	}
	if profileData(nil, nil) != nil {
		t.Error("a profile without a report's")
	}
}
