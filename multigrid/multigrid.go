// Package multigrid solves σ·u − β·∇²u = b (Poisson: σ = 0; an implicit
// heat step: σ = 1, β = θ·dt·α) on heat's cell-centred grids by geometric
// multigrid: a hierarchy of global grids, each halved along the axes that
// allow it, on the same decomposition, halo and comm as the fine grid;
// weighted Jacobi or red-black Gauss–Seidel smoothing (stencil's kernels);
// restriction by averaging children; linear or constant prolongation; V-cycles
// and full multigrid. When ranks' boxes get too small, the coarse levels are
// agglomerated onto fewer ranks (neighbours' boxes merged, 2^d onto one)
// and finally gathered onto rank 0, where a conjugate-gradient bottom
// solver finishes.
//
// Every operation is a fixed formula of a cell's neighbours at global
// indices, the bottom solve runs on one rank in a fixed order, and every
// decision uses max-norms: a solve gives the same bits on every split.
package multigrid

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"heat/comm"
	"heat/decomp"
	"heat/halo"
	"heat/internal/exactsum"
	"heat/internal/hugemem"
	"heat/internal/team"
	"heat/operator"
	"heat/plan"
)

// Operator is σ·u − β·∇²u, re-discretised on every level.
type Operator struct{ Sigma, Beta float64 }

// Smoother is the relaxation of a level.
type Smoother int

const (
	// Chebyshev is Jacobi sweeps whose weights are the reciprocals of the
	// roots of the Chebyshev polynomial of their count on the upper part of
	// the spectrum of D⁻¹A (where a coarser grid cannot reach): the same
	// kernel as weighted Jacobi, a far better smoother.
	Chebyshev Smoother = iota
	// Jacobi is weighted Jacobi with one weight (Options.Omega; by default
	// 4/5 in 2D, 6/7 in 3D, the best single weight for the same range).
	Jacobi
	// RedBlack is red-black Gauss–Seidel.
	RedBlack
)

func (s Smoother) String() string { return plan.Smoothers[s] }

// Cycle is the shape of a multigrid cycle: how often each level's coarse
// problem is visited before its post-smoothing.
type Cycle int

const (
	// V visits each coarse level once.
	V Cycle = iota
	// W visits each coarse level twice, each visit a W-cycle: dearer, and
	// far fewer cycles on cell-centred grids, whose V-cycles lose accuracy
	// level by level; level l is visited 2^l times.
	W
	// F visits each coarse level twice, an F-cycle then a V-cycle: about
	// W's convergence, and level l is visited only l+1 times, which keeps
	// the latency-bound coarse levels cheap on many ranks.
	F
)

func (c Cycle) String() string { return plan.Cycles[c] }

// visits are the cycles a cycle of kind c runs on the next coarser level.
func (c Cycle) visits() []Cycle {
	switch c {
	case W:
		return []Cycle{W, W}
	case F:
		return []Cycle{F, V}
	}
	return []Cycle{V}
}

// Visits is how many times one cycle of kind c on level 0 visits level l.
func (c Cycle) Visits(l int) int {
	switch c {
	case W:
		return 1 << l
	case F:
		return l + 1
	}
	return 1
}

// Options tune the cycles. The zero value is a V(2,2) cycle with
// Chebyshev-weighted Jacobi, linear prolongation and every level the shape
// allows.
type Options struct {
	Smoother  Smoother
	Cycle     Cycle
	Pre, Post int // sweeps before and after the coarse correction; 0: (3,1) in 2D and (4,4) in 3D (Jacobi, Chebyshev), (2,2) (Gauss–Seidel)
	// FMGPre, FMGPost are full multigrid's V-cycles' sweeps; 0: (3,2) in
	// 3D (Jacobi, Chebyshev), else the cycles' defaults — not Pre and
	// Post, which a preconditioner's cycles may set for themselves.
	FMGPre, FMGPost int
	Levels          int     // levels of the hierarchy, the fine grid included; 0: as many as the shape allows
	Constant        bool    // piecewise-constant prolongation instead of linear
	Omega           float64 // Jacobi weight; 0: 4/5 in 2D, 6/7 in 3D
	// GatherBelow gathers the coarse levels onto rank 0 once a rank's box
	// of the next level would have fewer cells than this along an axis;
	// 0: 32 (below that the levels' halo exchanges cost more than rank 0
	// doing them alone: 2D 1024² on 2 ranks, 142 ms with 4, 106 with 32) —
	// but only a level of at most GatherCells cells (0: 16384, 128² or
	// 25³), which one rank does in the time of a few exchanges: on many
	// ranks small boxes come early, and a large level on one rank would
	// hold every other rank up (benchmarks.MGModel).
	GatherBelow int
	GatherCells int
}

// Problem is what every level discretises.
type Problem struct {
	Shape  []int // global cells per axis, C order
	Length []float64
	Faces  [][2]operator.Face
	Op     Operator
	// Media, when set, are the fine level's heterogeneous media (k, ρc,
	// holes, held cells; Op's σ then scales ρc and β the faces); nil: the
	// uniform medium. Held says some rank holds a held cell (the problem
	// is then not singular).
	Media *operator.Media
	Held  bool
	// K is the conductivity a boundary ghost sees in the uniform medium
	// (the heat equation's α, Poisson's 1); FaceAt the values of the faces
	// that vary (operator.Face.Varies), at SetFaces's time.
	K      float64
	FaceAt operator.FaceAt
}

// MaxLevels bounds Options.Levels.
const MaxLevels = 30

// DefaultSweeps are the smoothing sweeps before and after the coarse
// correction when Options leave them 0. Chebyshev and Jacobi: (3,1) in 2D,
// (4,4) in 3D, the cheapest F-cycles to a relative residual of 1e-9 of
// (1..4, 1..4) measured at 1024² and 2048² (3,1: 86–89 WU; 3,3: 111–172)
// and 128³ (4,4: 101 WU; 4,2: 112): in 2D the coarse correction leaves
// little for the post-smoothing. Red-black Gauss–Seidel: (2,2).
func DefaultSweeps(nd int, s Smoother) (pre, post int) {
	switch {
	case s == RedBlack:
		return 2, 2
	case nd == 2:
		return 3, 1
	}
	return 4, 4
}

// MG is one rank's part of a multigrid solver. Build it with New; write the
// right-hand side into RHS and the first guess into Field, then call Cycle
// (or FMG) until Residual is small enough.
type MG struct {
	c         comm.Comm
	prob      Problem
	opt       Options
	pre, post []float64 // the Jacobi weights of the pre- and post-smoothing sweeps
	// fmgPre, fmgPost are those of full multigrid's V-cycles.
	fmgPre, fmgPost []float64
	levels          []*level // the levels this MG's ranks share, finest first
	// Below the last of them the hierarchy goes on on fewer ranks: agg
	// (on the ranks that receive) is an MG on their own world whose first
	// level is a copy of levels[len-1] on merged boxes, and gat moves that
	// level's fields there and back. Both nil when no level is handed on.
	agg      *MG
	gat      *gatherer
	gathered bool
	// solvedBelow: the hierarchy is one level, which the ranks below (rank
	// 0) solve whole, as one rank would: the bottom solver needs the whole
	// level in one place.
	solvedBelow bool
	isCopy      bool    // an agg: its first level copies the last level of the MG above
	first       int     // the global index of levels[0] in the whole hierarchy
	singular    bool    // no Dirichlet face and σ = 0: u is fixed up to a constant
	kry         *krylov // mgcg's state, once Krylov is called
	// spare are fields the setup wrote and needs no more (the coarsening's
	// and the judgement's scratch), for later needs of at most their
	// length (mgcg's and the K-cycle's vectors) in place of fresh memory
	// (take, give).
	spare [][]float64
	// alg, where set, solves the error equation of one of this MG's
	// levels in place of the cycles below it — mgcg's preconditioner where
	// that is the fine level —: media whose coarse grids cannot stand for
	// them (algebraic.go). algebraicAt is that level's global index on
	// every rank of the hierarchy (alg is on the ranks holding it), −1 where
	// there is none.
	alg         *algebraic
	algebraicAt int
	stats       Stats
	// omega and normU are the fine iterate's componentwise backward error
	// and ‖u‖∞ at the last cycle's end (measure).
	omega, normU float64
	data         float64 // the right side's scale in the backward error (SetDataScale)
}

// Stats are a solver's counters.
type Stats struct {
	Cycles int
	// Level[l] is the time spent in level l's own work (smoothing,
	// residuals, transfers, and for the last, the bottom solve) on this
	// rank, the agglomerated levels it took part in included.
	Level []time.Duration
	// Shapes[l] is level l's global shape, and Ranks[l] the ranks holding
	// it, as far as this rank took part (0 below where it handed its box
	// on; rank 0 takes part in every level).
	Shapes [][]int
	Ranks  []int
	// Setup is the time New took on this rank, and RHSNorm after it: the
	// levels laid out, their exchange plans built, their fields allocated.
	Setup time.Duration
	// Algebraic is the algebraic preconditioner's account (rank 0), nil
	// where mgcg is preconditioned by the cycles.
	Algebraic *AlgebraicStats
}

// AlgebraicStats describe the algebraic preconditioner: each level's rows
// (the free cells first), its operator complexity (nonzeros of all levels
// over the first's), how often it was set up (once, and again when a
// Robin face's coefficient changes) and scaled to a step length, and the
// time both took on rank 0.
type AlgebraicStats struct {
	Level      int // the grid level it solves (0: the fine grid)
	Rows       []int
	Complexity float64
	Setups     int
	Rescales   int
	SetupTime  time.Duration
}

// New builds rank c.Rank()'s part of the hierarchy of p on process grid
// topo, with the workers of tm.
func New(c comm.Comm, topo *decomp.Grid, p Problem, opt Options, tm *team.Team) (*MG, error) {
	t0 := time.Now()
	nd := len(p.Shape)
	if opt.Levels < 0 || opt.Levels > MaxLevels {
		return nil, fmt.Errorf("multigrid: %d levels outside 0..%d", opt.Levels, MaxLevels)
	}
	shapes := plan.HierarchyOf(p.Shape, p.Length, opt.Levels, p.Media != nil)
	if opt.Levels > len(shapes) {
		return nil, fmt.Errorf("multigrid: %s has at most %d levels (each halves the finest even axes of at least 8 cells), not %d",
			decomp.FormatDims(p.Shape), len(shapes), opt.Levels)
	}
	bottom := 1
	for _, n := range shapes[len(shapes)-1] {
		bottom *= n
	}
	if bottom > plan.MaxBottomCells {
		return nil, fmt.Errorf("multigrid: %s coarsens only to %s, %d cells for the one-rank bottom solve (at most %d): use counts divisible by a power of two",
			decomp.FormatDims(p.Shape), decomp.FormatDims(shapes[len(shapes)-1]), bottom, plan.MaxBottomCells)
	}
	pre, post := DefaultSweeps(nd, opt.Smoother)
	// Full multigrid's V-cycles: in 3D (3,2) instead of (4,4), 27 WU
	// against 28–44 for one FMG cycle on 128³, its error 1.3× the
	// converged solution's instead of 0.8× (still the discretisation
	// error: the test asks 2×).
	fmgPre, fmgPost := pre, post
	if nd == 3 && opt.Smoother != RedBlack {
		fmgPre, fmgPost = 3, 2
	}
	if opt.FMGPre != 0 {
		fmgPre = opt.FMGPre
	}
	if opt.FMGPost != 0 {
		fmgPost = opt.FMGPost
	}
	if opt.GatherBelow == 0 {
		opt.GatherBelow = 32
	}
	if opt.GatherCells == 0 {
		opt.GatherCells = 1 << 14
	}
	m := &MG{c: c, prob: p, opt: opt, algebraicAt: -1}
	m.SetSweeps(opt.Pre, opt.Post)
	m.fmgPre, m.fmgPost = weights(opt, nd, fmgPre), weights(opt, nd, fmgPost)
	if p.Media != nil && opt.Smoother == RedBlack {
		return nil, fmt.Errorf("multigrid: the red-black Gauss–Seidel smoother is not built for heterogeneous media; use chebyshev or jacobi")
	}
	m.singular = p.Op.Sigma == 0 && !p.Held
	for _, f := range p.Faces {
		for _, side := range f {
			if side.Kind == operator.Dirichlet || (side.Kind == operator.Robin && (side.H > 0 || side.Varies)) {
				m.singular = false
			}
		}
	}
	boxes := make([]decomp.Box, c.Size())
	for r := range boxes {
		boxes[r] = topo.Box(r)
	}
	m.stats.Level = make([]time.Duration, len(shapes))
	if err := m.build(topo, shapes, boxes, tm); err != nil {
		return nil, err
	}
	if p.Media != nil {
		if err := m.setMedia(p.Media); err != nil {
			return nil, err
		}
	}
	m.SetOperator(p.Op)
	if at, err := m.useAlgebraic(); err != nil {
		return nil, err
	} else if at >= 0 {
		m.attachAlgebraic(at)
	}
	m.stats.Shapes = shapes
	m.stats.Setup = time.Since(t0)
	return m, nil
}

// build lays out the levels on this MG's ranks and, below them, hands the
// rest of the hierarchy on to fewer ranks.
func (m *MG) build(topo *decomp.Grid, shapes [][]int, boxes []decomp.Box, tm *team.Team) error {
	c := m.c
	m.stats.Ranks = make([]int, len(shapes))
	for l, shape := range shapes {
		if l > 0 {
			ratio := make([]int, len(shape))
			for a := range shape {
				ratio[a] = shapes[l-1][a] / shape[a]
			}
			coarse := make([]decomp.Box, len(boxes))
			smallest := math.MaxInt
			for r, b := range boxes {
				coarse[r] = operator.Coarsen(b, ratio)
				smallest = min(smallest, slices.Min(coarse[r].Shape()))
			}
			cells := 1
			for _, n := range shape {
				cells *= n
			}
			if c.Size() > 1 && (l == len(shapes)-1 || smallest < m.opt.GatherBelow) {
				return m.handOn(l, shapes, boxes, topo, tm, l == len(shapes)-1 || cells <= m.opt.GatherCells)
			}
			m.levels[l-1].ratio = ratio
			m.levels[l-1].aligned = aligned(boxes, ratio)
			boxes = coarse
		}
		// Plans of different levels use different tags; a level and its
		// agglomerated copy share theirs, which is safe: every rank posts
		// the copy's messages after the original's, and messages between
		// two ranks under one tag match in order.
		lv, err := newLevel(c, topo, shape, m.prob.Length, boxes[c.Rank()], m.prob.Faces, tm, comm.TagMultigrid+comm.TagMultigridStride*(m.first+l))
		if err != nil {
			return err
		}
		lv.boxes = boxes
		m.levels = append(m.levels, lv)
		if l > 0 {
			f := m.levels[l-1]
			f.down = operator.NewTransfer(f.wk, lv.wk, f.ratio)
		}
		m.stats.Ranks[l] = c.Size()
	}
	if c.Size() > 1 && len(shapes) == 1 {
		m.solvedBelow = true
		return m.handOn(1, shapes, boxes, topo, tm, true)
	}
	return nil
}

// aligned reports whether every box starts and ends on an even index along
// each axis the next level halves: then every coarse cell's children lie in
// the box, and the restriction reads no ghost.
func aligned(boxes []decomp.Box, ratio []int) bool {
	for _, b := range boxes {
		for a, r := range ratio {
			if r == 2 && (b.Lo[a]%2 != 0 || b.Hi[a]%2 != 0) {
				return false
			}
		}
	}
	return true
}

// handOn makes levels l−1… the business of fewer ranks: all of rank 0's
// (whole), or, agglomerating, each group of up to 2^d neighbouring ranks'
// (pairs along every axis the process grid splits) that of the group's
// first rank, which holds their boxes merged. The receivers run an MG over
// shapes[l-1:] on a world of their own, whose first level copies the level
// l−1 of these ranks; it may hand on again.
func (m *MG) handOn(l int, shapes [][]int, boxes []decomp.Box, topo *decomp.Grid, tm *team.Team, whole bool) error {
	m.gathered = true
	dims := slices.Clone(topo.Dims)
	for a := range dims {
		dims[a] = (dims[a] + 1) / 2
		if whole {
			dims[a] = 1
		}
	}
	merged := &decomp.Grid{Shape: slices.Clone(shapes[l-1]), Dims: dims, Periodic: slices.Clone(topo.Periodic)}
	group := func(r int) int {
		co := topo.Coords(r)
		for a := range co {
			co[a] /= 2
			if whole {
				co[a] = 0
			}
		}
		return merged.RankOf(co)
	}
	// Each group's first rank (in rank order) receives; its box is the
	// union of the group's (a box: the boxes form a tensor product).
	leaders := make([]int, merged.Size())
	unions := make([]decomp.Box, merged.Size())
	for g := range leaders {
		leaders[g] = -1
	}
	for r, b := range boxes {
		g := group(r)
		if leaders[g] < 0 {
			leaders[g], unions[g] = r, decomp.Box{Lo: slices.Clone(b.Lo), Hi: slices.Clone(b.Hi)}
			continue
		}
		for a := range b.Lo {
			unions[g].Lo[a], unions[g].Hi[a] = min(unions[g].Lo[a], b.Lo[a]), max(unions[g].Hi[a], b.Hi[a])
		}
	}
	me := m.c.Rank()
	g := group(me)
	var members []int
	var memberBoxes []decomp.Box
	if leaders[g] == me {
		for r, b := range boxes {
			if group(r) == g {
				members, memberBoxes = append(members, r), append(memberBoxes, b)
			}
		}
	}
	last := m.levels[len(m.levels)-1]
	m.gat = newGatherer(m.c, last.lay, leaders[g], members, memberBoxes, decomp.NewLayout(unions[g], 1))
	if leaders[g] != me {
		return nil
	}
	// The leaders' own world (one rank: messages to itself, a periodic
	// wrap, through m.c as any subset's).
	sub, err := comm.Subset(m.c, leaders)
	if err != nil {
		return err
	}
	prob := m.prob
	prob.Shape = shapes[l-1]
	agg := &MG{c: sub, prob: prob, opt: m.opt, pre: m.pre, post: m.post, fmgPre: m.fmgPre, fmgPost: m.fmgPost,
		singular: m.singular, isCopy: true, first: m.first + l - 1, algebraicAt: -1}
	agg.stats.Level = make([]time.Duration, len(shapes)-l+1)
	if err := agg.build(merged, shapes[l-1:], unions, tm); err != nil {
		return err
	}
	m.agg = agg
	return nil
}

// SetOperator changes σ and β (an implicit step of another length).
func (m *MG) SetOperator(op Operator) {
	m.prob.Op = op
	for _, l := range m.levels {
		l.op.Scale(op.Sigma, op.Beta)
		l.sigma, l.beta = op.Sigma, op.Beta
	}
	if m.agg != nil {
		m.agg.SetOperator(op)
	}
	if m.alg != nil {
		m.alg.rescale = true
	}
}

// Layout is this rank's layout of the fine level (one ghost layer).
func (m *MG) Layout() decomp.Layout { return m.levels[0].lay }

// Field is this rank's fine-level iterate, ghosts included. It is a
// different slice after each Cycle: ask again.
func (m *MG) Field() []float64 { return m.levels[0].u }

// RHS is this rank's fine-level right-hand side, to be written before a
// cycle.
func (m *MG) RHS() []float64 { return m.levels[0].b }

// Stats are this rank's counters so far.
func (m *MG) Stats() Stats {
	st := m.stats
	st.Level = slices.Clone(st.Level)
	st.Ranks = slices.Clone(st.Ranks)
	if m.agg != nil {
		sub := m.agg.Stats()
		off := m.agg.first - m.first
		for i, d := range sub.Level {
			st.Level[off+i] += d
		}
		for i, r := range sub.Ranks[1:] { // its first level is a copy of one here
			st.Ranks[off+1+i] = r
		}
	}
	if m.alg != nil && m.c.Rank() == 0 {
		st.Algebraic = m.alg.Stats()
	}
	if m.agg != nil && st.Algebraic == nil {
		st.Algebraic = m.agg.Stats().Algebraic
	}
	return st
}

// HaloStats are this rank's halo exchanges on every level so far, the
// agglomerated levels it took part in included (the moves between them
// not).
func (m *MG) HaloStats() halo.Stats {
	var s halo.Stats
	add := func(ps halo.Stats) {
		s.Exchanges += ps.Exchanges
		s.Messages += ps.Messages
		s.Bytes += ps.Bytes
		s.Wait += ps.Wait
	}
	for _, l := range m.levels {
		add(l.faces.Stats())
		add(l.corners.Stats())
	}
	if m.agg != nil {
		add(m.agg.HaloStats())
	}
	return s
}

// smooth does the pre- or post-smoothing sweeps on level l.
func (m *MG) smooth(l *level, post bool, bc *boundary) error {
	w := m.pre
	if post {
		w = m.post
	}
	if m.opt.Smoother == RedBlack {
		return l.gaussSeidel(len(w), bc)
	}
	return l.jacobi(w, bc)
}

// weights are the Jacobi weights of n sweeps. D⁻¹A's eigenvalues lie in
// [0, 2]; those of the modes a grid twice as coarse cannot represent in
// [1/2, 2] in 2D and [1/3, 2] in 3D, where a single weight 2/(a+b) (4/5,
// 6/7) damps best. Chebyshev: the weights 1/x_k for the roots x_k of the
// degree-n Chebyshev polynomial mapped onto [a, 2], which minimise the
// largest amplification there (1/T_n((2+a)/(2−a))), the largest weight
// last, so that no intermediate iterate grows much. Its a reaches below
// the coarse grid's share of the spectrum (0.3 in 2D, 0.2 in 3D, measured
// best for V-cycles): the cell-centred coarse correction leaves the
// modes there only partly corrected.
func weights(opt Options, nd, n int) []float64 {
	a, b := 0.5, 2.0
	cheb := 0.3
	if nd == 3 {
		a, cheb = 1.0/3, 0.2
	}

	w := make([]float64, n)
	for k := range w {
		switch opt.Smoother {
		case Chebyshev:
			x := (b+cheb)/2 + float64((b-cheb)/2*math.Cos(math.Pi*float64(2*k+1)/float64(2*n)))
			w[k] = 1 / x
		default:
			w[k] = opt.Omega
			if w[k] == 0 {
				w[k] = 2 / (a + b)
			}
		}
	}
	return w
}

// Residual is the global max-norm of b − A·u on the fine level.
func (m *MG) Residual() (float64, error) {
	f := m.levels[0]
	if err := f.exchange(f.u, f.bc); err != nil {
		return 0, err
	}
	return m.globalMax(f.residualNorm(f.u))
}

// RHSNorm is the global max-norm of the residual of u = 0: b with the
// boundary values lifted into it, what the relative residual divides by.
func (m *MG) RHSNorm() (float64, error) {
	t0 := time.Now()
	defer func() { m.stats.Setup += time.Since(t0) }()
	f := m.levels[0]
	clear(f.tmp)
	if f.med != nil {
		// Held cells are known values: their flux into the free cells is
		// part of the right side (a heater from a zero start is not a
		// problem with nothing to solve).
		f.med.Hold(f.tmp)
	}
	if err := f.exchange(f.tmp, f.bc); err != nil {
		return 0, err
	}
	return m.globalMax(f.residualNorm(f.tmp))
}

// SetDataScale sets what a row's right side is measured against in the
// backward error (operator.Op.Backward): 0, each its own (a Poisson
// problem's sources and held values are the user's data cell by cell);
// ‖b‖∞, the whole right side's (an implicit step's is the previous state,
// whose far tails are not asked for digits of their own).
func (m *MG) SetDataScale(d float64) { m.data = d }

// SetSweeps sets the smoothing sweeps before and after each coarse
// correction of the cycles that follow (0: the smoother's default), on
// this MG and the ones below it: plain cycles that hand a solve to mgcg
// take its symmetric sweeps.
func (m *MG) SetSweeps(pre, post int) {
	nd := len(m.prob.Shape)
	dpre, dpost := DefaultSweeps(nd, m.opt.Smoother)
	if pre == 0 {
		pre = dpre
	}
	if post == 0 {
		post = dpost
	}
	m.opt.Pre, m.opt.Post = pre, post
	m.pre, m.post = weights(m.opt, nd, pre), weights(m.opt, nd, post)
	if m.agg != nil {
		m.agg.SetSweeps(pre, post)
	}
}

// Algebraic reports whether an algebraic cycle takes part in mgcg's
// preconditioner — the whole of it, or the levels from a coarse one down
// (the coarse grids judged not to follow the medium from there): plain
// cycles of the grid levels do not converge there.
func (m *MG) Algebraic() bool { return m.algebraicAt >= 0 }

// SetCycle sets the kind of the cycles that follow and returns the kind
// they were.
func (m *MG) SetCycle(c Cycle) (was Cycle) {
	was, m.opt.Cycle = m.opt.Cycle, c
	return was
}

// SetConstant sets the prolongation of the cycles that follow, here and
// on the ranks below: piecewise constant (constant true, the averaging
// restriction's transpose: a symmetric cycle, mgcg's preconditioner) or
// linear (plain cycles).
func (m *MG) SetConstant(constant bool) {
	m.opt.Constant = constant
	if m.agg != nil {
		m.agg.SetConstant(constant)
	}
}

func (m *MG) globalMax(x float64) (float64, error) {
	out := []float64{0}
	if err := m.c.Allreduce(comm.Max, []float64{x}, out); err != nil {
		return 0, err
	}
	return out[0], nil
}

// Cycle does one V-cycle on the fine level, keeps the mean of a singular
// problem's u at zero, and returns the global max-norm of the residual.
func (m *MG) Cycle() (float64, error) {
	if err := m.vcycle(0, true, m.opt.Cycle); err != nil {
		return 0, err
	}
	m.stats.Cycles++
	return m.finishCycle()
}

// FMG does one full-multigrid cycle from b (u's first guess is ignored):
// the problem restricted to every level, solved on the coarsest, and each
// solution interpolated to the next finer level and improved by one
// V-cycle there. It returns the residual as Cycle does. In media the
// coarse levels are error equations over the free cells (held cells are
// known values, not coarse unknowns), so the coarse problems are those of
// the residual of u⁰ (u zero but its held cells): full multigrid solves
// A·e = b − A·u⁰ below the fine level, and the fine level starts from
// u⁰ + e.
func (m *MG) FMG() (float64, error) {
	// Full multigrid improves each level's interpolated solution by one
	// V-cycle, whatever the cycles after it (a W-cycle there measured 30%
	// dearer for the same error).
	m.swapSweeps()
	var err error
	if m.levels[0].med != nil {
		err = m.fmgMedia()
	} else {
		err = m.fmg(0, true)
	}
	m.swapSweeps()
	if err != nil {
		return 0, err
	}
	m.stats.Cycles++
	return m.finishCycle()
}

// fmgMedia is FMG's cycle in media: u⁰, its residual, full multigrid of
// the residual's error equation below, and a V-cycle from u⁰ + e.
func (m *MG) fmgMedia() error {
	f := m.levels[0]
	if f.fixedVal == nil {
		f.holdFixed(true) // the first sight of the values kept
	}
	clear(f.u)
	f.holdFixed(true)
	if m.bottom(0) || m.solvedBelow {
		return m.vcycle(0, true, V)
	}
	if err := f.exchange(f.u, f.bc); err != nil {
		return err
	}
	f.residual()
	if err := m.fmgBelow(0, false, f.tmp); err != nil {
		return err
	}
	f.addTmp()
	f.holdFixed(true)
	return m.vcycle(0, true, V)
}

// swapSweeps exchanges the cycles' sweeps with full multigrid's, on this
// MG and the ones below it.
func (m *MG) swapSweeps() {
	m.pre, m.fmgPre = m.fmgPre, m.pre
	m.post, m.fmgPost = m.fmgPost, m.post
	if m.agg != nil {
		m.agg.swapSweeps()
	}
}

func (m *MG) finishCycle() (float64, error) {
	if m.singular {
		if err := m.removeMean(); err != nil {
			return 0, err
		}
	}
	return m.measure()
}

// removeMean subtracts the exact mean of u (exactsum: the same bits on
// every split).
func (m *MG) removeMean() error {
	f := m.levels[0]
	var acc exactsum.Acc
	for _, r := range f.rows {
		acc.AddSlice(f.u[r.Start : r.Start+r.N])
	}
	sum, err := exactsum.Sum(m.c, &acc)
	if err != nil {
		return err
	}
	mean := sum / float64(f.cells())
	for _, r := range f.rows {
		u := f.u[r.Start : r.Start+r.N]
		for j := range u {
			u[j] -= mean
		}
	}
	return nil
}

// Compatible checks that a singular problem's right-hand side sums to zero
// (relative to the sum of its magnitudes), without which it has no
// solution: the exact sums, so every split decides alike.
func (m *MG) Compatible() error {
	if !m.singular {
		return nil
	}
	f := m.levels[0]
	var sum, abs exactsum.Acc
	for _, r := range f.rows {
		for _, x := range f.b[r.Start : r.Start+r.N] {
			sum.Add(x)
			abs.Add(math.Abs(x))
		}
	}
	// The faces' fluxes belong to the right-hand side: a Neumann ghost
	// u + B puts c_f·B into its cell's row (c_f the face's coefficient).
	c := make([]int, len(f.shape))
	for _, g := range f.bc.faces {
		if g.Kind != operator.Affine {
			continue
		}
		j := 0
		for _, r := range g.Rows {
			for i := r.Start; i < r.Start+r.N; i, j = i+1, j+1 {
				mirror := i + g.Delta
				f.lay.Coords(mirror, c)
				inside := true
				for a, x := range c {
					inside = inside && x >= 0 && x < f.lay.N[a]
				}
				if !inside {
					continue // a corner ghost: no row reads it
				}
				coef := m.prob.Op.Beta / (f.h[g.Axis] * f.h[g.Axis])
				if f.med != nil {
					coef = float64(m.prob.Op.Beta * f.med.B[g.Axis][min(i, mirror)])
				}
				x := float64(coef * g.B[j])
				sum.Add(x)
				abs.Add(math.Abs(x))
			}
		}
	}
	s, err := exactsum.Sum(m.c, &sum)
	if err != nil {
		return err
	}
	a, err := exactsum.Sum(m.c, &abs)
	if err != nil {
		return err
	}
	if math.Abs(s) > 1e-10*a {
		return &IncompatibleError{Mean: s / float64(f.cells()), Relative: math.Abs(s) / a}
	}
	return nil
}

// IncompatibleError is a singular problem whose source does not integrate
// to zero.
type IncompatibleError struct {
	Mean     float64 // the mean of the right-hand side
	Relative float64 // |Σ b| / Σ |b|
}

func (e *IncompatibleError) Error() string {
	return fmt.Sprintf("with no Dirichlet or Robin face u is fixed only up to a constant, and then the source must balance the fluxes through the faces (∫f dV = ∮k∂u/∂n dA); the mean of their difference is %.6g (relative %.3g)", e.Mean, e.Relative)
}

// bcOf is level i's boundary condition in a cycle whose top is level top:
// the problem's values there, homogeneous on the error equations below.
func bcOf(l *level, top bool) *boundary {
	if top {
		return l.bc
	}
	return l.bc0
}

// vcycle does one cycle of kind on level i; top says it is the problem's
// own level (boundary values) rather than an error equation (homogeneous).
func (m *MG) vcycle(i int, top bool, kind Cycle) error {
	l := m.levels[i]
	bc := bcOf(l, top)
	if m.bottom(i) {
		t0 := time.Now()
		err := l.bottomSolve(bc, m.singular)
		m.stats.Level[i] += time.Since(t0)
		return err
	}
	if m.solvedBelow {
		return m.solveBelow(top)
	}
	t0 := time.Now()
	if m.alg != nil && i == m.alg.at && i > 0 {
		// The levels from here down solved algebraically.
		err := m.alg.solveLevel(m, bc)
		m.stats.Level[i] += time.Since(t0)
		return err
	}
	if l.med != nil && top && l.fixedVal == nil {
		l.holdFixed(true) // the first sight of the values kept
	}
	if err := m.smooth(l, false, bc); err != nil {
		return err
	}
	if err := l.exchange(l.u, bc); err != nil {
		return err
	}
	l.residual()
	m.stats.Level[i] += time.Since(t0)
	if err := m.correct(i, kind); err != nil {
		return err
	}
	t1 := time.Now()
	if m.gathered && i == len(m.levels)-1 {
		l.addTmp() // the correction came from rank 0 into tmp
	}
	if l.med != nil {
		l.holdFixed(top)
	}
	err := m.smooth(l, true, bc)
	m.stats.Level[i] += time.Since(t1)
	return err
}

// solveBelow hands the one level of a hierarchy that has no other to rank
// 0 (its u and b), which solves it whole, and takes the solution back.
func (m *MG) solveBelow(top bool) error {
	l := m.levels[0]
	var u, b []float64
	if m.agg != nil {
		u, b = m.agg.levels[0].u, m.agg.levels[0].b
	}
	if err := m.gat.gather(l.u, u); err != nil {
		return err
	}
	if err := m.gat.gather(l.b, b); err != nil {
		return err
	}
	if m.agg != nil {
		if err := m.agg.vcycle(0, top, V); err != nil {
			return err
		}
	}
	return m.gat.scatter(u, l.u)
}

// bottom reports whether level i is the coarsest of the whole hierarchy.
func (m *MG) bottom(i int) bool { return i == len(m.levels)-1 && !m.gathered }

// correct adds to level i's u (a gathered copy: sets its tmp to) the
// coarse-grid correction of its residual (in tmp): restricted, solved by the
// cycles kind runs on the next level (zero first guess), interpolated back.
func (m *MG) correct(i int, kind Cycle) error {
	l := m.levels[i]
	if i == len(m.levels)-1 {
		// Through the ranks below: the residual handed to their copy of
		// this level, the correction computed there and handed back into
		// tmp.
		var tmp []float64
		if m.agg != nil {
			tmp = m.agg.levels[0].tmp
		}
		if err := m.gat.gather(l.tmp, tmp); err != nil {
			return err
		}
		if m.agg != nil {
			if err := m.agg.correct(0, kind); err != nil {
				return err
			}
		}
		return m.gat.scatter(tmp, l.tmp)
	}
	c := m.levels[i+1]
	t0 := time.Now()
	if err := l.restrictTo(c, l.tmp); err != nil {
		return err
	}
	clear(c.u)
	m.stats.Level[i] += time.Since(t0)
	// The K-cycle's two visits a level pay where a level has a quarter of
	// the cells of the one above or fewer (every axis halved in 2D, two or
	// three in 3D); where only one axis was halved they would double the
	// work of every level below for each such level (a 4 mm stack of
	// 16×64×64 cells, halved along z first: the 64-cell bottom level
	// solved 32 times an iteration).
	if c.med != nil && c.mixed && !m.bottom(i+1) && l.cells() >= 4*c.cells() {
		if err := m.kcycle(i + 1); err != nil {
			return err
		}
	} else {
		for _, k := range kind.visits() {
			if err := m.vcycle(i+1, false, k); err != nil {
				return err
			}
		}
	}
	t1 := time.Now()
	if err := c.exchangeCorners(c.u, c.bc0); err != nil {
		return err
	}
	// Level i adds the correction at once; a copy of a level of the ranks
	// above leaves it in tmp, to be handed back and added there.
	if m.isCopy && i == 0 {
		l.prolong(l.tmp, c.u, !m.opt.Constant, false)
	} else {
		l.prolong(l.u, c.u, !m.opt.Constant, true)
	}
	m.stats.Level[i] += time.Since(t1)
	return nil
}

// fmg solves level i's own problem (its b; boundary values where top, else
// homogeneous ones) by full multigrid: restrict b, solve the coarser problem
// the same way, interpolate its solution, and do one V-cycle.
func (m *MG) fmg(i int, top bool) error {
	l := m.levels[i]
	if m.bottom(i) || m.solvedBelow {
		clear(l.u)
		return m.vcycle(i, top, V) // the bottom solve
	}
	if err := m.fmgBelow(i, top, l.b); err != nil {
		return err
	}
	l.u, l.tmp = l.tmp, l.u
	return m.vcycle(i, top, V) // full multigrid improves each level by one V-cycle
}

// fmgBelow sets level i's tmp to the solution of the next coarser level's
// problem, solved by full multigrid and interpolated: its b restricted from
// src (a field of level i), or, below the last level of these ranks, src
// handed to the ranks below and the interpolated solution handed back.
func (m *MG) fmgBelow(i int, top bool, src []float64) error {
	l := m.levels[i]
	if i == len(m.levels)-1 {
		var b, tmp []float64
		if m.agg != nil {
			b, tmp = m.agg.levels[0].b, m.agg.levels[0].tmp
		}
		if err := m.gat.gather(src, b); err != nil {
			return err
		}
		if m.agg != nil {
			if err := m.agg.fmgBelow(0, top, b); err != nil {
				return err
			}
		}
		return m.gat.scatter(tmp, l.tmp)
	}
	c := m.levels[i+1]
	t0 := time.Now()
	if err := l.restrictTo(c, src); err != nil {
		return err
	}
	m.stats.Level[i] += time.Since(t0)
	if err := m.fmg(i+1, top); err != nil {
		return err
	}
	t1 := time.Now()
	if err := c.exchangeCorners(c.u, bcOf(c, top)); err != nil {
		return err
	}
	l.down.Prolong(l.tmp, c.u, true, false)
	m.stats.Level[i] += time.Since(t1)
	return nil
}

// ErrNotConverged is returned by Solve when the cycle cap is reached.
var ErrNotConverged = errors.New("multigrid: not converged")

// StepRHS sets the fine level's right-hand side to the known part of an
// implicit time step, b = ρc·u + c·∇·(k∇u) + scale·src (src may be nil;
// operator.Op.StepRHS), from the state u (a field of the fine level's
// layout: Field, or a copy of it, whose ghosts it fills) with the
// problem's boundary values. Crank–Nicolson has c = (1−θ)·dt·α; backward
// Euler c = 0.
func (m *MG) StepRHS(u []float64, c float64, src []float64, scale float64) error {
	f := m.levels[0]
	if err := f.exchange(u, f.bc); err != nil {
		return err
	}
	f.op.StepRHS(f.b, u, src, c, scale)
	return nil
}

// SetField makes x (a field of the fine level's layout) the fine level's
// u, the cycles' iterate, and returns the field it was: a caller keeps a
// solution by taking the buffer instead of copying it.
func (m *MG) SetField(x []float64) []float64 {
	f := m.levels[0]
	old := f.u
	f.u = x[:len(old)]
	return old
}

// take is a zeroed field of n values: the smallest spare that holds n,
// cleared, else a new one. The setup's scratch is already in memory;
// fresh memory is not (on a VM, 2026-12-06: about 20 ms to first touch 8
// MB, even in huge pages), and at 1024² a media run's setup and first
// mgcg iteration touched some 30 fine-level fields.
func (m *MG) take(n int) []float64 {
	best := -1
	for i, b := range m.spare {
		if cap(b) >= n && (best < 0 || cap(b) < cap(m.spare[best])) {
			best = i
		}
	}
	if best < 0 {
		return hugemem.Floats(n)
	}
	b := m.spare[best][:n]
	m.spare = append(m.spare[:best], m.spare[best+1:]...)
	clear(b)
	return b
}

// give makes fields the setup needs no more spare (take).
func (m *MG) give(fields ...[]float64) { m.spare = append(m.spare, fields...) }
