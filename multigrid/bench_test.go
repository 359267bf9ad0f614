package multigrid

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"heat/comm/local"
	"heat/decomp"
	"heat/internal/team"
	"heat/operator"
)

// BenchmarkCycle times one cycle on one rank from a converging iterate:
// the cost of a cycle without the setup, on the uniform medium and on a
// smooth variable one (HPGMG-FV's β as k: the media path's cycle).
func BenchmarkCycle(b *testing.B) {
	for _, c := range []struct{ dims, n int }{{2, 256}, {2, 1024}, {3, 64}, {3, 128}} {
		for _, threads := range []int{1, 2} {
			for _, cy := range []Cycle{V, W, F} {
				for _, medium := range []string{"uniform", "var"} {
					b.Run(fmt.Sprintf("dims=%d/n=%d/threads=%d/cycle=%v/medium=%s", c.dims, c.n, threads, cy, medium), func(b *testing.B) {
						m := benchMG(b, c.dims, c.n, threads, medium, Options{Cycle: cy})
						rhs := m.RHS()
						for i := range rhs {
							rhs[i] = 1
						}
						for b.Loop() {
							if _, err := m.Cycle(); err != nil {
								b.Fatal(err)
							}
						}
						b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(m.levels[0].cells()), "ns/cell")
					})
				}
			}
		}
	}
}

// benchMG is the benchmarks' problem, one rank of threads workers on an
// n^dims grid with zero Dirichlet faces: the uniform medium, or (medium
// "var") smoothMedia's.
func benchMG(b *testing.B, dims, n, threads int, medium string, opt Options) *MG {
	shape := slices.Repeat([]int{n}, dims)
	topo, _ := decomp.New(shape, 1, nil, nil)
	tm := team.New(threads, true)
	b.Cleanup(tm.Close)
	p := Problem{Shape: shape, Length: slices.Repeat([]float64{1}, dims),
		Faces: faces(dims, operator.Dirichlet, 0), Op: Operator{Beta: 1}}
	if medium == "var" {
		p.Media = smoothMedia(b, topo.Box(0))
	}
	m, err := New(local.NewWorld(1).Comm(0), topo, p, opt, tm)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkSweep times the finest level's weighted-Jacobi sweep (with its
// exchange and boundary ghosts), its residual and its backward error
// (Op.Backward), in Mupdates/s, on a uniform medium and on a smooth
// variable one (HPGMG-FV's β as k): beside solver's BenchmarkStep, the
// smoother's cost against the explicit step's, and the media's against the
// uniform operator's.
func BenchmarkSweep(b *testing.B) {
	for _, c := range []struct{ dims, n int }{{2, 256}, {2, 2048}, {3, 64}, {3, 256}} {
		for _, threads := range []int{1, 2} {
			for _, op := range []string{"jacobi", "residual", "component"} {
				for _, medium := range []string{"uniform", "var"} {
					b.Run(fmt.Sprintf("dims=%d/n=%d/threads=%d/op=%s/medium=%s", c.dims, c.n, threads, op, medium), func(b *testing.B) {
						m := benchMG(b, c.dims, c.n, threads, medium, Options{})
						l := m.levels[0]
						for i := range l.b {
							l.b[i], l.u[i] = 1, float64(i%7)/7
						}
						weights := []float64{0.8}
						// One sweep first: the arrays' first touch (page faults) is
						// not the sweep's cost (3D 256³ on 1 thread read 237
						// Mupdates/s with it, 450 without).
						if err := l.jacobi(weights, l.bc); err != nil {
							b.Fatal(err)
						}
						l.residual()
						for b.Loop() {
							switch op {
							case "jacobi":
								if err := l.jacobi(weights, l.bc); err != nil {
									b.Fatal(err)
								}
							case "residual":
								l.residual()
							default:
								l.op.Backward(l.u, l.b, 0)
							}
						}
						b.ReportMetric(float64(l.cells())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mupdates/s")
					})
				}
			}
		}
	}
}

// smoothMedia are HPGMG-FV's variable coefficient β = 5.5 + 4.5·tanh(10(r −
// 0.25)) (r the distance from the unit box's centre) as the k of the media
// of box, the whole grid on one rank.
func smoothMedia(b *testing.B, box decomp.Box) *operator.Media {
	lay := decomp.NewLayout(box, 1)
	nd := len(box.Lo)
	shape := box.Shape()
	n := box.Size()
	k, rhoC, held := make([]float64, n), make([]float64, n), make([]float64, n)
	c := make([]int, nd)
	for i := range n {
		rem := i
		for a := nd - 1; a >= 0; a-- {
			c[a], rem = rem%shape[a], rem/shape[a]
		}
		r2 := 0.0
		for a, x := range c {
			d := (float64(x)+0.5)/float64(shape[a]) - 0.5
			r2 += d * d
		}
		k[i], rhoC[i], held[i] = 5.5+4.5*math.Tanh(10*(math.Sqrt(r2)-0.25)), 1, math.NaN()
	}
	h := make([]float64, nd)
	for a := range h {
		h[a] = 1 / float64(shape[a])
	}
	none := make([][2]bool, nd)
	med, err := operator.NewMedia(lay, h, k, rhoC, held, none, func([]float64) error { return nil })
	if err != nil {
		b.Fatal(err)
	}
	return med
}
