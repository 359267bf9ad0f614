package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"heat/run"
)

// asBinary runs this test binary as the heat command, in its own process:
// a crash would show as a Go stack trace and another exit code.
func asBinary(t *testing.T, args ...string) (code int, output string) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "HEAT_BENCH_CHILD=1", "GORACE=atexit_sleep_ms=0")
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		require.NoError(t, err)
	}
	return cmd.ProcessState.ExitCode(), string(b)
}

// Impossible runs fail at once, exit 2, naming the figure or the path,
// before any field is allocated or step taken; the binary prints no Go
// stack trace.
func TestImpossibleRunsFailBeforeTheWork(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--set", "grid.shape=[200000,200000]"}, []string{"needs about", "GiB", "available"}},
		{[]string{"--set", "grid.shape=[4000,4000,4000]", "--ranks", "8"}, []string{"needs about", "available"}},
		{[]string{"--report", "/proc/r.json"}, []string{"--report /proc/r.json", "not writable"}},
		{[]string{"--out", "/proc/heat-out"}, []string{"output folder", "/proc/heat-out", "not writable"}},
		{[]string{"--set", `checkpoint.dir="/proc/ck"`, "--set", "checkpoint.every=5"}, []string{"checkpoint folder", "/proc/ck"}},
	} {
		start := time.Now()
		args := append([]string{"run", "-q", "--steps", "100000", "--out", filepath.Join(dir, "out")}, c.args...)
		code, stderr := asBinary(t, args...)
		require.Equal(t, 2, code, "%v: %s", c.args, stderr)
		for _, w := range c.want {
			require.Contains(t, stderr, w, "%v", c.args)
		}
		require.NotContains(t, stderr, "goroutine ")
		require.Less(t, time.Since(start), 5*time.Second, "%v: refused before the work", c.args)
	}
}

// A new run into a folder that holds another run's results is refused
// unless --overwrite, which removes them; a restart continues in place.
func TestOutputFolderHoldsOneRun(t *testing.T) {
	out := t.TempDir()
	base := []string{"run", "-q", "--out", out, "--set", "grid.shape=[24,24]", "--set", "output.snapshot_every=4"}
	code, _, stderr := heat(t, append(base, "--steps", "8", "--set", "checkpoint.final=true")...)
	require.Equal(t, 0, code, stderr)
	require.FileExists(t, filepath.Join(out, "snapshots", "u-00000004.png"))

	code, _, stderr = heat(t, append(base, "--steps", "6")...)
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, out)
	require.Contains(t, stderr, "--overwrite")
	require.Contains(t, stderr, "--restart")

	code, _, stderr = heat(t, "run", "-q", "--restart", out, "--steps", "12")
	require.Equal(t, 0, code, "a restart continues in place: %s", stderr)
	require.FileExists(t, filepath.Join(out, "snapshots", "u-00000012.png"))

	code, _, stderr = heat(t, append(base, "--steps", "6", "--overwrite", "--set", "output.snapshot_every=3")...)
	require.Equal(t, 0, code, stderr)
	require.NoFileExists(t, filepath.Join(out, "snapshots", "u-00000004.png"), "the previous run's snapshots are gone")
	require.FileExists(t, filepath.Join(out, "snapshots", "u-00000003.png"))
	require.NoDirExists(t, filepath.Join(out, "checkpoints"))
	require.Equal(t, 6, readReport(t, filepath.Join(out, "report.json")).Steps)
}

// A run refused because its output folder holds what it did not write —
// another program's report.json, a link or a FIFO planted under a name it
// writes — leaves the folder as it was: no lock file, no manifest, no
// folder it made.
func TestRefusedRunLeavesTheFolderAsItWas(t *testing.T) {
	target := filepath.Join(t.TempDir(), "precious")
	require.NoError(t, os.WriteFile(target, []byte("mine"), 0o644))
	for _, plant := range []func(dir string) error{
		func(dir string) error { return os.WriteFile(filepath.Join(dir, "report.json"), []byte("{}"), 0o644) },
		func(dir string) error { return os.Symlink(target, filepath.Join(dir, "report.json")) },
		func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, "diagnostics.csv"), 0o644) },
	} {
		dir := t.TempDir()
		require.NoError(t, plant(dir))
		listing := func() []string {
			names, err := filepath.Glob(filepath.Join(dir, "*")) // dot files too
			require.NoError(t, err)
			return names
		}
		before := listing()
		code, _, stderr := heat(t, "run", "-q", "--out", dir, "--steps", "2", "--set", "grid.shape=[16,16]")
		require.Equal(t, 2, code, stderr)
		require.Contains(t, stderr, "--overwrite")
		require.Equal(t, before, listing(), "the refused run left its folder as it was")
	}
	// Refused after it took the folder (--report names a link): an empty
	// folder stays empty, and folders the run made for itself — the
	// output folder, its parent, its checkpoint folder — are gone.
	report := filepath.Join(t.TempDir(), "r.json")
	require.NoError(t, os.Symlink(target, report))
	empty := t.TempDir()
	code, _, stderr := heat(t, "run", "-q", "--out", empty, "--steps", "2", "--set", "grid.shape=[16,16]", "--report", report)
	require.Equal(t, 2, code, stderr)
	names, err := os.ReadDir(empty)
	require.NoError(t, err)
	require.Empty(t, names)
	parent := filepath.Join(t.TempDir(), "new")
	code, _, stderr = heat(t, "run", "-q", "--out", filepath.Join(parent, "out"), "--steps", "2", "--set", "grid.shape=[16,16]",
		"--set", "checkpoint.final=true", "--report", report)
	require.Equal(t, 2, code, stderr)
	require.NoDirExists(t, parent)

	data, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "mine", string(data))
}

// --dry-run prints the resolved config, the split and the memory, and
// runs nothing.
func TestDryRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := heat(t, "run", "--dry-run", "--out", out, "--ranks", "4", "--set", "grid.shape=[64,48]")
	require.Equal(t, 0, code, stderr)
	for _, w := range []string{"nothing is run", "4 rank(s) as 2x2", "memory", "[grid]", "shape = [64, 48]", "rank 3"} {
		require.Contains(t, stdout, w)
	}
	require.NoDirExists(t, out, "a dry run writes nothing")
}

// --dry-run names the method the plan picks: in media, plain cycles that
// hand over to mgcg (Poisson and each implicit step), and mgcg after full
// multigrid, saying why where equation.solver names another.
func TestDryRunNamesThePlannedMethod(t *testing.T) {
	material := `material=[{region = "box", lo = [0.25, 0.25], hi = [0.5, 0.5], k = 100.0}]`
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"equation.kind=poisson"}, "poisson 32x32: multigrid, at most"},
		{[]string{"equation.kind=poisson", material}, "poisson 32x32: multigrid cycles, each solve handing over to mgcg where its cycles reduce the backward error less than 5x a cycle"},
		{[]string{"equation.kind=poisson", "equation.solver=mgcg"}, "poisson 32x32: mgcg, at most"},
		{[]string{"equation.kind=poisson", "multigrid.cycle=fmg", material}, "poisson 32x32: one full-multigrid cycle, then mgcg ("},
		{[]string{"equation.scheme=backward-euler", "equation.dt=0.01", material}, "each step solved by multigrid cycles, each solve handing over to mgcg"},
		{[]string{"equation.scheme=backward-euler", "equation.dt=0.01", "equation.solver=mgcg", material}, "each step solved by mgcg"},
		{[]string{"equation.kind=poisson", "multigrid.cycle=fmg", material}, "full multigrid's solve goes on by mgcg"},
		{[]string{"equation.scheme=backward-euler", "equation.dt=0.01"}, "each step solved by multigrid"},
	} {
		args := []string{"run", "--dry-run", "--set", "grid.shape=[32,32]"}
		for _, s := range c.sets {
			args = append(args, "--set", s)
		}
		code, stdout, stderr := heat(t, args...)
		require.Equal(t, 0, code, stderr)
		require.Contains(t, stdout, c.want, c.sets)
	}
}

// The memory estimate is within 20% of the peak of the memory a 2D and a
// 3D run take from the OS: resident memory (VmHWM) in a plain build, the Go
// runtime's own count (MemStats.Sys) under the race detector, whose
// shadow memory is no part of heat's.
func TestMemoryEstimateMatchesPeak(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	for _, sets := range [][]string{
		{"grid.shape=[1536,1536]", "parallel.threads=2"},
		{"grid.shape=[128,128,128]", "parallel.ranks=2"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		args := []string{"run", "-q", "--steps", "10", "--out", out}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), "HEAT_BENCH_CHILD=1", "GORACE=atexit_sleep_ms=0")
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, string(b))
		r := readReport(t, filepath.Join(out, "report.json"))
		peak, what := r.PeakRSS, "peak RSS"
		if raceEnabled {
			peak, what = r.GoSys, "Go runtime's Sys"
		}
		require.Positive(t, peak)
		ratio := float64(r.MemoryEstimate) / float64(peak)
		t.Logf("%v: estimate %.1f MB, %s %.1f MB (ratio %.2f)", sets, float64(r.MemoryEstimate)/1e6, what, float64(peak)/1e6, ratio)
		require.InDelta(t, 1, ratio, 0.2, "%v", sets)
	}
}

// Two runs on one checkpoint.dir: the second exits 2 at start, naming the
// first (pid, host); the first's checkpoints stay intact. A new run into a
// folder holding another (finished) run's checkpoints is refused too.
func TestOneWriterPerCheckpointFolder(t *testing.T) {
	dir := t.TempDir()
	shared := filepath.Join(dir, "shared-checkpoints")
	ck := []string{"--set", `checkpoint.dir="` + shared + `"`, "--set", "checkpoint.every=5", "--set", "grid.shape=[64,64]"}
	ctx, cancel := context.WithCancelCause(context.Background())
	first := make(chan error, 1)
	go func() {
		var o, e bytes.Buffer
		first <- cli(ctx, append([]string{"run", "-q", "--steps", "100000000", "--out", filepath.Join(dir, "a")}, ck...), &o, &e)
	}()
	// Wait for the first run's first checkpoint.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(shared, "latest")); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the first run wrote no checkpoint")
		time.Sleep(10 * time.Millisecond)
	}
	code, _, stderr := heat(t, append([]string{"run", "-q", "--steps", "20", "--out", filepath.Join(dir, "b")}, ck...)...)
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, fmt.Sprintf("pid %d", os.Getpid()))
	host, _ := os.Hostname()
	require.Contains(t, stderr, host)
	cancel(run.SignalError{Sig: os.Interrupt})
	require.Equal(t, 130, exitCode(<-first))

	code, stdout, stderr := heat(t, "inspect", shared, "--verify")
	require.Equal(t, 0, code, "the first run's checkpoints are intact: %s%s", stdout, stderr)

	// Finished, its checkpoints still are its own.
	code, _, stderr = heat(t, append([]string{"run", "-q", "--steps", "20", "--out", filepath.Join(dir, "c")}, ck...)...)
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "another run")
	require.Contains(t, stderr, "--restart")
}
