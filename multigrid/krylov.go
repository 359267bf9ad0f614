package multigrid

import (
	"fmt"
	"math"

	"heat/comm"
	"heat/decomp"
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
	rows             [][]float64 // per worker: a row's magnitudes (ComponentError)
}

// RestartKrylov makes the next Krylov call set the iteration up anew from
// the current u: a new right-hand side (the next implicit step).
func (m *MG) RestartKrylov() {
	if m.kry != nil {
		m.kry.started = false
	}
}

// krylovState is the iteration's state, made at its first use.
func (m *MG) krylovState() *krylov {
	if m.kry == nil {
		f := m.levels[0]
		n := f.lay.Len()
		k := &krylov{r: make([]float64, n), z: make([]float64, n), zOld: make([]float64, n), p: make([]float64, n),
			q: make([]float64, n), w1: make([]float64, n), w2: make([]float64, n), d: make([]float64, n)}
		k.rows = make([][]float64, f.parts)
		for w := range k.rows {
			k.rows[w] = make([]float64, f.lay.Stride[len(f.shape)-2])
		}
		m.kry = k
	}
	return m.kry
}

// Krylov does one mgcg iteration on the fine level (the first also sets
// the iteration up from the current u) and returns the global max-norm of
// the true residual b − A·u.
func (m *MG) Krylov() (float64, error) {
	f := m.levels[0]
	k := m.krylovState()
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
	flexible := len(m.pre) != len(m.post) || f.med != nil
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
	l.parallel(func(_ int, rows []decomp.Span, _ []int) {
		for _, r := range rows {
			fn(r.Start, r.Start+r.N)
		}
	})
}

// dots are exact global sums Σ x·y over the fine level's cells, one per
// pair.
func (m *MG) dots(pairs ...[2][]float64) ([]float64, error) {
	return m.dotsOn(m.levels[0], pairs...)
}

// dotsOn are exact global sums Σ x·y over level l's cells, one per pair
// (each product rounded once, then summed exactly): the workers over their
// rows in parallel, each into its own binned accumulator per pair, merged
// exactly, then one collective over the ranks.
func (m *MG) dotsOn(l *level, pairs ...[2][]float64) ([]float64, error) {
	if l.accs == nil {
		l.accs = make([]*[maxDots]exactsum.Binned, l.parts)
		for w := range l.accs {
			l.accs[w] = new([maxDots]exactsum.Binned)
		}
	}
	l.parallel(func(w int, rows []decomp.Span, _ []int) {
		for p, xy := range pairs {
			b := &l.accs[w][p]
			b.Reset()
			x, y := xy[0], xy[1]
			for _, r := range rows {
				b.AddProducts(x[r.Start:r.Start+r.N], y[r.Start:r.Start+r.N])
			}
		}
	})
	total := make([]*exactsum.Acc, len(pairs))
	for p := range total {
		total[p] = new(exactsum.Acc)
		for w := range l.accs {
			total[p].Merge(l.accs[w][p].Sum())
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
	kry := m.krylovState()
	f.parallel(func(w int, rows []decomp.Span, _ []int) {
		worst, big := 0.0, 0.0
		for _, r := range rows {
			if f.vc != nil {
				rw, rb := componentRow(f.vc, u, f.scratch, rhs, kry.rows[w], r.Start, r.Start+r.N, nd == 3)
				worst, big = maxNaN(worst, rw), maxNaN(big, rb)
				continue
			}
			k := &f.res
			for i := r.Start; i < r.Start+r.N; i++ {
				c := u[i]
				big = maxNaN(big, math.Abs(c))
				nb := k.CX*(u[i-1]+u[i+1]) + k.CY*(u[i-sy]+u[i+sy])
				mg := k.CX*(math.Abs(u[i-1])+math.Abs(u[i+1])) + k.CY*(math.Abs(u[i-sy])+math.Abs(u[i+sy]))
				if nd == 3 {
					nb += k.CZ * (u[i-sz] + u[i+sz])
					mg += k.CZ * (math.Abs(u[i-sz]) + math.Abs(u[i+sz]))
				}
				worst = maxNaN(worst, relativeTo(rhs[i]-(k.C0*c-nb), k.C0*math.Abs(c)+mg+math.Abs(rhs[i])))
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

// componentRow is ComponentError's pass over the media cells [lo, hi) of
// one row: the worst |r_i|/((|A||u|)_i + |f_i|) of its free cells, with r
// the residual left in res, and the largest |u_i| of all its cells. The
// magnitudes are summed into t (the row's length, in cache) one axis at a
// time, in the order of the formula: few arrays a loop, no spills.
func componentRow(vc *stencil.VarCoeffs, u, res, rhs, t []float64, lo, hi int, is3D bool) (worst, big float64) {
	n := hi - lo
	t = t[:n]
	uc := u[lo:hi]
	if vc.A != nil {
		for j, a := range vc.A[lo:hi][:n] {
			t[j] = math.Abs(a * uc[j])
		}
	} else {
		clear(t)
	}
	axis := func(s int, b []float64) {
		un, us := u[lo+s : hi+s][:n], u[lo-s : hi-s][:n]
		bn, bs := b[lo:hi][:n], b[lo-s : hi-s][:n]
		for j, c := range uc {
			ac := math.Abs(c)
			t[j] = t[j] + bn[j]*(math.Abs(un[j])+ac) + bs[j]*(ac+math.Abs(us[j]))
		}
	}
	axis(1, vc.BX)
	axis(vc.SY, vc.BY)
	if is3D {
		axis(vc.SZ, vc.BZ)
	}
	mk, rs, fs := vc.M[lo:hi][:n], res[lo:hi][:n], rhs[lo:hi][:n]
	for j, c := range uc {
		big = maxNaN(big, math.Abs(c))
		if mk[j] == 0 {
			continue
		}
		// Divide only where the quotient may beat worst: |r| below
		// worst·den less a margin past the products' rounding (1e-15 over
		// 2^-53) cannot round above worst. An overflowing worst·den is
		// above |r| too; a NaN fails the test and is divided.
		den := t[j] + math.Abs(fs[j])
		if math.Abs(rs[j]) < worst*den*(1-1e-15) {
			continue
		}
		worst = maxNaN(worst, relativeTo(rs[j], den))
	}
	return worst, big
}

// relativeTo is |r|/den, or |r| where den is 0.
func relativeTo(r, den float64) float64 {
	e := math.Abs(r)
	if den > 0 {
		e /= den
	}
	return e
}

// maxNaN is the larger of x and y, NaN if either is.
func maxNaN(x, y float64) float64 {
	if y > x || y != y {
		return y
	}
	return x
}
