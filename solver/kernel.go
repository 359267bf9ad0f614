package solver

// The stencil kernels update one row of cells along the contiguous last
// axis. The reference loop, in 2D, is
//
//	for j := range d {
//		d[j] = c0·c[j+1] + cx·(c[j] + c[j+2]) + cy·(s[j] + n[j]) [+ f[j]]
//	}
//
// where c is the row with one extra cell on each side (west and east), s and
// n the rows south and north, and f the source scaled to the update. In 3D a
// term cz·(l[j] + u[j]) for the planes below and above follows the y term.
// Both equations use it: FTCS heat with c_a = α·dt/h_a², c0 = 1 − 2·Σc_a,
// f = dt·source; weighted Jacobi for ∇²u = source with c_a = ω·inv/h_a²,
// c0 = 1 − ω, f = −ω·inv·source, inv = 1/Σ(2/h_a²) (solver.go).
//
// Every path — generic or SIMD, interior, rim or temporal tile, any thread
// count — evaluates exactly these operations in this order, and each product
// is rounded on its own (no fused multiply-add: the float64 conversions in
// the generic code forbid the compiler to fuse, and the SIMD code uses
// separate Mul and Add), so results are bit-for-bit identical however the
// grid is split, on every GOAMD64 level.

// stencil holds one rank's strides and coefficients.
type stencil struct {
	sy, sz         int     // flat distance to the y and z neighbours
	c0, cx, cy, cz float64 // weights of the centre and of each axis' neighbours
}

// rowArgs are the operands of one row update; every slice but c has the
// row's length n >= 1 and c has n+2. l and u are nil in 2D, f is nil
// without a source.
type rowArgs struct {
	d, c, s, n, l, u, f []float64
}

// rowKernel updates one row.
type rowKernel func(k *stencil, r *rowArgs)

// kernels are the row kernels of one build: generic, or SIMD where the
// build and the CPU have it.
type kernels struct {
	name           string
	heat2D, heat3D rowKernel
}

// generic is the portable set, always built.
var generic = kernels{name: "generic", heat2D: heat2DGeneric, heat3D: heat3DGeneric}

// active is the set New uses: the fastest this build and CPU support
// (see kernel_simd_amd64.go); tests switch it with useKernels.
var active = bestKernels()

// pick is the row kernel of a 2D or 3D grid from a set.
func (ks kernels) pick(nd int) rowKernel {
	if nd == 2 {
		return ks.heat2D
	}
	return ks.heat3D
}

// maxAbsDiff is max |a[j] − b[j]|; a NaN anywhere makes it NaN.
func maxAbsDiff(a, b []float64) float64 {
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

// KernelName is the name of the kernel set this build and CPU use:
// "generic", "avx2" or "avx512".
func KernelName() string { return active.name }
