package expr

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// A product splits into a factor of t alone and the rest, whose product is
// the expression (bit for bit where the top node splits it, within a few
// ulps where the chain is regrouped); sums, lets and expressions without t
// do not split.
func TestSeparate(t *testing.T) {
	pts := [][4]float64{{0.1, 0.2, 0, 0}, {0.6, 0.5, 0.3, 0.25}, {0.9, 0.9, 0.7, 3.5}}
	for _, c := range []struct {
		src      string
		exact    bool // the top node is the split
		spaceUse bool // space reads t (a switch)
	}{
		{"sin(2*pi*t)*1e3*exp(-((x-0.5)^2+(y-0.5)^2)/0.01)", false, false},
		{"1e3*exp(-((x-0.5)^2+(y-0.5)^2)/0.01)*(1 + 0.5*cos(t))", true, false},
		{"exp(-t)*sin(pi*x)*sin(pi*y)*(2*pi^2 - 1)", false, false},
		{"-x*y/(1 + t^2)", false, false},
		{"(t < 0.1 ? 0 : 1)*exp(-x)*cos(t)/2", false, false},
		{"cos(t)*(t < 1 ? x : y)", true, true},
		{"3*sin(t)", true, false},
	} {
		e, err := Compile("source.expr", c.src)
		require.NoError(t, err)
		tm, sp, ok := e.Separate()
		require.True(t, ok, c.src)
		require.False(t, tm.Uses("x") || tm.Uses("y") || tm.Uses("z"), c.src)
		require.True(t, tm.Uses("t"), c.src)
		require.Equal(t, c.spaceUse, sp.Uses("t"), c.src)
		ev, te, se := e.NewEvaluator(), tm.NewEvaluator(), sp.NewEvaluator()
		for _, p := range pts {
			want := ev.Eval(p[0], p[1], p[2], p[3])
			got := te.Eval(p[0], p[1], p[2], p[3]) * se.Eval(p[0], p[1], p[2], p[3])
			if c.exact {
				require.Equal(t, math.Float64bits(want), math.Float64bits(got), "%s at %v", c.src, p)
			} else {
				require.InDelta(t, want, got, 4e-16*math.Abs(want)+1e-300, "%s at %v", c.src, p)
			}
			// The time factor reads no point: the same at every one.
			require.Equal(t, te.Eval(p[0], p[1], p[2], p[3]), te.Eval(0, 0, 0, p[3]), c.src)
		}
	}
	for _, src := range []string{"x*y", "sin(t) + x", "exp(-(x - t)^2)", "let a = sin(t); a*x", "sin(t)*cos(t)"} {
		e, err := Compile("source.expr", src)
		require.NoError(t, err)
		_, _, ok := e.Separate()
		require.False(t, ok, src)
	}
}
