package multigrid

import (
	"fmt"
	"math"

	"heat/internal/exactsum"
)

// Conjugate gradients preconditioned by one multigrid cycle (mgcg): robust
// where the cycles alone slow down, at jumps of the coefficients by many
// decades. The cycle is not exactly symmetric (linear prolongation against
// averaging restriction, Chebyshev weights in order), so the iteration is
// the flexible one (Polak–Ribière β = r·(z − z_old)/r_old·z_old), which
// keeps CG's convergence under such a preconditioner. Every dot product is
// an exact sum (internal/exactsum), the same bits on every split.

// krylov is the iteration's state on the fine level.
type krylov struct {
	r, z, zOld, p, q []float64 // residual, preconditioned residual (and the last), direction, A·direction
	w1, w2           []float64 // the preconditioning cycle's iterate and its sweeps' other buffer
	rz               float64   // r·z
	started          bool
}

// Krylov does one mgcg iteration on the fine level (the first also sets
// the iteration up from the current u) and returns the global max-norm of
// the true residual b − A·u.
func (m *MG) Krylov() (float64, error) {
	f := m.levels[0]
	k := m.kry
	if k == nil {
		n := f.lay.Len()
		k = &krylov{r: make([]float64, n), z: make([]float64, n), zOld: make([]float64, n), p: make([]float64, n),
			q: make([]float64, n), w1: make([]float64, n), w2: make([]float64, n)}
		m.kry = k
	}
	if !k.started {
		if err := f.exchange(f.u, f.bc); err != nil {
			return 0, err
		}
		f.residual()
		copy(k.r, f.tmp)
		if err := m.precondition(k.r, k.z); err != nil {
			return 0, err
		}
		copy(k.p, k.z)
		rz, err := m.dot(k.r, k.z)
		if err != nil {
			return 0, err
		}
		k.rz, k.started = rz, true
	}
	if err := f.exchange(k.p, f.bc0); err != nil {
		return 0, err
	}
	f.apply(k.p, k.q)
	pq, err := m.dot(k.p, k.q)
	if err != nil {
		return 0, err
	}
	if !(pq > 0) {
		if pq != pq {
			return 0, fmt.Errorf("multigrid: mgcg met a NaN")
		}
		// Converged to rounding: nothing left to minimise.
		return m.Residual()
	}
	alpha := k.rz / pq
	f.forCells(func(i int) {
		f.u[i] += alpha * k.p[i]
		k.r[i] -= alpha * k.q[i]
	})
	k.z, k.zOld = k.zOld, k.z
	if err := m.precondition(k.r, k.z); err != nil {
		return 0, err
	}
	var num, rz exactsum.Acc
	f.forCells(func(i int) {
		num.Add(k.r[i] * (k.z[i] - k.zOld[i]))
		rz.Add(k.r[i] * k.z[i])
	})
	sumNum, err := exactsum.Sum(m.c, &num)
	if err != nil {
		return 0, err
	}
	sumRZ, err := exactsum.Sum(m.c, &rz)
	if err != nil {
		return 0, err
	}
	beta := sumNum / k.rz
	k.rz = sumRZ
	f.forCells(func(i int) { k.p[i] = k.z[i] + beta*k.p[i] })
	m.stats.Cycles++
	return m.Residual()
}

// precondition sets z to one cycle's approximation of A⁻¹r: the error
// equation from a zero guess, on the fine level's own fields set aside.
func (m *MG) precondition(r, z []float64) error {
	f := m.levels[0]
	k := m.kry
	u, tmp, b := f.u, f.tmp, f.b
	clear(k.w1)
	f.u, f.tmp, f.b = k.w1, k.w2, r
	err := m.vcycle(0, false, m.opt.Cycle)
	copy(z, f.u)
	k.w1, k.w2 = f.u, f.tmp
	f.u, f.tmp, f.b = u, tmp, b
	return err
}

// dot is the exact global Σ a·b over the fine level's cells.
func (m *MG) dot(a, b []float64) (float64, error) {
	f := m.levels[0]
	var acc exactsum.Acc
	f.forCells(func(i int) { acc.Add(a[i] * b[i]) })
	return exactsum.Sum(m.c, &acc)
}

// NormA is ‖A‖∞ of the fine level's operator, the same on every rank.
func (m *MG) NormA() (float64, error) {
	f := m.levels[0]
	local := 2*f.diag - m.prob.Op.Sigma // uniform: diag + Σ|off-diagonals|
	if f.vc != nil {
		local = f.med.NormInf(f.vc)
	}
	return m.globalMax(local)
}

// NormU is ‖u‖∞ of the fine level's iterate, the same on every rank.
func (m *MG) NormU() (float64, error) {
	f := m.levels[0]
	local := 0.0
	f.forCells(func(i int) {
		if a := math.Abs(f.u[i]); a > local || a != a {
			local = a
		}
	})
	return m.globalMax(local)
}
