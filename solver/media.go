package solver

import (
	"fmt"
	"math"
	"slices"

	"heat/comm"
	"heat/decomp"
	"heat/operator"
	"heat/plan"
)

// StabilityError is an explicit time step past the stability limit.
type StabilityError struct{ DT, Limit float64 }

func (e *StabilityError) Error() string {
	return fmt.Sprintf("time step %g is past the explicit stability limit %g of the media (min over cells of ρc/Σ k_f/h²)", e.DT, e.Limit)
}

// MediaError is a medium the solver cannot step or solve: no free
// conducting cell, face coefficients k_f/h² that overflow, or an explicit
// stability limit that is not a finite positive time. The config's to fix.
type MediaError struct{ Msg string }

func (e *MediaError) Error() string { return e.Msg }

// checkMedia agrees with the other ranks that the medium has a free
// conducting cell and finite face coefficients.
func (s *Solver) checkMedia() error {
	m := s.media
	free, kmax, bad := 0.0, 0.0, 0.0
	own := decomp.Box{Lo: make([]int, len(m.Lay.N)), Hi: m.Lay.N}
	m.Lay.ForRows(own, func(start, n int) {
		for i := start; i < start+n; i++ {
			if m.Free[i] != 0 {
				free = 1
			}
			kmax = max(kmax, m.K[i])
			for a, b := range m.B {
				if f, g := b[i], b[i-m.Lay.Stride[a]]; !(f <= math.MaxFloat64) || !(g <= math.MaxFloat64) {
					bad = 1
				}
			}
		}
	})
	out := make([]float64, 3)
	if err := s.c.Allreduce(comm.Max, []float64{free, kmax, bad}, out); err != nil {
		return err
	}
	h := s.spec.Spacing()
	switch {
	case out[2] != 0:
		return &MediaError{fmt.Sprintf("the face coefficients k_f/h² overflow: k up to %g over cells of size %g (k/h² must stay below %g)", out[1], slices.Min(h), math.MaxFloat64)}
	case out[0] == 0:
		return &MediaError{"no free conducting cell: every cell is an insulating hole (k = 0), held (fixed) or enclosed by holes; there is nothing to solve"}
	}
	return nil
}

// newMedia reads the box's media, derives its coefficients (operator), and
// agrees with the other ranks on the stability limit: an automatic time
// step is 0.9 of it, a given one must not pass it.
func (s *Solver) newMedia() error {
	spec := &s.spec
	box := s.lay.Box
	k, rhoC, held, err := spec.Media(s.c, box.Lo, box.Hi)
	if err != nil {
		return err
	}
	exchange := func(x []float64) error {
		if err := s.plan.Start(x); err != nil {
			return err
		}
		return s.plan.Finish(x)
	}
	s.media, err = operator.NewMedia(s.lay, spec.Spacing(), k, rhoC, held, s.hasNeighbour, exchange)
	if err != nil {
		return err
	}
	if err := s.checkMedia(); err != nil {
		return err
	}
	nd := len(spec.Shape)
	// The explicit step streams its stores past the caches in 2D when what
	// a step streams (the two fields, a face array per axis and dt/ρc, of
	// every rank of the process) passes a quarter of StreamAbove, 128 MiB:
	// measured (AVX-512, 2 threads) 2048², 168 MB, 9–20% faster streamed,
	// 1024², 42 MB, 10–20% slower; AVX2 about even at 2048². Otherwise the
	// step plainly stores.
	stream := nd == 2 && 8*(nd+3)*s.lay.Len()*comm.RanksHere(s.c) > StreamAbove/4
	switch {
	case spec.Equation == Poisson && !spec.usesMG():
		s.mstep = s.media.JacobiStep()
	case spec.Equation == Heat && spec.Scheme == Explicit:
		out := make([]float64, 1)
		if err := s.c.Allreduce(comm.Min, []float64{s.media.StableDT()}, out); err != nil {
			return err
		}
		limit := out[0]
		if !(limit > 0) || math.IsInf(limit, 1) {
			return &MediaError{fmt.Sprintf("the explicit stability limit min over cells of ρc/Σk_f/h² is %g, not a finite positive time step (ρc and k/h² of the media out of range)", limit)}
		}
		if spec.DT == 0 {
			spec.DT = operator.SafetyFactor * limit
			if spec.TEnd > 0 && spec.Steps == 0 {
				spec.Steps = plan.StepsTo(spec.TEnd, spec.DT)
			}
		} else if spec.DT > limit {
			return &StabilityError{DT: spec.DT, Limit: limit}
		}
		s.dt = spec.DT
		s.mstep = s.media.ExplicitStep(spec.DT, stream)
	}
	return nil
}

// anyHeld reports whether some rank holds a held cell.
func (s *Solver) anyHeld() (bool, error) {
	local := 0.0
	for _, v := range s.media.Held {
		if v == v {
			local = 1
			break
		}
	}
	out := make([]float64, 1)
	err := s.c.Allreduce(comm.Max, []float64{local}, out)
	return out[0] != 0, err
}

// DT is the time step the run takes (heat): the given one, or the one
// picked from the media's stability limit.
func (s *Solver) DT() float64 { return s.spec.DT }

// Steps is the run's step total (set from TEnd with an automatic step).
func (s *Solver) Steps() int { return s.spec.Steps }

// Media is the run's media on this rank's box, nil for the uniform medium.
func (s *Solver) Media() *operator.Media { return s.media }
