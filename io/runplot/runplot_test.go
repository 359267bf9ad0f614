package runplot

import (
	"fmt"
	_ "image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"heat/internal/imagetest"
)

const head = "step,time,min,max,mean,total,residual\n"

func parse(t *testing.T, body string) ([]Row, error) {
	t.Helper()
	return Parse(strings.NewReader(body), "out/diagnostics.csv")
}

// Rows come back as numbers; a restart's rows replace those the stopped run
// wrote past its checkpoint; NaN and ±Inf (a diverged run) parse.
func TestParseRowsRestartAndNonFinite(t *testing.T) {
	rows, err := parse(t, head+
		"0,0,0,1,0.5,0.5,0\n"+
		"10,0.1,0,0.9,0.4,0.4,1e-3\n"+
		"20,0.2,0,0.8,0.3,0.3,1e-4\n"+
		"30,0.3,0,0.7,0.2,0.2,1e-5\n"+ // the stopped run, past its checkpoint at 20
		"30,0.3,0,0.75,0.25,0.25,2e-5\n"+ // the restart from 20
		"40,0.4,NaN,+Inf,-Inf,NaN,+Inf\n")
	require.NoError(t, err)
	var steps []int
	for _, r := range rows {
		steps = append(steps, r.Step)
	}
	require.Equal(t, []int{0, 10, 20, 30, 40}, steps)
	require.Equal(t, Row{Step: 30, Time: 0.3, Min: 0, Max: 0.75, Mean: 0.25, Total: 0.25, Residual: 2e-5}, rows[3])
	require.True(t, math.IsNaN(rows[4].Min))
	require.True(t, math.IsInf(rows[4].Max, 1))
	require.True(t, math.IsInf(rows[4].Mean, -1))

	// A restart from step 10 after the stopped run reached 30.
	rows, err = parse(t, head+"0,0,0,1,0.5,0.5,0\n10,0.1,0,1,0.5,0.5,0\n20,0.2,0,1,0.5,0.5,0\n30,0.3,0,1,0.5,0.5,0\n20,0.2,0,2,0.5,0.5,0\n")
	require.NoError(t, err)
	require.Len(t, rows, 3)
	require.Equal(t, 2.0, rows[2].Max)
}

// A malformed file is an error that names the file and the line, and what
// is wrong there.
func TestParseErrorsNameFileAndLine(t *testing.T) {
	cases := []struct{ body, want string }{
		{"", "out/diagnostics.csv: empty"},
		{"step,time,min,max\n", `out/diagnostics.csv:1: header "step,time,min,max"`},
		{head + "0,0,0,1,0.5,0.5,0\n10,0.1,zero,1,0.5,0.5,0\n", `out/diagnostics.csv:3: min "zero" is not a number`},
		{head + "0,0,0,1,0.5,0.5,0\n0,0,0,1,0.5,0.5\n", "out/diagnostics.csv:3: 6 fields, want 7"},
		{head + "0,0,0,1,0.5,0.5,0,9\n", "out/diagnostics.csv:2: 8 fields, want 7"},
		{head + "1.5,0,0,1,0.5,0.5,0\n", `out/diagnostics.csv:2: step "1.5" is not a step number`},
		{head + "-1,0,0,1,0.5,0.5,0\n", `out/diagnostics.csv:2: step "-1"`},
		{head + "0,0,0,1,0.5,0.5,0\n3,0,\"0,1,0.5,0.5,0\n", "out/diagnostics.csv:3:"},
	}
	for _, c := range cases {
		_, err := parse(t, c.body)
		require.Error(t, err, c.body)
		require.Contains(t, err.Error(), c.want)
	}
	_, err := Read(filepath.Join(t.TempDir(), "diagnostics.csv"))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Contains(t, err.Error(), "diagnostics.csv")
}

// geometric is a residual falling by q each iteration, a row every 5.
func geometric(q float64, n int) []Row {
	var rows []Row
	for s := 0; s <= n; s += 5 {
		r := 0.0 // the row before the first iteration
		if s > 0 {
			r = 0.1 * math.Pow(q, float64(s))
		}
		rows = append(rows, Row{Step: s, Residual: r, Max: 1})
	}
	return rows
}

// The residual axis is logarithmic, over whole decades that hold the data,
// and the title gives the mean factor: the report's when it has one, else
// the rows' own (per iteration, though a row comes every 5).
func TestResidualPlotLogAxisAndFactor(t *testing.T) {
	rows := geometric(0.8, 60)
	p, err := ResidualPlot(rows, Run{Equation: "poisson", Solver: "jacobi"})
	require.NoError(t, err)
	require.IsType(t, plot.LogScale{}, p.Y.Scale)
	require.IsType(t, LogTicks{}, p.Y.Tick.Marker)
	last := 0.1 * math.Pow(0.8, 60)
	require.LessOrEqual(t, p.Y.Min, last)
	require.Greater(t, p.Y.Min, last/10)
	require.GreaterOrEqual(t, p.Y.Max, 0.1*math.Pow(0.8, 5))
	require.Equal(t, math.Log10(p.Y.Min), math.Round(math.Log10(p.Y.Min)))
	require.Contains(t, p.Title.Text, "mean convergence factor 0.8 per sweep")
	require.Contains(t, p.X.Label.Text, "Jacobi sweep")

	p, err = ResidualPlot(rows, Run{Equation: "poisson", Solver: "multigrid", Factor: 0.0128})
	require.NoError(t, err)
	require.Contains(t, p.Title.Text, "0.0128 per cycle")

	// The report's every-cycle history decides the factor when it has more
	// points than the rows.
	hist := []float64{1e-2, 1e-3, 1e-4, 1e-5}
	p, err = ResidualPlot([]Row{{Step: 0}, {Step: 4, Residual: 1e-5}}, Run{Equation: "poisson", Solver: "multigrid", History: hist})
	require.NoError(t, err)
	require.Contains(t, p.Title.Text, "0.1 per cycle")
	require.Equal(t, 1e-5, p.Y.Min)
	require.Equal(t, 1e-2, p.Y.Max)
}

// No residual to draw, one residual, non-finite ones: still a valid log
// axis (gonum panics on a non-positive one), no factor.
func TestResidualPlotDegenerate(t *testing.T) {
	for _, rows := range [][]Row{
		{{Step: 0}},
		{{Step: 0}, {Step: 3, Residual: 1e-4}},
		{{Step: 0}, {Step: 3, Residual: math.NaN()}, {Step: 6, Residual: math.Inf(1)}},
	} {
		p, err := ResidualPlot(rows, Run{Equation: "poisson"})
		require.NoError(t, err)
		require.Greater(t, p.Y.Min, 0.0)
		require.Greater(t, p.Y.Max, p.Y.Min)
		require.NotContains(t, p.Title.Text, "factor")
		_, err = p.WriterTo(300, 200, "png")
		require.NoError(t, err)
	}
}

// Decades are marked and labelled exactly (1e-05, not 9.99…e-06); a narrow
// range labels 2 and 5 too; a wide one labels a few decades, no minor marks.
func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) (ls []string, n int) {
		for _, tk := range (LogTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				ls = append(ls, tk.Label)
			}
			n++
		}
		return ls, n
	}
	ls, n := labels(1e-6, 1e-4)
	require.Equal(t, []string{"1e-6", "2e-6", "5e-6", "1e-5", "2e-5", "5e-5", "1e-4"}, ls)
	require.Equal(t, 19, n)
	ls, n = labels(1e-300, 1)
	require.Equal(t, 301, n)
	require.LessOrEqual(t, len(ls), 9)
	require.Equal(t, "1e-300", ls[0])
	ls, _ = labels(1e-12, 1)
	require.Equal(t, []string{"1e-12", "1e-10", "1e-8", "1e-6", "1e-4", "0.01", "1"}, ls)
}

// Linear ticks get labels that differ and each say its value to within a
// thousandth of the spacing, on wide and narrow ranges.
func TestDistinctTicks(t *testing.T) {
	for _, r := range [][2]float64{{0, 0.0021}, {0.0310, 0.03101}, {1, 1 + 1e-12}, {-3e-14, 1e-14}, {0, 1}, {-5, 1e6}} {
		var vals []float64
		seen := map[string]bool{}
		for _, tk := range (distinctTicks{}).Ticks(r[0], r[1]) {
			if tk.Label == "" {
				continue
			}
			require.False(t, seen[tk.Label], "%v: %q twice", r, tk.Label)
			seen[tk.Label] = true
			vals = append(vals, tk.Value)
		}
		require.GreaterOrEqual(t, len(vals), 2, "%v", r)
		gap := vals[1] - vals[0]
		for _, tk := range (distinctTicks{}).Ticks(r[0], r[1]) {
			if tk.Label != "" {
				v, err := strconv.ParseFloat(tk.Label, 64)
				require.NoError(t, err)
				require.InDelta(t, tk.Value, v, 1e-3*gap, "%v: %q", r, tk.Label)
			}
		}
	}
}

func TestMeanFactor(t *testing.T) {
	require.InDelta(t, 0.5, MeanFactor(plotter.XYs{{X: 2, Y: 1}, {X: 3, Y: 0.7}, {X: 6, Y: 1.0 / 16}}), 1e-15)
	require.Equal(t, 0.0, MeanFactor(plotter.XYs{{X: 2, Y: 1}}))
	require.Equal(t, 0.0, MeanFactor(plotter.XYs{{X: 2, Y: 1}, {X: 2, Y: 0.5}}))
}

// Non-finite values are left out of a line, one coordinate or the other.
func TestFiniteSkipsNonFinite(t *testing.T) {
	rows := []Row{{Time: 0, Mean: 1}, {Time: 1, Mean: math.NaN()}, {Time: math.Inf(1), Mean: 2}, {Time: 3, Mean: 3}}
	pts := finite(rows, func(r Row) float64 { return r.Time }, func(r Row) float64 { return r.Mean })
	require.Equal(t, plotter.XYs{{X: 0, Y: 1}, {X: 3, Y: 3}}, pts)
}

// Write draws a heat run's field plot, a Poisson run's residual plot, and
// both for a run of unknown kind; a diverged run's rows draw too.
func TestWriteDecodablePNGs(t *testing.T) {
	heat := []Row{{Step: 0, Time: 0, Min: 0, Max: 1, Mean: 0.5, Total: 0.5}, {Step: 10, Time: 0.1, Min: 0, Max: 0.8, Mean: 0.4, Total: 0.4},
		{Step: 20, Time: 0.2, Min: math.NaN(), Max: math.Inf(1), Mean: math.NaN(), Total: math.NaN(), Residual: math.Inf(1)}}
	cases := []struct {
		name string
		rows []Row
		run  Run
		want []string
	}{
		{"heat", heat, Run{Equation: "heat"}, []string{FieldFile}},
		{"poisson", geometric(0.5, 30), Run{Equation: "poisson", Solver: "jacobi"}, []string{ResidualFile}},
		{"unknown", geometric(0.5, 30), Run{}, []string{FieldFile, ResidualFile}},
		{"unknown-heat", heat, Run{}, []string{FieldFile}},
		{"one-row", heat[:1], Run{Equation: "heat"}, []string{FieldFile}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "plots")
			paths, err := Write(dir, c.rows, c.run)
			require.NoError(t, err)
			var names []string
			for _, p := range paths {
				names = append(names, filepath.Base(p))
				img := imagetest.DecodePNG(t, p)
				require.Greater(t, img.Bounds().Dx(), 400)
				require.Greater(t, img.Bounds().Dy(), 300)
			}
			require.Equal(t, c.want, names)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, len(c.want), "no temporary files left")
		})
	}
	_, err := Write(t.TempDir(), nil, Run{Equation: "heat"})
	require.ErrorContains(t, err, "no rows")
}

// Save picks the format from the extension.
func TestSaveFormats(t *testing.T) {
	p, err := ResidualPlot(geometric(0.5, 20), Run{Equation: "poisson"})
	require.NoError(t, err)
	dir := t.TempDir()
	for ext, magic := range map[string]string{"png": "\x89PNG", "svg": "<?xml", "pdf": "%PDF"} {
		path := filepath.Join(dir, "r."+ext)
		require.NoError(t, Save(p, path, 300, 200))
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(string(data), magic), fmt.Sprintf("%s starts %q", ext, data[:8]))
	}
	require.Error(t, Save(p, filepath.Join(dir, "r.bmp"), 300, 200))
}

// BenchmarkWrite is the cost heat run adds at its end: the plots of a run
// of 5000 steps with a row every 10.
func BenchmarkWrite(b *testing.B) {
	var heat []Row
	for s := 0; s <= 5000; s += 10 {
		t := float64(s) * 1e-5
		heat = append(heat, Row{Step: s, Time: t, Min: 0, Max: math.Exp(-t), Mean: 0.3 * math.Exp(-2*t), Total: 0.3 * math.Exp(-2*t)})
	}
	for _, c := range []struct {
		name string
		rows []Row
		run  Run
	}{
		{"kind=heat/rows=501", heat, Run{Equation: "heat"}},
		{"kind=poisson/rows=501", geometric(0.99, 2500), Run{Equation: "poisson", Solver: "jacobi"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			for b.Loop() {
				if _, err := Write(dir, c.rows, c.run); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Linear axes read in plain numbers, never 1e+01.
func TestDistinctTicksPlain(t *testing.T) {
	for _, r := range [][2]float64{{0, 20}, {0, 2.5e5}, {0.03, 0.031}, {290, 330}} {
		for _, tk := range (distinctTicks{}).Ticks(r[0], r[1]) {
			require.NotContains(t, tk.Label, "e", "%v: %q", r, tk.Label)
		}
	}
}
