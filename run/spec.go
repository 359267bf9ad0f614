package run

import (
	"math"
	"runtime"
	"slices"

	"heat/internal/cpulist"
	"heat/io/config"
	"heat/multigrid"
	"heat/plan"
	"heat/solver"
)

// specOf turns a validated config into the solver's description of the run.
func specOf(cfg *config.Config, w *World) solver.Spec {
	nd := cfg.NDim()
	s := solver.Spec{
		Shape:      cfg.Grid.Shape,
		Length:     cfg.Grid.Length,
		Ghost:      cfg.Grid.Ghost,
		Alpha:      cfg.Equation.Alpha,
		DT:         cfg.TimeStep(),
		Steps:      cfg.Run.Steps,
		Tolerance:  cfg.Run.Tolerance,
		CheckEvery: cfg.Run.CheckEvery,
		Faces:      make([][2]solver.Face, nd),
		Initial:    profileOf(cfg, cfg.Initial),
		Source:     profileOf(cfg, cfg.Source),
		Dims:       cfg.Parallel.Dims,
		Threads:    threadsOf(cfg, w),
	}
	if cfg.Equation.Kind == "poisson" {
		s.Equation = solver.Poisson
	}
	s.Scheme = solver.Scheme(slices.Index(plan.Schemes, cfg.Equation.Scheme))
	if cfg.EndsAtTEnd() {
		s.TEnd = cfg.Run.TEnd // else run.steps came first: plain steps, short of t_end
	}
	s.Multigrid = cfg.Equation.Solver == "multigrid" || cfg.Equation.Solver == "mgcg"
	s.CG = cfg.Equation.Solver == "mgcg"
	mg := cfg.Multigrid
	s.MG = multigrid.Options{
		Smoother: multigrid.Smoother(slices.Index(plan.Smoothers, mg.Smoother)),
		// The sweeps a user chose are full multigrid's too.
		Pre: mg.Pre, Post: mg.Post, FMGPre: mg.Pre, FMGPost: mg.Post, Levels: mg.Levels,
		Constant:    mg.Interpolation == "constant",
		GatherBelow: mg.AgglomerateBelow, GatherCells: mg.GatherCells,
	}
	switch mg.Cycle {
	case "auto":
		s.MG.Cycle = multigrid.F
		if s.Scheme == solver.SDIRK4 && nd == 2 && multigridOnly(cfg) {
			// SDIRK4's stages start from extrapolations whose error is
			// mostly oscillatory: more smoothing pays, F's second coarse
			// visit does not. The sine mode to 0.02 by steps of rtol
			// 1e-5 at 1024²: F(3,1) 59 cycles in 0.46–0.51 s, V(4,3) 39
			// in 0.34 s, V(4,4) 36 in 0.33 s; at 256² to 0.1 (rtol 1e-4)
			// 97 in 0.063–0.068 s against V(4,3)'s 95 in 0.054. In 3D
			// F(4,4) and V(4,4) took the same time (128³). The last
			// stage by F (Spec.EndF): its residual is the balance's.
			s.MG.Cycle, s.EndF = multigrid.V, true
			if mg.Pre == 0 && mg.Post == 0 {
				s.MG.Pre, s.MG.Post = 4, 3
			}
		}
	case "w":
		s.MG.Cycle = multigrid.W
	case "f":
		s.MG.Cycle = multigrid.F
	}
	s.FMG = mg.Cycle == "fmg"
	s.MaxCycles = mg.MaxCycles
	// The faces: setFaces (faces.go), which may read tables, after this.
	return s
}

// threadsOf is the worker count per rank: as configured, or the cores this
// process may run on shared among the ranks, at least one.
func threadsOf(cfg *config.Config, w *World) int {
	if cfg.Parallel.Threads > 0 {
		return cfg.Parallel.Threads
	}
	if w != nil {
		return threadsPerRank(runtime.NumCPU(), cpulist.Online(), w.LocalRanks)
	}
	return max(1, runtime.NumCPU()/cfg.Parallel.Ranks)
}

func profileOf(cfg *config.Config, p config.Profile) solver.Profile {
	switch p.Kind {
	case "constant":
		return solver.Constant(p.Value)
	case "hotspot":
		return solver.Hotspot(p.Center, p.Radius, p.Value, p.Background)
	case "gaussian":
		return solver.Gaussian(p.Center, p.Radius, p.Value, p.Background)
	case "sine":
		return solver.Sine(p.Mode, cfg.Grid.Length, p.Value, p.Background)
	case "random":
		return solver.Random(cfg.Grid.Shape, p.Seed, p.Value, p.Background)
	}
	return nil // "none"
}

// exactOf is the problem's exact solution at time t where one is known, else
// nil: a sine mode on zero Dirichlet faces, as the source of a Poisson
// problem (u = −f/(π²Σ(m_a/L_a)²)) or as the initial field of a heat run
// without a source (decaying as exp(−α·π²Σ(m_a/L_a)²·t)).
func exactOf(cfg *config.Config, t float64) solver.Profile {
	if !cfg.Media().Uniform() {
		return nil // the sine modes are the uniform medium's
	}
	nd := cfg.NDim()
	for a := range nd {
		for side := range 2 {
			if kind, value := cfg.FaceKind(a, side); kind != config.Dirichlet || value != (config.Value{}) {
				return nil
			}
		}
	}
	p := cfg.Initial
	if cfg.Equation.Kind == config.Poisson {
		p = cfg.Source
	} else if cfg.Source.Kind != "none" {
		return nil
	}
	if p.Kind != "sine" || p.Background != 0 {
		return nil
	}
	k2 := 0.0
	for a, m := range p.Mode {
		k := float64(m) * math.Pi / cfg.Grid.Length[a]
		k2 += float64(k * k)
	}
	scale := -1 / k2
	if cfg.Equation.Kind == config.Heat {
		scale = math.Exp(-cfg.Equation.Alpha * k2 * t)
	}
	return solver.Sine(p.Mode, cfg.Grid.Length, scale*p.Value, 0)
}

// multigridOnly reports whether the plan solves the run's steps by plain
// multigrid cycles (not mgcg, whose preconditioner must be symmetric).
func multigridOnly(cfg *config.Config) bool {
	p, refused := plan.Decide(cfg.Case())
	return refused == nil && p.Method == plan.Multigrid
}
