package cube

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// pythonCells runs the independent reader testdata/cubexcheck.py on path
// and returns its cells.
func pythonCells(t *testing.T, python, path string) map[string]float64 {
	t.Helper()
	out := filepath.Join(t.TempDir(), "python.csv")
	cmd := exec.Command(python, filepath.Join("testdata", "cubexcheck.py"), path)
	b, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("cubexcheck.py %s: %v\n%s", path, err, stderr)
	}
	writeFile(t, out, b)
	return readCSV(t, out)
}

// TestIndependentReader writes reports with our writer and checks that
// the independent Python reader (standard library only, its own tar,
// XML and binary parsing) finds the same cells as our reader.
func TestIndependentReader(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	check := func(t *testing.T, r *Report) {
		t.Parallel()
		back, path := writeRead(t, r)
		if diff := diffCells(cellMap(back.Cells()), pythonCells(t, python, path), 0); diff != "" {
			t.Errorf("cells (-Go reader +Python reader):\n%s", diff)
		}
	}
	t.Run("spec example", func(t *testing.T) { check(t, specExample()) })
	for _, tc := range roundTripCases {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.build()) })
	}
	t.Run("rewritten reference reports", func(t *testing.T) {
		if testing.Short() {
			t.Skip("short mode")
		}
		for _, dir := range referenceTraces(t) {
			t.Run(filepath.Base(dir), func(t *testing.T) {
				r, err := ReadFile(filepath.Join(dir, "expected", "scout.cubex"))
				if err != nil {
					t.Fatal(err)
				}
				check(t, r)
			})
		}
	})
}
