package multigrid

import (
	"math"

	"heat/comm"
	"heat/internal/hugemem"
	"heat/operator"
)

// Heterogeneous media on every level. Level 0 takes the run's media; each
// coarser level's operator follows the finer one's over its free cells: a
// coarse face is the mean of the fine faces on it that join two free
// cells, times (h_fine/h_coarse)² (1/h² is folded in; the faces inside a
// coarse cell drop out), a coarse cell's ρc the mean of its free
// children's, and the fine faces that join a free child to a cell that is
// not free (a held cell, whose error is 0, or a coarse level's cell with
// no free child) become a tie, scaled as the faces are: a term of the
// coarse diagonal and no coupling. A coarse cell is free where a child
// is. That is half the Galerkin product R·A·P for the piecewise-constant
// P and averaging R (AMReX's MLABecLaplacian averages its face β down the
// same way), which with a Krylov step on each coarse level (kcycle.go)
// measured best: 256², CG preconditioned by V(4,4), to a componentwise
// backward error of 1e-12 — lognormal k (σ = 3) 9 iterations against 17
// for the Galerkin product itself, a 10⁶ checkerboard 9 against 17, a
// uniform k 8 against 14. A held cell is exact on every level, no longer
// a coarse cell pinned at zero with its free siblings. Cells that are not
// free keep their value: the top level's their own (held values, a
// hole's initial value), an error equation's 0, restored after each
// coarse correction.

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
	// level is its copy on merged boxes: the faces (those below the box's
	// low physical faces as box cells), ρc and the free mask.
	lastL := m.levels[len(m.levels)-1]
	last := lastL.med
	nd := len(lastL.shape)
	low := last.LowFaces(lastL.hasNeighbour, hugemem.Floats)
	var dst *level
	alloc := func() []float64 { return nil }
	if m.agg != nil {
		dst = m.agg.levels[0]
		alloc = func() []float64 { return hugemem.Floats(dst.lay.Len()) }
	}
	b, lowTo := make([][]float64, nd), make([][]float64, nd)
	for a := range nd {
		b[a], lowTo[a] = alloc(), alloc()
		if err := m.gat.gather(last.B[a], b[a]); err != nil {
			return err
		}
		if err := m.gat.gather(low[a], lowTo[a]); err != nil {
			return err
		}
	}
	rc, free, tie := alloc(), alloc(), alloc()
	lastTie := last.Tie
	if lastTie == nil {
		lastTie = hugemem.Floats(lastL.lay.Len()) // the fine level: nothing tied
	}
	for _, p := range [][2][]float64{{last.RhoC, rc}, {last.Free, free}, {lastTie, tie}} {
		if err := m.gat.gather(p[0], p[1]); err != nil {
			return err
		}
	}
	if m.agg == nil {
		return nil
	}
	if err := dst.faceGhosts(b, lowTo); err != nil {
		return err
	}
	dst.mixed = lastL.mixed // every rank's judgement alike
	return m.agg.setMedia(operator.NewCoarse(dst.lay, dst.h, b, rc, free, tie))
}

// faceGhosts fills the ghosts below the box of the level's face fields:
// the neighbours' faces through the halo, the physical faces from low
// (operator.LowFaces).
func (l *level) faceGhosts(b, low [][]float64) error {
	for a := range b {
		if err := l.halo(b[a]); err != nil {
			return err
		}
	}
	operator.SetLowFaces(l.lay, b, low, l.hasNeighbour)
	return nil
}

// setMedia makes med the level's media, and its operator theirs.
func (l *level) setMedia(med *operator.Media) {
	l.med = med
	l.op = operator.NewMediaOp(med, l.wk)
	l.fixed = l.fixed[:0]
	l.forCells(func(i int) {
		if med.Free[i] == 0 {
			l.fixed = append(l.fixed, i)
		}
	})
}

// coarsenMedia sets c's media from f's.
func (m *MG) coarsenMedia(f, c *level) error {
	fine := f.med
	nd := len(f.shape)
	restricted := func(src []float64) ([]float64, error) {
		if err := f.restrictTo(c, src); err != nil {
			return nil, err
		}
		out := hugemem.Floats(c.lay.Len())
		c.forCells(func(i int) { out[i] = c.b[i] })
		return out, nil
	}
	// The free mask with its ghosts: the neighbours' through the halo, 1
	// beyond a physical face (whose ghost formula stays a face of the coarse
	// cells on it).
	free := m.take(f.lay.Len())
	for i := range free {
		free[i] = 1
	}
	f.eachRow(func(lo, hi int) { copy(free[lo:hi], fine.Free[lo:hi]) })
	if err := f.halo(free); err != nil {
		return err
	}
	low := fine.LowFaces(f.hasNeighbour, m.take)
	tie := m.take(f.lay.Len())
	upper := make([][]float64, nd)
	for a := range nd {
		upper[a] = m.take(f.lay.Len())
	}
	rc := m.take(f.lay.Len())
	f.eachRow(func(lo, hi int) {
		var lc [3]int
		f.lay.Coords(lo, lc[:nd])
		for i := lo; i < hi; i++ {
			if free[i] != 0 {
				rc[i] = fine.RhoC[i]
				if fine.Tie != nil {
					tie[i] = fine.Tie[i]
				}
			}
		}
		// Axis by axis (the ties' sums in the same order as a cell at a
		// time: axis by axis, the upper face then the lower).
		for a := range nd {
			st, b, up, lw := f.lay.Stride[a], fine.B[a], upper[a], low[a]
			inv := 1 / float64(f.ratio[a])
			// The fine faces on the coarse cell's upper face along a: those
			// above the upper child where a is halved, every child's where
			// it is not (the last axis's coordinate runs along the row).
			g := f.lay.Box.Lo[a] + lc[a]
			for i := lo; i < hi; i++ {
				upperChild := f.ratio[a] == 1 || g%2 == 1
				if a == nd-1 {
					g++
				}
				if free[i] == 0 {
					lw[i] = 0 // a held cell's boundary face is no coarse face
					continue
				}
				u := b[i]
				if free[i+st] == 0 {
					tie[i] += float64(u * inv)
					u = 0
				}
				if free[i-st] == 0 {
					tie[i] += float64(b[i-st] * inv)
				}
				if upperChild {
					up[i] = u
				}
			}
		}
	})
	var err error
	cm := &operator.Media{}
	if cm.RhoC, err = restricted(rc); err != nil {
		return err
	}
	// The share of free children: the judgement's weights, and free where
	// it is not 0.
	share, err := restricted(fine.Free)
	if err != nil {
		return err
	}
	cm.Free = hugemem.Floats(len(share))
	for i, x := range share {
		if x > 0 {
			cm.Free[i] = 1
		}
	}
	if cm.Tie, err = restricted(tie); err != nil {
		return err
	}
	b, lowC := make([][]float64, nd), make([][]float64, nd)
	for a := range nd {
		if b[a], err = restricted(upper[a]); err != nil {
			return err
		}
		if lowC[a], err = restricted(low[a]); err != nil {
			return err
		}
		r := float64(f.ratio[a])
		for i := range b[a] {
			b[a][i], lowC[a][i] = b[a][i]/r, lowC[a][i]/r
		}
	}
	if err := c.faceGhosts(b, lowC); err != nil {
		return err
	}
	c.setMedia(operator.NewCoarse(c.lay, c.h, b, cm.RhoC, cm.Free, cm.Tie))
	m.give(free, tie, rc)
	m.give(upper...)
	m.give(low...)
	return m.judgeMixed(f, c, share, restricted)
}

// mixedSpread is the standard deviation of ln(Σ faces) over a coarse
// cell's free children above which the cell counts as mixed (children
// 1.4× apart), and mixedShare the share of mixed cells above which a
// level's error equation is solved by the K-cycle. Measured, the share of
// cells past that spread on the first coarse level: a lognormal k (σ = 2,
// 3) 21% and 50%, a one-cell channel 51%, a random 10² map 80%, random
// layers 81% — where the K-cycle takes a half to a third of the
// iterations —; held discs beside a 10³ block 0–4% and a 10⁶ inclusion
// under 1%, where it saves none and doubles the cost of an iteration.
const (
	mixedSpread = 0.35
	mixedShare  = 0.1
)

// swampedCells is the smallest level whose cells, more than half of them
// mixed, make the medium algebraic (useAlgebraic) though its first coarse
// level is not: a 10⁶ checkerboard of 12-cell tiles at 64², 61% of the 8²
// level mixed, failed with the K-cycle there (mgcg stalled at a
// componentwise backward error of 0.98) and takes 9 iterations
// algebraically. The levels of a few cells, where an inclusion's or a
// heater's edges fill most of the cells, keep the K-cycle.
const swampedCells = 64

// judgeMixed sets c.mixed: whether more than mixedShare of c's free cells
// have children whose diagonals (Σ faces) spread more than mixedSpread in
// ln — a level whose coarse faces cannot stand for the medium —, or f is
// mixed. share is the restricted free mask (the mean's weights). The
// counts are global sums of whole numbers: every rank decides alike,
// whatever the split.
func (m *MG) judgeMixed(f, c *level, share []float64, restricted func([]float64) ([]float64, error)) error {
	fine := f.med
	nd := len(f.shape)
	x, x2 := m.take(f.lay.Len()), m.take(f.lay.Len())
	defer m.give(x, x2)
	f.eachRow(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if fine.Free[i] == 0 {
				continue
			}
			d := 0.0
			for a := range nd {
				d += fine.B[a][i] + fine.B[a][i-f.lay.Stride[a]]
			}
			v := math.Log(d)
			x[i], x2[i] = v, v*v
		}
	})
	mean, err := restricted(x)
	if err != nil {
		return err
	}
	sq, err := restricted(x2)
	if err != nil {
		return err
	}
	count := []float64{0, 0, float64(len(f.fixed))}
	c.forCells(func(i int) {
		if share[i] == 0 {
			return
		}
		count[0]++
		mu := mean[i] / share[i]
		if sq[i]/share[i]-float64(mu*mu) > mixedSpread*mixedSpread {
			count[1]++
		}
	})
	total := make([]float64, 3)
	if err := m.c.Allreduce(comm.Sum, count, total); err != nil {
		return err
	}
	// Below a mixed level every level is: its faces are averaged from
	// faces that already could not stand for the medium (a channel's
	// coarse levels look uniform, and without the K-cycle there took 46
	// iterations against 36).
	c.mixed = f.mixed || total[1] > mixedShare*total[0]
	c.swamped = total[0] >= swampedCells && total[1] > 0.5*total[0]
	if total[1] == 0 && total[2] == 0 {
		// No coarse cell whose children differ, and every cell free: the
		// jumps lie on c's cell faces, and corrections interpolate
		// linearly, weighted by the faces across them.
		f.flux = f.down.FluxWeights(fine.B, fine.Free)
	}
	return nil
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

// SetFaces sets the ghost coefficients of the faces that need them per cell
// (Robin, fluxes, varying values) on every level, at time t: each level's
// own problem (its face values, at its face centres) and its error
// equation (no values; Robin's coefficient at its spacing and k), the ranks
// below included. Call it after New and wherever the faces' values change.
//
// It returns the first face value or coefficient that is not finite (nil:
// none), on this rank.
func (m *MG) SetFaces(t float64) *operator.FaceError {
	var bad *operator.FaceError
	for _, l := range m.levels {
		k := func(mirror, axis, side int) float64 { return m.prob.K }
		if l.med != nil {
			k = l.med.Conductivity
		}
		b := operator.Boundary{Lay: l.lay, H: l.h, Length: m.prob.Length, K: k, At: m.prob.FaceAt}
		b.Set(l.bc.faces, l.bc.runs, t)
		b.Homogeneous = true
		b.Set(l.bc0.faces, l.bc0.runs, t)
		if bad == nil {
			bad = b.Bad
		}
	}
	if m.agg != nil {
		if b := m.agg.SetFaces(t); bad == nil {
			bad = b
		}
	}
	if m.alg != nil && robinVaries(m.prob.Faces) {
		m.alg.stale = true
	}
	return bad
}

// FineFaces are the fine level's physical face ghosts with the problem's
// values (as SetFaces last set them), to apply to its field.
func (m *MG) FineFaces() []operator.GhostFace { return m.levels[0].bc.faces }
