package operator

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
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
	require.Equal(t, 1/(2*2*(1/0.25+1/0.0625)), StableDT(2, []float64{0.5, 0.25}))
}
