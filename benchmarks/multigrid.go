package benchmarks

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"heat/comm"
	"heat/comm/local"
	"heat/multigrid"
	"heat/operator"
	"heat/plan"
	"heat/solver"
)

// The multigrid study measures solves in work units, as HPGMG does: 1 WU is
// one explicit heat step of the same grid on the same ranks and threads,
// timed in the same process just before, so the figure does not drift with
// the machine.

// MGOptions choose the multigrid study's points.
type MGOptions struct {
	Dims      int
	Sizes     []int // cells per axis
	Ranks     []int // in-process ranks
	Threads   int   // per rank
	Tolerance float64
	MG        multigrid.Options
	// JacobiMax is the largest size also solved by weighted Jacobi sweeps
	// (their count grows with n²), 0 for none.
	JacobiMax int
	// Implicit also times a Crank–Nicolson run to a final time against
	// the explicit run at the same accuracy, at the smallest size.
	Implicit bool
	// PredictMax > 1 prints the α–β model of a cycle at the largest size on
	// 1, 2, 4, … PredictMax ranks, fitted to the one-rank measurement, for
	// the in-process transport (measured by ping-pong) and for Target when
	// it is set.
	PredictMax int
	Target     *Network
}

// MGPoint is one multigrid measurement.
type MGPoint struct {
	Dims, N, Ranks, Threads int
	StepS                   float64 // one explicit step: 1 WU
	SetupS                  float64 // the multigrid's setup: its levels, plans and fields, and ‖b‖
	FieldsS                 float64 // the rest of solver.New: the problem's fields evaluated at the cell centres
	SolveS                  float64 // zero guess to the tolerance
	Cycles                  int
	Factor                  float64 // geometric mean residual reduction per cycle
	Backward                float64 // the backward error reached (what the tolerance bounds)
	Stalled                 bool
	Error                   float64 // max error against the exact solution
	CoarseShare             float64 // of rank 0's level time, the levels below the finest
	Gathered                int     // levels held by rank 0 alone
	FMGS                    float64 // one FMG cycle
	FMGError                float64
	JacobiS                 float64 // weighted Jacobi to max|Δu| < 3e-3·h⁴ (0: not run)
	JacobiSweeps            int
	JacobiError             float64
}

// WU is the solve's cost in work units; SetupWU the multigrid's setup's,
// FieldsWU the problem's evaluation's; FMGWU one FMG cycle's.
func (p MGPoint) WU() float64       { return p.SolveS / p.StepS }
func (p MGPoint) SetupWU() float64  { return p.SetupS / p.StepS }
func (p MGPoint) FieldsWU() float64 { return p.FieldsS / p.StepS }
func (p MGPoint) FMGWU() float64    { return p.FMGS / p.StepS }

// poissonSpec is −∇²u = 2π²·… with u = Π sin(π x_a) on zero Dirichlet faces
// (the example problem), and its exact solution.
func poissonSpec(dims, n, threads int) (solver.Spec, solver.Profile) {
	shape := slices.Repeat([]int{n}, dims)
	length := slices.Repeat([]float64{1}, dims)
	mode := slices.Repeat([]int{1}, dims)
	k2 := float64(dims) * math.Pi * math.Pi
	s := solver.Spec{Shape: shape, Length: length, Ghost: 1, Equation: solver.Poisson, Multigrid: true,
		Faces: make([][2]solver.Face, dims), Initial: solver.Constant(0), Source: solver.Sine(mode, length, -k2, 0),
		Threads: threads, CheckEvery: 1, Steps: 100}
	return s, solver.Sine(mode, length, 1, 0)
}

// timeExplicit is the best of three timings of an explicit heat step of
// spec's grid (steps of them each).
func timeExplicit(spec solver.Spec, ranks, steps int) (float64, error) {
	h := spec
	h.Equation, h.Multigrid, h.Source = solver.Heat, false, nil
	h.Initial = solver.Random(h.Shape, 1, 1, 0)
	h.Alpha = 1
	h.DT = 0.5 * operator.NewUniform(1, h.Spacing()).StableDT()
	h.Steps, h.CheckEvery = 1<<40, 1<<40
	best := math.Inf(1)
	err := local.Run(ranks, func(c comm.Comm) error {
		s, err := solver.New(c, h)
		if err != nil {
			return err
		}
		defer s.Close()
		if err := s.RunTo(context.Background(), 2); err != nil { // warm up
			return err
		}
		for range 3 {
			if err := c.Barrier(); err != nil {
				return err
			}
			t0 := time.Now()
			if err := s.RunTo(context.Background(), s.Step()+steps); err != nil {
				return err
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			if c.Rank() == 0 {
				best = min(best, time.Since(t0).Seconds()/float64(steps))
			}
		}
		return nil
	})
	return best, err
}

// solveRun is one solve's outcome on rank 0.
type solveRun struct {
	setup, wall float64 // solver.New (hierarchy and problem), then Run
	info        solver.SolverInfo
	steps       int
	stalled     bool
	residual    float64 // the backward error reached
	err         float64 // max error against the exact solution
}

// solveOnce runs spec from a fresh solver and returns rank 0's view.
func solveOnce(spec solver.Spec, ranks int, exact solver.Profile) (out solveRun, err error) {
	err = local.Run(ranks, func(c comm.Comm) error {
		if err := c.Barrier(); err != nil {
			return err
		}
		t0 := time.Now()
		s, err := solver.New(c, spec)
		if err != nil {
			return err
		}
		defer s.Close()
		if err := c.Barrier(); err != nil {
			return err
		}
		t1 := time.Now()
		if err := s.Run(context.Background()); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		t2 := time.Now()
		e := 0.0
		if exact != nil {
			if e, err = s.MaxError(exact); err != nil {
				return err
			}
		}
		if c.Rank() == 0 {
			out = solveRun{setup: t1.Sub(t0).Seconds(), wall: t2.Sub(t1).Seconds(), info: s.Info(), steps: s.Step(),
				stalled: s.Stalled(), residual: s.Info().ComponentError, err: e}
		}
		return nil
	})
	return
}

// MultigridStudy measures every point and writes a table to w.
func MultigridStudy(w io.Writer, o MGOptions) ([]MGPoint, error) {
	var pts []MGPoint
	fmt.Fprintf(w, "multigrid: %dD Poisson, −∇²u = f with u = Π sin(πx), zero Dirichlet faces, zero first guess, tolerance %g; %s smoother, %s-cycles; kernel %s\n",
		o.Dims, o.Tolerance, o.MG.Smoother, o.MG.Cycle, solver.KernelName())
	fmt.Fprintf(w, "WU = one explicit heat step of the same grid on the same ranks and threads, timed in this process\n\n")
	fmt.Fprintf(w, "%6s %5s %7s %9s %9s %6s %7s %9s %7s %8s %8s %8s %7s %7s %8s %9s %8s\n",
		"n", "ranks", "threads", "step_ms", "solve_ms", "cycles", "factor", "backward", "WU", "setupWU", "totalWU", "fieldsWU", "coarse", "FMG_WU", "FMG/err", "err", "jacobi×")
	for _, n := range o.Sizes {
		for _, ranks := range o.Ranks {
			spec, exact := poissonSpec(o.Dims, n, o.Threads)
			spec.Tolerance, spec.MG = o.Tolerance, o.MG
			p := MGPoint{Dims: o.Dims, N: n, Ranks: ranks, Threads: o.Threads}
			cells := math.Pow(float64(n), float64(o.Dims))
			stepReps := max(3, int(2e7/cells))
			var err error
			if p.StepS, err = timeExplicit(spec, ranks, stepReps); err != nil {
				return pts, err
			}
			// The solve: best of three fresh solves.
			p.SolveS = math.Inf(1)
			for range 3 {
				r, err := solveOnce(spec, ranks, exact)
				if err != nil {
					return pts, err
				}
				if r.wall < p.SolveS {
					p.SolveS, p.Cycles, p.Stalled, p.Backward, p.Error = r.wall, r.steps, r.stalled, r.residual, r.err
					p.SetupS = r.info.MG.Setup.Seconds()
					p.FieldsS = r.setup - p.SetupS
					h := r.info.History
					if len(h) >= 2 {
						p.Factor = math.Pow(h[len(h)-1]/h[0], 1/float64(len(h)-1))
					}
					total, fine := 0.0, r.info.MG.Level[0].Seconds()
					for _, d := range r.info.MG.Level {
						total += d.Seconds()
					}
					p.CoarseShare = 1 - fine/total
					p.Gathered = 0
					for _, n := range r.info.MG.Ranks {
						if n == 1 && ranks > 1 {
							p.Gathered++
						}
					}
				}
			}
			fmg := spec
			fmg.FMG, fmg.Steps, fmg.Tolerance = true, 1, 0
			p.FMGS = math.Inf(1)
			for range 3 {
				r, err := solveOnce(fmg, ranks, exact)
				if err != nil {
					return pts, err
				}
				if r.wall < p.FMGS {
					p.FMGS, p.FMGError = r.wall, r.err
				}
			}
			jac := ""
			if n <= o.JacobiMax && ranks == o.Ranks[0] {
				j := spec
				// Jacobi's error is about max|Δu|/(1−ρ), 1−ρ ≈ 4h², and the
				// discretisation error about h²: stopping at 3e-3·h⁴ leaves an
				// iteration error near a thousandth of it.
				h := 1 / float64(n)
				j.Multigrid, j.Tolerance, j.Steps, j.CheckEvery = false, 3e-3*h*h*h*h, 1<<30, 100
				r, err := solveOnce(j, ranks, exact)
				if err != nil {
					return pts, err
				}
				p.JacobiS, p.JacobiSweeps, p.JacobiError = r.wall, r.steps, r.err
				jac = fmt.Sprintf("%.0f", r.wall/p.SolveS)
			}
			stall := ""
			if p.Stalled {
				stall = "*"
			}
			fmt.Fprintf(w, "%6d %5d %7d %9.3f %9.2f %6d %7.3f %8.2e%1s %7.1f %8.1f %8.1f %8.1f %6.1f%% %7.1f %8.2f %9.2e %8s\n",
				n, ranks, o.Threads, 1e3*p.StepS, 1e3*p.SolveS, p.Cycles, p.Factor, p.Backward, stall, p.WU(), p.SetupWU(), p.WU()+p.SetupWU(), p.FieldsWU(), 100*p.CoarseShare,
				p.FMGWU(), p.FMGError/p.Error, p.Error, jac)
			pts = append(pts, p)
		}
	}
	fmt.Fprintf(w, "\nWU: the solve from a zero guess; setupWU: the multigrid's setup (levels, plans, fields allocated; ‖b‖); totalWU: both;\nfieldsWU: the rest of solver.New, the problem's source evaluated at every cell (sin per cell, one thread); coarse: the levels below the finest, of rank 0's time;\nFMG/err: one FMG cycle's error against the exact solution over the converged solve's; * stalled at the rounding floor above the tolerance\n")
	for _, p := range pts {
		if p.JacobiS > 0 {
			fmt.Fprintf(w, "\njacobi at n=%d: %d sweeps in %.2f s (error %.2e) against multigrid's %d cycles in %.4f s (error %.2e): %.0f× faster\n",
				p.N, p.JacobiSweeps, p.JacobiS, p.JacobiError, p.Cycles, p.SolveS, p.Error, p.JacobiS/p.SolveS)
		}
	}
	if _, err := AssembledStudy(w, o.Dims, o.Sizes); err != nil {
		return pts, err
	}
	if o.PredictMax > 1 {
		if err := predictMG(w, o, pts); err != nil {
			return pts, err
		}
	}
	if o.Implicit {
		if err := implicitStudy(w, o); err != nil {
			return pts, err
		}
	}
	return pts, nil
}

// predictMG fits the multigrid model to the largest size's one-rank point
// (t_cell from its explicit step, the passes a visit costs from its cycle)
// and prints its cycles up to o.PredictMax ranks.
func predictMG(w io.Writer, o MGOptions, pts []MGPoint) error {
	var base *MGPoint
	for i := range pts {
		if pts[i].Ranks == 1 && (base == nil || pts[i].N > base.N) {
			base = &pts[i]
		}
	}
	if base == nil || base.Cycles == 0 {
		return nil
	}
	shape := slices.Repeat([]int{base.N}, o.Dims)
	shapes := plan.Hierarchy(shape, slices.Repeat([]float64{1}, o.Dims), o.MG.Levels)
	cells := 1
	for _, n := range shape {
		cells *= n
	}
	pre, post := multigrid.DefaultSweeps(o.Dims, o.MG.Smoother)
	if o.MG.Pre > 0 {
		pre = o.MG.Pre
	}
	if o.MG.Post > 0 {
		post = o.MG.Post
	}
	sweeps := pre + post
	if o.MG.Smoother == multigrid.RedBlack {
		sweeps *= 2 // two colours, an exchange each
	}
	gather := o.MG.GatherBelow
	if gather == 0 {
		gather = 32
	}
	gatherCells := o.MG.GatherCells
	if gatherCells == 0 {
		gatherCells = 1 << 14
	}
	m := MGModel{TCell: base.StepS / float64(cells), Exchanges: sweeps + 3, Cycle: o.MG.Cycle, GatherBelow: gather, GatherCells: gatherCells}
	// The solve's last cycle includes the final residual; divide evenly.
	if err := m.FitPasses(shapes, base.SolveS/float64(base.Cycles)); err != nil {
		return err
	}
	var ranks []int
	for r := 1; r <= o.PredictMax; r *= 2 {
		ranks = append(ranks, r)
	}
	nets := []struct {
		name string
		net  Network
	}{}
	var measured Network
	err := local.Run(2, func(c comm.Comm) error {
		_, net, err := MeasureNetwork(c, PingPongSizes(), 50*time.Millisecond)
		if c.Rank() == 0 {
			measured = net
		}
		return err
	})
	if err != nil {
		return err
	}
	nets = append(nets, struct {
		name string
		net  Network
	}{"in-process ranks (measured)", measured})
	if o.Target != nil {
		nets = append(nets, struct {
			name string
			net  Network
		}{"target network", *o.Target})
	}
	fmt.Fprintf(w, "\nmodel of one %s-cycle at n=%d (t_cell %.3g ns from the explicit step, %.1f passes a level visit fitted to the one-rank cycle, %d exchanges a visit, gathering below %d cells a side and %d in all):\n",
		o.MG.Cycle, base.N, 1e9*m.TCell, m.Passes, m.Exchanges, m.GatherBelow, m.GatherCells)
	for _, n := range nets {
		m.Network = n.net
		fmt.Fprintf(w, "%s: %v\n", n.name, n.net)
		if err := WriteMGPredictions(w, m, shapes, ranks); err != nil {
			return err
		}
	}
	return nil
}

// implicitStudy times Crank–Nicolson against explicit steps on the decay of
// a sine mode to t = 0.05 at the smallest size. Both share the space error,
// so accuracy in time is measured against the exact decay of the discrete
// mode, exp(−α·λ_h·t) with λ_h = Σ (4/h²)·sin²(πh/2): the explicit run's
// error against it, then the largest dt (halving from 0.01) whose
// Crank–Nicolson run is as accurate, each step solved to a relative
// residual of 1e-8 (far below the time error).
func implicitStudy(w io.Writer, o MGOptions) error {
	n, ranks := o.Sizes[0], o.Ranks[0]
	const tEnd = 0.05
	base, _ := poissonSpec(o.Dims, n, o.Threads)
	spec := base
	spec.Equation, spec.Multigrid, spec.Source = solver.Heat, false, nil
	spec.Alpha = 1
	mode := slices.Repeat([]int{1}, o.Dims)
	spec.Initial = solver.Sine(mode, spec.Length, 1, 0)
	lam, lamH := 0.0, 0.0
	for _, h := range spec.Spacing() {
		s := math.Sin(math.Pi * h / 2)
		lam += math.Pi * math.Pi
		lamH += 4 / (h * h) * s * s
	}
	exact := solver.Sine(mode, spec.Length, math.Exp(-lam*tEnd), 0)
	discrete := solver.Sine(mode, spec.Length, math.Exp(-lamH*tEnd), 0)
	spec.TEnd, spec.CheckEvery = tEnd, 1000
	spec.DT = 0.9 * operator.NewUniform(1, spec.Spacing()).StableDT()
	spec.Steps = plan.StepsTo(tEnd, spec.DT)
	ex, err := solveOnce(spec, ranks, discrete)
	if err != nil {
		return err
	}
	exTotal, err := solveOnce(spec, ranks, exact)
	if err != nil {
		return err
	}
	cn := spec
	cn.Scheme, cn.MG, cn.Tolerance, cn.CheckEvery = solver.CrankNicolson, o.MG, 1e-8, 1
	r, met, err := matchAccuracy(0.01, spec.DT, ex.err, func(dt float64) (solveRun, error) {
		cn.DT = dt
		cn.Steps = plan.StepsTo(tEnd, dt)
		return solveOnce(cn, ranks, discrete)
	})
	if err != nil {
		return err
	}
	total, err := solveOnce(cn, ranks, exact)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nheat to t = %g, %dD n=%d, a sine mode; error in time (against the discrete mode's exact decay) and in all (against the PDE's):\n", tEnd, o.Dims, n)
	fmt.Fprintf(w, "  explicit:       %6d steps of %.3g in %.3f s, error in time %.2e, in all %.2e\n", ex.steps, spec.DT, ex.wall, ex.err, exTotal.err)
	fmt.Fprintf(w, "  crank-nicolson: %6d steps of %.3g (%d cycles, %.1f a step) in %.3f s, error in time %.2e, in all %.2e\n",
		r.steps, cn.DT, r.info.Cycles, float64(r.info.Cycles)/float64(r.steps), r.wall, r.err, total.err)
	if !met {
		fmt.Fprintf(w, "  crank-nicolson's error in time stopped falling at %.2e (its solves' tolerance, 1e-8), above the explicit run's: not as accurate; it takes %.2f of the explicit run's wall time\n", r.err, r.wall/ex.wall)
		return nil
	}
	fmt.Fprintf(w, "  as accurate in time, crank-nicolson takes %.2f of the explicit run's wall time (%.1f× faster)\n", r.wall/ex.wall, ex.wall/r.wall)
	return nil
}

// matchAccuracy halves the step from start while it stays above least,
// until a run of it (trial) has an error of at most target (met), or
// halving stops paying: the error fell by less than a third, the
// tolerance of the run's solves flooring it. It returns the last run.
// Without that stop, at 1024² (an explicit error in time below what
// solves to 1e-8 reach) the search halved on towards the explicit step,
// each trial twice the last: past 13 minutes.
func matchAccuracy(start, least, target float64, trial func(dt float64) (solveRun, error)) (solveRun, bool, error) {
	var r solveRun
	prev := math.Inf(1)
	for dt := start; dt > least; dt /= 2 {
		var err error
		if r, err = trial(dt); err != nil {
			return r, false, err
		}
		if r.err <= target {
			return r, true, nil
		}
		if r.err > prev*2/3 {
			return r, false, nil
		}
		prev = r.err
	}
	return r, false, nil
}
