package multigrid

import (
	"fmt"

	"heat/comm"
	"heat/decomp"
	"heat/internal/exactsum"
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
		k := &krylov{r: m.take(n), z: m.take(n), zOld: m.take(n), p: m.take(n),
			q: m.take(n), w1: m.take(n), w2: m.take(n), d: m.take(n)}
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
		return m.measure()
	}
	alpha := k.rz / pq[0]
	f.eachRow(func(lo, hi int) {
		u, p, r, q := f.u[lo:hi], k.p[lo:hi], k.r[lo:hi], k.q[lo:hi]
		for j := range u {
			u[j] += float64(alpha * p[j])
			r[j] -= float64(alpha * q[j])
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
			p[j] = z[j] + float64(beta*p[j])
		}
	})
	m.stats.Cycles++
	return m.measure()
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
	if m.alg != nil && m.alg.at == 0 {
		return m.alg.precondition(m, r, z)
	}
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
	return m.globalMax(f.op.NormInf())
}

// Measure takes the figures a cycle ends with (measure) for the current u,
// without a cycle: the residual's max-norm, and Backward's.
func (m *MG) Measure() (float64, error) { return m.measure() }

// measure exchanges the fine level's halo and takes, in one pass and one
// collective, the residual's max-norm (which it returns), the
// componentwise backward error and ‖u‖∞ of the iterate: the figures every
// cycle and mgcg iteration ends with (Backward).
func (m *MG) measure() (float64, error) {
	f := m.levels[0]
	if err := f.exchange(f.u, f.bc); err != nil {
		return 0, err
	}
	omega, res, big := f.op.Backward(f.u, f.b, m.data)
	out := make([]float64, 3)
	if err := m.c.Allreduce(comm.Max, []float64{omega, res, big}, out); err != nil {
		return 0, err
	}
	m.omega, m.normU = out[0], out[2]
	return out[1], nil
}

// Backward is the componentwise backward error of the fine level's iterate
// after the last cycle or mgcg iteration (Oettli–Prager, in the max-norm):
// max over free cells of |f − Au|_i / ((|A||u|)_i + |f_i|), with (|A||u|)_i
// the magnitudes of the terms a row sums, |a·u_i| + Σ_faces b_f(|u_i| +
// |u_nb|) (a Dirichlet ghost 2g − u counted as the neighbour), and the
// iterate's ‖u‖∞. u solves exactly a problem whose every coefficient and
// source differ from the user's by at most omega, relatively. Each row is
// measured against its own coefficients, so a jump of 10⁶ neither hides the
// residual of the weak cells (as ‖A‖∞ does in the normwise backward error)
// nor lifts its floor (as ‖f‖∞ does for the relative residual): rounding
// leaves a few ulps. The same on every rank and split.
func (m *MG) Backward() (omega, normU float64) { return m.omega, m.normU }
