package solver

import (
	"fmt"
	"slices"
	"testing"

	"heat/comm/local"
)

// BenchmarkStep times one heat step on one rank: 2D n=512 (fits in L3),
// n=4096 (DRAM), 3D n=256, with 1 and 2 worker threads.
func BenchmarkStep(b *testing.B) {
	for _, c := range []struct{ dims, n int }{{2, 512}, {2, 4096}, {3, 256}} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("dims=%d/n=%d/kernel=generic/threads=%d", c.dims, c.n, threads), func(b *testing.B) {
				s := heatSpec(slices.Repeat([]int{c.n}, c.dims))
				s.Initial = Random(s.Shape, 1, 1, 0)
				s.Threads = threads
				sv, err := New(local.NewWorld(1).Comm(0), s)
				if err != nil {
					b.Fatal(err)
				}
				defer sv.Close()
				cells := 1
				for _, n := range s.Shape {
					cells *= n
				}
				b.SetBytes(int64(16 * cells))
				b.ResetTimer()
				for b.Loop() {
					if err := sv.advance(false); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cells)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mupdates/s")
			})
		}
	}
}
