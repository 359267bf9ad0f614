// Package config turns what a user typed — a TOML file, --set overrides and
// dedicated flags — into one resolved, validated Config.
//
// Layers apply in a fixed order, each overriding only the keys it names:
//
//	built-in defaults (Default) < config file < --set key=value < dedicated flags
//
// With no config file the base is the embedded default problem
// (configs/default.toml). Every layer is strict: a key outside the schema or a
// value of the wrong type is an error that names its source, so a typo never
// silently runs the wrong problem. Validation errors are *Error values naming
// the source, the key and the offending value; callers tell them apart from
// bugs with errors.As and exit with the usage/config exit code.
//
// Axes are listed in C order, slowest first: grid.shape = [ny, nx] or
// [nz, ny, nx], and a process grid "4x2" has 4 ranks along y and 2 along x.
package config

import (
	"math"
	"strings"

	"heat/decomp"
	"heat/operator"
	"heat/plan"
)

// Boundary condition kinds.
const (
	Dirichlet = "dirichlet"
	Neumann   = "neumann"
	Periodic  = "periodic"
	Robin     = "robin"
)

// Equation kinds.
const (
	Heat    = "heat"
	Poisson = "poisson"
)

// Error is a configuration mistake: the source that set the value (a file
// name, "built-in default", "--set key=value", "--steps"; empty when
// unknown), the dotted config key (empty when the mistake is not about one
// key) and what is wrong, with the offending value.
type Error struct {
	Source, Key, Msg string
}

// Error formats the mistake as "Source: Key: Msg", leaving out empty parts.
func (e *Error) Error() string {
	parts := make([]string, 0, 3)
	for _, p := range []string{e.Source, e.Key, e.Msg} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ": ")
}

// Default is the built-in configuration under every layer, the same values
// as the built-in default problem (configs/default.toml; a test holds them
// equal): a 512×512 heat problem, 2000 explicit steps, with a hot disc in
// the middle and cold Dirichlet walls. Lengths and
// profile centres are left nil; resolution fills them from the grid.
func Default() *Config {
	return &Config{
		Grid: Grid{Shape: []int{512, 512}, Ghost: 1},
		Equation: Equation{
			Kind:   Heat,
			Solver: "multigrid",
			Scheme: "explicit",
			Alpha:  1.0,
		},
		Run:      Run{Steps: 2000, CheckEvery: 10, Events: []float64{}},
		Boundary: Boundary{Kind: Dirichlet},
		Initial:  Profile{Kind: "hotspot", Value: 1, Radius: 0.1, Seed: 1},
		Source:   Profile{Kind: "none"},
		Parallel: Parallel{Ranks: 1, Dims: []int{}},
		Output: Output{Dir: "heat-out", Fingerprint: true, Formats: []string{"png"}, Slice: "z=mid", Cmap: "viridis",
			Range: []float64{}, ImageSize: 1024, Label: "u", ImageFormat: "png", DiagnosticsEvery: 10, ProgressEvery: 30, ProbeEvery: 1},
		Checkpoint: Checkpoint{Keep: 2, Level: 1, Chunk: []int{}, Async: true},
		Multigrid:  Multigrid{Smoother: "chebyshev", Cycle: "auto", Interpolation: "linear", MaxCycles: 50},
	}
}

// NDim is the number of axes of the grid (2 or 3 once validated).
func (c *Config) NDim() int { return len(c.Grid.Shape) }

// faceRef is one per-face override with its key name, such as "x_lo".
type faceRef struct {
	name string
	face *Face
}

// faces lists the six per-face overrides, nil where not set.
func (b *Boundary) faces() [6]faceRef {
	return [6]faceRef{
		{"z_lo", b.ZLo}, {"z_hi", b.ZHi},
		{"y_lo", b.YLo}, {"y_hi", b.YHi},
		{"x_lo", b.XLo}, {"x_hi", b.XHi},
	}
}

// faceName is the key name of axis a (C order), side 0 (lo) or 1 (hi) of an
// ndim-axis grid, such as "x_lo".
func faceName(ndim, axis, side int) string {
	return decomp.AxisName(ndim, axis) + [2]string{"_lo", "_hi"}[side]
}

// FaceName is the key name of a face of c's grid, such as "x_lo".
func (c *Config) FaceName(axis, side int) string { return faceName(c.NDim(), axis, side) }

// FaceOverride is the [boundary.<face>] table of a face, or nil.
func (c *Config) FaceOverride(axis, side int) *Face { return c.face(axis, side) }

// face is the per-face override of axis a, side s, or nil.
func (c *Config) face(axis, side int) *Face {
	name := faceName(c.NDim(), axis, side)
	for _, r := range c.Boundary.faces() {
		if r.name == name {
			return r.face
		}
	}
	return nil
}

// FaceKind is the boundary condition on one face: axis in C order (in 2D 0 is
// y and 1 is x; in 3D 0 is z), side 0 for the low face and 1 for the high
// face. A per-face override wins over the [boundary] defaults field by
// field; a face without a value of its own takes boundary.value when it is
// dirichlet or of boundary.kind (a neumann face under a dirichlet default
// stays insulated), else 0. Periodic faces take no value.
func (c *Config) FaceKind(axis, side int) (kind string, value Value) {
	kind = c.Boundary.Kind
	f := c.face(axis, side)
	if f != nil && f.Kind != "" {
		kind = f.Kind
	}
	switch {
	case f != nil && f.Value != nil:
		value = *f.Value
	case kind == Dirichlet || kind == c.Boundary.Kind:
		value = c.Boundary.Value
	}
	return kind, value
}

// FaceH is a robin face's heat-transfer coefficient: its own, else
// boundary.h; nil when neither is given.
func (c *Config) FaceH(axis, side int) *Value {
	if f := c.face(axis, side); f != nil && f.H != nil {
		return f.H
	}
	return c.Boundary.H
}

// Periodic reports per axis (C order) whether the axis wraps around. A valid
// config is periodic on both faces of an axis or on neither.
func (c *Config) Periodic() []bool {
	p := make([]bool, c.NDim())
	for a := range p {
		k, _ := c.FaceKind(a, 0)
		p[a] = k == Periodic
	}
	return p
}

// StabilityLimit is the largest stable time step of the explicit (FTCS) heat
// scheme on c's grid, 1/(2·α·Σ_a 1/h_a²) with h_a = length[a]/shape[a]. An
// unset length counts as 1.0. It is +Inf when the grid or α is degenerate;
// validation rejects such configs first.
func (c *Config) StabilityLimit() float64 {
	d := operator.NewUniform(c.Equation.Alpha, c.Grid.Geometry().Spacing()).StableDT()
	if !(d > 0) || math.IsNaN(d) {
		return math.Inf(1)
	}
	return d
}

// TimeStep is the time step the heat solver takes: equation.dt, or 0.9× the
// stability limit when dt is 0 (automatic). Poisson (Jacobi) has no time
// step and gets 0.
func (c *Config) TimeStep() float64 {
	if c.Equation.Kind == Poisson {
		return 0
	}
	if c.Adaptive() {
		// The first step where one is given; else the scale the source is
		// laid out at (the solver chooses the first step itself).
		e := c.Equation
		if e.DTInitial > 0 {
			return e.DTInitial
		}
		return max(e.DTMin, min(e.DTMax, c.Run.TEnd*1e-6))
	}
	if c.Equation.DT.V > 0 || c.Implicit() {
		return c.Equation.DT.V
	}
	return operator.SafetyFactor * c.StabilityLimit()
}

// EndsAtTEnd reports whether the heat run ends at run.t_end, its last
// step shortened to land on it: t_end is set and run.steps is the step
// count that reaches it. Where run.steps came first (both given, fewer
// steps than t_end takes), the run ends after run.steps steps, short of
// t_end, and this is false.
func (c *Config) EndsAtTEnd() bool {
	if c.Adaptive() {
		return c.Run.TEnd > 0 // run.steps caps the steps; the run ends at t_end unless it comes first
	}
	return c.Equation.Kind == Heat && c.Run.TEnd > 0 && plan.StepsTo(c.Run.TEnd, c.TimeStep()) == c.Run.Steps
}

// Adaptive reports whether an implicit heat run chooses its own steps
// (equation.dt = "auto").
func (c *Config) Adaptive() bool { return c.Implicit() && c.Equation.DT.Auto }

// Implicit reports whether heat steps are implicit (solved by multigrid).
func (c *Config) Implicit() bool {
	return c.Equation.Kind == Heat && c.Equation.Scheme != "explicit"
}

// Case is the config as the plan sees it. What the config alone cannot
// tell (a face or source that the run will evaluate cell by cell or in
// time) the solver's own Case adds, and the run refuses it before any work.
func (c *Config) Case() plan.Case {
	return plan.Case{Poisson: c.Equation.Kind == Poisson, Scheme: c.Equation.Scheme, Solver: c.Equation.Solver,
		Media: !c.Media().Uniform(), Ghost: c.Grid.Ghost, Smoother: c.Multigrid.Smoother, FMG: c.Multigrid.Cycle == "fmg"}
}

// UsesMultigrid reports whether the run is solved by multigrid: Poisson
// with solver "multigrid" or "mgcg", and implicit heat steps (the plan
// decides).
func (c *Config) UsesMultigrid() bool {
	p, _ := plan.Decide(c.Case())
	return p.Method == plan.Multigrid || p.Method == plan.MGCG
}
