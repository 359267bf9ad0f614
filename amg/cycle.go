package amg

import "math"

// maxDense is the largest last level Setup accepts (its dense factor:
// 200 MB at 5000 rows).
const maxDense = 5000

// Sweeps of symmetric Gauss–Seidel before and after each coarse
// correction: forward before, backward after, so that a cycle is a
// symmetric preconditioner.
const sweeps = 2

// Cycle sets x to one V-cycle's approximation of A⁻¹b from a zero guess
// (x and b of the first level's size; x may not alias b).
func (h *Hierarchy) Cycle(x, b []float64) {
	f := h.Levels[0]
	copy(f.b, b)
	h.cycle(0)
	copy(x, f.x)
}

func (h *Hierarchy) cycle(i int) {
	l := h.Levels[i]
	clear(l.x)
	if i == len(h.Levels)-1 {
		h.bottom.solve(l.x, l.b)
		return
	}
	for range sweeps {
		l.forward()
	}
	c := h.Levels[i+1]
	// The passes whose rows are each computed alone, split over the
	// hierarchy's Parallel: the same bits however they split.
	h.par.run(l.A.Rows, func(lo, hi int) { l.residual(lo, hi) })
	h.par.run(c.A.Rows, func(lo, hi int) { l.R.mulRows(c.b, l.r, lo, hi) })
	h.cycle(i + 1)
	// x += P·x_c
	p := l.P
	h.par.run(p.Rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			s := l.x[r]
			for k := p.Ptr[r]; k < p.Ptr[r+1]; k++ {
				s += float64(p.Val[k] * c.x[p.Col[k]])
			}
			l.x[r] = s
		}
	})
	for range sweeps {
		l.backward()
	}
}

// forward is a Gauss–Seidel sweep over the rows in order.
func (l *Level) forward() {
	a := l.A
	for i := range a.Rows {
		l.relax(i)
	}
}

// backward is a Gauss–Seidel sweep over the rows in reverse order.
func (l *Level) backward() {
	for i := l.A.Rows - 1; i >= 0; i-- {
		l.relax(i)
	}
}

// relax solves row i for x_i given the others.
func (l *Level) relax(i int) {
	a := l.A
	s := l.b[i]
	for k := a.Ptr[i]; k < a.Ptr[i+1]; k++ {
		if j := int(a.Col[k]); j != i {
			s -= float64(a.Val[k] * l.x[j])
		}
	}
	l.x[i] = s * l.inv[i]
}

// residual sets rows [lo, hi) of r = b − A·x.
func (l *Level) residual(lo, hi int) {
	a := l.A
	for i := lo; i < hi; i++ {
		s := l.b[i]
		for k := a.Ptr[i]; k < a.Ptr[i+1]; k++ {
			s -= float64(a.Val[k] * l.x[a.Col[k]])
		}
		l.r[i] = s
	}
}

// dense is the Cholesky factor of the last level, L row by row (lower
// triangle). A pivot that vanishes (a level with a null space: no held
// cell, no Dirichlet face, or a region cut off by holes) leaves its
// unknown at zero: the solve is then one solution of a consistent system.
type dense struct {
	n    int
	l    []float64
	skip []bool
}

// factor is A = L·Lᵀ, densely.
func factor(a *Matrix) *dense {
	n := a.Rows
	d := &dense{n: n, l: make([]float64, n*n), skip: make([]bool, n)}
	scale := make([]float64, n)
	for i := range n {
		for k := a.Ptr[i]; k < a.Ptr[i+1]; k++ {
			d.l[i*n+int(a.Col[k])] += a.Val[k]
		}
		scale[i] = math.Abs(d.l[i*n+i])
	}
	for j := range n {
		row := d.l[j*n : j*n+n]
		s := row[j]
		for k := range j {
			s -= float64(row[k] * row[k])
		}
		if !(s > 1e-12*scale[j]) {
			d.skip[j] = true
			for i := j; i < n; i++ {
				d.l[i*n+j] = 0
			}
			continue
		}
		piv := math.Sqrt(s)
		row[j] = piv
		for i := j + 1; i < n; i++ {
			ri := d.l[i*n : i*n+n]
			t := ri[j]
			for k := range j {
				t -= float64(ri[k] * row[k])
			}
			ri[j] = t / piv
		}
	}
	return d
}

// solve sets x = A⁻¹b (a skipped unknown 0).
func (d *dense) solve(x, b []float64) {
	n := d.n
	for i := range n {
		if d.skip[i] {
			x[i] = 0
			continue
		}
		s := b[i]
		for k := range i {
			s -= float64(d.l[i*n+k] * x[k])
		}
		x[i] = s / d.l[i*n+i]
	}
	for i := n - 1; i >= 0; i-- {
		if d.skip[i] {
			x[i] = 0
			continue
		}
		s := x[i]
		for k := i + 1; k < n; k++ {
			s -= float64(d.l[k*n+i] * x[k])
		}
		x[i] = s / d.l[i*n+i]
	}
}
