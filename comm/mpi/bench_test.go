//go:build mpi && cgo

package mpi

import (
	"fmt"
	"testing"

	"heat/comm"
)

// The cost of the binding itself, without a network: a message from this
// rank to itself through Irecv, Isend and Waitall, as a halo exchange posts
// them; 128 values and less go through C memory, more are pinned.
//
//	go test -tags mpi -run '^$' -bench SelfMessage ./comm/mpi/
func BenchmarkSelfMessage(b *testing.B) {
	c := world.Comm()
	me := c.Rank()
	for _, n := range []int{1, 128, 129, 4096} {
		b.Run(fmt.Sprintf("values=%d", n), func(b *testing.B) {
			out, in := make([]float64, n), make([]float64, n)
			reqs := make([]comm.Request, 2)
			b.SetBytes(int64(8 * n))
			b.ReportAllocs()
			for b.Loop() {
				reqs[0], _ = c.Irecv(in, me, 1)
				reqs[1], _ = c.Isend(out, me, 1)
				if err := c.Waitall(reqs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The cost of a small collective over the world: an Allreduce of the two
// values a solver's check reduces, and a Barrier.
//
//	go test -tags mpi -run '^$' -bench Collective -benchtime 20000x -exec "mpirun -np 2" ./comm/mpi/
func BenchmarkCollective(b *testing.B) {
	c := world.Comm()
	b.Run("Allreduce2", func(b *testing.B) {
		in, out := []float64{1, 2}, make([]float64, 2)
		for b.Loop() {
			if err := c.Allreduce(comm.Max, in, out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Barrier", func(b *testing.B) {
		for b.Loop() {
			if err := c.Barrier(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
