package amg

import (
	"fmt"
	"sync"
	"testing"
)

// BenchmarkSetup and BenchmarkCycle: a random two-material map of 10⁴.
func BenchmarkSetup(b *testing.B) {
	for _, n := range []int{256, 1024} {
		a := diffusion(n, n, randomMap(n*n, 1e4, 1), false)
		for _, parts := range []int{1, 2} {
			par := evenParts(parts)
			b.Run(fmt.Sprintf("n=%d/parts=%d", n, parts), func(b *testing.B) {
				for b.Loop() {
					if _, err := Setup(a, Options{Parallel: par}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkCycle(b *testing.B) {
	for _, n := range []int{256, 1024} {
		a := diffusion(n, n, randomMap(n*n, 1e4, 1), false)
		for _, parts := range []int{1, 2} {
			h, err := Setup(a, Options{Parallel: evenParts(parts)})
			if err != nil {
				b.Fatal(err)
			}
			x, r := make([]float64, n*n), make([]float64, n*n)
			for i := range r {
				r[i] = 1
			}
			b.Run(fmt.Sprintf("n=%d/parts=%d", n, parts), func(b *testing.B) {
				for b.Loop() {
					h.Cycle(x, r)
				}
			})
		}
	}
}

// evenParts is a Parallel of parts even parts on goroutines (nil: one, in
// the caller).
func evenParts(parts int) Parallel {
	if parts == 1 {
		return nil
	}
	return func(n int, f func(lo, hi int)) {
		var wg sync.WaitGroup
		for p := range parts {
			wg.Go(func() { f(n*p/parts, n*(p+1)/parts) })
		}
		wg.Wait()
	}
}

// BenchmarkScale: an implicit step's hierarchy of the same map — the
// setup from the conduction with the capacities (SetMass, once a run),
// and the scaling to one step length (Scale, once a step length).
func BenchmarkScale(b *testing.B) {
	for _, n := range []int{256, 1024} {
		a := diffusion(n, n, randomMap(n*n, 1e4, 1), false)
		mass := make([]float64, n*n)
		for i := range mass {
			mass[i] = 1
		}
		b.Run(fmt.Sprintf("n=%d/part=setup-with-mass", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				h, err := Setup(a, Options{})
				if err == nil {
					err = h.SetMass(mass)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(n*n), "ns/cell")
		})
		h, err := Setup(a, Options{})
		if err == nil {
			err = h.SetMass(mass)
		}
		if err != nil {
			b.Fatal(err)
		}
		beta := 1.0
		b.Run(fmt.Sprintf("n=%d/part=scale", n), func(b *testing.B) {
			for b.Loop() {
				beta *= 1.01
				if err := h.Scale(1, beta); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
