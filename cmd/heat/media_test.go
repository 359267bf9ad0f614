package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/io/report"
)

// writeMap writes a float64 .npy map of shape [ny, nx] whose cell (y, x)
// is f(y, x).
func writeMap(t *testing.T, path string, ny, nx int, f func(y, x int) float64) {
	t.Helper()
	header := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", ny, nx)
	pad := 64 - (10+len(header)+1)%64
	header += strings.Repeat(" ", pad) + "\n"
	b := []byte("\x93NUMPY\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(header)))
	b = append(b, header...)
	for y := range ny {
		for x := range nx {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f(y, x)))
		}
	}
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// TestMediaRunFromMapAndMaterials: a run in media given by a .npy map of k
// and [[material]] regions (a hole, a held heater) gives one field.sha256
// on 1, 2 and 3 ranks for each solver; its checkpoint restarts on another
// rank count with the map file gone, to the bits of the straight run.
func TestMediaRunFromMapAndMaterials(t *testing.T) {
	dir := t.TempDir()
	kmap := filepath.Join(dir, "ground-k.npy")
	writeMap(t, kmap, 32, 32, func(y, x int) float64 { return 1 + float64((x/8+y/8)%2)*99 })
	materials := []string{
		"--set", "maps.k=" + kmap,
		"--set", `material=[{name = "slot", region = "box", lo = [0.3, 0.45], hi = [0.8, 0.55], k = 0.0}, {name = "heater", region = "ball", center = [0.25, 0.25], radius = 0.07, fixed = 1.0}]`,
		"--set", "grid.shape=[32,32]", "--set", "boundary.kind=dirichlet", "--set", "boundary.value=0",
		"--set", "initial.kind=constant", "--set", "initial.value=0.5", "-q",
	}
	solvers := map[string][]string{
		"explicit": {"--set", "equation.kind=heat", "--steps", "60"},
		"implicit": {"--set", "equation.kind=heat", "--set", "equation.scheme=crank-nicolson", "--set", "equation.dt=0.001", "--steps", "4"},
		"jacobi":   {"--set", "equation.kind=poisson", "--set", "equation.solver=jacobi", "--set", "source.kind=constant", "--set", "source.value=-1", "--steps", "200"},
		"mg":       {"--set", "equation.kind=poisson", "--set", "equation.solver=multigrid", "--set", "source.kind=constant", "--set", "source.value=-1", "--steps", "40"},
		"mgcg":     {"--set", "equation.kind=poisson", "--set", "equation.solver=mgcg", "--set", "source.kind=constant", "--set", "source.value=-1", "--steps", "40"},
	}
	for name, extra := range solvers {
		var want string
		for _, ranks := range []string{"1", "2", "3"} {
			out := filepath.Join(dir, name+"-"+ranks)
			args := append([]string{"run", "--out", out, "--ranks", ranks}, append(materials, extra...)...)
			code, _, stderr := heat(t, args...)
			require.Equal(t, 0, code, "%s on %s ranks: %s", name, ranks, stderr)
			rep := readReport(t, filepath.Join(out, "report.json"))
			if name == "mg" || name == "mgcg" {
				require.True(t, rep.Converged != nil && *rep.Converged, "%s on %s ranks: %s", name, ranks, rep.StopReason)
			}
			if name == "mgcg" {
				require.NotNil(t, rep.Solver.BackwardError)
				require.Less(t, float64(*rep.Solver.BackwardError), 1e-14)
			}
			if want == "" {
				want = rep.Field.SHA256
			}
			require.Equal(t, want, rep.Field.SHA256, "%s on %s ranks", name, ranks)
		}
	}

	// Explicit, automatic dt: 60 straight steps against 30, a checkpoint,
	// and 30 more on 3 ranks after the map file is gone.
	straight := readReport(t, filepath.Join(dir, "explicit-1", "report.json"))
	half := filepath.Join(dir, "half")
	args := append([]string{"run", "--out", half, "--ranks", "2", "--set", "checkpoint.every=30"}, append(materials, solvers["explicit"]...)...)
	args[len(args)-1] = "30"
	code, _, stderr := heat(t, args...)
	require.Equal(t, 0, code, stderr)
	require.NoError(t, os.Remove(kmap))
	code, _, stderr = heat(t, "run", "--restart", filepath.Join(half, "checkpoints", "latest"), "--out", filepath.Join(dir, "rest"), "--ranks", "3", "--steps", "60", "-q")
	require.Equal(t, 0, code, stderr)
	rest := readReport(t, filepath.Join(dir, "rest", "report.json"))
	require.Equal(t, straight.Field.SHA256, rest.Field.SHA256)
	dt := func(r any) any { return r.(map[string]any)["equation"].(map[string]any)["dt"] }
	require.Equal(t, dt(straight.Config), dt(rest.Config), "the automatic step, found again from the checkpoint's media")
	require.NotEqual(t, 0.0, dt(rest.Config))

	// A fresh run with the map gone is a usage error naming it.
	code, _, stderr = heat(t, append([]string{"run", "--out", filepath.Join(dir, "gone")}, append(materials, solvers["explicit"]...)...)...)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "ground-k.npy")
}

// TestMediaRefusals: a dt past the media's stability limit, a negative
// value in a map and a smoother the media do not have are usage errors
// naming the key, file or cell.
func TestMediaRefusals(t *testing.T) {
	dir := t.TempDir()
	kmap := filepath.Join(dir, "k.npy")
	writeMap(t, kmap, 16, 16, func(y, x int) float64 {
		if y == 3 && x == 7 {
			return -1
		}
		return 1
	})
	base := []string{"run", "--out", filepath.Join(dir, "out"), "--set", "grid.shape=[16,16]", "--steps", "2", "-q"}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--set", `material=[{region = "box", lo = [0.0, 0.0], hi = [0.5, 1.0], k = 100.0}]`, "--set", "equation.dt=0.0005"},
			[]string{"equation.dt", "stability limit"}},
		{[]string{"--set", "maps.k=" + kmap}, []string{"maps.k", "k.npy", "[3 7]", "-1"}},
		{[]string{"--set", `material=[{region = "ball", center = [0.5, 0.5], radius = 0.2, k = 0.0}]`, "--set", "equation.scheme=backward-euler",
			"--set", "equation.dt=0.01", "--set", "multigrid.smoother=rbgs"}, []string{"multigrid.smoother", "rbgs"}},
	} {
		code, _, stderr := heat(t, append(base, c.args...)...)
		require.Equal(t, 2, code, stderr)
		for _, w := range c.want {
			require.Contains(t, stderr, w)
		}
	}
}

// In media a solve's plain cycles that converge too slowly hand over to
// mgcg, and the summary and the report say so: a 10⁶ checkerboard's
// Poisson solve after its first cycles (tiles shifted by 8 cells: jumps
// inside the 8² level's cells), and Crank–Nicolson steps in
// two-materials-2d each on its own.
func TestSummaryNamesTheHandOverToMGCG(t *testing.T) {
	dir := t.TempDir()
	kmap := filepath.Join(dir, "k.npy")
	writeMap(t, kmap, 64, 64, func(y, x int) float64 {
		if ((x+8)/16+(y+8)/16)%2 == 1 {
			return 1e6
		}
		return 1
	})
	out := filepath.Join(dir, "poisson")
	code, stdout, stderr := heat(t, "run", "--out", out, "--set", "grid.shape=[64,64]", "--set", "maps.k="+kmap, "--set", "equation.kind=poisson",
		"--set", "source.kind=constant", "--set", "source.value=-1", "--set", "output.formats=[]")
	require.Zero(t, code, stderr)
	rep := readReport(t, filepath.Join(out, "report.json"))
	require.Equal(t, "mgcg", rep.Solver.Kind)
	require.True(t, rep.Solver.KrylovFrom >= 1 && rep.Solver.KrylovFrom <= 3, "plain cycles before mgcg: %d", rep.Solver.KrylovFrom)
	require.Equal(t, 1, rep.Solver.KrylovSolves)
	require.Contains(t, stdout, fmt.Sprintf("; the first %d of them plain cycles, which converged too slowly", rep.Solver.KrylovFrom))

	out = filepath.Join(dir, "cn")
	code, stdout, stderr = heat(t, "run", "-c", "two-materials-2d", "--out", out, "--set", "grid.shape=[64,64]", "--set", `equation.scheme="crank-nicolson"`,
		"--set", "run.steps=3", "--set", "run.t_end=0", "--set", "output.formats=[]")
	require.Zero(t, code, stderr)
	rep = readReport(t, filepath.Join(out, "report.json"))
	require.Equal(t, "multigrid", rep.Solver.Kind)
	require.Positive(t, rep.Solver.KrylovSolves)
	require.Zero(t, rep.Solver.KrylovFrom)
	require.Contains(t, stdout, fmt.Sprintf("(mgcg iterations included: %d solves handed their cycles over to mgcg)", rep.Solver.KrylovSolves))
}

// A run whose mgcg went algebraic (a 10⁶ checkerboard of 16-cell tiles
// shifted by 2: the grid levels' iterations hardly reduce the error) keeps
// that in its checkpoints, and a restart goes on preconditioned
// algebraically as the straight run did: the same bits and cycles, on
// other rank counts.
func TestRestartAfterTheAlgebraicSwitch(t *testing.T) {
	dir := t.TempDir()
	kmap := filepath.Join(dir, "k.npy")
	writeMap(t, kmap, 64, 64, func(y, x int) float64 {
		if ((y+2)/16+(x+2)/16)%2 == 1 {
			return 1e6
		}
		return 1
	})
	run := func(out string, extra ...string) report.Report {
		args := append([]string{"run", "-q", "--set", "grid.shape=[64,64]", "--set", "maps.k=" + kmap,
			"--set", "equation.scheme=\"backward-euler\"", "--set", "equation.dt=1", "--set", "initial.kind=\"random\"",
			"--set", "output.formats=[]", "--out", out}, extra...)
		code, _, stderr := heat(t, args...)
		require.Equal(t, 0, code, stderr)
		return readReport(t, filepath.Join(out, "report.json"))
	}
	want := run(filepath.Join(dir, "straight"), "--steps", "6")
	require.NotNil(t, want.Solver.Algebraic)
	from := want.Solver.Algebraic.From
	require.True(t, from >= 1 && from <= 3, "the straight run switches before the checkpoint at step 3 (step %d)", from)
	for _, wr := range [][2]int{{1, 3}, {2, 1}} {
		out := filepath.Join(dir, fmt.Sprintf("w%dr%d", wr[0], wr[1]))
		run(out, "--steps", "3", "--ranks", fmt.Sprint(wr[0]), "--set", "checkpoint.final=true")
		got := run(out, "--steps", "6", "--ranks", fmt.Sprint(wr[1]), "--restart", "latest")
		require.Equal(t, want.Field.SHA256, got.Field.SHA256, "ranks %d -> %d", wr[0], wr[1])
		require.Equal(t, want.Solver.Cycles, got.Solver.Cycles)
		require.NotNil(t, got.Solver.Algebraic)
		require.Equal(t, from, got.Solver.Algebraic.From)
	}
}
