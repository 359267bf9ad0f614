package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A restart reads the time tables again: one that changed since the
// checkpoint is refused naming it (the run would not reproduce the
// straight one), or with --allow-input-changes goes on and the report says
// so; unchanged, the restart is the straight run bit for bit.
func TestRestartRefusesChangedInputs(t *testing.T) {
	dir := t.TempDir()
	wall := filepath.Join(dir, "wall.csv")
	power := filepath.Join(dir, "power.csv")
	require.NoError(t, os.WriteFile(wall, []byte("t,value\n0,1\n0.01,3\n"), 0o644))
	require.NoError(t, os.WriteFile(power, []byte("t,value\n0,0\n0.005,2\n"), 0o644))
	base := []string{"run", "-q", "--set", "grid.shape=[24,20]", "--set", `boundary.x_lo.value={table="` + wall + `"}`,
		"--set", "source.kind=constant", "--set", "source.value=1", "--set", `source.amplitude={table="` + power + `"}`}
	code, _, stderr := heat(t, append(base, "--steps", "40", "--out", filepath.Join(dir, "straight"))...)
	require.Equal(t, 0, code, stderr)
	want := readReport(t, filepath.Join(dir, "straight", "report.json"))

	half := func(name string) string {
		out := filepath.Join(dir, name)
		code, _, stderr := heat(t, append(base, "--steps", "20", "--set", "checkpoint.final=true", "--out", out)...)
		require.Equal(t, 0, code, stderr)
		return out
	}
	out := half("same")
	code, _, stderr = heat(t, "run", "-q", "--restart", out, "--steps", "40")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, want.Field.SHA256, readReport(t, filepath.Join(out, "report.json")).Field.SHA256)

	out = half("changed")
	require.NoError(t, os.WriteFile(wall, []byte("t,value\n0,1\n0.01,3.5\n"), 0o644))
	code, _, stderr = heat(t, "run", "-q", "--restart", out, "--steps", "40")
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "boundary.x_lo.value: "+wall+" changed since the checkpoint")
	require.Contains(t, stderr, "--allow-input-changes")
	code, _, stderr = heat(t, "run", "-q", "--restart", out, "--steps", "40", "--allow-input-changes")
	require.Equal(t, 0, code, stderr)
	got := readReport(t, filepath.Join(out, "report.json"))
	require.NotEqual(t, want.Field.SHA256, got.Field.SHA256)
	require.Len(t, got.Restart.ChangedInputs, 1)
	require.Contains(t, got.Restart.ChangedInputs[0], wall)

	// A removed table is named too.
	out = half("removed")
	require.NoError(t, os.Remove(power))
	code, _, stderr = heat(t, "run", "-q", "--restart", out, "--steps", "40")
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, power)
}

// A map named by a checkpoints folder (or its latest) is resolved once, to
// the newest checkpoint there, and the run records that one: every rank
// reads the same checkpoint though another run adds new ones meanwhile.
func TestMapFromCheckpointsResolvedOnce(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	code, _, stderr := heat(t, "run", "-q", "--set", "grid.shape=[16,12]", "--steps", "20", "--set", "checkpoint.every=10", "--out", src,
		"--set", `material=[{region = "box", lo = [0.0, 0.0], hi = [0.5, 1.0], k = 3.0}]`)
	require.Equal(t, 0, code, stderr)
	for _, named := range []string{filepath.Join(src, "checkpoints"), filepath.Join(src, "checkpoints", "latest")} {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr = heat(t, "run", "-q", "--set", "grid.shape=[16,12]", "--steps", "3", "--ranks", "2", "--out", out,
			"--set", `maps.k="`+named+`"`)
		require.Equal(t, 0, code, stderr)
		rep := readReport(t, filepath.Join(out, "report.json"))
		maps := rep.Config.(map[string]any)["maps"].(map[string]any)
		require.Equal(t, filepath.Join(src, "checkpoints", "step-00000020"), maps["k"], named)
	}
}

// A field file's values are read before anything is removed: --overwrite
// with an initial field (or source) holding a NaN is refused naming the
// file and the cell, and the previous run's results are all still there.
func TestBadFieldRefusedBeforeOverwrite(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	code, _, stderr := heat(t, "run", "-q", "--set", "grid.shape=[16,12]", "--steps", "4", "--set", "checkpoint.final=true", "--out", out)
	require.Equal(t, 0, code, stderr)
	field := filepath.Join(dir, "field.npy")
	writeMapNPY(t, field, 16, 12, map[int64]float64{5*12 + 7: math.NaN()})
	for _, sets := range [][]string{{"initial.kind=file", `initial.path="` + field + `"`}, {"source.kind=file", `source.path="` + field + `"`}} {
		args := []string{"run", "-q", "--set", "grid.shape=[16,12]", "--steps", "4", "--out", out, "--overwrite", "--ranks", "2"}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		code, _, stderr = heat(t, args...)
		require.Equal(t, 2, code, stderr)
		require.Contains(t, stderr, field)
		require.Contains(t, stderr, "[5 7]")
		require.FileExists(t, filepath.Join(out, "report.json"))
		require.DirExists(t, filepath.Join(out, "checkpoints", "step-00000004"))
	}
}
