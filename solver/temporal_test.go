package solver

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// Temporal blocking with ghost width k gives the bits of one step at a time
// for every k, rank count, thread count and kind of face; Jacobi stops on
// the same iteration. Halo messages per step fall by k.
func TestTemporalBlockingBitForBit(t *testing.T) {
	type split struct{ ranks, threads int }
	splits := []split{{1, 1}, {1, 3}, {2, 2}, {4, 1}, {3, 2}}
	cases := []struct {
		name  string
		shape []int
		faces func(nd int) [][2]Face
	}{
		{"2d-mixed", []int{40, 37}, func(nd int) [][2]Face {
			f := faces(nd, Face{Kind: Dirichlet})
			f[0] = [2]Face{{Kind: Dirichlet, Value: 1}, {Kind: Neumann}}
			f[1] = [2]Face{{Kind: Periodic}, {Kind: Periodic}}
			return f
		}},
		{"2d-dirichlet", []int{33, 41}, func(nd int) [][2]Face { return faces(nd, Face{Kind: Dirichlet, Value: 0.5}) }},
		{"2d-neumann", []int{34, 35}, func(nd int) [][2]Face { return faces(nd, Face{Kind: Neumann}) }},
		{"3d-mixed", []int{17, 18, 19}, func(nd int) [][2]Face {
			f := faces(nd, Face{Kind: Neumann})
			f[0] = [2]Face{{Kind: Periodic}, {Kind: Periodic}}
			f[2] = [2]Face{{Kind: Dirichlet, Value: 1}, {Kind: Dirichlet}}
			return f
		}},
	}
	for _, c := range cases {
		for _, eq := range []Equation{Heat, Poisson} {
			t.Run(fmt.Sprintf("%s/%v", c.name, eq), func(t *testing.T) {
				nd := len(c.shape)
				s := heatSpec(c.shape)
				s.Equation = eq
				s.Faces = c.faces(nd)
				s.Initial = Random(c.shape, 5, 1, 0)
				s.Source = Gaussian([]float64{0.4, 0.5, 0.6}[:nd], 0.2, 3, 0.1)
				s.Steps, s.CheckEvery = 45, 10
				if eq == Poisson {
					s.Steps, s.Tolerance, s.CheckEvery = 6000, 1e-3, 7
				}
				var want outcome
				for i, k := range []int{1, 2, 3, 4, 8} {
					for j, sp := range splits {
						if i > 0 && j > 2 && k > 3 {
							continue // keep the suite short: deep blocks on fewer splits
						}
						s.Ghost, s.Threads = k, sp.threads
						got := run(t, sp.ranks, s)
						if i == 0 && j == 0 {
							want = got
							if eq == Poisson && c.name != "2d-neumann" {
								// Jacobi stops early here (pure Neumann has no unique solution).
								require.True(t, got.converged, "%d steps, residual %g", got.steps, got.residual)
							}
							continue
						}
						require.Equal(t, fingerprint(want.field), fingerprint(got.field), "k=%d split %+v", k, sp)
						require.Equal(t, want.steps, got.steps, "k=%d split %+v", k, sp)
						require.Equal(t, want.residual, got.residual, "k=%d split %+v", k, sp)
					}
				}
			})
		}
	}
}

// Wavefront tiles of any size along axis 1 (columns in 2D, rows in 3D),
// down to one, give the bits of one step at a time: the overlapped tiles
// and the physical faces they touch are right.
func TestWavefrontTilesBitForBit(t *testing.T) {
	for _, shape := range [][]int{{13, 17, 11}, {15, 23}} {
		nd := len(shape)
		s := heatSpec(shape)
		s.Faces = faces(nd, Face{Kind: Dirichlet, Value: 0.3})
		s.Faces[1] = [2]Face{{Kind: Neumann}, {Kind: Dirichlet, Value: 1}}
		s.Faces[nd-1][1] = Face{Kind: Neumann}
		s.Initial = Random(shape, 7, 1, 0)
		s.Source = Gaussian([]float64{0.4, 0.5, 0.6}[:nd], 0.2, 3, 0.1)
		s.Steps, s.CheckEvery = 24, 12
		want := run(t, 1, s)
		split := func(n int) []int { d := make([]int, nd); d[0] = 1; d[1] = n; d[nd-1] = max(d[nd-1], 1); return d }
		defer func(h int) { waveTileFixed = h }(waveTileFixed)
		for _, h := range []int{1, 2, 5, 16} {
			for _, k := range []int{2, 3, 4} {
				for _, sp := range []struct {
					ranks, threads int
					dims           []int
				}{{1, 1, nil}, {1, 2, nil}, {2, 1, split(2)}, {3, 2, split(3)}} {
					waveTileFixed = h
					s.Ghost, s.Threads, s.Dims = k, sp.threads, sp.dims
					got := run(t, sp.ranks, s)
					require.Equal(t, fingerprint(want.field), fingerprint(got.field), "%v: tile %d, k=%d, split %+v", shape, h, k, sp)
					require.Equal(t, want.residual, got.residual, "%v: tile %d, k=%d, split %+v", shape, h, k, sp)
				}
			}
		}
		s.Dims = nil
	}
}

// With ghost width k a rank sends one exchange's messages per k steps.
func TestTemporalBlockingDividesMessages(t *testing.T) {
	for _, k := range []int{1, 2, 4} {
		s := heatSpec([]int{32, 32})
		s.Initial = Constant(1)
		s.Steps, s.CheckEvery, s.Ghost = 40, 40, k
		s.Dims = []int{2, 2}
		msgs := run(t, 4, s).messages
		require.Equal(t, int64(2*40/k), msgs, "k=%d: rank 0 has 2 neighbours", k)
	}
}
