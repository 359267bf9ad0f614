//go:build mpi && cgo

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// These tests build heat with and without MPI and start it under mpirun, as
// a user would. They need Open MPI's mpirun on PATH (CI installs it).

var builds struct {
	once      sync.Once
	dir       string
	mpi, none string
	err       error
}

// binaries builds heat with -tags mpi and without, once per test binary.
func binaries(t *testing.T) (withMPI, without string) {
	t.Helper()
	builds.once.Do(func() {
		builds.dir, builds.err = os.MkdirTemp("", "heat-mpi-test")
		if builds.err != nil {
			return
		}
		builds.mpi = filepath.Join(builds.dir, "heat-mpi")
		builds.none = filepath.Join(builds.dir, "heat")
		for _, b := range [][]string{{"-tags", "mpi", "-o", builds.mpi}, {"-o", builds.none}} {
			out, err := exec.Command("go", append([]string{"build"}, append(b, ".")...)...).CombinedOutput()
			if err != nil {
				builds.err = fmt.Errorf("go build %v: %v\n%s", b, err, out)
				return
			}
		}
	})
	require.NoError(t, builds.err)
	return builds.mpi, builds.none
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
	}
	os.Exit(code)
}

// mpirun starts heat under mpirun with np ranks (mpirun's own MPMD form
// when args holds ":") and returns its exit code and output.
func mpirun(t *testing.T, np int, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "mpirun", append([]string{"-np", strconv.Itoa(np), "--oversubscribe", bin}, args...)...)
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_rmaps_base_oversubscribe=1")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("mpirun: %v\n%s", err, e.String())
	}
	return code, o.String(), e.String()
}

// Under MPI the fingerprint is the in-process run's, for 2D and 3D, heat
// and Poisson, on 1 to 4 ranks with several process grids and threads.
func TestMPIBitForBit(t *testing.T) {
	bin, _ := binaries(t)
	// 10⁶ checkerboards off the coarse lines: 12-cell tiles (the grid
	// levels down to 48², the algebraic cycle on it, gathered onto rank
	// 0), 16-cell tiles shifted by 2 (mgcg on the grid levels switches to
	// it).
	maps := t.TempDir()
	tiles := func(name string, n, size, shift int) string {
		path := filepath.Join(maps, name)
		writeMap(t, path, n, n, func(y, x int) float64 {
			if ((y+shift)/size+(x+shift)/size)%2 == 1 {
				return 1e6
			}
			return 1
		})
		return path
	}
	cases := []struct {
		name string
		args []string
	}{
		{"2d-heat", []string{"--set", "grid.shape=[64,48]", "--steps", "30", "--set", "initial.kind=\"random\""}},
		{"3d-heat", []string{"--set", "grid.shape=[14,16,18]", "--steps", "20", "--set", "initial.kind=\"random\""}},
		{"2d-poisson", []string{"-c", "../../configs/poisson-2d.toml", "--set", "grid.shape=[40,40]", "--steps", "400", "--set", "run.check_every=25"}},
		{"3d-poisson", []string{"-c", "../../configs/poisson-2d.toml", "--set", "grid.shape=[12,14,10]", "--set", "grid.length=[1,1,1]",
			"--set", "source.mode=[1,1,1]", "--steps", "300", "--set", "run.check_every=20"}},
		{"2d-poisson-jacobi", []string{"-c", "../../configs/poisson-2d.toml", "--set", "grid.shape=[40,40]", "--set", "equation.solver=jacobi",
			"--set", "run.tolerance=1e-8", "--steps", "400", "--set", "run.check_every=25"}},
		{"3d-poisson-fmg-rbgs", []string{"-c", "../../configs/poisson-3d.toml", "--set", "grid.shape=[16,24,32]", "--set", "multigrid.cycle=fmg",
			"--set", "multigrid.smoother=rbgs"}},
		// Coarse levels agglomerated stage by stage onto fewer ranks.
		{"2d-poisson-agglomerated", []string{"-c", "../../configs/poisson-2d.toml", "--set", "grid.shape=[64,96]",
			"--set", "multigrid.agglomerate_below=16", "--set", "multigrid.gather_cells=32"}},
		{"3d-crank-nicolson", []string{"-c", "../../configs/implicit-heat-2d.toml", "--set", "grid.shape=[16,16,24]", "--set", "initial.mode=[1,1,1]",
			"--set", "run.t_end=0.0035", "--set", "boundary.x_lo.value=1"}},
		{"3d-heat-blocked", []string{"--set", "grid.shape=[16,14,12]", "--steps", "21", "--set", "grid.ghost=3", "--set", "initial.kind=\"random\""}},
		{"2d-media-algebraic-level", []string{"-c", "../../configs/poisson-2d.toml", "--set", "grid.shape=[96,96]", "--set", "maps.k=" + tiles("t12.npy", 96, 12, 0)}},
		{"2d-media-algebraic-switch", []string{"-c", "../../configs/poisson-2d.toml", "--set", "grid.shape=[64,64]", "--set", "maps.k=" + tiles("s2.npy", 64, 16, 2)}},
	}
	splits := []struct {
		np      int
		threads string
		dims    string
	}{{1, "2", ""}, {2, "1", ""}, {3, "2", ""}, {4, "1", ""}, {4, "1", "1x4"}, {2, "2", "2x1"}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := append([]string{"run", "-q", "--set", "output.formats=[]", "--set", "output.diagnostics_every=0"}, c.args...)
			want := t.TempDir()
			code, _, stderr := heat(t, append(base, "--out", want, "--ranks", "1", "--threads", "1")...)
			require.Equal(t, 0, code, stderr)
			ref := readReport(t, filepath.Join(want, "report.json"))
			for _, sp := range splits {
				dims := sp.dims
				if dims != "" && len(c.name) > 1 && c.name[0] == '3' {
					dims += "x1"
				}
				out := t.TempDir()
				args := append(base, "--out", out, "--threads", sp.threads)
				if dims != "" {
					args = append(args, "--dims", dims)
				}
				code, _, stderr := mpirun(t, sp.np, bin, args...)
				require.Equal(t, 0, code, "np %d %+v: %s", sp.np, sp, stderr)
				got := readReport(t, filepath.Join(out, "report.json"))
				require.Equal(t, ref.Field.SHA256, got.Field.SHA256, "np %d threads %s dims %q", sp.np, sp.threads, dims)
				require.Equal(t, ref.Steps, got.Steps)
				require.Equal(t, "mpi", got.Transport)
				require.Contains(t, got.MPILibrary, "MPI")
				require.Equal(t, sp.np, got.Ranks)
				require.Len(t, got.PerRank, sp.np)
				for r, pr := range got.PerRank {
					require.Equal(t, r, pr.Rank)
					require.NotEmpty(t, pr.Host)
				}
			}
		})
	}
}

// A checkpoint written in-process restarts under MPI on another rank count,
// and the reverse, to the bits of the uninterrupted run.
func TestMPICheckpointAcrossTransports(t *testing.T) {
	bin, _ := binaries(t)
	base := []string{"run", "-q", "--set", "grid.shape=[36,30]", "--set", "initial.kind=\"random\"",
		"--set", "output.formats=[]", "--set", "output.diagnostics_every=0"}
	whole := t.TempDir()
	code, _, stderr := heat(t, append(base, "--steps", "24", "--out", whole)...)
	require.Equal(t, 0, code, stderr)
	want := readReport(t, filepath.Join(whole, "report.json")).Field.SHA256

	// In-process on 3 ranks to step 12, then MPI on 2 ranks to the end.
	out := t.TempDir()
	code, _, stderr = heat(t, append(base, "--steps", "12", "--ranks", "3", "--out", out, "--set", "checkpoint.final=true")...)
	require.Equal(t, 0, code, stderr)
	code, _, stderr = mpirun(t, 2, bin, append(base, "--steps", "24", "--out", out, "--restart", "latest")...)
	require.Equal(t, 0, code, stderr)
	got := readReport(t, filepath.Join(out, "report.json"))
	require.Equal(t, want, got.Field.SHA256)
	require.Equal(t, 12, got.Restart.Step)

	// MPI on 4 ranks to step 12, then in-process on 2 ranks.
	out = t.TempDir()
	code, _, stderr = mpirun(t, 4, bin, append(base, "--steps", "12", "--out", out, "--set", "checkpoint.final=true")...)
	require.Equal(t, 0, code, stderr)
	// Four ranks on one host: one writer for the node, one shard file.
	shards, err := filepath.Glob(filepath.Join(out, "checkpoints", "step-00000012", "u", "c", "*", "*"))
	require.NoError(t, err)
	require.Len(t, shards, 1, "checkpoint.shard = auto under MPI: a file per node")
	code, _, stderr = heat(t, append(base, "--steps", "24", "--ranks", "2", "--out", out, "--restart", "latest")...)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, want, readReport(t, filepath.Join(out, "report.json")).Field.SHA256)
}

// A rank that fails alone ends the whole job within seconds, with one
// message that names the rank and the cause.
func TestMPIFailureOnOneRank(t *testing.T) {
	bin, _ := binaries(t)
	// Rank 0 cannot write the PNG of step 10 (a directory has its name)
	// while the other ranks go on stepping: rank 0 gives up waiting for them
	// and aborts the job.
	out := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(out, "snapshots", "u-00000010.png", "x"), 0o755))
	start := time.Now()
	code, _, stderr := mpirun(t, 3, bin, "run", "-q", "--set", "grid.shape=[128,128]", "--steps", "100000",
		"--set", "output.snapshot_every=10", "--set", `output.formats=["png"]`, "--out", out)
	require.NotEqual(t, 0, code, stderr)
	require.Less(t, time.Since(start), 60*time.Second)
	require.Contains(t, stderr, "rank 0 of 3")
	require.Contains(t, stderr, "u-00000010.png")

	// Ranks 1 and 2 get a bad config (mpirun's MPMD form): the lowest of
	// them names the key; every rank exits 2 without running.
	out = t.TempDir()
	good := []string{"run", "-q", "--steps", "5", "--out", out}
	args := append(append(good[:len(good):len(good)], ":", "-np", "2", "--oversubscribe", bin), append(good, "--set", "grid.shape=[-4,8]")...)
	code, _, stderr = mpirun(t, 1, bin, args...)
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "rank 1 of 3")
	require.Contains(t, stderr, "grid.shape")
	require.NotContains(t, stderr, "rank 2 of 3")
}

// The launcher and the binary must agree: a binary without MPI refuses to
// be one of several ranks, and an explicit rank count must match mpirun's.
func TestMPILauncherMismatch(t *testing.T) {
	withMPI, without := binaries(t)
	code, _, stderr := mpirun(t, 2, without, "run", "-q", "--steps", "2", "--out", t.TempDir())
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "built without MPI")
	require.Contains(t, stderr, "-tags mpi")

	code, _, stderr = mpirun(t, 2, withMPI, "run", "-q", "--steps", "2", "--ranks", "3", "--out", t.TempDir())
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "3 conflicts with the 2 ranks of the MPI world")

	// A launcher that claims 4 ranks where MPI sees 1: another MPI's mpirun.
	cmd := exec.Command(withMPI, "run", "-q", "--steps", "2", "--out", t.TempDir())
	cmd.Env = append(os.Environ(), "PMI_SIZE=4")
	msg, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(msg), "launcher started 4")
}

// SIGTERM to mpirun (what a batch system sends before the time limit)
// reaches every rank: they agree to stop, write a checkpoint and end; a
// restart on another rank count continues to the uninterrupted bits.
func TestMPISignalCheckpointsAndRestarts(t *testing.T) {
	bin, _ := binaries(t)
	base := []string{"run", "-q", "--set", "grid.shape=[256,256]", "--set", "initial.kind=\"random\"",
		"--set", "output.formats=[]", "--set", "output.diagnostics_every=0", "--set", "run.check_every=10"}
	out := t.TempDir()
	cmd := exec.Command("mpirun", append([]string{"-np", "2", "--oversubscribe", bin}, append(base, "--steps", "100000000", "--out", out)...)...)
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	var e bytes.Buffer
	cmd.Stderr = &e
	require.NoError(t, cmd.Start())
	time.Sleep(3 * time.Second)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.Error(t, err, "a stopped run does not exit 0")
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("mpirun did not stop within 60 s of SIGTERM:\n%s", e.String())
	}
	require.Contains(t, e.String(), "stopped by SIGTERM", e.String())
	stopped := readReport(t, filepath.Join(out, "report.json"))
	require.Len(t, stopped.Checkpoints, 1)
	require.Greater(t, stopped.Steps, 0)
	// The report has heat's code. Open MPI's mpirun itself exits 1 once it
	// is signalled, whatever its ranks exit with (TestMPISignalledRanksExit143
	// signals the ranks instead).
	require.Equal(t, "interrupted", stopped.Status)
	require.Equal(t, 143, stopped.ExitCode)

	target := strconv.Itoa(stopped.Steps + 15)
	code, _, stderr := mpirun(t, 3, bin, append(base, "--steps", target, "--out", out, "--restart", "latest")...)
	require.Equal(t, 0, code, stderr)
	// The straight run with the plain build, not in this -race test
	// binary: its length is whatever the MPI run reached in 3 s, which the
	// race detector would make 10–20 times that.
	whole := t.TempDir()
	_, plain := binaries(t)
	b, err := exec.Command(plain, append(base, "--steps", target, "--out", whole)...).CombinedOutput()
	require.NoError(t, err, "%s", b)
	require.Equal(t, readReport(t, filepath.Join(whole, "report.json")).Field.SHA256, readReport(t, filepath.Join(out, "report.json")).Field.SHA256)
}

// lockedBuffer is a bytes.Buffer that a test reads while a process writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// mpiJob is heat under mpirun, started for a test to signal while it runs.
type mpiJob struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan error
}

// launch starts heat under mpirun with np ranks; the test's end kills
// what is left of it.
func launch(t *testing.T, np int, bin string, args ...string) *mpiJob {
	t.Helper()
	j := &mpiJob{stderr: &lockedBuffer{}, done: make(chan error, 1)}
	j.cmd = exec.Command("mpirun", append([]string{"-np", strconv.Itoa(np), "--oversubscribe", bin}, args...)...)
	j.cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	j.cmd.Stderr = j.stderr
	require.NoError(t, j.cmd.Start())
	go func() { j.done <- j.cmd.Wait() }()
	t.Cleanup(func() {
		for _, pid := range j.ranks() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		j.cmd.Process.Kill()
	})
	return j
}

// waitFor waits until the job's stderr holds s.
func (j *mpiJob) waitFor(t *testing.T, s string, within time.Duration) {
	t.Helper()
	for end := time.Now().Add(within); !strings.Contains(j.stderr.String(), s); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no %q on stderr within %v:\n%s", s, within, j.stderr.String())
		}
	}
}

// ranks are the pids of the job's ranks by rank (mpirun's children, each
// with its OMPI_COMM_WORLD_RANK).
func (j *mpiJob) ranks() map[int]int {
	out, _ := exec.Command("pgrep", "-P", strconv.Itoa(j.cmd.Process.Pid)).Output()
	pids := map[int]int{}
	for _, f := range strings.Fields(string(out)) {
		pid, _ := strconv.Atoi(f)
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(env), "\x00") {
			if v, ok := strings.CutPrefix(kv, "OMPI_COMM_WORLD_RANK="); ok {
				r, _ := strconv.Atoi(v)
				pids[r] = pid
			}
		}
	}
	return pids
}

// wait waits for mpirun to end and returns its exit code.
func (j *mpiJob) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case err := <-j.done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("mpirun: %v", err)
		}
		return j.cmd.ProcessState.ExitCode()
	case <-time.After(within):
		t.Fatalf("mpirun did not end within %v:\n%s", within, j.stderr.String())
	}
	return -1
}

// cpuSeconds is the CPU time process pid has used (utime + stime).
func cpuSeconds(t *testing.T, pid int) float64 {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	// The fields after the command name's closing parenthesis: state is
	// field 3, utime 14 and stime 15, in clock ticks (100 a second).
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return float64(ut+st) / 100
}

// stepping starts a run on 3 ranks that steps until stopped, printing
// progress every 0.2 s, and returns it once it steps, with its ranks' pids.
func stepping(t *testing.T, bin, out string, extra ...string) (*mpiJob, map[int]int) {
	t.Helper()
	j := launch(t, 3, bin, append([]string{"run", "--set", "grid.shape=[96,96]", "--steps", "1000000000", "--set", "output.formats=[]",
		"--set", "output.diagnostics_every=0", "--set", "output.progress_every=0.2", "--out", out}, extra...)...)
	j.waitFor(t, "msg=progress step=", time.Minute)
	pids := j.ranks()
	require.Len(t, pids, 3)
	return j, pids
}

// A rank that stops (SIGSTOP) ends the job within parallel.timeout and a
// few seconds: the others wait without spinning, give up, and the lowest
// rank that answers names the stopped one and the step, writes the report
// (failed, exit code 1) and aborts the job, whose exit code is then 1.
func TestMPIFrozenRankEndsTheJob(t *testing.T) {
	bin, _ := binaries(t)
	const timeout = 3 * time.Second
	for _, stopped := range []int{2, 0} {
		t.Run(fmt.Sprintf("rank-%d", stopped), func(t *testing.T) {
			out := t.TempDir()
			j, pids := stepping(t, bin, out, "--set", "parallel.timeout=3")
			require.NoError(t, syscall.Kill(pids[stopped], syscall.SIGSTOP))
			stop := time.Now()
			// The others wait for it: after a moment, they sleep.
			time.Sleep(500 * time.Millisecond)
			cpu := map[int]float64{}
			for r, pid := range pids {
				if r != stopped {
					cpu[r] = cpuSeconds(t, pid)
				}
			}
			time.Sleep(2 * time.Second)
			for r := range cpu {
				used := cpuSeconds(t, pids[r]) - cpu[r]
				require.Less(t, used, 0.5, "rank %d used %.2f s of CPU in 2 s of waiting for rank %d", r, used, stopped)
			}
			code := j.wait(t, timeout+time.Minute)
			took := time.Since(stop)
			stderr := j.stderr.String()
			require.Equal(t, 1, code, stderr)
			require.Less(t, took, timeout+7*time.Second, stderr)
			reporter := 0
			if stopped == 0 {
				reporter = 1
			}
			require.Regexp(t, fmt.Sprintf(`heat: rank %d of 3 \(.*\): communication stalled at step \d+ \(parallel.timeout = 3 s\): rank %d did not answer`, reporter, stopped), stderr)
			// The others wait where the stopped rank left them: in the halo
			// exchange with it, or in a reduction (the progress and residual
			// checks) when it stopped just before one.
			require.Regexp(t, fmt.Sprintf(`waited \d+\.\d s in (Waitall for rank %d \(halo|Allreduce)`, stopped), stderr)
			rep := readReport(t, filepath.Join(out, "report.json"))
			require.Equal(t, "failed", rep.Status)
			require.Equal(t, 1, rep.ExitCode)
			require.Contains(t, rep.StopReason, fmt.Sprintf("rank %d did not answer", stopped))
			require.Greater(t, rep.Steps, 0)
		})
	}
}

// A rank killed with SIGKILL: mpirun sees it die, sends the others SIGTERM
// and kills them a second later. They cannot agree to stop without it, so
// their waits give up quickly, and the lowest of them writes the report
// (failed, naming the dead rank) before mpirun kills it; mpirun's exit code
// is the dead rank's (137).
func TestMPIKilledRankLeavesAReport(t *testing.T) {
	bin, _ := binaries(t)
	out := t.TempDir()
	j, pids := stepping(t, bin, out)
	require.NoError(t, syscall.Kill(pids[1], syscall.SIGKILL))
	code := j.wait(t, 30*time.Second)
	stderr := j.stderr.String()
	require.NotEqual(t, 0, code, stderr)
	t.Logf("mpirun exited %d", code)
	rep := readReport(t, filepath.Join(out, "report.json"))
	require.Equal(t, "failed", rep.Status, stderr)
	require.Regexp(t, `communication stalled while stopping on SIGTERM at step \d+ .*: rank 1 did not answer`, rep.StopReason)
}

// SIGTERM to every rank (what a batch system's time limit sends every
// process of the job) stops the run with a checkpoint, and mpirun exits
// with the ranks' code, 143, the report's.
func TestMPISignalledRanksExit143(t *testing.T) {
	bin, _ := binaries(t)
	out := t.TempDir()
	j, pids := stepping(t, bin, out)
	for _, pid := range pids {
		require.NoError(t, syscall.Kill(pid, syscall.SIGTERM))
	}
	code := j.wait(t, time.Minute)
	stderr := j.stderr.String()
	require.Equal(t, 143, code, stderr)
	require.Contains(t, stderr, "stopped by SIGTERM")
	rep := readReport(t, filepath.Join(out, "report.json"))
	require.Equal(t, "interrupted", rep.Status)
	require.Equal(t, 143, rep.ExitCode)
	require.Len(t, rep.Checkpoints, 1)
}

// A medium with nothing to solve is refused on every rank alike (exit 2),
// and rank 0's report parses; before, the steps ran with dt = +Inf, rank 0
// exited 1 on a report it could not write and another rank 0.
func TestMPIMediaRefusedOnEveryRank(t *testing.T) {
	bin, _ := binaries(t)
	out := t.TempDir()
	code, _, stderr := mpirun(t, 2, bin, "run", "-q", "--set", "grid.shape=[16,12]", "--out", out,
		"--set", `material=[{region = "box", lo = [0.0, 0.0], hi = [1.0, 1.0], k = 0.0}]`)
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "no free conducting cell")
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	require.NoError(t, err)
	require.Contains(t, string(data), `"exit_code": 2`)
}
