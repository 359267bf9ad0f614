package expr

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Switches finds where an expression compares t with a number, and says
// where it cannot see the jumps.
func TestSwitches(t *testing.T) {
	for _, c := range []struct {
		src   string
		times []float64
		ok    bool
	}{
		{"t < 1 ? 0 : 50", []float64{1}, true},
		{"x > 0.5 && t >= 2.5 ? 1 : (3 > t ? 2 : 0)", []float64{2.5, 3}, true},
		{"t == pi ? 1 : 0", []float64{3.141592653589793}, true},
		{"(t < 2*3) ? sin(t) : exp(-t)", []float64{6}, true},
		{"sin(2*pi*t) + min(t, 1)", nil, true}, // smooth: kinks, no jumps
		{"x < 0.5 ? 1 : 2", nil, true},         // no t
		{"2*t < 1 ? 0 : 1", nil, false},
		{"t < x ? 0 : 1", nil, false},
		{"floor(t) * 3", nil, false},
		{"let s = t; s < 1 ? 0 : 1", nil, false},
	} {
		e, err := Compile("source.expr", c.src)
		require.NoError(t, err, c.src)
		times, ok := e.Switches()
		require.Equal(t, c.ok, ok, c.src)
		if c.ok {
			require.Equal(t, c.times, times, c.src)
		}
	}
}
