package solver

import (
	"fmt"

	"heat/comm"
	"heat/decomp"
)

// setInitial sets the interior of u (laid out as s.lay) to the initial
// field: spec.InitialField's values of this rank's box when it is set (a
// field read from a file), else spec.Initial at every cell centre. Ghosts
// are left alone.
func (s *Solver) setInitial(u []float64) error {
	if s.spec.InitialField == nil {
		s.fill(u, s.spec.Initial, 1, false)
		return nil
	}
	box := s.lay.Box
	vals, err := s.spec.InitialField(s.c, box.Lo, box.Hi)
	if err != nil {
		return err
	}
	if len(vals) != box.Size() {
		return fmt.Errorf("solver: the initial field of box %v holds %d values, want %d", box, len(vals), box.Size())
	}
	k := 0
	s.lay.ForRows(decomp.Box{Lo: make([]int, len(s.lay.N)), Hi: s.lay.N}, func(start, n int) {
		copy(u[start:start+n], vals[k:k+n])
		k += n
	})
	return nil
}

// boxProfile is the Profile of the field field gives for box (read here,
// collectively): the value at a cell of the box by its global index.
func boxProfile(c comm.Comm, box decomp.Box, field func(c comm.Comm, lo, hi []int) ([]float64, error)) (Profile, error) {
	vals, err := field(c, box.Lo, box.Hi)
	if err != nil {
		return nil, err
	}
	if len(vals) != box.Size() {
		return nil, fmt.Errorf("solver: the source field of box %v holds %d values, want %d", box, len(vals), box.Size())
	}
	lo, hi := box.Lo, box.Hi
	return func(_ []float64, idx []int) float64 {
		k := 0
		for a := range idx {
			k = k*(hi[a]-lo[a]) + idx[a] - lo[a]
		}
		return vals[k]
	}, nil
}
