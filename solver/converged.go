package solver

import (
	"fmt"
	"slices"
)

// One meaning of converged, for every multigrid solve (a Poisson problem by
// cycles or mgcg, and each implicit step): the iterate's backward error
// ω = max_i |b − Au|_i/((|A||u|)_i + d_i) is below run.tolerance — u is the
// exact solution of a problem whose every coefficient (conductivity,
// capacity, face) differs from the user's by at most that fraction, and
// whose right side by at most ω·d_i in each cell. A Poisson problem's data
// are its sources and held values cell by cell: d_i = |b_i|, the
// componentwise (Oettli–Prager) backward error. An implicit step's right
// side is the previous state, taken as a whole: d_i = max(|b_i|, ‖b‖∞) —
// a cell 10⁻²⁰ of the hottest one is not asked for digits of its own (a
// held ball heating a zero 3D block took 18 mgcg iterations a step for
// them, 10 without). It is measured against each row's own terms, so its
// rounding floor is a few ulps on any medium (the relative residual's
// grows with the jumps: 5e-5 on a 10⁶ inclusion) and it does not depend on
// the grid's size (the normwise backward error falls as 1/N² with it). A solve whose ω and normwise backward error both stop falling
// above the tolerance has met the rounding floor — a success, counted and
// reported with its figure — if the normwise one is below floorBackward,
// and has failed otherwise. A Poisson problem without data (f = 0, zero
// boundary values) has the solution u = 0, which no backward error of a
// nonzero iterate measures the distance to (every row's residual stays a
// fixed fraction of its terms as u shrinks): it is solved once its
// residual is the tolerance of its first iterate's (noData).

// track is one solve's figures after each of its iterations.
type track struct {
	relative, backward, component []float64
}

func (t *track) reset() {
	t.relative, t.backward, t.component = t.relative[:0], t.backward[:0], t.component[:0]
}

// judge records the figures of the iteration just done (res the global
// max-norm of its residual, ref the right side's) in t and in the solver,
// and reports whether the solve is done: converged, or stalled at the
// rounding floor (floor; counted in floorSteps), or diverged (a NaN, which
// the caller reports). A stall above the floor is an error. window is how many iterations may pass without progress: 1 for
// cycleWindow for plain cycles, krylovWindow for mgcg.
func (s *Solver) judge(t *track, res, ref float64, window int) (done, floor bool, err error) {
	omega, normU := s.mg.Backward()
	if s.normA < 0 {
		if s.normA, err = s.mg.NormA(); err != nil {
			return false, false, err
		}
	}
	s.residual = relative(res, ref)
	s.backward = relative(res, float64(s.normA*normU)+ref)
	s.component = omega
	t.relative = append(t.relative, s.residual)
	t.backward = append(t.backward, s.backward)
	t.component = append(t.component, omega)
	if omega < s.spec.Tolerance || s.noData && s.residual < s.spec.Tolerance {
		return true, false, nil
	}
	if omega != omega || s.residual != s.residual {
		return true, false, nil // diverged: the caller reports it
	}
	if !stalledOver(t.component, window) || !stalledOver(t.backward, window) {
		return false, false, nil
	}
	if !(s.backward < floorBackward) {
		if s.ho.on && !s.spec.CG {
			s.ho.stoppedShort = true // plain cycles that may hand over to mgcg do
			return false, false, nil
		}
		return false, false, fmt.Errorf("the solve stopped reducing its componentwise backward error at %.3g (normwise %.3g, relative residual %.3g): not the rounding floor, it failed", omega, s.backward, s.residual)
	}
	s.floorSteps++
	s.floorBackward = max(s.floorBackward, s.backward)
	return true, true, nil
}

// floorBackward is the normwise backward error below which a solve that
// stopped improving has met the rounding floor; above it, it has failed.
const floorBackward = 1e-10

// krylovWindow is how many mgcg iterations may pass without a new best
// componentwise or normwise backward error (0.9× the best before) before
// the solve counts as stalled: CG's residual is not monotone, a few
// iterations without progress are common on the way, and at jumps of 10⁴
// the componentwise error can stay near 1 (the insulated cells' residuals)
// while the normwise one falls. Plain cycles reduce every error every
// cycle until the floor: one cycle without progress tells (cycleWindow).
const (
	krylovWindow = 8
	cycleWindow  = 1
)

// window is the stall window of the solve's iterations: mgcg's or plain
// cycles' (a solve in media may hand over between them).
func (s *Solver) window() int {
	if s.spec.CG {
		return krylovWindow
	}
	return cycleWindow
}

// stalledOver reports whether the best of the last window entries of a
// history (of at least 4) is no better than 0.9× the best before them.
func stalledOver(history []float64, window int) bool {
	n := len(history)
	if n <= window || n < 4 {
		return false
	}
	return slices.Min(history[n-window:]) > 0.9*slices.Min(history[:n-window])
}

// relative is res/ref, 0 when both are (nothing to solve).
func relative(res, ref float64) float64 {
	if ref == 0 && res == 0 {
		return 0
	}
	return res / ref
}
