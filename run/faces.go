package run

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"heat/io/config"
	"heat/io/expr"
	"heat/solver"
)

// faceValue is one face's value or h as the solver evaluates it: a number,
// an expression of x, y, z, t, or a time table.
type faceValue struct {
	num float64
	ex  *expr.Expr
	tab *expr.Table
}

// faceValueOf reads v (validated: an expression compiles, a table loads).
func faceValueOf(key string, v config.Value) (faceValue, error) {
	switch {
	case v.Expr != "":
		e, err := expr.Compile(key, v.Expr)
		if err != nil {
			return faceValue{}, err
		}
		if k, ok := e.Constant(); ok {
			return faceValue{num: k}, nil
		}
		return faceValue{ex: e}, nil
	case v.Table != "":
		tab, err := expr.LoadTable(key, v.Table)
		return faceValue{tab: tab}, err
	}
	return faceValue{num: v.Num}, nil
}

func (v faceValue) varies() bool { return v.ex != nil || v.tab != nil }
func (v faceValue) inTime() bool { return v.tab != nil || (v.ex != nil && v.ex.Uses("t")) }

// faceEvaluators are one goroutine's evaluators of every face's value and
// h (nil where a number or a table).
type faceEvaluators [][2][2]*expr.Evaluator

// setFaces sets the solver's faces from cfg: kinds, numbers, and for the
// values (and robin h) that are expressions or tables, FaceAt and whether
// they depend on t. A table that cannot be read is an error naming its key.
func setFaces(cfg *config.Config, s *solver.Spec) error {
	nd := cfg.NDim()
	vals := make([][2][2]faceValue, nd)
	s.Faces = make([][2]solver.Face, nd)
	varies := false
	for a := range nd {
		for side := range 2 {
			kind, value := cfg.FaceKind(a, side)
			f := solver.Face{}
			switch kind {
			case config.Neumann:
				f.Kind = solver.Neumann
			case config.Robin:
				f.Kind = solver.Robin
			case config.Periodic:
				f.Kind = solver.Periodic
			}
			if f.Kind != solver.Periodic {
				key := "boundary." + cfg.FaceName(a, side)
				v, err := faceValueOf(key+".value", value)
				if err != nil {
					return err
				}
				vals[a][side][0], f.Value = v, v.num
				if h := cfg.FaceH(a, side); f.Kind == solver.Robin && h != nil {
					hv, err := faceValueOf(key+".h", *h)
					if err != nil {
						return err
					}
					vals[a][side][1], f.H = hv, hv.num
				}
				f.Varies = v.varies() || vals[a][side][1].varies()
				s.FacesInTime = s.FacesInTime || v.inTime() || vals[a][side][1].inTime()
			}
			varies = varies || f.Varies
			s.Faces[a][side] = f
		}
	}
	if !varies {
		return nil
	}
	// Ranks in one process evaluate at once: each takes a set of
	// evaluators of its own from the pool.
	pool := sync.Pool{New: func() any {
		ev := make(faceEvaluators, nd)
		for a := range nd {
			for side := range 2 {
				for j, v := range vals[a][side] {
					if v.ex != nil {
						ev[a][side][j] = v.ex.NewEvaluator()
					}
				}
			}
		}
		return &ev
	}}
	s.FaceAt = func(axis, side int, x []float64, t float64) (value, h float64) {
		ev := pool.Get().(*faceEvaluators)
		defer pool.Put(ev)
		// x, y, z: the last axis is x (C order).
		px, py, pz := x[nd-1], x[nd-2], 0.0
		if nd == 3 {
			pz = x[0]
		}
		var out [2]float64
		for j, v := range vals[axis][side] {
			switch {
			case v.ex != nil:
				out[j] = (*ev)[axis][side][j].Eval(px, py, pz, t)
			case v.tab != nil:
				out[j] = v.tab.At(t)
			default:
				out[j] = v.num
			}
		}
		return out[0], out[1]
	}
	return nil
}

// faceFailure is err told in the config's terms where a face's value (or
// h) was not finite: the key it came from, the value, the face centre
// (x, y[, z]), the time and the step; other errors as they are.
func faceFailure(cfg *config.Config, err error) error {
	var fe *solver.FaceValueError
	if !errors.As(err, &fe) {
		return err
	}
	name := cfg.FaceName(fe.Axis, fe.Side)
	key := "boundary.value"
	f := cfg.FaceOverride(fe.Axis, fe.Side)
	switch {
	case fe.H && f != nil && f.H != nil:
		key = "boundary." + name + ".h"
	case fe.H:
		key = "boundary.h"
	case f != nil && f.Value != nil:
		key = "boundary." + name + ".value"
	}
	nd := len(fe.X)
	coords := make([]string, nd)
	for i := range nd {
		coords[i] = fmt.Sprintf("%g", fe.X[nd-1-i])
	}
	return fmt.Errorf("%s: is %v on face %s at (%s) = (%s), t = %g (step %d)%s", key, fe.Value, name,
		strings.Join([]string{"x", "y", "z"}[:nd], ", "), strings.Join(coords, ", "), fe.T, fe.Step, fe.Rule())
}
