package solver

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"heat/comm"
	"heat/multigrid"
	"heat/operator"
	"heat/plan"
)

// Equation is what a Solver advances.
type Equation int

const (
	// Heat is u_t = α∇²u + f, explicit forward Euler in time (FTCS).
	Heat Equation = iota
	// Poisson is ∇²u = f, solved by Jacobi iteration.
	Poisson
)

func (e Equation) String() string {
	if e == Poisson {
		return "poisson"
	}
	return "heat"
}

// BC is the kind of a boundary condition on one face (operator.BC).
type BC = operator.BC

// The boundary kinds.
const (
	Dirichlet = operator.Dirichlet
	Neumann   = operator.Neumann
	Periodic  = operator.Periodic
	Robin     = operator.Robin
)

// Face is the boundary condition on one face of the global grid.
type Face = operator.Face

// Profile gives a field's value at the cell centre x (physical coordinates,
// C order) of global cell idx. It must depend only on x and idx, so that
// every decomposition sets the same values.
type Profile func(x []float64, idx []int) float64

// Spec is everything a Solver needs: the problem, how long to run, and how
// the work is split.
type Spec struct {
	Shape  []int     // global cells per axis, C order
	Length []float64 // physical extent per axis; cell size h = Length/Shape
	Ghost  int       // ghost layers (>= 1)

	Equation Equation
	Alpha    float64 // diffusivity (heat)
	DT       float64 // time step (heat); within the stability limit when explicit
	Scheme   Scheme  // heat: explicit, backward Euler or Crank–Nicolson
	// TEnd, when > 0, is the time a heat run ends at: its last step (step
	// Steps) is shortened to TEnd − (Steps−1)·DT.
	TEnd float64
	// Adaptive, when set (implicit heat with TEnd), chooses each step from
	// an estimate of its own error (adaptive.go); Steps is then a cap, DT
	// the step the source's scale and the operator start from.
	Adaptive *Adaptive

	// Multigrid solves Poisson by multigrid cycles instead of weighted
	// Jacobi sweeps; implicit heat steps always use it.
	Multigrid bool
	MG        multigrid.Options
	FMG       bool // poisson: the first cycle is full multigrid
	// EndF solves SDIRK4's last stage by F-cycles whatever MG.Cycle is:
	// its solve residual is the one that enters the step's end and the
	// energy balance, and a V-cycle leaves a smooth, one-signed residual
	// whose sum the componentwise backward error bounds only loosely
	// (multigrid.cycle "auto": the stages by V(4,3), the last by F(4,3)).
	EndF bool
	// CG solves Poisson by conjugate gradients preconditioned with one
	// multigrid cycle (mgcg; Multigrid must be set too): each step is one
	// iteration, and Tolerance bounds the componentwise backward error
	// max_i |f − Au|_i/((|A||u|)_i + |f_i|) (multigrid.ComponentError).
	CG        bool
	MaxCycles int // implicit heat: cycles per step before failing (0: 50)

	Steps      int     // heat: steps; poisson: iteration (cycle) cap
	Tolerance  float64 // Jacobi: stop once max|Δu| < Tolerance at a check; multigrid: relative residual ‖b−Au‖∞/‖b‖∞
	CheckEvery int     // steps between residual checks (>= 1)

	Faces [][2]Face // per axis: low and high face
	// FaceAt gives the value (and Robin's h) of the faces marked Varies at
	// a face centre and time; FacesInTime says some depend on t, so the
	// solver sets them again at every step's times (explicit: its start;
	// implicit: its end, Crank–Nicolson's explicit half its start).
	FaceAt      operator.FaceAt
	FacesInTime bool
	// Media, when set, gives the heterogeneous media of a box; nil: the
	// uniform medium k = Alpha, ρc = 1. With media an explicit heat run's
	// DT may be 0: 0.9 × the media's stability limit (and Steps, 0 with
	// TEnd set, then follows from it).
	Media   MediaFunc
	Initial Profile
	// InitialField, when set, gives the initial u of the box [lo, hi) of
	// global cells (C order, last axis fastest) in place of Initial: a
	// field read from a file, each rank its own box. Every rank calls it
	// from New, so it may be collective over c.
	InitialField func(c comm.Comm, lo, hi []int) ([]float64, error)
	Source       Profile // nil: no source
	// SourceField, when set, gives the source of the box [lo, hi) as
	// InitialField gives u (a field read from a file), in place of Source.
	SourceField func(c comm.Comm, lo, hi []int) ([]float64, error)
	// SourceAt, when set, is the source at time t (it depends on t): the
	// solver evaluates it at the times its scheme's terms belong to
	// (explicit: a step's start; backward Euler: its end; Crank–Nicolson:
	// both), in place of Source.
	SourceAt func(t float64) Profile
	// SourceKey, when set with SourceAt, names the source's field at a
	// time: equal keys, equal fields (a switch not yet thrown, a table's
	// flat stretch), so the solver keeps the field it has.
	SourceKey func(t float64) string
	// SourceWeight, when set, is the source's factor of
	// time alone: the source is SourceWeight(t)·SourceAt(t), its field
	// filled where SourceKey changes and the weight taken each step into
	// the update's source coefficient (a heater on a cycle costs one
	// evaluation a step, not one a cell). Where the kernels take no such
	// coefficient (the media's explicit step), New multiplies it in.
	// Without SourceAt it weighs Source (or SourceField) alone.
	SourceWeight func(t float64) float64

	Dims    []int // process grid; nil: automatic
	Threads int   // worker goroutines per rank (>= 1)

	// Trace, when set, receives each rank's events in order ("start",
	// "interior", "finish", "rim" per step). A test hook.
	Trace func(rank int, event string)
	// OnCheck, when set, is called on every rank after each check with the
	// step reached and the global residual.
	OnCheck func(step int, residual float64)
}

// MediaFunc gives the media of the box [lo, hi) of global cells, C order
// (last axis fastest): conductivity k (0: an insulating hole), volumetric
// heat capacity ρc, and the value each held cell keeps (NaN: free). Every
// rank calls it from New with its own box, so it may be collective over c
// (a checkpoint's arrays read back).
type MediaFunc func(c comm.Comm, lo, hi []int) (k, rhoC, held []float64, err error)

// Spacing is the cell size along each axis.
func (s *Spec) Spacing() []float64 {
	h := make([]float64, len(s.Shape))
	for a := range h {
		h[a] = s.Length[a] / float64(s.Shape[a])
	}
	return h
}

// Check says whether the spec can run as given, the decisions New makes
// before any work (a caller checks a run with it before it writes
// anything): axes, ghost layers against faces, sources and media, the
// time step against the stability limit.
func (s *Spec) Check() error {
	nd := len(s.Shape)
	if nd != 2 && nd != 3 {
		return fmt.Errorf("solver: need a 2D or 3D grid, got %d axes", nd)
	}
	if len(s.Length) != nd || len(s.Faces) != nd {
		return fmt.Errorf("solver: shape, length and faces must all have %d axes", nd)
	}
	if s.Ghost < 1 {
		return fmt.Errorf("solver: ghost width %d < 1", s.Ghost)
	}
	if s.Threads < 1 {
		return fmt.Errorf("solver: %d threads < 1", s.Threads)
	}
	if s.CheckEvery < 1 {
		return fmt.Errorf("solver: check every %d steps < 1", s.CheckEvery)
	}
	if s.Initial == nil && s.InitialField == nil {
		return fmt.Errorf("solver: no initial condition")
	}
	for a, f := range s.Faces {
		if (f[0].Kind == Periodic) != (f[1].Kind == Periodic) {
			return fmt.Errorf("solver: axis %d is periodic on one face only", a)
		}
		for _, side := range f {
			if side.Varies && s.FaceAt == nil {
				return fmt.Errorf("solver: a varying %s face without FaceAt", side.Kind)
			}
		}
	}
	if _, r := plan.Decide(s.Case()); r != nil {
		return fmt.Errorf("solver: %w", r)
	}
	if s.Equation == Heat {
		if s.Alpha <= 0 {
			return fmt.Errorf("solver: diffusivity %g must be positive", s.Alpha)
		}
		if lim := operator.NewUniform(s.Alpha, s.Spacing()).StableDT(); s.Media == nil && s.Scheme == Explicit && !(s.DT > 0 && s.DT <= lim) {
			return fmt.Errorf("solver: time step %g outside (0, %g], the stability limit", s.DT, lim)
		}
		autoDT := s.Media != nil && s.Scheme == Explicit && s.DT == 0
		if !(s.DT > 0) && !autoDT {
			return fmt.Errorf("solver: time step %g must be positive", s.DT)
		}
		if a := s.Adaptive; a != nil {
			return s.checkAdaptive(a)
		}
		if !autoDT && s.TEnd > 0 && s.Steps > 0 && !(s.LastDT() > 0 && s.LastDT() <= s.DT*(1+1e-9)) {
			return fmt.Errorf("solver: %d steps of %g do not end at t = %g", s.Steps, s.DT, s.TEnd)
		}
	}
	return nil
}

// checkAdaptive checks the steps that choose themselves: implicit steps to
// a TEnd, tolerances and bounds in order, events ascending up to TEnd.
func (s *Spec) checkAdaptive(a *Adaptive) error {
	switch {
	case s.Scheme == Explicit:
		return fmt.Errorf("solver: steps that choose themselves are implicit steps; the explicit step is its stability limit's")
	case !(s.TEnd > 0):
		return fmt.Errorf("solver: steps that choose themselves need an end time")
	case !(a.RTol > 0) || !(a.ATol >= 0):
		return fmt.Errorf("solver: tolerances rtol %g, atol %g: rtol must be positive, atol not negative", a.RTol, a.ATol)
	case !(a.DTMin > 0 && a.DTMin <= a.DTMax && (a.DTInitial == 0 || a.DTMin <= a.DTInitial && a.DTInitial <= a.DTMax)):
		return fmt.Errorf("solver: steps dt_min %g, dt_initial %g, dt_max %g out of order", a.DTMin, a.DTInitial, a.DTMax)
	case len(a.Events) == 0 || a.Events[len(a.Events)-1] != s.TEnd:
		return fmt.Errorf("solver: the events must end at t_end = %g", s.TEnd)
	case !slices.IsSorted(a.Events):
		return fmt.Errorf("solver: events out of order")
	}
	return nil
}

// Scheme is how a heat step advances in time.
type Scheme int

const (
	// Explicit is forward Euler (FTCS), stable for dt up to StableDT.
	Explicit Scheme = iota
	// BackwardEuler solves (I − dt·α∇²)uⁿ⁺¹ = uⁿ + dt·f: first order, stable
	// for any dt.
	BackwardEuler
	// CrankNicolson solves (I − ½dt·α∇²)uⁿ⁺¹ = (I + ½dt·α∇²)uⁿ + dt·f:
	// second order, stable for any dt.
	CrankNicolson
	// SDIRK4 is five implicit stages a step (solver/sdirk.go): fourth
	// order, L-stable, with an embedded third-order error estimate.
	SDIRK4
)

func (s Scheme) String() string { return plan.Schemes[s] }

// theta is the implicit weight θ of the scheme.
// SDIRK4's is each stage's, γ.
func (s Scheme) theta() float64 {
	switch s {
	case CrankNicolson:
		return 0.5
	case SDIRK4:
		return sdirkGamma
	}
	return 1
}

// Case is the spec as the plan sees it.
func (s *Spec) Case() plan.Case {
	c := plan.Case{Poisson: s.Equation == Poisson, Scheme: s.Scheme.String(), Solver: "multigrid",
		Media: s.Media != nil, Ghost: s.Ghost, SourceInTime: s.SourceAt != nil,
		Smoother: s.MG.Smoother.String(), FMG: s.FMG}
	switch {
	case s.Equation == Poisson && !s.Multigrid:
		c.Solver = "jacobi"
	case s.CG:
		c.Solver = "mgcg"
	}
	for _, f := range s.Faces {
		c.PerCellFaces = c.PerCellFaces || f[0].PerCell() || f[1].PerCell()
	}
	return c
}

// Plan is what the spec runs, as the plan decides it (a spec the plan
// refuses fails Check).
func (s *Spec) Plan() plan.Plan {
	p, _ := plan.Decide(s.Case())
	return p
}

// usesMG reports whether the run is solved by multigrid (plain cycles or
// mgcg).
func (s *Spec) usesMG() bool {
	m := s.Plan().Method
	return m == plan.Multigrid || m == plan.MGCG
}

// LastDT is the length of step Steps: shortened to end at TEnd, or DT.
func (s *Spec) LastDT() float64 {
	if s.TEnd > 0 {
		return s.TEnd - float64(float64(s.Steps-1)*s.DT)
	}
	return s.DT
}

// timeAt is the simulated time after step n.
func (s *Spec) timeAt(n int) float64 {
	if s.TEnd > 0 && n >= s.Steps {
		return s.TEnd
	}
	return float64(n) * s.DT
}

// Periodic says which axes wrap around (both faces periodic).
func (s *Spec) Periodic() []bool {
	p := make([]bool, len(s.Faces))
	for a, f := range s.Faces {
		p[a] = f[0].Kind == Periodic
	}
	return p
}

// Constant is v everywhere.
func Constant(v float64) Profile {
	return func([]float64, []int) float64 { return v }
}

// Hotspot is value inside the disc or ball of radius r around center and
// background outside.
func Hotspot(center []float64, r, value, background float64) Profile {
	return func(x []float64, _ []int) float64 {
		d2 := 0.0
		for a := range x {
			d := x[a] - center[a]
			d2 += float64(d * d)
		}
		if d2 <= r*r {
			return value
		}
		return background
	}
}

// Gaussian is background + value·exp(−|x−center|²/(2σ²)).
func Gaussian(center []float64, sigma, value, background float64) Profile {
	return func(x []float64, _ []int) float64 {
		d2 := 0.0
		for a := range x {
			d := x[a] - center[a]
			d2 += float64(d * d)
		}
		return background + float64(value*math.Exp(-d2/(2*sigma*sigma)))
	}
}

// Sine is background + value·Π sin(mode[a]·π·x[a]/length[a]): with zero
// Dirichlet faces it is an eigenmode of the discrete Laplacian.
func Sine(mode []int, length []float64, value, background float64) Profile {
	return func(x []float64, _ []int) float64 {
		p := value
		for a := range x {
			p *= math.Sin(float64(mode[a]) * math.Pi * x[a] / length[a])
		}
		return background + p
	}
}

// Random is background + value·U[0,1), where U depends only on seed and the
// global cell index (not on the split).
func Random(shape []int, seed int64, value, background float64) Profile {
	return func(_ []float64, idx []int) float64 {
		k := uint64(0)
		for a, i := range idx {
			k = k*uint64(shape[a]) + uint64(i)
		}
		z := splitmix(uint64(seed)*0x9E3779B97F4A7C15 ^ splitmix(k))
		return background + float64(value*float64(z>>11)/(1<<53))
	}
}

func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// weighs reports whether the steps take SourceWeight as a coefficient:
// the heat equation's uniform explicit step (its source weight CF) and the
// implicit steps (the right-hand side's source scale).
func (s *Spec) weighs() bool {
	return s.Equation == Heat && s.Ghost == 1 && (s.usesMG() || s.Media == nil)
}

// unweighted is s with SourceWeight multiplied into SourceAt (and its
// value into SourceKey), for the steps that take no weight.
func (s Spec) unweighted() Spec {
	at, w, key := s.SourceAt, s.SourceWeight, s.SourceKey
	s.SourceAt = func(t float64) Profile {
		p, c := at(t), w(t)
		return func(x []float64, idx []int) float64 { return float64(c * p(x, idx)) }
	}
	if key != nil {
		s.SourceKey = func(t float64) string {
			return key(t) + "\x00w=" + strconv.FormatUint(math.Float64bits(w(t)), 16)
		}
	}
	s.SourceWeight = nil
	return s
}
