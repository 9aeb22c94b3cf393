package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"scout/analysis"
	"scout/combine"
	"scout/cube"
	"scout/internal/tracetest"
	"scout/patterns"
)

// refill2D and refill3D are the wavefront refill refinements of Late
// Sender, metrics of scout's own: by corner of a 2-D grid, by octant
// corner of a 3-D grid; refillMetrics are both, in the report's order.
var (
	refill2D = []string{"mpi_latesender_refill_nw", "mpi_latesender_refill_ne", "mpi_latesender_refill_sw",
		"mpi_latesender_refill_se"}
	refill3D = []string{"mpi_latesender_refill_nwf", "mpi_latesender_refill_nef", "mpi_latesender_refill_swf",
		"mpi_latesender_refill_sef", "mpi_latesender_refill_nwb", "mpi_latesender_refill_neb",
		"mpi_latesender_refill_swb", "mpi_latesender_refill_seb"}
	refillMetrics = append(slices.Clone(refill2D), refill3D...)
)

// ownMetrics are the metrics of scout's own (patterns.Metric.Own), which
// the comparisons with the reference analyzer's results leave out.
func ownMetrics() []string {
	var out []string
	for _, m := range patterns.Catalog {
		if m.Own {
			out = append(out, m.Name)
		}
	}
	return out
}

// TestRefillClosedForm generates wavefront traces that sweep from the
// four corners in turn (tracegen's sweeps), on 4×4 and 8×2 grids, in
// several orders, with repeated corners, with phases of another kind on
// the same grid in between, and likewise from the eight octant corners
// of 2×2×2, 3×2×2 and 4×2×2 grids, and with a 2-D and a 3-D grid in one
// trace, and analyzes them: every cell of the closed
// form (time, visits, the wait states and the refill metrics, which
// tracegen derives from the timelines) equals the analysis's within
// 1e-9, the analysis has no cell of these metrics the closed form does
// not list, and the refill metrics sum to at most Late Sender per call
// path and rank. has are metrics the closed form must list.
func TestRefillClosedForm(t *testing.T) {
	tests := []struct {
		name string
		args []string
		has  []string
	}{
		{"4x4 nw+se+ne+sw", []string{"--ranks", "16", "-i", "8", "--seed", "3",
			"--phase", "wavefront_2d:work=1ms,imbalance=100us,jitter=1ms,sweeps=nw+se+ne+sw"}, refill2D},
		{"4x4 every order", []string{"--ranks", "16", "-i", "5", "--seed", "4",
			"--phase", "wavefront_2d:work=1ms,imbalance=50us,jitter=500us,sweeps=nw+ne+sw+se,name=order_1",
			"--phase", "wavefront_2d:work=1ms,delay=2ms,jitter=500us,sweeps=se+sw+ne+nw,name=order_2",
			"--phase", "wavefront_2d:work=1ms,jitter=2ms,sweeps=ne+sw+nw+se,name=order_3",
			"--phase", "wavefront_2d:work=1ms,imbalance=200us,sweeps=sw+ne+se+nw,name=order_4"}, refill2D},
		{"8x2", []string{"--ranks", "16", "-i", "6", "--seed", "5",
			"--phase", "wavefront_2d:work=1ms,imbalance=100us,jitter=1ms,dims=8x2,sweeps=nw+sw+ne+se"}, refill2D},
		{"2x8 repeated corners", []string{"--ranks", "16", "-i", "7", "--seed", "6",
			"--phase", "wavefront_2d:work=1ms,jitter=1ms,dims=2x8,sweeps=se+se+nw+nw+ne"},
			[]string{"mpi_latesender_refill_nw", "mpi_latesender_refill_ne", "mpi_latesender_refill_se"}},
		{"halo in between", []string{"--ranks", "12", "-i", "3", "--seed", "7",
			"--phase", "wavefront_2d:work=1ms,jitter=1ms,dims=4x3,sweeps=nw+se,name=first",
			"--phase", "halo_2d:work=1ms,jitter=1ms,dims=4x3",
			"--phase", "wavefront_2d:work=1ms,jitter=1ms,dims=4x3,sweeps=nw+sw,name=second",
			"--phase", "late_sender:work=1ms,delay=1ms"},
			[]string{"mpi_latesender_refill_nw", "mpi_latesender_refill_sw", "mpi_latesender_refill_se"}},
		{"2x2x2 nwf+seb+nef+swb", []string{"--ranks", "8", "-i", "8", "--seed", "10",
			"--phase", "wavefront_3d:work=1ms,imbalance=100us,jitter=1ms,sweeps=nwf+seb+nef+swb"},
			[]string{"mpi_latesender_refill_nwf", "mpi_latesender_refill_seb", "mpi_latesender_refill_nef", "mpi_latesender_refill_swb"}},
		{"3x2x2 every octant", []string{"--ranks", "12", "-i", "9", "--seed", "11",
			"--phase", "wavefront_3d:work=1ms,imbalance=50us,jitter=1ms,dims=3x2x2,sweeps=nwf+seb+nef+swb+neb+swf+nwb+sef"}, refill3D},
		{"4x2x2 orders and repeated octants", []string{"--ranks", "16", "-i", "7", "--seed", "12",
			"--phase", "wavefront_3d:work=1ms,delay=2ms,jitter=500us,dims=4x2x2,sweeps=seb+seb+nwf+nwf+neb,name=order_1",
			"--phase", "wavefront_3d:work=1ms,imbalance=200us,dims=4x2x2,sweeps=swf+nef+sef,name=order_2"},
			[]string{"mpi_latesender_refill_nwf", "mpi_latesender_refill_neb", "mpi_latesender_refill_seb",
				"mpi_latesender_refill_swf", "mpi_latesender_refill_nef", "mpi_latesender_refill_sef"}},
		// equal compute times: Late Receivers where a send waits for a
		// receive of the next step
		{"3x3x2 late receivers", []string{"--ranks", "18", "-i", "3",
			"--phase", "wavefront_3d:work=1ms,dims=3x3x2,sweeps=nwf+seb+swb"},
			[]string{"mpi_latesender_refill_seb", "mpi_latesender_refill_swb", "mpi_latereceiver"}},
		{"3-D halo in between", []string{"--ranks", "12", "-i", "3", "--seed", "13",
			"--phase", "wavefront_3d:work=1ms,jitter=1ms,dims=3x2x2,sweeps=nwf+seb,name=first",
			"--phase", "halo_3d:work=1ms,jitter=1ms,dims=3x2x2",
			"--phase", "wavefront_3d:work=1ms,jitter=1ms,dims=3x2x2,sweeps=nwf+swb,name=second"},
			[]string{"mpi_latesender_refill_nwf", "mpi_latesender_refill_seb", "mpi_latesender_refill_swb"}},
		{"2-D and 3-D grids", []string{"--ranks", "8", "-i", "4", "--seed", "14",
			"--phase", "wavefront_2d:work=1ms,jitter=1ms,dims=4x2,sweeps=nw+se",
			"--phase", "wavefront_3d:work=1ms,jitter=1ms,dims=2x2x2,sweeps=neb+swf"},
			[]string{"mpi_latesender_refill_nw", "mpi_latesender_refill_se", "mpi_latesender_refill_neb", "mpi_latesender_refill_swf"}},
		// one corner: no refill (the first wavefront has no predecessor)
		{"one corner", []string{"--ranks", "9", "-i", "4", "--seed", "8",
			"--phase", "wavefront_2d:work=1ms,jitter=1ms,sweeps=sw"}, nil},
		// a grid of one column is no 2-D grid
		{"one column", []string{"--ranks", "6", "-i", "4",
			"--phase", "wavefront_2d:work=1ms,imbalance=100us,dims=6x1,sweeps=nw+sw"}, nil},
		{"one octant", []string{"--ranks", "8", "-i", "4", "--seed", "15",
			"--phase", "wavefront_3d:work=1ms,jitter=1ms,sweeps=seb"}, nil},
		// a grid of one layer is no 3-D grid
		{"one layer", []string{"--ranks", "6", "-i", "4",
			"--phase", "wavefront_3d:work=1ms,imbalance=100us,dims=3x2x1,sweeps=nwf+seb"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, got := closedFormCells(t, tc.args...)
			if d := cmp.Diff(want, got, cellsApprox); d != "" {
				t.Errorf("analysis differs from the closed form (-want +got):\n%s", d)
			}
			for _, m := range tc.has {
				found := false
				for k := range want {
					found = found || strings.HasPrefix(k, m+" ")
				}
				if !found {
					t.Errorf("closed form has no %s", m)
				}
			}
			// all refill metrics together stay within Late Sender
			refill := map[string]float64{}
			for k, v := range got {
				if m, at, _ := strings.Cut(k, " "); slices.Contains(refillMetrics, m) {
					refill[at] += v
				}
			}
			for at, v := range refill {
				if late := got["mpi_latesender "+at]; v > late*(1+1e-12) {
					t.Errorf("%s: refill %g > Late Sender %g", at, v, late)
				}
			}
		})
	}
}

// TestRefillMPI analyzes sweep traces over a 2-D and a 3-D grid under
// mpirun (a process per rank, and fewer processes hosting several
// ranks) and checks that their CSV and statistics equal the in-process
// run's.
func TestRefillMPI(t *testing.T) {
	bin := buildMPI(t)
	for _, tc := range []struct {
		name   string
		ranks  int
		phase  string
		refill string // a refill metric the analysis finds
	}{
		{"4x2", 8, "wavefront_2d:work=1ms,jitter=1ms,dims=4x2,sweeps=nw+se+sw+ne", "mpi_latesender_refill_se"},
		{"2x2x2", 8, "wavefront_3d:work=1ms,jitter=1ms,dims=2x2x2,sweeps=nwf+seb+swb+nef", "mpi_latesender_refill_swb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			trace := filepath.Join(dir, "trace")
			if err := run([]string{"tracegen", "-q", "-o", trace, "--ranks", itoa(tc.ranks), "-i", "6", "--seed", "9",
				"--phase", tc.phase}, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(dir, "want")
			if err := run([]string{"-q", "-o", want, "--csv", filepath.Join(want, "scout.csv"), trace}, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(readFile(t, filepath.Join(want, "scout.csv"))), tc.refill) {
				t.Fatalf("the in-process analysis has no %s", tc.refill)
			}
			for _, np := range []int{tc.ranks, 3} {
				got := filepath.Join(dir, "np"+itoa(np))
				if b, err := mpirun(np, bin, "-q", "-o", got, "--csv", filepath.Join(got, "scout.csv"), trace).CombinedOutput(); err != nil {
					t.Fatalf("mpirun -np %d: %v\n%s", np, err, b)
				}
				for _, f := range []string{"scout.csv", "trace.stat"} {
					if !bytes.Equal(readFile(t, filepath.Join(got, f)), readFile(t, filepath.Join(want, f))) {
						t.Errorf("-np %d: %s differs from the in-process run's", np, f)
					}
				}
			}
		})
	}
}

// gridTraces are the reference traces with a 2-D process grid: those
// that run the patternsuite's wavefront. (The hybrid traces' 2×2
// "Process x Thread" topologies of Score-P are no MPI grids.)
var gridTraces = []string{"ps_wavefront", "ps_mixed_np4", "ps_mixed_np8", "ps_ccv_mixed_np8"}

// TestRefillReferenceTraces analyzes every reference trace: the refill
// metrics sum to at most Late Sender per rank and call path; the four
// of 2-D grids exist (in the derived tree and so in the report) exactly
// for the traces with a 2-D process grid, the eight of 3-D grids for
// none (no reference trace has a 3-D one); and ps_wavefront (the patternsuite's
// sweeps from the four corners, two blocks each, on a new 2×2 grid per
// iteration) has refills from the three corners that follow the first.
func TestRefillReferenceTraces(t *testing.T) {
	grids := 0
	for _, tr := range tracetest.All(t) {
		t.Run(tr.Name, func(t *testing.T) {
			rep, err := analysis.Run(context.Background(), analysis.Plan{Trace: tr.Dir, TimeCorrect: slices.Contains(tr.Flags, "--time-correct")})
			if err != nil {
				t.Fatal(err)
			}
			p := rep.Profile()
			exists, exists3 := 0, 0
			for _, m := range combine.Derive(p).Metrics {
				if slices.Contains(refill3D, m.Unique) {
					exists3++
				}
				if slices.Contains(refillMetrics, m.Unique) {
					exists++
					if m.Parent != "mpi_latesender" || !m.Own {
						t.Errorf("%s: parent %s, own %v", m.Unique, m.Parent, m.Own)
					}
				}
			}
			grid := slices.Contains(gridTraces, strings.TrimSuffix(tr.Name, "+tc"))
			if exists != 4 && grid || exists != 0 && !grid || patterns.HasWavefrontGrid(rep.Defs, 2) != grid ||
				exists3 != 0 || patterns.HasWavefrontGrid(rep.Defs, 3) {
				t.Errorf("%d refill metrics exist (%d of 3-D grids), the trace has a 2-D grid: %v", exists, exists3, grid)
			} else if grid {
				grids++
			}
			ls := p.Values["mpi_latesender"]
			totals := map[string]float64{}
			for _, m := range refillMetrics {
				for cp, row := range p.Values[m] {
					for l, v := range row {
						totals[m] += v
						if v < 0 {
							t.Errorf("%s %s %s: %g", m, p.CallpathNames()[cp], p.Locations[l].Label(), v)
						}
					}
				}
			}
			for cp := range p.Callpaths {
				for l := range p.Locations {
					var sum, late float64
					for _, m := range refillMetrics {
						if rows := p.Values[m]; rows != nil && rows[cp] != nil {
							sum += rows[cp][l]
						}
					}
					if ls != nil && ls[cp] != nil {
						late = ls[cp][l]
					}
					if sum > late*(1+1e-12) {
						t.Errorf("%s rank %s: refill %g > Late Sender %g", p.CallpathNames()[cp], p.Locations[l].Label(), sum, late)
					}
				}
			}
			if tr.Name != "ps_wavefront" {
				return
			}
			for _, m := range refill2D[1:] {
				if !(totals[m] > 0) {
					t.Errorf("ps_wavefront: %s = %g, want > 0", m, totals[m])
				}
			}
			if totals["mpi_latesender_refill_nw"] != 0 {
				t.Errorf("ps_wavefront: refill from NW %g, want 0 (the first sweep on each grid)", totals["mpi_latesender_refill_nw"])
			}
			t.Logf("ps_wavefront: refill NW %g, NE %g, SW %g, SE %g s", totals["mpi_latesender_refill_nw"], totals["mpi_latesender_refill_ne"],
				totals["mpi_latesender_refill_sw"], totals["mpi_latesender_refill_se"])
		})
	}
	if grids == 0 {
		t.Error("no reference trace has a 2-D process grid")
	}
}

// TestRefillInReport: the report (scout.cubex) of a trace with a 2-D
// grid has the refill metrics of 2-D grids below Late Sender, one of a
// trace with a 2-D and a 3-D grid those of both, and one of a trace
// without a grid none.
func TestRefillInReport(t *testing.T) {
	gen := filepath.Join(t.TempDir(), "grids")
	if err := run([]string{"tracegen", "-q", "-o", gen, "--ranks", "8", "-i", "2", "--phase", "wavefront_2d:dims=4x2",
		"--phase", "wavefront_3d:dims=2x2x2"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	traces := filepath.Join(tracetest.Root(), "testdata", "traces")
	for _, tc := range []struct {
		name, trace string
		want        []string
	}{
		{"ps_wavefront", filepath.Join(traces, "ps_wavefront"), refill2D},
		{"ps_late_sender", filepath.Join(traces, "ps_late_sender"), nil},
		{"2-D and 3-D grids", gen, refillMetrics},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			if err := run([]string{"-q", "-o", out, tc.trace}, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			r, err := cube.ReadFile(filepath.Join(out, "scout.cubex"))
			if err != nil {
				t.Fatal(err)
			}
			var children []string
			var walk func(ms []*cube.Metric)
			walk = func(ms []*cube.Metric) {
				for _, m := range ms {
					if m.UniqName == "mpi_latesender" {
						for _, c := range m.Children {
							children = append(children, c.UniqName)
						}
					}
					walk(m.Children)
				}
			}
			walk(r.Metrics)
			var refills []string
			for _, c := range children {
				if slices.Contains(refillMetrics, c) {
					refills = append(refills, c)
				}
			}
			if d := cmp.Diff(tc.want, refills, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("Late Sender's refill children (-want +got):\n%s\nall children: %v", d, children)
			}
		})
	}
}
