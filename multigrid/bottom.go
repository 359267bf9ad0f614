package multigrid

import (
	"fmt"
	"math"
)

// The bottom solver: conjugate gradients on the coarsest level, which one
// rank holds whole. Its dot products run over the rows in C order on that
// rank alone, so they too are the same bits on every split.

// bottomTol is the relative 2-norm of the residual the bottom solve
// reaches: far below what a V-cycle's convergence factor can tell.
const bottomTol = 1e-12

// cg holds the bottom solver's vectors.
type cg struct{ x, p, q []float64 }

// bottomSolve solves A·u = b on the level (boundary condition bc) from the
// current u: CG on the correction's homogeneous equation. A singular
// problem's residual and correction are kept at zero mean.
func (l *level) bottomSolve(bc *boundary, singular bool) error {
	if l.cg == nil {
		n := l.lay.Len()
		l.cg = &cg{x: make([]float64, n), p: make([]float64, n), q: make([]float64, n)}
	}
	x, p, q := l.cg.x, l.cg.p, l.cg.q
	if err := l.exchange(l.u, bc); err != nil {
		return err
	}
	l.residual()
	r := l.tmp
	if singular {
		l.subtractMean(r)
	}
	clear(x)
	copy(p, r)
	rr := l.dot(r, r)
	stop := bottomTol * bottomTol * rr
	limit := 4*l.cells() + 20
	for it := 0; rr > stop && it < limit; it++ {
		if err := l.exchange(p, l.bc0); err != nil {
			return err
		}
		l.apply(p, q)
		pq := l.dot(p, q)
		if !(pq > 0) {
			if math.IsNaN(pq) {
				return fmt.Errorf("multigrid: the bottom solve on %s met a NaN", l)
			}
			break // converged to rounding (or the null space)
		}
		alpha := rr / pq
		l.forCells(func(i int) {
			x[i] += alpha * p[i]
			r[i] -= alpha * q[i]
		})
		next := l.dot(r, r)
		beta := next / rr
		rr = next
		l.forCells(func(i int) { p[i] = r[i] + beta*p[i] })
	}
	if singular {
		l.subtractMean(x)
	}
	l.forCells(func(i int) { l.u[i] += x[i] })
	return nil
}

// apply sets q = A·p over the box (p's ghosts must be current).
func (l *level) apply(p, q []float64) { l.op.Apply(q, p) }

// dot is Σ a·b over the box, in C order.
func (l *level) dot(a, b []float64) float64 {
	s := 0.0
	for _, r := range l.rows {
		for j := r.Start; j < r.Start+r.N; j++ {
			s += a[j] * b[j]
		}
	}
	return s
}

// forCells calls f with the flat index of every cell of the box, in C order.
func (l *level) forCells(f func(i int)) {
	for _, r := range l.rows {
		for j := r.Start; j < r.Start+r.N; j++ {
			f(j)
		}
	}
}

// subtractMean removes the mean of x over the box (one rank: C order).
func (l *level) subtractMean(x []float64) {
	s := 0.0
	l.forCells(func(i int) { s += x[i] })
	mean := s / float64(l.cells())
	l.forCells(func(i int) { x[i] -= mean })
}
