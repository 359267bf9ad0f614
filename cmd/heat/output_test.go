package main

import (
	"encoding/xml"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
	"heat/internal/csvtest"
	"heat/io/heatmap"
	"heat/solver"
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
		f, err := os.Open(filepath.Join(snaps, "u-"+step+".png"))
		require.NoError(t, err)
		img, err := png.Decode(f)
		f.Close()
		require.NoError(t, err)
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
	require.Equal(t, []string{"step", "time", "min", "max", "mean", "total", "residual"}, rows[0])
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
	require.Contains(t, stdout, "x=10")
	f, err := os.Open(img)
	require.NoError(t, err)
	defer f.Close()
	_, err = png.Decode(f)
	require.NoError(t, err)
	code, _, stderr = heat(t, "render", filepath.Join(out, "checkpoints", "latest"), "--slice", "z=99")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "z=99")
}

// The PNG's plane, averaged rank by rank into pixels, equals the plane cut
// from the gathered field and box-averaged in one place, on any split.
func TestCoarsePlaneMatchesGatheredField(t *testing.T) {
	shape := []int{9, 23, 17}
	for _, spec := range []string{"z=mid", "y=3", "x=0.9"} {
		for _, rt := range [][2]int{{1, 1}, {1, 3}, {3, 2}, {4, 1}} {
			ranks := rt[0]
			sp := solver.Spec{Shape: shape, Length: []float64{1, 1, 1}, Ghost: 1, Equation: solver.Heat, Alpha: 1,
				Faces: make([][2]solver.Face, 3), Initial: solver.Random(shape, 9, 1, 0), Threads: rt[1], Steps: 0, CheckEvery: 1}
			sp.DT = 0.5 * solver.StableDT(1, sp.Spacing())
			err := local.Run(ranks, func(c comm.Comm) error {
				s, err := solver.New(c, sp)
				if err != nil {
					return err
				}
				defer s.Close()
				// Cells that are not finite are left out of their pixel: a
				// few scattered, and a whole 4×4 block of NaN (pixel (0, 0)
				// of z=mid at factor 4).
				lay := s.Layout()
				u := s.Field()
				for z := lay.Box.Lo[0]; z < lay.Box.Hi[0]; z++ {
					for y := lay.Box.Lo[1]; y < lay.Box.Hi[1]; y++ {
						for x := lay.Box.Lo[2]; x < lay.Box.Hi[2]; x++ {
							i := lay.Index(z-lay.Box.Lo[0], y-lay.Box.Lo[1], x-lay.Box.Lo[2])
							switch {
							case (z*31+y*7+x)%53 == 0:
								u[i] = math.NaN()
							case (z*13+y*5+x)%61 == 0:
								u[i] = math.Inf(1 - 2*(x%2))
							case z == 4 && y < 4 && x < 4:
								u[i] = math.NaN()
							}
						}
					}
				}
				plane, cy, cx, _, lo, hi, err := coarsePlane(c, s, spec, 7, new(planeBufs))
				if err != nil {
					return err
				}
				field, err := s.Gather()
				if err != nil || c.Rank() != 0 {
					return err
				}
				full, ny, nx, _, err := heatmap.Slice(field, shape, spec)
				if err != nil {
					return err
				}
				f := heatmap.Factor(ny, nx, 7)
				require.Equal(t, (ny+f-1)/f, cy)
				require.Equal(t, (nx+f-1)/f, cx)
				finite := slices.DeleteFunc(slices.Clone(full), func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) })
				require.Equal(t, slices.Min(finite), lo)
				require.Equal(t, slices.Max(finite), hi)
				nan := 0
				for Y := range cy {
					for X := range cx {
						sum, n := 0.0, 0
						for y := Y * f; y < min(ny, (Y+1)*f); y++ {
							for x := X * f; x < min(nx, (X+1)*f); x++ {
								if v := full[y*nx+x]; !math.IsNaN(v) && !math.IsInf(v, 0) {
									sum += v
									n++
								}
							}
						}
						if n == 0 {
							require.True(t, math.IsNaN(plane[Y*cx+X]), "%s ranks %d pixel %d,%d", spec, ranks, Y, X)
							nan++
							continue
						}
						require.InDelta(t, sum/float64(n), plane[Y*cx+X], 1e-12, "%s ranks %d pixel %d,%d", spec, ranks, Y, X)
					}
				}
				if spec == "z=mid" {
					require.Positive(t, nan, "the all-NaN pixel")
				}
				return nil
			})
			require.NoError(t, err)
		}
	}
}
