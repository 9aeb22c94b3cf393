//go:build !mpi

package main

import (
	"errors"

	"scout/combine"
)

// mpiBuild tells whether this binary can run under mpirun.
const mpiBuild = false

func runMPI(options, *progress) (*combine.Report, error) {
	return nil, errors.New("this scout was built without MPI support, but was started by an MPI launcher (mpirun/srun); build the MPI version with `make mpi` (needs libopenmpi-dev) or run scout without mpirun")
}
