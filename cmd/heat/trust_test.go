package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"heat/run"
)

// Nothing outside the run is touched: heat removes, replaces and writes
// only what it wrote for the run, holds its folders for the run's life,
// and writes a restart where the command line says.

// live is a heat run going on in a child process.
type live struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
	done     chan struct{}
}

// startHeat starts heat as a child process (the test binary, as asBinary).
func startHeat(t *testing.T, args ...string) *live {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	l := &live{cmd: exec.Command(exe, args...), done: make(chan struct{})}
	l.cmd.Env = append(os.Environ(), "HEAT_BENCH_CHILD=1", "GORACE=atexit_sleep_ms=0")
	l.cmd.Stdout, l.cmd.Stderr = &l.out, &l.err
	require.NoError(t, l.cmd.Start())
	go func() { l.cmd.Wait(); close(l.done) }()
	t.Cleanup(func() {
		select {
		case <-l.done:
		default:
			l.cmd.Process.Kill()
			<-l.done
		}
	})
	return l
}

// wait waits for the child to end and returns its exit code.
func (l *live) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-l.done:
	case <-time.After(within):
		t.Fatalf("heat did not end within %v: %s", within, l.err.String())
	}
	return l.cmd.ProcessState.ExitCode()
}

// waitFor waits until path exists (or the child ends, a failure).
func waitFor(t *testing.T, l *live, path string) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Lstat(path); err == nil {
			return
		}
		select {
		case <-l.done:
			t.Fatalf("heat ended before %s appeared: %s", path, l.err.String())
		default:
		}
	}
	t.Fatalf("%s did not appear", path)
}

// longRun is a run long enough to be caught going (a few seconds), with
// checkpoints.
func longRun(out string, extra ...string) []string {
	return append([]string{"run", "-q", "--out", out, "--set", "grid.shape=[48,48]", "--steps", "30000",
		"--set", "checkpoint.every=3000", "--set", "checkpoint.keep=0", "--set", "output.diagnostics_every=0",
		"--set", "output.formats=[]"}, extra...)
}

// A second run into the folder of a live one — with --overwrite, or a
// restart of it — is refused naming the holder, and the first run's
// checkpoints are all intact: it completes, and each one verifies.
func TestLiveRunsFolderRefused(t *testing.T) {
	out := t.TempDir()
	first := startHeat(t, longRun(out)...)
	waitFor(t, first, filepath.Join(out, "checkpoints", "latest"))
	// Held still while the others try, however fast this machine is.
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGSTOP))

	for _, second := range [][]string{
		{"run", "-q", "--out", out, "--overwrite", "--set", "grid.shape=[16,16]", "--steps", "5"},
		{"run", "-q", "--out", out, "--overwrite", "--set", "grid.shape=[16,16]", "--steps", "5", "--set", "checkpoint.every=1"},
		{"run", "-q", "--restart", out, "--steps", "40000", "--set", "checkpoint.every=0"},
		{"run", "-q", "--out", out, "--set", "grid.shape=[16,16]", "--steps", "5", "--set", "output.formats=[]"},
	} {
		code, stderr := asBinary(t, second...)
		require.Equal(t, 2, code, "%v: %s", second, stderr)
		require.Contains(t, stderr, "pid ", "%v names the holder: %s", second, stderr)
		require.Contains(t, stderr, "another run is writing there", second)
	}
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGCONT))
	require.Equal(t, 0, first.wait(t, 3*time.Minute), first.err.String())
	names, err := os.ReadDir(filepath.Join(out, "checkpoints"))
	require.NoError(t, err)
	var steps int
	for _, e := range names {
		if strings.HasPrefix(e.Name(), "step-") {
			steps++
			code, _, stderr := heat(t, "inspect", "--verify", filepath.Join(out, "checkpoints", e.Name()))
			require.Equal(t, 0, code, "%s: %s", e.Name(), stderr)
		}
	}
	require.Equal(t, 10, steps, "every checkpoint of the first run")
	r := readReport(t, filepath.Join(out, "report.json"))
	require.Equal(t, 30000, r.Steps)
	require.Equal(t, "completed", r.Status)
}

// --overwrite removes what the previous run wrote, and only that: a user's
// files in plots/, snapshots/, checkpoints/ and the folder itself survive,
// and so does another run's checkpoint. It refuses / and the home folder.
func TestOverwriteRemovesOnlyTheRunsOwn(t *testing.T) {
	out := t.TempDir()
	base := []string{"run", "-q", "--out", out, "--set", "grid.shape=[24,24]", "--set", "output.snapshot_every=4", "--set", "checkpoint.every=4"}
	code, _, stderr := heat(t, append(base, "--steps", "8")...)
	require.Equal(t, 0, code, stderr)
	mine := map[string]string{
		"plots/mine.png":                    "a plot of mine",
		"snapshots/notes.txt":               "what the snapshots show",
		"checkpoints/keep.txt":              "do not lose",
		"checkpoints/step-00000099/data.h5": "not a checkpoint",
		"paper.tex":                         "\\begin{document}",
	}
	for rel, text := range mine {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(out, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(out, rel), []byte(text), 0o644))
	}
	code, _, stderr = heat(t, append(base, "--steps", "6", "--overwrite", "--set", "output.snapshot_every=3")...)
	require.Equal(t, 0, code, stderr)
	for rel, text := range mine {
		data, err := os.ReadFile(filepath.Join(out, rel))
		require.NoError(t, err, "%s survives --overwrite", rel)
		require.Equal(t, text, string(data))
	}
	require.NoFileExists(t, filepath.Join(out, "snapshots", "u-00000004.png"), "the previous run's snapshots are gone")
	require.NoDirExists(t, filepath.Join(out, "checkpoints", "step-00000008"), "and its checkpoints")
	require.FileExists(t, filepath.Join(out, "snapshots", "u-00000003.png"))
	require.Equal(t, 6, readReport(t, filepath.Join(out, "report.json")).Steps)

	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, dir := range []string{"/", home} {
		code, _, stderr = heat(t, "run", "-q", "--out", dir, "--overwrite", "--steps", "1")
		require.Equal(t, 2, code, stderr)
		require.Contains(t, stderr, "heat does not replace outputs in the")
	}
	entries, err := os.ReadDir(home)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing written into the home folder")
}

// Links planted where heat writes — the lock files, the report, the
// diagnostics, the temporary latest — are never written through: their
// targets keep their bytes, and the run says why it stops.
func TestPlantedLinksNotWrittenThrough(t *testing.T) {
	for _, name := range []string{".heat.lock", ".heat-manifest", "report.json", "diagnostics.csv", "ck/.lock", "ck/latest.tmp"} {
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			// The checkpoints in a folder of their own: one with entries
			// inside the output folder is another run's results.
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			target := filepath.Join(t.TempDir(), "precious")
			require.NoError(t, os.WriteFile(target, []byte("mine"), 0o644))
			link := filepath.Join(dir, name)
			if !strings.HasPrefix(name, "ck/") {
				link = filepath.Join(out, name)
			}
			require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
			require.NoError(t, os.Symlink(target, link))
			code, _, stderr := heat(t, "run", "-q", "--out", out, "--set", "grid.shape=[16,16]", "--steps", "4", "--set", "checkpoint.every=2",
				"--set", "checkpoint.dir="+filepath.Join(dir, "ck"))
			data, err := os.ReadFile(target)
			require.NoError(t, err)
			require.Equal(t, "mine", string(data), "%s's target untouched: %s", name, stderr)
			if name == "ck/latest.tmp" {
				require.Equal(t, 0, code, "a temporary latest of another name: %s", stderr)
				return
			}
			require.Equal(t, 2, code, stderr)
			require.Contains(t, stderr, filepath.Base(name))
			require.NotContains(t, stderr, "goroutine ")
		})
	}
	// A folder named latest where the run keeps its latest: not heat's to
	// replace; the checkpoints commit, latest is left as it is, and the
	// run says so once.
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	require.NoError(t, os.MkdirAll(filepath.Join(ck, "latest", "mine"), 0o755))
	code, _, stderr := heat(t, "run", "--out", filepath.Join(dir, "out"), "--set", "grid.shape=[16,16]", "--steps", "4", "--set", "checkpoint.every=2",
		"--set", "checkpoint.dir="+ck)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, 1, strings.Count(stderr, "latest (a directory: not updated"), stderr)
	require.DirExists(t, filepath.Join(ck, "latest", "mine"))
	require.DirExists(t, filepath.Join(ck, "step-00000004"))

	// A FIFO in place of each: refused at once, never waited on.
	for _, name := range []string{".heat.lock", ".heat-manifest", "report.json", "diagnostics.csv", "ck/.lock"} {
		dir = t.TempDir()
		out := filepath.Join(dir, "out")
		fifo := filepath.Join(dir, name)
		if !strings.HasPrefix(name, "ck/") {
			fifo = filepath.Join(out, name)
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(fifo), 0o755))
		require.NoError(t, syscall.Mkfifo(fifo, 0o644))
		start := time.Now()
		code, stderr := asBinary(t, "run", "-q", "--out", out, "--set", "grid.shape=[16,16]", "--steps", "4", "--set", "checkpoint.every=2",
			"--set", "checkpoint.dir="+filepath.Join(dir, "ck"))
		require.Equal(t, 2, code, "%s: %s", name, stderr)
		require.Less(t, time.Since(start), 2*time.Second, name)
		require.Contains(t, stderr, filepath.Base(name))
	}
	// --report FILE: a link, or a file that is not a heat report, is not
	// replaced.
	out := t.TempDir()
	target := filepath.Join(t.TempDir(), "precious")
	require.NoError(t, os.WriteFile(target, []byte("mine"), 0o644))
	link := filepath.Join(t.TempDir(), "r.json")
	require.NoError(t, os.Symlink(target, link))
	for _, report := range []string{link, target} {
		code, _, stderr = heat(t, "run", "-q", "--out", out, "--set", "grid.shape=[16,16]", "--steps", "4", "--report", report)
		require.Equal(t, 2, code, stderr)
		data, err := os.ReadFile(target)
		require.NoError(t, err)
		require.Equal(t, "mine", string(data))
	}
}

// A restart writes where the command line says — in place, or --out —
// never where the checkpoint's metadata says, even in a checkpoint
// crafted (config edited, metadata resealed) to name another run's folder.
func TestRestartWritesWhereTheCommandLineSays(t *testing.T) {
	dir := t.TempDir()
	a, victim := filepath.Join(dir, "a"), filepath.Join(dir, "victim")
	code, _, stderr := heat(t, "run", "-q", "--out", victim, "--set", "grid.shape=[16,16]", "--steps", "4")
	require.Equal(t, 0, code, stderr)
	before := snapshotTree(t, victim)

	code, _, stderr = heat(t, "run", "-q", "--out", a, "--set", "grid.shape=[16,16]", "--steps", "8", "--set", "checkpoint.every=4", "--set", "checkpoint.keep=0")
	require.Equal(t, 0, code, stderr)
	ck := filepath.Join(a, "checkpoints", "step-00000004")
	forge(t, ck, func(cfg map[string]any) {
		cfg["output"].(map[string]any)["dir"] = victim
		cfg["checkpoint"].(map[string]any)["dir"] = filepath.Join(victim, "checkpoints")
	})
	code, _, stderr = heat(t, "inspect", "--verify", ck)
	require.Equal(t, 0, code, "the forged checkpoint is well sealed: %s", stderr)

	// In place: the run folder a.
	code, _, stderr = heat(t, "run", "-q", "--restart", ck, "--steps", "12", "--set", "checkpoint.every=4")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, 12, readReport(t, filepath.Join(a, "report.json")).Steps)
	require.DirExists(t, filepath.Join(a, "checkpoints", "step-00000012"))

	// A copy, restarted into the folder the user names.
	cp := filepath.Join(dir, "copy", "step-00000004")
	require.NoError(t, os.CopyFS(cp, os.DirFS(ck)))
	b := filepath.Join(dir, "b")
	code, _, stderr = heat(t, "run", "-q", "--restart", cp, "--out", b, "--steps", "12", "--set", "checkpoint.every=4")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, 12, readReport(t, filepath.Join(b, "report.json")).Steps)
	require.DirExists(t, filepath.Join(b, "checkpoints", "step-00000012"))
	require.DirExists(t, cp, "the copy it restarted from is kept")

	// A copy outside any run folder, without --out: nowhere to continue.
	code, _, stderr = heat(t, "run", "-q", "--restart", cp, "--steps", "12")
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "give --out")

	require.Equal(t, before, snapshotTree(t, victim), "the folder the metadata named is untouched")
}

// forge edits the config stored in checkpoint dir and reseals its metadata
// as a forger who knows the format would (the seal is a CRC32-C over the
// document with its own digits zeroed).
func forge(t *testing.T, dir string, edit func(cfg map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, "zarr.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	heat := doc["attributes"].(map[string]any)["heat"].(map[string]any)
	edit(heat["config"].(map[string]any))
	heat["metadata_crc32c"] = "00000000"
	out, err := json.MarshalIndent(doc, "", "  ")
	require.NoError(t, err)
	out = append(out, '\n')
	sum := crc32c(out)
	out = bytes.Replace(out, []byte(`"metadata_crc32c": "00000000"`), []byte(`"metadata_crc32c": "`+sum+`"`), 1)
	require.NoError(t, os.WriteFile(path, out, 0o644))
}

// snapshotTree is every file under dir with its bytes.
func snapshotTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		files[path] = string(data)
		return err
	}))
	return files
}

// Pruning (checkpoint.keep) removes only the run's own checkpoints: a
// user's step-* folder and another run's .partial stay, named once.
func TestPruningLeavesOthersAlone(t *testing.T) {
	out := t.TempDir()
	ck := filepath.Join(t.TempDir(), "shared-checkpoints")
	users := filepath.Join(ck, "step-00000001")
	theirs := filepath.Join(ck, "step-00000003.partial")
	for _, d := range []string{users, filepath.Join(theirs, "u")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(users, "notes.txt"), []byte("mine"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(theirs, ".heat-writer"), []byte("0123456789abcdef\n"), 0o644))
	code, _, stderr := heat(t, "run", "--out", out, "--set", "grid.shape=[16,16]", "--steps", "12", "--set", "checkpoint.every=2", "--set", "checkpoint.keep=1",
		"--set", "checkpoint.dir="+ck)
	require.Equal(t, 0, code, stderr)
	require.FileExists(t, filepath.Join(users, "notes.txt"))
	require.DirExists(t, theirs)
	require.Equal(t, 1, strings.Count(stderr, "left alone in "+ck+": step-00000001"), stderr)
	require.Equal(t, 1, strings.Count(stderr, "left alone in "+ck+": step-00000003.partial"), stderr)
	entries, err := os.ReadDir(ck)
	require.NoError(t, err)
	var ours []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "step-") && e.Name() != "step-00000001" && e.Name() != "step-00000003.partial" {
			ours = append(ours, e.Name())
		}
	}
	require.Equal(t, []string{"step-00000012"}, ours, "the run's own pruned to keep = 1")
}

// Two runs into one output folder at once (no checkpoints): the second is
// refused; a folder deleted under a run is an error naming what is gone.
func TestOneRunPerOutputFolder(t *testing.T) {
	out := t.TempDir()
	args := []string{"run", "-q", "--out", out, "--set", "grid.shape=[48,48]", "--steps", "30000", "--set", "output.formats=[]", "--set", "output.diagnostics_every=1000"}
	first := startHeat(t, args...)
	waitFor(t, first, filepath.Join(out, "diagnostics.csv"))
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGSTOP))
	code, stderr := asBinary(t, "run", "-q", "--out", out, "--set", "grid.shape=[16,16]", "--steps", "4")
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "another run is writing there")
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGCONT))
	require.Equal(t, 0, first.wait(t, 3*time.Minute), first.err.String())

	// The checkpoint folder deleted under a run: exit 1, saying so.
	out2 := t.TempDir()
	second := startHeat(t, longRun(out2)...)
	latest := filepath.Join(out2, "checkpoints", "latest")
	waitFor(t, second, latest)
	require.NoError(t, second.cmd.Process.Signal(syscall.SIGSTOP))
	require.NoError(t, os.RemoveAll(filepath.Join(out2, "checkpoints")))
	require.NoError(t, second.cmd.Process.Signal(syscall.SIGCONT))
	require.Equal(t, 1, second.wait(t, 3*time.Minute), second.err.String())
	// Where the delete caught it: a chunk being written, or the commit
	// (the lock lost); either way the error says the folder is gone.
	require.Contains(t, second.err.String(), "checkpoints no longer exists")
	require.NoDirExists(t, filepath.Join(out2, "checkpoints", "step-00030000"), "not written into a folder made anew")
	r := readReport(t, filepath.Join(out2, "report.json"))
	require.Equal(t, "failed", r.Status)
}

// crc32c is the CRC32-C of data as the seal writes it: 8 hex digits.
func crc32c(data []byte) string {
	return fmt.Sprintf("%08x", crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)))
}

// A run that keeps its checkpoints outside its output folder, stopped by
// SIGINT, prints a command that continues it where it was: the checkpoints
// and the output folder both named, and that command finishes the run.
func TestContinueCommandNamesBothFolders(t *testing.T) {
	dir := t.TempDir()
	out, ck := filepath.Join(dir, "out"), filepath.Join(dir, "scratch", "ck")
	base := []string{"run", "-q", "--set", "grid.shape=[24,24]", "--steps", "40", "--set", "checkpoint.dir=" + ck}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(run.SignalError{Sig: os.Interrupt})
	var o, e strings.Builder
	err := cli(ctx, append(base, "--out", out), &o, &e)
	require.Equal(t, 130, exitCode(err), "%v", err)
	_, cont, ok := strings.Cut(err.Error(), "continue with: go run ./cmd/heat ")
	require.True(t, ok, err.Error())
	require.Equal(t, "run --restart "+ck+" --out "+out, cont)
	code, _, stderr := heat(t, append(strings.Fields(cont), "-q")...)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, 40, readReport(t, filepath.Join(out, "report.json")).Steps)
}
