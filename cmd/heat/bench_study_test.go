package main

import (
	"context"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/benchmarks"
	"heat/comm/mpi"
	"heat/internal/csvtest"
	"heat/io/report"
	"heat/run"
)

// With HEAT_BENCH_CHILD=1 this test binary is heat itself: a study started
// by the tests below runs each point as os.Executable() — this binary — and
// it has to answer as main would, joining the MPI job when a launcher
// started it.
func init() {
	if os.Getenv("HEAT_BENCH_CHILD") != "1" {
		return
	}
	os.Exit(execute(context.Background(), os.Args[1:]))
}

// asHeat makes the studies of a test run this binary as heat. A race build
// sleeps a second at exit by default; the children need not.
func asHeat(t *testing.T) {
	t.Setenv("HEAT_BENCH_CHILD", "1")
	t.Setenv("GORACE", os.Getenv("GORACE")+" atexit_sleep_ms=0")
}

// A short strong and weak study on a tiny grid, as a user runs them: every
// output exists and parses, with one row per point and repetition.
func TestBenchStudiesEndToEnd(t *testing.T) {
	asHeat(t)
	for _, kind := range []string{"strong", "weak"} {
		t.Run(kind, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "study")
			code, stdout, stderr := heat(t, "bench", kind, "--set", "grid.shape=[32,32]", "--steps", "20",
				"--ranks", "1,2", "--threads", "1", "--reps", "2", "--out", out, "--alpha", "1.5us", "--bandwidth", "12",
				"--predict-max", "64")
			require.Equal(t, 0, code, stderr)
			require.Contains(t, stderr, "bench "+kind+": point 2/2 (ranks 2 × threads 1) rep 2/2, run 4/4, ETA ")
			require.Contains(t, stdout, "# heat bench "+kind)
			require.Contains(t, stdout, "results: "+filepath.Join(out, "summary.md"))

			runs := csvtest.Read(t, filepath.Join(out, "runs.csv"))
			require.Len(t, runs, 1+4, "one row per point and repetition")
			require.Equal(t, []string{"1", "1", "2", "2"}, csvtest.Column(t, runs, "point"))
			require.Equal(t, []string{"1", "2", "1", "2"}, csvtest.Column(t, runs, "rep"))
			require.Equal(t, []string{"1", "1", "2", "2"}, csvtest.Column(t, runs, "ranks"))
			wantShapes := []string{"32x32", "32x32", "32x32", "32x32"}
			if kind == "weak" {
				wantShapes = []string{"32x32", "32x32", "64x32", "64x32"}
			}
			require.Equal(t, wantShapes, csvtest.Column(t, runs, "shape"))
			require.Len(t, csvtest.Read(t, filepath.Join(out, "points.csv")), 1+2)
			require.Len(t, csvtest.Read(t, filepath.Join(out, "model.csv")), 1+2*7, "measured and target, 1 … 64 ranks")

			data, err := os.ReadFile(filepath.Join(out, "runs.json"))
			require.NoError(t, err)
			var st benchmarks.Study
			require.NoError(t, json.Unmarshal(data, &st))
			require.Len(t, st.Runs, 4)
			require.Len(t, st.Points, 2)
			require.Equal(t, "bench", st.Record.Command[1])
			require.Equal(t, run.Version, st.Record.Version)
			require.Equal(t, "local", st.Network.Transport)
			require.NotNil(t, st.Model)
			require.Equal(t, 1.5e-6, st.Target.Alpha)
			var shas []string
			for _, r := range st.Runs {
				var rep report.Report
				require.NoError(t, json.Unmarshal(r.Report, &rep), "each run's whole report")
				require.Equal(t, 20, rep.Steps)
				require.Equal(t, r.Ranks, rep.Ranks)
				require.Len(t, rep.PerRank, r.Ranks)
				shas = append(shas, rep.Field.SHA256)
			}
			if kind == "strong" {
				require.Equal(t, slices.Repeat(shas[:1], 4), shas, "the same bits on any split")
			}

			md, err := os.ReadFile(filepath.Join(out, "summary.md"))
			require.NoError(t, err)
			require.Contains(t, string(md), "| 1 | 1 | 1 | 32x32 |")
			for _, name := range []string{"speedup.png", "efficiency.png", "breakdown.png", "model.png"} {
				f, err := os.Open(filepath.Join(out, name))
				require.NoError(t, err)
				_, err = png.DecodeConfig(f)
				f.Close()
				require.NoError(t, err, name)
			}
		})
	}
}

// A point whose run fails ends the study with exit 1, naming the point and
// quoting the run's own error.
func TestBenchStudyFailedPoint(t *testing.T) {
	asHeat(t)
	out := filepath.Join(t.TempDir(), "study")
	code, _, stderr := heat(t, "bench", "strong", "--set", "grid.shape=[16,16]", "--set", "initial.kind=random",
		"--set", "initial.value=1e308", "--steps", "20", "--ranks", "1", "--reps", "1", "--model=false", "--out", out)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, "heat: bench strong: point 1/1 (ranks 1 × threads 1) rep 1/1: ")
	require.Contains(t, stderr, "the solution is no longer finite")
	require.NotContains(t, stderr, "goroutine ", "no stack trace")
}

func TestBenchUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"bench"}, "bench: say which study: kernel, multigrid, pingpong, strong or weak"},
		{[]string{"bench", "medium"}, `bench: unknown study "medium"`},
		{[]string{"bench", "strong", "--reps", "0"}, "repetitions must be at least 1, got 0"},
		{[]string{"bench", "weak", "--ranks", "0"}, "--ranks and --threads must be positive (got 0 and 1)"},
		{[]string{"bench", "strong", "--transport", "tcp"}, `transport must be local or mpi, got "tcp"`},
		{[]string{"bench", "strong", "--set", "grid.shape=[4,4]", "--ranks", "64"}, "cannot split a 4x4 grid (16 cells) over 64 ranks"},
		{[]string{"bench", "weak", "--set", "parallel.dims=[1,1]"}, "parallel.dims = 1x1 fixes the process grid"},
		{[]string{"bench", "strong", "--set", "grid.shap=[4,4]"}, "grid.shap"},
		{[]string{"bench", "strong", "--beta", "1", "--bandwidth", "2"}, "give --beta or --bandwidth, not both"},
		{[]string{"bench", "strong", "--model=false", "--alpha", "1us"}, "drop --model=false"},
		{[]string{"bench", "strong", "--alpha", "-1us"}, "must be positive"},
		{[]string{"bench", "strong", "--predict-max", "0"}, "positive maximum rank count, got 0"},
		{[]string{"bench", "strong", "stray"}, `unknown command "stray" for "heat bench strong"`},
		{[]string{"bench", "strng"}, `did you mean "strong"?`},
		{[]string{"bench", "strong", "--frobnicate"}, "unknown flag: --frobnicate"},
		{[]string{"bench", "pingpong", "--sizes", "8"}, "need 2 or more --sizes"},
	}
	if !mpi.Enabled {
		cases = append(cases, struct {
			args []string
			msg  string
		}{[]string{"bench", "strong", "--transport", "mpi"}, "heat was built without MPI"})
	}
	for _, tc := range cases {
		code, _, stderr := heat(t, tc.args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		require.Contains(t, stderr, tc.msg, "%v", tc.args)
	}
	code, stdout, _ := heat(t, "bench", "weak", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "Weak scaling: the problem's grid is the base, the cells each core gets.")
}

// Under MPI (a -tags mpi build, with mpirun) every point is started by the
// launcher, which decides the ranks, and the network is measured through
// MPI.
func TestBenchStrongUnderMPI(t *testing.T) {
	if !mpi.Enabled {
		t.Skip("heat is built without MPI (-tags mpi)")
	}
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("no mpirun on PATH")
	}
	asHeat(t)
	t.Setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
	t.Setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
	t.Setenv("OMPI_MCA_rmaps_base_oversubscribe", "1")
	out := filepath.Join(t.TempDir(), "study")
	code, _, stderr := heat(t, "bench", "strong", "--transport", "mpi", "--launcher", "mpirun -np {ranks} --oversubscribe",
		"--set", "grid.shape=[32,32]", "--steps", "20", "--ranks", "1,2", "--reps", "1", "--out", out)
	require.Equal(t, 0, code, stderr)
	data, err := os.ReadFile(filepath.Join(out, "runs.json"))
	require.NoError(t, err)
	var st benchmarks.Study
	require.NoError(t, json.Unmarshal(data, &st))
	require.Equal(t, "mpi", st.Network.Transport)
	require.Len(t, st.Runs, 2)
	var shas []string
	for _, r := range st.Runs {
		require.Equal(t, []string{"mpirun", "-np", strconv.Itoa(r.Ranks), "--oversubscribe"}, r.Command[:4])
		require.NotContains(t, r.Command, "--ranks", "the launcher decides")
		var rep report.Report
		require.NoError(t, json.Unmarshal(r.Report, &rep))
		require.Equal(t, "mpi", rep.Transport)
		require.Equal(t, r.Ranks, rep.Ranks)
		shas = append(shas, rep.Field.SHA256)
	}
	require.Equal(t, shas[0], shas[1])
	require.Len(t, csvtest.Read(t, filepath.Join(out, "runs.csv")), 1+2)
}

func TestBenchPingPongPrintsAlphaBeta(t *testing.T) {
	code, stdout, stderr := heat(t, "bench", "pingpong", "--sizes", "8,1024,65536", "--time", "5ms")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "ping-pong through local, one way:")
	require.Regexp(t, `α = [0-9.e+-]+ µs, β = [0-9.e+-]+ ns/B`, stdout)

	code, stdout, stderr = heat(t, "bench", "pingpong", "--sizes", "8,1024", "--time", "5ms", "--json")
	require.Equal(t, 0, code, stderr)
	var nr benchmarks.NetworkResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &nr))
	require.Len(t, nr.Samples, 2)
	require.Equal(t, 1024, nr.Samples[1].Bytes)
}

// heat bench multigrid solves to the tolerance at every point, prints its
// cost in work units, and compares with Jacobi and with explicit steps.
func TestBenchMultigrid(t *testing.T) {
	code, stdout, stderr := heat(t, "bench", "multigrid", "--sizes", "32", "--ranks", "1,2", "--jacobi-max", "32")
	require.Equal(t, 0, code, stderr)
	var rows [][]string
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		if len(f) >= 14 && f[0] == "32" {
			rows = append(rows, f)
		}
	}
	require.Len(t, rows, 2, stdout)
	for _, f := range rows {
		res, err := strconv.ParseFloat(strings.TrimSuffix(f[7], "*"), 64)
		require.NoError(t, err)
		require.Less(t, res, 1e-10, "converged (the backward error): %v", f)
		wu, err := strconv.ParseFloat(f[8], 64)
		require.NoError(t, err)
		require.Greater(t, wu, 1.0, "a solve costs more than one explicit step: %v", f)
	}
	require.Contains(t, stdout, "jacobi at n=32")
	require.Contains(t, stdout, "crank-nicolson")
}
