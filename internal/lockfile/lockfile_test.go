package lockfile

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// One writer per folder: a second lock is refused naming the holder, and
// the folder is free again once the first is released.
func TestTakeOneWriter(t *testing.T) {
	dir := t.TempDir()
	a, err := Take(dir, ".lock", "run-a")
	require.NoError(t, err)
	_, err = Take(dir, ".lock", "run-b")
	require.ErrorIs(t, err, ErrLocked)
	host, _ := os.Hostname()
	require.ErrorContains(t, err, fmt.Sprintf("pid %d on host %s (run run-a", os.Getpid(), host))
	require.NoError(t, a.Held())
	require.NoError(t, a.Unlock())
	b, err := Take(dir, ".lock", "run-b")
	require.NoError(t, err)
	require.NoError(t, b.Unlock())
}

// A symlink planted as the lock file is refused and its target untouched;
// a FIFO there is refused at once, not waited on.
func TestTakeRefusesLinksAndFIFOs(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "precious")
	require.NoError(t, os.WriteFile(target, []byte("mine"), 0o644))
	require.NoError(t, os.Symlink(target, filepath.Join(dir, ".lock")))
	_, err := Take(dir, ".lock", "run")
	require.ErrorContains(t, err, "symbolic link")
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "mine", string(data))

	fifo := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(fifo, ".lock"), 0o644))
	done := make(chan error, 1)
	go func() { _, err := Take(fifo, ".lock", "run"); done <- err }()
	select {
	case err := <-done:
		require.ErrorContains(t, err, "named pipe")
	case <-time.After(2 * time.Second):
		t.Fatal("Take blocked on a FIFO")
	}
}

// A lock whose file is removed, or whose folder is deleted and made anew,
// is lost.
func TestHeldDetectsALostLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	require.NoError(t, os.Mkdir(dir, 0o755))
	l, err := Take(dir, ".lock", "run")
	require.NoError(t, err)
	defer l.Unlock()
	require.NoError(t, os.RemoveAll(dir))
	require.ErrorIs(t, l.Held(), ErrLost)
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".lock"), nil, 0o644))
	require.ErrorIs(t, l.Held(), ErrLost, "another file under the lock's name")
}

// Abandon removes the lock file where Take made it, and only there: a
// refused run leaves a folder as it found it.
func TestAbandonRemovesOnlyWhatItMade(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".lock")
	a, err := Take(dir, ".lock", "run-a")
	require.NoError(t, err)
	_, err = Take(dir, ".lock", "run-b")
	require.ErrorIs(t, err, ErrLocked, "held until abandoned")
	require.NoError(t, a.Abandon())
	require.NoFileExists(t, path)

	b, err := Take(dir, ".lock", "run-b")
	require.NoError(t, err, "the folder is free again")
	require.NoError(t, b.Unlock())
	require.FileExists(t, path, "an unlocked lock file stays")
	c, err := Take(dir, ".lock", "run-c")
	require.NoError(t, err)
	require.NoError(t, c.Abandon())
	require.FileExists(t, path, "c did not make the file: it stays")
}

// A run that opened the lock file just before its maker abandoned it
// (removed under the lock) does not hold the removed file: Take checks,
// once it holds it, that the file is still the folder's, and takes the
// folder's anew.
func TestTakeAfterAnAbandonHoldsTheFoldersFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".lock")
	a, err := Take(dir, ".lock", "run-a")
	require.NoError(t, err)
	stale, _, err := openLockFile(path) // as a second Take would, before its flock
	require.NoError(t, err)
	defer stale.Close()
	require.NoError(t, a.Abandon())
	require.NoError(t, flock(stale), "the removed file's lock is free")
	l := &Lock{f: stale, path: path}
	require.ErrorIs(t, l.Held(), ErrLost, "what Take checks after its flock")
	b, err := Take(dir, ".lock", "run-b")
	require.NoError(t, err)
	require.NoError(t, b.Held())
	require.NoError(t, b.Unlock())
}
