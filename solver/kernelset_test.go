package solver

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/stencil"
)

// The whole solver gives the same bits with every kernel set: explicit
// heat, Poisson by Jacobi and by multigrid, Crank–Nicolson heat, 2D and
// 3D, on several rank and thread counts, one step at a time and (explicit,
// Jacobi) in temporal blocks of 3, so that rows of many lengths (interior,
// rim, tiles, split along x, coarse levels) go through each set.
func TestSolverSameBitsWithEveryKernelSet(t *testing.T) {
	sets := stencil.Available()
	if len(sets) == 1 {
		t.Skipf("only the %s set in this build", sets[0].Name)
	}
	for _, shape := range [][]int{{23, 45}, {9, 10, 37}} {
		nd := len(shape)
		for _, v := range []struct {
			eq        Equation
			multigrid bool
			scheme    Scheme
		}{{Heat, false, Explicit}, {Poisson, false, Explicit}, {Poisson, true, Explicit}, {Heat, true, CrankNicolson}} {
			s := heatSpec(shape)
			s.Equation, s.Multigrid, s.Scheme = v.eq, v.multigrid, v.scheme
			if v.scheme == CrankNicolson {
				s.DT *= 20
			}
			s.Faces[0] = [2]Face{{Kind: Dirichlet, Value: 1}, {Kind: Neumann}}
			s.Faces[nd-1] = [2]Face{{Kind: Periodic}, {Kind: Periodic}}
			s.Initial = Random(shape, 5, 1, 0)
			s.Source = Gaussian([]float64{0.3, 0.6, 0.5}[:nd], 0.2, 2, 0)
			s.Steps = 40
			s.CheckEvery = 7
			if v.multigrid {
				s.Steps, s.Tolerance = 10, 1e-9
			}
			for _, sp := range []struct{ ranks, threads, ghost int }{{1, 1, 1}, {2, 2, 1}, {3, 1, 1}, {4, 3, 1}, {1, 2, 3}, {3, 1, 3}} {
				if v.multigrid && sp.ghost > 1 {
					continue
				}
				s.Threads, s.Ghost = sp.threads, sp.ghost
				var want outcome
				for i, ks := range sets {
					// Each set, and each set streaming its sweeps (StreamAbove
					// 0: every 2D grid streams).
					for _, above := range []int{StreamAbove, 0} {
						restore := stencil.Use(ks)
						keep := StreamAbove
						StreamAbove = above
						out := run(t, sp.ranks, s)
						StreamAbove = keep
						restore()
						if i == 0 && above != 0 {
							want = out
							continue
						}
						where := fmt.Sprintf("%v %+v %+v: %s (streaming %v) vs %s", shape, v, sp, ks.Name, above == 0, sets[0].Name)
						require.Equal(t, fingerprint(want.field), fingerprint(out.field), where)
						require.Equal(t, math.Float64bits(want.residual), math.Float64bits(out.residual), where)
						require.Equal(t, want.steps, out.steps, where)
					}
				}
			}
		}
	}
}
