package solver

import (
	"fmt"

	"heat/comm"
	"heat/decomp"
	"heat/internal/hugemem"
)

// gatherTag is the message tag of Gather's pieces.
const gatherTag = comm.TagGather

// Gather collects the global field (interior cells only, C order) on rank 0;
// other ranks get nil. Collective. The pieces travel as float64 messages
// (no byte encoding), and rank 0 reuses its buffers from one call to the
// next, so the result is only valid until the next Gather.
func (s *Solver) Gather() ([]float64, error) { return s.gather(s.u, &s.gathered) }

// GatherHoles collects, like Gather, the media's conductivity on rank 0,
// whose zeros are the insulating holes (nil on the others, and in the
// uniform medium). Collective.
func (s *Solver) GatherHoles() ([]float64, error) {
	if s.media == nil {
		return nil, nil
	}
	var k []float64
	return s.gather(s.media.K, &k)
}

// gather collects the box values of src, a field of the solver's layout,
// into *dst on rank 0.
func (s *Solver) gather(src []float64, dst *[]float64) ([]float64, error) {
	nd := len(s.lay.N)
	local := decomp.Box{Lo: make([]int, nd), Hi: s.lay.N}
	if s.c.Rank() != 0 {
		if len(s.gatherSend) != s.lay.Box.Size() {
			s.gatherSend = hugemem.Floats(s.lay.Box.Size())
		}
		k := 0
		s.lay.ForRows(local, func(start, n int) { k += copy(s.gatherSend[k:], src[start:start+n]) })
		req, err := s.c.Isend(s.gatherSend, 0, gatherTag)
		if err != nil {
			return nil, err
		}
		return nil, s.c.Waitall([]comm.Request{req})
	}
	total := 1
	for _, n := range s.spec.Shape {
		total *= n
	}
	if len(*dst) != total {
		*dst = hugemem.Floats(total)
	}
	gathered := *dst
	whole := decomp.NewLayout(decomp.Box{Lo: make([]int, nd), Hi: s.spec.Shape}, 0)
	// Rank 0's own box.
	s.lay.ForRows(local, func(start, n int) {
		// The row's global start: shift by the box offset.
		c := make([]int, nd)
		s.lay.Global(start, c)
		copy(gathered[whole.Index(c...):], src[start:start+n])
	})
	if s.c.Size() == 1 {
		return gathered, nil
	}
	if s.gatherRecv == nil {
		s.gatherRecv = make([][]float64, s.c.Size())
	}
	reqs := make([]comm.Request, 0, s.c.Size()-1)
	for r := 1; r < s.c.Size(); r++ {
		if n := s.grid.Box(r).Size(); len(s.gatherRecv[r]) != n {
			s.gatherRecv[r] = hugemem.Floats(n)
		}
		req, err := s.c.Irecv(s.gatherRecv[r], r, gatherTag)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, req)
	}
	if err := s.c.Waitall(reqs); err != nil {
		return nil, fmt.Errorf("gather: %w", err)
	}
	for r := 1; r < s.c.Size(); r++ {
		k := 0
		p := s.gatherRecv[r]
		whole.ForRows(s.grid.Box(r), func(start, n int) { k += copy(gathered[start:start+n], p[k:]) })
	}
	return gathered, nil
}
