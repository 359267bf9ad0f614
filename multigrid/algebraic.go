package multigrid

import (
	"fmt"
	"math"
	"slices"
	"time"

	"heat/amg"
	"heat/comm"
	"heat/decomp"
	"heat/internal/team"
	"heat/operator"
)

// The algebraic preconditioner of media whose coarse grids cannot stand
// for them. Halving the grid averages the faces of four (eight) cells into
// one: where the medium changes from cell to cell (a random map, a one-cell
// channel, layers of 10⁻³…10³) no coarse face stands for what it averages,
// and the cycles stall or diverge from a contrast of 10⁴. Classical
// algebraic multigrid (package amg) chooses its coarse points from the
// couplings themselves and follows any medium; here it preconditions mgcg
// on the fine level gathered onto rank 0.
//
// The matrix is the operator's own: its entries are read off the fine
// level's Apply with the homogeneous faces (the error equation's), probed
// by 3^d vectors that are 1 on the free cells of one colour of the
// (x mod 3, y mod 3[, z mod 3]) colouring — no two cells of a stencil share
// a colour, so each probe gives one entry of every row. The hierarchy is
// built on rank 0 from the whole grid in C order, and each cycle runs
// there in one goroutine: the same bits on every split. The other ranks
// wait for the correction, so the preconditioner does not scale with the
// ranks; it is chosen only where the cycles would stall (judgeMixed) and
// the grid is at most AlgebraicCells.

// AlgebraicCells is the largest grid the algebraic preconditioner takes
// (its hierarchy on rank 0 up to 1.4 KB a cell); a larger mixed medium
// keeps the K-cycle.
const AlgebraicCells = 1 << 21

// algebraic is the preconditioner's state on every rank.
type algebraic struct {
	at      int // the level of the MG it solves (0: the fine level, as mgcg's preconditioner)
	gat     *gatherer
	stale   bool // the operator changed since the hierarchy was built
	rescale bool // only σ and β changed (an implicit step of another length)
	massed  bool // the hierarchy has the capacities: it can be scaled
	// rank 0: the whole grid's layout, the free cells' places in it (the
	// matrix's rows in order), the hierarchy, and its vectors.
	whole      decomp.Layout
	cells      []int
	h          *amg.Hierarchy
	par        amg.Parallel // the setup's passes over rank 0's workers
	x, b       []float64
	rAll, zAll []float64
	stats      AlgebraicStats
}

// useAlgebraic returns the global index of the level m's media are solved
// algebraically from, or −1: the fine level where the first coarse level
// is mixed (the medium changes within the coarse cells from the start);
// where more than half the cells of a level of at least 64 are mixed (a
// checkerboard whose tiles fall inside the coarse cells of some level) a
// level above the first mixed one, whose faces still stand for the medium
// (belowMixed). Collective: every rank decides alike.
func (m *MG) useAlgebraic() (int, error) {
	if !m.AlgebraicFits() {
		return -1, nil
	}
	flags := []float64{0}
	if m.firstCoarseMixed() || m.anySwamped() {
		flags[0] = 1
	}
	any := make([]float64, 1)
	if err := m.c.Allreduce(comm.Max, flags, any); err != nil {
		return -1, err
	}
	if any[0] == 0 {
		return -1, nil
	}
	return m.belowMixed()
}

// belowMixed returns the global index of the level the algebraic cycle
// takes over at: two above the first mixed one (judgeMixed; mixed levels
// are mixed all the way down) but not the fine level, or the fine level
// where the first coarse one is mixed or none is. Collective.
//
// One level above the first mixed one the medium's features can be two
// cells wide, and one algebraic cycle there reduces the error too little:
// a checkerboard of 16-cell tiles shifted by 8 at 1024² (first mixed
// level 64²): the algebraic cycle on 128² 17 mgcg iterations in 0.58 s,
// K-cycle there or not (with the level solved exactly, 10); on 256² 14 in
// 0.67–0.83 s; on the fine grid 12 in 4.5–5.2 s. The fine grid's setup
// (rank 0, the whole grid) is most of a solve's time and its iterations
// no fewer than the next level's: 16-cell tiles shifted by 2 at 1024²
// (first mixed level 256²), after the switch 12 iterations on 512² (2.3
// s in all) against 13 on the fine grid (6.0 s).
func (m *MG) belowMixed() (int, error) {
	first := []float64{float64(m.firstMixed())}
	out := make([]float64, 1)
	if err := m.c.Allreduce(comm.Min, first, out); err != nil {
		return -1, err
	}
	if out[0] >= math.MaxInt32 || out[0] <= 1 {
		return 0, nil
	}
	return max(int(out[0])-2, 1), nil
}

// firstMixed is the global index of the first mixed level of the
// hierarchy as far as this rank holds it, math.MaxInt32 where none is.
func (m *MG) firstMixed() int {
	for i, l := range m.levels {
		if l.mixed {
			return m.first + i
		}
	}
	if m.agg != nil {
		return m.agg.firstMixed()
	}
	return math.MaxInt32
}

// AlgebraicFits says whether the algebraic preconditioner can take m's
// problem: a medium on the top of the hierarchy, on a grid of at most
// AlgebraicCells, no axis periodic (the probes' colouring does not wrap
// around). The same on every rank.
func (m *MG) AlgebraicFits() bool {
	if m.prob.Media == nil || m.isCopy || m.levels[0].cells() > AlgebraicCells {
		return false
	}
	for _, f := range m.prob.Faces {
		if f[0].Kind == operator.Periodic {
			return false
		}
	}
	return true
}

// ToAlgebraic makes the level two above the first mixed one and those
// below it solved algebraically (belowMixed) from mgcg's next iteration
// on, restarted from the current u: for a medium whose levels looked fit
// for the cycles (judgeMixed) and whose mgcg iterations then hardly reduce
// the error (a checkerboard of 16-cell tiles shifted by 2, 37–44% of its
// coarse levels' cells mixed: 55 iterations at 256²). The problem must fit
// (AlgebraicFits). Collective.
func (m *MG) ToAlgebraic() error {
	if m.Algebraic() {
		return nil
	}
	if !m.AlgebraicFits() {
		return fmt.Errorf("multigrid: the algebraic preconditioner does not take this problem")
	}
	at, err := m.belowMixed()
	if err != nil {
		return err
	}
	m.attachAlgebraic(at)
	m.RestartKrylov()
	return nil
}

// attachAlgebraic makes level at (a global index) solved algebraically:
// its algebraic state on the ranks that hold it, here or below.
func (m *MG) attachAlgebraic(at int) {
	m.algebraicAt = at
	if i := at - m.first; i < len(m.levels) {
		m.alg = m.newAlgebraic(i)
		return
	}
	if m.agg != nil {
		m.agg.attachAlgebraic(at)
	}
}

// firstCoarseMixed says whether the hierarchy's level 1 is mixed, as far
// as this rank holds it.
func (m *MG) firstCoarseMixed() bool {
	switch {
	case len(m.levels) > 1:
		return m.levels[1].mixed
	case m.agg != nil:
		return m.agg.firstCoarseMixed()
	}
	return false
}

// anySwamped says whether a level of the hierarchy, as far as this rank
// holds it, is mostly mixed (judgeMixed).
func (m *MG) anySwamped() bool {
	for _, l := range m.levels {
		if l.swamped {
			return true
		}
	}
	return m.agg != nil && m.agg.anySwamped()
}

// newAlgebraic sets up the gather of level i onto this MG's rank 0.
func (m *MG) newAlgebraic(i int) *algebraic {
	f := m.levels[i]
	c := m.c
	members := make([]int, c.Size())
	for r := range members {
		members[r] = r
	}
	global := decomp.Box{Lo: make([]int, len(f.shape)), Hi: f.shape}
	a := &algebraic{at: i, stale: true}
	a.stats.Level = m.first + i
	if c.Rank() == 0 {
		a.whole = decomp.NewLayout(global, 1)
		a.par = rowsOver(f.wk.Team)
	}
	a.gat = newGatherer(c, f.lay, 0, members, f.boxes, a.whole)
	a.gat.tag = comm.TagAlgebraic
	return a
}

// build reads its level's operator into a matrix on rank 0 and sets its
// hierarchy up. Collective. The matrix read is the conduction alone
// (σ = 0, β = 1), and for an implicit step the capacities (σ = 1, β = 0)
// beside it: the hierarchy is built from the conduction and scaled to each
// step length (amg.Hierarchy.Scale), the same whatever length came first.
func (a *algebraic) build(m *MG) error {
	f := m.levels[a.at]
	nd := len(f.shape)
	n := f.lay.Len()
	op := m.prob.Op
	f.op.Scale(0, 1)
	defer f.op.Scale(op.Sigma, op.Beta)
	// entries[0] is the diagonal; entries[1+2a] the coupling to the cell
	// below along axis a, entries[2+2a] above.
	entries := make([][]float64, 1+2*nd)
	for e := range entries {
		entries[e] = make([]float64, n)
	}
	free := f.med.Free
	probe, out := make([]float64, n), make([]float64, n)
	colours := 1
	for range nd {
		colours *= 3
	}
	// Each free cell's colour (the digits x mod 3 along each axis, the
	// first axis the most significant) and its neighbours' below and above
	// along each axis (none: outside the grid), once: nb[0] the cell's,
	// nb[1+2a] and nb[2+2a] the neighbours'. A probe of one colour gives
	// each cell the entry of the one cell of that colour among it and its
	// neighbours.
	const none = 255
	nb := make([][]uint8, 1+2*nd)
	for e := range nb {
		nb[e] = make([]uint8, n)
	}
	g := make([]int, nd)
	f.forCells(func(i int) {
		if free[i] == 0 {
			return
		}
		f.lay.Global(i, g)
		c, place := 0, colours
		for _, x := range g {
			c = 3*c + x%3
		}
		nb[0][i] = uint8(c)
		for ax, x := range g {
			place /= 3
			for side, d := range [2]int{-1, 1} {
				nb[1+2*ax+side][i] = none
				if y := x + d; y >= 0 && y < f.shape[ax] {
					nb[1+2*ax+side][i] = uint8(c + (y%3-x%3)*place)
				}
			}
		}
	})
	for colour := range colours {
		clear(probe)
		f.forCells(func(i int) {
			if free[i] != 0 && int(nb[0][i]) == colour {
				probe[i] = 1
			}
		})
		if err := f.exchange(probe, f.bc0); err != nil {
			return err
		}
		f.apply(probe, out)
		f.forCells(func(i int) {
			if free[i] == 0 {
				return
			}
			for e := range nb {
				if int(nb[e][i]) == colour {
					entries[e][i] = out[i]
					return
				}
			}
		})
	}
	// The capacities: with β = 0 the operator is their diagonal, and one
	// probe of every free cell reads it.
	var mass []float64
	if !conduction(op) {
		mass = make([]float64, n)
		f.op.Scale(1, 0)
		clear(probe)
		f.forCells(func(i int) { probe[i] = free[i] })
		if err := f.exchange(probe, f.bc0); err != nil {
			return err
		}
		f.apply(probe, mass)
	}
	// The free mask, the entries and the capacities onto rank 0.
	srcs := append([][]float64{free}, entries...)
	if mass != nil {
		srcs = append(srcs, mass)
	}
	all := make([][]float64, len(srcs))
	var whole []float64
	for e, src := range srcs {
		if m.c.Rank() == 0 {
			whole = make([]float64, a.whole.Len())
		}
		if err := a.gat.gather(src, whole); err != nil {
			return err
		}
		all[e] = whole
	}
	var err error
	if m.c.Rank() == 0 {
		t := time.Now()
		err = a.setup(all, f.shape, mass != nil, op)
		a.stats.Setups++
		a.stats.SetupTime += time.Since(t)
	}
	if err := agreeRank0(m.c, err); err != nil {
		return err
	}
	a.stale, a.rescale, a.massed = false, false, mass != nil
	return nil
}

// agreeRank0 tells every rank whether rank 0's work on the hierarchy
// failed (err, rank 0's). Collective.
func agreeRank0(c comm.Comm, err error) error {
	flag := []float64{0}
	if err != nil {
		flag[0] = 1
	}
	got := make([]float64, 1)
	if cerr := c.Allreduce(comm.Max, flag, got); cerr != nil {
		return cerr
	}
	if got[0] != 0 {
		if err == nil {
			err = fmt.Errorf("rank 0 could not set it up")
		}
		return fmt.Errorf("multigrid: the algebraic preconditioner: %w", err)
	}
	return nil
}

// conduction says whether op is the conduction alone, the operator the
// hierarchy is built from.
func conduction(op Operator) bool { return op.Sigma == 0 && op.Beta == 1 }

// setup (rank 0) makes the matrix of the free cells in C order from the
// gathered mask and entries (and capacities, withMass, the last), and its
// hierarchy, scaled to op.
func (a *algebraic) setup(all [][]float64, shape []int, withMass bool, op Operator) error {
	free, entries := all[0], all[1:]
	var mass []float64
	if withMass {
		entries, mass = all[1:len(all)-1], all[len(all)-1]
	}
	nd := len(shape)
	lay := a.whole
	row := make([]int32, lay.Len()) // a free cell's row, −1 elsewhere
	a.cells = a.cells[:0]
	lay.ForRows(decomp.Box{Lo: make([]int, nd), Hi: shape}, func(start, n int) {
		for i := start; i < start+n; i++ {
			row[i] = -1
			if free[i] != 0 {
				row[i] = int32(len(a.cells))
				a.cells = append(a.cells, i)
			}
		}
	})
	b := amg.NewBuilder(len(a.cells), (1+2*nd)*len(a.cells))
	for _, i := range a.cells {
		// Columns in increasing order: the cells below, the cell, above.
		for ax := range nd {
			if v := entries[1+2*ax][i]; v != 0 {
				if j := row[i-lay.Stride[ax]]; j >= 0 {
					b.Add(int(j), v)
				}
			}
		}
		b.Add(int(row[i]), entries[0][i])
		for ax := nd - 1; ax >= 0; ax-- {
			if v := entries[2+2*ax][i]; v != 0 {
				if j := row[i+lay.Stride[ax]]; j >= 0 {
					b.Add(int(j), v)
				}
			}
		}
		b.EndRow()
	}
	h, err := amg.Setup(b.Matrix(), amg.Options{Parallel: a.par})
	if err != nil {
		return err
	}
	if withMass {
		rows := make([]float64, len(a.cells))
		for k, i := range a.cells {
			rows[k] = mass[i]
		}
		if err := h.SetMass(rows); err != nil {
			return err
		}
	}
	a.h = h
	if err := a.scale(op); err != nil {
		return err
	}
	a.stats.Rows = a.stats.Rows[:0]
	nnz := 0
	for _, l := range h.Levels {
		a.stats.Rows = append(a.stats.Rows, l.A.Rows)
		nnz += l.A.Nonzeros()
	}
	a.stats.Complexity = float64(nnz) / float64(h.Levels[0].A.Nonzeros())
	a.x, a.b = make([]float64, len(a.cells)), make([]float64, len(a.cells))
	a.rAll, a.zAll = make([]float64, lay.Len()), make([]float64, lay.Len())
	return nil
}

// scale (rank 0) sets the hierarchy to σ·M + β·L; the conduction alone
// (Poisson: σ = 0, β = 1) is the hierarchy as set up.
func (a *algebraic) scale(op Operator) error {
	if conduction(op) {
		return nil
	}
	t := time.Now()
	err := a.h.Scale(op.Sigma, op.Beta)
	a.stats.Rescales++
	a.stats.SetupTime += time.Since(t)
	return err
}

// solveLevel adds to level a.at's u one algebraic cycle's approximation of
// its error equation's solution, in place of the cycles below it: the
// residual (in tmp), its correction (into tmp) added. Collective.
func (a *algebraic) solveLevel(m *MG, bc *boundary) error {
	l := m.levels[a.at]
	if err := l.exchange(l.u, bc); err != nil {
		return err
	}
	l.residual()
	if err := a.precondition(m, l.tmp, l.tmp); err != nil {
		return err
	}
	l.addTmp()
	return nil
}

// precondition sets z to one algebraic cycle's approximation of A⁻¹r on
// its level (r and z may be the same slice). Collective.
func (a *algebraic) precondition(m *MG, r, z []float64) error {
	switch {
	case a.stale || a.rescale && !a.massed:
		if err := a.build(m); err != nil {
			return err
		}
	case a.rescale:
		var err error
		if m.c.Rank() == 0 {
			err = a.scale(m.prob.Op)
		}
		if err := agreeRank0(m.c, err); err != nil {
			return err
		}
		a.rescale = false
	}
	if err := a.gat.gather(r, a.rAll); err != nil {
		return err
	}
	if m.c.Rank() == 0 {
		for k, i := range a.cells {
			a.b[k] = a.rAll[i]
		}
		a.h.Cycle(a.x, a.b)
		for k, i := range a.cells {
			a.zAll[i] = a.x[k]
		}
	}
	return a.gat.scatter(a.zAll, z)
}

// rowsOver is the amg.Parallel of tm's workers (the caller alone for
// rows of at most team.SoloCells): a part each.
func rowsOver(tm *team.Team) amg.Parallel {
	return func(n int, f func(lo, hi int)) {
		t := tm.For(n)
		parts := t.Workers()
		t.Run(parts, func(p int) {
			lo, hi := decomp.Split(n, parts, p)
			f(lo, hi)
		})
	}
}

// robinVaries says whether a Robin face's coefficient changes in time:
// the error equation, and so the matrix, changes with it.
func robinVaries(faces [][2]operator.Face) bool {
	for _, f := range faces {
		for _, side := range f {
			if side.Kind == operator.Robin && side.Varies {
				return true
			}
		}
	}
	return false
}

// Stats is the preconditioner's account (rank 0's), a copy.
func (a *algebraic) Stats() *AlgebraicStats {
	s := a.stats
	s.Rows = slices.Clone(s.Rows)
	return &s
}
