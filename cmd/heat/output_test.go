package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/internal/csvtest"
	"heat/internal/imagetest"
)

// Snapshots and diagnostics only read the field: the fingerprint is the
// same with and without them, and the files are there: a PNG per snapshot,
// a .pvti with one piece per rank, and a .pvd listing every snapshot.
func TestSnapshotsLeaveTheSolutionAlone(t *testing.T) {
	dir := t.TempDir()
	base := []string{"run", "-q", "--steps", "12", "--ranks", "3", "--set", "grid.shape=[30,20]", "--set", "initial.kind=random"}
	code, _, stderr := heat(t, append(base, "--out", filepath.Join(dir, "plain"), "--set", "output.formats=[]", "--set", "output.diagnostics_every=0")...)
	require.Equal(t, 0, code, stderr)
	out := filepath.Join(dir, "snaps")
	code, _, stderr = heat(t, append(base, "--out", out, "--set", `output.formats=["png","vti"]`, "--set", "output.snapshot_every=5",
		"--set", "output.diagnostics_every=3")...)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, readReport(t, filepath.Join(dir, "plain", "report.json")).Field.SHA256, readReport(t, filepath.Join(out, "report.json")).Field.SHA256)

	snaps := filepath.Join(out, "snapshots")
	for _, step := range []string{"00000000", "00000005", "00000010", "00000012"} {
		img := imagetest.DecodePNG(t, filepath.Join(snaps, "u-"+step+".png"))
		require.Greater(t, img.Bounds().Dx(), 20)
		require.FileExists(t, filepath.Join(snaps, "u-"+step+".pvti"))
		for r := range 3 {
			require.FileExists(t, filepath.Join(snaps, "u-"+step, "piece-000"+strconv.Itoa(r)+".vti"))
		}
	}
	var pvd struct {
		DataSets []struct {
			Timestep float64 `xml:"timestep,attr"`
			File     string  `xml:"file,attr"`
		} `xml:"Collection>DataSet"`
	}
	data, err := os.ReadFile(filepath.Join(snaps, "u.pvd"))
	require.NoError(t, err)
	require.NoError(t, xml.Unmarshal(data, &pvd))
	require.Len(t, pvd.DataSets, 4)
	require.Equal(t, "u-00000012.pvti", pvd.DataSets[3].File)
	require.Equal(t, 0.0, pvd.DataSets[0].Timestep)

	rows := csvtest.Read(t, filepath.Join(out, "diagnostics.csv"))
	require.Equal(t, []string{"step", "time", "min", "max", "mean", "total", "residual",
		"q_y_lo", "q_y_hi", "q_x_lo", "q_x_hi", "q_held", "q_source"}, rows[0])
	var steps []string
	for _, r := range rows[1:] {
		steps = append(steps, r[0])
	}
	require.Equal(t, []string{"0", "3", "6", "9", "12"}, steps)
}

// diagnostics.csv: with periodic faces the total heat stays constant; for
// Poisson the residual falls.
func TestDiagnosticsConservationAndResidual(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := heat(t, "run", "-q", "-c", "../../configs/periodic-2d.toml", "--steps", "200", "--ranks", "2", "--out", out,
		"--set", "output.diagnostics_every=20", "--set", "output.formats=[]")
	require.Equal(t, 0, code, stderr)
	rows := csvtest.Read(t, filepath.Join(out, "diagnostics.csv"))
	total := csvtest.Floats(t, rows, "total")
	require.Len(t, total, 11)
	for _, x := range total {
		require.InDelta(t, 0, (x-total[0])/total[0], 1e-12)
	}
	spread := func(r []string) float64 {
		lo, _ := strconv.ParseFloat(r[2], 64)
		hi, _ := strconv.ParseFloat(r[3], 64)
		return hi - lo
	}
	require.Less(t, spread(rows[len(rows)-1]), spread(rows[1]), "the field smooths out")

	out = t.TempDir()
	code, _, stderr = heat(t, "run", "-q", "-c", "../../configs/poisson-2d.toml", "--set", "grid.shape=[32,32]", "--steps", "3000",
		"--set", "equation.solver=jacobi", "--set", "run.tolerance=1e-8",
		"--set", "run.check_every=100", "--set", "output.diagnostics_every=100", "--set", "output.formats=[]", "--out", out)
	require.Equal(t, 0, code, stderr)
	res := csvtest.Floats(t, csvtest.Read(t, filepath.Join(out, "diagnostics.csv")), "residual")[1:] // row 0 is before any check
	require.Greater(t, len(res), 5)
	for i := 1; i < len(res); i++ {
		require.Less(t, res[i], res[i-1], "residual falls: %v", res)
	}

	// Multigrid: a row per cycle, the relative residual falling at least
	// tenfold each cycle, down to the tolerance.
	out = t.TempDir()
	code, _, stderr = heat(t, "run", "-q", "-c", "../../configs/poisson-2d.toml", "--set", "grid.shape=[64,64]", "--ranks", "2",
		"--set", "output.diagnostics_every=1", "--set", "output.formats=[]", "--out", out)
	require.Equal(t, 0, code, stderr)
	res = csvtest.Floats(t, csvtest.Read(t, filepath.Join(out, "diagnostics.csv")), "residual")[1:]
	require.Greater(t, len(res), 3)
	for i := 1; i < len(res); i++ {
		require.Less(t, res[i], res[i-1]/10, "residual falls: %v", res)
	}
	require.Less(t, res[len(res)-1], 1e-10)
	rep := readReport(t, filepath.Join(out, "report.json"))
	require.Equal(t, "multigrid", rep.Solver.Kind)
	require.Len(t, rep.Solver.ResidualHistory, len(res))
	require.Less(t, float64(*rep.Solver.ConvergenceFactor), 0.15)
	require.Less(t, float64(*rep.Solver.DiscretisationError), 1e-3)
}

// heat render draws a checkpoint (a plane of a 3D one) without running.
func TestRenderCheckpoint(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := heat(t, "run", "-q", "--set", "grid.shape=[12,16,20]", "--steps", "4", "--out", out, "--set", "checkpoint.final=true")
	require.Equal(t, 0, code, stderr)
	img := filepath.Join(out, "r.png")
	code, stdout, stderr := heat(t, "render", filepath.Join(out, "checkpoints", "latest"), "-o", img, "--cmap", "inferno", "--slice", "x=0.5")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "plane x = 0.525 ", "the plane by its cells' centre: cell 10 of 20, (10 + ½)/20")
	imagetest.DecodePNG(t, img)
	code, _, stderr = heat(t, "render", filepath.Join(out, "checkpoints", "latest"), "--slice", "z=99")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "z=99")
}

// heat render and a run's snapshots draw with one averaging routine: the
// render of the final checkpoint is the final snapshot, byte for byte, for
// a field downsampled 3× (on 3 ranks) and one that is not.
func TestRenderEqualsSnapshot(t *testing.T) {
	for _, c := range []struct{ shape, size string }{{"[90,60]", "30"}, {"[24,20]", "64"}} {
		out := t.TempDir()
		code, _, stderr := heat(t, "run", "-q", "--set", "grid.shape="+c.shape, "--set", "initial.kind=random", "--steps", "5", "--ranks", "3",
			"--out", out, "--set", "checkpoint.final=true", "--set", "output.image_size="+c.size)
		require.Equal(t, 0, code, stderr)
		img := filepath.Join(out, "r.png")
		code, _, stderr = heat(t, "render", out, "-o", img, "--size", c.size)
		require.Equal(t, 0, code, stderr)
		snap, err := os.ReadFile(filepath.Join(out, "snapshots", "u-00000005.png"))
		require.NoError(t, err)
		drawn, err := os.ReadFile(img)
		require.NoError(t, err)
		require.Equal(t, snap, drawn, c.shape)
	}
}
