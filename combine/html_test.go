package combine

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"scout/cube"
	"scout/internal/tracetest"
	"scout/localtrace"
	"scout/localtrace/otf2"
	"scout/patterns"
)

// The traces the HTML tests render: MPI only, the largest bundled one,
// and a hybrid one.
var htmlTraces = []string{"ps_late_sender", "ps_mixed_np8", "omp_lock_np2t2"}

func htmlTrace(t testing.TB, name string) tracetest.Trace {
	t.Helper()
	for _, tr := range tracetest.Archives(t) {
		if tr.Name == name {
			return tr
		}
	}
	t.Fatalf("no bundled trace %s", name)
	return tracetest.Trace{}
}

// pageOf writes the page and returns its bytes and its data.
func pageOf(t testing.TB, h *HTML) ([]byte, *jsData) {
	t.Helper()
	var b bytes.Buffer
	if _, err := h.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	d := &jsData{}
	if err := json.Unmarshal([]byte(h.view.Data), d); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), d
}

func decodeF64(t testing.TB, s string) []float64 {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%8 != 0 {
		t.Fatalf("bad f64 array %.20q: %v", s, err)
	}
	v := make([]float64, len(b)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}

func decodeU32(t testing.TB, s string) []uint32 {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 {
		t.Fatalf("bad u32 array %.20q: %v", s, err)
	}
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

// pageKeys returns the call-path keys of the page's call tree.
func pageKeys(d *jsData) []string {
	keys := make([]string, len(d.Callpaths.Parent))
	for c, p := range d.Callpaths.Parent {
		e, ok := d.Callpaths.Key[c]
		if !ok {
			e = d.Callpaths.Name[c]
		}
		if p >= 0 {
			e = keys[p] + "/" + e
		}
		keys[c] = e
	}
	return keys
}

// pageSums returns metric m's call-path exclusive sums over the
// locations, by call path of the page.
func pageSums(t testing.TB, d *jsData, m jsMetric) []float64 {
	t.Helper()
	out := make([]float64, len(d.Callpaths.Parent))
	if m.Sums == "" {
		return out
	}
	v := decodeF64(t, m.Sums)
	if m.Index == "" {
		copy(out, v)
		return out
	}
	for i, c := range decodeU32(t, m.Index) {
		out[c] = v[i]
	}
	return out
}

// external matches what would make a page load something: elements
// with a source or a link, CSS imports and URLs.
var external = regexp.MustCompile(`(?i)<(script|img|link|iframe|object|embed|audio|video|source)\b[^>]*\b(src|href|data)\s*=|<style>[^<]*(@import|url\()`)

// TestHTMLReport renders the pages of reference traces and checks that
// they are self-contained and that their numbers are the report's: the
// headline is the summary, every metric's sums and every per-location
// row are the derived tree's values.
func TestHTMLReport(t *testing.T) {
	for _, name := range htmlTraces {
		t.Run(name, func(t *testing.T) {
			rep := reportFromCSV(t, htmlTrace(t, name))
			prof := rep.Profile()
			der := Derive(prof)
			page, d := pageOf(t, rep.HTML(HTMLOptions{Title: name}))
			if loc := external.FindIndex(page); loc != nil {
				t.Errorf("the page loads something: %q", page[loc[0]:min(len(page), loc[1]+40)])
			}
			if len(page) > DefaultHTMLSize {
				t.Errorf("page of %d bytes, more than %d", len(page), DefaultHTMLSize)
			}
			for _, want := range []string{"<!DOCTYPE html>", `id="scout-data"`, "Chart.js v4.6.1", "chartjs-chart-matrix v3.1.0", "Permission is hereby granted"} {
				if !bytes.Contains(page, []byte(want)) {
					t.Errorf("the page lacks %q", want)
				}
			}
			if n := bytes.Count(page, []byte("</script>")); n != 4 {
				t.Errorf("%d </script> tags, want 4 (data, Chart.js, matrix, app)", n)
			}

			// The headline is the summary.
			sum := rep.Summarize(5)
			h := rep.HTML(HTMLOptions{}).view
			if len(h.WaitStates) != len(sum.WaitStates) {
				t.Fatalf("%d wait states in the headline, want %d", len(h.WaitStates), len(sum.WaitStates))
			}
			for i, ws := range sum.WaitStates {
				got := h.WaitStates[i]
				if got.Metric != ws.Metric || got.Value != FormatValue(ws.Total, false) || got.Callpath != ws.Callpath ||
					got.Share != fmt.Sprintf("%.1f%%", 100*ws.Share) {
					t.Errorf("wait state %d: %+v, want %+v", i, got, ws)
				}
			}
			if d.SummaryTotal != sum.Total || h.TotalValue != FormatValue(sum.Total, false) {
				t.Errorf("total %v (%s), want %v", d.SummaryTotal, h.TotalValue, sum.Total)
			}

			// The data are the derived tree's values.
			keys := pageKeys(d)
			cpOf := map[string]int{}
			for c, k := range keys {
				cpOf[k] = c
			}
			names := prof.CallpathNames()
			if len(keys) != len(names) {
				t.Fatalf("%d call paths in the page, %d in the report", len(keys), len(names))
			}
			if len(d.Metrics) != len(der.Metrics) {
				t.Fatalf("%d metrics in the page, %d in the derived tree", len(d.Metrics), len(der.Metrics))
			}
			rows := map[[2]int][]float64{}
			for _, r := range d.Rows {
				if r.Incl {
					t.Errorf("an inclusive row in a page that holds all rows")
				}
				rows[[2]int{r.Metric, r.Callpath}] = decodeF64(t, r.Values)
			}
			for mi, md := range der.Metrics {
				jm := d.Metrics[mi]
				if jm.Unique != md.Unique || jm.Display != md.Display || jm.Unit != md.Unit || !jm.Complete {
					t.Errorf("metric %d: %+v, want %s (%s, %s), complete", mi, jm, md.Unique, md.Display, md.Unit)
				}
				if p := jm.Parent; (p < 0) != (md.Parent == "") || p >= 0 && d.Metrics[p].Unique != md.Parent {
					t.Errorf("metric %s: parent %d, want %q", md.Unique, p, md.Parent)
				}
				sums := pageSums(t, d, jm)
				for cp, row := range der.Values[md.Unique] {
					c, ok := cpOf[names[cp]]
					if !ok {
						t.Fatalf("call path %s is not in the page", names[cp])
					}
					var s float64
					for _, x := range row {
						s += x
					}
					if sums[c] != s {
						t.Errorf("%s at %s: sum %v, want %v", md.Unique, names[cp], sums[c], s)
					}
					got := rows[[2]int{mi, c}]
					for l, x := range row {
						if x != 0 && (got == nil || got[l] != x) {
							t.Fatalf("%s at %s, location %s: %v, want %v", md.Unique, names[cp], prof.Locations[l].Label(), got, x)
						}
					}
				}
			}
			for l, lc := range prof.Locations {
				if d.Locations[l] != lc.Label() {
					t.Errorf("location %d: %q, want %q", l, d.Locations[l], lc.Label())
				}
			}
		})
	}
}

// TestHTMLCube: the page of the CUBE report holds the same metrics, call
// tree and values as the page of the analysis it was written from, and
// the same headline; a report the reference wrote renders too.
func TestHTMLCube(t *testing.T) {
	for _, name := range htmlTraces {
		t.Run(name, func(t *testing.T) {
			rep := reportFromCSV(t, htmlTrace(t, name))
			c, h, err := rep.CubeAndHTML(HTMLOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, want := pageOf(t, h)
			hc := CubeHTML(c, HTMLOptions{})
			_, got := pageOf(t, hc)
			if got.Comm != nil || !strings.Contains(hc.view.CommNone, "no communication matrix") {
				t.Errorf("a CUBE report's page has a communication matrix: %+v %q", got.Comm, hc.view.CommNone)
			}
			wk, gk := pageKeys(want), pageKeys(got)
			if strings.Join(wk, "\n") != strings.Join(gk, "\n") {
				t.Fatalf("call trees differ:\n%v\n%v", wk, gk)
			}
			if len(got.Metrics) != len(want.Metrics) {
				t.Fatalf("%d metrics, want %d", len(got.Metrics), len(want.Metrics))
			}
			for mi, wm := range want.Metrics {
				gm := got.Metrics[mi]
				if gm.Unique != wm.Unique || gm.Parent != wm.Parent || gm.Integer != wm.Integer {
					t.Errorf("metric %d: %s (parent %d), want %s (parent %d)", mi, gm.Unique, gm.Parent, wm.Unique, wm.Parent)
					continue
				}
				ws, gs := pageSums(t, want, wm), pageSums(t, got, gm)
				for cp := range ws {
					if !tracetest.Close(gs[cp], ws[cp]) {
						t.Errorf("%s at %s: %v, want %v", wm.Unique, wk[cp], gs[cp], ws[cp])
					}
				}
			}
			// The headline of the file's page is the terminal summary of
			// the file (scout report), whose wait states are the analysis's.
			hv, cv := h.view, hc.view
			if len(cv.WaitStates) != len(hv.WaitStates) {
				t.Fatalf("%d wait states, want %d", len(cv.WaitStates), len(hv.WaitStates))
			}
			for i := range hv.WaitStates {
				if cv.WaitStates[i].Metric != hv.WaitStates[i].Metric || cv.WaitStates[i].Total != hv.WaitStates[i].Total {
					t.Errorf("wait state %d: %+v, want %+v", i, cv.WaitStates[i], hv.WaitStates[i])
				}
			}
		})
	}
	if s := tracetest.SharedDir(); s != "" {
		ref := filepath.Join(filepath.Dir(s), "traces-hybrid", "omp_lock_np2t2", "expected", "scout.cubex")
		c, err := cube.ReadFile(ref)
		if err != nil {
			t.Skipf("no reference report: %v", err)
		}
		page, d := pageOf(t, CubeHTML(c, HTMLOptions{Title: ref}))
		if len(d.Metrics) != len(c.AllMetrics()) || len(d.Callpaths.Parent) != len(c.AllCnodes()) || len(d.Locations) != len(c.Locations()) {
			t.Errorf("reference report: %d metrics, %d call paths, %d locations", len(d.Metrics), len(d.Callpaths.Parent), len(d.Locations))
		}
		if !bytes.Contains(page, []byte("OMP Lock API Contention")) {
			t.Error("the reference report's headline lacks its top wait state")
		}
	}
}

// TestHTMLComm renders a hand-made communication matrix: the page has
// every pair, the totals, the pairs with the most bytes and the sizes;
// beyond maxCommPairs pairs it groups the ranks in blocks, keeping the
// sums.
func TestHTMLComm(t *testing.T) {
	rep := reportFromCSV(t, htmlTrace(t, "ps_late_sender"))
	rep.Comm = &CommStats{
		Pairs: []CommPair{
			{From: 0, To: 1, Messages: 3, Bytes: 3000},
			{From: 1, To: 0, Messages: 1, Bytes: 8, Syncs: 2},
			{From: 1, To: 3, Messages: 5, Bytes: 1 << 20},
			{From: 3, To: 2, Syncs: 4},
		},
		Sizes: []uint64{6, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5},
	}
	page, d := pageOf(t, rep.HTML(HTMLOptions{}))
	if !bytes.Contains(page, []byte(`id="comm-matrix"`)) || bytes.Contains(page, []byte(`id="comm-none"`)) {
		t.Error("the page lacks the communication matrix")
	}
	c := d.Comm
	if c == nil {
		t.Fatal("no communication data")
	}
	if c.Ranks != 4 || c.Block != 1 || c.Pairs != 4 || c.TotalMsgs != 15 || c.TotalSyncs != 6 || c.TotalBytes != 3000+8+1<<20 {
		t.Errorf("comm %+v", c)
	}
	from, to, msgs, byts := decodeU32(t, c.From), decodeU32(t, c.To), decodeF64(t, c.Msgs), decodeF64(t, c.Bytes)
	for i, p := range rep.Comm.Pairs {
		if from[i] != uint32(p.From) || to[i] != uint32(p.To) || msgs[i] != float64(p.Messages+p.Syncs) || byts[i] != float64(p.Bytes) {
			t.Errorf("pair %d: %d→%d %v %v, want %+v", i, from[i], to[i], msgs[i], byts[i], p)
		}
	}
	if len(c.Top) != 4 || c.Top[0] != (jsPair{From: 1, To: 3, Msgs: 5, Bytes: 1 << 20}) || c.Top[3].From != 3 {
		t.Errorf("top pairs %+v", c.Top)
	}
	if fmt.Sprint(c.Sizes) != fmt.Sprint(rep.Comm.Sizes) {
		t.Errorf("sizes %v, want %v", c.Sizes, rep.Comm.Sizes)
	}

	// 100 ranks, all to all: 9 900 pairs, in blocks of 2 ranks.
	var all CommStats
	var total uint64
	for f := range int32(100) {
		for r := range int32(100) {
			if f != r {
				all.Pairs = append(all.Pairs, CommPair{From: f, To: r, Messages: 1, Bytes: uint64(f*100 + r)})
				total += uint64(f*100 + r)
			}
		}
	}
	rep.Comm = &all
	h := rep.HTML(HTMLOptions{})
	_, d = pageOf(t, h)
	if d.Comm.Block != 2 || d.Comm.Pairs != 9900 || d.Comm.TotalBytes != total {
		t.Errorf("blocks: %+v", d.Comm)
	}
	byts = decodeF64(t, d.Comm.Bytes)
	if len(byts) != 50*50 {
		t.Errorf("%d blocks, want 2 500", len(byts))
	}
	var s float64
	for _, x := range byts {
		s += x
	}
	if s != float64(total) {
		t.Errorf("blocks sum to %v bytes, want %d", s, total)
	}
	if !slicesContain(h.view.Notes, "blocks of 2") {
		t.Errorf("the page does not say that it groups ranks: %q", h.view.Notes)
	}

	rep.Comm = nil
	page, d = pageOf(t, rep.HTML(HTMLOptions{}))
	if d.Comm != nil || !bytes.Contains(page, []byte(`id="comm-none"`)) || !bytes.Contains(page, []byte("no communication matrix")) {
		t.Error("without traffic, the page does not say that it has none")
	}
}

func slicesContain(ss []string, sub string) bool {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// synthProfile is a profile of ncp call paths over nloc ranks: a tree of
// user functions (a fifth of the call paths) with MPI calls below them
// (receives, sends, barriers, all-reduces), every value other than zero.
func synthProfile(ncp, nloc int) (*Profile, Summary) {
	p := &Profile{Values: map[string][][]float64{}}
	for l := range nloc {
		p.Locations = append(p.Locations, localtrace.Placement{Rank: l})
	}
	users := max(1, ncp/5)
	mpi := []RegionInfo{
		{Name: "MPI_Recv", Paradigm: otf2.ParadigmMPI, Role: otf2.RolePoint2Point},
		{Name: "MPI_Send", Paradigm: otf2.ParadigmMPI, Role: otf2.RolePoint2Point},
		{Name: "MPI_Barrier", Paradigm: otf2.ParadigmMPI, Role: otf2.RoleBarrier},
		{Name: "MPI_Allreduce", Paradigm: otf2.ParadigmMPI, Role: otf2.RoleCollAll2All},
	}
	metric := map[string]int{"MPI_Recv": 0, "MPI_Send": 1, "MPI_Barrier": 2, "MPI_Allreduce": 3}
	waits := []string{"mpi_latesender", "bytes_sent", "mpi_barrier_wait", "mpi_wait_nxn"}
	for cp := range ncp {
		c := Callpath{Parent: -1, Region: RegionInfo{Name: "main", Paradigm: otf2.ParadigmCompiler, Role: otf2.RoleFunction}}
		switch {
		case cp == 0:
		case cp < users:
			c.Parent = (cp - 1) / 4
			c.Region = RegionInfo{Name: fmt.Sprintf("solver_step_%d", cp), Paradigm: otf2.ParadigmCompiler, Role: otf2.RoleFunction}
		default:
			c.Parent = cp % users
			c.Region = mpi[cp%len(mpi)]
		}
		p.Callpaths = append(p.Callpaths, c)
	}
	row := func(cp int, scale float64) []float64 {
		r := make([]float64, nloc)
		for l := range r {
			r[l] = scale * (1 + float64((cp*31+l*17)%97)/97)
		}
		return r
	}
	for _, name := range []string{"time", "visits", "mpi_latesender", "bytes_sent", "comms_send", "mpi_barrier_wait", "mpi_wait_nxn"} {
		p.Values[name] = make([][]float64, ncp)
	}
	var s Summary
	for cp, c := range p.Callpaths {
		p.Values["time"][cp] = row(cp, 1e-3)
		p.Values["visits"][cp] = row(cp, 0)
		for l := range p.Values["visits"][cp] {
			p.Values["visits"][cp][l] = float64(1 + (cp+l)%7)
		}
		for _, x := range p.Values["time"][cp] {
			s.Total += x
		}
		if k, ok := metric[c.Region.Name]; ok && cp >= users {
			w := row(cp+1, 1e-4)
			if waits[k] == "bytes_sent" {
				for l := range w {
					w[l] = math.Round(w[l] * 1e8)
				}
				p.Values["comms_send"][cp] = row(cp, 0)
				for l := range w {
					p.Values["comms_send"][cp][l] = 1
				}
			}
			p.Values[waits[k]][cp] = w
		}
	}
	for _, w := range []string{"mpi_latesender", "mpi_barrier_wait", "mpi_wait_nxn"} {
		m, _ := patterns.Lookup(w)
		ws := WaitState{Metric: w, Display: m.Display, Callpath: "main/solver_step_1/MPI_Recv"}
		for _, r := range p.Values[w] {
			for _, x := range r {
				ws.Total += x
			}
		}
		ws.Share, ws.CpValue = ws.Total/s.Total, ws.Total/100
		ws.Ranks = []RankValue{{"0", ws.Total / 10}, {"1", ws.Total / 20}}
		s.WaitStates = append(s.WaitStates, ws)
	}
	return p, s
}

// synthPage renders the page of a synthetic profile.
func synthPage(p *Profile, s Summary, opt HTMLOptions) *HTML {
	m := derivedModel(p, Derive(p))
	m.summary = s
	// a time profile of every location, each bin full
	tp := &TimeProfile{Width: 0.01, Bins: patterns.TimeProfileBins}
	labels := make([]string, len(p.Locations))
	for l, pl := range p.Locations {
		labels[l] = pl.Label()
		row := make([]patterns.Activities, tp.Bins)
		for k := range row {
			w := 0.01 * float64((k*7+l*13)%10) / 10
			row[k] = patterns.Activities{0.006 - w/2, 0.003, 0, 0.001 + w/2}
		}
		tp.Rows = append(tp.Rows, row)
	}
	m.profile = profileData(tp, labels)
	return m.page(opt)
}

// TestHTMLSize: the page of 1 000 call paths × 1 000 ranks stays within
// 2 MB, keeping the call tree whole, each metric's sums exact and the
// most significant per-location rows (the roots' first), and says what
// it left out; a call tree too large for the page keeps its most
// significant call paths, the others aggregated, with the totals kept.
func TestHTMLSize(t *testing.T) {
	p, s := synthProfile(1000, 1000)
	der := Derive(p)
	h := synthPage(p, s, HTMLOptions{})
	page, d := pageOf(t, h)
	t.Logf("1 000 call paths × 1 000 ranks: %d bytes, %d of %d rows", len(page), len(d.Rows), d.RowsTotal)
	if len(page) > DefaultHTMLSize {
		t.Errorf("page of %d bytes, more than %d", len(page), DefaultHTMLSize)
	}
	if len(d.Callpaths.Parent) != 1000 || len(d.Locations) != 1000 {
		t.Errorf("%d call paths, %d locations", len(d.Callpaths.Parent), len(d.Locations))
	}
	if len(d.Rows) == 0 || len(d.Rows) >= d.RowsTotal || !slicesContain(h.view.Notes, fmt.Sprintf("%d of the %d metric", len(d.Rows), d.RowsTotal)) {
		t.Errorf("rows: %d of %d, notes %q", len(d.Rows), d.RowsTotal, h.view.Notes)
	}
	// the roots' inclusive rows come first: the total per rank of each
	// metric other than zero
	for i, r := range d.Rows[:min(len(d.Rows), 5)] {
		if !r.Incl || d.Callpaths.Parent[r.Callpath] != -1 {
			t.Errorf("row %d: %+v, want a root's inclusive row", i, r)
		}
	}
	for mi, md := range der.Metrics {
		var want, got float64
		for _, row := range der.Values[md.Unique] {
			for _, x := range row {
				want += x
			}
		}
		for _, x := range pageSums(t, d, d.Metrics[mi]) {
			got += x
		}
		if !tracetest.Close(got, want) {
			t.Errorf("%s: total %v, want %v", md.Unique, got, want)
		}
	}

	// With a 10 × 10 × 10 topology of the ranks and a copy of it: the
	// grid is in the page (the copy counted), which stays within 2 MB.
	m := derivedModel(p, der)
	m.summary = s
	cart := pageTopo{name: "MPI_Cartesian_10x10x10", dims: []cube.Dim{{Size: 10}, {Size: 10, Periodic: true}, {Size: 10}}}
	for r := range 1000 {
		cart.cells = append(cart.cells, topoCell{rank: r, pos: []int{r / 100, r / 10 % 10, r % 10}})
	}
	m.topos = []pageTopo{cart, cart}
	tpage, td := pageOf(t, m.page(HTMLOptions{}))
	t.Logf("with a 3-D topology of 1 000 ranks: %d bytes, %d of %d rows", len(tpage), len(td.Rows), td.RowsTotal)
	if len(tpage) > DefaultHTMLSize {
		t.Errorf("page of %d bytes with a topology, more than %d", len(tpage), DefaultHTMLSize)
	}
	if len(td.Topologies) != 1 || td.Topologies[0].Count != 2 || len(td.Topologies[0].Rank) != 1000 || !td.Topologies[0].Dims[1].Periodic {
		t.Errorf("topologies: %d", len(td.Topologies))
	}

	// 6 000 call paths over 64 ranks: the call tree is pruned.
	p, s = synthProfile(6000, 64)
	der = Derive(p)
	h = synthPage(p, s, HTMLOptions{MaxSize: 600_000})
	page, d = pageOf(t, h)
	t.Logf("6 000 call paths × 64 ranks in 600 kB: %d bytes, %d call paths, %d of %d rows", len(page), len(d.Callpaths.Parent), len(d.Rows), d.RowsTotal)
	if n := len(d.Callpaths.Parent); n >= 6000 || len(d.Callpaths.Synth) == 0 || !slicesContain(h.view.Notes, "most significant") {
		t.Fatalf("%d call paths, %d aggregates, notes %q", n, len(d.Callpaths.Synth), h.view.Notes)
	}
	if len(page) > 700_000 {
		t.Errorf("page of %d bytes for a budget of 600 000", len(page))
	}
	for mi, md := range der.Metrics {
		var want, got float64
		for _, row := range der.Values[md.Unique] {
			for _, x := range row {
				want += x
			}
		}
		for _, x := range pageSums(t, d, d.Metrics[mi]) {
			got += x
		}
		if math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Errorf("%s: total %v after pruning, want %v", md.Unique, got, want)
		}
	}
	keys := pageKeys(d)
	for _, c := range d.Callpaths.Synth {
		if !strings.Contains(d.Callpaths.Name[c], "more call path") {
			t.Errorf("aggregate %s named %q", keys[c], d.Callpaths.Name[c])
		}
	}
}

// BenchmarkHTML writes the page of a report of 1 000 call paths ×
// 1 000 ranks (derivation, layout, writing) and reports its size (the
// page of the largest bundled trace: cmd/scout's BenchmarkHTML).
func BenchmarkHTML(b *testing.B) {
	p, s := synthProfile(1000, 1000)
	var n int64
	for b.Loop() {
		var err error
		if n, err = synthPage(p, s, HTMLOptions{}).WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/1e6, "page-MB")
}

// wantCell is a cell of a topology: a rank (and thread) at coordinates.
type wantCell struct {
	rank, thread int
	pos          string
}

// pageCells returns a page topology's cells, sorted.
func pageCells(t *testing.T, jt jsTopo) []wantCell {
	t.Helper()
	nd := len(jt.Dims)
	if len(jt.Coords) != nd*len(jt.Rank) || jt.Threads && len(jt.Thread) != len(jt.Rank) {
		t.Fatalf("topology %s: %d coordinates, %d ranks, %d threads for %d dimensions", jt.Name, len(jt.Coords), len(jt.Rank), len(jt.Thread), nd)
	}
	var out []wantCell
	for i, r := range jt.Rank {
		c := wantCell{rank: r, pos: fmt.Sprint(jt.Coords[i*nd : (i+1)*nd])}
		if jt.Threads {
			c.thread = jt.Thread[i]
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b wantCell) int { return cmp.Or(a.rank-b.rank, a.thread-b.thread) })
	return out
}

// defCells returns the cells of an OTF2 topology as its definitions
// say, resolved here independently of the page: a coordinate's rank in
// the topology's communicator is, through the communicator's group, an
// index into the locations group of the group's paradigm (MPI: the
// world ranks; Score-P's "Process x Thread": the threads).
func defCells(t *testing.T, d *otf2.Defs, pl map[uint64]localtrace.Placement, topo otf2.CartTopology) []wantCell {
	t.Helper()
	comm, ok := d.Comm(topo.Comm)
	if !ok {
		t.Fatalf("topology %d: no communicator %d", topo.Self, topo.Comm)
	}
	g, ok := d.Group(comm.Group)
	if !ok || g.Type != otf2.GroupTypeCommGroup {
		t.Fatalf("topology %d: communicator %d without a COMM_GROUP", topo.Self, topo.Comm)
	}
	var locs []uint64
	for _, lg := range d.Groups {
		if lg.Type == otf2.GroupTypeCommLocations && lg.Paradigm == g.Paradigm {
			locs = lg.Members
			break
		}
	}
	var out []wantCell
	for _, co := range d.CartCoordinates {
		if co.Topology != topo.Self {
			continue
		}
		p := pl[locs[g.Members[co.Rank]]]
		pos := make([]int, len(co.Coords))
		for i, x := range co.Coords {
			pos[i] = int(x)
		}
		out = append(out, wantCell{rank: p.Rank, thread: p.Thread, pos: fmt.Sprint(pos)})
	}
	slices.SortFunc(out, func(a, b wantCell) int { return cmp.Or(a.rank-b.rank, a.thread-b.thread) })
	return out
}

// TestHTMLTopology: the page holds each Cartesian topology of the trace
// (identical ones once, counted): its dimensions with their sizes and
// periods, and every rank's (in a topology of threads: every thread's)
// coordinates, as the definitions have them; the page of the reference's
// CUBE report holds the same; a trace without a topology has none and
// the page says so.
func TestHTMLTopology(t *testing.T) {
	known := map[string]string{
		// name: the topologies, with their sizes and cells
		"ps_mixed_np8":   "MPI_Cartesian_4x2 4x2 ×2 ranks [0 0] [0 1] [1 0] [1 1] [2 0] [2 1] [3 0] [3 1]; Process x Thread 8x1 ×1 ranks [0 0] [1 0] [2 0] [3 0] [4 0] [5 0] [6 0] [7 0]",
		"ps_wavefront":   "MPI_Cartesian_2x2 2x2 ×3 ranks [0 0] [0 1] [1 0] [1 1]; Process x Thread 4x1 ×1 ranks [0 0] [1 0] [2 0] [3 0]",
		"omp_lock_np2t2": "Process x Thread 2x2 ×1 threads [0 0] [0 1] [1 0] [1 1]",
	}
	for name, want := range known {
		t.Run(name, func(t *testing.T) {
			tr := htmlTrace(t, name)
			rep := reportFromCSV(t, tr)
			page, d := pageOf(t, rep.HTML(HTMLOptions{}))
			if !bytes.Contains(page, []byte(`id="topo-grids"`)) || bytes.Contains(page, []byte(`id="topo-none"`)) {
				t.Error("the page lacks the topology view")
			}
			var got []string
			for _, jt := range d.Topologies {
				s := fmt.Sprintf("%s ", jt.Name)
				var sizes []string
				for _, dm := range jt.Dims {
					sizes = append(sizes, strconv.Itoa(dm.Size))
				}
				s += strings.Join(sizes, "x") + fmt.Sprintf(" ×%d ", jt.Count)
				if jt.Threads {
					s += "threads"
				} else {
					s += "ranks"
				}
				for _, c := range pageCells(t, jt) {
					s += " " + c.pos
				}
				got = append(got, s)
			}
			if g := strings.Join(got, "; "); g != want {
				t.Errorf("topologies\n%s\nwant\n%s", g, want)
			}
			// Every definition is in the page: its name, its dimensions
			// (names, sizes, periods) and its cells.
			dims := map[uint32]otf2.CartDimension{}
			for _, dm := range rep.Defs.CartDimensions {
				dims[dm.Self] = dm
			}
			n := 0
			for _, topo := range rep.Defs.CartTopologies {
				wc := defCells(t, rep.Defs, rep.Placements, topo)
				found := false
				for _, jt := range d.Topologies {
					if jt.Name != rep.Defs.Str(topo.Name) || len(jt.Dims) != len(topo.Dims) {
						continue
					}
					same := true
					for k, id := range topo.Dims {
						dm := dims[id]
						same = same && jt.Dims[k] == jsDim{Name: rep.Defs.Str(dm.Name), Size: int(dm.Size), Periodic: dm.Periodic != 0}
					}
					if same && slices.Equal(pageCells(t, jt), wc) {
						found = true
					}
				}
				if !found {
					t.Errorf("topology %d (%s) with cells %v is not in the page", topo.Self, rep.Defs.Str(topo.Name), wc)
				}
				n++
			}
			var count int
			for _, jt := range d.Topologies {
				count += jt.Count
			}
			if count != n {
				t.Errorf("the page counts %d definitions, the trace has %d", count, n)
			}

			// A periodic dimension is one in the page.
			defs := *rep.Defs
			defs.CartDimensions = slices.Clone(defs.CartDimensions)
			defs.CartDimensions[0].Periodic = 1
			per := *rep
			per.Defs = &defs
			_, pd := pageOf(t, per.HTML(HTMLOptions{}))
			if len(pd.Topologies) == 0 || !pd.Topologies[0].Dims[0].Periodic || pd.Topologies[0].Dims[1].Periodic {
				t.Errorf("periodic dimension 0: %+v", pd.Topologies)
			}

			// The page of the reference's report has the same topologies
			// (scout's own CUBE report of a hybrid trace places only the
			// master threads in "Process x Thread").
			if s := tracetest.SharedDir(); s != "" {
				ref := filepath.Join(filepath.Dir(s), filepath.Base(filepath.Dir(tr.Dir)), name, "expected", "scout.cubex")
				c, err := cube.ReadFile(ref)
				if err != nil {
					t.Logf("no reference report: %v", err)
					return
				}
				_, cd := pageOf(t, CubeHTML(c, HTMLOptions{}))
				if len(cd.Topologies) != len(d.Topologies) {
					t.Fatalf("reference report: %d topologies, want %d", len(cd.Topologies), len(d.Topologies))
				}
				for i, jt := range d.Topologies {
					ct := cd.Topologies[i]
					if ct.Name != jt.Name || ct.Count != jt.Count || ct.Threads != jt.Threads || !slices.Equal(ct.Dims, jt.Dims) ||
						!slices.Equal(pageCells(t, ct), pageCells(t, jt)) {
						t.Errorf("reference report: topology %d %+v, want %+v", i, ct, jt)
					}
				}
			}
		})
	}

	t.Run("none", func(t *testing.T) {
		rep := reportFromCSV(t, htmlTrace(t, "ps_late_sender"))
		defs := *rep.Defs
		defs.CartTopologies, defs.CartCoordinates = nil, nil
		rep.Defs = &defs
		c, h, err := rep.CubeAndHTML(HTMLOptions{})
		if err != nil {
			t.Fatal(err)
		}
		page, d := pageOf(t, h)
		if len(d.Topologies) != 0 || !bytes.Contains(page, []byte(`id="topo-none"`)) || !strings.Contains(h.view.TopoNone, "trace defines no Cartesian topology") {
			t.Errorf("without a topology: %d topologies, %q", len(d.Topologies), h.view.TopoNone)
		}
		if !bytes.Contains(page, []byte(`"topologies":[]`)) {
			t.Error("no empty list of topologies for the script")
		}
		hc := CubeHTML(c, HTMLOptions{})
		if _, d := pageOf(t, hc); len(d.Topologies) != 0 || !strings.Contains(hc.view.TopoNone, "report defines no") {
			t.Errorf("CUBE report without a topology: %d topologies, %q", len(d.Topologies), hc.view.TopoNone)
		}
	})
}
