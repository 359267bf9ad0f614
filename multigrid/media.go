package multigrid

import (
	"math"

	"heat/operator"
	"heat/stencil"
)

// Heterogeneous media on every level. Level 0 takes the run's media; each
// coarser level's k and ρc are the means of its children's (restrict), its
// faces their harmonic means again (operator.NewMedia: the levels are
// rediscretised, as PETSc's PCMG with rediscretised levels), and a coarse
// cell is free where any child is. Cells that are not free (holes, held
// cells, and coarse cells of neither) keep their value: the top level's
// their own (held values, a hole's initial value), an error equation's 0,
// restored after each coarse correction.

// setMedia derives every level's media from the fine level's.
func (m *MG) setMedia(fine *operator.Media) error {
	m.levels[0].setMedia(fine)
	for i := 1; i < len(m.levels); i++ {
		if err := m.coarsenMedia(m.levels[i-1], m.levels[i]); err != nil {
			return err
		}
	}
	if m.gat == nil {
		return nil
	}
	// Hand the last level's coefficients to the ranks below, whose first
	// level is its copy on merged boxes.
	last := m.levels[len(m.levels)-1].med
	var k, rc, free []float64
	if m.agg != nil {
		n := m.agg.levels[0].lay.Len()
		k, rc, free = make([]float64, n), make([]float64, n), make([]float64, n)
	}
	for _, p := range [][2][]float64{{last.K, k}, {last.RhoC, rc}, {last.Free, free}} {
		if err := m.gat.gather(p[0], p[1]); err != nil {
			return err
		}
	}
	if m.agg == nil {
		return nil
	}
	l := m.agg.levels[0]
	held := make([]float64, len(free))
	for i := range held {
		held[i] = math.NaN()
		if free[i] == 0 {
			held[i] = 0 // not free: the value is the level's to keep
		}
	}
	med, err := l.newMedia(k, rc, held)
	if err != nil {
		return err
	}
	return m.agg.setMedia(med)
}

// setMedia makes med the level's media.
func (l *level) setMedia(med *operator.Media) {
	l.med = med
	l.vk = stencil.Active.Var(len(l.shape))
	l.fixed = l.fixed[:0]
	l.forCells(func(i int) {
		if med.Free[i] == 0 {
			l.fixed = append(l.fixed, i)
		}
	})
	l.scratch = make([]float64, l.lay.Len())
}

// newMedia builds media on the level from laid-out k, ρc and held fields.
func (l *level) newMedia(k, rc, held []float64) (*operator.Media, error) {
	box := func(x []float64) []float64 {
		out := make([]float64, 0, l.lay.Box.Size())
		l.forCells(func(i int) { out = append(out, x[i]) })
		return out
	}
	return operator.NewMedia(l.lay, l.h, box(k), box(rc), box(held), l.hasNeighbour, l.halo)
}

// coarsenMedia sets c's media from f's: k, ρc and the free mask averaged
// over each coarse cell's children.
func (m *MG) coarsenMedia(f, c *level) error {
	fine := f.med
	out := make([][]float64, 3)
	for j, src := range [][]float64{fine.K, fine.RhoC, fine.Free} {
		if err := f.restrictTo(c, src); err != nil {
			return err
		}
		out[j] = append([]float64(nil), c.b...)
	}
	held := out[2]
	for i, x := range held {
		held[i] = math.NaN()
		if x == 0 {
			held[i] = 0
		}
	}
	med, err := c.newMedia(out[0], out[1], held)
	if err != nil {
		return err
	}
	c.setMedia(med)
	return nil
}

// setOperatorMedia sets the level's kernels' coefficients for σ and β.
func (l *level) setOperatorMedia(op Operator) {
	l.vc = l.med.Implicit(op.Sigma, op.Beta)
}

// holdFixed restores the cells that are not free after a coarse
// correction: on the problem's own level (top) to the values they had
// when first seen, on an error equation's to 0.
func (l *level) holdFixed(top bool) {
	if !top {
		for _, i := range l.fixed {
			l.u[i] = 0
		}
		return
	}
	if l.fixedVal == nil {
		l.fixedVal = make([]float64, len(l.fixed))
		for j, i := range l.fixed {
			l.fixedVal[j] = l.u[i]
		}
		return
	}
	for j, i := range l.fixed {
		l.u[i] = l.fixedVal[j]
	}
}

// varSweep is worker w's share of a variable-coefficient Jacobi sweep of
// weight l.omega from u into tmp.
func (l *level) varSweep(w int) {
	sy := l.lay.Stride[len(l.shape)-2]
	for _, r := range l.runs[w] {
		l.vk.Smooth(l.vc, l.tmp, l.u, l.b, l.omega, r.Start, r.N, r.Count, sy)
	}
}

// varResidual is worker w's share of tmp = M·(b − A·u).
func (l *level) varResidual(w int) {
	sy := l.lay.Stride[len(l.shape)-2]
	for _, r := range l.runs[w] {
		l.vk.Residual(l.vc, l.tmp, l.u, l.b, 0, r.Start, r.N, r.Count, sy)
	}
}

// varResidualNorm is residualNorm with media, through the level's scratch
// field.
func (l *level) varResidualNorm(u []float64) float64 {
	sy := l.lay.Stride[len(l.shape)-2]
	l.tm.Run(func(w int) {
		m := 0.0
		for _, r := range l.runs[w] {
			l.vk.Residual(l.vc, l.scratch, u, l.b, 0, r.Start, r.N, r.Count, sy)
			for i := range r.Count {
				a := r.Start + i*sy
				m = max(m, stencil.MaxAbs(l.scratch[a:a+r.N]))
			}
		}
		l.maxes[w] = m
	})
	m := 0.0
	for _, x := range l.maxes {
		if x > m || x != x {
			m = x
		}
	}
	return m
}

// varApply sets q = M·(A·p) over the box (p's ghosts current).
func (l *level) varApply(p, q []float64) {
	sy := l.lay.Stride[len(l.shape)-2]
	for _, r := range l.rows {
		l.vk.Apply(l.vc, q, p, nil, 0, r.Start, r.N, 1, sy)
	}
}

// stepRHSMedia is StepRHS in heterogeneous media: b = M·(ρc·u + c·∇·(k∇u))
// + scale·src, with c = (1−θ)·dt.
func (m *MG) stepRHSMedia(c float64, src []float64, scale float64) error {
	f := m.levels[0]
	if f.rhs == nil || f.rhsC != c {
		f.rhs, f.rhsC = f.med.Implicit(1, -c), c // A = ρc, faces −c·k_f/h²
	}
	if err := f.exchange(f.u, f.bc); err != nil {
		return err
	}
	sy := f.lay.Stride[len(f.shape)-2]
	f.tm.Run(func(w int) {
		for _, r := range f.runs[w] {
			f.vk.Apply(f.rhs, f.b, f.u, nil, 0, r.Start, r.N, r.Count, sy)
			if src == nil {
				continue
			}
			for i := range r.Count {
				a := r.Start + i*sy
				b, s := f.b[a:a+r.N], src[a:a+r.N]
				for j := range b {
					b[j] += scale * s[j]
				}
			}
		}
	})
	return nil
}
