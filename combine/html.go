package combine

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"scout/cube"
	"scout/localtrace"
	"scout/localtrace/otf2"
	"scout/patterns"
)

// The HTML report (scout.html) is one more renderer of the report
// model: one self-contained page, with every script and style inline,
// that any current browser opens from disk. Its headline is the terminal
// summary (Summary); its explorer shows the derived metric tree × the
// call tree × the locations, as Cube's three panes do; its topology view
// colours the explorer's selection onto the trace's Cartesian
// topologies, one cell per rank (or thread); its last section is the
// point-to-point traffic (Report.Comm). The page holds the data as JSON
// in a <script type="application/json"> element: the call tree, the
// metric tree with each metric's call-path exclusive sums over all
// locations, per-location rows of metric × call path, and the
// topologies (dimensions and each cell's rank). Numbers are
// IEEE doubles, base64-encoded little-endian, so that the page shows the
// report's values exactly and stays small.
//
// Size: the page aims at HTMLOptions.MaxSize (2 MB by default). When the
// call tree's sums do not fit in half of what the data may take, only the
// most significant call paths are kept (the others of each parent become
// one aggregated node); per-location rows go in by significance until the
// data is full; the communication matrix groups ranks into blocks beyond
// 8 192 rank pairs. The page says what it left out.

// The embedded assets: Chart.js and its matrix chart type, unmodified
// from the npm registry (their licences beside them), and the page's own
// script, style and template.
var (
	//go:embed htmlassets/chart.js-4.6.1/chart.umd.min.js
	chartJS string
	//go:embed htmlassets/chart.js-4.6.1/LICENSE.md
	chartJSLicence string
	//go:embed htmlassets/chartjs-chart-matrix-3.1.0/chartjs-chart-matrix.min.js
	matrixJS string
	//go:embed htmlassets/chartjs-chart-matrix-3.1.0/LICENSE
	matrixJSLicence string
	//go:embed htmlassets/app.js
	appJS string
	//go:embed htmlassets/style.css
	styleCSS string
	//go:embed htmlassets/page.html
	pageHTML string
)

// pageTemplate renders the page (htmlassets/page.html); parsed at its
// first use, not when every command starts (it takes milliseconds).
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Parse(pageHTML))
})

// DefaultHTMLSize is the size in bytes that the HTML report aims to stay
// within.
const DefaultHTMLSize = 2_000_000

// HTMLOptions are the settings of the HTML report.
type HTMLOptions struct {
	// Title names what the page is about: the trace or the report file.
	Title string
	// Source says where the data comes from, e.g. "analysis of TRACE".
	Source string
	// MaxSize is the size in bytes the page aims to stay within
	// (0: DefaultHTMLSize).
	MaxSize int
	// Top is the number of entries per list of the headline (0: 5, as
	// the terminal summary).
	Top int
}

func (o HTMLOptions) maxSize() int {
	if o.MaxSize > 0 {
		return o.MaxSize
	}
	return DefaultHTMLSize
}

func (o HTMLOptions) top() int {
	if o.Top > 0 {
		return o.Top
	}
	return 5
}

// HTML is a report's page, ready to be written.
type HTML struct {
	view pageView
}

// WriteTo writes the page.
func (h *HTML) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	if err := pageTemplate().Execute(&b, &h.view); err != nil {
		return 0, err
	}
	return b.WriteTo(w)
}

// Write writes the page (for writers that take a func(io.Writer) error).
func (h *HTML) Write(w io.Writer) error {
	_, err := h.WriteTo(w)
	return err
}

// HTML builds the report's page: the derived metric tree as the CUBE
// report has it, the summary as the terminal prints it, and the
// point-to-point traffic when the report has it.
func (r *Report) HTML(opt HTMLOptions) *HTML {
	prof := r.Profile()
	return r.htmlOf(prof, Derive(prof), opt)
}

// CubeAndHTML builds the CUBE report and the page of the report from one
// derivation of the metric tree.
func (r *Report) CubeAndHTML(opt HTMLOptions) (*cube.Report, *HTML, error) {
	prof := r.Profile()
	d := Derive(prof)
	c, err := r.cubeOf(prof, d)
	if err != nil {
		return nil, nil, err
	}
	return c, r.htmlOf(prof, d, opt), nil
}

func (r *Report) htmlOf(prof *Profile, d *Derived, opt HTMLOptions) *HTML {
	m := derivedModel(prof, d)
	m.summary = r.Summarize(opt.top())
	m.comm = r.Comm
	m.topos = otf2Topologies(r.Defs, r.Placements)
	labels := make([]string, len(r.Results))
	for i, res := range r.Results {
		labels[i] = r.Placements[res.Location].Label()
	}
	m.profile = profileData(r.TimeProfile(), labels)
	var idle float64
	for _, row := range d.Values["omp_idle_threads"] {
		for _, x := range row {
			idle += x
		}
	}
	if idle > 0 {
		m.notes = append(m.notes, fmt.Sprintf("Time in the metric tree below includes the %.6g s that OpenMP worker threads were idle, as the CUBE report's does; the total time here leaves it out, as the terminal summary does.", idle))
	}
	if r.OmpTasks > 0 {
		m.notes = append(m.notes, fmt.Sprintf("The trace has %d OpenMP task events, which the analysis does not analyze.", r.OmpTasks))
	}
	return m.page(opt)
}

// derivedModel is the page model of a derived metric tree.
func derivedModel(prof *Profile, d *Derived) *pageModel {
	m := &pageModel{}
	idx := make(map[string]int, len(d.Metrics))
	for i, md := range d.Metrics {
		idx[md.Unique] = i
	}
	for _, md := range d.Metrics {
		p, ok := idx[md.Parent]
		if !ok {
			p = -1
		}
		m.metrics = append(m.metrics, pageMetric{unique: md.Unique, display: md.Display, unit: md.Unit,
			descr: md.Descr, parent: p, integer: md.Integer, stored: true})
		m.values = append(m.values, d.Values[md.Unique])
	}
	m.parent = make([]int, len(prof.Callpaths))
	m.names = make([]string, len(prof.Callpaths))
	for i, cp := range prof.Callpaths {
		m.parent[i], m.names[i] = cp.Parent, cp.Region.Name
	}
	m.locs = make([]loc, len(prof.Locations))
	for l, pl := range prof.Locations {
		m.locs[l] = loc{pl.Rank, pl.Thread}
	}
	return m
}

// CubeHTML builds the page of a CUBE report (written by scout or by
// Scalasca): its metric tree and call tree, its values as the CUBE
// reader gives them (call-path exclusive, metric inclusive: cube.Cells),
// and the summary of its cells.
func CubeHTML(c *cube.Report, opt HTMLOptions) *HTML {
	m := &pageModel{}
	all := c.AllCnodes()
	pos := make(map[*cube.Cnode]int, len(all))
	m.parent, m.names = make([]int, len(all)), make([]string, len(all))
	for i, n := range all {
		pos[n] = i
		m.parent[i], m.names[i] = -1, n.Region.Name
		if n.Parent != nil {
			m.parent[i] = pos[n.Parent]
		}
	}
	keyIdx := make(map[string]int, len(all))
	for i, k := range cube.PathKeys(m.parent, m.names) {
		keyIdx[k] = i
	}
	locIdx := map[string]int{}
	for _, l := range c.Locations() {
		lc := loc{l.Group.Rank, l.Rank}
		locIdx[lc.label()] = len(m.locs)
		m.locs = append(m.locs, lc)
	}
	mIdx := map[string]int{}
	stored := 0
	for _, cm := range c.AllMetrics() {
		p := -1
		if cm.Parent != nil {
			p = mIdx[cm.Parent.UniqName]
		}
		mIdx[cm.UniqName] = len(m.metrics)
		has := cm.Type.HasData() && c.Values[cm.ID] != nil
		if has {
			stored++
		}
		disp := cm.DispName
		if disp == "" {
			disp = cm.UniqName
		}
		m.metrics = append(m.metrics, pageMetric{unique: cm.UniqName, display: disp, unit: cm.Unit, descr: cm.Descr,
			parent: p, integer: !cm.DataType.IsFloat(), stored: cm.Type.HasData()})
	}
	m.values = make([][][]float64, len(m.metrics))
	cells := c.Cells()
	cc := make([]Cell, 0, len(cells))
	for _, cl := range cells {
		cc = append(cc, Cell{Metric: cl.Metric, Callpath: cl.Callpath, Rank: cl.Rank, Value: cl.Value, Integer: cl.Integer})
		mi, ok1 := mIdx[cl.Metric]
		cp, ok2 := keyIdx[cl.Callpath]
		l, ok3 := locIdx[cl.Rank]
		if !ok1 || !ok2 || !ok3 {
			continue
		}
		if m.values[mi] == nil {
			m.values[mi] = make([][]float64, len(all))
		}
		if m.values[mi][cp] == nil {
			m.values[mi][cp] = make([]float64, len(m.locs))
		}
		m.values[mi][cp][l] += cl.Value
	}
	m.summary = Summarize(cc, patterns.Catalog, opt.top())
	m.topos = cubeTopologies(c)
	if derived := len(m.metrics) - stored; derived > 0 {
		m.notes = append(m.notes, fmt.Sprintf("%d of the file's %d metrics store no values (derived metrics, or none measured); they show as zero.", derived, len(m.metrics)))
	}
	m.fromFile = true
	return m.page(opt)
}

// loc is a location: a rank and a thread.
type loc struct{ rank, thread int }

func (l loc) label() string {
	if l.thread == 0 {
		return strconv.Itoa(l.rank)
	}
	return strconv.Itoa(l.rank) + "." + strconv.Itoa(l.thread)
}

// pageModel is what the page shows, from either source.
type pageModel struct {
	metrics []pageMetric
	// values are by metric: [call path][location] (nil rows: zero),
	// call-path exclusive and metric inclusive.
	values   [][][]float64
	parent   []int    // by call path: the parent, -1 for a root
	names    []string // by call path: the callee region's name
	synth    []bool   // by call path: an aggregate of call paths left out
	locs     []loc
	summary  Summary
	comm     *CommStats
	profile  *jsProfile // the time profile (nil: none)
	topos    []pageTopo
	notes    []string
	fromFile bool // read from a CUBE file
}

type pageMetric struct {
	unique, display, unit, descr string
	parent                       int // index, -1 for a root
	integer                      bool
	stored                       bool // the source has values of it (false: a derived metric of a CUBE file)
}

// The JSON the page's script reads (htmlassets/app.js).
type (
	jsData struct {
		Title     string     `json:"title"`
		Metrics   []jsMetric `json:"metrics"`
		Callpaths jsTree     `json:"callpaths"`
		Locations []string   `json:"locations"`
		Rows      []jsRow    `json:"rows"`
		// RowsTotal counts the metric × call path pairs with per-location
		// values other than zero; Rows may hold fewer.
		RowsTotal int     `json:"rowsTotal"`
		Comm      *jsComm `json:"comm"`
		// SummaryTotal is the headline's total time.
		SummaryTotal float64 `json:"summaryTotal"`
		// Topologies are the Cartesian topologies, identical ones once.
		Topologies []jsTopo `json:"topologies"`
		// Profile is the time profile (null: none).
		Profile *jsProfile `json:"profile"`
	}
	jsMetric struct {
		Unique  string `json:"unique"`
		Display string `json:"display"`
		Unit    string `json:"unit"`
		Descr   string `json:"descr,omitempty"`
		Parent  int    `json:"parent"`
		Integer bool   `json:"integer,omitempty"`
		Stored  bool   `json:"stored"`
		// Sums are the call-path exclusive values summed over the
		// locations: dense f64 by call path, or, when Index is set, at
		// the call paths Index lists (u32).
		Sums  string `json:"sums,omitempty"`
		Index string `json:"index,omitempty"`
		// Complete: every per-location row of the metric other than zero
		// is in Rows. NonNeg: no value of the metric is negative.
		Complete bool `json:"complete"`
		NonNeg   bool `json:"nonneg"`
	}
	jsTree struct {
		Parent []int    `json:"parent"` // preorder: parents first, subtrees contiguous
		Name   []string `json:"name"`
		// Key holds the call-path key elements (cube.PathKeys) that
		// differ from the name, by call path.
		Key map[int]string `json:"key,omitempty"`
		// Synth lists the nodes that aggregate call paths left out.
		Synth []int `json:"synth,omitempty"`
	}
	jsRow struct {
		Metric   int    `json:"m"`
		Callpath int    `json:"c"`
		Incl     bool   `json:"i,omitempty"` // call-path inclusive (else exclusive)
		Values   string `json:"v"`           // f64 by location
	}
	jsComm struct {
		Ranks int `json:"ranks"`
		// Block is the number of ranks per row and column of the matrix
		// (1: rank by rank).
		Block int    `json:"block"`
		From  string `json:"from"` // u32: the sender's block
		To    string `json:"to"`   // u32: the receiver's block
		Msgs  string `json:"msgs"` // f64: messages of any size
		Bytes string `json:"bytes"`
		// Pairs counts the rank pairs that exchanged messages.
		Pairs int      `json:"pairs"`
		Top   []jsPair `json:"top"` // the pairs with the most bytes
		Sizes []uint64 `json:"sizes"`
		// TotalMsgs counts all messages, TotalSyncs those of 0 bytes.
		TotalMsgs  uint64 `json:"totalMsgs"`
		TotalSyncs uint64 `json:"totalSyncs"`
		TotalBytes uint64 `json:"totalBytes"`
	}
	// jsTopo is a Cartesian topology: its dimensions and its cells,
	// each a rank (the sum of its threads, or its master thread: the
	// page's choice) or, when Threads, one thread of a rank.
	jsTopo struct {
		Name    string  `json:"name"`
		Dims    []jsDim `json:"dims"`
		Threads bool    `json:"threads,omitempty"`
		// Count is the number of identical definitions (Score-P defines
		// one per communicator that has the topology).
		Count  int   `json:"count"`
		Rank   []int `json:"rank"`             // by cell: the world rank
		Thread []int `json:"thread,omitempty"` // by cell, when Threads
		// Coords are the cells' coordinates, len(Dims) per cell.
		Coords []int `json:"coords"`
	}
	jsDim struct {
		Name     string `json:"name"`
		Size     int    `json:"size"`
		Periodic bool   `json:"periodic,omitempty"`
	}
	jsPair struct {
		From  int32  `json:"from"`
		To    int32  `json:"to"`
		Msgs  uint64 `json:"msgs"` // messages of any size
		Bytes uint64 `json:"bytes"`
	}
)

// pageView is what the template renders.
type pageView struct {
	Title, Source, Meta string
	Total, TotalValue   string
	Correction          string
	Notes               []string
	WaitStates          []headRow
	RootCauses          []headRow
	Path                *pathView
	HasComm             bool
	CommNone            string
	HasTopo             bool
	TopoNone            string
	HasProfile          bool
	ProfileNone         string
	Data                template.JS
	CSS                 template.CSS
	ChartJS, MatrixJS   template.JS
	AppJS               template.JS
	Licences            []licence
}

type headRow struct {
	Metric, Display, Callpath string
	Value, Share, Total       string
	CpValue, Ranks, Detail    string
}

type pathView struct {
	Length, LengthValue, Imbalance, ImbalanceShare string
	Callpaths                                      []headRow
}

type licence struct{ Name, Text string }

// maxCommPairs is the number of matrix cells the page holds at most
// before it groups ranks into blocks.
const maxCommPairs = 8192

// page lays the model out within the size budget.
func (m *pageModel) page(opt HTMLOptions) *HTML {
	m.preorder()
	v := pageView{Title: opt.Title, Source: opt.Source}
	if v.Title == "" {
		v.Title = "report"
	}
	s := m.summary
	nloc := len(m.locs)
	v.Total = fmt.Sprintf("%.6g", s.Total)
	v.TotalValue = FormatValue(s.Total, false)
	if s.Correction != nil {
		v.Correction = CorrectionLine(s.Correction, s.Violations)
	}
	ranks, threads := m.rankCount()
	v.Meta = fmt.Sprintf("%d ranks", ranks)
	if threads > 1 {
		v.Meta += fmt.Sprintf(" × up to %d threads", threads)
	}
	v.Meta += fmt.Sprintf(" (%d locations), %d call paths, %d metrics", nloc, len(m.parent), len(m.metrics))
	rankList := func(rs []RankValue, total float64) string {
		var out []string
		for i, rv := range rs {
			if i == 3 {
				break
			}
			out = append(out, fmt.Sprintf("%s %s", rankName(rv.Rank), percent(100*rv.Value/total)))
		}
		return strings.Join(out, ", ")
	}
	for _, ws := range s.WaitStates {
		v.WaitStates = append(v.WaitStates, headRow{Metric: ws.Metric, Display: ws.Display, Callpath: ws.Callpath,
			Value: FormatValue(ws.Total, false), Share: fmt.Sprintf("%.1f%%", 100*ws.Share), Total: fmt.Sprintf("%.6g s", ws.Total),
			CpValue: fmt.Sprintf("%.6g s", ws.CpValue), Ranks: rankList(ws.Ranks, ws.Total)})
	}
	for _, rc := range s.RootCauses {
		v.RootCauses = append(v.RootCauses, headRow{Metric: "delay", Display: rc.Cause, Callpath: rc.Callpath,
			Value: FormatValue(rc.Total, false), Share: fmt.Sprintf("%.1f%%", 100*rc.Share), Total: fmt.Sprintf("%.6g s", rc.Total),
			Detail: fmt.Sprintf("short-term %.6g s, long-term %.6g s", rc.ShortTerm, rc.LongTerm), Ranks: rankList(rc.Ranks, rc.Total)})
	}
	if p := s.Path; p != nil {
		pv := &pathView{Length: fmt.Sprintf("%.6g s", p.Length), LengthValue: FormatValue(p.Length, false),
			Imbalance: fmt.Sprintf("%.6g s", p.Imbalance), ImbalanceShare: fmt.Sprintf("%.1f%%", 100*p.ImbalanceShare)}
		for _, ps := range p.Callpaths {
			pv.Callpaths = append(pv.Callpaths, headRow{Metric: criticalPathMetric, Callpath: ps.Callpath,
				Value: FormatValue(ps.Value, false), Share: fmt.Sprintf("%.1f%%", 100*ps.Share), Total: fmt.Sprintf("%.6g s", ps.Value),
				Ranks: rankList(ps.Ranks, ps.Value)})
		}
		v.Path = pv
	}

	// The data, within what the page may take besides its fixed parts.
	fixed := len(chartJS) + len(matrixJS) + len(appJS) + len(styleCSS) + len(pageHTML) +
		len(chartJSLicence) + len(matrixJSLicence) + 32<<10
	budget := max(opt.maxSize()-fixed, 64<<10)
	d := jsData{Title: v.Title, SummaryTotal: s.Total}
	if m.comm != nil && len(m.comm.Pairs) == 0 {
		v.CommNone = "The analysis found no point-to-point messages."
	} else if m.comm != nil {
		d.Comm = m.commData(ranks)
		budget -= len(d.Comm.From) + len(d.Comm.To) + len(d.Comm.Msgs) + len(d.Comm.Bytes) + 100*len(d.Comm.Top) + 24*len(d.Comm.Sizes)
		v.HasComm = true
		if d.Comm.Block > 1 {
			m.notes = append(m.notes, fmt.Sprintf("The communication matrix groups the ranks in blocks of %d: %d rank pairs exchanged messages.", d.Comm.Block, d.Comm.Pairs))
		}
	} else if m.fromFile {
		v.CommNone = "This report has no communication matrix: a CUBE file does not hold one (it is in the page scout writes with its analysis)."
	} else {
		v.CommNone = "This report has no communication matrix: the analysis did not record the point-to-point traffic."
	}
	switch {
	case m.profile != nil:
		d.Profile, v.HasProfile = m.profile, true
		budget -= m.profile.size()
		if n := m.profile.note(); n != "" {
			m.notes = append(m.notes, n)
		}
	case m.fromFile:
		v.ProfileNone = "This report has no time profile: a CUBE file does not hold one (it is in the page scout writes with its analysis)."
	default:
		v.ProfileNone = "This report has no time profile: the analysis did not record one."
	}
	var topoBytes int
	d.Topologies, topoBytes = m.topoData(budget / 8)
	budget -= topoBytes
	v.HasTopo = len(d.Topologies) > 0
	if !v.HasTopo {
		v.TopoNone = "The trace defines no Cartesian topology."
		if m.fromFile {
			v.TopoNone = "This report defines no Cartesian topology."
		}
	}
	m.prune(budget / 2)
	d.Locations = make([]string, len(m.locs))
	for l, lc := range m.locs {
		d.Locations[l] = lc.label()
	}
	d.Callpaths = jsTree{Parent: m.parent, Name: m.names}
	for i, elem := range keyElems(m.parent, m.names) {
		if m.synth[i] {
			elem = "…" + strconv.Itoa(i)
		}
		if elem != m.names[i] {
			if d.Callpaths.Key == nil {
				d.Callpaths.Key = map[int]string{}
			}
			d.Callpaths.Key[i] = elem
		}
		if m.synth[i] {
			d.Callpaths.Synth = append(d.Callpaths.Synth, i)
		}
	}
	used := 0
	for _, n := range m.names {
		used += len(n) + 8
	}
	sums := make([][]float64, len(m.metrics))
	for mi, pm := range m.metrics {
		sums[mi] = m.sums(mi)
		jm := jsMetric{Unique: pm.unique, Display: pm.display, Unit: pm.unit, Descr: pm.descr, Parent: pm.parent,
			Integer: pm.integer, Stored: pm.stored, NonNeg: true}
		var idx []uint32
		var vals []float64
		for cp, x := range sums[mi] {
			if x != 0 {
				idx = append(idx, uint32(cp))
				vals = append(vals, x)
			}
		}
		switch {
		case len(idx) == 0:
		case 12*len(idx) < 8*len(m.parent):
			jm.Index, jm.Sums = b64u32(idx), b64f64(vals)
		default:
			jm.Sums = b64f64(sums[mi])
		}
		used += len(jm.Sums) + len(jm.Index) + len(jm.Unique) + len(jm.Display) + len(jm.Descr) + 80
		for _, row := range m.values[mi] {
			for _, x := range row {
				if x < 0 {
					jm.NonNeg = false
				}
			}
		}
		d.Metrics = append(d.Metrics, jm)
	}
	used += 16 * len(m.locs)
	d.Rows, d.RowsTotal = m.rows(sums, d.Metrics, budget-used)
	if len(d.Rows) < d.RowsTotal {
		m.notes = append(m.notes, fmt.Sprintf("To stay small, this page keeps the per-location values of %d of the %d metric × call path pairs (the most significant ones); scout.cubex has all of them.", len(d.Rows), d.RowsTotal))
	}
	// no null for an empty report: the script reads lengths
	if d.Callpaths.Parent == nil {
		d.Callpaths.Parent, d.Callpaths.Name = []int{}, []string{}
	}
	if d.Metrics == nil {
		d.Metrics = []jsMetric{}
	}
	if d.Rows == nil {
		d.Rows = []jsRow{}
	}
	if d.Topologies == nil {
		d.Topologies = []jsTopo{}
	}
	data, err := json.Marshal(&d)
	if err != nil {
		panic(err) // only strings, numbers and slices of them
	}
	v.Data = template.JS(data)
	v.Notes = m.notes
	v.CSS, v.AppJS = template.CSS(styleCSS), template.JS(appJS)
	v.ChartJS, v.MatrixJS = template.JS(chartJS), template.JS(matrixJS)
	v.Licences = []licence{{"Chart.js 4.6.1", chartJSLicence}, {"chartjs-chart-matrix 3.1.0", matrixJSLicence}}
	return &HTML{view: v}
}

// keyElems returns the element of each call path's key (cube.PathKeys)
// that its own name gives: the name escaped, with "#n" for the n-th
// sibling (n ≥ 2) of that name. Unlike the keys, the elements take
// memory linear in the tree, also for a deep one.
func keyElems(parent []int, name []string) []string {
	elems := make([]string, len(parent))
	type sib struct {
		parent int
		elem   string
	}
	seen := make(map[sib]int, len(parent))
	for i, p := range parent {
		e := cube.KeyName(name[i])
		k := sib{p, e}
		seen[k]++
		if n := seen[k]; n > 1 {
			e += "#" + strconv.Itoa(n)
		}
		elems[i] = e
	}
	return elems
}

// rankCount returns the number of ranks and the largest number of
// threads of a rank.
func (m *pageModel) rankCount() (ranks, threads int) {
	per := map[int]int{}
	for _, l := range m.locs {
		per[l.rank]++
	}
	for _, n := range per {
		threads = max(threads, n)
	}
	return len(per), threads
}

// preorder renumbers the call paths in depth-first preorder (children
// in their order), so that every subtree is a contiguous range.
func (m *pageModel) preorder() {
	n := len(m.parent)
	if m.synth == nil {
		m.synth = make([]bool, n)
	}
	kids := make([][]int, n)
	var roots []int
	for i, p := range m.parent {
		if p < 0 {
			roots = append(roots, i)
		} else {
			kids[p] = append(kids[p], i)
		}
	}
	order := make([]int, 0, n)
	stack := slices.Clone(roots)
	slices.Reverse(stack)
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		order = append(order, c)
		for i := len(kids[c]) - 1; i >= 0; i-- {
			stack = append(stack, kids[c][i])
		}
	}
	for i, c := range order {
		if i != c {
			m.renumber(order, nil)
			return
		}
	}
}

// renumber keeps the call paths that order lists (old indexes, parents
// first), in that order. The values of a call path left out are added
// to those of the aggregate into[it] (by old index, one that has no
// values of its own), when into is not nil.
func (m *pageModel) renumber(order []int, into []int) {
	newOf := make([]int, len(m.parent))
	for i := range newOf {
		newOf[i] = -1
	}
	for i, c := range order {
		newOf[c] = i
	}
	parent, names, synth := make([]int, len(order)), make([]string, len(order)), make([]bool, len(order))
	for i, c := range order {
		parent[i], names[i], synth[i] = -1, m.names[c], m.synth[c]
		if p := m.parent[c]; p >= 0 {
			parent[i] = newOf[p]
		}
	}
	for mi, rows := range m.values {
		if rows == nil {
			continue
		}
		out := make([][]float64, len(order))
		for c, row := range rows {
			if row == nil {
				continue
			}
			if i := newOf[c]; i >= 0 {
				out[i] = row // shared with the source: never changed
				continue
			}
			if into == nil {
				continue
			}
			i := newOf[into[c]] // an aggregate, new: its row is the page's own
			if out[i] == nil {
				out[i] = make([]float64, len(m.locs))
			}
			for l, x := range row {
				out[i][l] += x
			}
		}
		m.values[mi] = out
	}
	m.parent, m.names, m.synth = parent, names, synth
}

// sumsInto sets s to metric mi's values by call path, summed over the
// locations.
func (m *pageModel) sumsInto(s []float64, mi int) {
	clear(s)
	for cp, row := range m.values[mi] {
		for _, x := range row {
			s[cp] += x
		}
	}
}

// sums returns metric mi's values by call path, summed over the
// locations.
func (m *pageModel) sums(mi int) []float64 {
	s := make([]float64, len(m.parent))
	m.sumsInto(s, mi)
	return s
}

// prune keeps the most significant call paths whose names and sums fit
// in budget bytes: by the largest share of any metric's total that a
// call path holds inclusively. The call paths left out of a kept parent
// become one node that aggregates their subtrees.
func (m *pageModel) prune(budget int) {
	n := len(m.parent)
	cost := make([]int, n)
	score := make([]float64, n)
	total := 0
	for cp := range n {
		cost[cp] = len(m.names[cp]) + 12
	}
	s, incl := make([]float64, n), make([]float64, n)
	for mi := range m.metrics {
		m.sumsInto(s, mi)
		var abs float64
		for cp, x := range s {
			abs += math.Abs(x)
			if x != 0 {
				cost[cp] += 16
			}
		}
		if abs == 0 {
			continue
		}
		copy(incl, s)
		for cp := n - 1; cp >= 0; cp-- {
			if p := m.parent[cp]; p >= 0 {
				incl[p] += incl[cp]
			}
		}
		for cp, x := range incl {
			score[cp] = max(score[cp], math.Abs(x)/abs)
		}
	}
	s, incl = nil, nil
	for _, c := range cost {
		total += c
	}
	if total <= budget {
		return
	}
	byScore := make([]int, n)
	for i := range byScore {
		byScore[i] = i
	}
	sort.SliceStable(byScore, func(a, b int) bool { return score[byScore[a]] > score[byScore[b]] })
	// choose keeps the most significant call paths (with their
	// ancestors) whose cost fits in target; it returns them and their
	// cost with the aggregates of the call paths left out, each costed
	// as its parent.
	keep := make([]bool, n)
	choose := func(target int) int {
		clear(keep)
		used := 0
		for _, cp := range byScore {
			add := 0
			for c := cp; c >= 0 && !keep[c]; c = m.parent[c] {
				add += cost[c]
			}
			if used+add > target && used > 0 {
				break
			}
			for c := cp; c >= 0 && !keep[c]; c = m.parent[c] {
				keep[c] = true
			}
			used += add
		}
		aggr := map[int]bool{}
		for cp := range n {
			if p := m.parent[cp]; !keep[cp] && (p < 0 || keep[p]) && !aggr[p] {
				aggr[p] = true
				if p >= 0 {
					used += cost[p]
				} else {
					used += cost[cp]
				}
			}
		}
		return used
	}
	used := choose(budget)
	for target := budget; used > budget && target > 0; {
		target = target * budget / used * 9 / 10
		used = choose(target)
	}
	// The aggregates: one for each kept parent (or for the roots) with
	// call paths left out, added as call paths n, n+1, …; into maps each
	// call path left out to the aggregate that holds it.
	kept := 0
	other := map[int]int{} // kept parent (-1: none) → its aggregate
	into := make([]int, n)
	held := map[int]int{}
	for cp := range n {
		if keep[cp] {
			into[cp] = cp
			kept++
			continue
		}
		p := m.parent[cp]
		if p >= 0 && !keep[p] {
			into[cp] = into[p] // inside a subtree left out
			held[into[cp]]++
			continue
		}
		o, ok := other[p]
		if !ok {
			o = len(m.parent)
			other[p] = o
			m.parent = append(m.parent, p)
			m.names = append(m.names, "")
			m.synth = append(m.synth, true)
			keep = append(keep, true)
		}
		into[cp] = o
		held[o]++
	}
	for _, o := range other {
		word := "call paths"
		if held[o] == 1 {
			word = "call path"
		}
		m.names[o] = fmt.Sprintf("(%d more %s, aggregated)", held[o], word)
	}
	// The order: the kept call paths and the aggregates, in preorder
	// (an aggregate after its parent's kept children).
	kids := make([][]int, len(m.parent))
	var roots []int
	for i, p := range m.parent {
		if !keep[i] {
			continue
		}
		if p < 0 {
			roots = append(roots, i)
		} else {
			kids[p] = append(kids[p], i)
		}
	}
	var order []int
	stack := slices.Clone(roots)
	slices.Reverse(stack)
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		order = append(order, c)
		for i := len(kids[c]) - 1; i >= 0; i-- {
			stack = append(stack, kids[c][i])
		}
	}
	m.renumber(order, into)
	m.notes = append(m.notes, fmt.Sprintf("To stay small, this page shows the %d most significant of the %d call paths; the others are aggregated per parent into the nodes marked “more call paths”.", kept, n))
}

// rows chooses the per-location rows the page holds, within budget
// bytes: all rows other than zero when they fit; else the call-path
// inclusive rows of the roots first, then exclusive and inclusive rows by
// their share of the metric's total. It marks the metrics whose rows
// are all there as complete.
func (m *pageModel) rows(sums [][]float64, metrics []jsMetric, budget int) ([]jsRow, int) {
	n, nloc := len(m.parent), len(m.locs)
	rowBytes := (nloc*8+2)/3*4 + 24
	type cand struct {
		m, c  int
		incl  bool
		score float64
	}
	var cands []cand
	nonzero := 0
	for _, rows := range m.values {
		for _, row := range rows {
			if slices.ContainsFunc(row, func(x float64) bool { return x != 0 }) {
				nonzero++
			}
		}
	}
	all := nonzero*rowBytes <= budget
	// end[c] is one past the last call path of c's subtree (preorder)
	end := make([]int, n)
	for cp := n - 1; cp >= 0; cp-- {
		end[cp] = max(end[cp], cp+1)
		if p := m.parent[cp]; p >= 0 {
			end[p] = max(end[p], end[cp])
		}
	}
	leaf := func(cp int) bool { return end[cp] == cp+1 }
	for mi, rows := range m.values {
		if rows == nil {
			continue
		}
		var abs float64
		for _, x := range sums[mi] {
			abs += math.Abs(x)
		}
		if abs == 0 {
			abs = 1
		}
		incl := slices.Clone(sums[mi])
		for cp := n - 1; cp >= 0; cp-- {
			if p := m.parent[cp]; p >= 0 {
				incl[p] += incl[cp]
			}
		}
		for cp, row := range rows {
			if slices.ContainsFunc(row, func(x float64) bool { return x != 0 }) {
				cands = append(cands, cand{mi, cp, false, math.Abs(sums[mi][cp])/abs + 1e-300})
			}
			if all || leaf(cp) {
				continue
			}
			if m.parent[cp] < 0 {
				cands = append(cands, cand{mi, cp, true, 2})
			} else if incl[cp] != 0 {
				cands = append(cands, cand{mi, cp, true, math.Abs(incl[cp]) / abs})
			}
		}
	}
	if !all {
		sort.SliceStable(cands, func(a, b int) bool { return cands[a].score > cands[b].score })
	}
	var out []jsRow
	have := make([]int, len(m.values)) // exclusive rows kept, by metric
	want := make([]int, len(m.values))
	for _, c := range cands {
		if !c.incl {
			want[c.m]++
		}
	}
	for _, c := range cands {
		if budget < rowBytes {
			break
		}
		var row []float64
		if c.incl {
			row = make([]float64, nloc)
			for _, r := range m.values[c.m][c.c:end[c.c]] {
				for l, x := range r {
					row[l] += x
				}
			}
		} else {
			row = m.values[c.m][c.c]
			have[c.m]++
		}
		out = append(out, jsRow{Metric: c.m, Callpath: c.c, Incl: c.incl, Values: b64f64(row)})
		budget -= rowBytes
	}
	for mi := range metrics {
		metrics[mi].Complete = have[mi] == want[mi]
	}
	return out, nonzero
}

// pageTopo is a Cartesian topology as the page shows it.
type pageTopo struct {
	name string
	dims []cube.Dim
	// threads: the cells are threads (locations), as in Score-P's
	// "Process x Thread" topology of a hybrid trace; else ranks.
	threads bool
	cells   []topoCell
}

// topoCell places a rank (thread 0 when the topology's cells are
// ranks) or a thread at pos.
type topoCell struct {
	rank, thread int
	pos          []int
}

// otf2Topologies returns the trace's Cartesian topologies (cartesians)
// as the page shows them; a topology it cannot make (an undefined
// dimension) is left out, which the CUBE report refuses.
func otf2Topologies(d *otf2.Defs, pl map[uint64]localtrace.Placement) []pageTopo {
	cs, _ := cartesians(d, pl)
	var out []pageTopo
	for _, c := range cs {
		if len(c.dims) == 0 {
			continue
		}
		pt := pageTopo{name: c.name, dims: c.dims}
		for _, cell := range c.cells {
			p := pl[cell.loc]
			pt.cells = append(pt.cells, topoCell{rank: p.Rank, thread: p.Thread, pos: cell.pos})
		}
		out = append(out, pt.finish())
	}
	return out
}

// cubeTopologies returns a CUBE report's Cartesian topologies with the
// location (or location group: a rank) of each coordinate; coordinates
// of system-tree nodes are left out.
func cubeTopologies(c *cube.Report) []pageTopo {
	if len(c.Topologies) == 0 {
		return nil
	}
	locs := map[int]*cube.Location{}
	for _, l := range c.Locations() {
		locs[l.ID] = l
	}
	groups := map[int]*cube.LocationGroup{}
	for _, n := range c.AllSystemNodes() {
		for _, g := range n.Groups {
			groups[g.ID] = g
		}
	}
	var out []pageTopo
	for _, t := range c.Topologies {
		if len(t.Dims) == 0 {
			continue
		}
		pt := pageTopo{name: t.Name, dims: slices.Clone(t.Dims)}
		for _, co := range t.Coords {
			if len(co.Pos) != len(t.Dims) {
				continue
			}
			switch co.Kind {
			case cube.CoordLocation:
				if l := locs[co.ID]; l != nil && l.Group != nil {
					pt.cells = append(pt.cells, topoCell{rank: l.Group.Rank, thread: l.Rank, pos: slices.Clone(co.Pos)})
				}
			case cube.CoordGroup:
				if g := groups[co.ID]; g != nil {
					pt.cells = append(pt.cells, topoCell{rank: g.Rank, pos: slices.Clone(co.Pos)})
				}
			}
		}
		out = append(out, pt.finish())
	}
	return out
}

// finish drops the cells outside the grid and decides whether the
// cells are threads: when one is not a master thread.
func (t pageTopo) finish() pageTopo {
	t.cells = slices.DeleteFunc(t.cells, func(c topoCell) bool {
		for k, x := range c.pos {
			if x < 0 || x >= t.dims[k].Size {
				return true
			}
		}
		return false
	})
	t.threads = slices.ContainsFunc(t.cells, func(c topoCell) bool { return c.thread != 0 })
	return t
}

// topoData lays out the topologies, identical ones once, within budget
// bytes; it returns them and their size.
func (m *pageModel) topoData(budget int) ([]jsTopo, int) {
	var out []jsTopo
	seen := map[string]int{}
	used := 0
	for _, t := range m.topos {
		jt := jsTopo{Name: t.name, Threads: t.threads, Count: 1, Rank: []int{}, Coords: []int{}}
		for _, d := range t.dims {
			jt.Dims = append(jt.Dims, jsDim{Name: d.Name, Size: d.Size, Periodic: d.Periodic})
		}
		for _, c := range t.cells {
			jt.Rank = append(jt.Rank, c.rank)
			if t.threads {
				jt.Thread = append(jt.Thread, c.thread)
			}
			jt.Coords = append(jt.Coords, c.pos...)
		}
		b, err := json.Marshal(&jt)
		if err != nil {
			panic(err) // only strings and numbers
		}
		if i, ok := seen[string(b)]; ok {
			out[i].Count++
			continue
		}
		if used+len(b) > budget {
			m.notes = append(m.notes, fmt.Sprintf("To stay small, this page leaves out the Cartesian topology %q (%d cells).", t.name, len(t.cells)))
			continue
		}
		seen[string(b)] = len(out)
		out = append(out, jt)
		used += len(b)
	}
	return out, used
}

// commData lays out the point-to-point traffic: the matrix (ranks
// grouped in blocks beyond maxCommPairs pairs), the pairs with the most
// bytes, the message sizes.
func (m *pageModel) commData(ranks int) *jsComm {
	cs := m.comm
	c := &jsComm{Ranks: ranks, Block: 1, Pairs: len(cs.Pairs), Sizes: slices.Clone(cs.Sizes)}
	if c.Sizes == nil {
		c.Sizes = []uint64{}
	}
	for _, p := range cs.Pairs {
		c.Ranks = max(c.Ranks, int(p.From)+1, int(p.To)+1)
		c.TotalMsgs += p.Messages + p.Syncs
		c.TotalSyncs += p.Syncs
		c.TotalBytes += p.Bytes
	}
	if len(cs.Pairs) > maxCommPairs {
		c.Block = (c.Ranks + 63) / 64
	}
	type key struct{ from, to int }
	cells := map[key]*jsPair{}
	var order []key
	for _, p := range cs.Pairs {
		k := key{int(p.From) / c.Block, int(p.To) / c.Block}
		e := cells[k]
		if e == nil {
			e = &jsPair{From: int32(k.from), To: int32(k.to)}
			cells[k] = e
			order = append(order, k)
		}
		e.Msgs += p.Messages + p.Syncs
		e.Bytes += p.Bytes
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].from != order[j].from {
			return order[i].from < order[j].from
		}
		return order[i].to < order[j].to
	})
	from, to := make([]uint32, len(order)), make([]uint32, len(order))
	msgs, byts := make([]float64, len(order)), make([]float64, len(order))
	for i, k := range order {
		e := cells[k]
		from[i], to[i], msgs[i], byts[i] = uint32(e.From), uint32(e.To), float64(e.Msgs), float64(e.Bytes)
	}
	c.From, c.To, c.Msgs, c.Bytes = b64u32(from), b64u32(to), b64f64(msgs), b64f64(byts)
	top := slices.Clone(cs.Pairs)
	sort.SliceStable(top, func(i, j int) bool {
		if top[i].Bytes != top[j].Bytes {
			return top[i].Bytes > top[j].Bytes
		}
		return top[i].Messages+top[i].Syncs > top[j].Messages+top[j].Syncs
	})
	for _, p := range top[:min(len(top), 10)] {
		c.Top = append(c.Top, jsPair{From: p.From, To: p.To, Msgs: p.Messages + p.Syncs, Bytes: p.Bytes})
	}
	if c.Top == nil {
		c.Top = []jsPair{}
	}
	return c
}

// b64f64 encodes doubles as base64 of their little-endian bytes.
func b64f64(v []float64) string {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// b64u32 encodes unsigned integers as base64 of their little-endian
// bytes.
func b64u32(v []uint32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return base64.StdEncoding.EncodeToString(b)
}
