package runplot

import (
	"fmt"
	_ "image/png"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"heat/internal/imagetest"
)

func parseProbes(t *testing.T, body string) (*Probes, error) {
	t.Helper()
	return ParseProbes(strings.NewReader(body), "out/probes.csv")
}

// probes.csv reads back as names and rows; a restart's rows replace those
// the stopped run wrote past its checkpoint; NaN and ±Inf parse.
func TestParseProbes(t *testing.T) {
	p, err := parseProbes(t, "step,time,s1,wall 2\n0,0,1,2\n5,0.5,0.5,1.5\n10,1,0.25,1\n5,0.5,0.75,NaN\n10,1,+Inf,-Inf\n")
	require.NoError(t, err)
	require.Equal(t, []string{"s1", "wall 2"}, p.Names)
	require.Len(t, p.Rows, 3)
	require.Equal(t, 5, p.Rows[1].Step)
	require.Equal(t, 0.75, p.Rows[1].Values[0])
	require.True(t, math.IsNaN(p.Rows[1].Values[1]))
	require.True(t, math.IsInf(p.Rows[2].Values[0], 1))

	cases := []struct{ body, want string }{
		{"", "out/probes.csv: empty"},
		{"step,time\n0,0\n", `out/probes.csv:1: header "step,time"`},
		{"step,t,a\n0,0,1\n", `out/probes.csv:1: header "step,t,a"`},
		{"step,time,a\n0,0,1\n3,0.1,x\n", `out/probes.csv:3: a "x" is not a number`},
		{"step,time,a\n0,0\n", "out/probes.csv:2: 2 fields, want 3"},
		{"step,time,a\n-2,0,1\n", `out/probes.csv:2: step "-2"`},
	}
	for _, c := range cases {
		_, err := parseProbes(t, c.body)
		require.ErrorContains(t, err, c.want, c.body)
	}
}

// The probes' plot has a line a probe against time (a Poisson run's:
// against the iteration), its y axis named by the run's label; the legend
// is drawn beside the data, and the picture grows to hold a long one.
func TestWriteProbesLegendBesideTheData(t *testing.T) {
	probes := func(n int, times bool) *Probes {
		p := &Probes{}
		for k := range n {
			p.Names = append(p.Names, fmt.Sprintf("sensor %d", k))
		}
		for s := 0; s <= 20; s += 2 {
			r := ProbeRow{Step: s}
			if times {
				r.Time = float64(s) / 100
			}
			for k := range n {
				r.Values = append(r.Values, math.Exp(-float64(s*(k+1))/20))
			}
			p.Rows = append(p.Rows, r)
		}
		return p
	}
	pl, leg, err := ProbePlot(probes(3, true), Run{Equation: "heat", Label: "T (K)"})
	require.NoError(t, err)
	require.Equal(t, "T (K)", pl.Y.Label.Text)
	require.Equal(t, "t (simulated time)", pl.X.Label.Text)
	require.Contains(t, pl.Title.Text, "T (K)")
	own, apart := pl.Legend.Rectangle(draw.Canvas{}), leg.Rectangle(draw.Canvas{})
	require.Zero(t, own.Max.X-own.Min.X, "nothing in the plot's own legend, over the data")
	require.Greater(t, apart.Max.Y-apart.Min.Y, vg.Length(0), "the entries in the legend apart")
	pl, _, err = ProbePlot(probes(2, false), Run{Equation: "poisson", Label: "φ"})
	require.NoError(t, err)
	require.Equal(t, "iteration", pl.X.Label.Text)

	dir := filepath.Join(t.TempDir(), "plots")
	path, err := WriteProbes(dir, probes(3, true), Run{Equation: "heat", Label: "u"})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, ProbeFile), path)
	few := imagetest.DecodePNG(t, path).Bounds()
	require.Greater(t, few.Dx(), 7*96, "the data 7 in wide, the legend beside")
	path, err = WriteProbes(dir, probes(60, true), Run{Equation: "heat", Label: "u"})
	require.NoError(t, err)
	many := imagetest.DecodePNG(t, path).Bounds()
	require.Greater(t, many.Dy(), few.Dy(), "60 entries need a taller picture")

	_, err = WriteProbes(dir, &Probes{Names: []string{"a"}}, Run{})
	require.ErrorContains(t, err, "no rows")
}

// output.units.time names the time axes.
func TestTimeAxesTakeTheUnit(t *testing.T) {
	p := &Probes{Names: []string{"a"}, Rows: []ProbeRow{{Step: 0, Time: 0, Values: []float64{1}}, {Step: 1, Time: 2, Values: []float64{3}}}}
	pl, _, err := ProbePlot(p, Run{Equation: "heat", TimeUnit: "h"})
	require.NoError(t, err)
	require.Equal(t, "t (h)", pl.X.Label.Text)
	rows := []Row{{Step: 0, Time: 0, Max: 1}, {Step: 1, Time: 2, Max: 2}}
	stats, total, err := FieldPlots(rows, Run{TimeUnit: "s", Label: "T (K)"})
	require.NoError(t, err)
	require.Equal(t, "t (s)", stats.X.Label.Text)
	require.Equal(t, "t (s)", total.X.Label.Text)
	require.Equal(t, "T (K)", stats.Y.Label.Text)
}

// The probes' plot converts its time to ProbeTime and draws a log axis of
// the positive values with ProbeLog.
func TestProbeTimeAndLogAxis(t *testing.T) {
	p := &Probes{Names: []string{"a"}, Rows: []ProbeRow{{Time: 0, Values: []float64{1}}, {Step: 1, Time: 7200, Values: []float64{1e-3}}, {Step: 2, Time: 10800, Values: []float64{0}}}}
	pl, _, err := ProbePlot(p, Run{Equation: "heat", TimeUnit: "s", ProbeTime: "h", ProbeLog: true})
	require.NoError(t, err)
	require.Equal(t, "t (h)", pl.X.Label.Text)
	require.InDelta(t, 2, pl.X.Max, 1e-12, "7200 s is 2 h: the last positive value's time")
	require.Equal(t, plot.LogScale{}, pl.Y.Scale)
	require.InDelta(t, 1e-3, pl.Y.Min, 1e-15, "the zero left out")
}
