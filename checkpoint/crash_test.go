package checkpoint

import (
	"bufio"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"heat/decomp"
)

// crashEnv names the root the helper writer writes into; without it,
// TestHelperWriter is skipped.
const crashEnv = "HEAT_CHECKPOINT_CRASH_ROOT"

var crashShape = []int{12, 10}

// TestHelperWriter is not a test: TestCrashSafety runs it in a child
// process, which resumes from the latest checkpoint under the root and then
// writes checkpoints (on 1 to 4 ranks) until it is killed.
func TestHelperWriter(t *testing.T) {
	root := os.Getenv(crashEnv)
	if root == "" {
		t.Skip("the writer that TestCrashSafety kills")
	}
	step := 0
	if path, err := Resolve(root); err == nil {
		ck, err := Open(path)
		require.NoError(t, err)
		step = ck.Meta().Step
		requireAll(t, readRanks(t, path, 2, Options{}, func(idx []int) float64 { return value(crashShape, idx, step) }))
	}
	os.Stdout.WriteString("ready\n")
	// Stop by itself should the parent die without killing it.
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		step++
		ranks, background := 1+step%4, false
		opt := Options{Chunk: []int{4, 5}, Keep: 3, Workers: 2}
		switch step % 3 {
		case 1:
			opt.Shard = []int{8, 10}
		case 2: // as checkpoint.shard = "auto" and checkpoint.async write
			g, err := decomp.New(crashShape, ranks, nil, nil)
			require.NoError(t, err)
			opt.Shard, opt.Chunk, err = WriterShards(crashShape, g.Dims, nil)
			require.NoError(t, err)
			background = true
		}
		_, errs := writeRanksAs(root, crashShape, ranks, step, func(int) Options { return opt }, background)
		for r, err := range errs {
			require.NoError(t, err, "rank %d", r)
		}
	}
}

// Killing the writer at random moments always leaves root/latest (if
// present) naming a complete checkpoint that verifies and reads back
// exactly, lists only complete checkpoints, and lets the next writer go on.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a child process 15 times")
	}
	root := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	progress := 0
	for kill := range 15 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
		if emu := os.Getenv("HEAT_TEST_EMULATOR"); emu != "" {
			// Under an emulator (arm64 under qemu-user in CI) the child
			// runs through it too.
			cmd = exec.Command(emu, os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
		}
		cmd.Env = append(os.Environ(), crashEnv+"="+root)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		ready := make(chan bool, 1)
		go func() {
			sc := bufio.NewScanner(out)
			ok := false
			for sc.Scan() {
				if sc.Text() == "ready" && !ok {
					ok = true
					ready <- true
				}
			}
			if !ok {
				ready <- false
			}
		}()
		select {
		case ok := <-ready:
			require.True(t, ok, "kill %d: the writer exited before it was ready", kill)
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("kill %d: the writer did not start", kill)
		}
		time.Sleep(time.Duration(rng.IntN(30_001)) * time.Microsecond)
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()

		step := checkAfterDeath(t, root, crashShape)
		t.Logf("kill %d: latest step %d", kill, step)
		require.GreaterOrEqual(t, step, progress, "kill %d: latest went back", kill)
		progress = step
	}
}

// dying is a faultFS hook for a writer that stops after a number of
// operations: that one and every later one fail, as if the process had died
// just before it. Nothing it skips happens on disk.
func dying(left *int, ops *[]string) func(op, path string) error {
	return func(op, path string) error {
		*ops = append(*ops, op+" "+path)
		if *left <= 0 {
			return errInjected
		}
		*left--
		return nil
	}
}

// A writer that dies before any one of its file operations, in a write that
// adds a checkpoint, prunes one, or replaces the one latest names, leaves
// latest naming a complete checkpoint and only complete checkpoints listed;
// the next write succeeds and clears what the dead one left.
func TestCrashAtEveryOperation(t *testing.T) {
	shape := []int{9, 8}
	scenarios := []struct {
		name  string
		steps []int // written first
		step  int   // the write that dies
		keep  int
	}{
		{"first checkpoint", nil, 1, 0},
		{"add and prune", []int{1, 2}, 3, 2},
		{"replace latest", []int{1, 2}, 2, 0},
		{"replace the only one", []int{1}, 1, 0},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			for k := 0; ; k++ {
				root := t.TempDir()
				for _, s := range sc.steps {
					writeField(t, root, shape, 1, s, Options{Chunk: []int{4, 4}, Keep: sc.keep})
				}
				left, ops := k, []string{}
				_, errs := writeRanks(root, shape, 1, sc.step, func(int) Options {
					return Options{Chunk: []int{5, 8}, Keep: sc.keep, FS: faultFS{fail: dying(&left, &ops)}}
				})
				if errs[0] == nil {
					require.Positive(t, k, "no operation at all?")
					t.Logf("died before each of %d operations", k)
					return // k is past the last operation: every point was covered
				}
				if !errors.Is(errs[0], errInjected) {
					// Died after the commit: the checkpoint is complete.
					require.Contains(t, errs[0].Error(), "is complete", "dying before operation %d", k)
				}
				step := checkAfterDeath(t, root, shape)
				if len(sc.steps) > 0 {
					require.NotZero(t, step, "dying before %s lost every checkpoint", ops[min(k, len(ops)-1)])
				}
				// The next writer resumes and cleans up.
				writeField(t, root, shape, 1, sc.step+10, Options{Keep: sc.keep})
				requireNoPartial(t, root)
				require.Equal(t, StepName(sc.step+10), latestName(t, root))
			}
		})
	}
}

// checkAfterDeath checks root after its writer died: only complete
// checkpoints are listed and each verifies; latest, if present, resolves to
// a complete checkpoint (the one it names, or that one set aside as .prev
// while a rewrite of its step was committing) that verifies and reads back
// the test field exactly. It returns latest's step, 0 if there is no latest.
func checkAfterDeath(t *testing.T, root string, shape []int) int {
	t.Helper()
	names, err := List(root)
	require.NoError(t, err)
	for _, n := range names {
		_, ok := parseName(n)
		require.True(t, ok, "List returned %s", n)
		require.Empty(t, Verify(filepath.Join(root, n)), "listed checkpoint %s", n)
	}
	latest, err := Latest(root)
	require.NoError(t, err)
	path, err := Resolve(root)
	if latest == "" {
		if err != nil {
			require.ErrorIs(t, err, fs.ErrNotExist)
			require.Empty(t, names)
		}
		return 0
	}
	require.NoError(t, err)
	if slices.Contains(names, latest) {
		require.Equal(t, filepath.Join(root, latest), path, "Resolve follows latest")
	} else {
		require.Equal(t, filepath.Join(root, latest+prevSuffix), path, "latest names a checkpoint that is neither listed nor set aside")
	}
	require.Empty(t, Verify(path))
	ck, err := Open(path)
	require.NoError(t, err)
	step := ck.Meta().Step
	require.Equal(t, latest, StepName(step))
	requireAll(t, readRanks(t, path, 3, Options{Workers: 2}, func(idx []int) float64 { return value(shape, idx, step) }))
	return step
}
