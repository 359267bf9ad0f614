package run

import (
	_ "image/png"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/checkpoint"
	"heat/internal/imagetest"
	"heat/io/report"
	"heat/solver"
)

// finalCheckpoint runs args with a checkpoint at the end into a fresh
// folder and returns that folder, the checkpoint and the run's report.
func finalCheckpoint(t *testing.T, args ...string) (string, *checkpoint.Checkpoint, *report.Report) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	rep, err := runWith(t, "", append(args, "--out", out, "--set", "checkpoint.final=true", "--set", "output.diagnostics_every=0")...)
	require.NoError(t, err)
	path, err := CheckpointPath(out)
	require.NoError(t, err)
	ck, err := checkpoint.Open(path)
	require.NoError(t, err)
	return out, ck, rep
}

// checkLine asserts that l is the line along axis `along` of a field of
// shape and length: cell centres in physical coordinates, and values within
// the run's discretisation error of the exact ones (which the report
// measured over every cell) at every point.
func checkLine(t *testing.T, l *lineOut, along int, shape []int, length []float64, rep *report.Report) {
	t.Helper()
	require.Equal(t, along, l.Along)
	n := shape[along]
	require.Len(t, l.X, n)
	require.Len(t, l.U, n)
	require.Len(t, l.Exact, n)
	h := length[along] / float64(n)
	for i, x := range l.X {
		require.InDelta(t, (float64(i)+0.5)*h, x, 1e-12)
	}
	disc := float64(*rep.Solver.DiscretisationError)
	require.Less(t, disc, 5e-3, "the run resolves the mode")
	for i := range l.U {
		require.LessOrEqual(t, math.Abs(l.U[i]-l.Exact[i]), disc*(1+1e-12), "cell %d at %s = %g", i, l.Name, l.X[i])
	}
	require.Greater(t, l.MaxError(), 0.0, "the exact values are not the field's own")
}

// A line-out of a decaying sine mode (different modes and lengths per
// axis, so a transposed or misplaced line would be far off) follows the
// exact solution at the checkpoint's time, within the discretisation
// error, along x and along y.
func TestLineOutOfSineModeFollowsExact(t *testing.T) {
	shape, length := []int{32, 48}, []float64{1, 2}
	_, ck, rep := finalCheckpoint(t, "--set", "grid.shape=[32,48]", "--set", "grid.length=[1.0,2.0]",
		"--set", "initial.kind=sine", "--set", "initial.mode=[1,2]", "--steps", "40")
	require.Greater(t, ck.Meta().Time, 0.0)

	l, err := readLine(ck, "y=0.5", "")
	require.NoError(t, err)
	checkLine(t, l, 1, shape, length, rep)
	require.Equal(t, "y16", l.Label)
	// The exact solution is taken at the checkpoint's time: the initial
	// mode is much farther off.
	initial := solver.Sine([]int{1, 2}, length, 1, 0)
	far := 0.0
	for i, x := range l.X {
		far = max(far, math.Abs(l.U[i]-initial([]float64{16.5 / 32, x}, []int{16, i})))
	}
	require.Greater(t, far, 20*l.MaxError())

	l, err = readLine(ck, "x=0.25", "")
	require.NoError(t, err)
	checkLine(t, l, 0, shape, length, rep)
	require.Equal(t, "x12", l.Label)
}

// In 3D the line takes its second fixed axis from --slice, or names both;
// the two forms cut the same cells.
func TestLineOut3D(t *testing.T) {
	shape, length := []int{8, 12, 16}, []float64{1, 1, 1}
	_, ck, rep := finalCheckpoint(t, "--set", "grid.shape=[8,12,16]", "--set", "initial.kind=sine", "--steps", "6")
	a, err := readLine(ck, "y=0.5", "z=mid")
	require.NoError(t, err)
	checkLine(t, a, 2, shape, length, rep)
	b, err := readLine(ck, "z=4, y=6", "x=0")
	require.NoError(t, err)
	require.Equal(t, a.U, b.U)
	require.Equal(t, a.Where, b.Where)
	c, err := readLine(ck, "x=mid", "y=0.25")
	require.NoError(t, err)
	checkLine(t, c, 0, shape, length, rep)
}

// The manufactured Poisson solution is drawn beside a Poisson run's field.
func TestLineOutPoisson(t *testing.T) {
	_, ck, rep := finalCheckpoint(t, "-c", "../configs/poisson-2d.toml", "--set", "grid.shape=[32,32]")
	l, err := readLine(ck, "x=mid", "")
	require.NoError(t, err)
	checkLine(t, l, 0, []int{32, 32}, []float64{1, 1}, rep)
	p, err := linePlot(l)
	require.NoError(t, err)
	require.Contains(t, p.Title.Text, "iteration")
}

// A problem without a known solution has no exact line, and still plots.
func TestLineOutWithoutExact(t *testing.T) {
	_, ck, _ := finalCheckpoint(t, "--set", "grid.shape=[20,30]", "--steps", "5")
	l, err := readLine(ck, "y=mid", "")
	require.NoError(t, err)
	require.Nil(t, l.Exact)
	require.True(t, math.IsNaN(l.MaxError()))
	p, err := linePlot(l)
	require.NoError(t, err)
	require.NotContains(t, p.Title.Text, "exact")
}

func TestParseLine(t *testing.T) {
	good := []struct {
		spec, slice string
		shape       []int
		along       int
		fixed       []int
	}{
		{"y=0.5", "", []int{10, 20}, 1, []int{5, 0}},
		{"y=1.0", "", []int{10, 20}, 1, []int{9, 0}},
		{"y=0.0", "", []int{10, 20}, 1, []int{0, 0}},
		{"x=3", "", []int{10, 20}, 0, []int{0, 3}},
		{" x = mid ", "", []int{10, 20}, 0, []int{0, 10}},
		{"y=0.5", "", []int{4, 10, 20}, 2, []int{2, 5, 0}},        // --slice defaults to z=mid
		{"y=0.5", "x=0.75", []int{4, 10, 20}, 0, []int{0, 5, 15}}, // along z
		{"z=1,x=2", "y=0", []int{4, 10, 20}, 1, []int{1, 0, 2}},   // both given: --slice unused
	}
	for _, g := range good {
		along, fixed, err := parseLine(g.spec, g.slice, g.shape)
		require.NoError(t, err, g.spec)
		require.Equal(t, g.along, along, g.spec)
		for a := range g.shape {
			if a != along {
				require.Equal(t, g.fixed[a], fixed[a], "%s axis %d", g.spec, a)
			}
		}
	}
	bad := []struct {
		spec, slice string
		shape       []int
		want        string
	}{
		{"y=1.5", "", []int{10, 20}, `--line "y=1.5": y=1.5 is outside the domain`},
		{"x=-1", "", []int{10, 20}, `--line "x=-1": x=-1 is outside the domain: a cell index along x is from 0 to 19`},
		{"x=20", "", []int{10, 20}, "outside the domain"},
		{"x=-0.5", "", []int{10, 20}, "outside the domain"},
		{"z=0.5", "", []int{10, 20}, "AXIS one of y, x"},
		{"y", "", []int{10, 20}, "want AXIS=AT"},
		{"y=half", "", []int{10, 20}, "want mid, a cell index from 0 to 9"},
		{"y=0.5,x=0.5", "", []int{10, 20}, "a line of a 2D field fixes 1 axis(es), not 2"},
		{"y=0.5,y=0.25", "", []int{4, 10, 20}, "y is given twice"},
		{"z=0.5", "z=mid", []int{4, 10, 20}, "fix the same axis: name the line's second axis, e.g. --line z=0.5,y=mid"},
		{"y=0.5", "w=3", []int{4, 10, 20}, `--slice "w=3"`},
		{"z=0,y=0,x=0", "", []int{4, 10, 20}, "fixes 2 axis(es), not 3"},
	}
	for _, b := range bad {
		_, _, err := parseLine(b.spec, b.slice, b.shape)
		require.Error(t, err, b.spec)
		require.Contains(t, err.Error(), b.want)
	}
}

// RenderLine writes the plot in the format of its extension; a line
// outside the domain or another format is a usage error.
func TestRenderLineFilesAndErrors(t *testing.T) {
	out, _, _ := finalCheckpoint(t, "--set", "grid.shape=[16,24]", "--set", "initial.kind=sine", "--steps", "4")
	dir := t.TempDir()
	msg, err := RenderLine(out, LineOptions{Out: filepath.Join(dir, "line.png"), Line: "y=0.5"})
	require.NoError(t, err)
	require.Contains(t, msg, "u along x at y = 0.5312 (cell 8)")
	require.Contains(t, msg, "max |u − exact|")
	img := imagetest.DecodePNG(t, filepath.Join(dir, "line.png"))
	require.Greater(t, img.Bounds().Dx(), 400)
	_, err = RenderLine(out, LineOptions{Out: filepath.Join(dir, "line.svg"), Line: "x=3"})
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(dir, "line.svg"))

	for _, c := range []struct{ o LineOptions }{
		{LineOptions{Line: "y=1.5"}},
		{LineOptions{Line: "x=-1"}},
		{LineOptions{Line: "y=0.5", Out: filepath.Join(dir, "line.gif")}},
	} {
		_, err := RenderLine(out, c.o)
		require.Error(t, err)
		require.Equal(t, 2, ExitCode(err), err.Error())
	}
	_, err = RenderLine(filepath.Join(dir, "nothing"), LineOptions{Line: "y=0.5"})
	require.Equal(t, 2, ExitCode(err))
}
