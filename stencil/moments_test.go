package stencil

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every set's moments have the generic loop's bits, lane by lane, for rows
// of every length up to five groups of eight and every alignment, with NaN,
// ±Inf, −0 and subnormal cells among them; the generic loop puts cell j of
// a row in lane j mod 8, takes no NaN as an extreme, and sums each lane in
// order.
func TestMomentsMatchGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, 5e-324, -2.5e-310}
	for _, ks := range Available() {
		t.Logf("kernel set %q: tested", ks.Name)
	}
	for trial := range 200 {
		var rows [][]float64
		for range 1 + rng.IntN(4) {
			n, off := rng.IntN(5*8+2), rng.IntN(8)
			buf := make([]float64, n+off)
			for j := range buf {
				buf[j] = rng.NormFloat64() * 100
				if rng.IntN(10) == 0 {
					buf[j] = special[rng.IntN(len(special))]
				}
			}
			rows = append(rows, buf[off:])
		}
		// The reference: lane j mod 8, plain comparisons, sums in order.
		want := NewMoments()
		for _, x := range rows {
			for j, v := range x {
				l := j % 8
				if v < want.Min[l] {
					want.Min[l] = v
				}
				if v > want.Max[l] {
					want.Max[l] = v
				}
				want.Sum[l] = want.Sum[l] + v
				sq := float64(v * v)
				want.SumSq[l] = want.SumSq[l] + sq
			}
			want.N += len(x)
		}
		for _, ks := range Available() {
			restore := Use(ks)
			got := NewMoments()
			for _, x := range rows {
				got.Add(x)
			}
			restore()
			require.Equal(t, want.N, got.N)
			for l := range 8 {
				for q, pair := range [][2][8]float64{{want.Min, got.Min}, {want.Max, got.Max}, {want.Sum, got.Sum}, {want.SumSq, got.SumSq}} {
					require.Equal(t, math.Float64bits(pair[0][l]), math.Float64bits(pair[1][l]),
						"trial %d, %s: quantity %d lane %d: %v, want %v", trial, ks.Name, q, l, pair[1][l], pair[0][l])
				}
			}
		}
	}
	// Reduce: the extremes over the lanes, no NaN taken.
	m := NewMoments()
	m.Add([]float64{3, math.NaN(), -1, 7, 2, math.NaN(), 0, 1, 4})
	lo, hi, sum, _ := m.Reduce()
	require.Equal(t, -1.0, lo)
	require.Equal(t, 7.0, hi)
	require.True(t, math.IsNaN(sum))
	require.Equal(t, 9, m.N)
}
