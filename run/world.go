package run

import (
	"errors"
	"fmt"
	"os"
	"time"

	"heat/comm"
	"heat/solver"
)

// abortGrace is how long a rank that failed alone waits for the others to
// notice before it ends the whole job with World.Abort.
const abortGrace = 5 * time.Second

// threadsPerRank is the worker count of a rank allowed mine CPUs, on a host
// with online CPUs (0: unknown) shared by local ranks: all of its CPUs
// when the ranks' masks can be disjoint (mpirun --bind-to core, srun -c),
// else its share of them, so a host is never oversubscribed.
func threadsPerRank(mine, online, local int) int {
	if online > 0 && mine*local <= online {
		return mine
	}
	return max(1, mine/local)
}

// agree makes every rank of an MPI job take the same way after a phase
// that may fail on some ranks only (reading the config, the run itself):
// all go on if none failed; otherwise the lowest failing rank returns its
// own error, named by rank, and the others an AgreedError with the highest
// exit code (comm.Agree). A stop by a signal is not a failure: the solver
// agreed on it.
//
// If this rank failed and the others do not reach the agreement within
// abortGrace (they wait for this rank inside a step), it prints its error
// and ends the job. A wait of the agreement that gave up (parallel.timeout)
// is returned as its *comm.TimeoutError, for the caller to end the job
// with one message and a report (abandon). Collective.
func agree(w *World, err error) error {
	c := w.Comm
	failed := err != nil && !errors.Is(err, solver.ErrStopped)
	code := 0
	if failed {
		code = ExitCode(err)
		host, _ := os.Hostname()
		err = fmt.Errorf("rank %d of %d (%s): %w", c.Rank(), c.Size(), host, err)
		timer := time.AfterFunc(abortGrace, func() {
			fmt.Fprintf(os.Stderr, "heat: %v\nheat: the other ranks did not stop within %v: aborting the job\n", err, abortGrace)
			w.Abort(code)
		})
		defer timer.Stop()
	}
	first, maxCode, cerr := comm.Agree(c, failed, code)
	var fault *comm.TimeoutError
	if errors.As(cerr, &fault) {
		// A rank stalled at the agreement itself: the caller ends the job
		// with the fault's one message and report (abandon).
		return fault
	}
	if cerr != nil {
		fmt.Fprintf(os.Stderr, "heat: rank %d: cannot agree on the outcome (%v): aborting the job\n", c.Rank(), cerr)
		w.Abort(max(code, 1))
	}
	switch {
	case first < 0:
		return err // nil, or a stop every rank agreed on
	case first == c.Rank():
		return err
	}
	return AgreedError{Code: maxCode}
}
