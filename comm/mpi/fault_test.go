//go:build mpi && cgo

package mpi

import (
	"errors"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"heat/comm"
)

// cpuTime is the CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A rank that waits long for another, at a Waitall or a collective, gets
// what it waited for and sleeps meanwhile instead of spinning on its core.
func TestLongWaitsSleep(t *testing.T) {
	const late = 400 * time.Millisecond
	each(t, 2, func(c comm.Comm) error {
		me, last := c.Rank(), c.Size()-1
		// A wait that spins is a failure, not an error: every rank still
		// runs every operation, so that the ranks stay in step.
		var spun error
		for _, op := range []string{"Waitall", "Barrier", "Allreduce"} {
			if me == last {
				time.Sleep(late)
			}
			start, cpu := time.Now(), cpuTime()
			var err error
			switch op {
			case "Waitall":
				// Every rank waits for the last one's message.
				in := []float64{0}
				var q comm.Request
				if me == last {
					for r := range last {
						if q, err = c.Isend([]float64{42}, r, 5); err != nil {
							return err
						}
						if err = c.Waitall([]comm.Request{q}); err != nil {
							return err
						}
					}
					continue
				}
				if q, err = c.Irecv(in, last, 5); err == nil {
					err = c.Waitall([]comm.Request{q})
				}
				if err == nil && in[0] != 42 {
					err = fmt.Errorf("received %v, want 42", in[0])
				}
			case "Barrier":
				err = c.Barrier()
			case "Allreduce":
				x := []float64{float64(me)}
				err = c.Allreduce(comm.Max, x, x)
				if err == nil && x[0] != float64(last) {
					err = fmt.Errorf("max %v, want %d", x[0], last)
				}
			}
			if err != nil {
				return fmt.Errorf("%s: %w", op, err)
			}
			if me == last {
				continue
			}
			wall, used := time.Since(start), cpuTime()-cpu
			if wall < late/2 {
				return fmt.Errorf("%s: waited only %v for a rank %v late", op, wall, late)
			}
			// Spinning would take a core for the whole wait; the naps
			// leave it nearly idle (the test binary's own threads
			// included).
			if used > wall/4 && spun == nil {
				spun = fmt.Errorf("%s: %v of CPU in a wait of %v", op, used, wall)
			}
		}
		return spun
	})
}

// A Waitall that outlasts the timeout gives up with a TimeoutError naming
// the peer and tag it waited for; the ranks' roll call hears every rank,
// all of them waiting, and names rank 0 the reporter. The timeout can be
// set while the wait runs; every operation returns the fault from then on.
func TestWaitallTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	each(t, 1, func(c comm.Comm) error {
		me, n := c.Rank(), c.Size()
		left, right := neighbours(c)
		in := make([]float64, 3)
		q, err := c.Irecv(in, right, 9) // nobody sends yet
		if err != nil {
			return err
		}
		d, ok := comm.DeadlinerOf(c)
		if !ok {
			return errors.New("the MPI Comm is no comm.Deadliner")
		}
		d.SetStep(func() int { return 70 + me })
		go func() { time.Sleep(50 * time.Millisecond); d.SetTimeout(timeout) }()
		start := time.Now()
		err = c.Waitall([]comm.Request{q})
		took := time.Since(start)
		var te *comm.TimeoutError
		if !errors.As(err, &te) {
			return fmt.Errorf("Waitall: got %v, want a *comm.TimeoutError", err)
		}
		problems := []string{}
		expect := func(ok bool, format string, args ...any) {
			if !ok {
				problems = append(problems, fmt.Sprintf(format, args...))
			}
		}
		// The rank's own timeout or a neighbour's notice ends its wait.
		expect(took >= timeout-50*time.Millisecond && took < timeout+5*time.Second, "gave up after %v", took)
		expect(te.Rank == me && te.Size == n && te.Op == "Waitall" && te.Step == 70+me, "own wait %+v", te.Wait)
		expect(slices.Equal(te.Peers, []int{right}) && te.Tag == 9, "peers %v tag %d, want [%d] 9", te.Peers, te.Tag, right)
		expect(te.Timeout == timeout, "timeout %v", te.Timeout)
		expect(len(te.Silent) == 0 && len(te.Others) == n-1 && te.Reporter == 0, "silent %v, others %d, reporter %d", te.Silent, len(te.Others), te.Reporter)
		for _, o := range te.Others {
			expect(o.Op == "Waitall" && o.Step == 70+o.Rank && slices.Equal(o.Peers, []int{(o.Rank + 1) % n}) && o.Tag == 9,
				"rank %d's wait as heard: %+v", o.Rank, o)
		}
		if err := c.Barrier(); err != te {
			problems = append(problems, fmt.Sprintf("Barrier after the fault: %v", err))
		}
		if _, err := c.Isend(in, left, 9); err != te {
			problems = append(problems, fmt.Sprintf("Isend after the fault: %v", err))
		}
		ferr := world.forgive(func() error {
			s, err := c.Isend(commtest3(me), left, 9)
			if err != nil {
				return err
			}
			return c.Waitall([]comm.Request{q, s})
		})
		if ferr != nil {
			return ferr
		}
		if !slices.Equal(in, commtest3(right)) {
			problems = append(problems, fmt.Sprintf("the late message: %v", in))
		}
		if len(problems) > 0 {
			return fmt.Errorf("%v (%v)", problems, te)
		}
		return nil
	})
}

func commtest3(r int) []float64 { return []float64{float64(r), 1, 2} }

// A collective that a rank does not join (it sleeps, outside MPI) gives
// up on the others; their roll call names that rank silent and the lowest
// of them the reporter, on every one of them.
func TestCollectiveTimeoutNamesTheSilentRank(t *testing.T) {
	const timeout = 300 * time.Millisecond
	each(t, 2, func(c comm.Comm) error {
		me, last := c.Rank(), c.Size()-1
		d, _ := comm.DeadlinerOf(c)
		d.SetStep(func() int { return 5 })
		d.SetTimeout(timeout)
		var te *comm.TimeoutError
		var err error
		if me == last {
			time.Sleep(timeout + 2*time.Second) // the others' timeout and grace
			d.SetTimeout(0)
			err = c.Barrier() // theirs, long given up
		} else {
			err = c.Barrier()
			if !errors.As(err, &te) {
				return fmt.Errorf("Barrier: got %v, want a *comm.TimeoutError", err)
			}
		}
		finish := world.finishCollective
		if me == last {
			finish = func() error { return err }
		}
		if ferr := world.forgive(finish); ferr != nil {
			return ferr
		}
		if me == last {
			return nil
		}
		if te.Op != "Barrier" || te.Peers != nil || te.Tag != -1 || te.Step != 5 ||
			!slices.Equal(te.Silent, []int{last}) || len(te.Others) != last-1 || te.Reporter != 0 {
			return fmt.Errorf("roll call %+v: %v", *te, te)
		}
		return nil
	})
}

// A loop that polls a request with Done between naps (as multigrid waits
// for its coarse correction) gives up after the timeout too: Done turns
// true and Waitall returns the TimeoutError.
func TestDoneGivesUp(t *testing.T) {
	const timeout = 300 * time.Millisecond
	each(t, 1, func(c comm.Comm) error {
		left, right := neighbours(c)
		d, _ := comm.DeadlinerOf(c)
		d.SetStep(func() int { return 3 })
		d.SetTimeout(timeout)
		in := make([]float64, 3)
		q, err := c.Irecv(in, right, 8) // nobody sends yet
		if err != nil {
			return err
		}
		start := time.Now()
		for !q.Done() {
			if time.Since(start) > timeout+10*time.Second {
				return errors.New("Done still false long after the timeout")
			}
			time.Sleep(time.Millisecond)
		}
		took := time.Since(start)
		err = c.Waitall([]comm.Request{q})
		var te *comm.TimeoutError
		if !errors.As(err, &te) {
			return fmt.Errorf("Waitall after Done: got %v, want a *comm.TimeoutError", err)
		}
		ferr := world.forgive(func() error {
			s, err := c.Isend(commtest3(c.Rank()), left, 8)
			if err != nil {
				return err
			}
			return c.Waitall([]comm.Request{q, s})
		})
		if ferr != nil {
			return ferr
		}
		if took < timeout-50*time.Millisecond || te.Op != "Waitall" || !slices.Equal(te.Peers, []int{right}) || te.Tag != 8 || te.Step != 3 || len(te.Silent) != 0 {
			return fmt.Errorf("gave up after %v with %+v", took, *te)
		}
		return nil
	})
}
