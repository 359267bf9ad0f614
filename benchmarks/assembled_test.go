package benchmarks

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// The assembled matrix is heat's operator: the cell-centred sine mode,
// zero on the Dirichlet faces, is its eigenvector with eigenvalue
// Σ_a (4/h²)·sin²(πh/2), in 2D and 3D, on an odd and an even size.
func TestAssembledIsTheStencilOperator(t *testing.T) {
	for _, c := range []struct{ dims, n int }{{2, 7}, {2, 16}, {3, 6}} {
		m := assemble(c.dims, c.n)
		cells := int(math.Pow(float64(c.n), float64(c.dims)))
		require.Len(t, m.start, cells+1)
		h := 1 / float64(c.n)
		u := make([]float64, cells)
		for i := range u {
			v, rem := 1.0, i
			for range c.dims {
				v *= math.Sin(math.Pi * (float64(rem%c.n) + 0.5) * h)
				rem /= c.n
			}
			u[i] = v
		}
		lambda := float64(c.dims) * 4 / (h * h) * math.Pow(math.Sin(math.Pi*h/2), 2)
		r := make([]float64, cells)
		m.residual(r, u, make([]float64, cells)) // r = −A·u
		for i := range r {
			require.InDelta(t, -lambda*u[i], r[i], 1e-9*lambda, "dims %d n %d cell %d", c.dims, c.n, i)
		}
	}
}
