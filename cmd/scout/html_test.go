package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"scout/analysis"
	"scout/combine"
	"scout/cube"
	"scout/internal/tracetest"
)

// The HTML report (scout.html) is tested in a real browser: Chromium
// from the distribution's packages (apt-get install chromium; .ci/run
// installs it), driven by chromedp. Without Chromium the test skips.
// Screenshots go to the test's temporary directory, and also to
// $SCOUT_HTML_SCREENSHOTS when it names a directory.

// htmlBrowserTraces are the traces whose pages the browser test opens.
var htmlBrowserTraces = []string{
	"testdata/traces/ps_late_sender",
	"testdata/traces/ps_wait_barrier",
	"testdata/traces/ps_mixed_np8",
	"testdata/traces-hybrid/omp_lock_np2t2",
}

// htmlBrowserTopology is the topology each page shows first: its sizes
// and its number of cells (Score-P defines "Process x Thread" in every
// trace; ps_mixed_np8 has a 4 × 2 grid of its own besides).
var htmlBrowserTopology = map[string]struct {
	dims  string
	cells int
}{
	"ps_late_sender":  {"4x1", 4},
	"ps_wait_barrier": {"4x1", 4},
	"ps_mixed_np8":    {"4x2", 8},
	"omp_lock_np2t2":  {"2x2", 4},
}

// chromium returns the path of the Chromium binary, "" when none.
func chromium() string {
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// browser starts one headless Chromium for a test, with the flags this
// machine's closed network needs and a fresh profile.
func browser(t *testing.T) context.Context {
	t.Helper()
	bin := chromium()
	if bin == "" {
		t.Skip("Chromium is not installed (apt-get install chromium): skipping the browser test of scout.html")
	}
	profile, err := os.MkdirTemp("", "scout-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1400, 1000),
	)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		// Chromium's helpers may still write into the profile for a moment.
		for range 50 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	// The first action starts the browser, for as long as bctx lives (a
	// context with a timeout here would end the browser with it).
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting Chromium (%s): %v", bin, err)
	}
	return bctx
}

// tab is a page opened in a tab of the browser, with what its console
// said.
type tab struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

// openPage opens file in a new tab and waits until its script ran.
func openPage(t *testing.T, bctx context.Context, file string) *tab {
	t.Helper()
	tctx, cancelTab := chromedp.NewContext(bctx)
	ctx, cancel := context.WithTimeout(tctx, time.Minute)
	t.Cleanup(func() { cancel(); cancelTab() })
	tb := &tab{ctx: ctx}
	if err := chromedp.Do(ctx); err != nil { // the tab, before the console
		t.Fatal(err)
	}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				tb.mu.Lock()
				tb.errors = append(tb.errors, m.String())
				tb.mu.Unlock()
			}
		}
	}()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs), chromedp.WaitVisible(chromedp.CSS(`body[data-ready]`))); err != nil {
		t.Fatalf("opening %s: %v", file, err)
	}
	if ready := tb.eval(t, `document.body.dataset.ready`); ready != `"1"` {
		t.Errorf("the page's script did not finish: ready=%s", ready)
	}
	return tb
}

// eval evaluates expr in the page and returns its JSON.
func (tb *tab) eval(t *testing.T, expr string) string {
	t.Helper()
	b, err := chromedp.Run(tb.ctx, chromedp.Evaluate[[]byte](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return string(b)
}

// evalInto evaluates expr and decodes its JSON into v.
func (tb *tab) evalInto(t *testing.T, expr string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(tb.eval(t, expr)), v); err != nil {
		t.Fatalf("decoding the value of %s: %v", expr, err)
	}
}

func (tb *tab) click(t *testing.T, css string) {
	t.Helper()
	if err := chromedp.Do(tb.ctx, chromedp.Click(chromedp.CSS(css))); err != nil {
		t.Fatalf("clicking %s: %v", css, err)
	}
}

// checkConsole fails the test for every error the page's console got.
func (tb *tab) checkConsole(t *testing.T) {
	t.Helper()
	time.Sleep(100 * time.Millisecond) // let the last messages arrive
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, e := range tb.errors {
		t.Errorf("console: %s", e)
	}
}

// screenshot writes a screenshot of the whole page as name.png into
// dir, and into $SCOUT_HTML_SCREENSHOTS when set.
func (tb *tab) screenshot(t *testing.T, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	for _, d := range []string{dir, os.Getenv("SCOUT_HTML_SCREENSHOTS")} {
		if d == "" {
			continue
		}
		p := filepath.Join(d, name+".png")
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", p)
	}
}

// csvSum sums the CSV's cells that match the metric (and the call path
// and the rank when not empty).
func csvSum(cells tracetest.Cells, metric, callpath, rank string) float64 {
	var s float64
	for k, v := range cells {
		if k.Metric == metric && (callpath == "" || k.Callpath == callpath) && (rank == "" || k.Rank == rank) {
			s += v
		}
	}
	return s
}

// shown parses a number as the page shows it ("1.23457e-5 s", "42").
func shown(t *testing.T, text string) float64 {
	t.Helper()
	f := strings.Fields(text)
	if len(f) == 0 {
		t.Fatalf("no number in %q", text)
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		t.Fatalf("no number in %q: %v", text, err)
	}
	return v
}

// near: a value shown with 6 significant digits.
func near(shownV, want float64) bool {
	return math.Abs(shownV-want) <= 5e-6*math.Abs(want)+1e-300
}

// closeTo: a value the page holds at full precision (sums in another
// order may differ in the last bits).
func closeTo(got, want float64) bool {
	return math.Abs(got-want) <= 1e-12*math.Max(math.Abs(want), 1e-300)
}

type headlineRow struct {
	Metric, Callpath, Value, Total, Share string
}

type cpRow struct {
	Key, Incl, Excl, InclText, ExclText string
	Expanded                            string
}

const cpRowsJS = `Array.from(document.querySelectorAll('#cp-table tbody tr[data-cp]')).map(tr => ({
	key: tr.dataset.key, expanded: tr.getAttribute('aria-expanded') || '',
	incl: tr.querySelector('td.incl').dataset.value, excl: tr.querySelector('td.excl').dataset.value,
	inclText: tr.querySelector('td.incl').textContent, exclText: tr.querySelector('td.excl').textContent}))`

func parseF(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return v
}

// checkProfile checks the page's time profile against the metric values:
// the seconds of waiting it states are the wait states' (mpiWaits,
// ompWaits), all its activities together the time; the chart of all
// locations has a bar per bin; clicking the second row of the map shows
// that location, and choosing another activity recolours the map.
func checkProfile(t *testing.T, tb *tab, cells tracetest.Cells) {
	t.Helper()
	var p struct {
		Info  map[string]string
		Bins  int
		Bars  int
		Rows  int
		Cells int
		Title string
	}
	tb.evalInto(t, `({info: {...document.getElementById('profile-info').dataset}, bins: JSON.parse(document.getElementById('scout-data').textContent).profile.bins,
		bars: Chart.getChart('profile-chart').data.labels.length, rows: JSON.parse(document.getElementById('scout-data').textContent).profile.rows.length,
		cells: Chart.getChart('profile-map').data.datasets[0].data.length, title: document.getElementById('profile-row-title').textContent})`, &p)
	var total, wait float64
	waits := map[string]bool{}
	for _, m := range append(append([]string{}, mpiWaits...), ompWaits...) {
		waits[m] = true
	}
	for k, v := range cells {
		switch {
		case k.Metric == "time":
			total += v
		case waits[k.Metric]:
			wait += v
		}
	}
	all := 0.0
	for _, v := range p.Info {
		all += parseF(t, v)
	}
	if got := parseF(t, p.Info["waiting"]); math.Abs(got-wait) > 1e-9*max(1, wait) {
		t.Errorf("time profile: %v s waiting, the wait states %v s", got, wait)
	}
	if math.Abs(all-total) > 1e-9*max(1, total) {
		t.Errorf("time profile: %v s of activities, the time %v s", all, total)
	}
	if p.Bins == 0 || p.Bars != p.Bins || p.Cells != p.Bins*p.Rows || p.Title != "rank 0" {
		t.Errorf("time profile: %d bins, %d bars, %d rows, %d map cells, row %q shown", p.Bins, p.Bars, p.Rows, p.Cells, p.Title)
	}
	if p.Rows < 2 {
		return
	}
	// click the middle of the second row's first bin
	tb.eval(t, `(() => { const c = Chart.getChart('profile-map'); const e = c.getDatasetMeta(0).data[c.data.datasets[0].data.findIndex(d => d.y === 1)];
		const r = c.canvas.getBoundingClientRect(); const x = r.left + e.x + 1, y = r.top + e.y + 1;
		c.canvas.dispatchEvent(new MouseEvent('click', {clientX: x, clientY: y, bubbles: true})); return 1; })()`)
	var second string
	tb.evalInto(t, `JSON.parse(document.getElementById('scout-data').textContent).profile.rows[1]`, &second)
	want := "rank " + strings.Replace(second, ".", " thread ", 1)
	// Chart.js handles the click at the next animation frame
	var title string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		tb.evalInto(t, `document.getElementById('profile-row-title').textContent`, &title)
		if title == want || time.Now().After(deadline) {
			break
		}
	}
	if title != want {
		t.Errorf("time profile: clicking the second row shows %q, want %q", title, want)
	}
	before := tb.eval(t, `Chart.getChart('profile-map').data.datasets[0].data.map(d => d.v).join(' ')`)
	tb.click(t, `#profile-kinds input[value="1"]`)
	if after := tb.eval(t, `Chart.getChart('profile-map').data.datasets[0].data.map(d => d.v).join(' ')`); after == before {
		t.Error("time profile: choosing MPI does not change the map")
	}
}

// TestHTMLBrowser analyzes bundled traces and opens each scout.html in
// Chromium: no console errors; the top wait states, a call path's
// exclusive value and a rank's value are the CSV's; expanding a call
// path, searching and selecting another metric work; a screenshot is
// taken. Then it opens the page that scout report --html writes of
// scout's report and of one the reference wrote, and a page with a
// hand-made communication matrix.
func TestHTMLBrowser(t *testing.T) {
	bctx := browser(t)
	tmp := t.TempDir()
	for _, rel := range htmlBrowserTraces {
		name := filepath.Base(rel)
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(tracetest.Root(), rel)
			out := filepath.Join(tmp, name)
			csvPath := filepath.Join(out, "scout.csv")
			var stderr bytes.Buffer
			if err := run([]string{"-q", "-o", out, "--csv", csvPath, dir}, io.Discard, &stderr); err != nil {
				t.Fatalf("scout: %v\n%s", err, stderr.String())
			}
			cells, err := tracetest.ReadCSV(csvPath)
			if err != nil {
				t.Fatal(err)
			}
			tb := openPage(t, bctx, filepath.Join(out, "scout.html"))
			checkPage(t, tb, cells, !strings.HasPrefix(name, "omp_"))
			checkProfile(t, tb, cells)
			// The topology view shows the explorer's selection (visits
			// of the top wait state's call path, exclusive), then follows
			// it to time, inclusive.
			topo := htmlBrowserTopology[name]
			checkTopology(t, tb, topo.dims, topo.cells, false)
			tb.click(t, `#metric-tree .mrow[data-metric="time"] .n`)
			tb.click(t, `input[name="rank-kind"][value="incl"]`)
			if got := tb.eval(t, `document.getElementById('topo-title').textContent`); !strings.Contains(got, "Time") || !strings.Contains(got, "inclusive") {
				t.Errorf("the topology view shows %s after selecting time, inclusive", got)
			}
			checkTopology(t, tb, topo.dims, topo.cells, false)
			if name == "ps_mixed_np8" {
				// its topologies: the 4 × 2 grid (defined twice) and
				// "Process x Thread"
				var opts []string
				tb.evalInto(t, `Array.from(document.querySelectorAll('#topo-select option')).map(o => o.textContent)`, &opts)
				if len(opts) != 2 || !strings.Contains(opts[0], "MPI_Cartesian_4x2 (4 × 2), defined 2 times") || !strings.HasPrefix(opts[1], "Process x Thread (8 × 1)") {
					t.Errorf("topologies to select: %q", opts)
				}
				tb.click(t, `#waitstates tbody tr:first-child td.name`)
				checkTopology(t, tb, topo.dims, topo.cells, false)
				tb.screenshot(t, out, name)
				selectTopology(t, tb, 1)
				checkTopology(t, tb, "8x1", 8, false)
				selectTopology(t, tb, 0)
			} else {
				tb.screenshot(t, out, name)
			}
			tb.checkConsole(t)

			// scout report --html of the report: the same headline.
			page := filepath.Join(out, "report.html")
			if err := run([]string{"report", "--html", page, filepath.Join(out, "scout.cubex")}, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			rb := openPage(t, bctx, page)
			var want, got []headlineRow
			tb.evalInto(t, headlineJS, &want)
			rb.evalInto(t, headlineJS, &got)
			if len(got) != len(want) || len(want) == 0 {
				t.Fatalf("report page: %d wait states, the analysis's page %d", len(got), len(want))
			}
			for i := range want {
				if got[i].Metric != want[i].Metric || !closeTo(parseF(t, got[i].Value), parseF(t, want[i].Value)) {
					t.Errorf("report page: wait state %d %+v, want %+v", i, got[i], want[i])
				}
			}
			if got := rb.eval(t, `document.getElementById('comm-none') !== null`); got != "true" {
				t.Error("the report page does not say that it has no communication matrix")
			}
			if got := rb.eval(t, `document.getElementById('profile-none').textContent.includes('no time profile')`); got != "true" {
				t.Error("the report page does not say that it has no time profile")
			}
			// the report's topologies: the same as the analysis's page
			checkTopology(t, rb, topo.dims, topo.cells, false)
			rb.checkConsole(t)
		})
	}

	t.Run("reference report", func(t *testing.T) {
		s := tracetest.SharedDir()
		if s == "" {
			t.Skip("../shared is absent")
		}
		ref := filepath.Join(filepath.Dir(s), "traces-hybrid", "omp_lock_np2t2", "expected", "scout.cubex")
		if _, err := os.Stat(ref); err != nil {
			t.Skipf("no reference report: %v", err)
		}
		page := filepath.Join(tmp, "reference.html")
		if err := run([]string{"report", "--html", page, ref}, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		c, err := cube.ReadFile(ref)
		if err != nil {
			t.Fatal(err)
		}
		cells := tracetest.Cells{}
		for _, cl := range c.Cells() {
			cells[tracetest.Key{Metric: cl.Metric, Callpath: cl.Callpath, Rank: cl.Rank}] = cl.Value
		}
		tb := openPage(t, bctx, page)
		checkPage(t, tb, cells, true)
		tb.screenshot(t, tmp, "reference")
		tb.checkConsole(t)
	})

	t.Run("empty report", func(t *testing.T) {
		page := filepath.Join(tmp, "empty.html")
		f, err := os.Create(page)
		if err != nil {
			t.Fatal(err)
		}
		if err := combine.CubeHTML(&cube.Report{}, combine.HTMLOptions{Title: "nothing"}).Write(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
		tb := openPage(t, bctx, page)
		if got := tb.eval(t, `document.getElementById('explore').textContent.includes('no metrics')`); got != "true" {
			t.Error("the page of an empty report does not say that it has nothing to show")
		}
		tb.checkConsole(t)
	})

	t.Run("communication", func(t *testing.T) {
		rep, err := analysis.Run(context.Background(), analysis.Plan{Trace: filepath.Join(tracetest.Root(), "testdata", "traces", "ps_late_sender")})
		if err != nil {
			t.Fatal(err)
		}
		rep.Comm = &combine.CommStats{
			Pairs: []combine.CommPair{
				{From: 0, To: 1, Messages: 3, Bytes: 3000},
				{From: 1, To: 0, Messages: 1, Bytes: 8, Syncs: 2},
				{From: 1, To: 3, Messages: 5, Bytes: 1 << 20},
				{From: 3, To: 2, Syncs: 4},
			},
			Sizes: []uint64{6, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5},
		}
		page := filepath.Join(tmp, "comm.html")
		f, err := os.Create(page)
		if err != nil {
			t.Fatal(err)
		}
		if err := rep.HTML(combine.HTMLOptions{Title: "hand-made traffic"}).Write(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
		tb := openPage(t, bctx, page)
		var c struct {
			Msgs, Bytes string
			Top         [][]string
			Sizes       int
			Cells       int
			Hist        int
		}
		tb.evalInto(t, `({msgs: document.getElementById('comm-totals').dataset.msgs, bytes: document.getElementById('comm-totals').dataset.bytes,
			top: Array.from(document.querySelectorAll('#comm-top tbody tr')).map(tr => Array.from(tr.cells).map(td => td.textContent)),
			sizes: document.querySelectorAll('#comm-size-table tbody tr').length,
			cells: Chart.getChart('comm-matrix').data.datasets[0].data.length,
			hist: Chart.getChart('comm-hist').data.datasets[0].data.length})`, &c)
		if c.Msgs != "15" || c.Bytes != strconv.Itoa(3000+8+1<<20) {
			t.Errorf("totals: %s messages, %s bytes", c.Msgs, c.Bytes)
		}
		if len(c.Top) != 4 || strings.Join(c.Top[0], " ") != "1 3 5 1048576" || strings.Join(c.Top[1], " ") != "0 1 3 3000" {
			t.Errorf("pairs with the most bytes: %q", c.Top)
		}
		if c.Sizes != 22 || c.Hist != 22 || c.Cells != 4 {
			t.Errorf("%d size rows, %d histogram bars, %d matrix cells; want 22, 22, 4", c.Sizes, c.Hist, c.Cells)
		}
		tb.click(t, `input[name="comm-kind"][value="msgs"]`)
		if got := tb.eval(t, `Chart.getChart('comm-matrix').data.datasets[0].data.map(p => p.v).join(' ')`); got != `"3 3 5 4"` {
			t.Errorf("matrix of messages: %s, want 3 3 5 4", got)
		}
		tb.screenshot(t, tmp, "comm")
		tb.checkConsole(t)
	})
}

// topoCell is a cell of the topology view as the page draws it.
type topoCell struct {
	Cell, Rank, Thread, Coords, Value, Title string
}

const topoCellsJS = `Array.from(document.querySelectorAll('#topo-grids rect.cell')).map(r => ({cell: r.dataset.cell,
	rank: r.dataset.rank, thread: r.dataset.thread || '', coords: r.dataset.coords, value: r.dataset.value,
	title: r.querySelector('title').textContent}))`

// selectTopology shows the i-th topology of the page's selector.
func selectTopology(t *testing.T, tb *tab, i int) {
	t.Helper()
	tb.eval(t, `(() => { const s = document.getElementById('topo-select'); s.value = '`+strconv.Itoa(i)+`'; s.dispatchEvent(new Event('change')); return 1; })()`)
}

// checkTopology checks the topology view against the explorer's table
// of values per location: the grid has the sizes dims and that many
// cells, each the value of its rank (the sum of the rank's threads, or
// the master thread's with master) or of its thread; pointing at a
// cell says its rank, coordinates and value, and so does clicking it.
func checkTopology(t *testing.T, tb *tab, dims string, cells int, master bool) {
	t.Helper()
	if got := tb.eval(t, `document.getElementById('topo-dims').dataset.dims`); got != `"`+dims+`"` {
		t.Errorf("topology of sizes %s, want %s", got, dims)
	}
	if tb.eval(t, `document.getElementById('rank-values').open`) != "true" {
		tb.click(t, `#rank-values summary`)
	}
	if err := chromedp.Do(tb.ctx, chromedp.WaitVisible(chromedp.CSS(`#rank-table tbody tr`))); err != nil {
		t.Fatal(err)
	}
	var per []struct{ Loc, Value string }
	tb.evalInto(t, `Array.from(document.querySelectorAll('#rank-table tbody tr')).map(tr => ({loc: tr.dataset.loc, value: tr.querySelector('td.num').dataset.value}))`, &per)
	var cs []topoCell
	tb.evalInto(t, topoCellsJS, &cs)
	if len(cs) != cells {
		t.Fatalf("%d cells, want %d", len(cs), cells)
	}
	// The values by cell: a thread's, or a rank's from its threads in
	// the table's order (the page's), starting from 0 as the page does.
	threads := cs[0].Thread != ""
	want := map[string]float64{}
	for _, p := range per {
		rank, thread, _ := strings.Cut(p.Loc, ".")
		key := rank
		switch {
		case threads:
			key = p.Loc + map[bool]string{true: ".0", false: ""}[thread == ""]
		case master && thread != "":
			continue
		}
		want[key] += parseF(t, p.Value)
	}
	largest := -1
	for i, c := range cs {
		key := c.Rank
		if threads {
			key += "." + c.Thread
		}
		w, ok := want[key]
		if !ok {
			t.Errorf("cell %s at (%s): no such location in the table", key, c.Coords)
			continue
		}
		if c.Value == "" || parseF(t, c.Value) != w {
			t.Errorf("cell %s at (%s): %q, want %v (the table's)", key, c.Coords, c.Value, w)
		}
		at := "(" + strings.ReplaceAll(c.Coords, ",", ", ") + ")"
		if !strings.HasPrefix(c.Title, "rank "+c.Rank) || !strings.Contains(c.Title, at) {
			t.Errorf("cell %s: tooltip %q", key, c.Title)
		}
		if largest < 0 || parseF(t, c.Value) > parseF(t, cs[largest].Value) {
			largest = i
		}
	}
	c := cs[largest]
	tb.click(t, `#topo-grids rect.cell[data-cell="`+c.Cell+`"]`)
	var info struct{ Rank, Value, Text string }
	tb.evalInto(t, `(() => { const p = document.getElementById('topo-info'); return {rank: p.dataset.rank, value: p.dataset.value, text: p.textContent}; })()`, &info)
	if info.Rank != c.Rank || info.Value != c.Value || !strings.Contains(info.Text, "("+strings.ReplaceAll(c.Coords, ",", ", ")+")") {
		t.Errorf("clicking rank %s at (%s), %s: %+v", c.Rank, c.Coords, c.Value, info)
	}
}

// TestHTMLTopologyBrowser opens the pages of generated traces with a
// 3-D grid, with a 2-D grid of ranks with two threads each, with a
// periodic dimension and without a topology.
func TestHTMLTopologyBrowser(t *testing.T) {
	bctx := browser(t)
	tmp := t.TempDir()
	analyze := func(t *testing.T, name string, tracegen ...string) (string, tracetest.Cells) {
		t.Helper()
		dir := filepath.Join(tmp, name)
		if err := run(append([]string{"tracegen", "-q", "-o", filepath.Join(dir, "trace")}, tracegen...), io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		csvPath := filepath.Join(dir, "scout.csv")
		var stderr bytes.Buffer
		if err := run([]string{"-q", "-o", dir, "--csv", csvPath, filepath.Join(dir, "trace")}, io.Discard, &stderr); err != nil {
			t.Fatalf("scout: %v\n%s", err, stderr.String())
		}
		cells, err := tracetest.ReadCSV(csvPath)
		if err != nil {
			t.Fatal(err)
		}
		return dir, cells
	}

	t.Run("3-D", func(t *testing.T) {
		dir, cells := analyze(t, "halo3d", "--ranks", "8", "--phase", "halo_3d:dims=2x2x2,imbalance=200us")
		tb := openPage(t, bctx, filepath.Join(dir, "scout.html"))
		checkPage(t, tb, cells, true)
		checkTopology(t, tb, "2x2x2", 8, false)
		if n := tb.eval(t, `document.querySelectorAll('#topo-grids svg.topo-grid').length`); n != "2" {
			t.Errorf("%s slices, want 2", n)
		}
		if got := tb.eval(t, `Array.from(document.querySelectorAll('#topo-grids figcaption')).map(f => f.textContent).join('; ')`); got != `"dimension 2 = 0; dimension 2 = 1"` {
			t.Errorf("slices %s", got)
		}
		// rank r at (r/4, r/2%2, r%2): row-major, as MPI_Cart_create
		var cs []topoCell
		tb.evalInto(t, topoCellsJS, &cs)
		for _, c := range cs {
			r, _ := strconv.Atoi(c.Rank)
			if want := fmt.Sprintf("%d,%d,%d", r/4, r/2%2, r%2); c.Coords != want {
				t.Errorf("rank %d at %s, want %s", r, c.Coords, want)
			}
		}
		tb.click(t, `input[name="topo-scale"][value="min"]`)
		checkTopology(t, tb, "2x2x2", 8, false)
		// the top wait state, whose values differ by rank
		tb.click(t, `#waitstates tbody tr:first-child td.name`)
		checkTopology(t, tb, "2x2x2", 8, false)
		tb.screenshot(t, tmp, "topology-3d")
		tb.checkConsole(t)
	})

	t.Run("2-D with threads", func(t *testing.T) {
		dir, cells := analyze(t, "hybrid", "--ranks", "4", "--threads", "2", "--phase", "halo_2d:dims=2x2", "--phase", "omp_barrier:imbalance=1ms")
		tb := openPage(t, bctx, filepath.Join(dir, "scout.html"))
		checkPage(t, tb, cells, false)
		tb.click(t, `#metric-tree .mrow[data-metric="time"] .n`)
		checkTopology(t, tb, "2x2", 4, false)
		if tb.eval(t, `document.getElementById('topo-threads-box').hidden`) != "false" || !strings.Contains(tb.eval(t, `document.getElementById('topo-dims').textContent`), "the sum of its threads") {
			t.Error("the view does not say that a rank's value sums its threads")
		}
		if got := tb.eval(t, `document.getElementById('topo-info').textContent`); !strings.Contains(got, "(thread 1)") {
			t.Errorf("a rank's cell does not show its threads: %s", got)
		}
		tb.click(t, `input[name="topo-threads"][value="master"]`)
		checkTopology(t, tb, "2x2", 4, true)
		// the top wait state (OpenMP, on every thread), threads summed
		tb.click(t, `#waitstates tbody tr:first-child td.name`)
		tb.click(t, `input[name="topo-threads"][value="sum"]`)
		checkTopology(t, tb, "2x2", 4, false)
		tb.screenshot(t, tmp, "topology-threads")
		tb.checkConsole(t)
	})

	t.Run("periodic", func(t *testing.T) {
		dir, _ := analyze(t, "periodic", "--ranks", "8", "--phase", "halo_2d:dims=4x2")
		rep, err := analysis.Run(context.Background(), analysis.Plan{Trace: filepath.Join(dir, "trace")})
		if err != nil {
			t.Fatal(err)
		}
		rep.Defs.CartDimensions[0].Periodic = 1
		page := filepath.Join(tmp, "periodic.html")
		f, err := os.Create(page)
		if err != nil {
			t.Fatal(err)
		}
		if err := rep.HTML(combine.HTMLOptions{Title: "periodic"}).Write(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
		tb := openPage(t, bctx, page)
		var dims struct{ Periodic, Text string }
		tb.evalInto(t, `({periodic: document.getElementById('topo-dims').dataset.periodic, text: document.getElementById('topo-dims').textContent})`, &dims)
		if dims.Periodic != "10" || !strings.Contains(dims.Text, "dimension 0 (4, periodic") || strings.Contains(dims.Text, "dimension 1 (2, periodic") {
			t.Errorf("periodic dimension 0: %+v", dims)
		}
		checkTopology(t, tb, "4x2", 8, false)
		tb.checkConsole(t)
	})

	t.Run("none", func(t *testing.T) {
		dir, _ := analyze(t, "none", "--ranks", "4", "--phase", "late_sender")
		tb := openPage(t, bctx, filepath.Join(dir, "scout.html"))
		if got := tb.eval(t, `document.getElementById('topo-none').textContent`); got != `"The trace defines no Cartesian topology."` {
			t.Errorf("without a topology: %s", got)
		}
		tb.checkConsole(t)
	})
}

const headlineJS = `Array.from(document.querySelectorAll('#waitstates tbody tr')).map(tr => ({
	metric: tr.dataset.metric, callpath: tr.dataset.callpath, value: tr.dataset.value,
	total: tr.querySelector('td.total').textContent, share: tr.querySelector('td.share').textContent}))`

// checkPage checks the page of a report against its cells (the CSV):
// the headline, the explorer's values, expanding, searching and
// selecting. checkTime also checks the time of a call path (the
// derived tree's time is the analysis's without OpenMP threads).
func checkPage(t *testing.T, tb *tab, cells tracetest.Cells, checkTime bool) {
	t.Helper()
	// The headline: the top wait states are the CSV's sums, shown with
	// their shares of the total time.
	total := csvSum(cells, "time", "", "")
	if got := parseF(t, strings.Trim(tb.eval(t, `document.getElementById('total').dataset.value`), `"`)); !closeTo(got, total) {
		t.Errorf("total time %v, want %v", got, total)
	}
	var ws []headlineRow
	tb.evalInto(t, headlineJS, &ws)
	if len(ws) == 0 {
		t.Fatal("no wait states in the headline")
	}
	for _, w := range ws {
		want := csvSum(cells, w.Metric, "", "")
		if !closeTo(parseF(t, w.Value), want) || !near(shown(t, w.Total), want) {
			t.Errorf("wait state %s: %s (%s), want %v", w.Metric, w.Value, w.Total, want)
		}
		if share := fmt.Sprintf("%.1f%%", 100*want/total); w.Share != share {
			t.Errorf("wait state %s: share %s, want %s", w.Metric, w.Share, share)
		}
	}

	// The top wait state in the explorer: clicking it selects its metric
	// and its call path, whose exclusive value is the CSV's.
	top := ws[0]
	tb.click(t, `#waitstates tbody tr:first-child td.name`)
	if got := tb.eval(t, `document.querySelector('#metric-tree .mrow.sel').dataset.metric`); got != `"`+top.Metric+`"` {
		t.Errorf("selected metric %s, want %s", got, top.Metric)
	}
	var rows []cpRow
	tb.evalInto(t, cpRowsJS, &rows)
	found := false
	for _, r := range rows {
		if r.Key != top.Callpath {
			continue
		}
		found = true
		want := csvSum(cells, top.Metric, top.Callpath, "")
		if !closeTo(parseF(t, r.Excl), want) || !near(shown(t, r.ExclText), want) {
			t.Errorf("%s at %s: exclusive %s (%s), want %v", top.Metric, top.Callpath, r.Excl, r.ExclText, want)
		}
	}
	if !found {
		t.Fatalf("the call path %s is not shown", top.Callpath)
	}
	if got := tb.eval(t, `document.querySelector('#cp-table tr.sel').dataset.key`); got != `"`+top.Callpath+`"` {
		t.Errorf("selected call path %s, want %s", got, top.Callpath)
	}

	// Its values per rank (exclusive): the CSV's, the largest the max.
	tb.click(t, `input[name="rank-kind"][value="excl"]`)
	tb.click(t, `#rank-values summary`)
	// the details' toggle event comes after the click
	if err := chromedp.Do(tb.ctx, chromedp.WaitVisible(chromedp.CSS(`#rank-table tbody tr`))); err != nil {
		t.Fatal(err)
	}
	var per []struct{ Loc, Value string }
	tb.evalInto(t, `Array.from(document.querySelectorAll('#rank-table tbody tr')).map(tr => ({loc: tr.dataset.loc, value: tr.querySelector('td.num').dataset.value}))`, &per)
	if len(per) == 0 {
		t.Errorf("no values per location: %s", tb.eval(t, `document.getElementById('rank-missing').textContent + ' | ' + document.getElementById('rank-title').textContent`))
	}
	largest := math.Inf(-1)
	for _, p := range per {
		want := cells[tracetest.Key{Metric: top.Metric, Callpath: top.Callpath, Rank: p.Loc}]
		if got := parseF(t, p.Value); got != want {
			t.Errorf("%s at %s on %s: %v, want %v", top.Metric, top.Callpath, p.Loc, got, want)
		}
		largest = math.Max(largest, want)
	}
	if got := parseF(t, strings.Trim(tb.eval(t, `document.getElementById('stat-max').dataset.value`), `"`)); got != largest {
		t.Errorf("max %v, want %v", got, largest)
	}
	if n := tb.eval(t, `Chart.getChart('rank-chart').data.datasets[0].data.length`); n != strconv.Itoa(len(per)) {
		t.Errorf("the chart has %s bars, want %d", n, len(per))
	}

	// Expanding a call path shows its children (collapsing it first
	// when all are expanded).
	tb.evalInto(t, cpRowsJS, &rows)
	node, open := "", false
	for _, r := range rows {
		if r.Expanded != "" && (node == "" || open && r.Expanded == "false") {
			node, open = r.Key, r.Expanded == "true"
		}
	}
	if node == "" {
		t.Fatal("no call path with children shown")
	}
	toggle := `#cp-table tr[data-key="` + cssString(node) + `"] button.tog`
	if open {
		before := len(rows)
		tb.click(t, toggle)
		tb.evalInto(t, cpRowsJS, &rows)
		if len(rows) >= before {
			t.Errorf("collapsing %s: %d rows, before %d", node, len(rows), before)
		}
	}
	before := len(rows)
	tb.click(t, toggle)
	tb.evalInto(t, cpRowsJS, &rows)
	if len(rows) <= before {
		t.Errorf("expanding %s: %d rows, before %d", node, len(rows), before)
	}

	// Searching finds a call path by its region's name; selecting time
	// shows its exclusive time.
	leaf := top.Callpath[strings.LastIndex(top.Callpath, "/")+1:]
	if err := chromedp.Do(tb.ctx, chromedp.SendKeys(chromedp.CSS(`#cp-search`), leaf)); err != nil {
		t.Fatal(err)
	}
	if got := tb.eval(t, `document.getElementById('cp-matches').textContent`); !strings.Contains(got, "match") {
		t.Errorf("searching %q: %s", leaf, got)
	}
	if checkTime {
		// time, collapsed: with all its sub-metrics
		if tb.eval(t, `document.querySelector('#metric-tree .mrow[data-metric="time"]').getAttribute('aria-expanded')`) == `"true"` {
			tb.click(t, `#metric-tree .mrow[data-metric="time"] button.tog`)
		}
		tb.click(t, `#metric-tree .mrow[data-metric="time"] .n`)
		tb.evalInto(t, cpRowsJS, &rows)
		found = false
		for _, r := range rows {
			if r.Key == top.Callpath {
				found = true
				if want := csvSum(cells, "time", top.Callpath, ""); !closeTo(parseF(t, r.Excl), want) || !near(shown(t, r.ExclText), want) {
					t.Errorf("time at %s: %s (%s), want %v", top.Callpath, r.Excl, r.ExclText, want)
				}
			}
		}
		if !found {
			t.Errorf("searching %q does not show %s", leaf, top.Callpath)
		}
	}

	// Selecting visits: the root's inclusive value is the number of
	// visits.
	tb.click(t, `#metric-tree .mrow[data-metric="visits"] .n`)
	if got := tb.eval(t, `document.getElementById('cp-metric').textContent`); !strings.Contains(got, "Visits") {
		t.Errorf("after selecting visits, the call tree shows %s", got)
	}
	var inclRoots float64
	tb.evalInto(t, `Array.from(document.querySelectorAll('#cp-table tbody tr[data-cp]')).filter(tr => !tr.dataset.key.includes('/')).reduce((s, tr) => s + Number(tr.querySelector('td.incl').dataset.value), 0)`, &inclRoots)
	if want := csvSum(cells, "visits", "", ""); inclRoots != want {
		t.Errorf("visits of the roots %v, want %v", inclRoots, want)
	}
}

// cssString escapes s for a CSS attribute selector in double quotes.
func cssString(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

// BenchmarkHTML writes the page of the largest bundled trace (the
// report's page alone; the analysis runs once) and reports its size.
func BenchmarkHTML(b *testing.B) {
	rep, err := analysis.Run(context.Background(), analysis.Plan{Trace: filepath.Join(tracetest.Root(), "testdata", "traces", "ps_mixed_np8")})
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for b.Loop() {
		if n, err = rep.HTML(combine.HTMLOptions{Title: "ps_mixed_np8"}).WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/1e6, "page-MB")
}
