package operator

import "heat/stencil"

// Uniform is the operator of the uniform medium (k = α everywhere, ρc = 1,
// nothing held): the fast special case, on the constant-coefficient
// kernels, whose weights it sets. Each weight is the formula it always was
// (a uniform problem's bits do not change).
type Uniform struct {
	Alpha float64
	Inv2  [3]float64 // 1/h² for z, y, x; axes a 2D grid lacks are 0
}

// NewUniform is the uniform operator of conductivity alpha on cells of
// size h (C order).
func NewUniform(alpha float64, h []float64) Uniform {
	u := Uniform{Alpha: alpha}
	nd := len(h)
	for a := range nd {
		u.Inv2[3-nd+a] = 1 / (h[a] * h[a])
	}
	return u
}

// StableDT is the largest stable explicit time step of the uniform
// operator, 1/(2·α·Σ_a 1/h_a²): min over cells of ρc/Σ_faces(k_f/h²) with
// k = α and ρc = 1 (Media.StableDT is the same limit in media).
func (u Uniform) StableDT() float64 {
	return 1 / (2 * u.Alpha * (u.Inv2[0] + u.Inv2[1] + u.Inv2[2]))
}

// Explicit sets k's weights to an FTCS step of dt, u' = c0·u + Σ c_a·(the
// neighbours along a) + f', with c_a = α·dt/h_a² and c0 = 1 − 2·Σc_a, and
// returns the source's scale in f' (dt).
func (u Uniform) Explicit(k *stencil.Coeffs, dt float64) (sourceScale float64) {
	k.CX, k.CY, k.CZ = float64(u.Alpha*dt*u.Inv2[2]), float64(u.Alpha*dt*u.Inv2[1]), float64(u.Alpha*dt*u.Inv2[0])
	k.C0 = 1 - float64(2*(k.CX+k.CY+k.CZ))
	return dt
}

// JacobiWeight is ω of the weighted Jacobi sweeps for Poisson. Plain
// Jacobi (ω = 1) does not converge here: a Dirichlet ghost 2v − u puts −u
// in the update, which leaves the most oscillatory mode with an eigenvalue
// near −1; ω < 1 damps it and keeps the fixed point.
const JacobiWeight = 0.8

// Jacobi sets k's weights to a weighted Jacobi sweep for ∇²u = f:
// u' = (1−ω)·u + ω·inv·(Σ neighbours/h_a² − f) with inv = 1/Σ(2/h_a²), and
// returns the source's scale (−ω·inv). (1 − ω is the constant's, exact
// before rounding: the bits of every Jacobi run so far.)
func (u Uniform) Jacobi(k *stencil.Coeffs) (sourceScale float64) {
	inv := 1 / (2 * (u.Inv2[0] + u.Inv2[1] + u.Inv2[2]))
	k.CX, k.CY, k.CZ = JacobiWeight*inv*u.Inv2[2], JacobiWeight*inv*u.Inv2[1], JacobiWeight*inv*u.Inv2[0]
	k.C0 = 1 - JacobiWeight
	return -JacobiWeight * inv
}

// Residual sets k to the residual weights of σ·u − β·∇²u (c0 the diagonal
// σ + β·Σ2/h_a², c_a = β/h_a²) and returns the diagonal. α is folded into
// β by the caller (an implicit step's β = θ·dt·α).
func (u Uniform) Residual(k *stencil.Coeffs, sigma, beta float64) (diag float64) {
	diag = sigma + float64(beta*2*(u.Inv2[0]+u.Inv2[1]+u.Inv2[2]))
	k.C0, k.CX, k.CY, k.CZ = diag, beta*u.Inv2[2], beta*u.Inv2[1], beta*u.Inv2[0]
	return diag
}
