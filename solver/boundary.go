package solver

import "heat/decomp"

// bcFace is one ghost layer of a physical face of this rank's box: each
// ghost cell takes its value from the cell mirrored across the face.
type bcFace struct {
	kind  BC
	twice float64 // 2·value, for Dirichlet
	delta int     // flat offset from a ghost cell to its mirror cell
	rows  []row
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
				out = append(out, bf)
			}
		}
	}
	return out
}

// applyBoundaries sets the ghosts of the physical faces of u: Dirichlet
// ghost = 2·value − mirror (the value holds on the face between them),
// Neumann ghost = mirror (zero flux).
func (s *Solver) applyBoundaries(u []float64) {
	for i := range s.faces {
		f := &s.faces[i]
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
