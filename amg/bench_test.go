package amg

import (
	"fmt"
	"testing"
)

// BenchmarkSetup and BenchmarkCycle: a random two-material map of 10⁴.
func BenchmarkSetup(b *testing.B) {
	for _, n := range []int{256, 1024} {
		a := diffusion(n, n, randomMap(n*n, 1e4, 1), false)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Setup(a, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCycle(b *testing.B) {
	for _, n := range []int{256, 1024} {
		a := diffusion(n, n, randomMap(n*n, 1e4, 1), false)
		h, err := Setup(a, Options{})
		if err != nil {
			b.Fatal(err)
		}
		x, r := make([]float64, n*n), make([]float64, n*n)
		for i := range r {
			r[i] = 1
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				h.Cycle(x, r)
			}
		})
	}
}
