package multigrid

import (
	"fmt"
	"math"

	"heat/internal/exactsum"
	"heat/stencil"
)

// Conjugate gradients preconditioned by one multigrid cycle (mgcg): robust
// where the cycles alone slow down, at jumps of the coefficients by many
// decades. With as many sweeps after the coarse correction as before it
// the cycle is a symmetric preconditioner: piecewise-constant prolongation
// (the solver asks for it) is the averaging restriction's transpose times
// 2^d, and the pre- and post-smoothing are the same polynomial in D⁻¹A;
// then β is the plain r·z ratio. Otherwise (a user's (3,1)) it is the
// flexible Polak–Ribière β = r·(z − z_old)/r_old·z_old, which keeps CG
// converging under an unsymmetric cycle (plain β: 32², smooth k, stuck at
// 2e-3 after 30 iterations; flexible: converged) for a third sum a step.
// Every dot product is an exact sum (internal/exactsum), the same bits on
// every split; the few a step go through one collective.

// krylov is the iteration's state on the fine level.
type krylov struct {
	r, z, zOld, p, q []float64 // residual, preconditioned residual (and the last: flexible), direction, A·direction
	w1, w2           []float64 // the preconditioning cycle's iterate and its sweeps' other buffer
	rz               float64   // r·z
	started          bool
	accs             [][3]exactsum.Acc // per worker: the partial sums of a step
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
			q: make([]float64, n), w1: make([]float64, n), w2: make([]float64, n), accs: make([][3]exactsum.Acc, f.tm.Size())}
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
		rz, err := m.sums(1, func(i int, a []exactsum.Acc) { a[0].Add(k.r[i] * k.z[i]) })
		if err != nil {
			return 0, err
		}
		k.rz, k.started = rz[0], true
	}
	if err := f.exchange(k.p, f.bc0); err != nil {
		return 0, err
	}
	f.apply(k.p, k.q)
	pq, err := m.sums(1, func(i int, a []exactsum.Acc) { a[0].Add(k.p[i] * k.q[i]) })
	if err != nil {
		return 0, err
	}
	if !(pq[0] > 0) {
		if pq[0] != pq[0] {
			return 0, fmt.Errorf("multigrid: mgcg met a NaN")
		}
		// Converged to rounding: nothing left to minimise.
		return m.Residual()
	}
	alpha := k.rz / pq[0]
	f.eachCell(func(i int) {
		f.u[i] += alpha * k.p[i]
		k.r[i] -= alpha * k.q[i]
	})
	flexible := len(m.pre) != len(m.post)
	if flexible {
		k.z, k.zOld = k.zOld, k.z
	}
	if err := m.precondition(k.r, k.z); err != nil {
		return 0, err
	}
	var beta float64
	if flexible {
		sums, err := m.sums(2, func(i int, a []exactsum.Acc) {
			a[0].Add(k.r[i] * k.z[i])
			a[1].Add(k.r[i] * (k.z[i] - k.zOld[i]))
		})
		if err != nil {
			return 0, err
		}
		beta = sums[1] / k.rz
		k.rz = sums[0]
	} else {
		sums, err := m.sums(1, func(i int, a []exactsum.Acc) { a[0].Add(k.r[i] * k.z[i]) })
		if err != nil {
			return 0, err
		}
		beta = sums[0] / k.rz
		k.rz = sums[0]
	}
	f.eachCell(func(i int) { k.p[i] = k.z[i] + beta*k.p[i] })
	m.stats.Cycles++
	return m.Residual()
}

// eachCell calls fn with the flat index of every cell of the fine level,
// the workers each over their rows.
func (l *level) eachCell(fn func(i int)) {
	l.parallel(func(_ int, rows []stencil.Span, _ []int) {
		for _, r := range rows {
			for i := r.Start; i < r.Start+r.N; i++ {
				fn(i)
			}
		}
	})
}

// sums are n exact global sums over the fine level's cells: add puts cell
// i's terms into a worker's accumulators (the workers in parallel, merged
// exactly), then one collective sums them over the ranks.
func (m *MG) sums(n int, add func(i int, a []exactsum.Acc)) ([]float64, error) {
	f := m.levels[0]
	k := m.kry
	f.parallel(func(w int, rows []stencil.Span, _ []int) {
		a := k.accs[w][:n]
		for j := range a {
			a[j].Reset()
		}
		for _, r := range rows {
			for i := r.Start; i < r.Start+r.N; i++ {
				add(i, a)
			}
		}
	})
	total := make([]*exactsum.Acc, n)
	for j := range total {
		total[j] = new(exactsum.Acc)
		for w := range k.accs {
			total[j].Merge(&k.accs[w][j])
		}
	}
	return exactsum.SumAll(m.c, total)
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

// ComponentError is the componentwise backward error of the fine level's
// iterate (Oettli–Prager, in the max-norm): max over free cells of
// |f − Au|_i / ((|A||u|)_i + |f_i|), with (|A||u|)_i the magnitudes of the
// terms a row sums, |a·u_i| + Σ_faces b_f(|u_i| + |u_nb|) (a Dirichlet
// ghost 2g − u counted as the neighbour). Each row is measured against its
// own coefficients, so a jump of 10⁶ neither hides the residual of the
// weak cells (as ‖A‖∞ does in the normwise backward error) nor lifts its
// floor (as ‖f‖∞ does for the relative residual): rounding leaves a few
// ulps. u's ghosts must be current (Residual sets them).
func (m *MG) ComponentError() (float64, error) {
	f := m.levels[0]
	nd := len(f.shape)
	sy, sz := f.lay.Stride[nd-2], 0
	if nd == 3 {
		sz = f.lay.Stride[0]
	}
	u, rhs := f.u, f.b
	f.parallel(func(w int, rows []stencil.Span, _ []int) {
		worst := 0.0
		for _, r := range rows {
			for i := r.Start; i < r.Start+r.N; i++ {
				c := u[i]
				var res, mag float64
				if f.vc != nil {
					vc := f.vc
					if vc.M[i] == 0 {
						continue
					}
					au := 0.0
					if vc.A != nil {
						au = vc.A[i] * c
					}
					phi := vc.BX[i]*(u[i+1]-c) - vc.BX[i-1]*(c-u[i-1]) + vc.BY[i]*(u[i+sy]-c) - vc.BY[i-sy]*(c-u[i-sy])
					mag = math.Abs(au) + vc.BX[i]*(math.Abs(u[i+1])+math.Abs(c)) + vc.BX[i-1]*(math.Abs(c)+math.Abs(u[i-1])) +
						vc.BY[i]*(math.Abs(u[i+sy])+math.Abs(c)) + vc.BY[i-sy]*(math.Abs(c)+math.Abs(u[i-sy]))
					if nd == 3 {
						phi += vc.BZ[i]*(u[i+sz]-c) - vc.BZ[i-sz]*(c-u[i-sz])
						mag += vc.BZ[i]*(math.Abs(u[i+sz])+math.Abs(c)) + vc.BZ[i-sz]*(math.Abs(c)+math.Abs(u[i-sz]))
					}
					res = rhs[i] - (au - phi)
				} else {
					k := &f.res
					nb := k.CX*(u[i-1]+u[i+1]) + k.CY*(u[i-sy]+u[i+sy])
					mg := k.CX*(math.Abs(u[i-1])+math.Abs(u[i+1])) + k.CY*(math.Abs(u[i-sy])+math.Abs(u[i+sy]))
					if nd == 3 {
						nb += k.CZ * (u[i-sz] + u[i+sz])
						mg += k.CZ * (math.Abs(u[i-sz]) + math.Abs(u[i+sz]))
					}
					res = rhs[i] - (k.C0*c - nb)
					mag = k.C0*math.Abs(c) + mg
				}
				den := mag + math.Abs(rhs[i])
				e := math.Abs(res)
				if den > 0 {
					e /= den
				}
				if e > worst || e != e {
					worst = e
				}
			}
		}
		f.maxes[w] = worst
	})
	local := 0.0
	for _, x := range f.maxes {
		if x > local || x != x {
			local = x
		}
	}
	return m.globalMax(local)
}
