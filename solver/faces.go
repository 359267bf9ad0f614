package solver

import (
	"errors"
	"fmt"

	"heat/comm"
	"heat/operator"
)

// Faces that need ghost coefficients per cell (Robin, Neumann fluxes,
// values varying in space or time; operator/faces.go has the formulas):
// the solver sets them at the start and, where they depend on t, at the
// times each step's terms belong to.

// perCellFaces reports whether any face needs coefficients per cell.
func (s *Solver) perCellFaces() bool {
	for _, f := range s.spec.Faces {
		if f[0].PerCell() || f[1].PerCell() {
			return true
		}
	}
	return false
}

// faceK is the conductivity a ghost sees in the uniform medium: the heat
// equation's α, Poisson's 1 (∇²u = f).
func (s *Solver) faceK() float64 {
	if s.spec.Equation == Heat {
		return s.spec.Alpha
	}
	return 1
}

// newBoundary sets up and sets (at the current time) the coefficients of
// the explicit and Jacobi paths' ghosts: the full layers and every run's.
func (s *Solver) newBoundary() {
	if !s.perCellFaces() {
		return
	}
	k0 := s.faceK()
	k := func(mirror, axis, side int) float64 { return k0 }
	if s.media != nil {
		k = s.media.Conductivity
	}
	s.bound = &operator.Boundary{Lay: s.lay, H: s.spec.Spacing(), Length: s.spec.Length, K: k, At: s.spec.FaceAt}
	s.setFaces(s.simTime)
}

// setFaces sets the explicit and Jacobi paths' ghost coefficients at t.
func (s *Solver) setFaces(t float64) {
	if s.bound == nil {
		return
	}
	s.bound.Set(s.faces, s.inner.ghosts, t)
	s.bound.Set(nil, s.rim.ghosts, t)
}

// SourceError is a source that is not finite at a cell and time.
type SourceError struct {
	Step  int
	T     float64
	X     []float64 // the cell centre, C order
	Value float64
}

func (e *SourceError) Error() string {
	return fmt.Sprintf("the source is %v at x = %v, t = %g (step %d)", e.Value, e.X, e.T, e.Step)
}

// refreshSource sets f to the source of the step starting at t: explicit
// (theta 0) f(t); implicit (1−θ)·f(t) + θ·f(t + dt), backward Euler f(t + dt)
// alone; scaled as the setup scaled it. A value that is not finite is a
// SourceError. The energy account takes the explicit step's power here.
func (s *Solver) refreshSource(t, theta float64) error {
	at := s.spec.SourceAt
	p := at(t)
	if s.mg != nil {
		now, next := p, at(s.spec.timeAt(s.step+1))
		p = next
		if theta != 1 {
			p = func(x []float64, idx []int) float64 {
				return float64((1-theta)*now(x, idx)) + float64(theta*next(x, idx))
			}
		}
	}
	s.fill(s.f, p, s.srcScale, false)
	nd := len(s.spec.Shape)
	var bad *SourceError
	s.lay.ForRows(s.boxCells(), func(start, n int) {
		for i := start; i < start+n && bad == nil; i++ {
			if v := s.f[i]; v-v != 0 {
				g := make([]int, nd)
				s.lay.Global(i, g)
				x := make([]float64, nd)
				for a := range nd {
					x[a] = (float64(g[a]) + 0.5) * s.spec.Spacing()[a]
				}
				bad = &SourceError{Step: s.step + 1, T: t, X: x, Value: v / s.srcScale}
			}
		}
	})
	// Every rank stops on the same step: the lowest rank that met one
	// names it, the others fail with it too.
	flag := 0.0
	if bad != nil {
		flag = float64(s.c.Size() - s.c.Rank())
	}
	out := []float64{0}
	if err := s.c.Allreduce(comm.Max, []float64{flag}, out); err != nil {
		return err
	}
	if out[0] != 0 {
		if bad == nil {
			return fmt.Errorf("rank %d: %w", s.c.Size()-int(out[0]), ErrSourceNotFinite)
		}
		return bad
	}
	if s.acct != nil && s.mg == nil {
		return s.setPower(p)
	}
	return nil
}

// ErrSourceNotFinite is what the ranks that met no bad source value fail
// with when another did.
var ErrSourceNotFinite = errors.New("the source is not finite there")
