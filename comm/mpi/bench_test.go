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
