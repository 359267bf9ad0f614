package solver

import (
	"fmt"

	"heat/multigrid"
	"heat/plan"
)

// handOver is the state of plain cycles in media that may hand a solve
// over to mgcg (plan.KrylovOnStall): each solve begins with plain cycles
// (on, with the options plainMG) and hands over once their mean reduction
// of the componentwise backward error from the start's is past
// plan.StallFactor (afterPlain).
type handOver struct {
	on           bool              // the current solve is by plain cycles that may hand over
	plainMG      multigrid.Options // the plain cycles' options
	startErr     float64           // the start's componentwise backward error
	firstErr     float64           // the first plain cycle's
	startRes     float64           // the start's residual max-norm
	startU       []float64         // the start's u
	stoppedShort bool              // the cycles stopped reducing the backward error above the rounding floor
	begun        bool              // beginSolve noted the current solve's start
	cycles       int               // plain cycles of the current solve
	from         int               // the cycles done before the last hand-over
	solves       int               // the solves that handed over
	// mgcg iterations preconditioned by the grid levels' cycle in the
	// current solve, the first's backward error, and the cycles (Poisson)
	// before mgcg went algebraic or the step (heat, from 1) whose solve
	// did (afterKrylov).
	krylovIts      int
	krylovFirstErr float64
	algebraicFrom  int
	algebraic      bool // mgcg went algebraic during the run
}

// beginSolve notes the start of a solve in media that may change its
// method on the way (mayChange): its componentwise backward error, which
// the plain cycles' mean reduction is measured from, its residual, and u
// itself, which mgcg starts from instead where the iterations made the
// residual larger (a 10⁶ checkerboard's plain cycles: 18× a cycle; a
// checkerboard of tiles shifted by 2, mgcg on the grid levels: 9000× in
// four iterations).
func (s *Solver) beginSolve() error {
	s.ho.cycles, s.ho.krylovIts, s.ho.stoppedShort, s.ho.begun = 0, 0, false, true
	var err error
	if s.ho.startRes, err = s.mg.Measure(); err != nil {
		return err
	}
	s.ho.startErr, _ = s.mg.Backward()
	s.ho.startU = append(s.ho.startU[:0], s.mg.Field()...)
	return nil
}

// mayChange says whether the current solve may change its method: plain
// cycles in media that may hand over to mgcg, or mgcg on the grid levels
// in media that may go algebraic.
func (s *Solver) mayChange() bool {
	return s.ho.on || s.media != nil && s.spec.CG && !s.mg.Algebraic()
}

// startOver puts the solve's start back into u where the iterate's
// residual res is larger than the start's.
func (s *Solver) startOver(res float64) {
	if res > s.ho.startRes {
		copy(s.mg.Field(), s.ho.startU)
	}
}

// afterPlain judges a plain cycle of a solve that may hand over (res its
// residual, done whether it ended the solve): where the cycles stopped
// short of the tolerance, or reduced the backward error by less than
// 1/plan.StallFactor a cycle on average from the second on, mgcg goes on
// from here, or from the start where the residual is larger than there.
func (s *Solver) afterPlain(res float64, done bool) {
	s.ho.cycles++
	if s.ho.cycles == 1 {
		s.ho.firstErr = s.component
	}
	if done {
		return
	}
	// The first cycle reduces less than the rest where the medium jumps
	// (a 10⁶ inclusion: 0.32, then 0.07–0.2): the mean is taken after it,
	// at the second and third cycles, and the solve keeps to what they
	// show (cycles that slow down later, as the smooth error is left, do
	// not pay for the cycles already done by handing over then); one that
	// makes no progress at all hands over at once.
	slow := false
	switch n := s.ho.cycles; {
	case n == 1:
		slow = s.component >= s.ho.startErr
	case n <= 3 && s.ho.firstErr > 0:
		// The mean of n−1 reductions past StallFactor: their product
		// past its (n−1)th power (products alone, no fused arithmetic:
		// the same decision on every architecture).
		limit := plan.StallFactor
		if n == 3 {
			limit *= plan.StallFactor
		}
		slow = s.component > float64(s.ho.firstErr*limit)
	}
	if !slow && !s.ho.stoppedShort {
		return
	}
	s.startOver(res)
	s.toKrylov()
	s.ho.solves++
}

// krylovOptions are the cycle options of mgcg's preconditioner, from the
// run's: a symmetric cycle (the report names its kind).
func (s *Solver) krylovOptions(opt multigrid.Options) multigrid.Options {
	// CG needs a symmetric preconditioner: piecewise-constant
	// prolongation is the averaging restriction's transpose (times
	// 2^d), linear prolongation is not. Measured, 128², 10⁶ square
	// inclusion, V(2,2): constant 10 iterations to a backward error of
	// 6e-15; linear stalls at 5e-4.
	opt.Constant = true
	if opt.Cycle == multigrid.F {
		// An F-cycle (F then V below) is not a symmetric
		// preconditioner: 1024², 10⁶ checkerboard, 60 iterations
		// without reaching 1e-12 (flexible β too). V(4,4) in 2D and
		// W(4,4) in 3D were the fastest measured (1024², 10⁶
		// inclusion: V(4,4) 9 iterations 0.40 s, W(2,2) 16 in 0.72 s,
		// V(2,2) 20 in 0.77 s, V(6,6) 7 in 0.40 s; checkerboard V(4,4)
		// 9 in 0.44 s; 128³ inclusion W(4,4) 9 in 1.08 s, V(4,4) 11 in
		// 1.24 s). An implicit step's operator, ρc − θ·dt·∇·(k∇),
		// needs no W in 3D: V(4,4) took about the same iterations in
		// less time (the power module, 16×64×64, 100 steps of 0.1 s:
		// 441 iterations in 1.32–1.38 s against W's 408 in 1.83–2.11;
		// 32×128×128, 20 steps: 68 in 2.08–2.20 s against 69 in
		// 2.56–2.84; a 64³ 10⁶ inclusion, dt 1: 46 in 0.44 s
		// against 41 in 0.46).
		opt.Cycle = multigrid.V
		if len(s.spec.Shape) == 3 && s.spec.Equation == Poisson {
			opt.Cycle = multigrid.W
		}
		s.spec.MG.Cycle = opt.Cycle // what the report names
	}
	if opt.Pre == 0 && opt.Post == 0 {
		// As many sweeps after the coarse correction as before: a
		// symmetric cycle, plain CG (multigrid/krylov.go).
		opt.Pre, opt.Post = 4, 4
	}
	return opt
}

// toKrylov hands a solve that began with plain cycles in media to mgcg
// from the current u (plan.StallFactor), or makes a solve in media mgcg
// from the start (an algebraic preconditioner): the cycles and sweeps from
// now on are mgcg's, until toPlain.
func (s *Solver) toKrylov() {
	opt := s.krylovOptions(s.spec.MG)
	s.mg.SetCycle(opt.Cycle)
	s.mg.SetSweeps(opt.Pre, opt.Post)
	s.mg.SetConstant(opt.Constant)
	s.spec.CG, s.ho.on = true, false
	s.ho.from = s.cycles
	s.mg.RestartKrylov()
}

// toPlain makes the next implicit solve begin with plain cycles again
// after one that handed over: each solve judges its own cycles (an early
// step from a rough start may need mgcg where the later ones do not), and
// so a restart does as the straight run did.
func (s *Solver) toPlain() {
	s.spec.MG = s.ho.plainMG
	s.mg.SetCycle(s.ho.plainMG.Cycle)
	s.mg.SetSweeps(s.ho.plainMG.Pre, s.ho.plainMG.Post)
	s.mg.SetConstant(s.ho.plainMG.Constant)
	s.spec.CG, s.ho.on = false, true
}

// AlgebraicFrom is where the run switched to the algebraic preconditioner
// (afterKrylov): the cycles of a Poisson solve before, or the implicit
// step (from 1) whose solve did; 0 where it did not. A checkpoint keeps
// it (ResumeAlgebraic).
func (s *Solver) AlgebraicFrom() int { return s.ho.algebraicFrom }

// ResumeAlgebraic puts a restarted run where its checkpoint's run was
// after switching to the algebraic preconditioner at from (AlgebraicFrom;
// 0: it had not): mgcg, preconditioned algebraically from the next solve
// on, so that the restart takes the straight run's iterations and bits.
// Collective.
func (s *Solver) ResumeAlgebraic(from int) error {
	if from == 0 || s.ho.algebraic {
		return nil
	}
	if s.mg == nil || s.media == nil || !s.mg.AlgebraicFits() {
		return fmt.Errorf("the checkpoint's run went on preconditioned algebraically (from %d), which this run's solver cannot", from)
	}
	if !s.spec.CG {
		s.toKrylov()
	}
	if err := s.mg.ToAlgebraic(); err != nil {
		return err
	}
	s.ho.algebraic, s.ho.on, s.ho.algebraicFrom = true, false, from
	return nil
}

// afterKrylov judges an mgcg iteration preconditioned by the grid levels
// in media (res its residual, done whether it ended the solve): where the
// second and third iterations of a solve reduce its componentwise backward
// error by less than plan.AlgebraicFactor each on average, mgcg goes on
// preconditioned algebraically (MG.ToAlgebraic), restarted from here or
// from the solve's start where the residual is larger than there, and so
// do the run's later solves. The decision reads the global backward
// error: the same on every split.
func (s *Solver) afterKrylov(res float64, done bool) error {
	if done || s.media == nil || !s.spec.CG || s.mg.Algebraic() {
		return nil
	}
	s.ho.krylovIts++
	switch s.ho.krylovIts {
	case 1:
		s.ho.krylovFirstErr = s.component
	case 3:
		limit := float64(plan.AlgebraicFactor * plan.AlgebraicFactor)
		if s.component <= float64(s.ho.krylovFirstErr*limit) {
			return nil
		}
		if !s.mg.AlgebraicFits() {
			return nil
		}
		s.startOver(res)
		if err := s.mg.ToAlgebraic(); err != nil {
			return err
		}
		s.ho.algebraic, s.ho.on = true, false
		s.ho.algebraicFrom = s.cycles
		if s.spec.Equation == Heat {
			s.ho.algebraicFrom = s.step + 1
		}
	}
	return nil
}
