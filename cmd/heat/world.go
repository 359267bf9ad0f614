package main

import (
	"encoding/binary"
	"os"

	"heat/comm"
	"heat/comm/mpi"
	"heat/run"
)

// Under MPI (a build with -tags mpi, started by mpirun or srun) this process
// is one rank of the run and talks to the others through comm/mpi; otherwise
// every rank of a run is a goroutine of this process (comm/local).

// mpiWorld is this process's MPI world, or nil when ranks are in-process.
var mpiWorld *mpi.World

// world is this process's place in the MPI job, for run; nil in-process.
var world *run.World

// startMPI joins the MPI world when a launcher started this process for a
// command whose processes are ranks (heat run, heat bench pingpong). A
// build without MPI refuses to be one of several ranks: each would
// otherwise run the whole problem alone.
func startMPI(args []string) error {
	n, src := mpi.LauncherSize()
	ranked := len(args) > 0 && (args[0] == "run" || len(args) > 1 && args[0] == "bench" && args[1] == "pingpong")
	if n == 0 || !ranked {
		return nil
	}
	if !mpi.Enabled {
		if n > 1 {
			return run.Usagef("started by a launcher as one of %d ranks (%s), but this binary has no MPI, so each rank would run the whole problem alone: %v", n, src, mpi.ErrNoMPI)
		}
		return nil
	}
	w, err := mpi.Init()
	if err != nil {
		return err
	}
	mpiWorld = w
	// Until the run reads parallel.timeout, a wait that lasts the
	// timeout outside the steps gives up (run/timeout.go).
	if d, ok := comm.DeadlinerOf(w.Comm()); ok {
		d.SetTimeout(run.OutsideTimeout)
	}
	local, err := countLocalRanks(w.Comm())
	world = &run.World{Comm: w.Comm(), LocalRanks: local, Abort: w.Abort}
	return err
}

// countLocalRanks is the number of ranks on this rank's host (by hostname),
// gathered on rank 0 and sent back to everyone. Collective.
func countLocalRanks(c comm.Comm) (int, error) {
	host, _ := os.Hostname()
	hosts, err := c.Gatherv([]byte(host), 0)
	if err != nil {
		return 0, err
	}
	counts := make([]byte, 4*c.Size())
	if c.Rank() == 0 {
		per := map[string]uint32{}
		for _, h := range hosts {
			per[string(h)]++
		}
		for r, h := range hosts {
			binary.LittleEndian.PutUint32(counts[4*r:], per[string(h)])
		}
	}
	if err := c.Bcast(counts, 0); err != nil {
		return 0, err
	}
	return int(binary.LittleEndian.Uint32(counts[4*c.Rank():])), nil
}
