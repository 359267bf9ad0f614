package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// lockFile is the one-writer lock of a checkpoint root.
const lockFile = ".lock"

// ErrLocked is another writer holding a checkpoint root.
var ErrLocked = errors.New("checkpoint folder in use by another run")

// Lock is the one-writer lock of a checkpoint root, held from LockRoot to
// Unlock. It is an flock(2) on root/.lock, which the kernel releases when
// the process ends however it ends, so a crash leaves no stale lock to
// clean up. Filesystems whose flock is not shared between hosts (some NFS
// mounts, Lustre without -o flock) cannot enforce it across hosts; the run
// id in every checkpoint's metadata still tells a foreign writer's
// checkpoints apart (ForeignWriter).
type Lock struct {
	f *os.File
}

// LockRoot takes root's lock for the run runID, creating root if need be,
// and records the holder (pid, host, run id, since) in the lock file for a
// refused second writer to name. It fails with ErrLocked, naming the
// holder, when another process (or another run in this one) holds it.
func LockRoot(root, runID string) (*Lock, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	path := filepath.Join(root, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if err := flock(f); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, errWouldBlock) {
			who := strings.TrimSpace(string(holder))
			if who == "" {
				who = "a run that has not yet written its name"
			}
			return nil, fmt.Errorf("%s is held by %s: %w", root, who, ErrLocked)
		}
		return nil, fmt.Errorf("checkpoint: locking %s: %w", path, err)
	}
	host, _ := os.Hostname()
	me := fmt.Sprintf("pid %d on host %s (run %s, since %s)\n", os.Getpid(), host, runID, time.Now().UTC().Format(time.RFC3339))
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(me), 0)
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock (closing the file releases the flock).
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
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
