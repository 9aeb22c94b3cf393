package analysis

import (
	"runtime"
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

// TestBindingHint: advice only for a process that hosts several
// locations on fewer processors than both the node has and it hosts;
// kernel CPU lists are counted, malformed ones not, and the node has at
// least the processors this process may run on.
func TestBindingHint(t *testing.T) {
	for _, tc := range []struct {
		hosted, allowed, online int
		hint                    bool
	}{
		{4, 1, 2, true},  // mpirun -np 1 on 2 cores
		{2, 1, 2, true},  // -np 2 for 4 ranks on 2 cores
		{1, 1, 2, false}, // one location per process
		{4, 2, 2, false}, // unbound
		{4, 4, 8, false}, // bound to as many as it hosts
		{4, 1, 0, false}, // node unknown
	} {
		if got := bindingHint(tc.hosted, tc.allowed, tc.online) != ""; got != tc.hint {
			t.Errorf("bindingHint(%d, %d, %d) gives advice: %v, want %v", tc.hosted, tc.allowed, tc.online, got, tc.hint)
		}
	}
	if n := onlineCPUs(); n != 0 && n < runtime.NumCPU() {
		t.Errorf("onlineCPUs() = %d, fewer than the %d this process may run on", n, runtime.NumCPU())
	}
	for s, want := range map[string]int{"0": 1, "0-1": 2, "0-3,8,10-11": 7, "": 0, "0-": 0, "3-1": 0, "a": 0, "-1": 0, "0,,1": 0} {
		if got := cpuListLen(s); got != want {
			t.Errorf("cpuListLen(%q) = %d, want %d", s, got, want)
		}
	}
}
