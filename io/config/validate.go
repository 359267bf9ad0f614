package config

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"heat/decomp"
	"heat/internal/team"
	"heat/io/expr"
	"heat/io/heatmap"
	"heat/operator"
	"heat/plan"
)

// Limits of the accepted values.
const (
	// MaxGhost is the widest ghost layer (grid.ghost).
	MaxGhost = 8
	// MaxRanks bounds parallel.ranks: far beyond today's largest MPI jobs,
	// and low enough that choosing a process grid stays quick.
	MaxRanks = 1 << 24
	// MaxSteps bounds the steps run.t_end may take: a million seconds at
	// a million steps a second.
	MaxSteps = 1e12
	// MaxThreads bounds parallel.threads: far more than the cores of any
	// node, and well under what a rank's team of workers can index
	// (team.MaxWorkers, 16383; 65,537 threads hung the run).
	MaxThreads = 4096
	// MaxCells bounds the cells of grid.shape, 2^40 (8 TiB a field): every
	// size computed from it — cells with ghosts, times 8 bytes, times the
	// fields of a run — then stays far from overflowing an int64.
	MaxCells = 1 << 40
)

// A rank's team can run MaxThreads workers (this fails to compile if not).
var _ [team.MaxWorkers - MaxThreads]struct{}

// Allowed kinds, in the order messages list them.
var (
	equationKinds = []string{Heat, Poisson}
	solverKinds   = []string{"multigrid", "mgcg", "jacobi"}
	schemeKinds   = plan.Schemes
	smootherKinds = plan.Smoothers
	cycleKinds    = append([]string{"auto"}, append(slices.Clone(plan.Cycles), "fmg")...)
	interpKinds   = []string{"linear", "constant"}
	boundaryKinds = []string{Dirichlet, Neumann, Robin, Periodic}
	initialKinds  = []string{"constant", "hotspot", "gaussian", "sine", "random", "expr", "file"}
	sourceKinds   = []string{"none", "constant", "hotspot", "gaussian", "sine", "random", "expr", "file"}
)

// checker validates one Config, naming for each bad key the layer that set
// it.
type checker struct {
	c   *Config
	src *sources
}

// bad is the *Error for key with a message; the source is the layer that
// last set key.
func (k *checker) bad(key, format string, args ...any) *Error {
	return &Error{Source: k.src.of(key), Key: key, Msg: fmt.Sprintf(format, args...)}
}

// note is something the user should hear about the config, not an error;
// the run prints it as a warning.
func (k *checker) note(format string, args ...any) {
	k.src.notes = append(k.src.notes, fmt.Sprintf(format, args...))
}

// finish fills the derived defaults of c and validates it: first each key on
// its own, then the keys together (stability, process grid, box widths).
// The first mistake found is returned as an *Error.
func finish(c *Config, src *sources) error {
	k := &checker{c: c, src: src}
	for _, step := range []func() *Error{
		k.finite, k.grid, k.equation, k.run, k.multigrid, k.boundary,
		func() *Error { return k.profile("initial", &c.Initial, initialKinds) },
		func() *Error { return k.profile("source", &c.Source, sourceKinds) },
		k.parallel, k.output, k.probes, k.checkpoint, k.decomposition,
		k.media, // last: it reads the map files
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// finite refuses NaN and ±Inf in every float key of the config, used or
// not, naming the key: it walks the schema (the toml tags), so a new key
// is covered without a check of its own.
func (k *checker) finite() *Error {
	return k.finiteIn(reflect.ValueOf(k.c).Elem(), "")
}

// finiteIn is finite for the value v of the dotted key key ("" for the
// whole config).
func (k *checker) finiteIn(v reflect.Value, key string) *Error {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			return k.finiteIn(v.Elem(), key)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("toml"), ",")
			if name == "" {
				continue // not a key: the parts of a value such as Shard
			}
			if key != "" {
				name = key + "." + name
			}
			if err := k.finiteIn(v.Field(i), name); err != nil {
				return err
			}
		}
	case reflect.Float64:
		if isNaNInf(v.Float()) {
			return k.bad(key, "must be a finite number (got %s)", formatFloat(v.Float()))
		}
	case reflect.Slice:
		if xs, ok := v.Interface().([]float64); ok && slices.ContainsFunc(xs, isNaNInf) {
			return k.bad(key, "must hold finite numbers (got %s)", floats(xs))
		}
		if v.Type().Elem().Kind() == reflect.Struct { // an array of tables: material[i]
			for i := range v.Len() {
				if err := k.finiteIn(v.Index(i), fmt.Sprintf("%s[%d]", key, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (k *checker) grid() *Error {
	g := &k.c.Grid
	if n := len(g.Shape); n != 2 && n != 3 {
		return k.bad("grid.shape", "must have 2 or 3 entries, [ny, nx] or [nz, ny, nx] (got %v)", g.Shape)
	}
	if slices.Min(g.Shape) < 1 {
		return k.bad("grid.shape", "must be positive (got %v)", g.Shape)
	}
	if cells, ok := product(g.Shape); !ok || cells > MaxCells {
		count := fmt.Sprintf("%d cells", cells)
		if !ok {
			count = "more cells than a 64-bit integer holds"
		}
		return k.bad("grid.shape", "%v has %s, more than the %d (2^40) a grid may have", g.Shape, count, MaxCells)
	}
	if len(g.Length) == 0 {
		g.Length = make([]float64, len(g.Shape))
		for a := range g.Length {
			g.Length[a] = 1
		}
	}
	if len(g.Length) != len(g.Shape) {
		return k.bad("grid.length", "has %d entries but grid.shape has %d (got %v)", len(g.Length), len(g.Shape), floats(g.Length))
	}
	for _, l := range g.Length {
		if !(l > 0) {
			return k.bad("grid.length", "must be positive (got %v)", floats(g.Length))
		}
	}
	if err := k.cellSize(); err != nil {
		return err
	}
	if g.Ghost < 1 || g.Ghost > MaxGhost {
		return k.bad("grid.ghost", "must be between 1 and %d (got %d)", MaxGhost, g.Ghost)
	}
	return nil
}

// cellSize refuses grid lengths whose cells are too small or too large
// for the discrete operator: its coefficients are 1/h² per axis, and the
// explicit stability limit 1/(2·Σ1/h²) (for k = 1) must be a positive
// number. A cell of 1e-300 squares to 0 and one of 1e300 to +Inf, and the
// run stepped with dt = +Inf.
func (k *checker) cellSize() *Error {
	g := &k.c.Grid
	nd, h := len(g.Shape), g.Geometry().Spacing()
	for a := range nd {
		if h2 := h[a] * h[a]; !(1/h2 > 0) || math.IsInf(1/h2, 0) {
			why := "whose 1/h² overflows"
			switch {
			case h2 == 0:
				why = "whose square is 0 in double precision"
			case math.IsInf(h2, 0):
				why = "whose square overflows"
			}
			return k.bad("grid.length", "%s over %d cells makes cells of %s along %s, %s: the operator's 1/h² and the stability limit of explicit steps would not be finite and positive; use cells of about 1e-154 to 1e154",
				formatFloat(g.Length[a]), g.Shape[a], formatFloat(h[a]), decomp.AxisName(nd, a), why)
		}
	}
	if d := operator.NewUniform(1, h).StableDT(); !(d > 0) || math.IsInf(d, 0) {
		return k.bad("grid.length", "%s makes cells of %s, whose explicit stability limit 1/(2·Σ1/h²) is %s, not a positive number; use larger cells",
			floats(g.Length), floats(h), formatFloat(d))
	}
	return nil
}

func (k *checker) equation() *Error {
	e := &k.c.Equation
	if !slices.Contains(equationKinds, e.Kind) {
		return k.bad("equation.kind", "must be %s (got %q)", oneOf(equationKinds), e.Kind)
	}
	if !(e.Alpha > 0) {
		return k.bad("equation.alpha", "must be positive (got %s)", formatFloat(e.Alpha))
	}
	if !slices.Contains(solverKinds, e.Solver) {
		return k.bad("equation.solver", "must be %s (got %q)", oneOf(solverKinds), e.Solver)
	}
	if !slices.Contains(schemeKinds, e.Scheme) {
		return k.bad("equation.scheme", "must be %s (got %q)", oneOf(schemeKinds), e.Scheme)
	}
	if _, r := plan.Decide(k.c.Case()); r != nil {
		return k.bad(r.Key, "%s", r.Reason)
	}
	if !(e.DT.V >= 0) || math.IsInf(e.DT.V, 0) {
		return k.bad("equation.dt", "must be >= 0 and finite, or \"auto\"; 0 picks 0.9× the stability limit (got %s)", formatFloat(e.DT.V))
	}
	if e.Kind == Poisson && e.Scheme != "explicit" && k.src.of("equation.scheme") != BuiltinSource {
		return k.bad("equation.scheme", "is a heat time scheme; a poisson problem has none (got %q)", e.Scheme)
	}
	if !k.c.Adaptive() {
		for _, x := range []struct {
			key string
			v   float64
		}{{"equation.rtol", e.RTol}, {"equation.atol", e.ATol}, {"equation.dt_min", e.DTMin}, {"equation.dt_max", e.DTMax}, {"equation.dt_initial", e.DTInitial}} {
			if x.v != 0 {
				return k.bad(x.key, "is read only by implicit steps with equation.dt = \"auto\" (here equation.dt = %s, scheme %q): remove it, or set equation.dt = \"auto\"", e.DT, e.Scheme)
			}
		}
		if len(k.c.Run.Events) > 0 {
			return k.bad("run.events", "are read only by implicit steps with equation.dt = \"auto\": fixed steps do not land on them (here equation.dt = %s, scheme %q)", e.DT, e.Scheme)
		}
	}
	if k.c.Implicit() {
		if e.DT.V == 0 && !e.DT.Auto {
			return k.bad("equation.dt", "%s steps need a time step, or \"auto\" (chosen by their error): an implicit scheme is stable for any dt, so none is picked (the explicit limit here is %s)",
				e.Scheme, formatLimit(k.c.StabilityLimit()))
		}
		return nil
	}
	if e.DT.Auto {
		// The explicit scheme's step is its stability limit's.
		e.DT = Step{Auto: true}
	}
	if e.Kind == Heat && k.c.Media().Uniform() {
		// In media the limit is the media's, min over cells of ρc/Σk_f/h²:
		// the solver's operator finds it from the cells (run: exit 2 past it).
		if limit := k.c.StabilityLimit(); e.DT.V > limit {
			return k.bad("equation.dt", "%s exceeds the stability limit %s = 1/(2·α·Σ1/h²) for this grid; use a smaller dt, or 0 for 0.9× the limit",
				formatFloat(e.DT.V), formatLimit(limit))
		}
	}
	return nil
}

func (k *checker) run() *Error {
	r := &k.c.Run
	if r.Steps < 0 {
		return k.bad("run.steps", "must be >= 0 (got %d)", r.Steps)
	}
	if r.Tolerance < 0 {
		return k.bad("run.tolerance", "must be >= 0 (got %s)", formatFloat(r.Tolerance))
	}
	// mgcg as the plan decides it: asked for, in media, or a Poisson
	// problem's cycles in media, which may hand over to it.
	p, _ := plan.Decide(k.c.Case())
	mgcg := k.c.Equation.Kind == Poisson && (p.Method == plan.MGCG || p.KrylovOnStall)
	if k.c.UsesMultigrid() && r.Tolerance != 0 && r.Tolerance < 1e-16 {
		return k.bad("run.tolerance", "%s is below what double precision can reach: a solve's componentwise backward error stalls near 1e-16", formatFloat(r.Tolerance))
	}
	if r.Tolerance == 0 {
		// Multigrid and mgcg: the componentwise backward error (mgcg, the
		// choice for media with jumps, to 1e-12); Jacobi: max|Δu| of a
		// sweep.
		r.Tolerance = 1e-6
		switch {
		case mgcg:
			r.Tolerance = 1e-12
		case k.c.UsesMultigrid():
			r.Tolerance = 1e-10
		}
	}
	if r.TEnd < 0 {
		return k.bad("run.t_end", "must be >= 0 (got %s)", formatFloat(r.TEnd))
	}
	if k.c.Adaptive() {
		if err := k.adaptive(); err != nil {
			return err
		}
	} else if r.TEnd > 0 {
		if err := k.stop(); err != nil {
			return err
		}
	}
	if r.CheckEvery < 1 {
		return k.bad("run.check_every", "must be >= 1 (got %d)", r.CheckEvery)
	}
	return nil
}

// stop settles when a heat run with a run.t_end stops: at t_end, after
// the steps that reach it (the last one shortened), unless run.steps,
// given by a layer other than the built-in problem, comes first. Then the
// run ends after run.steps steps and t_end stays as given, so that a
// restart with more steps still stops at it.
func (k *checker) stop() *Error {
	r, dt := &k.c.Run, k.c.TimeStep()
	if k.c.Equation.Kind != Heat {
		return k.bad("run.t_end", "stops a heat run at a final time; a poisson problem has none (got %s)", formatFloat(r.TEnd))
	}
	step := "equation.dt = " + formatFloat(dt)
	if k.c.Equation.DT.V == 0 {
		step = "the automatic " + step + " (0.9 × the stability limit)"
	}
	q := r.TEnd / dt
	if !(q <= MaxSteps && q < math.MaxInt) {
		return k.bad("run.t_end", "%s takes %s steps of %s, more than the %s a run may take: use an earlier run.t_end or a larger equation.dt",
			formatFloat(r.TEnd), strconv.FormatFloat(q, 'g', 3, 64), step, formatFloat(MaxSteps))
	}
	n := plan.StepsTo(r.TEnd, dt)
	if n == 0 {
		return k.bad("run.t_end", "%s is %s of a step of %s: the run would take no steps; use a later run.t_end",
			formatFloat(r.TEnd), strconv.FormatFloat(q, 'g', 3, 64), step)
	}
	if st, ok := k.src.exact("run.steps"); r.Steps > 0 && r.Steps < n && (k.src.whole || ok && st.source != BuiltinSource) {
		from := ""
		if s := k.src.of("run.steps"); s != "" {
			from = " (" + s + ")"
		}
		k.note("run.steps = %d%s comes before run.t_end = %s: the run ends at t = %s, after %d of the %d steps of dt = %s that reach t_end",
			r.Steps, from, formatFloat(r.TEnd), formatFloat(float64(r.Steps)*dt), r.Steps, n, formatFloat(dt))
		return nil
	}
	r.Steps = n
	return nil
}

// Defaults of the steps that choose themselves (equation.dt = "auto").
const (
	DefaultRTol = 1e-4
	// MaxAdaptiveSteps caps the steps of a run whose run.steps no layer
	// gives: the run ends at run.t_end.
	MaxAdaptiveSteps = 100_000_000
)

// adaptive checks and fills the keys of steps that choose themselves: a
// run.t_end to reach, a tolerance, the bounds of dt and the events, each
// refused naming its key and value.
func (k *checker) adaptive() *Error {
	e, r := &k.c.Equation, &k.c.Run
	if r.TEnd == 0 {
		return k.bad("run.t_end", "equation.dt = \"auto\" needs a run.t_end: the steps are chosen to reach it")
	}
	if e.RTol == 0 {
		e.RTol = DefaultRTol
	}
	if !(e.RTol > 0 && e.RTol < 1) {
		return k.bad("equation.rtol", "must be in (0, 1) (got %s)", formatFloat(e.RTol))
	}
	if e.RTol < 10*r.Tolerance {
		return k.bad("equation.rtol", "%s is below 10 × run.tolerance = %s: each step's solve is only that exact, so its error estimate cannot be; use a larger rtol or a smaller run.tolerance",
			formatFloat(e.RTol), formatFloat(r.Tolerance))
	}
	if o, given := k.src.exact("equation.atol"); e.ATol == 0 && (!given || o.source == BuiltinSource) {
		e.ATol = e.RTol
	}
	if !(e.ATol >= 0) || math.IsInf(e.ATol, 0) {
		return k.bad("equation.atol", "must be >= 0 and finite (got %s)", formatFloat(e.ATol))
	}
	if e.DTMax == 0 {
		e.DTMax = r.TEnd
	}
	if e.DTMin == 0 {
		e.DTMin = min(e.DTMax, r.TEnd*1e-12)
	}
	for _, x := range []struct {
		key string
		v   float64
	}{{"equation.dt_min", e.DTMin}, {"equation.dt_max", e.DTMax}, {"equation.dt_initial", e.DTInitial}} {
		if x.key == "equation.dt_initial" && x.v == 0 {
			continue // chosen by the solver from the field at the start
		}
		if !(x.v > 0) || math.IsInf(x.v, 0) {
			return k.bad(x.key, "must be positive and finite, or 0 (the default) (got %s)", formatFloat(x.v))
		}
	}
	if e.DTMin > e.DTMax {
		return k.bad("equation.dt_min", "%s is larger than equation.dt_max = %s", formatFloat(e.DTMin), formatFloat(e.DTMax))
	}
	if e.DTInitial != 0 && (e.DTInitial < e.DTMin || e.DTInitial > e.DTMax) {
		return k.bad("equation.dt_initial", "%s lies outside [dt_min, dt_max] = [%s, %s]", formatFloat(e.DTInitial), formatFloat(e.DTMin), formatFloat(e.DTMax))
	}
	if q := r.TEnd / e.DTMin; !(q <= MaxSteps) {
		return k.bad("equation.dt_min", "%s would let run.t_end = %s take %s steps, more than the %s a run may take",
			formatFloat(e.DTMin), formatFloat(r.TEnd), strconv.FormatFloat(q, 'g', 3, 64), formatFloat(MaxSteps))
	}
	for i, t := range r.Events {
		if !(t >= 0 && t <= r.TEnd) {
			return k.bad("run.events", "event %d at %s lies outside [0, run.t_end = %s]", i, formatFloat(t), formatFloat(r.TEnd))
		}
	}
	if st, ok := k.src.exact("run.steps"); !(k.src.whole || ok && st.source != BuiltinSource) {
		r.Steps = MaxAdaptiveSteps // no layer caps the steps: the run ends at t_end
	}
	return nil
}

func (k *checker) multigrid() *Error {
	m := &k.c.Multigrid
	if !slices.Contains(smootherKinds, m.Smoother) {
		return k.bad("multigrid.smoother", "must be %s (got %q)", oneOf(smootherKinds), m.Smoother)
	}
	if !slices.Contains(cycleKinds, m.Cycle) {
		return k.bad("multigrid.cycle", "must be %s (got %q)", oneOf(cycleKinds), m.Cycle)
	}
	if !slices.Contains(interpKinds, m.Interpolation) {
		return k.bad("multigrid.interpolation", "must be %s (got %q)", oneOf(interpKinds), m.Interpolation)
	}
	for _, s := range []struct {
		key string
		n   int
	}{{"multigrid.pre", m.Pre}, {"multigrid.post", m.Post}} {
		if s.n < 0 || s.n > 32 {
			return k.bad(s.key, "must be between 0 (the smoother's default) and 32 sweeps (got %d)", s.n)
		}
	}
	if m.MaxCycles < 1 {
		return k.bad("multigrid.max_cycles", "must be >= 1 (got %d)", m.MaxCycles)
	}
	if m.AgglomerateBelow < 0 {
		return k.bad("multigrid.agglomerate_below", "must be >= 0 cells a side; 0 takes 32 (got %d)", m.AgglomerateBelow)
	}
	if m.GatherCells < 0 {
		return k.bad("multigrid.gather_cells", "must be >= 0 cells; 0 takes 16384 (got %d)", m.GatherCells)
	}
	if m.Levels < 0 {
		return k.bad("multigrid.levels", "must be >= 0; 0 takes as many as the grid allows (got %d)", m.Levels)
	}
	if k.c.UsesMultigrid() {
		media := k.c.Case().Media
		levels := plan.HierarchyOf(k.c.Grid.Shape, k.c.Grid.Length, m.Levels, media)
		bottom := levels[len(levels)-1]
		if cells, _ := product(bottom); cells > plan.MaxBottomCells {
			return k.bad("grid.shape", "%s coarsens only to %s (an axis is odd, or multigrid.levels stops it), and conjugate gradients on one rank would solve those %d cells every cycle; give every axis a count divisible by a power of two, or use equation.solver = \"jacobi\"",
				decomp.FormatDims(k.c.Grid.Shape), decomp.FormatDims(bottom), cells)
		}
		if most := len(plan.HierarchyOf(k.c.Grid.Shape, k.c.Grid.Length, 0, media)); m.Levels > most {
			return k.bad("multigrid.levels", "%s has at most %d levels: each halves the finest axes whose cell count is even and at least 8 (got %d)",
				decomp.FormatDims(k.c.Grid.Shape), most, m.Levels)
		}
	}
	return nil
}

func (k *checker) boundary() *Error {
	b := &k.c.Boundary
	nd := k.c.NDim()
	if !slices.Contains(boundaryKinds, b.Kind) {
		return k.bad("boundary.kind", "must be %s (got %q)", oneOf(boundaryKinds), b.Kind)
	}
	for _, r := range b.faces() {
		if r.face == nil {
			continue
		}
		key := "boundary." + r.name
		if nd == 2 && r.name[0] == 'z' {
			return k.bad(key, "a 2D grid has no z faces; its faces are x_lo, x_hi, y_lo, y_hi")
		}
		if r.face.Kind != "" && !slices.Contains(boundaryKinds, r.face.Kind) {
			return k.bad(key+".kind", "must be %s (got %q)", oneOf(boundaryKinds), r.face.Kind)
		}
	}
	for a := range nd {
		lo, _ := k.c.FaceKind(a, 0)
		hi, _ := k.c.FaceKind(a, 1)
		if (lo == Periodic) == (hi == Periodic) {
			continue
		}
		// Blame the face whose own override breaks the pair; when both
		// faces have one, the periodic face.
		names := [2]string{faceName(nd, a, 0), faceName(nd, a, 1)}
		kinds := [2]string{lo, hi}
		blame := 0
		if hi == Periodic {
			blame = 1
		}
		if f := k.c.face(a, blame); f == nil || f.Kind == "" {
			blame = 1 - blame
		}
		other := 1 - blame
		return k.bad("boundary."+names[blame]+".kind",
			"periodic must be on both faces of an axis or on neither: %s is %s but %s is %s",
			names[blame], kinds[blame], names[other], kinds[other])
	}
	return k.unusedValues()
}

// unusedValues checks the faces' values and coefficients and refuses the
// ones no face uses: a periodic face wraps, so it takes no value; h is a
// robin face's alone; boundary.value counts only where a face inherits it.
func (k *checker) unusedValues() *Error {
	nd := k.c.NDim()
	// Every number finite first, used or not (as every float key).
	b := &k.c.Boundary
	keys, values := []string{"boundary.value", "boundary.h"}, []*Value{&b.Value, b.H}
	for _, r := range b.faces() {
		if r.face != nil {
			keys = append(keys, "boundary."+r.name+".value", "boundary."+r.name+".h")
			values = append(values, r.face.Value, r.face.H)
		}
	}
	for i, v := range values {
		if v == nil {
			continue
		}
		if x, num := v.Number(); num && isNaNInf(x) {
			return k.bad(keys[i], "must be a finite number (got %s)", formatFloat(x))
		}
	}
	inherited, robin := false, false
	for a := range nd {
		for side := range 2 {
			kind, value := k.c.FaceKind(a, side)
			f := k.c.face(a, side)
			name := "boundary." + faceName(nd, a, side)
			own := f != nil && f.Value != nil
			if !own {
				inherited = inherited || (kind != Periodic && (kind == Dirichlet || kind == k.c.Boundary.Kind))
			}
			if kind == Periodic {
				if v, num := value.Number(); own && (!num || v != 0) {
					return k.bad(name+".value", "a periodic face wraps around; value %s would be ignored (leave it out)", value)
				}
				if f != nil && f.H != nil {
					return k.bad(name+".h", "a periodic face wraps around; h %s would be ignored (leave it out)", *f.H)
				}
				continue
			}
			key := "boundary.value"
			if own {
				key = name + ".value"
			}
			if err := k.faceValue(key, value, false); err != nil {
				return err
			}
			h := k.c.FaceH(a, side)
			if kind != Robin {
				if f != nil && f.H != nil {
					return k.bad(name+".h", "h is a robin face's heat-transfer coefficient; on a %s face %s would be ignored (leave it out, or make the face robin)", kind, *f.H)
				}
				continue
			}
			robin = true
			if h == nil {
				return k.bad(name+".h", "a robin face needs h, the heat-transfer coefficient of −k∂u/∂n = h·(u_face − value) (value: the ambient)")
			}
			hkey := "boundary.h"
			if f != nil && f.H != nil {
				hkey = name + ".h"
			}
			if err := k.faceValue(hkey, *h, true); err != nil {
				return err
			}
		}
	}
	if v, num := k.c.Boundary.Value.Number(); (!num || v != 0) && !inherited {
		return k.bad("boundary.value", "%s would be ignored: no face takes it (a face of another kind than boundary.kind, but dirichlet, has its own or none; a periodic face wraps around; a face with a value of its own uses that)", k.c.Boundary.Value)
	}
	if k.c.Boundary.H != nil && !robin {
		return k.bad("boundary.h", "%s would be ignored: no face is robin", *k.c.Boundary.H)
	}
	return nil
}

// amplitude checks the source's amplitude in time: the source's only, on
// a heat problem with a source; a number, a table, or an expression that
// reads t and no coordinate (a factor of space belongs in source.expr).
func (k *checker) amplitude(prefix string, p *Profile) *Error {
	a := p.Amplitude
	key := prefix + ".amplitude"
	if a == nil {
		return nil
	}
	if err := k.faceValue(key, *a, false); err != nil {
		return err
	}
	switch {
	case prefix != "source":
		return k.bad(key, "is the source's amplitude in time; %s has none (scale it by %s.value)", prefix, prefix)
	case k.c.Equation.Kind != Heat:
		return k.bad(key, "is an amplitude in time; a %s problem has no time (scale the source by source.value)", k.c.Equation.Kind)
	case p.Kind == "none":
		return k.bad(key, "would be ignored: source.kind is \"none\"")
	}
	if a.Expr != "" {
		e, _ := expr.Compile(key, a.Expr)
		for _, v := range []string{"x", "y", "z"} {
			if e.Uses(v) {
				return k.bad(key, "reads %s: an amplitude is a function of t alone (a factor of space belongs in source.expr)", v)
			}
		}
	}
	return nil
}

// faceValue checks a face's value or (coefficient) h, the source's
// amplitude: a finite number (h: not negative), an expression that
// compiles, a table that loads. The rules of the number hold for an
// expression that is constant (a "0/0", a "-1") and for every row of a
// table; an expression that varies is checked where it is evaluated.
func (k *checker) faceValue(key string, v Value, coefficient bool) *Error {
	switch {
	case v.Expr != "":
		e, err := expr.Compile(key, v.Expr)
		if err != nil {
			var ee *expr.Error
			if errors.As(err, &ee) {
				return k.bad(key, "%s", ee.Detail())
			}
			return k.bad(key, "%v", err)
		}
		if err := k.constant(key, e); err != nil {
			return err
		}
		if x, ok := e.Constant(); ok && coefficient && x < 0 {
			return k.bad(key, "%q is %s: a heat-transfer coefficient must not be negative", v.Expr, formatFloat(x))
		}
	case v.Table != "":
		tb, err := expr.LoadTable(key, v.Table)
		if err != nil {
			return k.bad(key, "%s", strings.TrimPrefix(err.Error(), key+": "))
		}
		if x, t, line := tb.Min(); coefficient && x < 0 {
			return k.bad(key, "%s line %d: the value at t = %s is %s: a heat-transfer coefficient must not be negative", v.Table, line, formatFloat(t), formatFloat(x))
		}
	case isNaNInf(v.Num):
		return k.bad(key, "must be a finite number (got %s)", formatFloat(v.Num))
	case coefficient && v.Num < 0:
		return k.bad(key, "must not be negative (got %s): a heat-transfer coefficient", formatFloat(v.Num))
	}
	return nil
}

// constant refuses the expression e of key where it is constant and not
// finite ("0/0", "1/0"): every point would be NaN or ±Inf, and the run
// found out only when its field was no longer finite.
func (k *checker) constant(key string, e *expr.Expr) *Error {
	if x, ok := e.Constant(); ok && isNaNInf(x) {
		return k.bad(key, "%q evaluates to %s everywhere, not a finite number", e.String(), formatFloat(x))
	}
	return nil
}

// profile checks the initial condition or source term p (prefix "initial"
// or "source") and fills its centre (the domain centre) and, for sine, its
// modes (1 per axis).
func (k *checker) profile(prefix string, p *Profile, kinds []string) *Error {
	nd := k.c.NDim()
	if !slices.Contains(kinds, p.Kind) {
		return k.bad(prefix+".kind", "must be %s (got %q)", oneOf(kinds), p.Kind)
	}
	if err := k.formula(prefix, p); err != nil {
		return err
	}
	if err := k.amplitude(prefix, p); err != nil {
		return err
	}
	k.unusedProfileKeys(prefix, p.Kind)
	if len(p.Center) == 0 {
		p.Center = make([]float64, nd)
		for a := range p.Center {
			p.Center[a] = k.c.Grid.Length[a] / 2
		}
	}
	if len(p.Center) != nd {
		return k.bad(prefix+".center", "needs one coordinate per axis, %d for this grid (got %v)", nd, floats(p.Center))
	}
	if p.Kind == "hotspot" || p.Kind == "gaussian" {
		if !(p.Radius > 0) {
			return k.bad(prefix+".radius", "must be positive for %s (got %s)", p.Kind, formatFloat(p.Radius))
		}
	}
	if p.Kind == "hotspot" || p.Kind == "gaussian" {
		k.placement(prefix, p)
	}
	if p.Kind == "sine" && len(p.Mode) == 0 {
		p.Mode = make([]int, nd)
		for a := range p.Mode {
			p.Mode[a] = 1
		}
	}
	if len(p.Mode) > 0 {
		if len(p.Mode) != nd {
			return k.bad(prefix+".mode", "needs one wave number per axis, %d for this grid (got %v)", nd, p.Mode)
		}
		if slices.Min(p.Mode) < 1 {
			return k.bad(prefix+".mode", "wave numbers must be >= 1 (got %v)", p.Mode)
		}
	}
	return nil
}

// profileKeys are the keys each profile kind reads (expr and path are
// refused outside their kinds by formula).
var profileKeys = map[string][]string{
	"none": {}, "constant": {"value"}, "hotspot": {"value", "background", "center", "radius"},
	"gaussian": {"value", "background", "center", "radius"}, "sine": {"value", "background", "mode"},
	"random": {"value", "background", "seed"}, "expr": {}, "file": {},
}

// unusedProfileKeys warns of each key of the profile that a config layer
// gave but its kind does not read ("source.value = 1e9" beside kind
// "expr", whose formula gives the value): the run would ignore it.
func (k *checker) unusedProfileKeys(prefix, kind string) {
	uses := profileKeys[kind]
	for _, key := range []string{"value", "background", "center", "radius", "mode", "seed"} {
		if slices.Contains(uses, key) {
			continue
		}
		if o, set := k.src.exact(prefix + "." + key); set && o.source != BuiltinSource {
			k.note("%s.%s (%s) is not read by %s.kind = %q, which reads %s: the run ignores it", prefix, key, o.source, prefix, kind, readsText(uses, kind))
		}
	}
}

func readsText(uses []string, kind string) string {
	switch {
	case kind == "expr":
		return "its expr"
	case kind == "file":
		return "its path"
	case len(uses) == 0:
		return "nothing"
	}
	return strings.Join(uses, ", ")
}

// placement warns of a hotspot or gaussian profile p centred outside the
// domain, and of a hotspot that covers no cell centre, whose field is then
// its background everywhere.
func (k *checker) placement(prefix string, p *Profile) {
	g := k.c.Grid
	geo := g.Geometry()
	outside := false
	near := 0.0 // squared distance from the centre to the nearest cell centre
	for a, x := range p.Center {
		outside = outside || x < 0 || x > g.Length[a]
		i := min(max(math.Floor(x/geo.H(a)), 0), float64(g.Shape[a]-1))
		d := geo.Centre(a, int(i)) - x
		near += float64(d * d)
	}
	field := map[string]string{"initial": "the initial field", "source": "the source"}[prefix]
	empty := p.Kind == "hotspot" && near > p.Radius*p.Radius
	background := fmt.Sprintf("%s is all background (%s)", field, formatFloat(p.Background))
	switch {
	case outside:
		box := make([]string, len(g.Length))
		for a, l := range g.Length {
			box[a] = "[0, " + formatFloat(l) + "]"
		}
		msg := fmt.Sprintf("%s.center %s is outside the domain %s", prefix, floats(p.Center), strings.Join(box, " × "))
		if empty {
			msg += fmt.Sprintf(" and the hotspot of radius %s covers no cell centre: %s", formatFloat(p.Radius), background)
		}
		k.note("%s", msg)
	case empty:
		k.note("%s: the hotspot of radius %s around %s covers no cell centre: %s", prefix, formatFloat(p.Radius), floats(p.Center), background)
	}
}

func (k *checker) parallel() *Error {
	p := &k.c.Parallel
	if p.Ranks < 1 || p.Ranks > MaxRanks {
		return k.bad("parallel.ranks", "must be between 1 and %d (got %d)", MaxRanks, p.Ranks)
	}
	if p.Threads < 0 {
		return k.bad("parallel.threads", "must be >= 0 (got %d); 0 means cores / ranks", p.Threads)
	}
	if p.Threads > MaxThreads {
		return k.bad("parallel.threads", "must be at most %d worker threads a rank (got %d); 0 means cores / ranks", MaxThreads, p.Threads)
	}
	if p.Timeout < 0 {
		return k.bad("parallel.timeout", "must be a number of seconds >= 0 (got %g); 0 means automatic: 100 × the slowest step, at least 60 s", p.Timeout)
	}
	if len(p.Dims) == 0 {
		return nil
	}
	nd := k.c.NDim()
	if len(p.Dims) != nd {
		return k.bad("parallel.dims", "needs one entry per axis, %d for this grid (got %s)", nd, decomp.FormatDims(p.Dims))
	}
	if slices.Min(p.Dims) < 1 {
		return k.bad("parallel.dims", "every axis needs at least 1 rank (got %s)", decomp.FormatDims(p.Dims))
	}
	if n, ok := product(p.Dims); !ok || n != p.Ranks {
		total := strconv.Itoa(n)
		if !ok {
			total = "too many"
		}
		msg := fmt.Sprintf("%s has %s ranks but parallel.ranks is %d", decomp.FormatDims(p.Dims), total, p.Ranks)
		if rs, ds := k.src.of("parallel.ranks"), k.src.of("parallel.dims"); rs != "" && rs != ds {
			msg += " (from " + rs + ")"
		}
		return k.bad("parallel.dims", "%s", msg)
	}
	return nil
}

func (k *checker) output() *Error {
	o := &k.c.Output
	if strings.TrimSpace(o.Dir) == "" {
		return k.bad("output.dir", "must not be empty")
	}
	if err := k.byTime("output.snapshot_dt", "snapshots", o.SnapshotDT, "output.snapshot_every"); err != nil {
		return err
	}
	switch {
	case o.SnapshotEvery < 0:
		return k.bad("output.snapshot_every", "must be >= 0 (got %d)", o.SnapshotEvery)
	case o.DiagnosticsEvery < 0:
		return k.bad("output.diagnostics_every", "must be >= 0 (got %d)", o.DiagnosticsEvery)
	case o.ProgressEvery < 0:
		return k.bad("output.progress_every", "must be >= 0 seconds (got %s)", formatFloat(o.ProgressEvery))
	case o.ImageSize < 16:
		return k.bad("output.image_size", "must be at least 16 pixels (got %d)", o.ImageSize)
	}
	seen := map[string]bool{}
	for _, f := range o.Formats {
		if f != "png" && f != "vti" {
			return k.bad("output.formats", "unknown format %q (known: \"png\", \"vti\")", f)
		}
		if seen[f] {
			return k.bad("output.formats", "lists %q twice", f)
		}
		seen[f] = true
	}
	if !slices.Contains(heatmap.Cmaps(), o.Cmap) {
		return k.bad("output.cmap", "unknown colour map %q (known: %s)", o.Cmap, strings.Join(heatmap.Cmaps(), ", "))
	}
	if len(o.Range) != 0 && (len(o.Range) != 2 || !(o.Range[0] < o.Range[1])) {
		return k.bad("output.range", "must be empty or [min, max] with min < max (got %v)", o.Range)
	}
	if err := checkSlice(o.Slice, k.c.Grid.Shape); err != "" {
		return k.bad("output.slice", "%s", err)
	}
	if !slices.Contains(heatmap.Formats, o.ImageFormat) {
		return k.bad("output.image_format", "unknown image format %q (known: %s)", o.ImageFormat, strings.Join(heatmap.Formats, ", "))
	}
	switch {
	case !utf8.ValidString(o.Label) || strings.ContainsFunc(o.Label, unicode.IsControl):
		return k.bad("output.label", "must be one line of printable text (got %q)", o.Label)
	case utf8.RuneCountInString(o.Label) > 40:
		return k.bad("output.label", "must be at most 40 characters, it names the colour bar (got %d)", utf8.RuneCountInString(o.Label))
	}
	if t := o.ProbeTime; t != "" {
		units := []string{"s", "min", "h", "d"}
		switch {
		case !slices.Contains(units, t):
			return k.bad("output.probe_time", "must be %s (got %q)", oneOf(units), t)
		case !slices.Contains(units, o.Units.Time):
			return k.bad("output.probe_time", "converts from output.units.time, which must then be %s (got %q)", oneOf(units), o.Units.Time)
		}
	}
	for _, u := range []struct{ key, v string }{{"output.units.length", o.Units.Length}, {"output.units.time", o.Units.Time}, {"output.units.field", o.Units.Field}} {
		switch {
		case !utf8.ValidString(u.v) || strings.ContainsFunc(u.v, unicode.IsControl):
			return k.bad(u.key, "must be one line of printable text (got %q)", u.v)
		case utf8.RuneCountInString(u.v) > 16:
			return k.bad(u.key, "must be at most 16 characters, it goes on every axis (got %d)", utf8.RuneCountInString(u.v))
		}
	}
	return nil
}

// checkSlice validates a plane of a 3D grid as heatmap reads it ("z=mid",
// "y=10", "x=0.25"); a 2D run has no plane to cut, so only the syntax
// counts. It returns the problem.
func checkSlice(spec string, shape []int) string {
	if len(shape) != 3 {
		shape = []int{math.MaxInt32, math.MaxInt32, math.MaxInt32}
	}
	if _, _, _, err := heatmap.ParseSlice(spec, shape); err != nil {
		return strings.TrimPrefix(err.Error(), "heatmap: slice ")
	}
	return ""
}

// checkpoint checks the checkpoint policy and fills the default directory.
func (k *checker) checkpoint() *Error {
	ck := &k.c.Checkpoint
	if err := k.byTime("checkpoint.every_time", "checkpoints", ck.EveryTime, "checkpoint.every"); err != nil {
		return err
	}
	switch {
	case ck.Every < 0:
		return k.bad("checkpoint.every", "must be >= 0 (got %d)", ck.Every)
	case ck.Keep < 0:
		return k.bad("checkpoint.keep", "must be >= 0 (got %d)", ck.Keep)
	case ck.Level < 1 || ck.Level > 22:
		return k.bad("checkpoint.level", "must be a zstd level from 1 to 22 (got %d)", ck.Level)
	}
	if len(ck.Chunk) > 0 {
		if len(ck.Chunk) != len(k.c.Grid.Shape) {
			return k.bad("checkpoint.chunk", "has %d entries but grid.shape has %d", len(ck.Chunk), len(k.c.Grid.Shape))
		}
		for _, n := range ck.Chunk {
			if n < 1 {
				return k.bad("checkpoint.chunk", "must be positive (got %v)", ck.Chunk)
			}
		}
	}
	if sh := ck.Shard.Shape; len(sh) > 0 {
		shape := k.c.Grid.Shape
		if len(sh) != len(shape) {
			return k.bad("checkpoint.shard", "has %d entries but grid.shape has %d", len(sh), len(shape))
		}
		for a, n := range sh {
			if n < 1 {
				return k.bad("checkpoint.shard", "must be positive (got %v)", sh)
			}
			if len(ck.Chunk) > 0 && n < shape[a] && n%min(ck.Chunk[a], shape[a]) != 0 {
				return k.bad("checkpoint.chunk", "%v must divide checkpoint.shard %v: a shard holds whole chunks", ck.Chunk, sh)
			}
		}
	}
	if strings.TrimSpace(ck.Dir) == "" {
		ck.Dir = filepath.Join(k.c.Output.Dir, "checkpoints")
	}
	return nil
}

// decomposition checks that the grid splits over the ranks: at most one rank
// per cell, a process grid decomp accepts, and every box at least
// grid.ghost cells wide along each axis (a ghost layer is filled from one
// neighbour only).
func (k *checker) decomposition() *Error {
	c := k.c
	key := "parallel.ranks"
	if len(c.Parallel.Dims) > 0 {
		key = "parallel.dims"
	}
	if cells, ok := product(c.Grid.Shape); ok && c.Parallel.Ranks > cells {
		return k.bad("parallel.ranks", "%d ranks for a %s grid of %d cells; each rank needs at least one cell",
			c.Parallel.Ranks, decomp.FormatDims(c.Grid.Shape), cells)
	}
	g, err := decomp.New(c.Grid.Shape, c.Parallel.Ranks, c.Parallel.Dims, c.Periodic())
	if err != nil {
		return k.bad(key, "%s", err.Error())
	}
	// A box's width along an axis depends only on the rank's coordinate
	// on that axis, so walking each axis of the process grid once covers
	// every box.
	nd := c.NDim()
	for a := range nd {
		coords := make([]int, nd)
		for i := range g.Dims[a] {
			coords[a] = i
			r := g.RankOf(coords)
			box := g.Box(r)
			if w := box.Hi[a] - box.Lo[a]; w < c.Grid.Ghost {
				return k.bad("grid.ghost", "%d is wider than the thinnest box: the process grid %s leaves %d cells along %s (rank %d); use fewer ranks along %s or a smaller grid.ghost",
					c.Grid.Ghost, decomp.FormatDims(g.Dims), w, decomp.AxisName(nd, a), r, decomp.AxisName(nd, a))
			}
		}
	}
	return nil
}

// product multiplies xs; ok is false on overflow.
func product(xs []int) (p int, ok bool) {
	p = 1
	for _, x := range xs {
		if x != 0 && p > math.MaxInt/x {
			return 0, false
		}
		p *= x
	}
	return p, true
}

func isNaNInf(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }

// oneOf lists kinds for a message: "heat" or "poisson"; "a", "b" or "c".
func oneOf(kinds []string) string {
	q := make([]string, len(kinds))
	for i, s := range kinds {
		q[i] = strconv.Quote(s)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// floats formats a float slice as fmt's %v does, with nan and inf as TOML
// spells them.
func floats(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = formatFloat(x)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// formatLimit writes a stability limit with 4 significant digits, rounded
// down, so that a dt copied from the message is stable.
func formatLimit(v float64) string {
	s := strconv.FormatFloat(v, 'g', 4, 64)
	if f, _ := strconv.ParseFloat(s, 64); f > v && v > 0 {
		unit := math.Pow(10, math.Floor(math.Log10(v))-3)
		s = strconv.FormatFloat(math.Floor(v/unit)*unit, 'g', 4, 64)
	}
	return s
}
