package benchmarks

import (
	"fmt"
	"time"

	"heat/comm"
)

// pingPongTag is the tag of PingPong's messages.
const pingPongTag = comm.TagPingPong

// PingPong is the one-way time of a bytes-long message between ranks 0 and
// 1 of c: half the mean round trip over iters round trips, after a tenth as
// many warm-up ones. It uses only comm.Comm's Isend, Irecv and Waitall, the
// calls a halo exchange makes, so it measures comm/local and comm/mpi alike
// (benchmarks/mpi/pingpong.c is the same loop in C). Rank 0 sends the ping,
// posts the receive of the pong and waits for both; rank 1 receives, then
// sends back. Other ranks wait at a barrier. Collective: every rank returns
// rank 0's figure.
func PingPong(c comm.Comm, bytes, iters int) (oneWaySeconds float64, err error) {
	switch {
	case c.Size() < 2:
		return 0, fmt.Errorf("benchmarks: PingPong needs 2 ranks, the world has %d", c.Size())
	case bytes < 0 || bytes%8 != 0:
		return 0, fmt.Errorf("benchmarks: PingPong of %d bytes: messages carry float64 values, so bytes must be a multiple of 8", bytes)
	case iters < 1:
		return 0, fmt.Errorf("benchmarks: PingPong of %d round trips: need at least 1", iters)
	}
	out, in := make([]float64, bytes/8), make([]float64, bytes/8)
	for i := range out {
		out[i] = float64(i)
	}
	reqs := make([]comm.Request, 2)
	var round func() error
	switch c.Rank() {
	case 0:
		round = func() (err error) {
			if reqs[0], err = c.Isend(out, 1, pingPongTag); err != nil {
				return err
			}
			if reqs[1], err = c.Irecv(in, 1, pingPongTag); err != nil {
				return err
			}
			return c.Waitall(reqs)
		}
	case 1:
		round = func() (err error) {
			if reqs[0], err = c.Irecv(in, 0, pingPongTag); err != nil {
				return err
			}
			if err := c.Waitall(reqs[:1]); err != nil {
				return err
			}
			if reqs[0], err = c.Isend(out, 0, pingPongTag); err != nil {
				return err
			}
			return c.Waitall(reqs[:1])
		}
	}
	rounds := func(n int) error {
		if round == nil { // ranks 2 and up only wait at the barriers
			return nil
		}
		for range n {
			if err := round(); err != nil {
				return err
			}
		}
		return nil
	}
	if err := c.Barrier(); err != nil {
		return 0, err
	}
	if err := rounds(iters/10 + 1); err != nil {
		return 0, err
	}
	if err := c.Barrier(); err != nil {
		return 0, err
	}
	t0 := time.Now()
	if err := rounds(iters); err != nil {
		return 0, err
	}
	el := time.Since(t0)
	t := []float64{0}
	if c.Rank() == 0 {
		t[0] = el.Seconds() / float64(2*iters)
	}
	if err := c.Allreduce(comm.Max, t, t); err != nil {
		return 0, err
	}
	return t[0], nil
}
