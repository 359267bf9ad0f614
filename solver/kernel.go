package solver

// The stencil kernels update one row of cells (along the contiguous last
// axis) at a time. The reference loop, for 2D heat, is
//
//	for i := range row {
//		u1[i] = c0·u[i] + cx·(u[i−1] + u[i+1]) + cy·(u[i−sy] + u[i+sy]) [+ dt·f[i]]
//	}
//
// and in 3D a third term cz·(u[i−sz] + u[i+sz]) follows the y term. Jacobi
// for ∇²u = f is
//
//	u1[i] = (cx·(u[i−1] + u[i+1]) + cy·(u[i−sy] + u[i+sy]) [+ cz·(…)] − f[i]) · inv
//
// with cx = 1/hx², …, inv = 1/Σ(2/h²). Every path — interior, rim, any
// thread count — evaluates exactly these operations in this order, and each
// product is rounded on its own (the float64 conversions forbid the compiler
// to fuse a multiply and an add), so results are bit-for-bit identical
// however the grid is split and on every GOAMD64 level.

// stencil holds one rank's strides and coefficients.
type stencil struct {
	sy, sz         int     // flat distance to the y and z neighbours
	c0, cx, cy, cz float64 // heat weights (cx, cy, cz are 1/h² for Jacobi)
	inv            float64 // Jacobi: 1/Σ(2/h²)
}

// rowKernel updates dst[i:i+n] (n >= 1) from src; f is the per-cell source
// term (already multiplied by dt for heat) or nil. The heat kernels carry
// the west and centre values in registers from one cell to the next and
// handle two cells per iteration; the arithmetic per cell is unchanged.
type rowKernel func(k *stencil, dst, src, f []float64, i, n int)

func heat2D(k *stencil, dst, src, f []float64, i, n int) {
	d := dst[i : i+n]
	c := src[i : i+n]
	w := src[i-1 : i-1+n]
	e := src[i+1 : i+1+n]
	s := src[i-k.sy : i-k.sy+n]
	no := src[i+k.sy : i+k.sy+n]
	c0, cx, cy := k.c0, k.cx, k.cy
	c, w, e, s, no = c[:len(d)], w[:len(d)], e[:len(d)], s[:len(d)], no[:len(d)]
	if f == nil {
		// West and centre are the previous centre and east: carry them in
		// registers instead of loading them again.
		west, mid := w[0], c[0]
		j := 0
		for ; j < len(d)-1; j += 2 {
			e0, e1 := e[j], e[j+1]
			d[j] = float64(c0*mid) + float64(cx*(west+e0)) + float64(cy*(s[j]+no[j]))
			d[j+1] = float64(c0*e0) + float64(cx*(mid+e1)) + float64(cy*(s[j+1]+no[j+1]))
			west, mid = e0, e1
		}
		for ; j < len(d); j++ {
			east := e[j]
			d[j] = float64(c0*mid) + float64(cx*(west+east)) + float64(cy*(s[j]+no[j]))
			west, mid = mid, east
		}
		return
	}
	g := f[i : i+n]
	g = g[:len(d)]
	west, mid := w[0], c[0]
	for j := range d {
		east := e[j]
		d[j] = float64(c0*mid) + float64(cx*(west+east)) + float64(cy*(s[j]+no[j])) + g[j]
		west, mid = mid, east
	}
}

func heat3D(k *stencil, dst, src, f []float64, i, n int) {
	d := dst[i : i+n]
	c := src[i : i+n]
	w := src[i-1 : i-1+n]
	e := src[i+1 : i+1+n]
	s := src[i-k.sy : i-k.sy+n]
	no := src[i+k.sy : i+k.sy+n]
	lo := src[i-k.sz : i-k.sz+n]
	up := src[i+k.sz : i+k.sz+n]
	c0, cx, cy, cz := k.c0, k.cx, k.cy, k.cz
	c, w, e, s, no, lo, up = c[:len(d)], w[:len(d)], e[:len(d)], s[:len(d)], no[:len(d)], lo[:len(d)], up[:len(d)]
	if f == nil {
		west, mid := w[0], c[0]
		j := 0
		for ; j < len(d)-1; j += 2 {
			e0, e1 := e[j], e[j+1]
			d[j] = float64(c0*mid) + float64(cx*(west+e0)) + float64(cy*(s[j]+no[j])) + float64(cz*(lo[j]+up[j]))
			d[j+1] = float64(c0*e0) + float64(cx*(mid+e1)) + float64(cy*(s[j+1]+no[j+1])) + float64(cz*(lo[j+1]+up[j+1]))
			west, mid = e0, e1
		}
		for ; j < len(d); j++ {
			east := e[j]
			d[j] = float64(c0*mid) + float64(cx*(west+east)) + float64(cy*(s[j]+no[j])) + float64(cz*(lo[j]+up[j]))
			west, mid = mid, east
		}
		return
	}
	g := f[i : i+n]
	g = g[:len(d)]
	west, mid := w[0], c[0]
	for j := range d {
		east := e[j]
		d[j] = float64(c0*mid) + float64(cx*(west+east)) + float64(cy*(s[j]+no[j])) + float64(cz*(lo[j]+up[j])) + g[j]
		west, mid = mid, east
	}
}

func jacobi2D(k *stencil, dst, src, f []float64, i, n int) {
	d := dst[i : i+n]
	w := src[i-1 : i-1+n]
	e := src[i+1 : i+1+n]
	s := src[i-k.sy : i-k.sy+n]
	no := src[i+k.sy : i+k.sy+n]
	cx, cy, inv := k.cx, k.cy, k.inv
	w, e, s, no = w[:len(d)], e[:len(d)], s[:len(d)], no[:len(d)]
	if f == nil {
		for j := range d {
			d[j] = (float64(cx*(w[j]+e[j])) + float64(cy*(s[j]+no[j]))) * inv
		}
		return
	}
	g := f[i : i+n]
	g = g[:len(d)]
	for j := range d {
		d[j] = (float64(cx*(w[j]+e[j])) + float64(cy*(s[j]+no[j])) - g[j]) * inv
	}
}

func jacobi3D(k *stencil, dst, src, f []float64, i, n int) {
	d := dst[i : i+n]
	w := src[i-1 : i-1+n]
	e := src[i+1 : i+1+n]
	s := src[i-k.sy : i-k.sy+n]
	no := src[i+k.sy : i+k.sy+n]
	lo := src[i-k.sz : i-k.sz+n]
	up := src[i+k.sz : i+k.sz+n]
	cx, cy, cz, inv := k.cx, k.cy, k.cz, k.inv
	w, e, s, no, lo, up = w[:len(d)], e[:len(d)], s[:len(d)], no[:len(d)], lo[:len(d)], up[:len(d)]
	if f == nil {
		for j := range d {
			d[j] = (float64(cx*(w[j]+e[j])) + float64(cy*(s[j]+no[j])) + float64(cz*(lo[j]+up[j]))) * inv
		}
		return
	}
	g := f[i : i+n]
	g = g[:len(d)]
	for j := range d {
		d[j] = (float64(cx*(w[j]+e[j])) + float64(cy*(s[j]+no[j])) + float64(cz*(lo[j]+up[j])) - g[j]) * inv
	}
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
