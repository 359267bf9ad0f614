package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"heat/comm"
	"heat/comm/mpi"
	"heat/solver"
)

// Under MPI (a build with -tags mpi, started by mpirun or srun) this process
// is one rank of the run and talks to the others through comm/mpi; otherwise
// every rank of a run is a goroutine of this process (comm/local).

// mpiWorld is this process's MPI world, or nil when ranks are in-process.
var mpiWorld *mpi.World

// localRanks is how many ranks of the MPI job share this host.
var localRanks = 1

// abortGrace is how long a rank that failed alone waits for the others to
// notice before it ends the whole job with MPI_Abort.
const abortGrace = 5 * time.Second

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
			return usagef("started by a launcher as one of %d ranks (%s), but this binary has no MPI, so each rank would run the whole problem alone: %v", n, src, mpi.ErrNoMPI)
		}
		return nil
	}
	w, err := mpi.Init()
	if err != nil {
		return err
	}
	mpiWorld = w
	localRanks, err = countLocalRanks(w.Comm())
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

// mpiThreads is the default worker count of an MPI rank: the cores its
// affinity mask allows (mpirun and srun set it), shared with the other
// ranks of the host when their masks overlap, so a host is never
// oversubscribed.
func mpiThreads() int {
	return threadsPerRank(runtime.NumCPU(), onlineCPUs(), localRanks)
}

// threadsPerRank is the worker count of a rank allowed mine CPUs, on a host
// with online CPUs (0: unknown) shared by local ranks: all of its CPUs
// when the ranks' masks can be disjoint (mpirun --bind-to core, srun -c),
// else its share of them.
func threadsPerRank(mine, online, local int) int {
	if online > 0 && mine*local <= online {
		return mine
	}
	return max(1, mine/local)
}

// onlineCPUs is the number of CPUs of the host, from
// /sys/devices/system/cpu/online, or 0 if unknown.
func onlineCPUs() int {
	data, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return 0
	}
	return cpuCount(string(data))
}

// cpuCount counts the CPUs of a Linux CPU list such as "0-15,32-47\n"; 0
// when it cannot be read.
func cpuCount(list string) int {
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(list), ",") {
		lo, hi, found := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if found {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || b < a {
			return 0
		}
		n += b - a + 1
	}
	return n
}

// agreedError ends a rank whose run failed elsewhere: the lowest failing
// rank prints the cause, the others exit quietly with the same code.
type agreedError struct{ code int }

func (e agreedError) Error() string { return "another rank failed" }

// agree makes every rank of an MPI job take the same way after a phase
// that may fail on some ranks only (reading the config, the run itself):
// all go on if none failed; otherwise the lowest failing rank returns its
// own error, named by rank, and the others an agreedError with the highest
// exit code. A stop by a signal is not a failure: the solver agreed on it.
//
// If this rank failed and the others do not reach the agreement within
// abortGrace (they wait for this rank inside a step), it prints its error
// and ends the job with MPI_Abort. Collective.
func agree(c comm.Comm, err error) error {
	failed := err != nil && !errors.Is(err, solver.ErrStopped)
	code := 0
	if failed {
		code = exitCode(err)
		host, _ := os.Hostname()
		err = fmt.Errorf("rank %d of %d (%s): %w", c.Rank(), c.Size(), host, err)
		timer := time.AfterFunc(abortGrace, func() {
			fmt.Fprintf(os.Stderr, "heat: %v\nheat: the other ranks did not stop within %v: aborting the job\n", err, abortGrace)
			mpiWorld.Abort(code)
		})
		defer timer.Stop()
	}
	first, maxCode, cerr := comm.Agree(c, failed, code)
	if cerr != nil {
		fmt.Fprintf(os.Stderr, "heat: rank %d: cannot agree on the outcome (%v): aborting the job\n", c.Rank(), cerr)
		mpiWorld.Abort(max(code, 1))
	}
	switch {
	case first < 0:
		return err // nil, or a stop every rank agreed on
	case first == c.Rank():
		return err
	}
	return agreedError{code: maxCode}
}
