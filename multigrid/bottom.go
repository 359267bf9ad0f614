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

// cg holds the bottom solver's vectors; in media also the preconditioned
// residual z and the inverse of the diagonal, or the dense factor.
type cg struct {
	x, p, q, z, inv []float64
	dense           *cholesky
}

// DenseCells is the largest bottom level in media solved by a dense
// Cholesky factor (2 MiB at 512 cells): a coarse level of copper beside
// epoxy took CG with the diagonal 50–65 iterations a solve, and the
// K-cycle solves the bottom level many times an iteration.
const DenseCells = 512

// bottomSolve solves A·u = b on the level (boundary condition bc) from the
// current u: CG on the correction's homogeneous equation; in media a small
// level by its dense factor, a larger one by CG preconditioned by the
// diagonal (a coarse level of copper beside epoxy, 2000:1, took plain CG
// thousands of iterations). A singular problem's residual and correction
// are kept at zero mean.
func (l *level) bottomSolve(bc *boundary, singular bool) error {
	if l.cg == nil {
		n := l.lay.Len()
		l.cg = &cg{x: make([]float64, n), p: make([]float64, n), q: make([]float64, n)}
	}
	if l.med != nil && !singular && l.cells() <= DenseCells {
		return l.bottomSolveDense(bc)
	}
	c := l.cg
	var inv []float64 // the inverse diagonal (media), nil: no preconditioner
	if l.med != nil && !singular {
		if c.inv == nil {
			c.z, c.inv = make([]float64, l.lay.Len()), make([]float64, l.lay.Len())
		}
		l.op.Diagonal(c.inv) // σ and β may have changed since the last solve
		l.forCells(func(i int) {
			if d := c.inv[i]; d != 0 {
				c.inv[i] = 1 / d
			}
		})
		inv = c.inv
	}
	x, p, q := c.x, c.p, c.q
	if err := l.exchange(l.u, bc); err != nil {
		return err
	}
	l.residual()
	r := l.tmp
	if singular {
		l.subtractMean(r)
	}
	clear(x)
	// z is the preconditioned residual: r itself without a preconditioner
	// (plain CG, the same operations as ever), D⁻¹r with one.
	z := r
	precondition := func() {}
	if inv != nil {
		z = c.z
		precondition = func() { l.forCells(func(i int) { z[i] = inv[i] * r[i] }) }
	}
	precondition()
	copy(p, z)
	rz := l.dot(r, z)
	rr := rz // ‖r‖₂², which the solve stops on
	if inv != nil {
		rr = l.dot(r, r)
	}
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
		alpha := rz / pq
		l.forCells(func(i int) {
			x[i] += float64(alpha * p[i])
			r[i] -= float64(alpha * q[i])
		})
		precondition()
		next := l.dot(r, z)
		rr = next
		if inv != nil {
			rr = l.dot(r, r)
		}
		beta := next / rz
		rz = next
		l.forCells(func(i int) { p[i] = z[i] + float64(beta*p[i]) })
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
			s += float64(a[j] * b[j])
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

var bottomIts int

func BottomIts() int { return bottomIts }

// cholesky is the dense factor L (A = L·Lᵀ, row-major, lower triangle) of
// a level's operator over its free cells, for the σ and β it was made at.
type cholesky struct {
	cells         []int // the free cells' flat indices, in C order
	l             []float64
	sigma, beta   float64
	rhs, solution []float64
}

// bottomSolveDense is bottomSolve in media on a small level: the
// correction's equation solved by the dense factor of the level's
// operator, which is assembled column by column from the operator itself
// (Apply of each free cell's unit vector, its ghosts the homogeneous
// faces') and factored again when σ or β change.
func (l *level) bottomSolveDense(bc *boundary) error {
	c := l.cg
	if c.dense == nil || c.dense.sigma != l.sigma || c.dense.beta != l.beta {
		f, err := l.factor()
		if err != nil {
			return err
		}
		c.dense = f
	}
	f := c.dense
	if err := l.exchange(l.u, bc); err != nil {
		return err
	}
	l.residual()
	for k, i := range f.cells {
		f.rhs[k] = l.tmp[i]
	}
	n := len(f.cells)
	y := f.solution
	for i := range n { // L·y = r
		s := f.rhs[i]
		row := f.l[i*n : i*n+i]
		for j, v := range row {
			s -= float64(v * y[j])
		}
		y[i] = s / f.l[i*n+i]
	}
	for i := n - 1; i >= 0; i-- { // Lᵀ·x = y
		s := y[i]
		for j := i + 1; j < n; j++ {
			s -= float64(f.l[j*n+i] * y[j])
		}
		y[i] = s / f.l[i*n+i]
	}
	for k, i := range f.cells {
		l.u[i] += y[k]
	}
	return nil
}

// factor assembles and factors the level's operator over its free cells.
func (l *level) factor() (*cholesky, error) {
	f := &cholesky{sigma: l.sigma, beta: l.beta}
	diag := make([]float64, l.lay.Len())
	l.op.Diagonal(diag)
	l.forCells(func(i int) {
		if diag[i] != 0 {
			f.cells = append(f.cells, i)
		}
	})
	n := len(f.cells)
	f.l, f.rhs, f.solution = make([]float64, n*n), make([]float64, n), make([]float64, n)
	e, col := l.cg.p, l.cg.q
	for k, j := range f.cells {
		clear(e)
		e[j] = 1
		if err := l.exchange(e, l.bc0); err != nil {
			return nil, err
		}
		l.apply(e, col)
		for m, i := range f.cells {
			if m >= k {
				f.l[m*n+k] = col[i] // the lower triangle of column k
			}
		}
	}
	for j := range n {
		d := f.l[j*n+j]
		for k := range j {
			d -= float64(f.l[j*n+k] * f.l[j*n+k])
		}
		if !(d > 0) {
			return nil, fmt.Errorf("multigrid: the bottom level %s is not positive definite (pivot %g at cell %d)", l, d, f.cells[j])
		}
		d = math.Sqrt(d)
		f.l[j*n+j] = d
		for i := j + 1; i < n; i++ {
			s := f.l[i*n+j]
			for k := range j {
				s -= float64(f.l[i*n+k] * f.l[j*n+k])
			}
			f.l[i*n+j] = s / d
		}
	}
	return f, nil
}
