// Package commtest holds checks that every comm.Comm transport must pass,
// written once and run by each transport's tests (comm/local in-process,
// comm/mpi under mpirun): the same property, the same code.
package commtest

import (
	"fmt"

	"heat/comm"
)

// Fill writes into buf what rank from sends with tag in round: every value
// names its message and its position, so a message delivered to the wrong
// receive, or a buffer reused too early, shows up as a wrong value.
func Fill(buf []float64, from, tag, round int) []float64 {
	for i := range buf {
		buf[i] = float64(((from*64+tag)*1000+round)*1000 + i%1000)
	}
	return buf
}

// Verify checks that buf holds what Fill(from, tag, round) wrote; me names
// the receiving rank in the error.
func Verify(me int, buf []float64, from, tag, round int) error {
	for i, v := range buf {
		if want := float64(((from*64+tag)*1000+round)*1000 + i%1000); v != want {
			return fmt.Errorf("rank %d: message from rank %d tag %d round %d: value %d is %v, want %v", me, from, tag, round, i, v, want)
		}
	}
	return nil
}

// Ring runs rounds of a halo-like exchange with both neighbours on a ring,
// m values each way, reusing the buffers every round: receives posted
// first, then sends, then one Waitall, as halo.Plan does. Tag 0 travels
// rightwards, tag 1 leftwards. Every rank must call it.
func Ring(c comm.Comm, rounds, m int) error {
	me, n := c.Rank(), c.Size()
	left, right := (me+n-1)%n, (me+1)%n
	toL, toR := make([]float64, m), make([]float64, m)
	fromL, fromR := make([]float64, m), make([]float64, m)
	reqs := make([]comm.Request, 4)
	for round := range rounds {
		var err error
		if reqs[0], err = c.Irecv(fromL, left, 0); err != nil {
			return err
		}
		if reqs[1], err = c.Irecv(fromR, right, 1); err != nil {
			return err
		}
		if reqs[2], err = c.Isend(Fill(toR, me, 0, round), right, 0); err != nil {
			return err
		}
		if reqs[3], err = c.Isend(Fill(toL, me, 1, round), left, 1); err != nil {
			return err
		}
		if err := c.Waitall(reqs); err != nil {
			return err
		}
		if err := Verify(me, fromL, left, 0, round); err != nil {
			return err
		}
		if err := Verify(me, fromR, right, 1, round); err != nil {
			return err
		}
	}
	return nil
}
