package benchmarks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"heat/internal/csvtest"
	"heat/io/report"
)

// With HEAT_FAKE_HEAT=1 this test binary is a fake heat: `run` writes a
// report with timings from fakeTimes, `bench pingpong --json` prints an
// exact α–β line. HEAT_FAKE_WORLD plays the launcher's rank count when
// --ranks is absent; HEAT_FAKE_FAIL=R makes runs on R ranks fail.
func init() {
	if os.Getenv("HEAT_FAKE_HEAT") == "1" {
		os.Exit(fakeHeat(os.Args[1:]))
	}
}

const fakeAlpha, fakeBeta = 5e-6, 1e-9

func fakeHeat(args []string) int {
	if len(args) >= 2 && args[0] == "bench" && args[1] == "pingpong" {
		nr := NetworkResult{Transport: "fake", Network: Network{Alpha: fakeAlpha, Beta: fakeBeta}}
		for _, b := range PingPongSizes() {
			nr.Samples = append(nr.Samples, PingPongSample{Bytes: b, OneWayS: fakeAlpha + float64(b)*fakeBeta})
		}
		json.NewEncoder(os.Stdout).Encode(nr)
		return 0
	}
	if len(args) == 0 || args[0] != "run" {
		fmt.Fprintf(os.Stderr, "fake heat: unexpected %q\n", args)
		return 2
	}
	out, ranks, threads, shape, sets := "", 0, 1, []int{64, 64}, []string{}
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "--out":
			i++
			out = args[i]
		case "--ranks":
			i++
			ranks, _ = strconv.Atoi(args[i])
		case "--threads":
			i++
			threads, _ = strconv.Atoi(args[i])
		case "--set":
			i++
			sets = append(sets, args[i])
			if v, ok := strings.CutPrefix(args[i], "grid.shape="); ok {
				shape = nil
				for _, f := range strings.Split(strings.Trim(v, "[]"), ",") {
					n, _ := strconv.Atoi(f)
					shape = append(shape, n)
				}
			}
		}
	}
	if ranks == 0 {
		ranks, _ = strconv.Atoi(os.Getenv("HEAT_FAKE_WORLD"))
		ranks = max(ranks, 1)
	}
	if os.Getenv("HEAT_FAKE_FAIL") == strconv.Itoa(ranks) {
		fmt.Fprintln(os.Stderr, "heat: run failed: diverged at step 7 (last good checkpoint: none)")
		return 1
	}
	rep, _ := strconv.Atoi(out[strings.LastIndex(out, "rep")+3:])
	r := fakeReport(ranks, threads, rep, shape)
	r.Config = map[string]any{"grid": map[string]any{"shape": shape}, "sets": sets}
	// As heat does: the output folder first (report.Write makes none).
	if err := os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := report.Write(filepath.Join(out, "report.json"), r); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// fakeSteps and fakeTCell drive fakeReport: compute is cells·steps·t_cell
// over the cores, the last rank of several 20% slower, plus 1 ms of halo
// wait per extra rank and 10 ms of other; repetition k takes 1 + (k−1)/10
// times as long.
const fakeSteps, fakeTCell = 100, 1e-8

func fakeReport(ranks, threads, rep int, shape []int) *report.Report {
	cores, cells := ranks*threads, cellsOf(shape)
	f := 1 + float64(rep-1)/10
	compute := float64(cells) * fakeSteps * fakeTCell / float64(cores) * f
	halo := 1e-3 * float64(ranks-1)
	slow := 1.0
	if ranks > 1 {
		slow = 1.2
	}
	r := &report.Report{Transport: "local", Ranks: ranks, Threads: threads, Dims: []int{ranks, 1}, Steps: fakeSteps,
		WallS: compute*slow + halo + 0.01, Checkpoints: []report.Checkpoint{}}
	for k := range ranks {
		c := compute
		if k == ranks-1 {
			c *= slow
		}
		r.PerRank = append(r.PerRank, report.Rank{Rank: k, Host: "fakehost", Shape: []int{shape[0] / ranks, shape[1]},
			ComputeS: c, HaloWaitS: halo, ReduceS: 1e-4, MessagesSent: int64(2 * fakeSteps * min(ranks-1, 1)),
			BytesSent: int64(16 * shape[1] * fakeSteps * min(ranks-1, 1)), Collectives: 10})
	}
	r.MUpdatesPS = report.Float(float64(cells) * fakeSteps / r.WallS / 1e6)
	return r
}

// fakeStep is fakeReport's wall time per step.
func fakeStep(ranks, threads, rep int, shape []int) float64 {
	return fakeReport(ranks, threads, rep, shape).WallS / fakeSteps
}

func fakeOptions(t *testing.T, kind Kind, points ...Resources) StudyOptions {
	return StudyOptions{Kind: kind, Points: points, Reps: 1, Shape: []int{64, 64}, Steps: fakeSteps,
		RunArgs: []string{"--set", "run.steps=100"}, Transport: "local", Exec: []string{os.Args[0]},
		Env: []string{"HEAT_FAKE_HEAT=1", "GORACE=atexit_sleep_ms=0"}, Out: t.TempDir(), PredictMax: 64,
		Command: []string{"heat", "bench", string(kind)}, Version: "test"}
}

// requirePNG checks that path is a PNG larger than 100×100 and returns
// its size.
func requirePNG(t *testing.T, path string) image.Config {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	require.NoError(t, err, path)
	require.Greater(t, cfg.Width, 100, path)
	require.Greater(t, cfg.Height, 100, path)
	return cfg
}

func TestStrongStudyWithAFakeHeat(t *testing.T) {
	o := fakeOptions(t, Strong, Resources{1, 1}, Resources{2, 1}, Resources{2, 2})
	o.Reps, o.Model = 2, true
	o.Target = &Network{Alpha: 1.5e-6, Beta: 1 / 12e9}
	var prog bytes.Buffer
	o.Progress = &prog
	st, err := RunStudy(context.Background(), o)
	require.NoError(t, err)

	// Every point × repetition, in rounds, with the user's arguments after
	// the study's output switches, --ranks under the local transport.
	require.Len(t, st.Runs, 6)
	first := st.Runs[0]
	require.Equal(t, []string{os.Args[0], "run", "-q", "--out", filepath.Join(o.Out, "runs", "r1-t1-rep1"), "--ranks", "1",
		"--threads", "1", "--set", "output.formats=[]", "--set", "output.diagnostics_every=0", "--set", "run.steps=100"}, first.Command)
	require.Contains(t, prog.String(), "bench strong: point 2/3 (ranks 2 × threads 1) rep 1/2, run 2/6, ETA ")
	require.Contains(t, prog.String(), "bench strong: point 1/3 (ranks 1 × threads 1) rep 1/2, run 1/6\n")
	require.Contains(t, prog.String(), "bench strong: point 3/3 (ranks 2 × threads 2) rep 2/2, run 6/6, ETA ")

	// Figures: medians over repetitions 1 and 2, speedups against 1 × 1.
	shape := []int{64, 64}
	require.Len(t, st.Points, 3)
	med := func(r, th int) float64 { return (fakeStep(r, th, 1, shape) + fakeStep(r, th, 2, shape)) / 2 }
	for i, p := range st.Points {
		require.InDelta(t, med(p.Ranks, p.Threads), p.StepMedianS, 1e-15, "point %d", i+1)
		require.InDelta(t, fakeStep(p.Ranks, p.Threads, 1, shape), p.StepMinS, 1e-15)
		require.InDelta(t, fakeStep(p.Ranks, p.Threads, 2, shape), p.StepMaxS, 1e-15)
		require.InDelta(t, med(1, 1)/med(p.Ranks, p.Threads), p.Speedup, 1e-12)
		require.InDelta(t, p.Speedup/float64(p.Cores), p.Efficiency, 1e-12)
	}
	require.InDelta(t, 1.2/1.1, st.Points[2].Rep.Imbalance, 1e-12, "2 ranks, one 20% slower: max/mean = 1.2/1.1")
	require.Equal(t, 1, st.Points[2].Rep.Slowest, "the last rank is the slow one")

	// The model: the fake's α and β, t_cell from the 1 × 1 point.
	require.NotNil(t, st.Model)
	require.Equal(t, Network{Alpha: fakeAlpha, Beta: fakeBeta}, st.Model.Network)
	require.InDelta(t, fakeTCell, st.Model.TCell, 1e-20)
	require.Equal(t, 0.1, st.Model.CollectivesPerStep)
	require.Equal(t, []int{1, 2, 4}, []int{st.Predicted[0].Ranks, st.Predicted[1].Ranks, st.Predicted[2].Ranks})
	require.Len(t, st.Predicted, 7, "1 … 64 ranks")
	require.Len(t, st.TargetPredicted, 7)

	// The files.
	runs := csvtest.Read(t, filepath.Join(o.Out, "runs.csv"))
	require.Len(t, runs, 7)
	require.Equal(t, []string{"1", "1", "2", "2", "3", "3"}, csvtest.Column(t, runs, "point"), "sorted by point, then repetition")
	require.Equal(t, []string{"1", "2", "1", "2", "1", "2"}, csvtest.Column(t, runs, "rep"))
	pts := csvtest.Read(t, filepath.Join(o.Out, "points.csv"))
	require.Len(t, pts, 4)
	require.Equal(t, []string{"1", "2", "4"}, csvtest.Column(t, pts, "cores"))
	model := csvtest.Read(t, filepath.Join(o.Out, "model.csv"))
	require.Len(t, model, 15)
	require.Equal(t, "target", model[14][0])

	data, err := os.ReadFile(filepath.Join(o.Out, "runs.json"))
	require.NoError(t, err)
	var back Study
	require.NoError(t, json.Unmarshal(data, &back))
	require.Len(t, back.Runs, 6)
	require.Equal(t, o.Command, back.Record.Command)
	require.Equal(t, []string{"fakehost"}, back.Record.Hosts)
	require.Equal(t, o.Env, back.Record.Env)
	require.Positive(t, back.Record.NumCPU)
	var whole report.Report
	require.NoError(t, json.Unmarshal(back.Runs[5].Report, &whole), "each run's whole report")
	require.Len(t, whole.PerRank, 2)

	md, err := os.ReadFile(filepath.Join(o.Out, "summary.md"))
	require.NoError(t, err)
	require.Contains(t, string(md), "| 3 | 2 | 2 | 64x64 |")
	require.Contains(t, string(md), ModelFormula)
	require.Contains(t, string(md), "Target network: α = 1.5 µs")
	require.Regexp(t, regexp.MustCompile(`\| 4 \| 4 \| 64x64 \| 2x2 \|.*\|`), string(md))
	for _, p := range []string{"speedup.png", "efficiency.png", "breakdown.png", "model.png"} {
		requirePNG(t, filepath.Join(o.Out, p))
	}
}

// A weak study grows the grid with the cores and hands each run its grid
// after the user's own --set.
func TestWeakStudyGrowsTheGrid(t *testing.T) {
	o := fakeOptions(t, Weak, Resources{1, 1}, Resources{2, 1}, Resources{2, 2})
	o.Shape = []int{32, 16}
	o.RunArgs = []string{"--set", "grid.shape=[32,16]"}
	st, err := RunStudy(context.Background(), o)
	require.NoError(t, err)
	require.Len(t, st.Runs, 3)
	for i, r := range st.Runs {
		want, err := WeakShape(o.Shape, r.Cores(), nil)
		require.NoError(t, err)
		require.Equal(t, want, r.Metrics.Shape, "run %d", i)
		require.Equal(t, 512*r.Cores(), r.Metrics.Cells)
		require.Equal(t, []string{"--set", "grid.shape=" + tomlInts(want)}, r.Command[len(r.Command)-2:])
	}
	require.Equal(t, []int{64, 16}, st.Runs[1].Metrics.Shape)
	// Time per step grows with the cells per rank (2 threads) and halo: the
	// scaled speedup is the throughput ratio.
	p := st.Points[2]
	require.InDelta(t, 4*fakeStep(1, 1, 1, []int{32, 16})/p.StepMedianS, p.Speedup, 1e-12)
	require.Nil(t, st.Model)
	_, err = os.Stat(filepath.Join(o.Out, "model.png"))
	require.True(t, os.IsNotExist(err), "no model, no model plot")
	requirePNG(t, filepath.Join(o.Out, "breakdown.png"))
}

// Under the mpi transport the launcher template goes first and decides the
// ranks; heat gets no --ranks. A launcher that starts the wrong count is
// caught.
func TestStudyUnderALauncher(t *testing.T) {
	o := fakeOptions(t, Strong, Resources{1, 1}, Resources{2, 1})
	o.Transport, o.Model = "mpi", true
	o.Launcher = "env HEAT_FAKE_WORLD={ranks} HEAT_FAKE_THREADS={threads}"
	st, err := RunStudy(context.Background(), o)
	require.NoError(t, err)
	cmd := st.Runs[1].Command
	require.Equal(t, []string{"env", "HEAT_FAKE_WORLD=2", "HEAT_FAKE_THREADS=1", os.Args[0], "run"}, cmd[:5])
	require.NotContains(t, cmd, "--ranks")
	require.Equal(t, o.Launcher, st.Record.Launcher)

	o.Launcher = "env HEAT_FAKE_WORLD=1"
	o.Out = t.TempDir()
	_, err = RunStudy(context.Background(), o)
	require.ErrorContains(t, err, "point 2/2 (ranks 2 × threads 1) rep 1/1: the run had 1 ranks × 1 threads instead (check the launcher \"env HEAT_FAKE_WORLD=1\")")
}

// A failed run stops the study with the point and the run's own message;
// the runs done so far are kept.
func TestFailedPointNamesItself(t *testing.T) {
	o := fakeOptions(t, Strong, Resources{1, 1}, Resources{2, 1})
	o.Env = append(o.Env, "HEAT_FAKE_FAIL=2")
	_, err := RunStudy(context.Background(), o)
	require.ErrorContains(t, err, "point 2/2 (ranks 2 × threads 1) rep 1/1: ")
	require.ErrorContains(t, err, "exit status 1; its output ends:\nheat: run failed: diverged at step 7")
	require.Len(t, csvtest.Read(t, filepath.Join(o.Out, "runs.csv")), 2)
}

func TestStudyOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*StudyOptions)
		msg  string
	}{
		{func(o *StudyOptions) { o.Kind = "medium" }, `study kind must be "strong" or "weak", got "medium"`},
		{func(o *StudyOptions) { o.Points = nil }, "at least one point"},
		{func(o *StudyOptions) { o.Points = []Resources{{0, 1}} }, "point ranks 0 × threads 1: ranks and threads must be at least 1"},
		{func(o *StudyOptions) { o.Reps = 0 }, "repetitions must be at least 1, got 0"},
		{func(o *StudyOptions) { o.Transport = "tcp" }, `transport must be local or mpi, got "tcp"`},
		{func(o *StudyOptions) { o.Transport = "mpi" }, "the mpi transport needs a launcher"},
		{func(o *StudyOptions) { o.Model, o.PredictMax = true, 0 }, "positive maximum rank count, got 0"},
	} {
		o := fakeOptions(t, Strong, Resources{1, 1})
		tc.edit(&o)
		require.ErrorContains(t, o.Validate(), tc.msg)
	}
	o := fakeOptions(t, Strong, Resources{64, 1})
	o.Shape = []int{4, 4}
	_, err := RunStudy(context.Background(), o)
	require.ErrorContains(t, err, "point ranks 64 × threads 1: cannot split a 4x4 grid (16 cells) over 64 ranks")
}

// The ETA counts each point's last run, and the mean for points not run yet.
func TestProgressETA(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, Weak, []Resources{{1, 1}, {2, 1}}, 2)
	p.start(0, 1)
	p.done(0, 10*time.Second)
	p.start(1, 1)
	p.done(1, 20*time.Second)
	p.start(0, 2)
	require.Equal(t, "bench weak: point 1/2 (ranks 1 × threads 1) rep 1/2, run 1/4\n"+
		"bench weak: point 2/2 (ranks 2 × threads 1) rep 1/2, run 2/4, ETA 30s\n"+
		"bench weak: point 1/2 (ranks 1 × threads 1) rep 2/2, run 3/4, ETA 30s\n", b.String())
}

func TestShellJoinQuotesWhatTheShellWouldChange(t *testing.T) {
	require.Equal(t, `heat bench strong --set 'grid.shape=[64,64]' --launcher 'mpirun -np {ranks}' 'it'\''s' ''`,
		shellJoin([]string{"heat", "bench", "strong", "--set", "grid.shape=[64,64]", "--launcher", "mpirun -np {ranks}", "it's", ""}))
	require.Equal(t, "512 B", humanBytes(512))
	require.Equal(t, "1.5 KiB", humanBytes(1536))
	require.Equal(t, "8.0 MiB", humanBytes(8<<20))
}
