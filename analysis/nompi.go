//go:build !mpi

package analysis

import (
	"context"
	"errors"

	"scout/combine"
)

// MPIBuild tells whether this binary can run under mpirun.
const MPIBuild = false

// RunMPI fails: this build has no MPI support (build tag mpi).
func RunMPI(context.Context, Plan) (*combine.Report, error) {
	return nil, errors.New("this scout was built without MPI support, but was started by an MPI launcher (mpirun/srun); build the MPI version with `make mpi` (needs libopenmpi-dev) or run scout without mpirun")
}
