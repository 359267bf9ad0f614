package comm_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/commtest"
	"heat/comm/local"
)

// members are the world ranks of the subsets the tests build on a world
// of 7: every other rank, in reverse order (rank i of the subset is world
// rank 6−2i), so a translation that forgot the map would talk to the wrong
// rank.
var members = []int{6, 4, 2, 0}

// run runs f on the subset's members of a world of 7 while the other ranks
// exchange messages among themselves under the same tags.
func run(t *testing.T, f func(s comm.Comm) error) {
	t.Helper()
	require.NoError(t, local.Run(7, func(c comm.Comm) error {
		if c.Rank()%2 == 1 {
			others, err := comm.Subset(c, []int{1, 3, 5})
			if err != nil {
				return err
			}
			return commtest.Ring(others, 5, 3)
		}
		s, err := comm.Subset(c, members)
		if err != nil {
			return err
		}
		if s.Rank() != (6-c.Rank())/2 || s.Size() != 4 {
			return fmt.Errorf("world rank %d is subset rank %d of %d", c.Rank(), s.Rank(), s.Size())
		}
		return f(s)
	}))
}

// A subset passes the point-to-point properties every transport passes.
func TestSubsetPointToPoint(t *testing.T) {
	for _, p := range commtest.PointToPoint([]int{0, 1, 5, 1 << 10}) {
		t.Run(p.Name, func(t *testing.T) { run(t, p.Check) })
	}
}

// A subset's Allreduce gives every member the bits of a world of its size:
// operands folded in rank order (the sum below depends on the order), NaN
// kept by Max, in place or not.
func TestSubsetAllreduceMatchesAWorld(t *testing.T) {
	operand := func(rank int) []float64 {
		last := float64(rank)
		if rank == 2 {
			last = math.NaN()
		}
		return []float64{0.1 * float64(rank+1), 1e16*float64(1-2*(rank%2)) + 1, float64(-rank), last}
	}
	want := map[comm.Op][]float64{}
	require.NoError(t, local.Run(4, func(c comm.Comm) error {
		for _, op := range []comm.Op{comm.Sum, comm.Max, comm.Min} {
			out := make([]float64, 4)
			if err := c.Allreduce(op, operand(c.Rank()), out); err != nil {
				return err
			}
			if c.Rank() == 0 {
				want[op] = out
			}
		}
		return nil
	}))
	run(t, func(s comm.Comm) error {
		for _, op := range []comm.Op{comm.Sum, comm.Max, comm.Min} {
			out := operand(s.Rank())
			if err := s.Allreduce(op, out, out); err != nil {
				return err
			}
			for i := range out {
				if math.Float64bits(out[i]) != math.Float64bits(want[op][i]) {
					return fmt.Errorf("subset rank %d: %v[%d] = %v, a world gives %v", s.Rank(), op, i, out[i], want[op][i])
				}
			}
		}
		return s.Barrier()
	})
}

// Bcast and Gatherv carry any bytes (every length mod 8, bit patterns that
// are NaNs as float64) from any root.
func TestSubsetBytes(t *testing.T) {
	payload := func(rank, n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(0xff - i - 3*rank) // 0xff… runs: NaN patterns
		}
		return b
	}
	run(t, func(s comm.Comm) error {
		for root := range s.Size() {
			for _, n := range []int{0, 1, 7, 8, 9, 100} {
				buf := make([]byte, n)
				if s.Rank() == root {
					buf = payload(root, n)
				}
				if err := s.Bcast(buf, root); err != nil {
					return err
				}
				if string(buf) != string(payload(root, n)) {
					return fmt.Errorf("subset rank %d: Bcast from %d of %d bytes gave %x", s.Rank(), root, n, buf)
				}
				got, err := s.Gatherv(payload(s.Rank(), n+s.Rank()), root)
				if err != nil {
					return err
				}
				if s.Rank() != root {
					if got != nil {
						return fmt.Errorf("subset rank %d got a gather meant for %d", s.Rank(), root)
					}
					continue
				}
				for r := range s.Size() {
					if string(got[r]) != string(payload(r, n+r)) {
						return fmt.Errorf("Gatherv to %d: rank %d's %d bytes arrived as %x", root, r, n+r, got[r])
					}
				}
			}
		}
		return nil
	})
}

// Members out of the world, twice, or a builder outside the subset are
// refused; ranks outside a subset are refused by its calls.
func TestSubsetRefusesBadMembers(t *testing.T) {
	require.NoError(t, local.Run(3, func(c comm.Comm) error {
		for _, m := range [][]int{nil, {0, 3}, {1, 1, 0, 2}, {-1, 0, 1, 2}} {
			if _, err := comm.Subset(c, m); err == nil {
				return fmt.Errorf("members %v accepted", m)
			}
		}
		if c.Rank() == 2 {
			if _, err := comm.Subset(c, []int{0, 1}); err == nil {
				return fmt.Errorf("rank 2 built a subset of ranks 0 and 1")
			}
			return nil
		}
		s, err := comm.Subset(c, []int{1, 0})
		if err != nil {
			return err
		}
		if _, err := s.Isend([]float64{1}, 2, 0); err == nil {
			return fmt.Errorf("a send to subset rank 2 of 2 was accepted")
		}
		if _, err := s.Irecv([]float64{1}, -1, 0); err == nil {
			return fmt.Errorf("a receive from subset rank -1 was accepted")
		}
		return nil
	}))
}
