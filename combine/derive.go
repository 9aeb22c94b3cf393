package combine

import (
	"slices"
	"sort"
	"strings"

	"scout/cube"
	"scout/localtrace"
	"scout/localtrace/otf2"
	"scout/patterns"
	"scout/unify"
)

// Profile is a dense table of metric values over a call tree and a set of
// locations. Values are call-path exclusive and metric inclusive, like the
// CSV output.
type Profile struct {
	// Callpaths is the call tree in the order of the call-path ids (a
	// parent precedes its children): with OpenMP, the derived values
	// depend on it (see deriver.idleThreads).
	Callpaths []Callpath
	// Locations gives the rank and thread of each location column.
	Locations []localtrace.Placement
	// Values maps a metric's unique name to its values indexed
	// [call path][location]. A nil row stands for a call path whose values
	// are all zero; a missing metric is zero everywhere.
	Values map[string][][]float64
	// Skipped are the parts of the analysis that did not run: their
	// metrics, and those derived from them, do not exist.
	Skipped patterns.Parts
	// Grid2D: the trace defines a 2-D process grid the wavefront refill
	// patterns analyze (patterns.HasWavefrontGrid); without one their
	// four corner metrics do not exist. Grid3D: likewise a 3-D grid, and
	// the eight octant metrics. A trace with grids of both kinds has
	// both sets.
	Grid2D, Grid3D bool
}

// Callpath is one node of a Profile's call tree.
type Callpath struct {
	Parent int // index of the parent call path, -1 for a root
	Region RegionInfo
}

// Derived is the derived metric tree of a Profile with its values.
type Derived struct {
	// Metrics lists the metrics that exist for the profile, in report
	// (preorder) order.
	Metrics []MetricDef
	// Values holds each metric's values indexed [call path][location],
	// with the Profile's conventions. Copied metrics share the rows of the
	// input profile, but for time with OpenMP, which includes idle threads.
	Values map[string][][]float64
}

// Derive computes Scalasca's user-facing metric tree (what `square`, i.e.
// cube_remap2 with scout.spec, makes of scout's report) from the metrics
// the analysis computes.
//
// A metric exists when the paradigm it describes occurs among the call
// paths' callee regions (the MPI metrics need an MPI region, OpenMP ones an
// OpenMP region, and so on); time, execution, computation, overhead, visits
// and the imbalance metrics always exist. The metrics of a part of the
// analysis that did not run (Profile.Skipped: the root causes, the
// critical path), and those derived from them, do not exist, nor do the
// wavefront refill metrics of a trace without a 2-D (3-D) process grid
// (Profile.Grid2D, Grid3D). Copied metrics absent from the profile are zero.
//
// With OpenMP, the time is first completed as the reference's remapper
// does: each worker thread is idle (omp_idle_threads) for as long as its
// master runs outside OpenMP constructs, and at a construct for as long
// as its time there falls short of its master's (omp_limited_parallelism,
// part of the idle time). Time includes the idle time; execution and the
// metrics of the call-path categories leave it out. The constructs are
// found in a walk over the call paths in the Profile's order, which must
// be that of the call-path ids (Profile.Callpaths).
func Derive(p *Profile) *Derived {
	d := &deriver{p: p, nloc: len(p.Locations), out: map[string][][]float64{}}
	d.classes = make([]class, len(p.Callpaths))
	for i, cp := range p.Callpaths {
		d.classes[i] = classify(cp.Region)
		d.present |= d.classes[i]
	}
	if p.Grid2D {
		d.present |= hasGrid2D
	}
	if p.Grid3D {
		d.present |= hasGrid3D
	}
	res := &Derived{Values: d.out}
	for _, m := range metricTree {
		if d.exists(m) {
			res.Metrics = append(res.Metrics, m)
			d.get(m.Unique)
		}
	}
	return res
}

type deriver struct {
	p       *Profile
	nloc    int
	classes []class // per call path
	present class   // union of classes: the paradigm flags
	out     map[string][][]float64
}

func (d *deriver) exists(m MetricDef) bool {
	return (m.needs == 0 || d.present&m.needs != 0) && m.part&d.p.Skipped == 0
}

// get returns the values of metric name, computing them on first use; nil
// for a metric that does not exist or is not in the tree.
func (d *deriver) get(name string) [][]float64 {
	if v, ok := d.out[name]; ok {
		return v
	}
	i, ok := metricIndex[name]
	if !ok || !d.exists(metricTree[i]) {
		return nil
	}
	m := metricTree[i]
	var v [][]float64
	switch m.Origin {
	case Copied:
		if name == "time" && d.present&hasOpenMP != 0 {
			d.idleThreads()
			return d.out[name]
		}
		v = d.p.Values[name]
		if v == nil {
			v = make([][]float64, len(d.p.Callpaths))
		}
	case Masked:
		v = make([][]float64, len(d.p.Callpaths))
		terms := d.resolve(m.terms)
		for cp := range v {
			if d.classes[cp]&m.mask != 0 {
				v[cp] = d.sum(terms, cp)
			}
		}
	case Summed:
		v = make([][]float64, len(d.p.Callpaths))
		terms := d.resolve(m.terms)
		for cp := range v {
			v[cp] = d.sum(terms, cp)
		}
	case Remapped:
		switch name {
		case "omp_idle_threads", "omp_limited_parallelism":
			d.idleThreads()
		default:
			d.imbalance()
		}
		return d.out[name]
	case Formula:
		switch name {
		case "critical_path_imbalance":
			v = d.criticalPathImbalance(m)
		default:
			panic("combine: no formula for metric " + name)
		}
	}
	d.out[name] = v
	return v
}

// term is a resolved summand: a metric's values and a sign.
type term struct {
	v   [][]float64
	neg bool
}

func (d *deriver) resolve(names []string) []term {
	var ts []term
	for _, n := range names {
		neg := strings.HasPrefix(n, "-")
		if v := d.get(strings.TrimPrefix(n, "-")); v != nil {
			ts = append(ts, term{v, neg})
		}
	}
	return ts
}

// sum adds up the terms' rows at call path cp; nil when all are nil.
func (d *deriver) sum(ts []term, cp int) []float64 {
	var row []float64
	for _, t := range ts {
		src := t.v[cp]
		if src == nil {
			continue
		}
		if row == nil {
			row = make([]float64, d.nloc)
		}
		for l, x := range src {
			if t.neg {
				row[l] -= x
			} else {
				row[l] += x
			}
		}
	}
	return row
}

// inclusive returns the call-path inclusive values of v: each call path's
// row plus its descendants'; nil rows where all of them are zero.
func (d *deriver) inclusive(v [][]float64) [][]float64 {
	incl := make([][]float64, len(v))
	for cp, row := range v {
		if row != nil {
			incl[cp] = slices.Clone(row)
		}
	}
	for cp := len(incl) - 1; cp >= 0; cp-- { // children follow their parents
		row, parent := incl[cp], d.p.Callpaths[cp].Parent
		if row == nil || parent < 0 {
			continue
		}
		if incl[parent] == nil {
			incl[parent] = make([]float64, d.nloc)
		}
		for l, x := range row {
			incl[parent][l] += x
		}
	}
	return incl
}

// criticalPathImbalance computes the critical path's imbalance, after the
// formula of Scalasca's remapping specification (scout-patterns.md §3.4).
// Per call path c, with call-path inclusive values summed over all N
// locations, the critical path's time CP(c) is set against the average
// time per location outside wait states, W(c)/N (m's terms). Where the
// critical path is the longer, the excess's share (CP − W/N)/CP of each
// location's exclusive critical-path time at c is imbalance; it is booked
// only at locations whose inclusive critical-path time at c is positive.
func (d *deriver) criticalPathImbalance(m MetricDef) [][]float64 {
	n := len(d.p.Callpaths)
	cp := d.get("critical_path")
	v := make([][]float64, n)
	if cp == nil {
		return v
	}
	terms := d.resolve(m.terms)
	work := make([][]float64, n)
	for c := range work {
		work[c] = d.sum(terms, c)
	}
	cpIncl, workIncl := d.inclusive(cp), d.inclusive(work)
	for c := range n {
		if cp[c] == nil || cpIncl[c] == nil {
			continue
		}
		var total, busy float64
		for l := range d.nloc {
			total += cpIncl[c][l]
			if workIncl[c] != nil {
				busy += workIncl[c][l]
			}
		}
		if total <= 0 {
			continue
		}
		share := max(0, (total-busy/float64(d.nloc))/total)
		if share == 0 {
			continue
		}
		for l, x := range cp[c] {
			if cpIncl[c][l] > 0 && x != 0 {
				if v[c] == nil {
					v[c] = make([]float64, d.nloc)
				}
				v[c][l] = share * x
			}
		}
	}
	return v
}

// minLimitedParallelism is the smallest shortfall of a thread's time in an
// OpenMP construct behind its master's that the remapper books as limited
// parallelism; smaller ones are rounding noise.
const minLimitedParallelism = 1e-10

// idleThreads performs the remapper's idle-thread step for OpenMP
// (cube_remap2's treatment of Scalasca's thread metrics). From the
// profile's exclusive time it computes omp_idle_threads and
// omp_limited_parallelism, and the time with the idle time added.
//
// The remapper walks the call paths in the order of their ids
// (Profile.Callpaths) and tracks their depth. An OpenMP call path (its
// callee is an OpenMP region) met outside a construct opens a construct,
// rooted there, usually a parallel region or an OpenMP call outside one
// (such as omp_init_lock); the call paths that follow belong to the
// construct until one is at most as deep as its root. The others are
// serial. So a call path below a parallel region that only a later rank
// visits, and which is numbered after the construct has closed, is
// serial.
//
// At a serial call path each worker thread of a rank is idle for as long
// as its master ran there. At the root of a construct, a thread whose
// time in the construct (summed over its call paths) falls short of its
// master's by d ≥ 1e-10 is idle for d, which is limited parallelism.
// Either idle time is added to the thread's time there. Master threads
// are never idle.
func (d *deriver) idleThreads() {
	if _, done := d.out["omp_idle_threads"]; done {
		return
	}
	n := len(d.p.Callpaths)
	time, idle, limited := make([][]float64, n), make([][]float64, n), make([][]float64, n)
	d.out["time"], d.out["omp_idle_threads"], d.out["omp_limited_parallelism"] = time, idle, limited
	in := d.p.Values["time"]
	if in == nil {
		in = make([][]float64, n)
	}
	for cp, row := range in {
		if row != nil {
			time[cp] = slices.Clone(row)
		}
	}
	add := func(v [][]float64, cp, l int, x float64) {
		if v[cp] == nil {
			v[cp] = make([]float64, d.nloc)
		}
		v[cp][l] += x
	}

	// master[l] is the location of l's master thread, -1 for none.
	master := make([]int, d.nloc)
	masterOf := map[int]int{}
	for l, pl := range d.p.Locations {
		if pl.Thread == 0 {
			masterOf[pl.Rank] = l
		}
	}
	for l, pl := range d.p.Locations {
		master[l] = -1
		if m, ok := masterOf[pl.Rank]; ok && m != l {
			master[l] = m
		}
	}

	// root[cp] is the root of the OpenMP construct cp belongs to, -1 for a
	// serial call path, as the walk in call-path order finds them.
	root := make([]int, n)
	depth := make([]int, n)
	cur := -1 // root of the current construct
	for cp, c := range d.p.Callpaths {
		if c.Parent >= 0 {
			depth[cp] = depth[c.Parent] + 1
		}
		if cur >= 0 && depth[cp] <= depth[cur] {
			cur = -1
		}
		if cur < 0 && d.classes[cp]&hasOpenMP != 0 {
			cur = cp
		}
		root[cp] = cur
	}

	// Serial call paths: the workers idle while their master runs.
	for cp, row := range in {
		if root[cp] >= 0 || row == nil {
			continue
		}
		for l, m := range master {
			if m >= 0 && row[m] != 0 {
				add(idle, cp, l, row[m])
				add(time, cp, l, row[m])
			}
		}
	}

	// OpenMP constructs: a thread's time short of its master's.
	incl := make([][]float64, n)
	for cp, row := range in {
		r := root[cp]
		if r < 0 || row == nil {
			continue
		}
		if incl[r] == nil {
			incl[r] = make([]float64, d.nloc)
		}
		for l, x := range row {
			incl[r][l] += x
		}
	}
	for cp, row := range incl {
		if row == nil {
			continue
		}
		for l, m := range master {
			if m < 0 {
				continue
			}
			if short := row[m] - row[l]; short >= minLimitedParallelism {
				add(limited, cp, l, short)
				add(idle, cp, l, short)
				add(time, cp, l, short)
			}
		}
	}
}

// imbalance computes the remapper's computational imbalance heuristic from
// the computation time (see scout-patterns.md §1.4). Per call path, the
// average computation time over the participating locations (the
// processes' master threads, and all threads inside OpenMP parallel
// regions) is the reference: a location above it is overloaded by the
// difference, one below it underloaded. Locations that never visited a call
// path others spent time in are underloaded by the whole average
// (non-participation); when only one location visited it, the others'
// share is a singularity and the visitor's excess is "single participant".
func (d *deriver) imbalance() {
	n := len(d.p.Callpaths)
	names := []string{"imbalance", "imbalance_above", "imbalance_above_single",
		"imbalance_below", "imbalance_below_bypass", "imbalance_below_singularity"}
	vals := make([][][]float64, len(names))
	for i, name := range names {
		vals[i] = make([][]float64, n)
		d.out[name] = vals[i]
	}
	imb, above, single, below, bypass, singular := vals[0], vals[1], vals[2], vals[3], vals[4], vals[5]
	set := func(v [][]float64, cp, l int, x float64) {
		if v[cp] == nil {
			v[cp] = make([]float64, d.nloc)
		}
		v[cp][l] = x
	}

	comp, visits := d.get("comp"), d.get("visits")
	inParallel := make([]bool, n)
	for cp, c := range d.p.Callpaths {
		r := c.Region
		inParallel[cp] = r.Paradigm == otf2.ParadigmOpenMP && r.Role == otf2.RoleParallel ||
			c.Parent >= 0 && inParallel[c.Parent]
	}
	for cp := range n {
		row := comp[cp]
		if row == nil {
			continue // every location has zero computation time: no imbalance
		}
		participates := func(l int) bool { return inParallel[cp] || d.p.Locations[l].Thread == 0 }
		var total float64
		var count int
		for l, x := range row {
			if participates(l) {
				total += x
				count++
			}
		}
		avg := total / float64(count)
		visitors, visitor := 0, -1
		for l, x := range row {
			if !participates(l) {
				continue
			}
			switch dev := x - avg; {
			case dev > 0:
				set(imb, cp, l, dev)
				set(above, cp, l, dev)
			case dev < 0:
				set(imb, cp, l, -dev)
				set(below, cp, l, -dev)
			}
			if visits[cp] != nil && visits[cp][l] != 0 {
				visitors++
				visitor = l
			}
		}
		if avg == 0 || visitors == count {
			continue
		}
		for l := range row {
			if !participates(l) || visits[cp] != nil && visits[cp][l] != 0 {
				continue
			}
			set(bypass, cp, l, avg)
			if visitors == 1 {
				set(singular, cp, l, avg)
			}
		}
		if visitors == 1 {
			set(single, cp, visitor, avg*float64(count-1))
		}
	}
}

// Cells lists the non-zero values of the derived metrics in the canonical
// order of Report.Cells; p is the profile they were derived from.
func (d *Derived) Cells(p *Profile) []Cell {
	names := p.CallpathNames()
	labels := make([]string, len(p.Locations))
	for l, pl := range p.Locations {
		labels[l] = pl.Label()
	}
	var cells []Cell
	for _, m := range d.Metrics {
		for cp, row := range d.Values[m.Unique] {
			for l, x := range row {
				if x != 0 {
					cells = append(cells, Cell{Metric: m.Unique, Callpath: names[cp], Rank: labels[l], Value: x, Integer: m.Integer})
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

// CallpathNames returns each call path's key (cube.PathKeys): its
// region names from the root, joined by '/'.
func (p *Profile) CallpathNames() []string {
	parent, name := make([]int, len(p.Callpaths)), make([]string, len(p.Callpaths))
	for i, cp := range p.Callpaths {
		parent[i], name[i] = cp.Parent, cp.Region.Name
	}
	return cube.PathKeys(parent, name)
}

// Profile returns the report's values as a Profile: the call tree with
// each callee region's name, paradigm, role and source file, the locations
// in the order of Results, and the values of every metric of the report.
func (r *Report) Profile() *Profile {
	p := &Profile{
		Callpaths: make([]Callpath, len(r.Tree.Nodes)),
		Locations: make([]localtrace.Placement, len(r.Results)),
		Values:    make(map[string][][]float64, len(r.Metrics)),
		Skipped:   r.Skipped,
		Grid2D:    patterns.HasWavefrontGrid(r.Defs, 2),
		Grid3D:    patterns.HasWavefrontGrid(r.Defs, 3),
	}
	for i, n := range r.Tree.Nodes {
		cp := Callpath{Parent: -1, Region: RegionInfo{Name: r.RegionName(n.Region)}}
		if n.Parent != unify.None {
			cp.Parent = int(n.Parent)
		}
		if reg, ok := r.Defs.Region(n.Region); ok {
			cp.Region.Paradigm, cp.Region.Role = reg.Paradigm, reg.Role
			cp.Region.File = r.Defs.Str(reg.File)
		}
		p.Callpaths[i] = cp
	}
	for l, res := range r.Results {
		p.Locations[l] = r.Placements[res.Location]
	}
	nloc := len(r.Results)
	for id, m := range r.Metrics {
		var rows [][]float64
		for l, res := range r.Results {
			for cp, x := range res.Row(id) {
				if x == 0 {
					continue
				}
				if rows == nil {
					rows = make([][]float64, len(r.Tree.Nodes))
				}
				if rows[cp] == nil {
					rows[cp] = make([]float64, nloc)
				}
				rows[cp][l] = x
			}
		}
		if rows != nil {
			p.Values[m.Name] = rows
		}
	}
	return p
}
