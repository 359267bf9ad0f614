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
//	residual  d[i] = M[i]·(f[i] − (A[i]·u[i] − φ))
//	apply     d[i] = M[i]·(A[i]·u[i] − φ)
//	smooth    d[i] = u[i] + w·(W[i]·(f[i] − (A[i]·u[i] − φ)))
//
// with A nil taken as A[i]·u[i] = 0: 0 − φ is evaluated (−φ would differ in
// a zero's sign). The update with check keeps max |d[i] − u[i]| as
// MaxAbsDiff does. d must not be u (a cell reads its west neighbour's old
// value) nor a face coefficient; it may be f, S, M, W or A (each cell reads
// its own before writing it).
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
//
// Stream is Update storing past the caches (non-temporal stores), for
// fields far larger than them, whose rows are read again only on the next
// step: no read of each destination line before it is written. Same bits
// as Update; where the set or dimension has no such kernel it is Update.
// A caller that streams calls Fence after its share of a sweep, before
// another core reads the rows (as with Set.Stream).
type VarKernels struct {
	Update, Check, Residual, Apply, Smooth VarKernel
	Stream                                 VarKernel
	Backward                               VarBackwardKernel
}

// Var is the set's variable-coefficient kernels for a 2D or 3D box.
func (ks Set) Var(nd int) VarKernels {
	if ks.var2D.Update == nil {
		return Generic.Var(nd)
	}
	return byDims(nd, ks.var2D, ks.var3D)
}

// varChunk is how many cells' flux sums the generic kernels hold at a time
// (on the stack): φ for a piece of a row first, in one loop, then the
// kernel's finish over it in another, each loop without a call per cell.
const varChunk = 256

// genericVar are the portable variable-coefficient kernels, the reference
// the vector kernels (varkernel_amd64.go) are tested against.
func genericVar(three bool) VarKernels {
	mk := func(op varOp) VarKernel {
		return func(k *VarCoeffs, d, u, f []float64, w float64, start, n, rows, stride int) float64 {
			var buf [varChunk]float64
			var m uint64
			for r := range rows {
				i := start + r*stride
				for j := 0; j < n; j += varChunk {
					phi := buf[:min(varChunk, n-j)]
					if three {
						flux3D(phi, k, u, i+j)
					} else {
						flux2D(phi, k, u, i+j)
					}
					m = max(m, varFinish(op, k, d, u, f, w, i+j, phi))
				}
			}
			return absFloat(m)
		}
	}
	update := mk(varUpdate)
	backward := func(k *VarCoeffs, u, f []float64, data float64, start, n, rows, stride int) (omega, res, big float64) {
		return varBackward(three, k, u, f, data, start, n, rows, stride)
	}
	return VarKernels{Update: update, Check: mk(varCheck), Residual: mk(varResidual), Apply: mk(varApply), Smooth: mk(varSmooth),
		Stream: update, Backward: backward}
}

// flux2D sets phi[j] to the 2D flux sum of cell i+j (the file's comment).
func flux2D(phi []float64, k *VarCoeffs, u []float64, i int) {
	n, sy := len(phi), k.SY
	w := u[i-1 : i+n-1]
	c, e := u[i:i+n], u[i+1:i+n+1]
	so, no := u[i-sy:i-sy+n], u[i+sy:i+sy+n]
	bw, be := k.BX[i-1:i+n-1], k.BX[i:i+n]
	bs, bn := k.BY[i-sy:i-sy+n], k.BY[i:i+n]
	for j := range phi {
		mid := c[j]
		phi[j] = float64(be[j]*(e[j]-mid)) - float64(bw[j]*(mid-w[j])) +
			float64(bn[j]*(no[j]-mid)) - float64(bs[j]*(mid-so[j]))
	}
}

// flux3D is flux2D in 3D.
func flux3D(phi []float64, k *VarCoeffs, u []float64, i int) {
	n, sy, sz := len(phi), k.SY, k.SZ
	w := u[i-1 : i+n-1]
	c, e := u[i:i+n], u[i+1:i+n+1]
	so, no := u[i-sy:i-sy+n], u[i+sy:i+sy+n]
	lo, up := u[i-sz:i-sz+n], u[i+sz:i+sz+n]
	bw, be := k.BX[i-1:i+n-1], k.BX[i:i+n]
	bs, bn := k.BY[i-sy:i-sy+n], k.BY[i:i+n]
	bl, bu := k.BZ[i-sz:i-sz+n], k.BZ[i:i+n]
	for j := range phi {
		mid := c[j]
		phi[j] = float64(be[j]*(e[j]-mid)) - float64(bw[j]*(mid-w[j])) +
			float64(bn[j]*(no[j]-mid)) - float64(bs[j]*(mid-so[j])) +
			float64(bu[j]*(up[j]-mid)) - float64(bl[j]*(mid-lo[j]))
	}
}

// varFinish turns the flux sums phi of cells i, i+1, … into the kernel's
// result (the file's comment), a loop per kernel; with varCheck it returns
// the largest absBits of the change. Without A, A[i]·u[i] is 0: residual,
// apply and smooth evaluate 0 − φ (not −φ: the two differ in a zero's sign).
func varFinish(op varOp, k *VarCoeffs, d, u, f []float64, w float64, i int, phi []float64) uint64 {
	n := len(phi)
	dst, mid := d[i:i+n], u[i:i+n]
	switch op {
	case varUpdate, varCheck:
		s := k.S[i : i+n]
		if f != nil {
			g := f[i : i+n]
			for j := range dst {
				dst[j] = mid[j] + float64(s[j]*(phi[j]+g[j]))
			}
		} else {
			for j := range dst {
				dst[j] = mid[j] + float64(s[j]*phi[j])
			}
		}
		if op == varCheck {
			return maxAbsDiffGeneric(dst, mid)
		}
	case varApply:
		mk := k.M[i : i+n]
		if k.A != nil {
			a := k.A[i : i+n]
			for j := range dst {
				dst[j] = float64(mk[j] * (float64(a[j]*mid[j]) - phi[j]))
			}
		} else {
			for j := range dst {
				dst[j] = float64(mk[j] * (0 - phi[j]))
			}
		}
	case varResidual:
		mk, g := k.M[i:i+n], f[i:i+n]
		if k.A != nil {
			a := k.A[i : i+n]
			for j := range dst {
				dst[j] = float64(mk[j] * (g[j] - (float64(a[j]*mid[j]) - phi[j])))
			}
		} else {
			for j := range dst {
				dst[j] = float64(mk[j] * (g[j] - (0 - phi[j])))
			}
		}
	case varSmooth:
		wk, g := k.W[i:i+n], f[i:i+n]
		if k.A != nil {
			a := k.A[i : i+n]
			for j := range dst {
				dst[j] = mid[j] + float64(w*float64(wk[j]*(g[j]-(float64(a[j]*mid[j])-phi[j]))))
			}
		} else {
			for j := range dst {
				dst[j] = mid[j] + float64(w*float64(wk[j]*(g[j]-(0-phi[j]))))
			}
		}
	}
	return 0
}
