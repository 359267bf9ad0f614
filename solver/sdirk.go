package solver

import (
	"time"

	"heat/internal/hugemem"
	"heat/multigrid"
	"heat/operator"
)

// SDIRK4 is Hairer and Wanner's singly diagonally implicit Runge–Kutta
// method of order 4 (Solving ODEs II, IV.6, table 6.5): five stages, each a
// multigrid solve of the same operator ρc − γ·h·∇·(k∇) (γ = 1/4: one
// operator a step, its coarse levels built once), L-stable and stiffly
// accurate (the last stage is the step's end). Its embedded third-order
// solution b̂ gives the error estimate of a step that chooses itself for
// no extra solve, where the θ-schemes take each step three times (whole
// and in halves). On a smooth decay a fourth-order step can be far longer
// than Crank–Nicolson's at the same accuracy.
//
// Stage i solves ρc·Uᵢ − γh(∇·k∇Uᵢ + q(tₙ + cᵢh)) = ρc·Vᵢ with
// Vᵢ = uⁿ + Σ_{j<i} a_ij·Xⱼ, Xⱼ = h·Fⱼ the stage's time derivative times
// h, taken from the operator (the step's right side at Uⱼ, less ρc·Uⱼ)
// rather than from the solve (Uⱼ − Vⱼ = γ·Xⱼ): the solve's residual would
// then enter uⁿ⁺¹ times a_5j/γ, up to 31, and the energy balance closed
// only to about 300× the solve's tolerance (24², heater, rtol 1e-3:
// 2.8e-10 against Crank–Nicolson's 1.6e-12); with the operator's Xⱼ only
// the last stage's residual enters, as in a θ-step. The embedded
// solution's difference is u − û = Σⱼ (bⱼ − b̂ⱼ)·Xⱼ, the last stage's
// term taken as (U₅ − V₅)/γ. Every pass goes cell by cell, the same bits
// on every split. The faces and the source are taken at each stage's time
// (the last stage's at the step's end terms: the left limit on an event);
// the energy account adds each stage's flows weighted by h·bⱼ.
const sdirkStages = 5

// sdirkGamma is the diagonal γ of every stage.
const sdirkGamma = 0.25

// sdirkC are the stage times cᵢ (fractions of the step); sdirkA the rows of
// A below the diagonal; sdirkB the weights bⱼ (A's last row); sdirkE the
// estimate's bⱼ − b̂ⱼ, b̂ = (59/48, −17/96, 225/32, −85/12, 0).
var (
	sdirkC = [sdirkStages]float64{1.0 / 4, 3.0 / 4, 11.0 / 20, 1.0 / 2, 1}
	sdirkA = [sdirkStages][sdirkStages - 1]float64{
		{},
		{1.0 / 2},
		{17.0 / 50, -1.0 / 25},
		{371.0 / 1360, -137.0 / 2720, 15.0 / 544},
		{25.0 / 24, -49.0 / 48, 125.0 / 16, -85.0 / 12},
	}
	sdirkB = [sdirkStages]float64{25.0 / 24, -49.0 / 48, 125.0 / 16, -85.0 / 12, 1.0 / 4}
	sdirkE = [sdirkStages]float64{-3.0 / 16, -27.0 / 32, 25.0 / 32, 0, 1.0 / 4}
)

// sdirk is the stages' scratch: uⁿ (fixed steps: a copy; adaptive steps
// use the controller's), the stage's Vᵢ and X₁…X₄ (X₅ is never needed: the
// estimate takes it as (U₅ − V₅)/γ).
type sdirk struct {
	un, v []float64
	x     [sdirkStages - 1][]float64
}

// sdirkState is the stages' scratch, made at the first step.
func (s *Solver) sdirkState() *sdirk {
	if s.sd == nil {
		n := len(s.u)
		s.sd = &sdirk{v: hugemem.Floats(n)}
		for j := range s.sd.x {
			s.sd.x[j] = hugemem.Floats(n)
		}
		if s.ctrl == nil {
			s.sd.un = hugemem.Floats(n)
		}
		s.fault(append([][]float64{s.sd.un, s.sd.v}, s.sd.x[:]...)...)
	}
	return s.sd
}

// sdirkFixed is one fixed step of SDIRK4 from s.u.
func (s *Solver) sdirkFixed(dt float64) error {
	sd := s.sdirkState()
	src := s.u
	s.parallel(func(lo, hi int) { copy(sd.un[lo:hi], src[lo:hi]) })
	return s.sdirkStep(sd.un, s.simTime, dt, s.stepEnd())
}

// sdirkStep takes the five stages of the step [t, t + dt] from uⁿ = un
// (whose values the multigrid's field holds too: the first stage's first
// iterate; the later stages' are stageStart's). It leaves U₅, the step's
// end, as s.u and V₅ in the scratch for the estimate.
func (s *Solver) sdirkStep(un []float64, t, dt, endTerms float64) error {
	sd := s.sdirkState()
	alpha := s.setStep(dt)
	defer func() { s.stageEnd = nil }()
	for i := range sdirkStages {
		at := t + float64(sdirkC[i]*dt)
		if i == sdirkStages-1 {
			at = endTerms
		}
		s.stageEnd = &at
		v := un
		if i > 0 {
			v = sd.v
			s.stageStart(i, un)
		}
		if s.spec.FacesInTime {
			if err := s.setMGFaces(at); err != nil {
				return err
			}
		}
		if s.spec.SourceAt != nil {
			if err := s.refreshSource(at, 1); err != nil {
				return err
			}
		}
		if err := s.mg.StepRHS(v, 0, s.f, sdirkGamma*dt/s.spec.DT*s.srcW); err != nil {
			return err
		}
		if err := s.stageSolve(i == sdirkStages-1); err != nil {
			return err
		}
		u := s.mg.Field()
		if s.acct != nil {
			if s.spec.SourceAt != nil {
				if err := s.powerAt(at); err != nil {
					return err
				}
			}
			operator.ApplyFaces(s.mg.FineFaces(), u)
			s.account(u, sdirkB[i], dt)
		}
		if i < sdirkStages-1 {
			// Xᵢ = h·Fᵢ: the right side ρc·Uᵢ + h·(∇·k∇Uᵢ + q), at the
			// stage's faces and source, less ρc·Uᵢ, over ρc.
			if err := s.mg.StepRHS(u, dt*alpha, s.f, dt/s.spec.DT*s.srcW); err != nil {
				return err
			}
			s.derivative(sd.x[i], s.mg.RHS(), u)
		}
	}
	s.u = s.mg.Field()
	return nil
}

// stageSolve solves a stage, the last by F-cycles where Spec.EndF asks it:
// the 256² sine mode (SDIRK4 rtol 3e-4, stages by V(4,3)) closed its
// energy balance to 3.1e-8 of the flow with the last stage by V, to
// 4.4e-11 by F (1.8e-10 with every stage by F), in 71 cycles against 75.
func (s *Solver) stageSolve(last bool) error {
	if !last || !s.spec.EndF || s.spec.CG {
		return s.solveStep()
	}
	was := s.mg.SetCycle(multigrid.F)
	defer s.mg.SetCycle(was)
	return s.solveStep()
}

// derivative writes x = b/ρc − u on the cells a step updates (uniform: ρc
// = 1), 0 on holes and held cells.
func (s *Solver) derivative(x, b, u []float64) {
	var rhoC, free []float64
	if s.media != nil {
		rhoC, free = s.media.RhoC, s.media.Free
	}
	s.parallel(func(lo, hi int) {
		for k := lo; k < hi; k++ {
			switch {
			case rhoC == nil:
				x[k] = b[k] - u[k]
			case free[k] != 0:
				x[k] = b[k]/rhoC[k] - u[k]
			default:
				x[k] = 0
			}
		}
	})
}

// stageStart writes Vᵢ = uⁿ + Σ_{j<i} a_ij·Xⱼ, the terms in the order of j,
// and the stage's first iterate. Stages 2–4 start from Vᵢ + γ·X̃ᵢ₋₁, X̃ᵢ₋₁
// = (Uᵢ₋₁ − Vᵢ₋₁)/γ the last stage's derivative as its solve gave it
// (Uᵢ₋₁ + Vᵢ − Vᵢ₋₁, in the same pass): Uᵢ₋₁ itself is a step of
// (cᵢ − cᵢ₋₁)·h behind in the smooth modes (the sine mode, 256², rtol 1e-4:
// the stages' first cycle left a backward error of 1–4e-7 from Uᵢ₋₁, 2–3e-8
// from this; 106 cycles against 115). The operator's Xᵢ₋₁ would carry the
// solve's error times h·L in the stiff modes (123 cycles), and so does Vᵢ:
// the last stage, whose V₅ sums the Xⱼ with weights up to 7.8, starts from
// U₄ (from V₅ + γ·X̃₄ it took 5–6 cycles, not 3).
func (s *Solver) stageStart(i int, un []float64) {
	sd := s.sd
	coef := sdirkA[i][:i]
	v, x := sd.v, sd.x
	prev := v
	if i == 1 {
		prev = un
	}
	u := s.mg.Field()
	s.parallel(func(lo, hi int) {
		// The sum unrolled by its length (a loop over the terms took
		// three times as long), the terms in the order of j; stages 2–4
		// shift their iterate (prev is Vᵢ₋₁, read before it is
		// overwritten), the last does not.
		v, un, prev, u := v[lo:hi], un[lo:hi], prev[lo:hi], u[lo:hi]
		x0 := x[0][lo:hi]
		switch i {
		case 1:
			for k := range v {
				y := un[k] + float64(coef[0]*x0[k])
				u[k] += y - prev[k]
				v[k] = y
			}
		case 2:
			x1 := x[1][lo:hi]
			for k := range v {
				y := un[k] + float64(coef[0]*x0[k]) + float64(coef[1]*x1[k])
				u[k] += y - prev[k]
				v[k] = y
			}
		case 3:
			x1, x2 := x[1][lo:hi], x[2][lo:hi]
			for k := range v {
				y := un[k] + float64(coef[0]*x0[k]) + float64(coef[1]*x1[k]) + float64(coef[2]*x2[k])
				u[k] += y - prev[k]
				v[k] = y
			}
		default:
			x1, x2, x3 := x[1][lo:hi], x[2][lo:hi], x[3][lo:hi]
			for k := range v {
				v[k] = un[k] + float64(coef[0]*x0[k]) + float64(coef[1]*x1[k]) + float64(coef[2]*x2[k]) + float64(coef[3]*x3[k])
			}
		}
	})
}

// sdirkEmbedded writes the embedded third-order solution û = U₅ − Σⱼ
// (bⱼ − b̂ⱼ)·Xⱼ (X₅ = (U₅ − V₅)/γ) to dst, for the step's estimate.
func (s *Solver) sdirkEmbedded(dst []float64) {
	sd := s.sd
	u, v, x := s.u, sd.v, sd.x
	t0 := time.Now()
	s.parallel(func(lo, hi int) {
		for k := lo; k < hi; k++ {
			d := float64(sdirkE[0]*x[0][k]) + float64(sdirkE[1]*x[1][k]) + float64(sdirkE[2]*x[2][k]) + float64(sdirkE[4]/sdirkGamma*(u[k]-v[k]))
			dst[k] = u[k] - d
		}
	})
	s.stats.Control += time.Since(t0)
}
