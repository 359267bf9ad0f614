package checkpoint

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/internal/lockfile"
)

// Pruning keeps to the run's own checkpoints: another run's, its .partial,
// and a step-* folder of a user's stay as they were, and are named once.
func TestPruneOnlyTheRunsOwn(t *testing.T) {
	root := t.TempDir()
	shape := []int{8, 6}
	for _, step := range []int{1, 2} {
		writeField(t, root, shape, 2, step, Options{RunID: "other"})
	}
	theirs := filepath.Join(root, StepName(9)+partialSuffix)
	require.NoError(t, os.MkdirAll(filepath.Join(theirs, "u"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(theirs, writerFile), []byte("other\n"), 0o644))
	users := filepath.Join(root, StepName(50))
	require.NoError(t, os.Mkdir(users, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(users, "notes.txt"), []byte("mine"), 0o644))

	var last []Info
	for _, step := range []int{3, 4, 5} {
		last = writeField(t, root, shape, 2, step, Options{RunID: "me", Keep: 2})
	}
	require.Equal(t, []string{StepName(5), StepName(4), StepName(2), StepName(1)}, mustList(t, root),
		"the run's step 3 pruned, nothing else")
	for _, step := range []int{1, 2} {
		require.Empty(t, Verify(filepath.Join(root, StepName(step))), "another run's checkpoint intact")
	}
	require.DirExists(t, theirs)
	data, err := os.ReadFile(filepath.Join(users, "notes.txt"))
	require.NoError(t, err)
	require.Equal(t, "mine", string(data))
	require.Len(t, last[0].Foreign, 4, "named: %v", last[0].Foreign)
	for _, name := range []string{StepName(1), StepName(2), StepName(50), StepName(9) + partialSuffix} {
		require.Contains(t, last[0].Foreign, name+map[bool]string{true: " (another run's)", false: " (another run's checkpoint)"}[name == StepName(9)+partialSuffix])
	}
	for _, e := range dirNames(t, root) {
		require.NotContains(t, e, writerFile, "no marker outside a .partial")
	}
	_, err = os.Stat(filepath.Join(root, StepName(5), writerFile))
	require.ErrorIs(t, err, os.ErrNotExist, "a complete checkpoint keeps no writer marker")
}

// A checkpoint of the run's own that a user put a file into is not pruned.
func TestPruneLeavesACheckpointHoldingUserFiles(t *testing.T) {
	root := t.TempDir()
	shape := []int{6, 6}
	writeField(t, root, shape, 1, 1, Options{RunID: "me", Keep: 1})
	note := filepath.Join(root, StepName(1), "u", "README")
	require.NoError(t, os.WriteFile(note, []byte("why this run"), 0o644))
	writeField(t, root, shape, 1, 2, Options{RunID: "me", Keep: 1})
	infos := writeField(t, root, shape, 1, 3, Options{RunID: "me", Keep: 1})
	require.Equal(t, []string{StepName(3), StepName(1)}, mustList(t, root))
	require.FileExists(t, note)
	require.Empty(t, Verify(filepath.Join(root, StepName(1))))
	require.Len(t, infos[0].Foreign, 1)
	require.Contains(t, infos[0].Foreign[0], "u/README")
}

// RemoveRun clears one run's checkpoints and nothing else.
func TestRemoveRun(t *testing.T) {
	root := t.TempDir()
	shape := []int{6, 6}
	writeField(t, root, shape, 2, 1, Options{RunID: "other"})
	writeField(t, root, shape, 2, 2, Options{RunID: "me"})
	writeField(t, root, shape, 2, 3, Options{RunID: "me", Shard: []int{6, 6}})
	require.NoError(t, os.WriteFile(filepath.Join(root, StepName(2), "keep.txt"), nil, 0o644))
	removed, left, err := RemoveRun(root, "me")
	require.Error(t, err, "step 2 holds a user's file")
	require.Equal(t, 1, removed)
	require.ElementsMatch(t, []string{filepath.Join(root, StepName(1)), filepath.Join(root, StepName(2))}, left)
	require.Equal(t, []string{StepName(2), StepName(1)}, mustList(t, root))
	_, err = os.Lstat(filepath.Join(root, latestFile))
	require.ErrorIs(t, err, os.ErrNotExist, "latest named the removed step 3")
	require.Empty(t, Verify(filepath.Join(root, StepName(1))))
}

// A root deleted under the run fails the next checkpoint, and is not made
// anew.
func TestWriteRefusesALostRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ck")
	lock, err := LockRoot(root, "me")
	require.NoError(t, err)
	defer lock.Unlock()
	writeField(t, root, []int{6, 6}, 2, 1, Options{RunID: "me", Lock: lock})
	require.NoError(t, os.RemoveAll(root))
	_, errs := writeRanks(root, []int{6, 6}, 2, 2, func(int) Options { return Options{RunID: "me", Lock: lock} })
	for _, err := range errs {
		require.Error(t, err)
	}
	require.ErrorIs(t, errs[0], lockfile.ErrLost)
	require.NoDirExists(t, root)
}

// A link planted where the temporary latest went is never written through.
func TestLatestNotWrittenThroughALink(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(t.TempDir(), "precious")
	require.NoError(t, os.WriteFile(target, []byte("mine"), 0o644))
	require.NoError(t, os.Symlink(target, filepath.Join(root, "latest.tmp")))
	writeField(t, root, []int{6, 6}, 1, 1, Options{})
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "mine", string(data))
	require.Equal(t, StepName(1), latestName(t, root))
}

func mustList(t *testing.T, root string) []string {
	t.Helper()
	names, err := List(root)
	require.NoError(t, err)
	return names
}

// A .partial that holds nothing — its writer killed before it marked the
// folder with its run (empty array folders, an empty marker) — is taken
// over by the next writer of that step, whoever it is (a restart after
// kill -9 failed on it); one that holds a file of another run's is not.
func TestPartialThatHoldsNothingIsTakenOver(t *testing.T) {
	shape := []int{8, 6}
	for name, leave := range map[string]func(dir string){
		"empty folder":       func(string) {},
		"empty array folder": func(dir string) { require.NoError(t, os.MkdirAll(filepath.Join(dir, "u", "c"), 0o755)) },
		"empty marker": func(dir string) {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "u"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, writerFile), nil, 0o644))
		},
	} {
		root := t.TempDir()
		dir := filepath.Join(root, StepName(3)+partialSuffix)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		leave(dir)
		writeField(t, root, shape, 2, 3, Options{RunID: "me"})
		require.Empty(t, Verify(filepath.Join(root, StepName(3))), name)
		require.NoDirExists(t, dir, name)
	}
	root := t.TempDir()
	dir := filepath.Join(root, StepName(3)+partialSuffix)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "u", "c"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "u", "c", "0"), []byte("data"), 0o644))
	_, errs := writeRanks(root, shape, 2, 3, func(int) Options { return Options{RunID: "me"} })
	require.ErrorContains(t, errs[0], "another run's checkpoint being written")
	require.FileExists(t, filepath.Join(dir, "u", "c", "0"))
}
