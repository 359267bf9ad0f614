package solver

import (
	"fmt"

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
