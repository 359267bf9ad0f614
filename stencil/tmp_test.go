package stencil

import (
	"fmt"
	"testing"
)

func BenchmarkTmpRow(b *testing.B) {
	for _, n := range []int{256, 250, 2950} {
		c := make([]float64, n+2)
		s := make([]float64, n)
		nn := make([]float64, n)
		d := make([]float64, n)
		for i := range c {
			c[i] = 1
		}
		k := &Coeffs{C0: 0.5, CX: 0.125, CY: 0.125}
		r := &Row{D: d, C: c, S: s, N: nn}
		b.Run(fmt.Sprintf("n=%d/set", n), func(b *testing.B) {
			for b.Loop() {
				avx512.heat2D(k, r)
			}
		})
		b.Run(fmt.Sprintf("n=%d/asm", n), func(b *testing.B) {
			v := n &^ 7
			for b.Loop() {
				heat2DAVX512(&d[0], &c[0], &s[0], &nn[0], v, 1, 0, k.C0, k.CX, k.CY)
			}
		})
	}
}

func BenchmarkTmpTail(b *testing.B) {
	n := 250
	c := make([]float64, n+2)
	s := make([]float64, n)
	nn := make([]float64, n)
	d := make([]float64, n)
	k := &Coeffs{C0: 0.5, CX: 0.125, CY: 0.125}
	v := n &^ 7
	b.Run("two", func(b *testing.B) {
		for b.Loop() {
			heat2DAVX512(&d[0], &c[0], &s[0], &nn[0], v, 1, 0, k.C0, k.CX, k.CY)
			heat2DAVX512(&d[n-8], &c[n-8], &s[n-8], &nn[n-8], 8, 1, 0, k.C0, k.CX, k.CY)
		}
	})
	b.Run("one8", func(b *testing.B) {
		for b.Loop() {
			heat2DAVX512(&d[n-8], &c[n-8], &s[n-8], &nn[n-8], 8, 1, 0, k.C0, k.CX, k.CY)
		}
	})
	b.Run("one8aligned", func(b *testing.B) {
		for b.Loop() {
			heat2DAVX512(&d[240], &c[240], &s[240], &nn[240], 8, 1, 0, k.C0, k.CX, k.CY)
		}
	})
}
