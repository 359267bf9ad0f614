// Package mpi is heat's comm.Comm over MPI: a thin cgo binding to the MPI C
// API, for runs started by mpirun or srun across the nodes of a cluster.
//
// It is built only with `go build -tags mpi` (and cgo). The default is Open
// MPI, found through pkg-config (ompi-c); `-tags mpi,mpich` uses MPICH's
// pkg-config file instead, and `-tags mpi,mpicc` with CC=mpicc takes the
// flags from the site's compiler wrapper. Without the tag the package still
// compiles, Enabled is false and Init returns ErrNoMPI, which says how to
// rebuild; it never pretends to be a world of one rank.
//
// Init must be called from the main goroutine, which this package locks to
// the main OS thread, and Finalize from there too. MPI runs at
// MPI_THREAD_SERIALIZED, and a rank's Comm takes no lock: use it from one
// goroutine at a time (whichever OS thread that goroutine is on).
//
// Waits (Waitall, and the collectives, which are MPI's nonblocking ones)
// test their requests without a pause for a millisecond, then sleep
// between tests, so a rank that waits long leaves its core to others.
// SetTimeout (comm.Deadliner) bounds them: a wait that lasts longer gives
// up, the ranks take a roll call, and every operation returns the
// resulting *comm.TimeoutError (fault.go).
//
// Every MPI handle stays on the C side (shim.c): Go names a pending request
// by a slot number, because MPI_Request is a pointer in Open MPI and an int
// in MPICH. Messages of up to 128 values travel through the slot's own C
// buffer (one small copy); larger Go buffers are pinned (runtime.Pinner)
// until Waitall completes them. Allreduce gathers every rank's operands and
// combines them in rank order, so its bits match comm/local's.
package mpi

import (
	"errors"
	"os"
	"strconv"
)

// ErrNoMPI is what Init returns in a build without MPI; it says how to get
// one.
var ErrNoMPI = errors.New("heat was built without MPI: rebuild with `go build -tags mpi ./cmd/heat` " +
	"(cgo and an MPI library such as libopenmpi-dev are needed)")

// launcherVars are the variables launchers set to the number of ranks they
// started, in the order LauncherSize trusts them: Open MPI's mpirun, then
// PMI launchers (MPICH's Hydra, Intel MPI, srun --mpi=pmi2).
var launcherVars = []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}

// LauncherSize is the number of ranks the launcher that started this process
// says it started, and the variable that says so ("OMPI_COMM_WORLD_SIZE=4"),
// or 0 and "" when no launcher variable is set. Slurm's SLURM_STEP_NUM_TASKS
// counts only inside a job step (SLURM_PROCID set), and only after the MPI
// launchers' own variables, since mpirun inside a batch script inherits the
// batch step's. Both builds have it: Init compares it with MPI's size, and a
// build without MPI uses it to refuse to run as one of several ranks.
func LauncherSize() (n int, source string) {
	vars := launcherVars
	if _, ok := os.LookupEnv("SLURM_PROCID"); ok {
		vars = append(vars[:len(vars):len(vars)], "SLURM_STEP_NUM_TASKS")
	}
	for _, v := range vars {
		s, ok := os.LookupEnv(v)
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n, v + "=" + s
		}
	}
	return 0, ""
}
