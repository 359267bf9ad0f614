package run

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
	"heat/io/runplot"
)

// centreOf is the physical coordinate of the centre of cell i of n over
// length, written as the config takes it.
func centreOf(i, n int, length float64) string {
	return strconv.FormatFloat((float64(i)+0.5)*length/float64(n), 'g', -1, 64)
}

// probeSet is the --set of probes at: a cell centre, halfway between
// centres, a corner of the domain, a point between a face and the first
// centres, on a grid of shape [ny, nx] and lengths [ly, lx].
func probeSet(ny, nx int, ly, lx float64) string {
	return fmt.Sprintf(`output.probe=[{name = "centre", at = [%s, %s]}, {name = "between", at = [%g, %g]}, {name = "corner", at = [%g, 0.0]}, {name = "wall", at = [%g, %g]}]`,
		centreOf(5, ny, ly), centreOf(11, nx, lx), 0.37*ly, 0.61*lx, ly, 0.01*ly, 0.5*lx)
}

// cellOf is cell (y, x) of the final checkpoint of the run in out.
func cellOf(t *testing.T, out string, y, x int) float64 {
	t.Helper()
	path, err := CheckpointPath(out)
	require.NoError(t, err)
	ck, err := openCheckpoint(path)
	require.NoError(t, err)
	var v float64
	require.NoError(t, local.Run(1, func(c comm.Comm) error {
		f, err := readWhole(c, ck)
		if err == nil {
			v = f.Data[f.Index(y, x)]
		}
		return err
	}))
	return v
}

// probes.csv is the same file, byte for byte, on 1, 3 and 4 ranks (a grid
// that splits unevenly) with 1 and 2 threads, for explicit heat and for a
// Poisson solve by multigrid; it has a row at step 0, every probe_every
// steps and at the last, and its probe at a cell centre holds that cell's
// value in the final checkpoint, bit for bit.
func TestProbesCSVSameOnEverySplit(t *testing.T) {
	cases := []struct {
		name         string
		ny, nx       int
		args         []string
		steps        []int
		timeAdvances bool
	}{
		{"heat", 23, 17, []string{"--steps", "30", "--set", "initial.kind=random", "--set", "boundary.x_lo.kind=neumann",
			"--set", "grid.length=[1.0,0.8]", "--set", "output.probe_every=7"}, []int{0, 7, 14, 21, 28, 30}, true},
		{"poisson", 32, 24, []string{"-c", "poisson-2d", "--set", "grid.shape=[32,24]", "--set", "grid.length=[1.0,0.8]",
			"--set", "output.probe_every=2", "--set", "run.tolerance=1e-9"}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var want []byte
			for _, ranks := range []string{"1", "3", "4"} {
				for _, threads := range []string{"1", "2"} {
					out := filepath.Join(dir, ranks+"x"+threads)
					args := append([]string{"--out", out, "--ranks", ranks, "--threads", threads, "--set", "grid.shape=[" + strconv.Itoa(tc.ny) + "," + strconv.Itoa(tc.nx) + "]",
						"--set", probeSet(tc.ny, tc.nx, 1, 0.8), "--set", "checkpoint.final=true", "--set", "output.formats=[]"}, tc.args...)
					_, err := runWith(t, "", args...)
					require.NoError(t, err, "%s ranks, %s threads", ranks, threads)
					got, err := os.ReadFile(filepath.Join(out, ProbesFile))
					require.NoError(t, err)
					if want == nil {
						want = got
						p, err := runplot.ParseProbes(strings.NewReader(string(got)), "probes.csv")
						require.NoError(t, err)
						require.Equal(t, []string{"centre", "between", "corner", "wall"}, p.Names)
						var steps []int
						for _, r := range p.Rows {
							steps = append(steps, r.Step)
							if tc.timeAdvances {
								require.Equal(t, r.Step > 0, r.Time > 0, "step %d at t = %g", r.Step, r.Time)
							} else {
								require.Zero(t, r.Time, "a poisson row's time, step %d", r.Step)
							}
						}
						if tc.steps != nil {
							require.Equal(t, tc.steps, steps)
						}
						require.Equal(t, 0, steps[0])
						last := p.Rows[len(p.Rows)-1]
						require.Equal(t, math.Float64bits(cellOf(t, out, 5, 11)), math.Float64bits(last.Values[0]),
							"the probe at the centre of cell (5, 11) against the final checkpoint")
						require.NotEqual(t, last.Values[0], last.Values[1])
						continue
					}
					require.Equal(t, string(want), string(got), "%s ranks, %s threads", ranks, threads)
				}
			}
		})
	}
}

// A restart in place appends to probes.csv from its checkpoint on, as
// diagnostics.csv; read back, the rows are those of the straight run. A
// restart that changes the probes under the columns is refused, naming
// output.probe, and leaves the file alone.
func TestProbesCSVRestart(t *testing.T) {
	dir := t.TempDir()
	problem := []string{"--set", "grid.shape=[20,14]", "--set", "initial.kind=random", "--set", probeSet(20, 14, 1, 1), "--set", "output.probe_every=3",
		"--set", "output.formats=[]"}
	straight := filepath.Join(dir, "straight")
	_, err := runWith(t, "", append(problem, "--steps", "24", "--out", straight)...)
	require.NoError(t, err)
	half := filepath.Join(dir, "half")
	_, err = runWith(t, "", append(problem, "--steps", "12", "--ranks", "2", "--out", half, "--set", "checkpoint.final=true")...)
	require.NoError(t, err)
	_, err = runWith(t, half, "--steps", "24", "--ranks", "3")
	require.NoError(t, err)
	want, err := runplot.ReadProbes(filepath.Join(straight, ProbesFile))
	require.NoError(t, err)
	got, err := runplot.ReadProbes(filepath.Join(half, ProbesFile))
	require.NoError(t, err)
	require.Equal(t, want, got)

	before, err := os.ReadFile(filepath.Join(half, ProbesFile))
	require.NoError(t, err)
	_, err = runWith(t, half, "--steps", "30", "--set", `output.probe=[{name = "other", at = [0.5, 0.5]}]`)
	require.ErrorContains(t, err, "output.probe")
	require.ErrorContains(t, err, `"step,time,other"`)
	require.Equal(t, 2, ExitCode(err))
	after, err := os.ReadFile(filepath.Join(half, ProbesFile))
	require.NoError(t, err)
	require.Equal(t, before, after)
}
