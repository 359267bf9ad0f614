package solver

import "heat/operator"

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
