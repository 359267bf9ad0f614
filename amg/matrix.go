// Package amg is classical (Ruge–Stüben) algebraic multigrid on an
// assembled sparse symmetric matrix: coarse points chosen from the strong
// couplings of the operator, interpolation from its rows, Galerkin coarse
// operators (PᵀAP), symmetric Gauss–Seidel smoothing and a dense bottom
// solve. It follows the medium wherever it goes — a one-cell channel, the
// clusters of a random map of 10⁶ — where coarse grids made by halving
// cannot (benchmarks/results/2026-12-04-black-box-coarsening.md).
//
// Everything runs in one goroutine in a fixed order: a hierarchy and a
// cycle are the same bits wherever the matrix came from.
package amg

import (
	"fmt"
	"slices"
	"sync"
)

// Matrix is a sparse matrix in compressed rows: row i's entries are
// Col[Ptr[i]:Ptr[i+1]] and Val[Ptr[i]:Ptr[i+1]].
type Matrix struct {
	Rows, Cols int
	Ptr        []int
	Col        []int32
	Val        []float64
}

// Builder assembles a matrix row by row.
type Builder struct{ m Matrix }

// NewBuilder starts a matrix of the given columns, room for about nnz
// entries.
func NewBuilder(cols, nnz int) *Builder {
	return &Builder{m: Matrix{Cols: cols, Ptr: []int{0}, Col: make([]int32, 0, nnz), Val: make([]float64, 0, nnz)}}
}

// Add appends an entry to the row being built.
func (b *Builder) Add(col int, v float64) {
	b.m.Col = append(b.m.Col, int32(col))
	b.m.Val = append(b.m.Val, v)
}

// EndRow closes the row being built.
func (b *Builder) EndRow() {
	b.m.Ptr = append(b.m.Ptr, len(b.m.Col))
	b.m.Rows++
}

// Matrix is what was built.
func (b *Builder) Matrix() *Matrix { return &b.m }

// Nonzeros is the number of stored entries.
func (a *Matrix) Nonzeros() int { return len(a.Col) }

// MulVec sets y = A·x.
func (a *Matrix) MulVec(y, x []float64) { a.mulRows(y, x, 0, a.Rows) }

// mulRows sets rows [lo, hi) of y = A·x.
func (a *Matrix) mulRows(y, x []float64, lo, hi int) {
	for i := lo; i < hi; i++ {
		s := 0.0
		for k := a.Ptr[i]; k < a.Ptr[i+1]; k++ {
			s += float64(a.Val[k] * x[a.Col[k]])
		}
		y[i] = s
	}
}

// check says what is wrong with a's structure, or nil.
func (a *Matrix) check() error {
	if len(a.Ptr) != a.Rows+1 || a.Ptr[0] != 0 || a.Ptr[a.Rows] != len(a.Col) || len(a.Col) != len(a.Val) {
		return fmt.Errorf("amg: a %d×%d matrix with %d row starts, %d columns and %d values", a.Rows, a.Cols, len(a.Ptr), len(a.Col), len(a.Val))
	}
	for i := range a.Rows {
		if a.Ptr[i] > a.Ptr[i+1] {
			return fmt.Errorf("amg: row %d ends before it starts", i)
		}
		for _, j := range a.Col[a.Ptr[i]:a.Ptr[i+1]] {
			if j < 0 || int(j) >= a.Cols {
				return fmt.Errorf("amg: row %d has column %d of %d", i, j, a.Cols)
			}
		}
	}
	return nil
}

// transpose is Aᵀ, each row's columns in increasing order (a matrix of
// structure alone, no values, gives one).
func (a *Matrix) transpose() *Matrix {
	t := &Matrix{Rows: a.Cols, Cols: a.Rows, Ptr: make([]int, a.Cols+1), Col: make([]int32, len(a.Col))}
	if a.Val != nil {
		t.Val = make([]float64, len(a.Val))
	}
	for _, j := range a.Col {
		t.Ptr[j+1]++
	}
	for j := range a.Cols {
		t.Ptr[j+1] += t.Ptr[j]
	}
	next := slices.Clone(t.Ptr[:a.Cols])
	for i := range a.Rows {
		for k := a.Ptr[i]; k < a.Ptr[i+1]; k++ {
			j := a.Col[k]
			t.Col[next[j]] = int32(i)
			if a.Val != nil {
				t.Val[next[j]] = a.Val[k]
			}
			next[j]++
		}
	}
	return t
}

// Parallel runs f over parts [lo, hi) of [0, n) — possibly at once, on
// other goroutines — and returns when every part is done.
type Parallel func(n int, f func(lo, hi int))

// run runs f over [0, n) in p's parts; a nil p is one part, in the
// caller.
func (p Parallel) run(n int, f func(lo, hi int)) {
	if p == nil {
		f(0, n)
		return
	}
	p(n, f)
}

// buildRows is a matrix of rows rows and cols columns whose rows [lo, hi)
// build appends to part (Ptr starting at 0, Val nil where values is
// false), over the parts par makes. Each row is built alone, so the
// matrix is the same bits however par splits; the parts are joined in
// the order of their rows.
func buildRows(par Parallel, rows, cols int, values bool, build func(part *Matrix, lo, hi int)) *Matrix {
	type piece struct {
		lo int
		m  *Matrix
	}
	var mu sync.Mutex
	var pieces []piece
	par.run(rows, func(lo, hi int) {
		m := &Matrix{Rows: hi - lo, Cols: cols, Ptr: make([]int, 1, hi-lo+1)}
		if values {
			m.Val = []float64{}
		}
		build(m, lo, hi)
		mu.Lock()
		pieces = append(pieces, piece{lo, m})
		mu.Unlock()
	})
	if len(pieces) == 1 {
		return pieces[0].m
	}
	slices.SortFunc(pieces, func(a, b piece) int { return a.lo - b.lo })
	nnz := 0
	for _, p := range pieces {
		nnz += len(p.m.Col)
	}
	c := &Matrix{Rows: rows, Cols: cols, Ptr: make([]int, 1, rows+1), Col: make([]int32, 0, nnz)}
	if values {
		c.Val = make([]float64, 0, nnz)
	}
	for _, p := range pieces {
		base := len(c.Col)
		for _, q := range p.m.Ptr[1:] {
			c.Ptr = append(c.Ptr, base+q)
		}
		c.Col = append(c.Col, p.m.Col...)
		c.Val = append(c.Val, p.m.Val...)
	}
	return c
}

// mul is A·B (Gustavson's row by row product): a pass to count each
// row's entries, then one to sum them, each row's entries in the order
// they are first met, each sum in the order of A's and B's entries; each
// pass over the rows in parts over par.
func mul(par Parallel, a, b *Matrix) *Matrix {
	c := &Matrix{Rows: a.Rows, Cols: b.Cols, Ptr: make([]int, a.Rows+1)}
	par.run(a.Rows, func(lo, hi int) {
		where := make([]int, b.Cols) // row+1 of the last row that met column j
		for i := lo; i < hi; i++ {
			n := 0
			for k := a.Ptr[i]; k < a.Ptr[i+1]; k++ {
				kk := a.Col[k]
				for _, j := range b.Col[b.Ptr[kk]:b.Ptr[kk+1]] {
					if where[j] != i+1 {
						where[j] = i + 1
						n++
					}
				}
			}
			c.Ptr[i+1] = n
		}
	})
	for i := range a.Rows {
		c.Ptr[i+1] += c.Ptr[i]
	}
	c.Col, c.Val = make([]int32, c.Ptr[a.Rows]), make([]float64, c.Ptr[a.Rows])
	par.run(a.Rows, func(lo, hi int) {
		where := make([]int, b.Cols) // place+1 of column j in its row, if that row is the one being built
		for i := lo; i < hi; i++ {
			start, end := c.Ptr[i], c.Ptr[i]
			for k := a.Ptr[i]; k < a.Ptr[i+1]; k++ {
				aik, kk := a.Val[k], a.Col[k]
				for l := b.Ptr[kk]; l < b.Ptr[kk+1]; l++ {
					j := b.Col[l]
					if p := where[j]; p > start {
						c.Val[p-1] += float64(aik * b.Val[l])
						continue
					}
					c.Col[end], c.Val[end] = j, aik*b.Val[l]
					end++
					where[j] = end
				}
			}
		}
	})
	return c
}
