package operator

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/decomp"
	"heat/internal/team"
)

// fluxTransfer lays out a fine box of shape (its media k, no held cell)
// and the coarse box that divides each axis by ratio, and returns their
// transfer and the fine media.
func fluxTransfer(t *testing.T, shape, ratio []int, k func(idx []int) float64, tm *team.Team) (*Transfer, *Media) {
	nd := len(shape)
	fl := decomp.NewLayout(decomp.Box{Lo: make([]int, nd), Hi: shape}, 1)
	half := make([]int, nd)
	for a, n := range shape {
		half[a] = n / ratio[a]
	}
	cl := decomp.NewLayout(decomp.Box{Lo: make([]int, nd), Hi: half}, 1)
	n := fl.Box.Size()
	kv, rhoC, held := make([]float64, 0, n), make([]float64, n), make([]float64, n)
	idx := make([]int, nd)
	for i := range n {
		rem := i
		for a := nd - 1; a >= 0; a-- {
			idx[a], rem = rem%shape[a], rem/shape[a]
		}
		kv = append(kv, k(idx))
		rhoC[i], held[i] = 1, math.NaN()
	}
	h := make([]float64, nd)
	for a := range h {
		h[a] = 1 / float64(shape[a])
	}
	m, err := NewMedia(fl, h, kv, rhoC, held, make([][2]bool, nd), func([]float64) error { return nil })
	require.NoError(t, err)
	return NewTransfer(NewWork(fl, tm), NewWork(cl, tm), ratio), m
}

// On a uniform medium the faces' weights are ¼ and ProlongFlux is
// Prolong's linear interpolation (to rounding: the operations differ),
// 2D and 3D, every axis halved or not, added or set.
func TestProlongFluxUniformIsLinear(t *testing.T) {
	tm := team.New(2, false)
	defer tm.Close()
	for _, c := range []struct{ shape, ratio []int }{
		{[]int{12, 16}, []int{2, 2}}, {[]int{6, 8, 10}, []int{2, 2, 2}},
		{[]int{12, 16}, []int{1, 2}}, {[]int{12, 16}, []int{2, 1}}, {[]int{6, 8, 10}, []int{2, 1, 2}}, {[]int{6, 8, 10}, []int{1, 2, 1}},
	} {
		shape := c.shape
		tr, m := fluxTransfer(t, shape, c.ratio, func([]int) float64 { return 3 }, tm)
		w := tr.FluxWeights(m.B, m.Free)
		fl := tr.Fine.Lay
		fl.ForRows(decomp.Box{Lo: make([]int, len(shape)), Hi: fl.N}, func(start, n int) {
			for i := start; i < start+n; i++ {
				for a := range w {
					if c.ratio[a] == 1 {
						require.Nil(t, w[a])
						continue
					}
					require.Equal(t, 0.25, w[a][i])
				}
			}
		})
		r := rand.New(rand.NewPCG(1, uint64(len(shape))))
		src := make([]float64, tr.Coarse.Lay.Len())
		for i := range src {
			src[i] = 2*r.Float64() - 1 // the ghosts too
		}
		for _, add := range []bool{false, true} {
			want, got := make([]float64, fl.Len()), make([]float64, fl.Len())
			for i := range want {
				want[i] = float64(i % 7)
				got[i] = want[i]
			}
			tr.Prolong(want, src, true, add)
			tr.ProlongFlux(got, src, w, add)
			for i := range want {
				require.InDelta(t, want[i], got[i], 1e-14, "shape %v ratio %v add %v cell %d", shape, c.ratio, add, i)
			}
		}
	}
}

// Across a jump on a coarse face the weights are those of an error linear
// in each coarse cell whose flux is continuous at the face: the fine cell
// beside it leans (1/2)·k_N/(k_C + k_N) towards the neighbour (towards ½
// beside a conductor, 0 beside an insulator); 0 towards a hole, and where
// its sibling is one.
func TestFluxWeightsAcrossJumps(t *testing.T) {
	tm := team.New(1, false)
	defer tm.Close()
	const kl, kr = 1.0, 100.0
	// 8×8 cells: x < 4 conducts kl, x ≥ 4 kr; row y = 1 is a hole for x ≥ 4.
	tr, m := fluxTransfer(t, []int{8, 8}, []int{2, 2}, func(idx []int) float64 {
		switch {
		case idx[1] < 4:
			return kl
		case idx[0] == 1:
			return 0
		}
		return kr
	}, tm)
	w := tr.FluxWeights(m.B, m.Free)
	at := func(y, x int) int { return m.Lay.Index(y, x) }
	row := 4
	require.InDelta(t, 0.5*kr/(kl+kr), w[1][at(row, 3)], 1e-15, "beside the conductor")
	require.InDelta(t, 0.5*kl/(kl+kr), w[1][at(row, 4)], 1e-15, "beside the insulator")
	require.Equal(t, 0.25, w[1][at(row, 2)], "away from the jump")
	require.Equal(t, 0.0, w[0][at(2, 5)], "across the hole")
	require.Equal(t, 0.0, w[0][at(0, 5)], "the sibling a hole")
	require.Equal(t, 0.25, w[0][at(0, 3)], "the sibling a hole only beyond x = 4")
	require.Equal(t, 0.0, w[1][at(1, 5)], "a hole's own cell")
}
