package solver

import "heat/decomp"

// bcFace is one ghost layer of a physical face of this rank's box: each
// ghost cell takes its value from the cell mirrored across the face.
type bcFace struct {
	kind  BC
	twice float64 // 2·value, for Dirichlet
	delta int     // flat offset from a ghost cell to its mirror cell
	rows  []row
	cells bool // every row is one cell (a face across the last axis)
}

// physicalFaces lists the ghost layers on faces of the global grid that this
// rank touches (periodic axes have none: their ghosts come from the halo).
func (s *Solver) physicalFaces() []bcFace {
	nd := len(s.lay.N)
	n := s.lay.N
	var out []bcFace
	for a := range nd {
		for side := range 2 {
			f := s.spec.Faces[a][side]
			if f.Kind == Periodic {
				continue
			}
			if s.hasNeighbour[a][side] {
				continue
			}
			for j := 1; j <= min(s.lay.Ghost, n[a]); j++ {
				// The face spans the ghosts of the other axes too: temporal
				// blocking updates cells there.
				b := decomp.Box{Lo: make([]int, nd), Hi: make([]int, nd)}
				for x := range nd {
					b.Lo[x], b.Hi[x] = -s.lay.Ghost, n[x]+s.lay.Ghost
				}
				var ghost, mirror int
				if side == 0 {
					ghost, mirror = -j, j-1
				} else {
					ghost, mirror = n[a]-1+j, n[a]-j
				}
				b.Lo[a], b.Hi[a] = ghost, ghost+1
				bf := bcFace{kind: f.Kind, twice: 2 * f.Value, delta: (mirror - ghost) * s.lay.Stride[a]}
				s.lay.ForRows(b, func(start, n int) { bf.rows = append(bf.rows, row{start, n}) })
				bf.cells = a == nd-1
				out = append(out, bf)
			}
		}
	}
	return out
}

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
		if !f.cells {
			s.stepFaces = append(s.stepFaces, f)
			continue
		}
		side := 1
		if f.delta > 0 { // the mirror lies to the right: the low face
			side = 0
		}
		if (side == 0 && in.Lo[x] != 0) || (side == 1 && in.Hi[x] != s.lay.N[x]) {
			s.stepFaces = append(s.stepFaces, f)
			continue
		}
		face := s.spec.Faces[x][side]
		s.rowFaces[side] = &face
		kept := f
		kept.rows = nil
		for _, r := range f.rows {
			if !inside(r.start) {
				kept.rows = append(kept.rows, r)
			}
		}
		s.stepFaces = append(s.stepFaces, kept)
	}
}

// applyBoundaries sets the ghosts of the physical faces of u: Dirichlet
// ghost = 2·value − mirror (the value holds on the face between them),
// Neumann ghost = mirror (zero flux).
func (s *Solver) applyBoundaries(u []float64) { s.applyFaces(s.faces, u) }

// applyFaces sets the ghosts of the given faces of u.
func (s *Solver) applyFaces(faces []bcFace, u []float64) {
	for i := range faces {
		f := &faces[i]
		if f.cells {
			// A face across the last axis: one cell per row.
			for _, r := range f.rows {
				if f.kind == Dirichlet {
					u[r.start] = f.twice - u[r.start+f.delta]
				} else {
					u[r.start] = u[r.start+f.delta]
				}
			}
			continue
		}
		for _, r := range f.rows {
			g := u[r.start : r.start+r.n]
			m := u[r.start+f.delta : r.start+f.delta+r.n]
			if f.kind == Dirichlet {
				for j := range g {
					g[j] = f.twice - m[j]
				}
			} else {
				copy(g, m)
			}
		}
	}
}
