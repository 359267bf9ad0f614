// Package stencil holds the per-row kernels of heat's 5-point (2D) and
// 7-point (3D) stencils, apart from the loops that drive them: the explicit
// time stepper (solver) and the multigrid smoothers and residuals
// (multigrid) share one set, generic and SIMD.
//
// The update kernels change one row of cells along the contiguous last
// axis. The reference loop, in 2D, is
//
//	for j := range d {
//		d[j] = c0·c[j+1] + cx·(c[j] + c[j+2]) + cy·(s[j] + n[j]) [+ cf·f[j]]
//	}
//
// where c is the row with one extra cell on each side (west and east), s and
// n the rows south and north, and f a source. In 3D a term cz·(l[j] + u[j])
// for the planes below and above follows the y term. FTCS heat uses it with
// c_a = α·dt/h_a², c0 = 1 − 2·Σc_a, cf = 1, f = dt·source (1·f is f
// exactly); weighted Jacobi for σu − β∇²u = b with c_a = ω·β/(h_a²·diag),
// c0 = 1 − ω, cf = ω, f = b/diag, diag = σ + β·Σ 2/h_a², so that a sweep of
// another weight needs no other f (Chebyshev weights change every sweep).
//
// Every path — generic or SIMD, interior, rim or temporal tile, any thread
// count — evaluates exactly these operations in this order, and each product
// is rounded on its own (no fused multiply-add: the float64 conversions in
// the generic code forbid the compiler to fuse, and the SIMD code uses
// separate Mul and Add), so results are bit-for-bit identical however the
// grid is split, on every GOAMD64 level.
package stencil

// Coeffs are one grid's strides and weights.
type Coeffs struct {
	SY, SZ         int     // flat distance to the y and z neighbours
	C0, CX, CY, CZ float64 // weights of the centre and of each axis' neighbours
	CF             float64 // weight of the source
}

// Row are the operands of one row update; every slice but C has the row's
// length n >= 1 and C has n+2. L and U are nil in 2D, F is nil without a
// source.
type Row struct {
	D, C, S, N, L, U, F []float64
}

// Kernel updates one row.
type Kernel func(k *Coeffs, r *Row)

// Set is the row kernels of one build: generic, or SIMD where the build and
// the CPU have it.
type Set struct {
	Name           string
	heat2D, heat3D Kernel
}

// Generic is the portable set, always built.
var Generic = Set{Name: "generic", heat2D: heat2DGeneric, heat3D: heat3DGeneric}

// Active is the set the solvers use: the fastest this build and CPU support
// (see kernel_simd_amd64.go); tests switch it with Use.
var Active = best()

// Use makes Active ks until restore is called, so a test can run the
// generic path on a SIMD build, or each SIMD set in turn. Tests that use it
// must not run in parallel with tests that build solvers.
func Use(ks Set) (restore func()) {
	old := Active
	Active = ks
	return func() { Active = old }
}

// Pick is the row kernel of a 2D or 3D grid from a set.
func (ks Set) Pick(nd int) Kernel {
	if nd == 2 {
		return ks.heat2D
	}
	return ks.heat3D
}

// At points r at the row of n cells starting at flat index i of dst, and at
// its neighbours in src (k's strides); f, when not nil, is the source field.
func (k *Coeffs) At(r *Row, dst, src, f []float64, i, n int) {
	r.D = dst[i : i+n]
	r.C = src[i-1 : i+n+1]
	r.S = src[i-k.SY : i-k.SY+n]
	r.N = src[i+k.SY : i+k.SY+n]
	if k.SZ != 0 {
		r.L = src[i-k.SZ : i-k.SZ+n]
		r.U = src[i+k.SZ : i+k.SZ+n]
	}
	if f != nil {
		r.F = f[i : i+n]
	}
}

// MaxAbsDiff is max |a[j] − b[j]|; a NaN anywhere makes it NaN.
func MaxAbsDiff(a, b []float64) float64 {
	b = b[:len(a)]
	m := 0.0
	for j := range a {
		d := a[j] - b[j]
		if d < 0 {
			d = -d
		}
		if d > m || d != d {
			m = d
			if d != d {
				return d
			}
		}
	}
	return m
}
