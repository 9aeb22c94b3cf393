package cube

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// referenceTraces lists the trace folders of ../shared/traces that hold
// a CubeW-written expected/scout.cubex; it skips the test when the shared
// folder is absent.
func referenceTraces(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "traces")
	m, _ := filepath.Glob(filepath.Join(dir, "*", "expected", "scout.cubex"))
	if len(m) == 0 {
		t.Skipf("no reference reports in %s", dir)
	}
	out := make([]string, len(m))
	for i, f := range m {
		out[i] = filepath.Dir(filepath.Dir(f))
	}
	return out
}

// readCSV reads canonical CSV into a map keyed by "metric,callpath,rank".
func readCSV(t *testing.T, path string) map[string]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(recs) == 0 || len(recs[0]) != 4 || recs[0][0] != "metric" {
		t.Fatalf("%s: no metric,callpath,rank,value header", path)
	}
	out := map[string]float64{}
	for _, r := range recs[1:] {
		v, err := strconv.ParseFloat(r[3], 64)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out[r[0]+","+r[1]+","+r[2]] += v
	}
	return out
}

// TestReferenceCSV reads every CubeW-written reference report and checks
// its canonical cells against expected/scout.csv.
func TestReferenceCSV(t *testing.T) {
	for _, dir := range referenceTraces(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			r, err := ReadFile(filepath.Join(dir, "expected", "scout.cubex"))
			if err != nil {
				t.Fatal(err)
			}
			want := readCSV(t, filepath.Join(dir, "expected", "scout.csv"))
			if diff := diffCells(want, cellMap(r.Cells()), 1e-9); diff != "" {
				t.Errorf("cells (-scout.csv +ours):\n%s", diff)
			}
			if len(r.Misc) != 1 || r.Misc[0].Name != "remapping.spec" {
				t.Errorf("misc members: got %d, want remapping.spec", len(r.Misc))
			}
		})
	}
}

// TestReferenceRoundTrip reads each reference report, writes it with our
// writer and reads it back: definitions, values and misc files must be
// identical, and our anchor.xml must equal CubeW's byte for byte.
func TestReferenceRoundTrip(t *testing.T) {
	for _, dir := range referenceTraces(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			orig, err := ReadFile(filepath.Join(dir, "expected", "scout.cubex"))
			if err != nil {
				t.Fatal(err)
			}
			if err := orig.Validate(); err != nil {
				t.Fatalf("reference report does not validate: %v", err)
			}
			back, path := writeRead(t, orig)
			if a, b := archive(t, filepath.Join(dir, "expected", "scout.cubex"))[anchorName], archive(t, path)[anchorName]; !bytes.Equal(a, b) {
				t.Errorf("our anchor.xml differs from CubeW's:\n%s", cmp.Diff(strings.Split(string(a), "\n"), strings.Split(string(b), "\n")))
			}
			if diff := cmp.Diff(orig, back, reportOpts); diff != "" {
				t.Errorf("round trip (-orig +back):\n%s", diff)
			}
			if diff := diffReports(orig, back); diff != "" {
				t.Errorf("round trip (-orig +back):\n%s", diff)
			}
		})
	}
}
