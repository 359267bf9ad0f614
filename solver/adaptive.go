package solver

import (
	"fmt"
	"math"
	"slices"
	"time"

	"heat/comm"
	"heat/decomp"
	"heat/internal/hugemem"
	"heat/operator"
)

// Time steps that choose themselves (equation.dt = "auto"): SDIRK4's
// steps are measured by their embedded third-order solution (sdirk.go);
// each θ-scheme step is taken twice — once whole, once as two halves — and the
// difference of the two ends, over 2^p − 1 (p the scheme's order), is the
// halves' local error (step doubling; Richardson). The halves' field
// (backward Euler's extrapolated to second order: extrapolate) is kept
// where the error, weighed cell by cell by atol + rtol·|u|, is at
// most 1 in the max-norm; otherwise the step is taken again shorter. The
// next step follows from a PI controller (Gustafsson). The max-norm is one
// Allreduce: every rank takes the same decision, so the step sequence and
// the field have the same bits on every split. Steps land on events (the
// run's end, switches of the source and faces, probe times): no step
// straddles one, and the terms a step takes at its end are taken there as
// the left limit (just before the event), so a switch at an event acts
// from the step that starts at it.

// Adaptive are the bounds and tolerances of steps that choose themselves.
type Adaptive struct {
	RTol, ATol float64 // the local error a step may make: atol + rtol·|u| per cell
	DTMin      float64 // smallest step; a step that fails at it fails the run
	DTMax      float64 // largest step
	DTInitial  float64 // first step; 0: chosen from the field's rate at the start (firstStep)
	// Events are the times steps land on, ascending, the run's end (TEnd)
	// the last; Pauses those after which RunTo returns (probe times);
	// Switches those where the forcing may jump (run.events and the
	// expressions' switches; a table is continuous at its knots), after
	// which the next step is chosen afresh from the field, as the first is.
	Events, Pauses, Switches []float64
}

// Controller is the state of the step controller: what a checkpoint keeps
// so that a restart takes the same steps.
type Controller struct {
	Next     float64 // the step to try next
	ErrPrev  float64 // the last accepted step's error estimate (0: none yet)
	Rejected bool    // the last attempt was rejected: the next may not grow
	// Accepted and Rejects count the steps kept and the attempts taken
	// again; DTMin, DTMax are the smallest and largest step kept.
	Accepted, Rejects int
	DTMin, DTMax      float64
	// Fresh: the next step is chosen from the field (firstStep), the last
	// kept one having landed on a switch; FreshAt is Accepted when the
	// last step was so chosen (the step after it may grow as the first).
	Fresh   bool
	FreshAt int
}

// ctrl is a run's controller and the scratch of its attempts.
type ctrl struct {
	Controller
	a *Adaptive
	// The attempt under way: its length and the time its end terms are
	// taken at (its end; the left limit where it lands on an event).
	dt, endTerms float64
	// The last step kept: its length and error estimate (diagnostics).
	lastDT, lastErr float64
	un, u1          []float64 // the field at the step's start, the whole step's end
	// next is the next step's start, written by the pass that makes the
	// kept field (the estimate, or backward Euler's extrapolation) and
	// swapped with un when the step is kept; started says un holds the
	// current start (false until the first attempt has copied it).
	next    []float64
	started bool
	// guess is the first iterate of the next solve: the halves start from
	// the whole step's values, not from uⁿ.
	guess      guess
	maxes      []float64    // each worker's running maxima (rowMaxes)
	acct, full accountState // the account at the step's start, and after the whole step
	paused     bool         // the last step landed on a pause time
}

// guess is where a solve of an attempt starts.
type guess int

const (
	fromStart guess = iota // uⁿ, as a fixed step does
	halfway                // (uⁿ + u1)/2: the first half
	wholeEnd               // u1, the whole step's end: the second half
)

// StepError is a step that cannot meet the tolerance at the smallest
// step allowed.
type StepError struct {
	Step            int
	T, DT, Estimate float64
}

func (e *StepError) Error() string {
	return fmt.Sprintf("step %d at t = %g: the error estimate %.3g (of the tolerance) stays above 1 at equation.dt_min = %g; loosen equation.rtol/atol or lower dt_min",
		e.Step, e.T, e.Estimate, e.DT)
}

// newCtrl sets up the controller of spec.Adaptive, fresh (a restart's
// comes from its checkpoint: SetController).
func (s *Solver) newCtrl() {
	a := s.spec.Adaptive
	if a == nil {
		return
	}
	n := len(s.u)
	c := &ctrl{a: a, un: hugemem.Floats(n), u1: hugemem.Floats(n), next: hugemem.Floats(n), maxes: make([]float64, 2*s.parts),
		Controller: Controller{Next: a.DTInitial, DTMin: math.Inf(1)}}
	s.ctrl = c
	s.fault(c.un, c.u1, c.next)
}

// fault writes zeros over the fields (nil: none), each worker its share: their pages
// are mapped in setup, not by the first passes that use them (at 1024² the
// controller's three fields took about 10 ms of page faults in its first
// steps, a third of its time over a run of seven steps).
func (s *Solver) fault(fields ...[]float64) {
	s.parallel(func(lo, hi int) {
		for _, f := range fields {
			if f != nil {
				clear(f[lo:hi])
			}
		}
	})
}

// Adaptive are the bounds and tolerances of the run's steps that choose
// themselves (nil with fixed steps).
func (s *Solver) Adaptive() *Adaptive { return s.spec.Adaptive }

// Controller is the step controller's state (nil without adaptive steps).
func (s *Solver) Controller() *Controller {
	if s.ctrl == nil {
		return nil
	}
	c := s.ctrl.Controller
	return &c
}

// SetController continues a run from a checkpoint's controller and time:
// the straight run's next step, to the bit.
func (s *Solver) SetController(c Controller, t float64) {
	if s.ctrl == nil {
		return
	}
	s.ctrl.Controller = c
	s.simTime = t
}

// LastStep is the last kept step's length and error estimate (0, 0 before
// the first, or without adaptive steps).
func (s *Solver) LastStep() (dt, err float64) {
	if s.ctrl == nil {
		return 0, 0
	}
	return s.ctrl.lastDT, s.ctrl.lastErr
}

// Paused reports whether the last step landed on a pause time (Adaptive's
// Pauses: a probe time).
func (s *Solver) Paused() bool { return s.ctrl != nil && s.ctrl.paused }

// ended reports whether an adaptive run has reached its end time.
func (s *Solver) ended() bool { return s.ctrl != nil && s.simTime >= s.spec.TEnd }

// nextEvent is the first event after t (TEnd at the latest).
func (c *ctrl) nextEvent(t float64) float64 {
	i, _ := slices.BinarySearch(c.a.Events, t)
	for i < len(c.a.Events) && c.a.Events[i] <= t {
		i++
	}
	if i == len(c.a.Events) {
		return c.a.Events[len(c.a.Events)-1]
	}
	return c.a.Events[i]
}

// order is the order of the solution the error estimate measures: 1
// backward Euler's halves, 2 Crank–Nicolson's, 3 SDIRK4's embedded
// solution (the local error is one order up).
func (s *Solver) order() int {
	switch s.spec.Scheme {
	case BackwardEuler:
		return 1
	case SDIRK4:
		return 3
	}
	return 2
}

// maxGrowth is how much the step after the n-th kept one may grow: 5, but
// after the first 10⁴ (as CVODE's first step): the first step is a guess
// (equation.dt_initial, or firstStep's), and its own estimate says how far
// the tolerance lets the next go (the 256² sine mode, SDIRK4 from t_end·10⁻⁶:
// 15 steps growing 5× at most, 13 growing 10⁴× after the first).
func maxGrowth(n int) float64 {
	if n == 1 {
		return 1e4
	}
	return 5
}

// firstStep is the first step where none is given (Adaptive.DTInitial 0):
// 0.01·d₀/d₁ with d₀ = ‖u/sc‖∞ and d₁ = ‖∂u/∂t/sc‖∞, sc = atol + rtol·|u|
// cell by cell — the first guess of Hairer, Nørsett and Wanner (Solving
// ODEs I, II.4): the step in which the field would change by a hundredth of
// itself, as the tolerance weighs it. ∂u/∂t is taken from the operator at
// the start (faces and source at t). It is 10⁻⁶·t_end where the field or
// its rate is below 10⁻⁵ (a field at rest), and within [dt_min, dt_max].
// From t_end·10⁻⁶ instead, the sine mode (256², SDIRK4) spent six of its
// ten steps growing. The same on every rank (max-norms). Collective.
func (s *Solver) firstStep() (float64, error) {
	c, t := s.ctrl, s.simTime
	if slices.Contains(c.a.Switches, t) {
		t = math.Nextafter(t, math.Inf(1)) // the forcing after the switch
	}
	alpha := s.rhsAlpha()
	s.stageEnd = &t
	defer func() { s.stageEnd = nil }()
	if s.spec.FacesInTime {
		if err := s.setMGFaces(t); err != nil {
			return 0, err
		}
	}
	if s.spec.SourceAt != nil {
		if err := s.refreshSource(t, 1); err != nil {
			return 0, err
		}
	}
	// The right side of a step of 1 at u, less ρc·u, over ρc: ∂u/∂t.
	u, rate := s.u, c.u1
	if err := s.mg.StepRHS(u, alpha, s.f, s.srcW/s.spec.DT); err != nil {
		return 0, err
	}
	s.derivative(rate, s.mg.RHS(), u)
	rtol, atol := c.a.RTol, c.a.ATol
	d, err := s.rowMaxes(2, func(lo, hi int, m []float64) {
		for i := lo; i < hi; i++ {
			sc := atol + float64(rtol*math.Abs(u[i]))
			m[0], m[1] = max(m[0], math.Abs(u[i])/sc), max(m[1], math.Abs(rate[i])/sc)
		}
	})
	if err != nil {
		return 0, err
	}
	d0, d1 := d[0], d[1]
	h := 1e-6 * s.spec.TEnd
	if d0 >= 1e-5 && d1 >= 1e-5 {
		h = 0.01 * d0 / d1
		if h == h {
			var err error
			if h, err = s.secondLook(h, d1, alpha); err != nil {
				return 0, err
			}
		}
	}
	if h != h {
		h = 1e-6 * s.spec.TEnd // NaN in the field: the first solve names it
	}
	return min(c.a.DTMax, max(c.a.DTMin, h)), nil
}

// secondLook is Hairer, Nørsett and Wanner's second estimate of the first
// step: an explicit Euler step of h0 from u, the rate there, d₂ = ‖(∂u/∂t(u
// + h0·∂u/∂t) − ∂u/∂t)/sc‖∞ / h0 (how fast the rate turns), and h₁ =
// (0.01/max(d₁, d₂))^(1/k), k the local error's order: the first step is
// min(100·h0, h₁). The faces and source stay where firstStep took them. A
// field whose rate turns fast in its stiff modes (a step, a held cell)
// gets a large d₂ and a short step, as it should. It reads the rate from
// c.u1 and writes the Euler step to c.next (free between steps); the rate
// there is taken cell by cell in the pass that measures it. Collective.
func (s *Solver) secondLook(h0, d1, alpha float64) (float64, error) {
	c := s.ctrl
	u, rate, y := s.u, c.u1, c.next
	s.parallel(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			y[i] = u[i] + float64(h0*rate[i])
		}
	})
	if err := s.mg.StepRHS(y, alpha, s.f, s.srcW/s.spec.DT); err != nil {
		return 0, err
	}
	b := s.mg.RHS()
	var rhoC, free []float64
	if s.media != nil {
		rhoC, free = s.media.RhoC, s.media.Free
	}
	rtol, atol := c.a.RTol, c.a.ATol
	d, err := s.rowMaxes(1, func(lo, hi int, m []float64) {
		for i := lo; i < hi; i++ {
			// The rate at y, as derivative writes it.
			var r1 float64
			switch {
			case rhoC == nil:
				r1 = b[i] - y[i]
			case free[i] != 0:
				r1 = b[i]/rhoC[i] - y[i]
			}
			sc := atol + float64(rtol*math.Abs(u[i]))
			m[0] = max(m[0], math.Abs(r1-rate[i])/sc)
		}
	})
	if err != nil {
		return 0, err
	}
	d2 := d[0] / h0
	k := float64(s.order() + 1)
	h1 := math.Pow(0.01/max(d1, d2), 1/k)
	return min(100*h0, h1), nil
}

// adaptiveStep takes one step of the length the controller chooses, taking
// it again shorter until its error estimate meets the tolerance. Collective.
func (s *Solver) adaptiveStep() error {
	c := s.ctrl
	t := s.simTime
	k := float64(s.order() + 1) // the local error's order
	if c.Next == 0 || c.Fresh {
		t0 := time.Now()
		first, err := s.firstStep()
		s.stats.Control += time.Since(t0)
		if err != nil {
			return err
		}
		c.Next, c.Fresh, c.FreshAt = first, false, c.Accepted
	}
	for tries := 1; ; tries++ {
		want := min(c.Next, c.a.DTMax)
		dt, end, landed := want, t+want, false
		e := c.nextEvent(t)
		switch gap := e - t; {
		case gap <= 1.1*dt || end >= e:
			dt, end, landed = gap, e, true
		case gap < 2*dt:
			dt = gap / 2 // two equal steps, not a long one and a sliver
			end = t + dt
		}
		endTerms := end
		if landed {
			endTerms = math.Nextafter(end, math.Inf(-1)) // the left limit: a switch at e acts from the next step
		}
		err, ok, e2 := s.attempt(t, dt, end, endTerms)
		if e2 != nil {
			return e2
		}
		if ok && err <= 1 {
			t0 := time.Now()
			if s.spec.Scheme == BackwardEuler {
				s.extrapolate()
			}
			c.un, c.next = c.next, c.un // the kept field, the next step's start
			s.stats.Control += time.Since(t0)
			s.simTime = end
			c.lastDT, c.lastErr = dt, err
			c.Accepted++
			c.DTMin, c.DTMax = min(c.DTMin, dt), max(c.DTMax, dt)
			// PI controller on the error per step (Gustafsson): 0.7/k and
			// 0.4/k, the factor within [0.2, 5], not growing after a
			// rejection.
			est := max(err, 1e-10)
			fac := 0.9 * math.Pow(est, -1/k)
			// A step an event cut short (dt < want) was not the
			// controller's choice: the PI's ratio of errors would read its
			// length as the solution's trend (1024², Crank–Nicolson: after
			// 0.0025 to a probe time, estimate 0.12 after 0.07, the PI grew
			// 4%, the estimate asked 85%). The elementary controller
			// decides there and on the step after.
			cut := dt < want
			if c.ErrPrev > 0 && !cut {
				// Far below the tolerance the PI's integral gain (0.3/k)
				// grows a step of steady error e by e^(−0.3/k) only
				// (SDIRK4 at e = 0.05: 12% a step); there the elementary
				// controller's larger step is taken (it aims at 0.9^k).
				pi := 0.9 * math.Pow(est, -0.7/k) * math.Pow(c.ErrPrev, 0.4/k)
				if est > 0.1 {
					fac = pi
				} else {
					fac = max(fac, pi)
				}
			}
			// The estimate measured dt: the next step is dt·fac. Its
			// growth is bounded from the step that was wanted where an
			// event cut this one short (a sliver's estimate says little),
			// not grown from it: the sine mode's half steps of 0.01 to a
			// probe time (estimate 0.018) made the next want·2.45 = 0.058
			// (estimate 5.3, taken again) where 0.0245 was what they said.
			fac = max(0.2, fac)
			if c.Rejected {
				fac = min(fac, 1)
			}
			base := dt
			if cut {
				base = want
			}
			c.Next = min(c.a.DTMax, max(c.a.DTMin, min(dt*fac, base*maxGrowth(c.Accepted-c.FreshAt))))
			c.ErrPrev, c.Rejected = max(err, 1e-4), false
			if cut {
				c.ErrPrev = 0
			}
			c.paused = landed && slices.Contains(c.a.Pauses, end)
			if landed && slices.Contains(c.a.Switches, end) {
				// The forcing jumps here: what the steps before it
				// said of the error does not hold after it (the power
				// module's heater: 9 attempts from dt 4 down to 0.1,
				// the estimate staying at 1.1–2.6).
				c.Fresh, c.ErrPrev = true, 0
			}
			return nil
		}
		// Rejected: back to the step's start, shorter.
		t0 := time.Now()
		s.restoreStart()
		s.stats.Control += time.Since(t0)
		c.Rejects++
		c.Rejected = true
		if dt <= c.a.DTMin*(1+1e-12) {
			return &StepError{Step: s.step + 1, T: t, DT: dt, Estimate: err}
		}
		fac := 0.2
		if ok {
			fac = max(0.2, 0.9*math.Pow(err, -1/k))
		}
		if tries > 1 {
			// Taken again twice: the estimate does not fall as dt^k
			// here, and each retry is a whole attempt (CVODE cuts by 5×
			// from its second failure).
			fac = 0.2
		}
		c.Next = max(c.a.DTMin, min(dt, want)*min(fac, 0.9))
	}
}

// attempt takes the step [t, end] of length dt — SDIRK4's stages, or a
// θ-scheme's step whole and as two halves —, leaves the kept field (and
// energy account) in place, and returns the error estimate: max over cells
// of |u − û| / (den·(atol + rtol·max(|uⁿ|, |u|))), û SDIRK4's embedded
// solution (den 1) or the whole step's end (den 2^p − 1). ok is false where
// a solve met a value that is not finite (the estimate is then +Inf).
// Collective.
func (s *Solver) attempt(t, dt, end, endTerms float64) (est float64, ok bool, err error) {
	c := s.ctrl
	t0 := time.Now()
	if !c.started {
		// The first attempt's start; later ones were written by the pass
		// that made the field kept (estimate, extrapolate).
		s.parallel(func(lo, hi int) { copy(c.un[lo:hi], s.u[lo:hi]) })
		c.started = true
	}
	s.acct.save(&c.acct)
	s.stats.Control += time.Since(t0)
	den := 1.0
	if s.spec.Scheme == SDIRK4 {
		err = s.sdirkStep(c.un, t, dt, endTerms)
	} else {
		err = s.doubled(t, dt, end, endTerms)
		den = float64(int(1)<<s.order() - 1)
	}
	if err != nil {
		s.u = s.mg.Field()
		return 0, false, err
	}
	if s.spec.Scheme == SDIRK4 {
		s.sdirkEmbedded(c.u1) // û beside the stages' end
	}
	t0 = time.Now()
	defer func() { s.stats.Control += time.Since(t0) }()
	est, err = s.estimate(den)
	if err != nil {
		return 0, false, err
	}
	return est, !math.IsNaN(est) && !math.IsInf(est, 0), nil
}

// doubled takes a θ-scheme's step whole (its end to the controller's u1,
// for the estimate only), then as two halves, which it keeps.
func (s *Solver) doubled(t, dt, end, endTerms float64) error {
	c := s.ctrl
	if err := s.implicitTo(t, dt, endTerms); err != nil {
		return err
	}
	// Its end is kept by taking the multigrid's buffer (u1's becomes the
	// iterate, which the first half's first iterate overwrites whole); the
	// first half starts from the saved uⁿ, so nothing is copied back.
	t0 := time.Now()
	c.u1 = s.mg.SetField(c.u1)
	s.u = c.un
	s.acct.save(&c.full)
	s.acct.restore(c.acct)
	s.stats.Control += time.Since(t0)
	// The two halves: the step kept, each solve starting from the whole
	// step's values (halfway, then its end) rather than from its uⁿ.
	h := dt / 2
	mid := t + h
	c.guess = halfway
	err := s.implicitTo(t, h, mid)
	if err == nil {
		s.simTime = mid
		c.guess = wholeEnd
		err = s.implicitTo(mid, end-mid, endTerms)
	}
	s.simTime, c.guess = t, fromStart
	return err
}

// extrapolate replaces backward Euler's two halves by 2·u_halves − u_whole
// (Richardson): second order and, like backward Euler, L-stable (the
// amplification 2/(1 − z/2)² − 1/(1 − z) goes to 0 as z → −∞); the error
// estimate, of the halves, bounds it. It writes the result to the next
// step's start too. The energy account is extrapolated alike (it is linear
// in the steps' flows), so the balance still closes.
func (s *Solver) extrapolate() {
	c := s.ctrl
	s.parallel(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := float64(2*s.u[i]) - c.u1[i]
			s.u[i], c.next[i] = x, x
		}
	})
	if e := s.acct; e != nil {
		st := c.full
		e.source = float64(2*e.source) - st.source
		for k := range e.faces {
			for j, v := range e.faces[k].in {
				e.faces[k].in[j] = float64(2*v) - st.faces[k][j]
			}
		}
		for k := range e.held {
			e.held[k].in = float64(2*e.held[k].in) - st.held[k]
		}
	}
}

// restoreStart puts the field and the energy account back to the step's
// start.
func (s *Solver) restoreStart() {
	c := s.ctrl
	u := s.mg.Field()
	s.parallel(func(lo, hi int) { copy(u[lo:hi], c.un[lo:hi]) })
	s.u = u
	s.acct.restore(c.acct)
}

// parallel runs f over the workers' shares [lo, hi) of the field's slice
// (ghosts included).
func (s *Solver) parallel(f func(lo, hi int)) {
	n := len(s.u)
	s.team.Run(s.parts, func(w int) {
		lo, hi := decomp.Split(n, s.parts, w)
		f(lo, hi)
	})
}

// first sets the field to the first iterate of a solve whose right-hand
// side is built: the attempt's guess, where it has one.
func (s *Solver) first() {
	c := s.ctrl
	if c == nil || c.guess == fromStart {
		return
	}
	u := s.mg.Field()
	s.parallel(func(lo, hi int) {
		if c.guess == wholeEnd {
			copy(u[lo:hi], c.u1[lo:hi])
			return
		}
		for i := lo; i < hi; i++ {
			u[i] = 0.5 * (c.un[i] + c.u1[i])
		}
	})
	s.u = u
}

// implicitTo is one implicit step from t of length dt, its end terms taken
// at endTerms.
func (s *Solver) implicitTo(t, dt, endTerms float64) error {
	c := s.ctrl
	c.dt, c.endTerms = dt, endTerms
	s.simTime = t
	return s.implicitStep()
}

// estimate is the global max over the free cells of |u − u1| / (den·(atol +
// rtol·max(|uⁿ|, |u|))): the same on every rank. Collective. Where the
// field is kept as it is (all but backward Euler's), it copies the box's cells of u
// to the next step's start in the same pass.
func (s *Solver) estimate(den float64) (float64, error) {
	c := s.ctrl
	u, u1, un, next := s.u, c.u1, c.un, c.next
	keep := s.spec.Scheme != BackwardEuler
	rtol, atol := c.a.RTol, c.a.ATol
	// The vector kernels' pass, which also writes the next step's start
	// where the field is kept as it is.
	d, err := s.rowMaxes(1, func(lo, hi int, m []float64) {
		var nx []float64
		if keep {
			nx = next[lo:hi]
		}
		m[0] = max(m[0], operator.StepError(u[lo:hi], u1[lo:hi], un[lo:hi], nx, den, atol, rtol))
	})
	if err != nil {
		return 0, err
	}
	return d[0], nil
}

// rowMaxes is, for each of the k (at most 2) running maxima that row keeps
// in m over a row [lo, hi) of the box's own cells, its maximum over the
// grid: each worker over its rows, then one max-reduction, the same on
// every rank (a NaN anywhere is the result). Collective.
func (s *Solver) rowMaxes(k int, row func(lo, hi int, m []float64)) ([]float64, error) {
	c := s.ctrl
	s.team.Run(s.parts, func(w int) {
		m := c.maxes[k*w : k*w+k]
		clear(m)
		for _, r := range [2]*region{&s.inner, &s.rim} {
			for _, rw := range r.rows[r.share[w]:r.share[w+1]] {
				row(rw.Start, rw.Start+rw.N, m)
			}
		}
	})
	local := make([]float64, k)
	for w := range s.parts {
		for j := range k {
			local[j] = max(local[j], c.maxes[k*w+j])
		}
	}
	out := make([]float64, k)
	err := s.c.Allreduce(comm.Max, local, out)
	return out, err
}

// accountState is the energy account's integrals at a step's start, to go
// back to when an attempt is not kept.
type accountState struct {
	faces  [][]float64
	held   []float64
	source float64
}

// save copies the integrals into st, reusing its slices (nil account:
// nothing).
func (e *energy) save(st *accountState) {
	if e == nil {
		return
	}
	st.source = e.source
	if len(st.faces) != len(e.faces) {
		st.faces = make([][]float64, len(e.faces))
	}
	for k := range e.faces {
		st.faces[k] = append(st.faces[k][:0], e.faces[k].in...)
	}
	st.held = st.held[:0]
	for k := range e.held {
		st.held = append(st.held, e.held[k].in)
	}
}

// restore sets the integrals back to st.
func (e *energy) restore(st accountState) {
	if e == nil {
		return
	}
	e.source = st.source
	for k := range e.faces {
		copy(e.faces[k].in, st.faces[k])
	}
	for k := range e.held {
		e.held[k].in = st.held[k]
	}
}
