package solver

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/internal/team"
	"heat/internal/wait"
)

// More workers than CPUs: on one P, 2 ranks × 2 threads run every solver
// to the bits of 1 × 1, and the waits yield or park without spinning (a
// spin would hold the P that every goroutine it waits for needs); parts
// are taken by whoever is free. Sweeps cut in many small parts give those
// bits too, on one P and on all.
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

		// Parts of 16 cells: several a worker, taken by whoever is free.
		restore := team.SetPartCells(16)
		spec.Threads = 2
		procs := runtime.GOMAXPROCS(1)
		before := wait.Stats()
		got := run(t, 2, spec)
		waits := wait.Stats().Sub(before)
		runtime.GOMAXPROCS(procs)
		spec.Threads = 3
		got3 := run(t, 2, spec) // as many Ps as the machine has
		restore()

		for _, g := range []outcome{got, got3} {
			require.Equal(t, fingerprint(want.field), fingerprint(g.field), c.name)
			require.Equal(t, want.steps, g.steps, c.name)
		}
		require.Positive(t, waits.Parked+waits.Yielded, "%s: waits yield or park (%+v)", c.name, waits)
		require.Zero(t, waits.Expired+waits.Lost, "%s: no wait spins on one P (%+v)", c.name, waits)
		require.Positive(t, waits.Taken, "%s: parts were taken (%+v)", c.name, waits)
	}
}
