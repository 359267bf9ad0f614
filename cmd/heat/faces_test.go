package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/io/report"
)

// facesConfig is a plate with every kind of face: a wall whose temperature
// follows an expression of t, a convective (Robin) wall, a flux leaving
// through the top, an insulated bottom, and a source switching on into a
// cycle (a product of t's factors and x's: weighted in time by the steps).
const facesConfig = `
[grid]
shape = [24, 32]
[equation]
kind = "heat"
[run]
steps = 60
[boundary]
kind = "neumann"
[boundary.x_lo]
kind = "dirichlet"
value = "1 + 0.5*sin(2*pi*t/0.05)"
[boundary.x_hi]
kind = "robin"
h = 5
value = 0.25
[boundary.y_hi]
value = "-2*x"
[source]
kind = "expr"
expr = "(t < 0.01 ? 0 : 1)*(1 + 0.5*cos(2*pi*t/0.02))*10*exp(-((x-0.5)^2 + (y-0.5)^2)/0.02)"
`

// The energy balance of a run with Robin, flux and time-varying faces and a
// source switching on closes to 1e-10, explicit and Crank–Nicolson (with
// the solves' tolerance below it), and its figures are in the report.
func TestEnergyBalanceInTheReport(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "faces.toml")
	require.NoError(t, os.WriteFile(cfg, []byte(facesConfig), 0o644))
	for _, scheme := range [][]string{
		{"--set", "equation.scheme=explicit"},
		{"--set", "equation.scheme=crank-nicolson", "--set", "equation.dt=5e-4", "--set", "run.tolerance=1e-13"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := heat(t, append([]string{"run", "-q", "-c", cfg, "--ranks", "3", "--out", out}, scheme...)...)
		require.Equal(t, 0, code, stderr)
		rep := readReport(t, filepath.Join(out, "report.json"))
		e := rep.EnergyBalance
		require.NotNil(t, e, "%v", scheme)
		require.Less(t, float64(e.RelativeResidual), 1e-10, "%v: %+v", scheme, e)
		require.Greater(t, math.Abs(float64(e.ContentChange)), 1e-3, "%v", scheme)
		require.Less(t, float64(e.Faces["y_hi"]), 0.0, "%v: heat leaves through the top", scheme)
		require.Greater(t, float64(e.Source), 0.0, "%v", scheme)
		require.Equal(t, 0.0, float64(e.Faces["y_lo"]), "%v: the bottom is insulated", scheme)
	}
}

// A face value from a time table follows it as the expression of the same
// line does, bit for bit; a value that is not finite fails the run (exit
// 1) naming the key, the face, the point and the step.
func TestFaceTablesAndFailures(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "faces.toml")
	require.NoError(t, os.WriteFile(cfg, []byte(facesConfig), 0o644))
	table := filepath.Join(dir, "wall.csv")
	require.NoError(t, os.WriteFile(table, []byte("t,value\n0,1\n1,3\n"), 0o644))
	sha := func(set string) string {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := heat(t, "run", "-q", "-c", cfg, "--out", out, "--set", set)
		require.Equal(t, 0, code, stderr)
		return readReport(t, filepath.Join(out, "report.json")).Field.SHA256
	}
	// The table interpolates as (1 − w)·v₀ + w·v₁, w = t here.
	require.Equal(t, sha(`boundary.x_lo.value="(1 - t)*1 + t*3"`), sha(`boundary.x_lo.value={table="`+table+`"}`))
	require.NotEqual(t, sha(`boundary.x_lo.value="(1 - t)*1 + t*3.5"`), sha(`boundary.x_lo.value={table="`+table+`"}`))

	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := heat(t, "run", "-q", "-c", cfg, "--ranks", "2", "--out", out, "--set", `boundary.x_lo.value="sqrt(0.005 - t)"`)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, "boundary.x_lo.value: is NaN on face x_lo at (x, y) = (0, ")
	require.Contains(t, stderr, "(step ")
	require.NotContains(t, stderr, "goroutine")
}

// A source's amplitude in time (source.amplitude) from a time table follows
// it as the expression of the same line does, bit for bit and on every
// split; its energy account closes; one that reads a coordinate, one on
// the initial field or on a Poisson problem is refused (exit 2), one that
// is not finite fails the run (exit 1) naming the key, the time and step.
func TestSourceAmplitude(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "power.csv")
	require.NoError(t, os.WriteFile(table, []byte("t,value\n0,1\n1,3\n"), 0o644))
	base := []string{"run", "-q", "--set", "grid.shape=[24,20]", "--steps", "40", "--set", "source.kind=gaussian",
		"--set", "source.radius=0.2", "--set", "source.value=50", "--set", "equation.dt=2e-4"}
	sha := func(amp string, more ...string) (string, *report.EnergyBalance) {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := heat(t, append(append(base, "--out", out, "--set", "source.amplitude="+amp), more...)...)
		require.Equal(t, 0, code, stderr)
		r := readReport(t, filepath.Join(out, "report.json"))
		return r.Field.SHA256, r.EnergyBalance
	}
	tab := `{table="` + table + `"}`
	want, e := sha(tab)
	require.Less(t, float64(e.RelativeResidual), 1e-10, "%+v", e)
	got, _ := sha(`"(1 - t)*1 + t*3"`)
	require.Equal(t, want, got)
	got, _ = sha(tab, "--ranks", "3")
	require.Equal(t, want, got, "3 ranks")
	other, _ := sha(`"(1 - t)*1 + t*3.5"`)
	require.NotEqual(t, want, other)
	_, e = sha(tab, "--set", "equation.scheme=crank-nicolson", "--set", "run.tolerance=1e-13")
	require.Less(t, float64(e.RelativeResidual), 1e-10, "CN: %+v", e)

	for _, c := range []struct {
		set  []string
		code int
		msg  string
	}{
		{[]string{"source.amplitude=\"x*t\""}, 2, "source.amplitude: reads x"},
		{[]string{"initial.amplitude=2"}, 2, "initial.amplitude"},
		{[]string{"source.amplitude={table=\"" + filepath.Join(dir, "none.csv") + "\"}"}, 2, "none.csv"},
		{[]string{"source.amplitude=\"t < 1e-3 ? 1 : sqrt(-t)\""}, 1, "source.amplitude = \"t < 1e-3 ? 1 : sqrt(-t)\" is nan at t = 0.001, in step 6"},
	} {
		args := slices.Clone(base)
		for _, s := range c.set {
			args = append(args, "--set", s)
		}
		code, _, stderr := heat(t, append(args, "--out", filepath.Join(t.TempDir(), "out"))...)
		require.Equal(t, c.code, code, "%v: %s", c.set, stderr)
		require.Contains(t, stderr, c.msg, "%v", c.set)
	}
	code, _, stderr := heat(t, "run", "-q", "-c", "poisson-2d", "--out", filepath.Join(t.TempDir(), "out"), "--set", "source.amplitude=2")
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "a poisson problem has no time")
}

// A Robin h that turns negative as the run goes (an expression that is not
// constant, so not refused at load) fails the run at the step that meets
// it, naming the key, the face, the point, the step and the rule, on the
// explicit and the implicit paths alike.
func TestRobinHNegativeInTime(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "faces.toml")
	require.NoError(t, os.WriteFile(cfg, []byte(facesConfig), 0o644))
	for _, scheme := range []string{"explicit", "backward-euler"} {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := heat(t, "run", "-q", "-c", cfg, "--ranks", "2", "--out", out, "--set", "equation.scheme="+scheme,
			"--set", "equation.dt=1e-4", "--set", `boundary.x_hi.h="t > 0.002 ? -100 : 1"`)
		require.Equal(t, 1, code, "%s: %s", scheme, stderr)
		require.Contains(t, stderr, "boundary.x_hi.h: is -100 on face x_hi at (x, y) = (1, ", scheme)
		require.Contains(t, stderr, "h must be >= 0", scheme)
		require.Contains(t, stderr, "(step 2", scheme)
		require.NotContains(t, stderr, "goroutine")
		rep := readReport(t, filepath.Join(out, "report.json"))
		require.Equal(t, "failed", rep.Status)
	}
}
