package unify_test

import (
	"os"
	"path/filepath"
	"testing"

	"scout/tracegen"
	"scout/unify"
)

// BenchmarkDefinitions unifies a 1024-rank archive (one iteration of the
// default scenario); each iteration unifies a fresh copy of its
// definition files.
func BenchmarkDefinitions(b *testing.B) {
	src := b.TempDir()
	sc := tracegen.DefaultScenario()
	sc.Locations, sc.Iterations, sc.LocalDefs = 1024, 1, true
	if _, err := tracegen.Generate(src, sc); err != nil {
		b.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(src, "traces", "*.def"))
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "traces"), 0o755); err != nil {
			b.Fatal(err)
		}
		for _, f := range append(files, filepath.Join(src, "traces.otf2")) {
			data, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			rel, _ := filepath.Rel(src, f)
			if err := os.WriteFile(filepath.Join(dir, rel), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if _, err := unify.Definitions(dir); err != nil {
			b.Fatal(err)
		}
	}
}
