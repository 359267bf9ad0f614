package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// One writer per root: a second lock is refused naming the holder, and
// the root is free again once the first is released.
func TestLockRootOneWriter(t *testing.T) {
	root := filepath.Join(t.TempDir(), "ck")
	a, err := LockRoot(root, "run-a")
	require.NoError(t, err)
	_, err = LockRoot(root, "run-b")
	require.ErrorIs(t, err, ErrLocked)
	host, _ := os.Hostname()
	require.ErrorContains(t, err, fmt.Sprintf("pid %d on host %s (run run-a", os.Getpid(), host))
	require.NoError(t, a.Unlock())
	b, err := LockRoot(root, "run-b")
	require.NoError(t, err)
	require.NoError(t, b.Unlock())
}

// ForeignWriter names the run of a root's newest checkpoint when it is
// neither this run nor the one it continues.
func TestForeignWriter(t *testing.T) {
	root := t.TempDir()
	id, err := ForeignWriter(root, "me", "")
	require.NoError(t, err)
	require.Empty(t, id, "an empty root")
	infos, errs := writeRanks(root, []int{6, 6}, 1, 4, func(int) Options { return Options{} })
	require.NoError(t, errs[0])
	_ = infos
	id, err = ForeignWriter(root, "me", "")
	require.NoError(t, err)
	require.Empty(t, id, "a checkpoint without a run id (an older heat's) is no one's")
	dir := filepath.Join(root, StepName(4))
	editGroup(t, dir, func(heat map[string]any) { heat["extra"].(map[string]any)["run_id"] = "other" })
	id, err = ForeignWriter(root, "me", "")
	require.NoError(t, err)
	require.Equal(t, "other", id)
	id, _ = ForeignWriter(root, "me", "other")
	require.Empty(t, id, "the run this one continues")
	id, _ = ForeignWriter(root, "other", "")
	require.Empty(t, id, "this run's own")
}
