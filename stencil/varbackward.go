package stencil

import "math"

// VarBackwardKernel is the componentwise backward error's pass over rows of
// variable coefficients (rows like a VarKernel's): with r the residual
// kernel's M[i]·(f[i] − (A[i]·u[i] − φ)), bit for bit, it returns the
// largest |r[i]| / (t[i] + max(|f[i]|, data)) over the free cells (M ≠ 0;
// |r| itself where the denominator is 0), the largest |r[i]| and the
// largest |u[i]| over all cells; NaN wins each. t is (|A||u|)[i], evaluated
// left to right, each product rounded on its own:
//
//	t = |A[i]·u[i]| + B_x[i]·(|u[i+1]|+|u[i]|) + B_x[i−1]·(|u[i]|+|u[i−1]|)
//	    + B_y[i]·(…) + B_y[i−SY]·(…) [+ B_z[i]·(…) + B_z[i−SZ]·(…)]
//
// (A nil: the first term is left out, not added as 0). One pass where the
// residual and a second walk over it took three: the residual's field is
// never stored. The vector kernels evaluate exactly these operations in
// this order, rows of at least a vector's cells.
type VarBackwardKernel func(k *VarCoeffs, u, f []float64, data float64, start, n, rows, stride int) (omega, res, big float64)

// varBackward is the generic VarBackwardKernel (3D with three).
func varBackward(three bool, k *VarCoeffs, u, f []float64, data float64, start, n, rows, stride int) (omega, res, big float64) {
	var q, m, b uint64
	for r := range rows {
		i := start + r*stride
		q, m, b = varBackwardRow(three, k, u, f, data, i, n, q, m, b)
	}
	return absFloat(q), absFloat(m), absFloat(b)
}

// varBackwardRow folds the row of n cells from flat index i into the
// maxima's bits q, m, b.
func varBackwardRow(three bool, k *VarCoeffs, u, f []float64, data float64, i, n int, q, m, b uint64) (uint64, uint64, uint64) {
	sy, sz := k.SY, k.SZ
	w, c, e := u[i-1:i+n-1], u[i:i+n], u[i+1:i+n+1]
	so, no := u[i-sy:i-sy+n], u[i+sy:i+sy+n]
	bw, be := k.BX[i-1:i+n-1], k.BX[i:i+n]
	bs, bn := k.BY[i-sy:i-sy+n], k.BY[i:i+n]
	mk, g := k.M[i:i+n], f[i:i+n]
	var lo, up, bl, bu, a []float64
	if three {
		lo, up = u[i-sz : i-sz+n][:n], u[i+sz : i+sz+n][:n]
		bl, bu = k.BZ[i-sz : i-sz+n][:n], k.BZ[i : i+n][:n]
	}
	if k.A != nil {
		a = k.A[i : i+n][:n]
	}
	w, c, e, so, no = w[:n], c[:n], e[:n], so[:n], no[:n]
	bw, be, bs, bn, mk, g = bw[:n], be[:n], bs[:n], bn[:n], mk[:n], g[:n]
	worst := absFloat(q)
	for j := range n {
		mid := c[j]
		am := math.Abs(mid)
		phi := float64(be[j]*(e[j]-mid)) - float64(bw[j]*(mid-w[j])) +
			float64(bn[j]*(no[j]-mid)) - float64(bs[j]*(mid-so[j]))
		t := float64(be[j] * (math.Abs(e[j]) + am))
		au := 0.0
		if a != nil {
			au = float64(a[j] * mid)
			t = math.Abs(au) + t
		}
		t = t + float64(bw[j]*(am+math.Abs(w[j])))
		t = t + float64(bn[j]*(math.Abs(no[j])+am)) + float64(bs[j]*(am+math.Abs(so[j])))
		if three {
			phi = phi + float64(bu[j]*(up[j]-mid)) - float64(bl[j]*(mid-lo[j]))
			t = t + float64(bu[j]*(math.Abs(up[j])+am)) + float64(bl[j]*(am+math.Abs(lo[j])))
		}
		r := float64(mk[j] * (g[j] - (au - phi)))
		m, b = max(m, absBits(r)), max(b, absBits(mid))
		if mk[j] == 0 {
			continue
		}
		// Divide only where the quotient may pass the worst so far: |r|
		// below worst·den less a margin past the products' rounding (1e-15
		// over 2^-53) cannot round above it; a NaN fails the test.
		den := t + max(math.Abs(g[j]), data)
		ar := math.Abs(r)
		if ar < worst*den*(1-1e-15) {
			continue
		}
		if den > 0 {
			ar /= den
		}
		if q2 := absBits(ar); q2 > q {
			q, worst = q2, ar
		}
	}
	return q, m, b
}
