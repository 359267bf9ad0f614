package expr

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Equal keys are equal fields; a field that changes with t changes its key.
func TestTimeKey(t *testing.T) {
	for _, c := range []struct {
		src        string
		same, diff [2]float64 // times with equal keys, and with different ones
	}{
		{"t < 0.1 ? 0 : 1e3*exp(-((x-0.5)^2+(y-0.5)^2)/0.01)", [2]float64{0.2, 0.7}, [2]float64{0.05, 0.2}},
		{"min(t, 1)*x", [2]float64{1.5, 3}, [2]float64{0.2, 0.3}},
		{"(t > 1 ? 1 : t)*x + y", [2]float64{1.5, 2}, [2]float64{0.1, 0.2}},
		{"t > 1 && x > 0.5 ? 1 : 0", [2]float64{2, 3}, [2]float64{0.5, 2}},
	} {
		e, err := Compile("k", c.src)
		require.NoError(t, err)
		require.Equal(t, e.TimeKey(c.same[0]), e.TimeKey(c.same[1]), c.src)
		require.NotEqual(t, e.TimeKey(c.diff[0]), e.TimeKey(c.diff[1]), c.src)
		// Equal keys: AtTime gives the same values everywhere.
		a, b := e.AtTime(c.same[0]).NewEvaluator(), e.AtTime(c.same[1]).NewEvaluator()
		for _, p := range [][3]float64{{0.1, 0.2, 0}, {0.6, 0.5, 0}, {0.9, 0.9, 0}} {
			require.Equal(t, a.Eval(p[0], p[1], p[2], c.same[0]), b.Eval(p[0], p[1], p[2], c.same[1]), c.src)
		}
	}
	// No t: one key; a let: t itself.
	e, _ := Compile("k", "x*y")
	require.Equal(t, e.TimeKey(1), e.TimeKey(2))
	e, _ = Compile("k", "let s = t > 1 ? 1 : 0; s*x")
	require.NotEqual(t, e.TimeKey(2), e.TimeKey(3))
}
