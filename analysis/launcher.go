package analysis

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// launcherRank returns the rank of this process and the size of its job
// as the launcher put them in the environment before MPI_Init: Open
// MPI's mpirun as OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE, MPICH's
// and Intel MPI's Hydra as PMI_RANK and PMI_SIZE. ok is false where
// neither pair is set and valid (a process started without a launcher).
func launcherRank() (rank, size int, ok bool) {
	for _, names := range [][2]string{{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, {"PMI_RANK", "PMI_SIZE"}} {
		r, err1 := strconv.Atoi(os.Getenv(names[0]))
		n, err2 := strconv.Atoi(os.Getenv(names[1]))
		if err1 == nil && err2 == nil && 0 <= r && r < n {
			return r, n, true
		}
	}
	return 0, 0, false
}

// bindingHint returns advice for a process that hosts several locations
// but may run on fewer processors than the node has online and than it
// has locations: its launcher bound it (Open MPI's mpirun binds each
// process to one core when it starts at most two), and the locations
// it hosts then share that processor; "" when there is none. allowed is
// the number of processors the process may run on, online the node's (0:
// unknown).
func bindingHint(hosted, allowed, online int) string {
	if hosted < 2 || online <= 0 || allowed >= online || allowed >= hosted {
		return ""
	}
	return fmt.Sprintf("this process may run on %d of the node's %d processors for its %d locations "+
		"(the launcher bound it: Open MPI's mpirun binds each process to one core when it starts at most 2); "+
		"mpirun --bind-to none, or --map-by slot:PE=N, lets it use more", allowed, online, hosted)
}

// onlineCPUs returns the number of processors the kernel has online
// (Linux: /sys/devices/system/cpu/online), 0 where unknown.
func onlineCPUs() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return 0
	}
	return cpuListLen(strings.TrimSpace(string(b)))
}

// cpuListLen counts the processors of a kernel CPU list such as
// "0-3,8,10-11", 0 if it is malformed.
func cpuListLen(s string) int {
	n := 0
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}
