package tracegen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"scout/localtrace/otf2"
	"scout/unify"
)

// generateLocal writes scenario name with local definitions only and
// opens the archive.
func generateLocal(t *testing.T, name string) (Scenario, string, *Summary, *otf2.Archive) {
	t.Helper()
	sc := scenarios[name]
	sc.LocalDefs = true
	dir := t.TempDir()
	sum, err := Generate(dir, sc)
	if err != nil {
		t.Fatal(err)
	}
	a, err := otf2.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return sc, dir, sum, a
}

// TestLocalDefs checks an archive written before unification: no global
// definitions, every location numbering its definitions its own way,
// the same files for the same seed, and after unification the profile of
// the closed form.
func TestLocalDefs(t *testing.T) {
	sc, dir, sum, a := generateLocal(t, "mixed")
	if a.Anchor.HasGlobalDefFile || a.Anchor.NumGlobalDefs != 0 || a.Anchor.NumLocations != uint64(sc.Locations) {
		t.Errorf("anchor %+v: want no global definitions and %d locations", a.Anchor, sc.Locations)
	}
	if _, err := a.ReadGlobalDefs(); err == nil || !strings.Contains(err.Error(), "unified") {
		t.Errorf("ReadGlobalDefs: %v", err)
	}
	mainIDs := map[uint32]bool{}
	for r := range sc.Locations {
		ld, err := a.ReadLocalDefs(uint64(r))
		if err != nil {
			t.Fatal(err)
		}
		d := &ld.Defs
		if len(d.Locations) != 1 || d.Locations[0].Self != uint64(r) || d.Locations[0].NumEvents != sum.Events[r] {
			t.Errorf("rank %d: locations %+v, want itself with %d events", r, d.Locations, sum.Events[r])
		}
		for _, reg := range d.Regions {
			if d.Str(reg.Name) == "main" {
				mainIDs[reg.Self] = true
			}
		}
		hasSend := false
		for _, reg := range d.Regions {
			hasSend = hasSend || d.Str(reg.Name) == "MPI_Send"
		}
		if hasSend != (r == 0) {
			t.Errorf("rank %d defines MPI_Send: %v (only rank 0 sends in late_sender)", r, hasSend)
		}
		if len(ld.ClockOffsets) != 2 {
			t.Errorf("rank %d: %d clock offsets", r, len(ld.ClockOffsets))
		}
	}
	if len(mainIDs) < 2 {
		t.Errorf("region main has local ids %v on all ranks: want rank-specific numbering", mainIDs)
	}

	again := t.TempDir()
	if _, err := Generate(again, sc); err != nil {
		t.Fatal(err)
	}
	for r := range sc.Locations {
		for _, ext := range []string{".def", ".evt"} {
			name := filepath.Join("traces", strconv.Itoa(r)+ext)
			x, _ := os.ReadFile(filepath.Join(dir, name))
			y, _ := os.ReadFile(filepath.Join(again, name))
			if len(x) == 0 || string(x) != string(y) {
				t.Errorf("%s differs between two runs with one seed", name)
			}
		}
	}

	if _, err := unify.Definitions(dir); err != nil {
		t.Fatal(err)
	}
	checkProfile(t, dir, sum)
}

// TestLocalDefsGrids: the kinds added after Bcast, with their
// sub-communicators, groups and Cartesian communicators and topologies,
// unify (each rank defines only the communicators it belongs to and its
// own Cartesian coordinates) to the profile of the closed form, and
// otf2-print reads the result.
func TestLocalDefsGrids(t *testing.T) {
	sc, dir, sum, a := generateLocal(t, "grids")
	for r := range sc.Locations {
		ld, err := a.ReadLocalDefs(uint64(r))
		if err != nil {
			t.Fatal(err)
		}
		// world, self, 4 Cartesian grids (4x3, 6x2, 3x2x2, 2x6), one row of each split
		if n := len(ld.Defs.Comms); n != 8 {
			t.Errorf("rank %d defines %d communicators, want 8", r, n)
		}
	}
	if _, err := unify.Definitions(dir); err != nil {
		t.Fatal(err)
	}
	checkProfile(t, dir, sum)
	// The unified topologies are those of the global-definitions archive.
	carts := func(dir string) string {
		t.Helper()
		a, err := otf2.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		d, err := a.ReadGlobalDefs()
		if err != nil {
			t.Fatal(err)
		}
		var lines []string // in any order: identifiers follow first appearance
		for _, tp := range d.CartTopologies {
			var b strings.Builder
			fmt.Fprintf(&b, "%s %s:", d.Str(tp.Name), d.Str(d.Comms[tp.Comm].Name))
			for _, dim := range tp.Dims {
				fmt.Fprintf(&b, " %+v", d.CartDimensions[dim].Size)
			}
			for _, c := range d.CartCoordinates {
				if c.Topology == tp.Self {
					fmt.Fprintf(&b, " %d@%v", c.Rank, c.Coords)
				}
			}
			lines = append(lines, b.String())
		}
		slices.Sort(lines)
		return strings.Join(lines, "\n")
	}
	global := t.TempDir()
	sc.LocalDefs = false
	if _, err := Generate(global, sc); err != nil {
		t.Fatal(err)
	}
	if want, got := carts(global), carts(dir); got != want || want == "" {
		t.Errorf("unified Cartesian topologies:\n%s\nwant\n%s", got, want)
	}
	if _, err := exec.LookPath("otf2-print"); err == nil {
		otf2Print(t, dir, sum)
	}
}
