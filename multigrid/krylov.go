package multigrid

import (
	"fmt"
	"math"

	"heat/comm"

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
	d                []float64 // flexible: z − z_old
	w1, w2           []float64 // the preconditioning cycle's iterate and its sweeps' other buffer
	rz               float64   // r·z
	started          bool
	accs             [][4]exactsum.Acc // per worker: two accumulators for each of up to two sums
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
			q: make([]float64, n), w1: make([]float64, n), w2: make([]float64, n), accs: make([][4]exactsum.Acc, f.tm.Size()), d: make([]float64, n)}
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
		rz, err := m.dots([2][]float64{k.r, k.z})
		if err != nil {
			return 0, err
		}
		k.rz, k.started = rz[0], true
	}
	if err := f.exchange(k.p, f.bc0); err != nil {
		return 0, err
	}
	f.apply(k.p, k.q)
	pq, err := m.dots([2][]float64{k.p, k.q})
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
	f.eachRow(func(lo, hi int) {
		u, p, r, q := f.u[lo:hi], k.p[lo:hi], k.r[lo:hi], k.q[lo:hi]
		for j := range u {
			u[j] += alpha * p[j]
			r[j] -= alpha * q[j]
		}
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
		f.eachRow(func(lo, hi int) {
			d, z, zo := k.d[lo:hi], k.z[lo:hi], k.zOld[lo:hi]
			for j := range d {
				d[j] = z[j] - zo[j]
			}
		})
		sums, err := m.dots([2][]float64{k.r, k.z}, [2][]float64{k.r, k.d})
		if err != nil {
			return 0, err
		}
		beta = sums[1] / k.rz
		k.rz = sums[0]
	} else {
		sums, err := m.dots([2][]float64{k.r, k.z})
		if err != nil {
			return 0, err
		}
		beta = sums[0] / k.rz
		k.rz = sums[0]
	}
	f.eachRow(func(lo, hi int) {
		p, z := k.p[lo:hi], k.z[lo:hi]
		for j := range p {
			p[j] = z[j] + beta*p[j]
		}
	})
	m.stats.Cycles++
	return m.Residual()
}

// eachRow calls fn with the flat bounds [lo, hi) of every row of the
// level, the workers each over their rows.
func (l *level) eachRow(fn func(lo, hi int)) {
	l.parallel(func(_ int, rows []stencil.Span, _ []int) {
		for _, r := range rows {
			fn(r.Start, r.Start+r.N)
		}
	})
}

// dots are exact global sums Σ x·y over the fine level's cells, one per
// pair (each product rounded once, then summed exactly): the workers over
// their rows in parallel, each product into one of two accumulators in
// turn (consecutive products of one magnitude then do not wait on each
// other's limbs), merged exactly, then one collective over the ranks.
func (m *MG) dots(pairs ...[2][]float64) ([]float64, error) {
	f := m.levels[0]
	k := m.kry
	f.parallel(func(w int, rows []stencil.Span, _ []int) {
		for p, xy := range pairs {
			a, b := &k.accs[w][2*p], &k.accs[w][2*p+1]
			a.Reset()
			b.Reset()
			x, y := xy[0], xy[1]
			for _, r := range rows {
				xs, ys := x[r.Start:r.Start+r.N], y[r.Start:r.Start+r.N]
				j := 0
				for ; j+1 < len(xs); j += 2 {
					a.Add(xs[j] * ys[j])
					b.Add(xs[j+1] * ys[j+1])
				}
				if j < len(xs) {
					a.Add(xs[j] * ys[j])
				}
			}
		}
	})
	total := make([]*exactsum.Acc, len(pairs))
	for p := range total {
		total[p] = new(exactsum.Acc)
		for w := range k.accs {
			total[p].Merge(&k.accs[w][2*p])
			total[p].Merge(&k.accs[w][2*p+1])
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
// ulps. Call it right after Residual: u's ghosts are current, and in media
// the residual is still in the level's scratch field.
//
// It returns ‖u‖∞ too, from the same pass and collective.
func (m *MG) ComponentError() (omega, normU float64, err error) {
	f := m.levels[0]
	nd := len(f.shape)
	sy, sz := f.lay.Stride[nd-2], 0
	if nd == 3 {
		sz = f.lay.Stride[0]
	}
	u, rhs := f.u, f.b
	f.parallel(func(w int, rows []stencil.Span, _ []int) {
		worst, big := 0.0, 0.0
		for _, r := range rows {
			for i := r.Start; i < r.Start+r.N; i++ {
				c := u[i]
				if a := math.Abs(c); a > big || a != a {
					big = a
				}
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
					ac := math.Abs(c)
					mag = math.Abs(au) + vc.BX[i]*(math.Abs(u[i+1])+ac) + vc.BX[i-1]*(ac+math.Abs(u[i-1])) +
						vc.BY[i]*(math.Abs(u[i+sy])+ac) + vc.BY[i-sy]*(ac+math.Abs(u[i-sy]))
					if nd == 3 {
						mag += vc.BZ[i]*(math.Abs(u[i+sz])+ac) + vc.BZ[i-sz]*(ac+math.Abs(u[i-sz]))
					}
					res = f.scratch[i] // Residual's, M·(b − A·u)
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
		f.maxes[w], f.maxes2[w] = worst, big
	})
	local := []float64{0, 0}
	for w := range f.maxes {
		for j, x := range []float64{f.maxes[w], f.maxes2[w]} {
			if x > local[j] || x != x {
				local[j] = x
			}
		}
	}
	out := make([]float64, 2)
	if err := m.c.Allreduce(comm.Max, local, out); err != nil {
		return 0, 0, err
	}
	return out[0], out[1], nil
}
