package solver

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/internal/wait"
)

// More workers than CPUs: on one P, 2 ranks × 2 threads run every solver
// to the bits of 1 × 1, and the waits yield or park without spinning (a
// spin would hold the P that every goroutine it waits for needs).
func TestOversubscribedSameBitsWithoutSpinning(t *testing.T) {
	shape := []int{24, 20}
	cases := []struct {
		name string
		set  func(s *Spec)
	}{
		{"explicit", func(s *Spec) {}},
		{"temporal-blocking", func(s *Spec) { s.Ghost = 3 }},
		{"jacobi", func(s *Spec) { s.Equation, s.Steps = Poisson, 30 }},
		{"multigrid", func(s *Spec) { s.Equation, s.Multigrid, s.Steps = Poisson, true, 20 }},
		{"mgcg", func(s *Spec) {
			s.Equation, s.Multigrid, s.CG, s.Steps = Poisson, true, true, 20
			s.Media = randomMedia(shape, 7, true, false).fn()
		}},
		{"backward-euler", func(s *Spec) { s.Scheme, s.Multigrid, s.DT, s.Steps = BackwardEuler, true, 1e-3, 5 }},
		{"crank-nicolson", func(s *Spec) { s.Scheme, s.Multigrid, s.DT, s.Steps = CrankNicolson, true, 1e-3, 5 }},
	}
	for _, c := range cases {
		spec := heatSpec(shape)
		spec.Faces[1] = [2]Face{{Kind: Dirichlet, Value: 1}, {Kind: Neumann}}
		spec.Initial = Random(shape, 5, 1, 0)
		spec.Steps, spec.Tolerance = 12, 1e-9
		c.set(&spec)
		want := run(t, 1, spec)

		spec.Threads = 2
		procs := runtime.GOMAXPROCS(1)
		before := wait.Stats()
		got := run(t, 2, spec)
		waits := wait.Stats().Sub(before)
		runtime.GOMAXPROCS(procs)

		require.Equal(t, fingerprint(want.field), fingerprint(got.field), c.name)
		require.Equal(t, want.steps, got.steps, c.name)
		t.Logf("%s: %+v", c.name, waits)
		require.Positive(t, waits.Parked+waits.Yielded, "%s: waits yield or park (%+v)", c.name, waits)
		require.Zero(t, waits.Expired+waits.Lost, "%s: no wait spins on one P (%+v)", c.name, waits)
	}
}
