package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/run"
)

// problem is a small run used by the restart tests.
type problem struct {
	name string
	sets []string
}

var restartProblems = []problem{
	{"heat-2d", []string{"grid.shape=[37,29]", "initial.kind=random", "boundary.y_lo.value=1", "boundary.x_lo.kind=neumann"}},
	{"heat-3d", []string{"grid.shape=[9,11,10]", "initial.kind=random", "boundary.kind=periodic"}},
	{"poisson-2d", []string{"grid.shape=[31,23]", "equation.kind=poisson", "equation.solver=jacobi", "run.tolerance=1e-14", "source.kind=constant", "source.value=-1"}},
	{"poisson-3d", []string{"grid.shape=[8,9,7]", "equation.kind=poisson", "equation.solver=jacobi", "run.tolerance=1e-14", "source.kind=gaussian", "source.radius=0.2", "source.value=5", "boundary.z_hi.value=1"}},
	// Multigrid cycles slowed down (two levels, one Jacobi sweep each way) so
	// that 20 of them do not converge.
	{"poisson-multigrid", []string{"grid.shape=[32,24]", "equation.kind=poisson", "run.tolerance=1e-14", "source.kind=gaussian", "source.radius=0.2", "source.value=5",
		"boundary.x_hi.kind=neumann", "multigrid.levels=2", "multigrid.smoother=jacobi", "multigrid.pre=1", "multigrid.post=1"}},
	{"crank-nicolson-3d", []string{"grid.shape=[8,12,16]", "equation.scheme=crank-nicolson", "equation.dt=0.002", "initial.kind=random",
		"boundary.x_lo.kind=periodic", "boundary.x_hi.kind=periodic", "boundary.z_lo.value=1"}},
}

func args(p problem, extra ...string) []string {
	a := []string{"run", "-q", "--set", "run.check_every=7"}
	for _, s := range p.sets {
		a = append(a, "--set", s)
	}
	return append(a, extra...)
}

// Running N steps straight and running N/2, checkpointing, and restarting
// to N give the same bits, for writer and reader rank counts that differ
// and chunks that do not line up with the boxes.
func TestRestartReproducesStraightRun(t *testing.T) {
	const steps = 40
	pairs := [][2]int{{1, 1}, {4, 4}, {4, 3}, {2, 6}, {6, 1}}
	for _, p := range restartProblems {
		t.Run(p.name, func(t *testing.T) {
			dir := t.TempDir()
			code, _, stderr := heat(t, args(p, "--steps", fmt.Sprint(steps), "--out", filepath.Join(dir, "straight"))...)
			require.Equal(t, 0, code, stderr)
			want := readReport(t, filepath.Join(dir, "straight", "report.json"))
			chunk := "checkpoint.chunk=[5,4]"
			if strings.Contains(p.name, "3d") {
				chunk = "checkpoint.chunk=[3,4,5]"
			}
			for _, wr := range pairs {
				out := filepath.Join(dir, fmt.Sprintf("w%dr%d", wr[0], wr[1]))
				code, _, stderr = heat(t, args(p, "--steps", fmt.Sprint(steps/2), "--out", out, "--ranks", fmt.Sprint(wr[0]),
					"--set", "checkpoint.final=true", "--set", chunk)...)
				require.Equal(t, 0, code, stderr)
				code, _, stderr = heat(t, args(p, "--steps", fmt.Sprint(steps), "--out", out, "--ranks", fmt.Sprint(wr[1]),
					"--restart", "latest", "--threads", "2")...)
				require.Equal(t, 0, code, stderr)
				got := readReport(t, filepath.Join(out, "report.json"))
				require.Equal(t, want.Field.SHA256, got.Field.SHA256, "ranks %d -> %d", wr[0], wr[1])
				require.Equal(t, want.Steps, got.Steps)
				require.Equal(t, want.SimTime, got.SimTime)
				require.NotNil(t, got.Restart)
				require.Equal(t, steps/2, got.Restart.Step)
				require.Equal(t, filepath.Join(out, "checkpoints", "step-00000020"), got.Restart.Path)
				// The energy account and the cycles carry across the restart:
				// the balance is the straight run's, from step 0.
				if eb := want.EnergyBalance; eb != nil {
					gb := got.EnergyBalance
					require.NotNil(t, gb)
					require.Equal(t, eb.ContentStart, gb.ContentStart, "content at step 0")
					require.Equal(t, eb.ContentEnd, gb.ContentEnd)
					require.Equal(t, eb.Source, gb.Source, "the source's integral goes on bit for bit")
					require.InDelta(t, float64(eb.Inflow), float64(gb.Inflow), 1e-12*max(1, math.Abs(float64(eb.Inflow))))
					require.LessOrEqual(t, float64(gb.RelativeResidual), max(1e-11, 10*float64(eb.RelativeResidual)), "the restarted balance closes")
				}
				if want.Solver != nil {
					require.Equal(t, want.Solver.Cycles, got.Solver.Cycles)
					require.Equal(t, want.Solver.CyclesPerStep, got.Solver.CyclesPerStep)
				}
			}
		})
	}
}

// The chunk shape changes how the checkpoint is stored, never what it holds.
func TestRestartIndependentOfChunkShape(t *testing.T) {
	p := restartProblems[0]
	dir := t.TempDir()
	var want string
	for i, chunk := range []string{"[1,29]", "[37,29]", "[6,11]"} {
		out := filepath.Join(dir, fmt.Sprint(i))
		code, _, stderr := heat(t, args(p, "--steps", "10", "--out", out, "--ranks", "3", "--set", "checkpoint.final=true", "--set", "checkpoint.chunk="+chunk)...)
		require.Equal(t, 0, code, stderr)
		code, _, stderr = heat(t, args(p, "--steps", "20", "--out", out, "--ranks", "2", "--restart", "latest")...)
		require.Equal(t, 0, code, stderr)
		got := readReport(t, filepath.Join(out, "report.json")).Field.SHA256
		if i == 0 {
			want = got
		}
		require.Equal(t, want, got, "chunk %s", chunk)
	}
}

// Scheduled checkpoints: every N steps, the newest `keep` kept, and each
// reported with its size and time.
func TestScheduledCheckpointsAndKeep(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := heat(t, args(restartProblems[0], "--steps", "50", "--out", out, "--set", "checkpoint.every=10", "--set", "checkpoint.keep=2")...)
	require.Equal(t, 0, code, stderr)
	r := readReport(t, filepath.Join(out, "report.json"))
	require.Len(t, r.Checkpoints, 5)
	for i, c := range r.Checkpoints {
		require.Equal(t, 10*(i+1), c.Step)
		require.Greater(t, c.Bytes, int64(0))
	}
	entries, err := os.ReadDir(filepath.Join(out, "checkpoints"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{"step-00000040", "step-00000050", "latest", ".lock"}, names, "the two newest, latest, and the one-writer lock")
}

// SIGINT: the ranks agree on a step, write a checkpoint, exit 130 and print
// the command that continues the run; that restart, given nothing but the
// path (in every form) and another rank count, takes the run's config from
// the checkpoint and finishes with the bits of the uninterrupted run.
func TestInterruptWritesCheckpointAndRestarts(t *testing.T) {
	p := restartProblems[1]
	dir := t.TempDir()
	code, _, stderr := heat(t, args(p, "--steps", "60", "--out", filepath.Join(dir, "straight"))...)
	require.Equal(t, 0, code, stderr)
	want := readReport(t, filepath.Join(dir, "straight", "report.json"))

	out := filepath.Join(dir, "int")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(run.SignalError{Sig: os.Interrupt})
	var o, e strings.Builder
	err := cli(ctx, args(p, "--steps", "60", "--out", out, "--ranks", "3"), &o, &e)
	require.Equal(t, 130, exitCode(err), "%v", err)
	require.ErrorContains(t, err, "continue with: go run ./cmd/heat run --restart "+out)
	stopped := readReport(t, filepath.Join(out, "report.json"))
	require.Less(t, stopped.Steps, 60)
	require.Len(t, stopped.Checkpoints, 1)
	require.Equal(t, stopped.Steps, stopped.Checkpoints[0].Step)

	ckpts := filepath.Join(out, "checkpoints")
	for i, path := range []string{out, ckpts, filepath.Join(ckpts, "latest"), stopped.Checkpoints[0].Path} {
		code, _, stderr = heat(t, "run", "-q", "--restart", path, "--ranks", fmt.Sprint(1+i%3))
		require.Equal(t, 0, code, "%s: %s", path, stderr)
		got := readReport(t, filepath.Join(out, "report.json"))
		require.Equal(t, want.Field.SHA256, got.Field.SHA256, path)
		require.Equal(t, 60, got.Steps, path)
	}
	// The run is done: a restart to the same total has nothing to do.
	code, _, stderr = heat(t, "run", "-q", "--restart", out, "--steps", fmt.Sprint(stopped.Steps))
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "run.steps")
	require.Contains(t, stderr, "total step count")
}

// A damaged checkpoint is refused by name; only --restart latest falls back
// to the previous one, and says so. inspect --verify names the bad chunk.
func TestDamagedCheckpointRefusedOrFallenBackFrom(t *testing.T) {
	for _, shard := range []string{"none", "auto"} {
		t.Run("shard="+shard, func(t *testing.T) { damagedCheckpointRefusedOrFallenBackFrom(t, shard) })
	}
}

// lastChunkFile is the last chunk (or shard) file of checkpoint dir, and
// its key (c/i/j) as a path.
func lastChunkFile(t *testing.T, dir string) (file, key string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(filepath.Join(dir, "u", "c"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			file = p
		}
		return err
	}))
	require.NotEmpty(t, file, "no chunk file in %s", dir)
	key, err := filepath.Rel(filepath.Join(dir, "u"), file)
	require.NoError(t, err)
	return file, key
}

func damagedCheckpointRefusedOrFallenBackFrom(t *testing.T, shard string) {
	p := restartProblems[0]
	out := t.TempDir()
	code, _, stderr := heat(t, args(p, "--steps", "20", "--out", out, "--set", "checkpoint.every=10", "--set", "checkpoint.chunk=[10,10]", "--set", "checkpoint.shard="+shard)...)
	require.Equal(t, 0, code, stderr)
	newest := filepath.Join(out, "checkpoints", "step-00000020")
	chunk, key := lastChunkFile(t, newest)
	data, err := os.ReadFile(chunk)
	require.NoError(t, err)
	data[len(data)/2] ^= 0x40
	require.NoError(t, os.WriteFile(chunk, data, 0o644))

	code, stdout, stderr := heat(t, "inspect", newest, "--verify")
	require.Equal(t, 1, code, stdout+stderr)
	require.Contains(t, stdout+stderr, key)

	code, _, stderr = heat(t, args(p, "--steps", "30", "--out", out, "--restart", newest)...)
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, key)

	code, _, stderr = heat(t, args(p, "--steps", "30", "--out", out, "--restart", "latest")...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "step-00000010")
	r := readReport(t, filepath.Join(out, "report.json"))
	require.Equal(t, 30, r.Steps)

	// Another grid is refused.
	code, _, stderr = heat(t, args(p, "--steps", "30", "--out", out, "--restart", "latest", "--set", "grid.shape=[20,20]")...)
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "[37,29]")
	require.Contains(t, stderr, "[20,20]")
}

func TestInspectPrintsMetadata(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := heat(t, args(restartProblems[1], "--steps", "14", "--out", out, "--set", "checkpoint.final=true")...)
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr := heat(t, "inspect", filepath.Join(out, "checkpoints", "latest"), "--verify")
	require.Equal(t, 0, code, stderr)
	for _, w := range []string{"step", "14", "9x11x10", "zstd", "ratio", `"kind": "periodic"`} {
		require.Contains(t, stdout, w)
	}
	code, _, stderr = heat(t, "inspect", filepath.Join(out, "nope"))
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "nope")
}

// --restart of a run falls back past every kind of damage to its newest
// checkpoint, always with a warning naming what it passed over and why;
// inspect --verify of the folder fails when latest names a bad one.
func TestRestartFallsBackPastAnyDamage(t *testing.T) {
	for _, shard := range []string{"none", "auto"} {
		t.Run("shard="+shard, func(t *testing.T) { restartFallsBackPastAnyDamage(t, shard) })
	}
}

func restartFallsBackPastAnyDamage(t *testing.T, shard string) {
	p := restartProblems[0]
	chunk := func(t *testing.T, dir string) string { f, _ := lastChunkFile(t, dir); return f }
	group := func(dir string) string { return filepath.Join(dir, "zarr.json") }
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		from   int // the step the restart continues from
	}{
		{"chunk flipped", func(t *testing.T, dir string) { flipByte(t, chunk(t, dir)) }, 10},
		{"chunk truncated", func(t *testing.T, dir string) { truncate(t, chunk(t, dir)) }, 10},
		{"chunk deleted", func(t *testing.T, dir string) { require.NoError(t, os.Remove(chunk(t, dir))) }, 10},
		{"chunk made a directory", func(t *testing.T, dir string) {
			f := chunk(t, dir)
			require.NoError(t, os.Remove(f))
			require.NoError(t, os.Mkdir(f, 0o755))
		}, 10},
		{"metadata garbage", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(group(dir), []byte("garbage"), 0o644))
		}, 10},
		{"metadata flipped", func(t *testing.T, dir string) { flipByte(t, group(dir)) }, 10},
		{"metadata truncated", func(t *testing.T, dir string) { truncate(t, group(dir)) }, 10},
		{"metadata deleted", func(t *testing.T, dir string) { require.NoError(t, os.Remove(group(dir))) }, 10},
		{"latest garbage", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(dir), "latest"), []byte("garbage\n"), 0o644))
		}, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			code, _, stderr := heat(t, args(p, "--steps", "20", "--out", out, "--set", "checkpoint.every=10", "--set", "checkpoint.chunk=[10,10]", "--set", "checkpoint.shard="+shard)...)
			require.Equal(t, 0, code, stderr)
			newest := filepath.Join(out, "checkpoints", "step-00000020")
			c.damage(t, newest)

			code, stdout, stderr := heat(t, "inspect", out, "--verify")
			require.Equal(t, 1, code, "inspect --verify of the damaged folder fails: %s%s", stdout, stderr)

			code, _, stderr = heat(t, "run", "-q", "--restart", out, "--steps", "30")
			require.Equal(t, 0, code, stderr)
			r := readReport(t, filepath.Join(out, "report.json"))
			require.Equal(t, c.from, r.Restart.Step)
			require.Equal(t, 30, r.Steps)
			require.Contains(t, stderr, "level=WARN")
			if c.from == 20 {
				require.Contains(t, stderr, "latest")
			} else {
				require.Contains(t, stderr, "step-00000020", "the warning names the checkpoint passed over")
			}
		})
	}
}

func flipByte(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	b[len(b)/2] ^= 0x10
	require.NoError(t, os.WriteFile(file, b, 0o644))
}

func truncate(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, b[:len(b)/2], 0o644))
}

// Sharded checkpoints — by default (auto: shards shaped like the boxes,
// uneven ones too) and with a shape given: one file per writer, and a
// restart on another rank count gives the straight run's bits; the
// restart writes its own checkpoints a file per its writers.
func TestShardedCheckpointOneFilePerWriter(t *testing.T) {
	dir := t.TempDir()
	problem := []string{"--set", "grid.shape=[41,30]", "--set", "initial.kind=random"}
	code, _, stderr := heat(t, append([]string{"run", "-q", "--steps", "20", "--out", filepath.Join(dir, "straight")}, problem...)...)
	require.Equal(t, 0, code, stderr)
	want := readReport(t, filepath.Join(dir, "straight", "report.json")).Field.SHA256
	files := func(ckpt string) int {
		n := 0
		require.NoError(t, filepath.Walk(filepath.Join(ckpt, "u", "c"), func(_ string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() {
				n++
			}
			return err
		}))
		return n
	}
	for _, c := range []struct {
		name  string
		shard []string
	}{
		{"auto", nil},
		{"shape", []string{"--set", "checkpoint.shard=[21,15]", "--set", "checkpoint.chunk=[7,5]"}},
	} {
		out := filepath.Join(dir, c.name)
		code, _, stderr = heat(t, append(append([]string{"run", "-q", "--steps", "10", "--out", out, "--ranks", "4", "--dims", "2x2",
			"--set", "checkpoint.final=true"}, c.shard...), problem...)...)
		require.Equal(t, 0, code, stderr)
		require.Equal(t, 4, files(filepath.Join(out, "checkpoints", "step-00000010")), "%s: one shard file per writer", c.name)
		code, _, stderr = heat(t, "run", "-q", "--restart", out, "--steps", "20", "--ranks", "3")
		require.Equal(t, 0, code, stderr)
		require.Equal(t, want, readReport(t, filepath.Join(out, "report.json")).Field.SHA256, c.name)
		code, stdout, stderr := heat(t, "inspect", out, "--verify")
		require.Equal(t, 0, code, stdout+stderr)
		if c.shard == nil {
			require.Equal(t, 3, files(filepath.Join(out, "checkpoints", "step-00000020")), "the 3-rank restart's checkpoint: a file per its writers")
		}
	}
}
