package solver

import (
	"encoding/binary"
	"fmt"
	"math"

	"heat/decomp"
)

// Gather collects the global field (interior cells only, C order) on rank 0;
// other ranks get nil. Collective.
func (s *Solver) Gather() ([]float64, error) {
	nd := len(s.lay.N)
	local := decomp.Box{Lo: make([]int, nd), Hi: s.lay.N}
	buf := make([]byte, 0, 8*s.lay.Box.Size())
	s.lay.ForRows(local, func(start, n int) {
		for _, x := range s.u[start : start+n] {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x))
		}
	})
	parts, err := s.c.Gatherv(buf, 0)
	if err != nil || s.c.Rank() != 0 {
		return nil, err
	}
	total := 1
	for _, n := range s.spec.Shape {
		total *= n
	}
	out := make([]float64, total)
	whole := decomp.NewLayout(decomp.Box{Lo: make([]int, nd), Hi: s.spec.Shape}, 0)
	for r, p := range parts {
		box := s.grid.Box(r)
		if len(p) != 8*box.Size() {
			return nil, fmt.Errorf("gather: rank %d sent %d bytes for %d cells", r, len(p), box.Size())
		}
		k := 0
		// The box in the global layout (ghost 0): local coords = global.
		whole.ForRows(box, func(start, n int) {
			for j := range n {
				out[start+j] = math.Float64frombits(binary.LittleEndian.Uint64(p[8*k:]))
				k++
			}
		})
	}
	return out, nil
}
