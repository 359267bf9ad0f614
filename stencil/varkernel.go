package stencil

// The variable-coefficient kernels: the finite-volume operator
// L u = a·u − ∇·(b∇u) on a box whose face coefficients vary cell by cell
// (heterogeneous media). Every operand is a whole field in the box's flat
// layout (ghosts included); a kernel works on rows of n cells from flat
// index start, then rows−1 further rows each stride cells on.
//
// With B_a[i] the coefficient of the face between cell i and cell i+s_a
// (s_x = 1, s_y = SY, s_z = SZ; 1/h_a² folded in), the flux sum of cell i is,
// evaluated left to right, each product rounded on its own,
//
//	φ = B_x[i]·(u[i+1]−u[i]) − B_x[i−1]·(u[i]−u[i−1])
//	  + B_y[i]·(u[i+SY]−u[i]) − B_y[i−SY]·(u[i]−u[i−SY])
//	 [+ B_z[i]·(u[i+SZ]−u[i]) − B_z[i−SZ]·(u[i]−u[i−SZ])]
//
// and the kernels are
//
//	update    d[i] = u[i] + S[i]·(φ + f[i])       (f nil: u[i] + S[i]·φ)
//	residual  d[i] = M[i]·(f[i] − (A[i]·u[i] − φ)) (A nil: M[i]·(f[i] + φ))
//	apply     d[i] = M[i]·(A[i]·u[i] − φ)          (A nil: M[i]·(0 − φ))
//	smooth    d[i] = u[i] + w·(W[i]·(f[i] − (A[i]·u[i] − φ)))
//
// Held cells and holes are rows of the coefficients, not branches: their S,
// M and W are 0, so they keep their value and their residual is 0. The
// vector kernels evaluate exactly these operations in this order.

// VarCoeffs are the variable coefficients of one box, in its flat layout.
type VarCoeffs struct {
	SY, SZ     int       // flat distance to the y and z neighbours (SZ 0 in 2D)
	BX, BY, BZ []float64 // face coefficients per axis (BZ nil in 2D)
	S          []float64 // explicit update: dt/ρc per cell, 0 where held or a hole
	A          []float64 // a per cell (nil: 0)
	M          []float64 // 1 on a free cell, 0 where held or a hole
	W          []float64 // the smoother's M/diagonal per cell
}

// VarKernel is a variable-coefficient kernel over rows rows of n cells: the
// first from flat index start, each further one stride cells on. d is the
// destination, u the field, f the source or right-hand side; w is the
// smoother's weight (ignored by the others). The update with check returns
// max |d[i] − u[i]| (NaN if any is NaN); the others return 0.
type VarKernel func(k *VarCoeffs, d, u, f []float64, w float64, start, n, rows, stride int) float64

// varOp is what a variable-coefficient kernel computes from φ.
type varOp int

const (
	varUpdate varOp = iota
	varCheck
	varResidual
	varApply
	varSmooth
)

// VarKernels are a set's variable-coefficient kernels of one dimension.
type VarKernels struct {
	Update, Check, Residual, Apply, Smooth VarKernel
}

// Var is the set's variable-coefficient kernels for a 2D or 3D box.
func (ks Set) Var(nd int) VarKernels {
	if ks.var2D.Update == nil {
		return Generic.Var(nd)
	}
	return byDims(nd, ks.var2D, ks.var3D)
}

// genericVar are the portable variable-coefficient kernels.
func genericVar(three bool) VarKernels {
	mk := func(op varOp) VarKernel {
		return func(k *VarCoeffs, d, u, f []float64, w float64, start, n, rows, stride int) float64 {
			var m uint64
			for r := range rows {
				i := start + r*stride
				if three {
					m = max(m, varRow3D(op, k, d, u, f, w, i, n))
				} else {
					m = max(m, varRow2D(op, k, d, u, f, w, i, n))
				}
			}
			return absFloat(m)
		}
	}
	return VarKernels{Update: mk(varUpdate), Check: mk(varCheck), Residual: mk(varResidual), Apply: mk(varApply), Smooth: mk(varSmooth)}
}

// varRow2D is one 2D row of a variable-coefficient kernel; with varCheck it
// returns the largest absBits of the change.
func varRow2D(op varOp, k *VarCoeffs, d, u, f []float64, w float64, i, n int) uint64 {
	sy := k.SY
	c := u[i-1 : i+n+1]
	so, no := u[i-sy:i-sy+n], u[i+sy:i+sy+n]
	bx := k.BX[i-1 : i+n]
	bs, bn := k.BY[i-sy:i-sy+n], k.BY[i:i+n]
	return varFinish(op, k, d, c, f, w, i, n, func(j int) float64 {
		mid := c[j+1]
		return float64(bx[j+1]*(c[j+2]-mid)) - float64(bx[j]*(mid-c[j])) +
			float64(bn[j]*(no[j]-mid)) - float64(bs[j]*(mid-so[j]))
	})
}

// varRow3D is varRow2D in 3D.
func varRow3D(op varOp, k *VarCoeffs, d, u, f []float64, w float64, i, n int) uint64 {
	sy, sz := k.SY, k.SZ
	c := u[i-1 : i+n+1]
	so, no := u[i-sy:i-sy+n], u[i+sy:i+sy+n]
	lo, up := u[i-sz:i-sz+n], u[i+sz:i+sz+n]
	bx := k.BX[i-1 : i+n]
	bs, bn := k.BY[i-sy:i-sy+n], k.BY[i:i+n]
	bl, bu := k.BZ[i-sz:i-sz+n], k.BZ[i:i+n]
	return varFinish(op, k, d, c, f, w, i, n, func(j int) float64 {
		mid := c[j+1]
		return float64(bx[j+1]*(c[j+2]-mid)) - float64(bx[j]*(mid-c[j])) +
			float64(bn[j]*(no[j]-mid)) - float64(bs[j]*(mid-so[j])) +
			float64(bu[j]*(up[j]-mid)) - float64(bl[j]*(mid-lo[j]))
	})
}

// varFinish turns each cell's flux sum into the kernel's result (the
// formulas in the file's comment); c is the row with its west and east
// neighbours.
func varFinish(op varOp, k *VarCoeffs, d, c, f []float64, w float64, i, n int, flux func(j int) float64) uint64 {
	dst := d[i : i+n]
	var m uint64
	switch op {
	case varUpdate, varCheck:
		s := k.S[i : i+n]
		for j := range dst {
			phi := flux(j)
			if f != nil {
				phi += f[i+j]
			}
			dst[j] = c[j+1] + float64(s[j]*phi)
			if op == varCheck {
				m = max(m, absBits(dst[j]-c[j+1]))
			}
		}
	case varResidual, varApply, varSmooth:
		mk := k.M[i : i+n]
		for j := range dst {
			phi := flux(j)
			au := 0.0
			if k.A != nil {
				au = float64(k.A[i+j] * c[j+1])
			}
			switch op {
			case varApply:
				dst[j] = float64(mk[j] * (au - phi))
			case varResidual:
				dst[j] = float64(mk[j] * (f[i+j] - (au - phi)))
			default:
				dst[j] = c[j+1] + float64(w*float64(k.W[i+j]*(f[i+j]-(au-phi))))
			}
		}
	}
	return m
}
