package solver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"heat/comm"
	"heat/decomp"
	"heat/multigrid"
	"heat/operator"
	"heat/plan"
)

// The multigrid paths: Poisson by multigrid cycles (one cycle a step), and
// implicit heat steps (each a multigrid solve of σ = 1, β = θ·dt·α).

// DefaultMaxCycles caps the cycles of one implicit step.
const DefaultMaxCycles = 50

// newMultigrid builds the solver's multigrid on its decomposition; its fine
// level holds the field. For Poisson, b = −f (∇²u = f is −∇²u = −f).
func (s *Solver) newMultigrid() error {
	op := multigrid.Operator{Sigma: 0, Beta: 1}
	if s.spec.Equation == Heat {
		op = multigrid.Operator{Sigma: 1, Beta: s.spec.Scheme.theta() * s.spec.DT * s.spec.Alpha}
		s.stepDT = s.spec.DT
		s.normA = -1 // taken when a solve first needs it
	}
	p := multigrid.Problem{Shape: s.spec.Shape, Length: s.spec.Length, Faces: s.spec.Faces, Op: op, K: s.faceK(), FaceAt: s.spec.FaceAt}
	if s.media != nil {
		if s.spec.Equation == Heat {
			p.Op.Beta = s.spec.Scheme.theta() * s.spec.DT // the media's faces carry k
		}
		p.Media = s.media
		held, err := s.anyHeld()
		if err != nil {
			return err
		}
		p.Held = held
		fixed := false
		for _, f := range s.spec.Faces {
			for _, side := range f {
				fixed = fixed || side.Kind == Dirichlet || side.Kind == Robin
			}
		}
		if s.spec.Equation == Poisson && !held && !fixed {
			return fmt.Errorf("solver: poisson in heterogeneous media needs a Dirichlet or Robin face or a held cell (u is otherwise fixed only up to a constant)")
		}
	}
	pl := s.spec.Plan()
	if pl.Method == plan.MGCG {
		s.spec.CG = true // asked for, or full multigrid's solve in media (the plan)
	}
	s.ho.on = pl.KrylovOnStall && !s.spec.CG
	s.ho.plainMG = s.spec.MG
	opt := s.spec.MG
	if s.spec.CG {
		opt = s.krylovOptions(opt)
	}
	mg, err := multigrid.New(s.c, s.grid, p, opt, s.team)
	if err != nil {
		return err
	}
	s.mg = mg
	if s.ho.on && mg.Algebraic() {
		s.toKrylov() // the grid levels' cycles would not converge
	}
	if err := s.setMGFaces(s.simTime); err != nil {
		return err
	}
	s.u = mg.Field()
	if err := s.setInitial(s.u); err != nil {
		return err
	}
	if s.media != nil {
		s.media.Hold(s.u)
	}
	if s.spec.Equation == Heat {
		return nil
	}
	if s.spec.Source != nil {
		s.fill(mg.RHS(), s.spec.Source, -1, false)
	}
	if err := mg.Compatible(); err != nil {
		var ie *multigrid.IncompatibleError
		if errors.As(err, &ie) {
			ie.Mean = -ie.Mean // of f, not of b = −f
		}
		return err
	}
	if s.normA, err = mg.NormA(); err != nil {
		return err
	}
	if s.ref, err = mg.RHSNorm(); err != nil || s.ref != 0 {
		return err
	}
	// No data (f = 0, zero boundary values): the solution is u = 0, and
	// the residual is measured against the initial guess's instead.
	s.noData = true
	s.ref, err = mg.Residual()
	return err
}

// runMG advances by multigrid until step target, convergence (Poisson) or
// ctx cancellation. Every step ends in one Allreduce of the stop request.
func (s *Solver) runMG(ctx context.Context, target int) error {
	for s.step < target && !s.converged && !s.stalled && !s.ended() {
		t0 := time.Now()
		var err error
		switch {
		case s.spec.Equation == Poisson:
			err = s.cycle()
		case s.ctrl != nil:
			err = s.adaptiveStep() // sets simTime
		default:
			err = s.implicitStep()
		}
		s.stats.Compute += time.Since(t0)
		if err != nil {
			return err
		}
		s.step++
		if s.spec.Equation == Heat && s.ctrl == nil {
			s.simTime = s.spec.timeAt(s.step)
		}
		if math.IsNaN(s.residual) || math.IsInf(s.residual, 0) {
			return &DivergedError{Step: s.step, What: fmt.Sprintf("relative residual %v", s.residual)}
		}
		stop := 0.0
		if ctx.Err() != nil {
			stop = 1
		}
		out := []float64{0}
		t1 := time.Now()
		if err := s.c.Allreduce(comm.Max, []float64{stop}, out); err != nil {
			return err
		}
		s.stats.Reduce += time.Since(t1)
		s.stats.Checks++
		if s.spec.OnCheck != nil {
			s.spec.OnCheck(s.step, s.residual)
		}
		if out[0] != 0 {
			return ErrStopped
		}
		if s.ctrl != nil && s.ctrl.paused {
			return nil // a probe time: the run's outputs are due
		}
	}
	return nil
}

// stepEnd is the time the current implicit step's end terms (the source
// and faces at its end) are taken at: the next step's time, or the
// adaptive attempt's (the left limit where it lands on an event).
func (s *Solver) stepEnd() float64 {
	if s.stageEnd != nil {
		return *s.stageEnd // an SDIRK stage's
	}
	if s.ctrl != nil {
		return s.ctrl.endTerms
	}
	return s.spec.timeAt(s.step + 1)
}

// cycle does one Poisson multigrid cycle (the first full multigrid when
// FMG is set; an mgcg iteration when CG is) and judges the solve by it.
func (s *Solver) cycle() error {
	var res float64
	var err error
	if !s.ho.begun && s.mayChange() {
		if err := s.beginSolve(); err != nil {
			return err
		}
	}
	switch {
	case s.spec.FMG && s.step == 0:
		// With mgcg the full-multigrid cycle is the iteration's first
		// guess: the iterations go on from its u.
		res, err = s.mg.FMG()
	case s.spec.CG:
		res, err = s.mg.Krylov()
	default:
		res, err = s.mg.Cycle()
	}
	if err != nil {
		return err
	}
	s.u = s.mg.Field()
	s.cycles++
	done, floor, err := s.judge(&s.solve, res, s.ref, s.window())
	if err != nil {
		return err
	}
	s.history, s.backwardHistory, s.componentHistory = s.solve.relative, s.solve.backward, s.solve.component
	s.stalled = floor
	s.converged = done && !floor && s.component == s.component
	if s.ho.on {
		s.afterPlain(res, done)
		s.u = s.mg.Field()
	} else if err := s.afterKrylov(res, done); err != nil {
		return err
	}
	return nil
}

// implicitStep advances u by one backward-Euler or Crank–Nicolson step:
// b = uⁿ + (1−θ)·dt·α∇²uⁿ + dt·f from uⁿ = s.u (the multigrid's field, or
// an adaptive attempt's saved start), then cycles from uⁿ (or the
// attempt's first iterate) until the backward error is below the
// tolerance; s.u is the multigrid's field after it.
func (s *Solver) implicitStep() error {
	dt := s.spec.DT
	switch {
	case s.ctrl != nil:
		dt = s.ctrl.dt
	case s.step == s.spec.Steps-1:
		dt = s.spec.LastDT()
	}
	if s.spec.Scheme == SDIRK4 {
		return s.sdirkFixed(dt)
	}
	theta := s.spec.Scheme.theta()
	alpha := s.setStep(dt)
	if s.spec.FacesInTime && theta != 1 {
		if err := s.setMGFaces(s.simTime); err != nil { // the explicit half's ghosts: at the step's start
			return err
		}
	}
	if s.spec.SourceAt != nil {
		if err := s.refreshSource(s.simTime, theta); err != nil {
			return err
		}
	}
	if err := s.mg.StepRHS(s.u, (1-theta)*dt*alpha, s.f, dt/s.spec.DT*s.srcW); err != nil {
		return err
	}
	if theta != 1 {
		// The explicit half's flows: uⁿ's ghosts as StepRHS set them.
		if s.spec.SourceAt != nil {
			if err := s.powerAt(s.simTime); err != nil {
				return err
			}
		}
		operator.ApplyFaces(s.mg.FineFaces(), s.u)
		s.account(s.u, 1-theta, dt)
	}
	if s.spec.FacesInTime {
		if err := s.setMGFaces(s.stepEnd()); err != nil { // the implicit half's: at its end
			return err
		}
	}
	if err := s.solveStep(); err != nil {
		return err
	}
	if s.acct != nil {
		// The implicit half's flows: uⁿ⁺¹'s ghosts at the step's end (the
		// last cycle's residual exchanged the halo).
		if s.spec.SourceAt != nil {
			if err := s.powerAt(s.stepEnd()); err != nil {
				return err
			}
		}
		operator.ApplyFaces(s.mg.FineFaces(), s.u)
		s.account(s.u, theta, dt)
	}
	return nil
}

// rhsAlpha is the α of an implicit step's right side: the spec's, 1 in
// media (whose faces carry k).
func (s *Solver) rhsAlpha() float64 {
	if s.media != nil {
		return 1
	}
	return s.spec.Alpha
}

// setStep sets the multigrid's operator up for a step (SDIRK4: each stage)
// of dt, ρc − θ·dt·α·∇·(k∇), where dt changed, and returns rhsAlpha.
func (s *Solver) setStep(dt float64) (alpha float64) {
	alpha = s.rhsAlpha()
	if dt != s.stepDT {
		s.mg.SetOperator(multigrid.Operator{Sigma: 1, Beta: s.spec.Scheme.theta() * dt * alpha})
		s.stepDT = dt
		s.normA = -1 // the step's own, when a solve needs it
	}
	return alpha
}

// solveStep solves the implicit step's system, its right-hand side built,
// until the backward error is below the tolerance (from the attempt's
// first iterate, where it has one, else from the multigrid's field); s.u
// is the multigrid's field after it.
func (s *Solver) solveStep() error {
	ref, err := s.mg.RHSNorm()
	if err != nil {
		return err
	}
	s.mg.SetDataScale(ref)
	limit := s.spec.MaxCycles
	if limit == 0 {
		limit = DefaultMaxCycles
	}
	s.solve.reset()
	// An adaptive attempt's first iterate, where it has one.
	s.first()
	if s.spec.CG {
		s.mg.RestartKrylov() // the step's own right-hand side
	}
	if s.mayChange() {
		if err := s.beginSolve(); err != nil {
			return err
		}
	}
	for n := 1; ; n++ {
		var res float64
		var err error
		if s.spec.CG {
			res, err = s.mg.Krylov() // mgcg: CG preconditioned by a cycle
		} else {
			res, err = s.mg.Cycle()
		}
		if err != nil {
			return err
		}
		s.cycles++
		done, _, err := s.judge(&s.solve, res, ref, s.window())
		if err != nil {
			return fmt.Errorf("step %d: %w", s.step+1, err)
		}
		if s.ho.on {
			s.afterPlain(res, done)
		} else if err := s.afterKrylov(res, done); err != nil {
			return err
		}
		if done {
			break
		}
		if n == limit {
			return fmt.Errorf("step %d: the solve did not reach the backward error %g in %d cycles (%.3g; relative residual %.3g)", s.step+1, s.spec.Tolerance, limit, s.component, s.residual)
		}
	}
	s.u = s.mg.Field()
	s.history = append(s.history, s.residual)
	s.backwardHistory = append(s.backwardHistory, s.backward)
	s.componentHistory = append(s.componentHistory, s.component)
	if s.ho.solves > 0 && s.spec.CG && !s.ho.algebraic {
		s.toPlain() // the next solve begins with plain cycles again
	}
	return nil
}

// shorten sets the explicit kernel's weights for one step of dt instead of
// DT (the source, prescaled by DT, weighted by dt/DT).
func (s *Solver) shorten(dt float64) {
	if s.mstep != nil {
		s.mstep.SetDT(dt)
		return
	}
	s.cf = 1
	if dt == s.spec.DT {
		s.ustep.Shorten(1)
		return
	}
	s.cf = dt / s.spec.DT
	s.ustep.Shorten(s.cf)
}

// SolverInfo describes how the run was solved, for the report.
type SolverInfo struct {
	Kind     string // "explicit", "jacobi", "multigrid"
	Scheme   string // heat: the time scheme
	Smoother string // multigrid
	Cycle    string // multigrid: "v", "w", "fmg" (then V-cycles)
	Cycles   int    // multigrid cycles done
	// KrylovSolves is how many solves in media (the Poisson solve, implicit
	// steps and stages) handed their plain cycles over to mgcg; KrylovFrom,
	// for a Poisson solve that did, the plain cycles it did before.
	KrylovSolves, KrylovFrom int
	// AlgebraicFrom is where mgcg went algebraic when the grid levels'
	// iterations hardly reduced the error (afterKrylov): the cycles of a
	// Poisson solve before, or the implicit step (from 1) whose solve
	// did; 0 where it did not.
	AlgebraicFrom int
	// History is the relative residual after each cycle (Poisson) or
	// after each implicit solve's last cycle (heat: a step's, or each of
	// an SDIRK4 step's five stages'); StepHistory after each
	// cycle of the last implicit step (the failing one, where one failed),
	// StepComponentHistory its componentwise backward error.
	History, StepHistory, StepComponentHistory []float64
	// FloorSolves is how many solves (implicit steps, or the Poisson solve)
	// stopped at the rounding floor above the tolerance — a success —, and
	// FloorBackward the largest normwise backward error they stopped at.
	FloorSolves   int
	FloorBackward float64
	// BackwardError is the normwise backward error ‖f − Au‖∞/(‖A‖∞‖u‖∞ +
	// ‖f‖∞) after the last iteration, BackwardHistory as History.
	BackwardError   float64
	BackwardHistory []float64
	// ComponentError is the componentwise backward error (Oettli–Prager:
	// max over cells of |f − Au|_i/((|A||u|)_i + |f_i|)), which decides
	// convergence (converged.go); ComponentHistory as History.
	ComponentError   float64
	ComponentHistory []float64
	MG               multigrid.Stats
}

// Info describes the solver of this run.
func (s *Solver) Info() SolverInfo {
	in := SolverInfo{Kind: "explicit", Scheme: s.spec.Scheme.String()}
	if s.spec.Equation == Poisson {
		in.Kind, in.Scheme = "jacobi", ""
	}
	if s.mg != nil {
		in.Kind = "multigrid"
		if s.spec.CG {
			in.Kind = "mgcg"
		}
		in.BackwardError, in.BackwardHistory = s.backward, s.backwardHistory
		in.ComponentError, in.ComponentHistory = s.component, s.componentHistory
		in.Smoother = s.spec.MG.Smoother.String()
		in.Cycle = s.spec.MG.Cycle.String()
		if s.spec.FMG {
			in.Cycle = "fmg"
		}
		in.Cycles, in.KrylovSolves, in.AlgebraicFrom = s.cycles, s.ho.solves, s.ho.algebraicFrom
		if s.spec.Equation == Poisson {
			in.KrylovFrom = s.ho.from
		}
		in.History = s.history
		if s.spec.Equation == Heat {
			in.StepHistory = s.solve.relative
			in.StepComponentHistory = s.solve.component
		}
		in.FloorSolves, in.FloorBackward = s.floorSteps, s.floorBackward
		in.MG = s.mg.Stats()
	}
	return in
}

// MaxError is the global max |u − p| over the cells (p at the cell
// centres), a collective: every rank gets the same value.
func (s *Solver) MaxError(p Profile) (float64, error) {
	exact := make([]float64, s.lay.Len())
	s.fill(exact, p, 1, false)
	e := 0.0
	nd := len(s.lay.N)
	s.lay.ForRows(boxOf(nd, s.lay.N), func(start, n int) {
		for j := start; j < start+n; j++ {
			d := math.Abs(s.u[j] - exact[j])
			if d > e || d != d {
				e = d
			}
		}
	})
	out := []float64{0}
	err := s.c.Allreduce(comm.Max, []float64{e}, out)
	return out[0], err
}

// boxOf is the box [0, n) in local coordinates.
func boxOf(nd int, n []int) decomp.Box { return decomp.Box{Lo: make([]int, nd), Hi: n} }
