package benchmarks

import (
	"fmt"
	"io"
	"math"
	"time"
)

// The assembled-matrix comparison: what heat's matrix-free operator saves
// over a code that stores the operator as a sparse matrix (PETSc's AIJ,
// hypre's ParCSR), on one core. The matrix is the same 5/7-point operator
// −∇² on the cell-centred grid, Dirichlet ghosts folded into the diagonal,
// in compressed sparse rows with 32-bit column indices (PETSc's default):
// 12 bytes per stored entry, 5 or 7 entries a row, where the stencil reads
// one value per cell.

// csr is a sparse matrix in compressed sparse rows.
type csr struct {
	start []int32 // row i's entries are start[i] .. start[i+1]
	col   []int32
	val   []float64
}

// assemble is −∇² on an n^dims grid of unit extent with zero Dirichlet
// faces: the matrix an assembled solver builds before its first iteration.
func assemble(dims, n int) *csr {
	cells := int(math.Pow(float64(n), float64(dims)))
	m := &csr{start: make([]int32, 0, cells+1), col: make([]int32, 0, (2*dims+1)*cells), val: make([]float64, 0, (2*dims+1)*cells)}
	h2 := float64(n * n) // 1/h²
	stride := make([]int, dims)
	s := 1
	for a := dims - 1; a >= 0; a-- {
		stride[a] = s
		s *= n
	}
	idx := make([]int, dims)
	for i := range cells {
		rem := i
		for a := range dims {
			idx[a] = rem / stride[a]
			rem %= stride[a]
		}
		m.start = append(m.start, int32(len(m.col)))
		diag := 0.0
		for a := range dims {
			for _, d := range []int{-1, 1} {
				diag += h2
				if j := idx[a] + d; j < 0 || j >= n {
					diag += h2 // the ghost is −u: (2u − (−u)… folds into the diagonal
					continue
				}
				m.col = append(m.col, int32(i+d*stride[a]))
				m.val = append(m.val, -h2)
			}
		}
		m.col = append(m.col, int32(i))
		m.val = append(m.val, diag)
	}
	m.start = append(m.start, int32(len(m.col)))
	return m
}

// residual sets r = b − A·u.
func (m *csr) residual(r, u, b []float64) {
	for i := range r {
		s := 0.0
		lo, hi := m.start[i], m.start[i+1]
		cols, vals := m.col[lo:hi], m.val[lo:hi]
		for k, c := range cols {
			s += vals[k] * u[c]
		}
		r[i] = b[i] - s
	}
}

// AssembledPoint is the comparison at one size, in work units of the
// same grid's explicit heat step (matrix-free) timed in the same run.
type AssembledPoint struct {
	Dims, N          int
	StepS            float64 // 1 WU
	AssembleS        float64 // building the matrix
	ResidualS        float64 // one residual b − A·u with it
	MatrixBytes      int     // what it stores
	FieldBytesPerRow int     // what a matrix-free pass reads per cell: u and b
}

// AssembledStudy times, for each size on one core, the assembly of the
// operator and one residual with it, against heat's explicit step.
func AssembledStudy(w io.Writer, dims int, sizes []int) ([]AssembledPoint, error) {
	var pts []AssembledPoint
	fmt.Fprintf(w, "\nassembled operator (CSR, 32-bit columns, as PETSc AIJ) against heat's matrix-free stencil, %dD, 1 rank, 1 thread:\n", dims)
	fmt.Fprintf(w, "%6s %9s %11s %12s %10s %12s %14s\n", "n", "step_ms", "assemble_ms", "assembleWU", "residual_ms", "residualWU", "matrix_bytes")
	for _, n := range sizes {
		spec, _ := poissonSpec(dims, n, 1)
		step, err := timeExplicit(spec, 1, max(3, int(2e7/math.Pow(float64(n), float64(dims)))))
		if err != nil {
			return pts, err
		}
		p := AssembledPoint{Dims: dims, N: n, StepS: step, AssembleS: math.Inf(1), ResidualS: math.Inf(1)}
		var m *csr
		for range 3 {
			t0 := time.Now()
			m = assemble(dims, n)
			p.AssembleS = min(p.AssembleS, time.Since(t0).Seconds())
		}
		cells := len(m.start) - 1
		u, b, r := make([]float64, cells), make([]float64, cells), make([]float64, cells)
		for i := range u {
			u[i], b[i] = float64(i%17)/17, 1
		}
		m.residual(r, u, b) // warm
		for range 5 {
			t0 := time.Now()
			m.residual(r, u, b)
			p.ResidualS = min(p.ResidualS, time.Since(t0).Seconds())
		}
		p.MatrixBytes = 4*len(m.start) + 12*len(m.col)
		fmt.Fprintf(w, "%6d %9.3f %11.2f %12.1f %10.3f %12.2f %14d\n", n, 1e3*step, 1e3*p.AssembleS, p.AssembleS/step,
			1e3*p.ResidualS, p.ResidualS/step, p.MatrixBytes)
		pts = append(pts, p)
	}
	fmt.Fprintf(w, "WU = one explicit (matrix-free) heat step of the same grid, timed in this run; the matrix-free multigrid's own setup is the setupWU above\n")
	return pts, nil
}
