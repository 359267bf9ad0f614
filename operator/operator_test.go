package operator

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/decomp"
	"heat/stencil"
)

// The face coefficient is the harmonic mean, the same bits as the
// contract's 2·k_i·k_j/(k_i + k_j) wherever that is finite, and finite
// where it overflows (adjacent k of 1e154 and more), between the two.
func TestHarmonic(t *testing.T) {
	require.Equal(t, 0.0, Harmonic(0, 5))
	require.Equal(t, 7.5, Harmonic(7.5, 7.5))
	for _, p := range [][2]float64{{1, 50}, {1e-3, 1e3}, {0.1, 0.3}, {1e150, 3e151}, {2e-300, 1e-290}} {
		require.Equal(t, 2*p[0]*p[1]/(p[0]+p[1]), Harmonic(p[0], p[1]), "%v", p)
	}
	for _, p := range [][2]float64{{1e154, 3e155}, {1e300, 1e308}, {math.MaxFloat64, 1}, {math.MaxFloat64, math.MaxFloat64 / 2}} {
		h := Harmonic(p[0], p[1])
		lo, hi := min(p[0], p[1]), max(p[0], p[1])
		require.True(t, h >= lo && h <= 2*lo && h <= hi, "%v: %g", p, h)
		require.Equal(t, h, Harmonic(p[1], p[0]), "symmetric")
	}
	require.InEpsilon(t, 2*1e154*(3e155/(1e154+3e155)), Harmonic(1e154, 3e155), 1e-15)
}

// The uniform limit is 1/(2·α·Σ1/h²).
func TestStableDT(t *testing.T) {
	require.Equal(t, 1/(2*2*(1/0.25+1/0.0625)), NewUniform(2, []float64{0.5, 0.25}).StableDT())
}

// The media's operator a·u − ∇·(b∇u), as the variable-coefficient kernels
// of every set apply Implicit's coefficients, against a matrix assembled
// here from the contract alone (k_f = 2k_ik_j/(k_i + k_j), 0 at a hole,
// k_i at a physical face whose ghost is given; rows of holes and held
// cells 0), in 2D and 3D, with holes, held cells and jumps of 10⁴.
func TestMediaImplicitAgainstAssembled(t *testing.T) {
	for _, shape := range [][]int{{7, 9}, {4, 5, 6}} {
		nd := len(shape)
		lay := decomp.NewLayout(decomp.Box{Lo: make([]int, nd), Hi: shape}, 1)
		h := []float64{0.3, 0.2, 0.1}[:nd]
		r := rand.New(rand.NewPCG(uint64(nd), 7))
		n := lay.Box.Size()
		k, rhoC, held := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range n {
			k[i], rhoC[i], held[i] = []float64{1, 1e4, 0.5}[r.IntN(3)], 1+r.Float64(), math.NaN()
			switch x := r.Float64(); {
			case x < 0.08:
				k[i] = 0
			case x < 0.15:
				held[i] = 2
			}
		}
		noNeighbour := make([][2]bool, nd)
		m, err := NewMedia(lay, h, k, rhoC, held, noNeighbour, func([]float64) error { return nil })
		require.NoError(t, err)
		const sigma, beta = 0.7, 0.003
		vc := m.Implicit(sigma, beta)
		u := make([]float64, lay.Len())
		for i := range u {
			u[i] = r.Float64()*2 - 1 // ghosts too: the faces' given values
		}
		// The contract, cell by cell over global coordinates.
		as := assemble(lay, h, k, rhoC, held, sigma, beta)
		want := make([]float64, lay.Len())
		for i := range as.rows {
			want[i] = as.apply(u, i)
		}
		for _, ks := range stencil.Available() {
			got := make([]float64, lay.Len())
			kern := ks.Var(nd)
			sy := lay.Stride[nd-1-1]
			lay.ForRows(decomp.Box{Lo: make([]int, nd), Hi: lay.N}, func(start, cnt int) {
				kern.Apply(vc, got, u, nil, 0, start, cnt, 1, sy)
			})
			for i := range want {
				require.InDelta(t, want[i], got[i], 1e-12*max(1, math.Abs(want[i])), "%v %s cell %d", shape, ks.Name, i)
			}
		}
	}
}

// cStride is the C-order stride of axis a in a grid of shape.
func cStride(shape []int, a int) int {
	s := 1
	for b := a + 1; b < len(shape); b++ {
		s *= shape[b]
	}
	return s
}

// A coarse level's operator (NewCoarse) is σρc·u + β·tie·u − Σ β·b_f·(u_j −
// u_i) on its free cells, the ties (faces to held cells, whose error is 0)
// on the diagonal only, and its Jacobi weight 1/(σρc + β·tie + β·Σb_f):
// against the rows written here, every kernel set, 2D and 3D.
func TestCoarseTiesAgainstAssembled(t *testing.T) {
	for _, shape := range [][]int{{6, 8}, {4, 5, 6}} {
		nd := len(shape)
		lay := decomp.NewLayout(decomp.Box{Lo: make([]int, nd), Hi: shape}, 1)
		r := rand.New(rand.NewPCG(uint64(nd), 11))
		b := make([][]float64, nd)
		for a := range b {
			b[a] = make([]float64, lay.Len())
			for i := range b[a] {
				b[a][i] = math.Pow(10, 4*r.Float64()-2)
			}
		}
		rhoC, free, tie := make([]float64, lay.Len()), make([]float64, lay.Len()), make([]float64, lay.Len())
		for i := range free {
			rhoC[i], free[i] = 1+r.Float64(), 1
			if r.Float64() < 0.3 {
				tie[i] = 100 * r.Float64()
			}
		}
		m := NewCoarse(lay, []float64{0.1, 0.2, 0.3}[:nd], b, rhoC, free, tie)
		const sigma, beta = 0.5, 0.02
		vc := m.Implicit(sigma, beta)
		u := make([]float64, lay.Len())
		for i := range u {
			u[i] = r.Float64()*2 - 1
		}
		want := make([]float64, lay.Len())
		lay.ForRows(decomp.Box{Lo: make([]int, nd), Hi: lay.N}, func(start, cnt int) {
			for i := start; i < start+cnt; i++ {
				row, diag := (sigma*rhoC[i]+beta*tie[i])*u[i], sigma*rhoC[i]+beta*tie[i]
				for a := range nd {
					st := lay.Stride[a]
					row -= beta*b[a][i]*(u[i+st]-u[i]) + beta*b[a][i-st]*(u[i-st]-u[i])
					diag += beta * (b[a][i] + b[a][i-st])
				}
				want[i] = row
				require.InDelta(t, 1/diag, vc.W[i], 1e-15/diag, "%v cell %d: Jacobi weight", shape, i)
			}
		})
		for _, ks := range stencil.Available() {
			got := make([]float64, lay.Len())
			kern := ks.Var(nd)
			sy := lay.Stride[nd-2]
			lay.ForRows(decomp.Box{Lo: make([]int, nd), Hi: lay.N}, func(start, cnt int) {
				kern.Apply(vc, got, u, nil, 0, start, cnt, 1, sy)
			})
			for i := range want {
				require.InDelta(t, want[i], got[i], 1e-12*max(1, math.Abs(want[i])), "%v %s cell %d", shape, ks.Name, i)
			}
		}
	}
}
