package checkpoint

import (
	"errors"
	"fmt"
	"os"

	"heat/internal/lockfile"
)

// lockFile is the one-writer lock of a checkpoint root.
const lockFile = ".lock"

// ErrLocked is another writer holding a checkpoint root.
var ErrLocked = lockfile.ErrLocked

// Lock is the one-writer lock of a checkpoint root, held from LockRoot to
// Unlock: an flock(2) on root/.lock (internal/lockfile). Filesystems whose
// flock is not shared between hosts (some NFS mounts, Lustre without -o
// flock) cannot enforce it across hosts; the run id in every checkpoint's
// metadata still tells a foreign writer's checkpoints apart (ForeignWriter,
// and pruning only the run's own).
type Lock = lockfile.Lock

// LockRoot takes root's lock for the run runID, creating root if need be,
// and records the holder (pid, host, run id, since) in the lock file for a
// refused second writer to name. It fails with ErrLocked, naming the
// holder, when another process (or another run in this one) holds it; a
// symlink or a FIFO planted as the lock file is refused, never written
// through.
func LockRoot(root, runID string) (*Lock, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	l, err := lockfile.Take(root, lockFile, runID)
	if err != nil && !errors.Is(err, ErrLocked) {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return l, err
}

// ForeignWriter returns the run id of the newest checkpoint under root
// when another run than runID (or the run it restarted, from) wrote it:
// "" when the root holds none, or only this run's.
func ForeignWriter(root, runID, from string) (string, error) {
	path, err := Resolve(root)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	ck, err := Open(path)
	if err != nil {
		return "", nil // not loadable: a restart would pass it over
	}
	id, _ := ck.meta.Extra["run_id"].(string)
	if id == "" || id == runID || id == from {
		return "", nil
	}
	return id, nil
}
