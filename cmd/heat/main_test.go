package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/configs"
	"heat/io/report"
	"heat/run"
	"heat/stencil"
)

// heat runs the command line in-process and returns its exit code and output.
func heat(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	err := cli(context.Background(), args, &o, &e)
	if err != nil {
		fmt.Fprintf(&e, "heat: %v\n", err)
	}
	return exitCode(err), o.String(), e.String()
}

func readReport(t *testing.T, path string) report.Report {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var r report.Report
	require.NoError(t, json.Unmarshal(data, &r))
	return r
}

func TestDefaultRunWritesReport(t *testing.T) {
	out := t.TempDir()
	extra := filepath.Join(t.TempDir(), "sub", "r.json")
	code, stdout, stderr := heat(t, "run", "--out", out, "--steps", "20", "--report", extra)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "sha256 ")
	r := readReport(t, filepath.Join(out, "report.json"))
	require.Equal(t, r, readReport(t, extra))
	require.Equal(t, "local", r.Transport)
	require.Equal(t, 20, r.Steps)
	require.Len(t, r.Field.SHA256, 64)
	require.Len(t, r.PerRank, r.Ranks)
	require.Nil(t, r.Converged)
	require.Greater(t, float64(r.SimTime), 0.0)
	require.NotNil(t, r.Checkpoints)
	cfg := r.Config.(map[string]any)
	require.Greater(t, cfg["equation"].(map[string]any)["dt"].(float64), 0.0, "the report shows the resolved dt")
}

// Every example config runs as is (shortened), and its fingerprint does not
// depend on the ranks, the process grid or the threads.
func TestExamplesBitForBitAcrossSplits(t *testing.T) {
	entries, err := configs.FS.ReadDir(".")
	require.NoError(t, err)
	splits := [][]string{
		{"--ranks", "1", "--threads", "1"},
		{"--ranks", "4", "--threads", "2"},
		{"--ranks", "3", "--threads", "3"},
		{"--ranks", "6", "--threads", "1"},
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".toml") {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, e.Name())
			data, err := configs.FS.ReadFile(e.Name())
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(file, data, 0o644))
			var want report.Report
			for i, sp := range splits {
				out := filepath.Join(dir, fmt.Sprint(i))
				args := append([]string{"run", "-c", file, "--steps", "12", "--set", "run.check_every=5", "--out", out, "-q"}, sp...)
				code, _, stderr := heat(t, args...)
				require.Equal(t, 0, code, stderr)
				r := readReport(t, filepath.Join(out, "report.json"))
				if i == 0 {
					want = r
					continue
				}
				require.Equal(t, want.Field.SHA256, r.Field.SHA256, "split %v", sp)
				require.Equal(t, want.Steps, r.Steps)
				require.Equal(t, want.Field.Mean, r.Field.Mean)
			}
		})
	}
}

// Bad input exits 2 with a message that names the key, value or file, and
// the binary prints no stack trace.
func TestBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	typo := write("typo.toml", "[grid]\nshpe = [10, 10]\n")
	wrongType := write("type.toml", "[grid]\nshape = \"big\"\n")
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"run", "-c", filepath.Join(dir, "missing.toml")}, []string{"missing.toml"}},
		{[]string{"run", "-c", typo}, []string{"typo.toml", "grid.shpe"}},
		{[]string{"run", "-c", wrongType}, []string{"type.toml", "grid.shape"}},
		{[]string{"run", "--set", "grid.shape=[-4,8]"}, []string{"grid.shape", "-4"}},
		{[]string{"run", "--ranks", "6", "--dims", "4x2"}, []string{"parallel.dims", "4x2"}},
		{[]string{"run", "--set", "grid.shape=[3,100]", "--dims", "4x1", "--ranks", "4"}, []string{"cannot split 3 cells over 4 ranks along y"}},
		{[]string{"run", "--set", "equation.dt=0.01"}, []string{"equation.dt", "stability limit"}},
		{[]string{"run", "--threads", "-1"}, []string{"parallel.threads", "-1"}},
		{[]string{"run", "--set", "nope.key=1"}, []string{"nope.key"}},
		{[]string{"run", "--set", "equation.scheme=leapfrog"}, []string{"equation.scheme", "leapfrog", "crank-nicolson"}},
		{[]string{"run", "--set", "equation.kind=poisson", "--set", "equation.solver=sor"}, []string{"equation.solver", "sor", "multigrid"}},
		{[]string{"run", "--set", "equation.scheme=crank-nicolson"}, []string{"equation.dt", "crank-nicolson"}},
		{[]string{"run", "--set", "multigrid.smoother=ilu"}, []string{"multigrid.smoother", "ilu"}},
		{[]string{"run", "--set", "equation.kind=poisson", "--set", "multigrid.levels=12"}, []string{"multigrid.levels", "12", "at most 8 levels"}},
		{[]string{"run", "--set", "equation.kind=poisson", "--set", "run.tolerance=1e-17"}, []string{"run.tolerance", "1e-17"}},
		{[]string{"run", "--set", "equation.kind=poisson", "--set", "multigrid.agglomerate_below=-2"}, []string{"multigrid.agglomerate_below", "-2"}},
		{[]string{"run", "--set", "equation.kind=poisson", "--set", "multigrid.gather_cells=-1"}, []string{"multigrid.gather_cells", "-1"}},
		{[]string{"run", "--set", "equation.kind=poisson", "--set", "grid.shape=[1023,1023]"}, []string{"grid.shape", "1023x1023", "power of two"}},
		{[]string{"run", "--set", "equation.kind=poisson", "--set", "run.t_end=1"}, []string{"run.t_end", "poisson"}},
		{[]string{"run", "--set", "equation.kind=poisson", "--set", "grid.ghost=2"}, []string{"grid.ghost", "multigrid"}},
		{[]string{"run", "--set", "equation.kind=poisson", "--set", "boundary.kind=periodic", "--set", "source.kind=constant", "--set", "source.value=1"},
			[]string{"source", "must balance the fluxes", "difference is 1"}},
		{[]string{"run", "--bogus"}, []string{"bogus"}},
		{[]string{"frobnicate"}, []string{"frobnicate"}},
	}
	for i, c := range cases {
		args := c.args
		if args[0] == "run" {
			args = append(slices.Clone(args), "--out", filepath.Join(dir, fmt.Sprint("out", i)))
		}
		code, stderr := asBinary(t, args...)
		require.Equal(t, 2, code, "%v: %s", c.args, stderr)
		for _, w := range c.want {
			require.Contains(t, stderr, w, "%v", c.args)
		}
		require.NotContains(t, stderr, "goroutine ", "no stack trace")
	}
}

func TestVersion(t *testing.T) {
	code, stdout, _ := heat(t, "version")
	require.Equal(t, 0, code)
	require.True(t, strings.HasPrefix(stdout, "heat "+run.Version))
}

// A cancelled run stops on an agreed step, still writes its report, and
// exits 130 for SIGINT.
func TestInterruptExits130(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(run.SignalError{Sig: os.Interrupt})
	out := t.TempDir()
	var o, e bytes.Buffer
	err := cli(ctx, []string{"run", "--out", out, "--ranks", "2"}, &o, &e)
	require.Equal(t, 130, exitCode(err))
	require.ErrorContains(t, err, "SIGINT")
	r := readReport(t, filepath.Join(out, "report.json"))
	require.Less(t, r.Steps, 300)
}

// HEAT_KERNEL forces a kernel set, which the report names, and every set
// gives the same bits on every example problem (a few steps or cycles of
// each: explicit, periodic, 3D, Poisson by multigrid in 2D and 3D,
// Crank–Nicolson); a set this CPU lacks, or no set at all, exits 2 naming
// the variable, the value and the sets there are.
func TestHeatKernelForcesASet(t *testing.T) {
	examples, err := filepath.Glob("../../configs/*.toml")
	require.NoError(t, err)
	require.NotEmpty(t, examples)
	// Each example's kind at a fraction of its cells: the kernels' bits
	// over sizes are the solver's tests; here the variable must choose.
	small := map[string]string{"cube-3d.toml": "[24,24,24]", "poisson-3d.toml": "[16,16,16]",
		"two-materials-2d.toml": "[64,64]", "implicit-heat-2d.toml": "[64,64]", "default.toml": "[128,128]"}
	for _, cfg := range examples {
		var sums []string
		args := []string{"run", "-q", "-c", cfg, "--steps", "6", "--set", "output.formats=[]"}
		if sh, ok := small[filepath.Base(cfg)]; ok {
			args = append(args, "--set", "grid.shape="+sh)
		}
		for _, ks := range stencil.Available() {
			t.Setenv("HEAT_KERNEL", ks.Name)
			out := t.TempDir()
			code, _, stderr := heat(t, append(args, "--out", out)...)
			require.Equal(t, 0, code, "%s: %s", cfg, stderr)
			r := readReport(t, filepath.Join(out, "report.json"))
			require.Equal(t, ks.Name, r.Build.Kernel)
			sums = append(sums, r.Field.SHA256)
		}
		for i, s := range sums {
			require.Equal(t, sums[0], s, "%s: %s against %s", cfg, stencil.Available()[i].Name, stencil.Available()[0].Name)
		}
	}
	t.Setenv("HEAT_KERNEL", "sse9")
	code, _, stderr := heat(t, "run", "-q", "--steps", "1", "--out", t.TempDir())
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "HEAT_KERNEL")
	require.Contains(t, stderr, `"sse9"`)
	require.Contains(t, stderr, "generic")
	require.NoError(t, stencil.Select(""))
}

// Every run leaves a report saying how it ended: completed, converged,
// diverged (its non-finite field statistics still valid JSON), interrupted.
func TestReportForEveryOutcome(t *testing.T) {
	type want struct {
		code           int
		status, reason string
	}
	for _, c := range []struct {
		name string
		args []string
		want
	}{
		{"completed", []string{"--steps", "5", "--set", "grid.shape=[16,16]"}, want{0, "completed", "reached run.steps = 5"}},
		{"converged", []string{"-c", "poisson-2d", "--set", "grid.shape=[32,32]"}, want{0, "converged", "below run.tolerance"}},
		{"diverged", []string{"--steps", "30", "--set", "grid.shape=[8,8]", "--set", "boundary.kind=neumann",
			"--set", "initial.kind=constant", "--set", "initial.value=1.7e308"}, want{1, "diverged", "no longer finite"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			code, _, stderr := heat(t, append([]string{"run", "-q", "--out", out}, c.args...)...)
			require.Equal(t, c.code, code, stderr)
			data, err := os.ReadFile(filepath.Join(out, "report.json"))
			require.NoError(t, err)
			require.True(t, json.Valid(data))
			r := readReport(t, filepath.Join(out, "report.json"))
			require.Equal(t, c.status, r.Status)
			require.Contains(t, r.StopReason, c.reason)
			require.Equal(t, c.code, r.ExitCode)
			require.False(t, r.StartedAt.IsZero())
			require.NotEmpty(t, r.Command)
			if c.status == "diverged" {
				require.Contains(t, string(data), `"+Inf"`)
				require.Contains(t, stderr, "no longer finite")
			}
		})
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(run.SignalError{Sig: syscall.SIGTERM})
	out := t.TempDir()
	var o, e bytes.Buffer
	err := cli(ctx, []string{"run", "-q", "--out", out, "--set", "grid.shape=[16,16]"}, &o, &e)
	require.Equal(t, 143, exitCode(err))
	r := readReport(t, filepath.Join(out, "report.json"))
	require.Equal(t, "interrupted", r.Status)
	require.Equal(t, 143, r.ExitCode)
	require.Contains(t, r.StopReason, "SIGTERM")
}
