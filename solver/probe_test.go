package solver

import (
	"heat/operator"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
)

// Where a point lies along an axis: between two centres with its weight,
// at a centre (a decimal one too) on one cell, held at the outermost
// centre's value out to the faces, one cell on an axis of one.
func TestProbeAxis(t *testing.T) {
	cases := []struct {
		x, h float64
		n    int
		want probeAxis
	}{
		{0.25, 0.1, 10, probeAxis{lo: 2, n: 1}},              // the centre of cell 2
		{0.3, 0.2, 5, probeAxis{lo: 1, n: 1}},                // 0.3/0.2 − ½ = 0.9999999999999998
		{0.25, 0.125, 8, probeAxis{lo: 1, n: 2, w: 0.5}},     // halfway between centres 1 and 2
		{0.28125, 0.125, 8, probeAxis{lo: 1, n: 2, w: 0.75}}, //
		{0, 0.1, 10, probeAxis{lo: 0, n: 1}},                 // the low face: cell 0's value
		{0.04, 0.1, 10, probeAxis{lo: 0, n: 1}},              // before the first centre
		{1, 0.1, 10, probeAxis{lo: 9, n: 1}},                 // the high face: the last cell's
		{0.95, 0.1, 10, probeAxis{lo: 9, n: 1}},              // the last centre
		{0.7, 1, 1, probeAxis{lo: 0, n: 1}},                  // one cell
		{0.5, 0.5, 2, probeAxis{lo: 0, n: 2, w: 0.5}},        // two cells, the middle
		{0.875, 0.5, 2, probeAxis{lo: 1, n: 1}},              // past the last centre of two
	}
	for _, c := range cases {
		require.Equal(t, c.want, probeAxisOf(c.x, c.h, c.n), "x = %g, h = %g, n = %d", c.x, c.h, c.n)
	}
}

// probeRun sets up spec on each rank count, samples the initial field at
// at on every rank and returns rank 0's values per rank count.
func probeRun(t *testing.T, spec Spec, ranks []int, at [][]float64) map[int][]float64 {
	t.Helper()
	got := map[int][]float64{}
	var mu sync.Mutex
	for _, n := range ranks {
		err := local.Run(n, func(c comm.Comm) error {
			s, err := New(c, spec)
			if err != nil {
				return err
			}
			defer s.Close()
			p, err := s.Probes(at)
			if err != nil {
				return err
			}
			out := make([]float64, len(at))
			for range 2 { // the second time from the same buffers
				if err := p.Sample(out); err != nil {
					return err
				}
			}
			if c.Rank() == 0 {
				mu.Lock()
				got[n] = out
				mu.Unlock()
			}
			return nil
		})
		require.NoError(t, err, "%d ranks", n)
	}
	return got
}

// A linear field u = a + b·x + c·y (+ d·z) is reproduced to rounding at
// any point between the outermost centres, in 2D and 3D, on grids that
// split unevenly over 1, 3 and 4 ranks, with the same bits on each; past
// the outermost centres the value is held at theirs.
func TestProbesLinearFieldExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, shape := range [][]int{{13, 10}, {7, 5, 9}} {
		nd := len(shape)
		spec := heatSpec(shape)
		spec.Length = []float64{1.3, 0.7, 2.1}[:nd]
		spec.DT = 0.9 * operator.NewUniform(spec.Alpha, spec.Spacing()).StableDT()
		coef := []float64{0.25, -1.5, 3, 0.75}[:nd+1]
		linear := func(x []float64) float64 {
			u := coef[0]
			for a := range x {
				u += coef[a+1] * x[a]
			}
			return u
		}
		spec.Initial = func(x []float64, _ []int) float64 { return linear(x) }
		h := spec.Spacing()
		var at, want [][]float64
		for range 40 {
			x := make([]float64, nd)
			for a := range x {
				x[a] = h[a]/2 + rng.Float64()*(spec.Length[a]-h[a])
			}
			at = append(at, x)
			want = append(want, []float64{linear(x)})
		}
		// Out to the faces: held at the nearest centre's value.
		corner := make([]float64, nd)
		centre := make([]float64, nd)
		for a := range nd {
			corner[a], centre[a] = spec.Length[a], spec.Length[a]-h[a]/2
		}
		at = append(at, corner)
		want = append(want, []float64{linear(centre)})
		got := probeRun(t, spec, []int{1, 3, 4}, at)
		for i, x := range at {
			require.InDelta(t, want[i][0], got[1][i], 1e-13*(1+math.Abs(want[i][0])), "%v at %v", shape, x)
		}
		for _, n := range []int{3, 4} {
			for i := range at {
				require.Equal(t, math.Float64bits(got[1][i]), math.Float64bits(got[n][i]), "%v, %d ranks, probe %d", shape, n, i)
			}
		}
	}
}

// At a cell centre a probe is that cell's value, bits and all: −0 stays
// −0 (a sum with zeros would make it +0), an infinity next to it does not
// spill into it; halfway, the infinity does.
func TestProbeAtCentreKeepsTheCellsBits(t *testing.T) {
	spec := heatSpec([]int{8, 6})
	spec.Initial = func(_ []float64, idx []int) float64 {
		switch {
		case idx[0] == 3 && idx[1] == 2:
			return math.Copysign(0, -1)
		case idx[0] == 3 && idx[1] == 3:
			return math.Inf(1)
		}
		return 1
	}
	h := spec.Spacing()
	at := [][]float64{{3.5 * h[0], 2.5 * h[1]}, {3.5 * h[0], 3 * h[1]}, {3.5 * h[0], 1.5 * h[1]}}
	for n, v := range probeRun(t, spec, []int{1, 3, 4}, at) {
		require.True(t, v[0] == 0 && math.Signbit(v[0]), "%d ranks: %v", n, v[0])
		require.True(t, math.IsInf(v[1], 1), "%d ranks: %v", n, v[1])
		require.Equal(t, 1.0, v[2])
	}
}

// A point outside the domain or with the wrong number of coordinates is
// refused.
func TestProbesRefuseBadPoints(t *testing.T) {
	spec := heatSpec([]int{4, 4})
	spec.Initial = func([]float64, []int) float64 { return 0 }
	err := local.Run(1, func(c comm.Comm) error {
		s, err := New(c, spec)
		if err != nil {
			return err
		}
		defer s.Close()
		_, err = s.Probes([][]float64{{0.5, 1.5}})
		require.ErrorContains(t, err, "outside the domain")
		_, err = s.Probes([][]float64{{0.5}})
		require.ErrorContains(t, err, "want 2 coordinates")
		_, err = s.Probes([][]float64{{math.NaN(), 0.5}})
		require.Error(t, err)
		return nil
	})
	require.NoError(t, err)
}
