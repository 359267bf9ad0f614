package operator

import (
	"heat/decomp"
	"heat/stencil"
)

// MediaStep is the time loop's update of heterogeneous media, a run of rows
// a call (the solver's interior and rim, each worker its runs): an explicit
// step of the heat equation (u' = u + dt/ρc·(∇·(k∇u) + f) on free cells) or a
// weighted Jacobi sweep of Poisson's −∇·(k∇u) = −f. Every ghost a run reads
// is the caller's to set first.
type MediaStep struct {
	m      *Media
	vk     stencil.VarKernels
	vc     *stencil.VarCoeffs
	sy     int
	jacobi bool
}

// ExplicitStep is the explicit step of dt. stream stores the rows past the
// caches (non-temporal stores, on sets and dimensions that have them) for
// fields far larger than them; a check step never streams.
func (m *Media) ExplicitStep(dt float64, stream bool) *MediaStep {
	s := m.step(stream)
	s.vc = m.Explicit(dt)
	return s
}

// JacobiStep is the weighted Jacobi sweep (JacobiWeight) of Poisson.
func (m *Media) JacobiStep() *MediaStep {
	s := m.step(false)
	s.vc, s.jacobi = m.Jacobi(), true
	return s
}

func (m *Media) step(stream bool) *MediaStep {
	nd := len(m.Lay.N)
	s := &MediaStep{m: m, vk: stencil.Active.Var(nd), sy: m.Lay.Stride[nd-2]}
	if !stream {
		s.vk.Stream = nil
	}
	return s
}

// SetDT changes an explicit step's dt (a shortened last step).
func (s *MediaStep) SetDT(dt float64) { s.m.SetStep(s.vc, dt) }

// Run updates run rn from u into v (f the source, or Poisson's right
// side); with check it returns the run's max |Δu| (NaN if any is NaN).
func (s *MediaStep) Run(v, u, f []float64, rn decomp.Run, check bool) float64 {
	sy := s.sy
	if !s.jacobi {
		if check {
			return s.vk.Check(s.vc, v, u, f, 0, rn.Start, rn.N, rn.Count, sy)
		}
		if s.vk.Stream != nil {
			// Fenced here, before the team's barrier lets other cores read
			// the rows: once a run, and a worker's runs are few (its share
			// of the interior, of each rim slab).
			s.vk.Stream(s.vc, v, u, f, 0, rn.Start, rn.N, rn.Count, sy)
			stencil.Fence()
			return 0
		}
		s.vk.Update(s.vc, v, u, f, 0, rn.Start, rn.N, rn.Count, sy)
		return 0
	}
	s.vk.Smooth(s.vc, v, u, f, JacobiWeight, rn.Start, rn.N, rn.Count, sy)
	if !check {
		return 0
	}
	m := 0.0
	for i := range rn.Count {
		a := rn.Start + i*sy
		m = maxNaN(m, stencil.MaxAbsDiff(v[a:a+rn.N], u[a:a+rn.N]))
	}
	return m
}

// Streams reports whether the step stores its rows past the caches.
func (s *MediaStep) Streams() bool { return s.vk.Stream != nil }
