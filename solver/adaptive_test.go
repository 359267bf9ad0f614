package solver

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// A sine mode decays as exp(−α·λ_h·t) on the grid (λ_h the discrete
// operator's eigenvalue of it): with equation.dt = "auto" each scheme's
// (SDIRK4's measured by its embedded solution, the others' by step doubling)
// error at t_end against it falls with rtol and stays within 10 × rtol,
// the run ends exactly at t_end, the steps grow as the mode decays, and
// the bits are the same on 1 and 3 ranks.
func TestAdaptiveStepsMeetTheTolerance(t *testing.T) {
	shape := []int{32, 32}
	const tEnd = 0.2
	for _, scheme := range []Scheme{BackwardEuler, CrankNicolson, SDIRK4} {
		var prev float64
		for _, rtol := range []float64{1e-3, 1e-4, 1e-5} {
			s, _ := sineDecay(shape, scheme, 0, tEnd)
			s.Tolerance = 1e-12
			s.DT = tEnd * 1e-6
			s.Steps = 1 << 30
			s.Adaptive = &Adaptive{RTol: rtol, ATol: rtol, DTMin: tEnd * 1e-12, DTMax: tEnd, DTInitial: tEnd * 1e-6, Events: []float64{tEnd}}
			lambda := 0.0
			for _, n := range shape {
				h := 1 / float64(n)
				lambda += 4 / (h * h) * math.Pow(math.Sin(math.Pi*h/2), 2)
			}
			exact := func(x []float64) float64 {
				return math.Exp(-s.Alpha*lambda*tEnd) * math.Sin(math.Pi*x[0]) * math.Sin(math.Pi*x[1])
			}
			out := run(t, 1, s)
			field, ctl, end := out.field, *out.ctl, out.simTime
			require.Equal(t, tEnd, end, "the run ends exactly at t_end")
			e := maxErr(s, field, exact)
			t.Logf("%v rtol %g: %d steps (%d rejected), dt %.3g … %.3g, error %.3e", scheme, rtol, ctl.Accepted, ctl.Rejects, ctl.DTMin, ctl.DTMax, e)
			require.Less(t, e, 10*rtol)
			if prev > 0 {
				require.Less(t, e, prev, "the error falls as rtol falls")
			}
			prev = e
			require.Greater(t, ctl.DTMax, 100*ctl.DTMin, "the steps grow")
			if rtol == 1e-4 {
				out3 := run(t, 3, s)
				require.Equal(t, fingerprint(field), fingerprint(out3.field), "3 ranks")
				require.Equal(t, ctl, *out3.ctl)
			}
		}
	}
}

// Without a first step given, the first is Hairer's: h₀ = 0.01·d₀/d₁ with
// d₀ = ‖u/sc‖∞, d₁ = ‖∂u/∂t/sc‖∞, then h₁ = (0.01/max(d₁, d₂))^(1/k) from
// d₂ = ‖(∂u/∂t after an Euler step of h₀) − ∂u/∂t)/sc‖∞/h₀, and min(100·h₀,
// h₁). On a sine mode, an eigenvector of the grid's operator, ∂u/∂t =
// −α·λ_h·u and every maximum meets at the same cell: d₁ = αλ·d₀, d₂ =
// (αλ)²·d₀, so the first step is min(1/(αλ), (0.01/((αλ)²·d₀))^(1/4))
// (SDIRK4's estimate: k = 4), d₀ = u_max/(atol + rtol·u_max). The same on
// 3 ranks.
func TestAdaptiveFirstStepFromTheField(t *testing.T) {
	shape := []int{32, 32}
	const tEnd = 0.2
	s, _ := sineDecay(shape, SDIRK4, 0, tEnd)
	s.Tolerance = 1e-12
	s.DT = tEnd * 1e-6
	s.Steps = 1
	s.Adaptive = &Adaptive{RTol: 1e-3, ATol: 1e-3, DTMin: tEnd * 1e-12, DTMax: tEnd, Events: []float64{tEnd}}
	lambda := 0.0
	for _, n := range shape {
		h := 1 / float64(n)
		lambda += 4 / (h * h) * math.Pow(math.Sin(math.Pi*h/2), 2)
	}
	umax := 0.0
	cellCentres(shape, s.Length, func(_ int, x []float64) { umax = max(umax, math.Sin(math.Pi*x[0])*math.Sin(math.Pi*x[1])) })
	rate := s.Alpha * lambda
	d0 := umax / (s.Adaptive.ATol + s.Adaptive.RTol*umax)
	want := min(1/rate, math.Pow(0.01/(rate*rate*d0), 0.25))
	require.Less(t, want, 1/rate, "the second look decides here")
	for _, ranks := range []int{1, 3} {
		out := run(t, ranks, s)
		require.Equal(t, 1, out.ctl.Accepted)
		require.InEpsilon(t, want, out.simTime, 1e-9, "%d ranks", ranks)
	}
}
