package multigrid

import (
	"fmt"
	"slices"
	"testing"

	"heat/comm/local"
	"heat/decomp"
	"heat/internal/team"
	"heat/stencil"
)

// BenchmarkCycle times one V-cycle on one rank from a converging iterate:
// the cost of a cycle without the setup.
func BenchmarkCycle(b *testing.B) {
	for _, c := range []struct{ dims, n int }{{2, 256}, {2, 1024}, {3, 64}, {3, 128}} {
		for _, threads := range []int{1, 2} {
			for _, cy := range []Cycle{V, W} {
				b.Run(fmt.Sprintf("dims=%d/n=%d/threads=%d/cycle=%v", c.dims, c.n, threads, cy), func(b *testing.B) {
					shape := slices.Repeat([]int{c.n}, c.dims)
					topo, _ := decomp.New(shape, 1, nil, nil)
					tm := team.New(threads, true)
					defer tm.Close()
					m, err := New(local.NewWorld(1).Comm(0), topo, Problem{Shape: shape, Length: slices.Repeat([]float64{1}, c.dims),
						Faces: faces(c.dims, stencil.Dirichlet, 0), Op: Operator{Beta: 1}}, Options{Cycle: cy}, tm)
					if err != nil {
						b.Fatal(err)
					}
					rhs := m.RHS()
					for i := range rhs {
						rhs[i] = 1
					}
					for b.Loop() {
						if _, err := m.Cycle(); err != nil {
							b.Fatal(err)
						}
					}
					cells := 1
					for _, n := range shape {
						cells *= n
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(cells), "ns/cell")
				})
			}
		}
	}
}
