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
	s.splitFacePhases()
}

// parallelFaceCells is the ghost cells of a step's faces from which the
// workers set them (one dispatch per axis) instead of the rank's goroutine
// alone: 3D 64³ spent 8% of its time there, serially.
var parallelFaceCells = 16384

// splitFacePhases shares stepFaces among the workers, axis by axis (a
// later axis's faces span the earlier ones' ghosts, so each axis is a
// phase; the faces of one axis write disjoint cells).
func (s *Solver) splitFacePhases() {
	s.facePhases = nil
	cells := 0
	for _, f := range s.stepFaces {
		for _, r := range f.Rows {
			cells += r.N
		}
	}
	if s.spec.Threads == 1 || cells < parallelFaceCells {
		return
	}
	t := s.spec.Threads
	for i := 0; i < len(s.stepFaces); {
		j := i
		for j < len(s.stepFaces) && s.stepFaces[j].Axis == s.stepFaces[i].Axis {
			j++
		}
		phase := make([][]stencil.GhostFace, t)
		for _, f := range s.stepFaces[i:j] {
			for w := range t {
				lo, hi := decomp.Split(len(f.Rows), t, w)
				part := f
				part.Rows = f.Rows[lo:hi]
				phase[w] = append(phase[w], part)
			}
		}
		s.facePhases = append(s.facePhases, phase)
		i = j
	}
}

// applyStepFaces sets the ghosts of stepFaces: by the workers, axis by
// axis, where splitFacePhases shared them.
func (s *Solver) applyStepFaces() {
	if s.facePhases == nil {
		stencil.ApplyFaces(s.stepFaces, s.u)
		return
	}
	for p := range s.facePhases {
		s.facePhase = p
		s.team.Run(s.applyFacePhase)
	}
}

// applyBoundaries sets the ghosts of the physical faces of u.
func (s *Solver) applyBoundaries(u []float64) { stencil.ApplyFaces(s.faces, u) }
