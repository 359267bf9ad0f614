package run

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"heat/checkpoint"
	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
	"heat/io/config"
	"heat/io/report"
)

// saveNPY writes vals (C order, shape) as a little-endian .npy of descr
// "<f8" or "<f4", with the header snapshots write.
func saveNPY(t *testing.T, path, descr string, shape []int, vals []float64) {
	t.Helper()
	b := npyHeader(descr, shape[0], shape[1])
	for _, v := range vals {
		if descr == "<f4" {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
		} else {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// oddField is a field whose every value has bits of its own (no two
// alike, none a round number), C order over shape.
func oddField(shape []int) []float64 {
	n := 1
	for _, s := range shape {
		n *= s
	}
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = 300 + 20*math.Sin(0.37*float64(i)+1/(1+float64(i)))
	}
	return vals
}

// checkpointU reads the field u of the checkpoint ck whole, C order (by
// the checkpoint package's own verified reader, on one rank).
func checkpointU(t *testing.T, ck *checkpoint.Checkpoint) []float64 {
	t.Helper()
	shape := ck.Shape()
	g, err := decomp.New(shape, 1, nil, nil)
	require.NoError(t, err)
	lay := decomp.NewLayout(g.Box(0), 0)
	u := make([]float64, lay.Len())
	require.NoError(t, local.Run(1, func(c comm.Comm) error {
		return checkpoint.Read(c, ck, g, lay, u, checkpoint.Options{})
	}))
	return u
}

// stepZero runs args for no step, with the final (step-0) checkpoint, and
// returns that checkpoint's field and the run's field.sha256.
func stepZero(t *testing.T, args ...string) ([]float64, string) {
	t.Helper()
	_, ck, rep := finalCheckpoint(t, append(args, "--steps", "0")...)
	require.Equal(t, 0, ck.Meta().Step)
	return checkpointU(t, ck), rep.Field.SHA256
}

// requireBits fails unless got and want hold the same float64 bits.
func requireBits(t *testing.T, want, got []float64, format string, args ...any) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s: cell %d is %v (%016x), want %v (%016x)", fmt.Sprintf(format, args...), i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

// An initial field from a .npy: the step-0 checkpoint holds exactly the
// file's values, bit for bit, on any rank count, explicit and implicit
// (the multigrid solver's own field), float64 and float32 (widened).
func TestInitialFromNPYIsTheFileBitForBit(t *testing.T) {
	shape := []int{24, 20}
	dir := t.TempDir()
	vals := oddField(shape)
	f8, f4 := filepath.Join(dir, "u8.npy"), filepath.Join(dir, "u4.npy")
	saveNPY(t, f8, "<f8", shape, vals)
	saveNPY(t, f4, "<f4", shape, vals)
	widened := make([]float64, len(vals))
	for i, v := range vals {
		widened[i] = float64(float32(v))
	}
	problem := []string{"--set", "grid.shape=[24,20]", "--set", "initial.kind=file"}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"explicit, 1 rank", []string{"--ranks", "1"}},
		{"explicit, 3 ranks", []string{"--ranks", "3"}},
		{"crank-nicolson, 4 ranks", []string{"--ranks", "4", "--set", "equation.scheme=crank-nicolson", "--set", "equation.dt=0.001"}},
	} {
		got, _ := stepZero(t, append(append(problem, "--set", "initial.path="+f8), c.args...)...)
		requireBits(t, vals, got, "%s, float64", c.name)
		got, _ = stepZero(t, append(append(problem, "--set", "initial.path="+f4), c.args...)...)
		requireBits(t, widened, got, "%s, float32", c.name)
	}
}

// A run started from another run's checkpoint (initial.path = that run's
// checkpoints/latest) on another rank count: its field at step 0 is the
// checkpointed field, bit for bit — so a run of no steps reports the
// first run's field.sha256 — whether the path names the latest file, the
// checkpoints folder, the run's output folder or the step folder; and
// what it runs from there has the same bits on every split.
func TestInitialFromAnotherRunsCheckpoint(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "first")
	rep, err := runWith(t, "", "--set", "grid.shape=[40,28]", "--set", "initial.kind=random", "--steps", "25", "--ranks", "2",
		"--set", "checkpoint.final=true", "--out", first)
	require.NoError(t, err)
	path, err := CheckpointPath(first)
	require.NoError(t, err)
	ck, err := checkpoint.Open(path)
	require.NoError(t, err)
	want := checkpointU(t, ck)

	problem := []string{"--set", "grid.shape=[40,28]", "--set", "initial.kind=file", "--set", "boundary.x_lo.kind=neumann"}
	for _, p := range []struct{ from, ranks string }{
		{filepath.Join(first, "checkpoints", "latest"), "3"},
		{filepath.Join(first, "checkpoints"), "4"},
		{first, "1"},
		{path, "5"},
	} {
		got, sha := stepZero(t, append(problem, "--set", "initial.path="+p.from, "--ranks", p.ranks)...)
		requireBits(t, want, got, "from %s on %s ranks", p.from, p.ranks)
		require.Equal(t, rep.Field.SHA256, sha, "from %s on %s ranks", p.from, p.ranks)
	}
	var sha string
	for _, ranks := range []string{"1", "3"} {
		r, err := runWith(t, "", append(problem, "--set", "initial.path="+filepath.Join(first, "checkpoints", "latest"),
			"--ranks", ranks, "--steps", "10", "--out", filepath.Join(dir, "second-"+ranks))...)
		require.NoError(t, err)
		if sha == "" {
			sha = r.Field.SHA256
		}
		require.Equal(t, sha, r.Field.SHA256, "10 steps from the checkpoint on %s ranks", ranks)
	}
}

// An initial field and a source given as formulas are the formulas at
// the cell centres (x the last axis), t = 0 for the initial field.
func TestInitialAndSourceFormulas(t *testing.T) {
	shape := []int{12, 16}
	got, _ := stepZero(t, "--set", "grid.shape=[12,16]", "--set", "grid.length=[1.5,2.0]", "--ranks", "3",
		"--set", "initial.kind=expr", "--set", `initial.expr="x + 10*y + 100*t + 1"`)
	for i := range shape[0] {
		for j := range shape[1] {
			y, x := (float64(i)+0.5)*1.5/12, (float64(j)+0.5)*2.0/16
			require.Equal(t, x+10*y+1, got[i*shape[1]+j], "cell [%d %d]", i, j)
		}
	}
	// A source that switches on at t = 0.1 against the same source given
	// from the start and a run that holds off: the heater's run differs
	// from neither until it switches.
	base := []string{"--set", "grid.shape=[16,16]", "--set", "equation.dt=0.01", "--set", "equation.scheme=backward-euler",
		"--set", "initial.kind=constant", "--set", "initial.value=0", "--set", "source.kind=expr"}
	run := func(expr string, steps int) string {
		r, err := runWith(t, "", append(base, "--set", "source.expr="+expr, "--steps", fmt.Sprint(steps), "--ranks", "2",
			"--out", filepath.Join(t.TempDir(), "o"))...)
		require.NoError(t, err)
		return r.Field.SHA256
	}
	off := run(`"0*x"`, 10)
	require.Equal(t, off, run(`"t < 0.105 ? 0 : 1e3*x"`, 10), "before t = 0.1 the heater is off")
	require.NotEqual(t, off, run(`"t < 0.095 ? 0 : 1e3*x"`, 10), "from t = 0.1 it heats")
}

// Bad formulas and files: a formula that does not parse (its column), an
// unknown variable, a missing file, a wrong shape and a value that is not
// finite (its cell and value) exit 2; a formula that is not finite at a
// point exits 1, naming the key, the point and the step.
func TestInitialAndSourceRefusals(t *testing.T) {
	dir := t.TempDir()
	shape := []int{8, 6}
	good, small, bad := filepath.Join(dir, "good.npy"), filepath.Join(dir, "small.npy"), filepath.Join(dir, "bad.npy")
	saveNPY(t, good, "<f8", shape, oddField(shape))
	saveNPY(t, small, "<f8", []int{8, 5}, oddField([]int{8, 5}))
	vals := oddField(shape)
	vals[4*6+2] = math.NaN()
	vals[6*6+1] = math.Inf(1)
	saveNPY(t, bad, "<f8", shape, vals)
	base := []string{"--set", "grid.shape=[8,6]", "--steps", "3"}
	for _, c := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"does not parse", []string{"--set", "initial.kind=expr", "--set", `initial.expr="1 + (x"`}, 2,
			[]string{"initial.expr: column 6: unexpected token EOF"}},
		{"unknown variable", []string{"--set", "source.kind=expr", "--set", `source.expr="1e3*exp(-r2)"`}, 2,
			[]string{"source.expr: column 10: unknown name r2"}},
		{"missing file", []string{"--set", "initial.kind=file", "--set", "initial.path=" + filepath.Join(dir, "gone.npy")}, 2,
			[]string{"initial.path: " + filepath.Join(dir, "gone.npy") + ": no such file or folder"}},
		{"missing checkpoint", []string{"--set", "initial.kind=file", "--set", "initial.path=" + filepath.Join(dir, "run", "checkpoints", "latest")}, 2,
			[]string{"initial.path: ", filepath.Join(dir, "run", "checkpoints")}},
		{"wrong shape", []string{"--set", "initial.kind=file", "--set", "initial.path=" + small}, 2,
			[]string{"initial.path: " + small + " has shape [8 5], the grid is [8 6]"}},
		{"not finite in the file", []string{"--set", "initial.kind=file", "--set", "initial.path=" + bad, "--ranks", "4"}, 2,
			[]string{"initial.path: " + bad + ": cell [4 2] is nan (a field's values must be finite)"}},
		{"initial not finite at a point", []string{"--set", "initial.kind=expr", "--set", `initial.expr="sqrt(x - 0.5)"`, "--ranks", "3"}, 1,
			[]string{`initial.expr = "sqrt(x - 0.5)" is nan at (x, y) = (0.0833333`, "cell [0 0], at step 0"}},
		{"source not finite from t = 0.02", []string{"--set", "equation.dt=0.01", "--set", "equation.scheme=backward-euler",
			"--set", "source.kind=expr", "--set", `source.expr="t < 0.015 ? 1 : log(y - 0.5)"`, "--ranks", "2"}, 1,
			[]string{`source.expr = "t < 0.015 ? 1 : log(y - 0.5)" is nan at (x, y) = (0.0833333`, ", 0.0625), cell [0 0], at t = 0.02, in step 2"}},
		{"split source: its factor of space not finite", []string{"--set", "source.kind=expr", "--set", `source.expr="sin(t)*log(y - 0.5)"`, "--ranks", "2"}, 1,
			[]string{`source.expr = "sin(t)*log(y - 0.5)" is nan at (x, y) = (0.0833333`, ", 0.0625), cell [0 0], at t = 0, in step 1"}},
		{"split source: its factor of t not finite", []string{"--set", "equation.dt=0.005", "--set", "source.kind=expr",
			"--set", `source.expr="(t < 0.007 ? 1 : log(-t))*x"`, "--ranks", "2"}, 1,
			[]string{`source.expr = "(t < 0.007 ? 1 : log(-t))*x" is nan at (x, y) = (0.0833333`, "at t = 0.01, in step 3"}},
		{"source not finite, no t", []string{"--set", "source.kind=expr", "--set", `source.expr="1/(x - 0.75)"`}, 1,
			[]string{`source.expr = "1/(x - 0.75)" is inf at (x, y) = (0.75, 0.0625), cell [0 4] (the source reads no t`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
			opt := Options{Flags: config.AddFlags(fs), Quiet: true, Stdout: new(bytes.Buffer), Stderr: new(bytes.Buffer)}
			require.NoError(t, fs.Parse(append(append(base, "--out", filepath.Join(t.TempDir(), "o")), c.args...)))
			err := Run(context.Background(), opt)
			require.Error(t, err)
			require.Equal(t, c.code, ExitCode(err), "%v", err)
			for _, w := range c.want {
				require.Contains(t, err.Error(), w)
			}
			var ae AgreedError
			require.False(t, errors.As(err, &ae), "%v", err)
		})
	}
}

// BenchmarkSourceProfile is the cost a cell (ns/op) of a source formula
// as the solver calls it: the Profile of one time over a 256² box.
func BenchmarkSourceProfile(b *testing.B) {
	cfg, err := config.Load("", []string{"grid.shape=[256,256]", "source.kind=expr", `source.expr="t < 0.1 ? 0 : 1e3*exp(-((x-0.5)^2+(y-0.5)^2)/0.01)"`})
	require.NoError(b, err)
	f, err := newFormula("source.expr", cfg.Source.Expr, cfg)
	require.NoError(b, err)
	p := f.profile(0.5, 2)
	x, idx := make([]float64, 2), make([]int, 2)
	s := 0.0
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		idx[0], idx[1] = (i>>8)&255, i&255
		x[0], x[1] = (float64(idx[0])+0.5)/256, (float64(idx[1])+0.5)/256
		s += p(x, idx)
		i++
	}
	_ = s
}

// A source read from a file (source.kind = "file") is that field: all 3s
// give the bits of source.kind = "constant" with value 3; an uneven field
// has the same bits on every split, its power in the energy account is
// Σ f·V of the file, and it takes an amplitude in time; a file of the
// wrong shape is refused naming source.path.
func TestSourceFromFile(t *testing.T) {
	shape := []int{24, 20}
	dir := t.TempDir()
	three := make([]float64, 24*20)
	for i := range three {
		three[i] = 3
	}
	odd := oddField(shape)
	f3, fo := filepath.Join(dir, "three.npy"), filepath.Join(dir, "odd.npy")
	saveNPY(t, f3, "<f8", shape, three)
	saveNPY(t, fo, "<f8", shape, odd)
	problem := []string{"--set", "grid.shape=[24,20]", "--steps", "12"}
	sha := func(args ...string) *report.Report {
		r, err := runWith(t, "", append(append(problem, "--out", filepath.Join(t.TempDir(), "o")), args...)...)
		require.NoError(t, err)
		return r
	}
	want := sha("--set", "source.kind=constant", "--set", "source.value=3").Field.SHA256
	for _, ranks := range []string{"1", "3"} {
		require.Equal(t, want, sha("--set", "source.kind=file", "--set", "source.path="+f3, "--ranks", ranks).Field.SHA256, "%s ranks", ranks)
	}
	r1 := sha("--set", "source.kind=file", "--set", "source.path="+fo)
	for _, ranks := range []string{"3", "4"} {
		require.Equal(t, r1.Field.SHA256, sha("--set", "source.kind=file", "--set", "source.path="+fo, "--ranks", ranks).Field.SHA256, "%s ranks", ranks)
	}
	power := 0.0
	for _, v := range odd {
		power += v / float64(24*20)
	}
	e := r1.EnergyBalance
	require.InDelta(t, power*float64(r1.SimTime), float64(e.Source), 1e-12*math.Abs(power*float64(r1.SimTime)))
	require.Less(t, float64(e.RelativeResidual), 1e-10)
	amp := sha("--set", "source.kind=file", "--set", "source.path="+fo, "--set", `source.amplitude="2 + 0*t"`)
	require.InDelta(t, 2*float64(e.Source), float64(amp.EnergyBalance.Source), 1e-12*math.Abs(float64(e.Source)))

	small := filepath.Join(dir, "small.npy")
	saveNPY(t, small, "<f8", []int{8, 5}, oddField([]int{8, 5}))
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	opt := Options{Flags: config.AddFlags(fs), Quiet: true, Stdout: new(bytes.Buffer), Stderr: new(bytes.Buffer)}
	require.NoError(t, fs.Parse(append(append(problem, "--out", filepath.Join(t.TempDir(), "o")), "--set", "source.kind=file", "--set", "source.path="+small)))
	err := Run(context.Background(), opt)
	require.Error(t, err)
	require.Equal(t, 2, ExitCode(err))
	require.Contains(t, err.Error(), "source.path: "+small+" has shape [8 5], the grid is [24 20]")
}
