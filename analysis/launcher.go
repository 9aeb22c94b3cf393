package analysis

import (
	"os"
	"strconv"
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
