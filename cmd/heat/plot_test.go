package main

import (
	_ "image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"

	"heat/internal/imagetest"
	"heat/io/runplot"
)

// heat plot draws a heat run's field plot and a Poisson run's residual
// plot, on a log axis, from what the runs left.
func TestPlotHeatAndPoissonRuns(t *testing.T) {
	dir := t.TempDir()
	hot := filepath.Join(dir, "hot")
	code, _, stderr := heat(t, "run", "-q", "--out", hot, "--steps", "40", "--set", "grid.shape=[24,24]", "--set", "output.diagnostics_every=5")
	require.Equal(t, 0, code, stderr)
	require.NoDirExists(t, filepath.Join(hot, "plots"), "no snapshots on a schedule: no plots at the end")
	code, stdout, stderr := heat(t, "plot", hot)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, filepath.Join(hot, "plots", "field.png"))
	require.Contains(t, stdout, "9 rows")
	img := imagetest.DecodePNG(t, filepath.Join(hot, "plots", "field.png"))
	require.Greater(t, img.Bounds().Dy(), 500, "two panels")
	require.NoFileExists(t, filepath.Join(hot, "plots", "residual.png"))

	pois := filepath.Join(dir, "poisson")
	code, _, stderr = heat(t, "run", "-q", "-c", "poisson-2d", "--out", pois, "--set", "grid.shape=[32,32]", "--set", "output.diagnostics_every=1")
	require.Equal(t, 0, code, stderr)
	figs := filepath.Join(dir, "figures")
	code, stdout, stderr = heat(t, "plot", pois, "-o", figs)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, filepath.Join(figs, "residual.png"))
	imagetest.DecodePNG(t, filepath.Join(figs, "residual.png"))
	require.NoFileExists(t, filepath.Join(figs, "field.png"))

	rows, err := runplot.Read(filepath.Join(pois, "diagnostics.csv"))
	require.NoError(t, err)
	p, err := runplot.ResidualPlot(rows, runplot.Run{Equation: "poisson", Solver: "multigrid"})
	require.NoError(t, err)
	require.IsType(t, plot.LogScale{}, p.Y.Scale)
	require.Contains(t, p.Title.Text, "mean convergence factor")

	// The CSV itself names the run too.
	code, _, stderr = heat(t, "plot", filepath.Join(pois, "diagnostics.csv"))
	require.Equal(t, 0, code, stderr)
	imagetest.DecodePNG(t, filepath.Join(pois, "plots", "residual.png"))
}

// A missing folder or CSV, or a malformed CSV or report, exits 2 naming the
// file (and the line).
func TestPlotBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		d := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "diagnostics.csv"), []byte(body), 0o644))
		return d
	}
	head := "step,time,min,max,mean,total,residual\n"
	badReport := write("badreport", head+"0,0,0,1,0.5,0.5,0\n")
	require.NoError(t, os.WriteFile(filepath.Join(badReport, "report.json"), []byte("{"), 0o644))
	cases := []struct {
		arg  string
		want string
	}{
		{filepath.Join(dir, "missing"), filepath.Join(dir, "missing") + ": no such run output folder"},
		{dir, filepath.Join(dir, "diagnostics.csv") + ": no such file"},
		{write("header", "step,t,u\n0,0,1\n"), filepath.Join(dir, "header", "diagnostics.csv") + ":1: header"},
		{write("cell", head+"0,0,0,1,0.5,0.5,0\n10,0.1,0,1,x,0.5,0\n"), filepath.Join(dir, "cell", "diagnostics.csv") + `:3: mean "x" is not a number`},
		{write("ragged", head+"0,0,0,1,0.5,0.5,0\n10,0.1,0,1\n"), filepath.Join(dir, "ragged", "diagnostics.csv") + ":3: 4 fields, want 7"},
		{write("empty", head), "no rows after the header"},
		{badReport, filepath.Join(badReport, "report.json") + ": not a run report"},
	}
	for _, c := range cases {
		code, _, stderr := heat(t, "plot", c.arg)
		require.Equal(t, 2, code, "%s: %s", c.arg, stderr)
		require.Contains(t, stderr, c.want)
		require.NotContains(t, stderr, "goroutine")
	}
	code, _, stderr := heat(t, "plot")
	require.Equal(t, 2, code, stderr)
}

// A diverged run's rows (NaN, Inf) plot without error.
func TestPlotDivergedRows(t *testing.T) {
	dir := t.TempDir()
	body := "step,time,min,max,mean,total,residual\n0,0,0,1,0.5,0.5,0\n10,0.1,0,1e300,1e299,1e299,1e300\n20,0.2,NaN,+Inf,NaN,NaN,+Inf\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "diagnostics.csv"), []byte(body), 0o644))
	code, _, stderr := heat(t, "plot", dir)
	require.Equal(t, 0, code, stderr)
	imagetest.DecodePNG(t, filepath.Join(dir, "plots", "field.png"))
	imagetest.DecodePNG(t, filepath.Join(dir, "plots", "residual.png")) // no report: both kinds
}

// heat run with snapshots on leaves its plots in OUT/plots and says so; a
// run that replaces it (--overwrite) takes them away with the rest.
func TestRunLeavesPlots(t *testing.T) {
	dir := t.TempDir()
	hot := filepath.Join(dir, "hot")
	code, stdout, stderr := heat(t, "run", "--out", hot, "--steps", "30", "--set", "grid.shape=[24,24]", "--set", "output.snapshot_every=10",
		"--set", "output.diagnostics_every=5", "--set", "output.progress_every=0")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "plots: "+filepath.Join(hot, "plots", "field.png"))
	imagetest.DecodePNG(t, filepath.Join(hot, "plots", "field.png"))

	pois := filepath.Join(dir, "poisson")
	code, _, stderr = heat(t, "run", "-q", "-c", "poisson-2d", "--out", pois, "--set", "grid.shape=[32,32]", "--set", "output.snapshot_every=2",
		"--set", "output.diagnostics_every=1")
	require.Equal(t, 0, code, stderr)
	imagetest.DecodePNG(t, filepath.Join(pois, "plots", "residual.png"))
	require.NoFileExists(t, filepath.Join(pois, "plots", "field.png"))

	code, _, stderr = heat(t, "run", "-q", "--out", hot, "--steps", "5", "--set", "grid.shape=[24,24]")
	require.Equal(t, 2, code, stderr)
	code, _, stderr = heat(t, "run", "-q", "--out", hot, "--steps", "5", "--set", "grid.shape=[24,24]", "--overwrite")
	require.Equal(t, 0, code, stderr)
	require.NoDirExists(t, filepath.Join(hot, "plots"), "the replaced run's plots are gone")
}

// heat render --line plots a line-out; a line outside the domain is a
// usage error.
func TestRenderLine(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sine")
	code, _, stderr := heat(t, "run", "-q", "--out", out, "--steps", "10", "--set", "grid.shape=[20,30]", "--set", "initial.kind=sine",
		"--set", "checkpoint.final=true")
	require.Equal(t, 0, code, stderr)
	line := filepath.Join(out, "line.png")
	code, stdout, stderr := heat(t, "render", out, "--line", "y=0.5", "-o", line)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "u along x at y = 0.525 (cell 10)")
	imagetest.DecodePNG(t, line)
	for _, bad := range []string{"y=1.5", "x=-1", "z=0.5"} {
		code, _, stderr := heat(t, "render", out, "--line", bad, "-o", line)
		require.Equal(t, 2, code, "%s: %s", bad, stderr)
		require.Contains(t, stderr, bad)
	}
}
