package solver

import (
	"heat/decomp"
	"heat/stencil"
)

// splitFaces divides the physical faces of the one-step path: the ghost
// cells at the ends of the interior's rows go to rowFaces (set by the
// worker that updates the row), the rest stay in stepFaces.
func (s *Solver) splitFaces(in decomp.Box) {
	nd := len(s.lay.N)
	x := nd - 1
	s.stepFaces = s.faces
	s.rowFaces = [2]*Face{}
	if in.Empty() || s.lay.Ghost != 1 {
		return
	}
	inside := func(start int) bool {
		for a := range x {
			c := start/s.lay.Stride[a] - s.lay.Ghost
			start %= s.lay.Stride[a]
			if c < in.Lo[a] || c >= in.Hi[a] {
				return false
			}
		}
		return true
	}
	s.stepFaces = nil
	for _, f := range s.faces {
		if !f.Cells {
			s.stepFaces = append(s.stepFaces, f)
			continue
		}
		side := 1
		if f.Low {
			side = 0
		}
		if (side == 0 && in.Lo[x] != 0) || (side == 1 && in.Hi[x] != s.lay.N[x]) {
			s.stepFaces = append(s.stepFaces, f)
			continue
		}
		face := s.spec.Faces[x][side]
		s.rowFaces[side] = &face
		kept := f
		kept.Rows = nil
		for _, r := range f.Rows {
			if !inside(r.Start) {
				kept.Rows = append(kept.Rows, r)
			}
		}
		s.stepFaces = append(s.stepFaces, kept)
	}
}

// applyBoundaries sets the ghosts of the physical faces of u.
func (s *Solver) applyBoundaries(u []float64) { stencil.ApplyFaces(s.faces, u) }
