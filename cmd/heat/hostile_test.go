package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A checkpoint folder that someone else can write to: what stands in place
// of latest, a zarr.json, a chunk or a checkpoint folder may be a FIFO, a
// directory, a link out of the folder or a file of gigabytes. heat run
// --restart and heat inspect refuse each at once, naming the file, and fall
// back to the newest sound checkpoint where a folder of them was named.

// With HEAT_PEAK_CHILD=1 this test binary is heat (as with
// HEAT_BENCH_CHILD), and prints its peak resident memory last, read from
// /proc/self/status (VmHWM: this process's own memory). The rusage a parent
// gets (ru_maxrss) cannot say it: Go starts a child with vfork, and Linux
// carries the parent's peak into the child's maxrss at its exec.
func init() {
	if os.Getenv("HEAT_PEAK_CHILD") != "1" {
		return
	}
	code := execute(context.Background(), os.Args[1:])
	status, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(status), "\n") {
		if kib, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Fprintf(os.Stderr, "%s %s\n", peakLine, strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kib), "kB")))
		}
	}
	os.Exit(code)
}

// peakLine starts the line of a HEAT_PEAK_CHILD's peak memory, in KiB.
const peakLine = "heat-test: peak resident KiB"

// child is the result of heat run as its own process.
type child struct {
	code    int
	out     string // stdout and stderr
	elapsed time.Duration
	peak    int64 // bytes resident at most, where /proc says (else 0)
}

// heatChild runs this test binary as heat (as asBinary does) and kills it
// after limit: a command that blocks for good fails the test instead of
// hanging it.
func heatChild(t *testing.T, limit time.Duration, args ...string) child {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), "HEAT_PEAK_CHILD=1", "GORACE=atexit_sleep_ms=0")
	start := time.Now()
	b, err := cmd.CombinedOutput()
	c := child{out: string(b), elapsed: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("heat %s: still running after %v, killed:\n%s", strings.Join(args, " "), limit, b)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		require.NoError(t, err)
	}
	c.code = cmd.ProcessState.ExitCode()
	if i := strings.LastIndex(c.out, peakLine); i >= 0 {
		var kib int64
		if _, err := fmt.Sscan(c.out[i+len(peakLine):], &kib); err == nil {
			c.peak = kib << 10
		}
	}
	return c
}

// hostileRun writes a run of 20 steps into out with checkpoints at steps
// 10 and 20 (one shard per writer, or plain chunks), and returns the
// checkpoints folder.
func hostileRun(t *testing.T, out, shard string) string {
	t.Helper()
	code, _, stderr := heat(t, args(restartProblems[0], "--steps", "20", "--out", out, "--set", "checkpoint.every=10",
		"--set", "checkpoint.chunk=[10,10]", "--set", "checkpoint.shard="+shard)...)
	require.Equal(t, 0, code, stderr)
	return filepath.Join(out, "checkpoints")
}

// straightSHA is the field.sha256 of hostileRun's problem run straight
// for steps steps (in dir/straight), without checkpoints.
func straightSHA(t *testing.T, dir string, steps int) string {
	t.Helper()
	out := filepath.Join(dir, "straight")
	code, _, stderr := heat(t, args(restartProblems[0], "--steps", fmt.Sprint(steps), "--out", out)...)
	require.Equal(t, 0, code, stderr)
	return readReport(t, filepath.Join(out, "report.json")).Field.SHA256
}

// mkfifo puts a FIFO in place of path.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, os.RemoveAll(path))
	require.NoError(t, syscall.Mkfifo(path, 0o644))
}

const fifoText = "is a named pipe (FIFO), not a regular file"

// A FIFO in place of a checkpoint's zarr.json, its u/zarr.json or a chunk
// (shard) file: heat run --restart and heat inspect of that checkpoint
// return within 2 s, naming the file — exit 2, or 1 for inspect --verify,
// which exits 1 for every bad file it finds — and a restart of the run's
// folder falls back to the checkpoint before, saying why.
func TestFIFOInCheckpointRefusedAtOnce(t *testing.T) {
	for _, shard := range []string{"none", "auto"} {
		for _, target := range []string{"zarr.json", "u/zarr.json", "chunk"} {
			t.Run(shard+"/"+target, func(t *testing.T) {
				out := t.TempDir()
				ckpts := hostileRun(t, out, shard)
				step := filepath.Join(ckpts, "step-00000020")
				file := filepath.Join(step, filepath.FromSlash(target))
				if target == "chunk" {
					file, _ = lastChunkFile(t, step)
				}
				chunk := target == "chunk"
				mkfifo(t, file)
				named := file + " " + fifoText
				type want struct {
					args []string
					code int
				}
				cases := []want{
					{[]string{"run", "-q", "--restart", step, "--steps", "30"}, 2},
					{[]string{"inspect", step, "--verify"}, 1},
				}
				if !chunk {
					cases = append(cases, want{[]string{"inspect", step}, 2}) // (a chunk is not read without --verify)
				}
				for _, c := range cases {
					r := heatChild(t, 20*time.Second, c.args...)
					require.Less(t, r.elapsed, 2*time.Second, "%v: %s", c.args, r.out)
					require.Equal(t, c.code, r.code, "%v: %s", c.args, r.out)
					require.Contains(t, r.out, named, c.args)
					require.NotContains(t, r.out, "goroutine ")
				}
				// The folder, on two ranks (a shard read in parts): the
				// checkpoint before, with a warning naming the file (and, but
				// for a chunk another rank read, what it is).
				r := heatChild(t, 60*time.Second, "run", "-q", "--restart", out, "--steps", "30", "--ranks", "2")
				require.Equal(t, 0, r.code, r.out)
				require.Contains(t, r.out, "level=WARN")
				if chunk {
					require.Contains(t, r.out, file)
				} else {
					require.Contains(t, r.out, named)
				}
				require.Equal(t, 10, readReport(t, filepath.Join(out, "report.json")).Restart.Step)
			})
		}
	}
}

// A FIFO in place of latest: a restart or inspect of the folder returns at
// once with the newest checkpoint and a warning naming latest and what it
// is; inspect --verify counts it as a problem (exit 1); with no checkpoint
// to fall back to, both exit 2 naming it.
func TestFIFOInPlaceOfLatest(t *testing.T) {
	out := t.TempDir()
	ckpts := hostileRun(t, out, "auto")
	latest := filepath.Join(ckpts, "latest")
	mkfifo(t, latest)
	named := latest + " " + fifoText
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"inspect", out}, 0},
		{[]string{"inspect", latest}, 0},
		{[]string{"inspect", ckpts, "--verify"}, 1},
		{[]string{"run", "-q", "--restart", out, "--steps", "25"}, 0},
		{[]string{"run", "-q", "--restart", "latest", "--out", out, "--steps", "25"}, 0},
	} {
		r := heatChild(t, 20*time.Second, c.args...)
		require.Equal(t, c.code, r.code, "%v: %s", c.args, r.out)
		require.Contains(t, r.out, named, c.args)
		if c.args[0] == "inspect" {
			require.Less(t, r.elapsed, 2*time.Second, "%v: %s", c.args, r.out)
			require.Contains(t, r.out, "step-00000020", c.args)
		}
	}
	require.Equal(t, 20, readReport(t, filepath.Join(out, "report.json")).Restart.Step)

	for _, s := range []string{"step-00000010", "step-00000020"} {
		require.NoError(t, os.RemoveAll(filepath.Join(ckpts, s)))
	}
	for _, a := range [][]string{{"inspect", out}, {"run", "-q", "--restart", ckpts, "--steps", "25"}} {
		r := heatChild(t, 20*time.Second, a...)
		require.Less(t, r.elapsed, 2*time.Second, "%v: %s", a, r.out)
		require.Equal(t, 2, r.code, "%v: %s", a, r.out)
		require.Contains(t, r.out, named, a)
	}
}

// A 2 GiB sparse file in place of latest is refused by its size: inspect
// takes well under a second and some tens of MiB, not the 6 GB and half a
// minute of reading it.
func TestHugeLatestRefusedUnread(t *testing.T) {
	out := t.TempDir()
	ckpts := hostileRun(t, out, "auto")
	latest := filepath.Join(ckpts, "latest")
	f, err := os.Create(latest)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(2<<30))
	require.NoError(t, f.Close())
	r := heatChild(t, 60*time.Second, "inspect", out)
	require.Equal(t, 0, r.code, r.out)
	require.Less(t, r.elapsed, time.Second)
	if _, err := os.Stat("/proc/self/status"); err == nil {
		require.NotZero(t, r.peak, r.out)
		require.Less(t, r.peak, int64(64<<20), "peak resident memory")
	}
	require.Contains(t, r.out, latest+" is 2147483648 bytes, more than the 4096")
	require.Contains(t, r.out, "step-00000020")
}

// latest missing, a dangling link or a directory: --restart of the output
// folder, of the checkpoints folder and --restart latest each continue
// from the newest checkpoint, with a warning saying why latest was passed
// over, and end with the bits of the uninterrupted run; inspect shows that
// checkpoint.
func TestRestartWithoutLatest(t *testing.T) {
	dir := t.TempDir()
	// 25 steps: the restarts write no checkpoint of their own.
	want := straightSHA(t, dir, 25)
	for _, c := range []struct {
		name, why string
		breakIt   func(latest string)
	}{
		{"missing", "is missing", func(latest string) { require.NoError(t, os.Remove(latest)) }},
		{"dangling", "is a symbolic link, not a regular file", func(latest string) {
			require.NoError(t, os.Remove(latest))
			require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere"), latest))
		}},
		{"directory", "is a directory, not a regular file", func(latest string) {
			require.NoError(t, os.Remove(latest))
			require.NoError(t, os.Mkdir(latest, 0o755))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.name)
			ckpts := hostileRun(t, out, "auto")
			latest := filepath.Join(ckpts, "latest")
			c.breakIt(latest)
			for _, restart := range [][]string{{"--restart", out}, {"--restart", ckpts}, {"--restart", "latest", "--out", out}} {
				code, _, stderr := heat(t, append([]string{"run", "-q", "--steps", "25"}, restart...)...)
				require.Equal(t, 0, code, "%v: %s", restart, stderr)
				require.Contains(t, stderr, "level=WARN", restart)
				require.Contains(t, stderr, latest+" "+c.why, restart)
				r := readReport(t, filepath.Join(out, "report.json"))
				require.Equal(t, 20, r.Restart.Step, restart)
				require.Equal(t, want, r.Field.SHA256, restart)
			}
			code, stdout, stderr := heat(t, "inspect", out)
			require.Equal(t, 0, code, stderr)
			require.Contains(t, stdout, "step-00000020")
			require.Contains(t, stderr, latest+" "+c.why)
		})
	}
}

// A link in place of latest, to a file outside the folder: it is not
// followed — what it points to would name the older checkpoint, and the
// newest is taken — and neither its target nor what that holds shows in
// any message.
func TestLatestLinkNotFollowed(t *testing.T) {
	for _, holds := range []string{"step-00000010\n", "secret-outside-content\n"} {
		out := t.TempDir()
		ckpts := hostileRun(t, out, "auto")
		latest := filepath.Join(ckpts, "latest")
		target := filepath.Join(t.TempDir(), "outside-target")
		require.NoError(t, os.WriteFile(target, []byte(holds), 0o644))
		require.NoError(t, os.Remove(latest))
		require.NoError(t, os.Symlink(target, latest))
		code, _, stderr := heat(t, "run", "-q", "--restart", out, "--steps", "25")
		require.Equal(t, 0, code, stderr)
		require.Contains(t, stderr, latest+" is a symbolic link, not a regular file")
		require.Equal(t, 20, readReport(t, filepath.Join(out, "report.json")).Restart.Step, "latest's link not followed to step 10")
		code, stdout, stderr2 := heat(t, "inspect", out, "--verify")
		require.Equal(t, 1, code, stdout+stderr2)
		for _, s := range []string{stderr, stdout, stderr2} {
			require.NotContains(t, s, target)
			require.NotContains(t, s, "outside")
		}
	}
}

// A checkpoint folder that is a link to a checkpoint outside the folder —
// latest names it — is not taken: the restart continues from the one
// before, with a warning that names the link but not where it points.
func TestCheckpointLinkNotFollowed(t *testing.T) {
	dir := t.TempDir()
	want := straightSHA(t, dir, 19)

	out := filepath.Join(dir, "run")
	ckpts := hostileRun(t, out, "auto")
	step := filepath.Join(ckpts, "step-00000020")
	elsewhere := filepath.Join(dir, "elsewhere")
	require.NoError(t, os.Mkdir(elsewhere, 0o755))
	require.NoError(t, os.Rename(step, filepath.Join(elsewhere, "step-00000020")))
	require.NoError(t, os.Symlink(filepath.Join(elsewhere, "step-00000020"), step))

	code, stdout, stderr := heat(t, "inspect", out)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "step-00000010")
	// 19 steps: the restart writes no checkpoint (its step 20 would meet the link).
	code, _, stderr = heat(t, "run", "-q", "--restart", out, "--steps", "19")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, step+" is a symbolic link, not a checkpoint folder: not followed")
	require.NotContains(t, stderr, elsewhere)
	r := readReport(t, filepath.Join(out, "report.json"))
	require.Equal(t, 10, r.Restart.Step)
	require.Equal(t, want, r.Field.SHA256)
}

// An output folder's report.json is read (to find a checkpoint.dir put
// elsewhere) only as a regular file of bounded size: a FIFO there is
// refused at once, naming it.
func TestReportFIFORefusedAtOnce(t *testing.T) {
	out, ckdir := t.TempDir(), filepath.Join(t.TempDir(), "ck")
	code, _, stderr := heat(t, args(restartProblems[0], "--steps", "10", "--out", out, "--set", "checkpoint.final=true",
		"--set", fmt.Sprintf("checkpoint.dir=%q", ckdir))...)
	require.Equal(t, 0, code, stderr)
	code, stdout, stderr := heat(t, "inspect", out)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, filepath.Join(ckdir, "step-00000010"), "found through the report")
	report := filepath.Join(out, "report.json")
	mkfifo(t, report)
	r := heatChild(t, 20*time.Second, "inspect", out)
	require.Less(t, r.elapsed, 2*time.Second, r.out)
	require.Equal(t, 2, r.code, r.out)
	require.Contains(t, r.out, report+" "+fifoText)
}

// A copied output folder is its own: with the run's folders relative (to
// where it ran), inspect and --restart of the copy take the copy's
// checkpoints, not the original's.
func TestCopiedOutputFolderKeepsItsCheckpoints(t *testing.T) {
	t.Chdir(t.TempDir())
	code, _, stderr := heat(t, args(restartProblems[0], "--steps", "20", "--out", "a", "--set", "checkpoint.every=10")...)
	require.Equal(t, 0, code, stderr)
	require.NoError(t, os.CopyFS("b", os.DirFS("a")))
	require.NoError(t, os.RemoveAll(filepath.Join("a", "checkpoints", "step-00000020")))
	code, stdout, stderr := heat(t, "inspect", "b")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, filepath.Join("b", "checkpoints", "step-00000020"))
}
