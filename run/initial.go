package run

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"heat/comm"
	"heat/field"
	"heat/io/config"
	"heat/io/expr"
	"heat/io/media"
	"heat/plan"
	"heat/solver"
)

// The initial field and the source a config gives as formulas (kind
// "expr") or, for the initial field, as a file (kind "file"): the solver
// sees Profiles and Spec.InitialField; this file builds them and reports,
// on every rank alike, where a formula is not finite or a file's value is
// not.

// fields are the formulas of one run, which note where they are not finite.
type fields struct {
	list     []*formula
	implicit bool        // the scheme takes a step's source at its end
	files    [][2]string // the field files read (key, resolved path), for checkValues
}

// setFields sets spec's initial field and source where cfg gives them as
// a formula or a file (specOf leaves those nil). A restart takes its field
// from the checkpoint, so the initial field's file is not read (it may be
// gone) and its formula not evaluated. A file is found (a checkpoint
// folder's latest resolved) and its shape checked here, before any rank
// starts; its values where each rank reads its box. Errors are exit 2.
func setFields(spec *solver.Spec, cfg *config.Config, restarting bool) (*fields, error) {
	fs := &fields{implicit: cfg.Implicit()}
	nd := cfg.NDim()
	switch in := cfg.Initial; {
	case restarting && (in.Kind == "expr" || in.Kind == "file"):
		spec.Initial = solver.Constant(0) // the checkpoint's u replaces it
	case in.Kind == "expr":
		f, err := newFormula("initial.expr", in.Expr, cfg)
		if err != nil {
			return nil, err
		}
		fs.list = append(fs.list, f)
		spec.Initial = f.profile(0, nd)
	case in.Kind == "file":
		path, err := fieldFile("initial.path", in.Path, cfg.Grid.Shape, fillMissing(cfg))
		if err != nil {
			return nil, err
		}
		spec.InitialField = fileField("initial.path", path, cfg.Grid.Shape, fillMissing(cfg))
		fs.files = append(fs.files, [2]string{"initial.path", path})
	}
	if src := cfg.Source; src.Kind == "expr" {
		f, err := newFormula("source.expr", src.Expr, cfg)
		if err != nil {
			return nil, err
		}
		fs.list = append(fs.list, f)
		spec.Source = f.profile(0, nd)
		if tm, sp, ok := f.e.Separate(); ok && cfg.Equation.Kind == config.Heat {
			// c(t)·h(x): h filled once (or where a switch in it is
			// thrown), c(t) the step's weight of it.
			space := &formula{e: sp, key: f.key, geo: f.geo, timed: true}
			fs.list = append(fs.list, space) // names the whole formula, as f does
			spec.SourceAt = func(t float64) solver.Profile { return space.profile(t, nd) }
			spec.SourceKey = sp.TimeKey
			spec.SourceWeight = timeWeight(tm, f)
			spec.Source = nil // the solver's: SourceAt(0), weighted
		} else if f.e.Uses("t") {
			spec.SourceAt = func(t float64) solver.Profile { return f.profile(t, nd) }
			spec.SourceKey = f.e.TimeKey // a switch not yet thrown: no refill
		}
	}
	if src := cfg.Source; src.Kind == "file" {
		path, err := fieldFile("source.path", src.Path, cfg.Grid.Shape, fillMissing(cfg))
		if err != nil {
			return nil, err
		}
		spec.SourceField = fileField("source.path", path, cfg.Grid.Shape, fillMissing(cfg))
		fs.files = append(fs.files, [2]string{"source.path", path})
	}
	if a := cfg.Source.Amplitude; a != nil && cfg.Source.Kind != "none" {
		if err := amplify(spec, *a, cfg, fs); err != nil {
			return nil, err
		}
	}
	return fs, nil
}

// amplify multiplies the source by its amplitude in time a (source.amplitude,
// validated): a weight the steps take each step, times the formula's own
// factor of t where it has one.
func amplify(spec *solver.Spec, a config.Value, cfg *config.Config, fs *fields) error {
	v, err := faceValueOf("source.amplitude", a)
	if err != nil {
		return UsageError{err}
	}
	var amp func(t float64) float64
	switch {
	case v.tab != nil:
		amp = v.tab.At
	case v.ex != nil:
		f := &formula{e: v.ex, key: "source.amplitude", geo: cfg.Grid.Geometry()}
		fs.list = append(fs.list, f)
		amp = timeWeight(v.ex, f)
	default:
		k := v.num
		amp = func(float64) float64 { return k }
	}
	if own := spec.SourceWeight; own != nil {
		spec.SourceWeight = func(t float64) float64 { return float64(amp(t) * own(t)) }
	} else {
		spec.SourceWeight = amp
	}
	if spec.SourceAt != nil {
		spec.Source = nil // the solver's: SourceAt(0), weighted
	}
	return nil
}

// timeWeight is the source's weight in time from e, a function of t alone,
// one evaluator shared by the ranks (they share the spec); a value that is
// not finite is noted in f, which names it (every cell's: no point).
func timeWeight(e *expr.Expr, f *formula) func(float64) float64 {
	ev := newShared(e)
	return func(t float64) float64 {
		w := ev.eval(0, 0, 0, t)
		if math.IsNaN(w) || math.IsInf(w, 0) {
			f.note(t, 0)
		}
		return w
	}
}

// fillMissing is how cfg reads a Zarr field's chunks that are not stored
// (maps.missing): as the fill value, or as errors.
func fillMissing(cfg *config.Config) media.FieldOption {
	return media.FillMissing(cfg.Maps.Missing == "fill")
}

// fieldFile finds the field file key (initial.path, source.path) names: a .npy or a Zarr
// array or checkpoint folder as it is; a checkpoints folder, its latest or
// a run's output folder (its checkpoints folder, as --restart finds it)
// stands for its newest checkpoint, whose u is read — resolved once here,
// so that every rank reads the same one, and never an older one in place
// of a newest that does not open (media.ResolveCheckpoint). Its shape must
// be grid's.
func fieldFile(key, path string, grid []int, opts ...media.FieldOption) (string, error) {
	st, err := os.Stat(path)
	isDir := err == nil && st.IsDir()
	if filepath.Base(filepath.Clean(path)) == "latest" || isDir && !present(path, "zarr.json") {
		root, one, err := checkpointRoot(path)
		if err != nil {
			return "", Usagef("%s: %v", key, err)
		}
		if one == "" {
			if one, err = media.ResolveCheckpoint(key, root); err != nil {
				return "", fieldError(err)
			}
		}
		path = one
	}
	if err := media.CheckField(key, path, grid, opts...); err != nil {
		return "", fieldError(err)
	}
	return path, nil
}

// fieldError is a field file's error as the run reports it (exit 2):
// "initial.path: FILE: what".
func fieldError(err error) error {
	var me *media.MapError
	if errors.As(err, &me) {
		return Usagef("%s: %s", me.Key, me.Msg)
	}
	return UsageError{err}
}

// fileField reads each rank's box of the field file path (of config key
// key). Collective: the ranks agree on the outcome, so that all leave
// together and report the same mistake — the first bad cell in C order, or
// the lowest failing rank's error.
func fileField(key, path string, grid []int, opts ...media.FieldOption) func(c comm.Comm, lo, hi []int) ([]float64, error) {
	return func(c comm.Comm, lo, hi []int) ([]float64, error) {
		vals, err := media.ReadField(key, path, grid, lo, hi, opts...)
		geo := field.Geometry{Shape: grid}
		// Agree on the first mistake: a bad cell by its linear index,
		// any other by -(size - rank), which comes before every cell.
		mine := math.Inf(1)
		var me *media.MapError
		switch {
		case errors.As(err, &me) && me.Cell != nil:
			mine = float64(geo.Index(me.Cell))
		case err != nil:
			mine = -float64(c.Size() - c.Rank())
		}
		first := []float64{0}
		if cerr := c.Allreduce(comm.Min, []float64{mine}, first); cerr != nil {
			return nil, errors.Join(cerr, err)
		}
		switch k := first[0]; {
		case math.IsInf(k, 1):
			return vals, nil
		case k >= 0:
			// Every rank reads that one cell: the same message everywhere.
			cell := make([]int, len(grid))
			geo.Cell(int(k), cell)
			hi := make([]int, len(cell))
			for a := range cell {
				hi[a] = cell[a] + 1
			}
			_, err = media.ReadField(key, path, grid, cell, hi, opts...)
			return nil, fieldError(err)
		}
		return nil, shareError(c, c.Size()+int(first[0]), err)
	}
}

// shareError is root's error err on every rank of c (its text broadcast):
// exit 2, as a field file's mistakes are. Collective.
func shareError(c comm.Comm, root int, err error) error {
	var msg []byte
	if c.Rank() == root {
		msg = []byte(fieldError(err).Error())
	}
	n := []float64{float64(len(msg))}
	if cerr := c.Allreduce(comm.Max, n, n); cerr != nil {
		return errors.Join(cerr, err)
	}
	buf := make([]byte, int(n[0]))
	copy(buf, msg)
	if cerr := c.Bcast(buf, root); cerr != nil {
		return errors.Join(cerr, err)
	}
	return UsageError{errors.New(string(buf))}
}

// formula is a config's expression as the solver evaluates it: a Profile
// per time, which any number of goroutines (the ranks) may call, and
// which notes the earliest time, then the first cell in C order, where its
// value is not finite.
type formula struct {
	e     *expr.Expr
	key   string
	geo   field.Geometry
	timed bool // a part of a formula that reads t (Separate's space factor)

	mu  sync.Mutex
	bad bool    // a value was not finite
	t   float64 // the earliest time of one
	at  int     // the first cell at that time, C order
}

// newFormula compiles the formula src of config key key (validated when
// the config loaded: an error here is one Compile found again).
func newFormula(key, src string, cfg *config.Config) (*formula, error) {
	e, err := expr.Compile(key, src)
	if err != nil {
		return nil, UsageError{err}
	}
	return &formula{e: e, key: key, geo: cfg.Grid.Geometry()}, nil
}

// profile is the formula at time t (t folded in: expr.AtTime) over the
// cell centres of an nd-axis grid, whose C-order coordinates (z,) y, x the
// solver gives.
func (f *formula) profile(t float64, nd int) solver.Profile {
	ev := newShared(f.e.AtTime(t))
	return func(x []float64, idx []int) float64 {
		var v float64
		if nd == 2 {
			v = ev.eval(x[1], x[0], 0, t)
		} else {
			v = ev.eval(x[2], x[1], x[0], t)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			f.note(t, f.geo.Index(idx))
		}
		return v
	}
}

// note records a value that is not finite at time t and cell k.
func (f *formula) note(t float64, k int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.bad || t < f.t || t == f.t && k < f.at {
		f.bad, f.t, f.at = true, t, k
	}
}

// noted is the earliest (time, cell) noted: +Inf when none.
func (f *formula) noted() (t float64, k float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.bad {
		return math.Inf(1), math.Inf(1)
	}
	return f.t, float64(f.at)
}

// failed is the run's failure runErr told in the terms of the config when
// a formula caused it — a source the solver found not finite in a step —
// or nil. Every rank has one of the errors of the solver's agreement on a
// value that is not finite (the finder's SourceError or FaceValueError,
// ErrElsewhere on the others), so every rank takes part in check together.
func (fs *fields) failed(c comm.Comm, s *solver.Solver, runErr error) error {
	var se *solver.SourceError
	var fe *solver.FaceValueError
	if fs == nil || !errors.As(runErr, &se) && !errors.As(runErr, &fe) && !errors.Is(runErr, solver.ErrElsewhere) {
		return nil
	}
	return fs.check(c, s.Step()+1, s.DT(), fs.implicit)
}

// check is the run's failure (exit 1) when a formula gave a value that is
// not finite on any rank: the key, the value, the point, the time and the
// step, the same on every rank. step, when not 0, is the step the time
// falls in; else dt and implicit place it (a step takes its source at its
// start when explicit, at its end otherwise). Collective: every rank calls
// it at the same point of the run.
func (fs *fields) check(c comm.Comm, step int, dt float64, implicit bool) error {
	if fs == nil {
		return nil
	}
	for _, f := range fs.list {
		t, k := f.noted()
		first := []float64{0}
		if err := c.Allreduce(comm.Min, []float64{t}, first); err != nil {
			return err
		}
		if math.IsInf(first[0], 1) {
			continue
		}
		if t != first[0] {
			k = math.Inf(1)
		}
		cell := []float64{0}
		if err := c.Allreduce(comm.Min, []float64{k}, cell); err != nil {
			return err
		}
		return f.failure(first[0], int(cell[0]), step, dt, implicit)
	}
	return nil
}

// failure says where formula f is not finite: at cell k and time t.
func (f *formula) failure(t float64, k, step int, dt float64, implicit bool) error {
	nd := len(f.geo.Shape)
	idx, x := make([]int, nd), make([]float64, nd) // C order
	f.geo.Cell(k, idx)
	f.geo.CentreOf(idx, x)
	names, coords := "(x, y)", []float64{x[1], x[0]}
	if nd == 3 {
		names, coords = "(x, y, z)", []float64{x[2], x[1], x[0]}
	}
	parts := make([]string, len(coords))
	for i, v := range coords {
		parts[i] = media.FormatNumber(v)
	}
	ev := f.e.NewEvaluator()
	var v float64
	if nd == 2 {
		v = ev.Eval(x[1], x[0], 0, t)
	} else {
		v = ev.Eval(x[2], x[1], x[0], t)
	}
	when := "at step 0 (the initial field)"
	switch {
	case f.key == "source.expr" && !f.e.Uses("t") && !f.timed:
		when = "(the source reads no t: it is evaluated once, before step 1)"
	case f.key == "source.expr" || f.key == "source.amplitude":
		switch {
		case step > 0:
		case dt == 0:
			step = 1
		case implicit:
			step = max(1, plan.StepsTo(t, dt)) // the step ending at t
		default:
			step = int(math.Floor(t/dt+1e-9)) + 1 // explicit: the step starting at t
		}
		when = fmt.Sprintf("at t = %s, in step %d", media.FormatNumber(t), step)
	}
	if f.key == "source.amplitude" { // a function of t alone: no point to name
		return fmt.Errorf("%s = %q is %s %s", f.key, f.e.String(), media.FormatNumber(v), when)
	}
	sep := ", "
	if strings.HasPrefix(when, "(") {
		sep = " "
	}
	return fmt.Errorf("%s = %q is %s at %s = (%s), cell %v%s%s", f.key, f.e.String(), media.FormatNumber(v), names, strings.Join(parts, ", "), idx, sep, when)
}

// shared evaluates one expression from any number of goroutines: one
// Evaluator for whoever finds it free (a rank filling its box alone takes
// it every time, for one atomic swap), others from a pool.
type shared struct {
	own  *expr.Evaluator
	busy atomic.Bool
	pool sync.Pool
}

func newShared(e *expr.Expr) *shared {
	s := &shared{own: e.NewEvaluator()}
	s.pool.New = func() any { return e.NewEvaluator() }
	return s
}

func (s *shared) eval(x, y, z, t float64) float64 {
	if s.busy.CompareAndSwap(false, true) {
		v := s.own.Eval(x, y, z, t)
		s.busy.Store(false)
		return v
	}
	ev := s.pool.Get().(*expr.Evaluator)
	v := ev.Eval(x, y, z, t)
	s.pool.Put(ev)
	return v
}

// checkValues (rank 0) reads every value of the field files before the
// run removes or writes anything: a value that is not finite, or a chunk
// that is not stored, is refused then (exit 2), not after --overwrite has
// cleared the folder. A stop (ctx done) ends the pass within a block.
func (fs *fields) checkValues(ctx context.Context, cfg *config.Config) error {
	for _, f := range fs.files {
		err := media.CheckFieldValues(ctx, f[0], f[1], cfg.Grid.Shape, fillMissing(cfg))
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return fmt.Errorf("%w while the field files' values were checked; nothing was written", context.Cause(ctx))
		default:
			return fieldError(err)
		}
	}
	return nil
}
