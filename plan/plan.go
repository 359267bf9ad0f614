// Package plan decides what a run solves with — the method, the ghost
// width it allows, whether an explicit stability limit binds its time
// step — and refuses the combinations nothing is built for. Config
// validation and the solver both ask Decide, so they cannot disagree, and
// neither imports the other's packages for it. It also holds what both
// need to name and size the methods: the schemes', smoothers' and cycles'
// names as configs give them, the steps to a time, and the shapes of the
// multigrid hierarchy.
package plan

import (
	"fmt"
	"math"
	"slices"
)

// Schemes are the heat time schemes' names, as configs give them.
var Schemes = []string{"explicit", "backward-euler", "crank-nicolson", "sdirk4"}

// Smoothers are the multigrid smoothers' names.
var Smoothers = []string{"chebyshev", "jacobi", "rbgs"}

// Cycles are the multigrid cycles' names (full multigrid is a first cycle,
// asked for apart).
var Cycles = []string{"v", "w", "f"}

// Solvers are the Poisson solvers' names (equation.solver).
var Solvers = []string{"multigrid", "mgcg", "jacobi"}

// Method is how a run advances.
type Method int

const (
	// Explicit is explicit heat steps.
	Explicit Method = iota
	// Jacobi is weighted Jacobi sweeps of a Poisson problem.
	Jacobi
	// Multigrid is multigrid cycles (Poisson, or each implicit step).
	Multigrid
	// MGCG is conjugate gradients preconditioned by a multigrid cycle.
	MGCG
)

// Methods are the methods' names, as the run report gives them.
var Methods = []string{"explicit", "jacobi", "multigrid", "mgcg"}

func (m Method) String() string { return Methods[m] }

// Case is what decides the plan: the equation, its scheme and solver as
// the config names them, and what the run holds.
type Case struct {
	Poisson bool
	Scheme  string // heat: one of Schemes
	Solver  string // one of Solvers ("" is multigrid)
	Media   bool   // heterogeneous media (maps, materials)
	Ghost   int    // grid.ghost
	// PerCellFaces: a face whose ghost is written cell by cell (Robin, a
	// flux, a face coefficient, a value that varies); SourceInTime: a
	// source that changes with t. Temporal blocking reflects neither.
	PerCellFaces, SourceInTime bool
	Smoother                   string // multigrid.smoother ("" is the default)
	FMG                        bool   // poisson: a full-multigrid first cycle
}

// Plan is what runs.
type Plan struct {
	Method Method
	// MaxGhost is the widest ghost layer the method allows: 1, or 0 for
	// no bound of the plan's (explicit uniform steps: temporal blocking).
	MaxGhost int
	// StabilityLimit: the step is explicit, and dt must be within the
	// stability limit (the media's or the uniform grid's).
	StabilityLimit bool
	// KrylovOnStall: plain multigrid cycles (in media) that hand the
	// solve to mgcg, and the run's later solves too, once they reduce the
	// backward error too slowly for mgcg not to be faster (StallFactor).
	KrylovOnStall bool
}

// StallFactor is the mean reduction of the componentwise backward error a
// plain cycle (geometric, over the cycles after the first) above which
// cycles in media give way to mgcg. Measured at 1024² (2 threads): an mgcg
// iteration (a symmetric V(4,4)) costs about 2.1 plain F(3,1) cycles and
// gains about 0.05 on a 10⁶ inclusion (9 iterations to 1e-12), as much
// as 2.1 cycles of 0.23; on smaller grids an iteration costs fewer cycles.
// The inclusion's cycles gain 0.07–0.2 each (13 cycles in 0.19 s against
// mgcg's 0.27–0.32 s) and go on; a 10⁶ checkerboard's make the residual
// larger and hand over after two.
const StallFactor = 0.2

// AlgebraicFactor is the mean reduction of the componentwise backward
// error an mgcg iteration preconditioned by the grid levels' K-cycle
// (over the second and third of a solve) above which the solve goes on
// preconditioned algebraically, where the problem fits
// (multigrid.MG.ToAlgebraic).
const AlgebraicFactor = 0.3

// Refusal is a combination that nothing is built for, with the config key
// to change and why.
type Refusal struct {
	Key, Reason string
}

func (r *Refusal) Error() string { return r.Key + ": " + r.Reason }

// Decide returns the plan of a case, or the refusal of its first
// combination that nothing is built for.
func Decide(c Case) (Plan, *Refusal) {
	implicit := !c.Poisson && c.Scheme != "" && c.Scheme != Schemes[0]
	var p Plan
	switch {
	case !c.Poisson && c.Solver == "jacobi" && implicit:
		return p, &Refusal{"equation.solver", fmt.Sprintf("\"jacobi\" solves poisson problems only; %s heat steps are solved by multigrid", c.Scheme)}
	case !c.Poisson && c.Solver == "mgcg" && !implicit:
		return p, &Refusal{"equation.solver", "\"mgcg\" solves poisson problems and implicit heat steps (backward-euler, crank-nicolson, sdirk4); explicit steps solve nothing"}
	case !c.Poisson && !implicit:
		p.Method, p.StabilityLimit = Explicit, true
	case c.Poisson && c.Solver == "jacobi":
		p.Method = Jacobi
	case c.Solver == "mgcg" || (c.Media && c.FMG):
		// A full multigrid cycle's solve in media goes on by mgcg.
		p.Method = MGCG
	case c.Media:
		// In media plain cycles over-correct where the medium jumps
		// inside a coarse cell: the cycles where they converge (a medium
		// whose jumps the coarse grids follow), mgcg where not.
		p.Method, p.KrylovOnStall = Multigrid, true
	default:
		p.Method = Multigrid
	}
	mg := p.Method == Multigrid || p.Method == MGCG
	if mg && c.Media && c.Smoother == "rbgs" {
		return p, &Refusal{"multigrid.smoother", "\"rbgs\" is not built for heterogeneous media ([maps], [[material]]); use chebyshev or jacobi"}
	}
	// Deeper ghosts are temporal blocking of uniform explicit steps: every
	// other method, and anything written cell by cell into the ghosts,
	// takes one layer.
	why := ""
	switch {
	case c.Media:
		why = "heterogeneous media ([maps], [[material]]) need one ghost layer; deeper ghosts are temporal blocking of uniform explicit steps"
	case mg:
		why = "multigrid needs one ghost layer; deeper ghosts are temporal blocking of explicit steps"
	case c.PerCellFaces:
		why = "a Robin face, a flux, a face coefficient or a varying face value needs one ghost layer: temporal blocking reflects constant values only"
	case c.SourceInTime:
		why = "a source that varies in time needs one ghost layer: temporal blocking takes a fixed source"
	}
	if why != "" {
		p.MaxGhost = 1
		if c.Ghost > 1 {
			return p, &Refusal{"grid.ghost", fmt.Sprintf("must be 1, not %d: %s", c.Ghost, why)}
		}
	}
	return p, nil
}

// StepsTo is the number of steps of dt that reach t, the last one
// shortened (a step within 1e-9 of the end counts as reaching it).
func StepsTo(t, dt float64) int {
	return int(math.Ceil(t/dt - 1e-9))
}

// MaxBottomCells bounds the coarsest multigrid level, which conjugate
// gradients solve on one rank every cycle: 65536 cells (256²) take ~50 ms;
// a grid that cannot be coarsened further (odd counts) would be solved by
// CG alone.
const MaxBottomCells = 1 << 16

// Hierarchy is the shapes of the multigrid levels of a grid, finest
// first: each level halves the axes whose cells are the finest (within a
// factor 1.25) and can be halved (an even count of at least 8), until none
// can; at most levels entries (0: no limit).
func Hierarchy(shape []int, length []float64, levels int) [][]int {
	return HierarchyOf(shape, length, levels, false)
}

// HierarchyOf is Hierarchy, and in media (media true) it goes on where the
// finest axes can be halved no more (too few cells, or odd) by halving the
// others, coarse as they are: a 4 mm stack of 16×64×64 cells stopped at
// 4×16×16, and its bottom solves, which the K-cycle makes many an
// iteration, took two thirds of the run (to 4×4×4: a tenth). The uniform
// problem keeps its levels (and its bits).
func HierarchyOf(shape []int, length []float64, levels int, media bool) [][]int {
	out := [][]int{slices.Clone(shape)}
	for levels == 0 || len(out) < levels {
		next, ok := coarser(out[len(out)-1], length, media)
		if !ok {
			break
		}
		out = append(out, next)
	}
	return out
}

// coarser is the next level's shape, and false when no axis can be halved.
func coarser(shape []int, length []float64, media bool) ([]int, bool) {
	hmin := math.Inf(1)
	for a, n := range shape {
		hmin = min(hmin, length[a]/float64(n))
	}
	next := slices.Clone(shape)
	ok := false
	for a, n := range shape {
		if n%2 == 0 && n >= 8 && length[a]/float64(n) <= 1.25*hmin {
			next[a] = n / 2
			ok = true
		}
	}
	if !ok && media {
		for a, n := range shape {
			if n%2 == 0 && n >= 8 {
				next[a] = n / 2
				ok = true
			}
		}
	}
	return next, ok
}
