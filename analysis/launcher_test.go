package analysis

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLauncherRank: the rank and size come from Open MPI's variables
// before Hydra's, and only a pair that makes sense counts.
func TestLauncherRank(t *testing.T) {
	type want struct {
		Rank, Size int
		OK         bool
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want want
	}{
		{"none", nil, want{}},
		{"Open MPI", map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4"}, want{3, 4, true}},
		{"Hydra", map[string]string{"PMI_RANK": "0", "PMI_SIZE": "2"}, want{0, 2, true}},
		{"both", map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "PMI_RANK": "5", "PMI_SIZE": "8"}, want{1, 2, true}},
		{"rank only", map[string]string{"OMPI_COMM_WORLD_RANK": "1"}, want{}},
		{"rank past size", map[string]string{"OMPI_COMM_WORLD_RANK": "4", "OMPI_COMM_WORLD_SIZE": "4"}, want{}},
		{"negative", map[string]string{"PMI_RANK": "-1", "PMI_SIZE": "4"}, want{}},
		{"not a number", map[string]string{"OMPI_COMM_WORLD_RANK": "x", "OMPI_COMM_WORLD_SIZE": "4", "PMI_RANK": "2", "PMI_SIZE": "4"}, want{2, 4, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, name := range []string{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE"} {
				t.Setenv(name, tc.env[name]) // (empty: unset for Atoi)
			}
			var got want
			got.Rank, got.Size, got.OK = launcherRank()
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("launcherRank (-want +got):\n%s", d)
			}
		})
	}
}
