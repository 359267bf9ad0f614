package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A medium with nothing to solve or whose faces overflow is refused before
// a step (exit 2, the cause named), and the run still leaves a report that
// parses; before, the steps ran with dt = +Inf and the report could not be
// written ("json: unsupported value: +Inf").
func TestMediaWithNothingToSolveRefused(t *testing.T) {
	whole := func(k string, extra string) []string {
		return []string{"--set", `material=[{region = "box", lo = [0.0, 0.0], hi = [1.0, 1.0], k = ` + k + extra + `}]`}
	}
	cases := []struct {
		name string
		sets []string
		want string
	}{
		{"k = 0 everywhere", whole("0.0", ""), "no free conducting cell"},
		{"every cell held", whole("1.0", ", fixed = 2.0"), "no free conducting cell"},
		{"k near 1e308", whole("1e308", ""), "face coefficients k_f/h² overflow"},
	}
	for _, tc := range cases {
		for _, eq := range [][]string{{"--set", "equation.kind=heat"}, {"--set", "equation.kind=poisson"}} {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "-q", "--set", "grid.shape=[16,12]", "--ranks", "2", "--out", out}, tc.sets...)
			code, _, stderr := heat(t, append(args, eq...)...)
			require.Equal(t, 2, code, "%s %v: %s", tc.name, eq, stderr)
			require.Contains(t, stderr, tc.want, tc.name)
			require.NotContains(t, stderr, "goroutine")
			data, err := os.ReadFile(filepath.Join(out, "report.json"))
			require.NoError(t, err, tc.name)
			var rep map[string]any
			require.NoError(t, json.Unmarshal(data, &rep), "%s: the report parses", tc.name)
			require.Equal(t, "failed", rep["status"])
			require.EqualValues(t, 2, rep["exit_code"])
		}
	}
}

// What the solver would refuse at its start is refused before any work
// (exit 2, nothing written): temporal blocking (grid.ghost = 2) with a
// Robin face, a flux, or a source that varies in time. Before, these
// passed validation, made the output folder and failed with exit 1.
func TestSolverRefusalsBeforeTheRun(t *testing.T) {
	for _, sets := range [][]string{
		{"boundary.x_hi.kind=robin", "boundary.x_hi.h=5"},
		{"boundary.y_lo.kind=neumann", "boundary.y_lo.value=2"},
		{"source.kind=expr", `source.expr="t < 0.001 ? 0 : 1"`},
	} {
		out := filepath.Join(t.TempDir(), "out")
		args := []string{"run", "-q", "--set", "grid.shape=[32,32]", "--set", "grid.ghost=2", "--steps", "4", "--out", out}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		code, _, stderr := heat(t, args...)
		require.Equal(t, 2, code, "%v: %s", sets, stderr)
		require.Contains(t, stderr, "grid.ghost: must be 1, not 2", sets)
		require.NoDirExists(t, out, "nothing written: %v", sets)
	}
}

// Every refusal of the plan (plan.Decide) is exit 2 before any work,
// naming the key: config validation and the solver ask the same function.
func TestPlanRefusalsBeforeTheRun(t *testing.T) {
	material := `material=[{region = "box", lo = [0.25, 0.25], hi = [0.5, 0.5], k = 10}]`
	for _, c := range []struct {
		sets []string
		key  string
	}{
		{[]string{"grid.ghost=2", material}, "grid.ghost"},
		{[]string{"equation.kind=poisson", "multigrid.smoother=rbgs", material}, "multigrid.smoother"},
		{[]string{"equation.scheme=backward-euler", "equation.dt=0.001", "multigrid.smoother=rbgs", material}, "multigrid.smoother"},
		{[]string{"equation.scheme=backward-euler", "equation.dt=0.001", "equation.solver=jacobi"}, "equation.solver"},
		{[]string{"equation.solver=mgcg"}, "equation.solver"},
		{[]string{"equation.kind=poisson", "grid.ghost=2"}, "grid.ghost"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		args := []string{"run", "-q", "--set", "grid.shape=[32,32]", "--steps", "4", "--out", out}
		for _, s := range c.sets {
			args = append(args, "--set", s)
		}
		code, _, stderr := heat(t, args...)
		require.Equal(t, 2, code, "%v: %s", c.sets, stderr)
		require.Contains(t, stderr, c.key, c.sets)
		require.NoDirExists(t, out, "nothing written: %v", c.sets)
	}
}

// A run whose solve fails (exit 1) leaves a report that says how far the
// solver got: its block, with the failing implicit step's residual after
// each cycle (before, "solver" was null and steps 0).
func TestFailedSolveReportsItsSolver(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := heat(t, "run", "-q", "--set", "grid.shape=[32,32]", "--set", "equation.scheme=backward-euler",
		"--set", "equation.dt=0.01", "--set", "multigrid.max_cycles=2", "--ranks", "2", "--steps", "3", "--out", out)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, "did not reach the backward error")
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	require.NoError(t, err)
	var rep struct {
		Status   string
		Residual float64
		Solver   *struct {
			Kind        string
			Cycles      int
			StepHistory []float64 `json:"step_history"`
		}
	}
	require.NoError(t, json.Unmarshal(data, &rep))
	require.Equal(t, "failed", rep.Status)
	require.NotNil(t, rep.Solver, "the failed run's solver block")
	require.Equal(t, "multigrid", rep.Solver.Kind)
	require.Equal(t, 2, rep.Solver.Cycles)
	require.Len(t, rep.Solver.StepHistory, 2, "the failing step's residual after each cycle")
	require.Equal(t, rep.Residual, rep.Solver.StepHistory[1])
	require.Greater(t, rep.Residual, 1e-10)
}
