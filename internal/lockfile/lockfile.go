// Package lockfile is the one-writer lock of a folder heat writes into (a
// run's output folder, a checkpoint folder): an flock(2) on a small file in
// it, which the kernel releases when the process ends however it ends, so
// a crash leaves no stale lock to clean up.
//
// The lock file is opened without following a link and must be a regular
// file: a symlink planted under its name is refused, never written
// through. The holder writes who it is (pid, host, run id, since) into it,
// for a refused second writer to name.
package lockfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"heat/internal/safefile"
)

// ErrLocked is another writer holding the folder.
var ErrLocked = errors.New("in use by another run")

// ErrLost is a lock whose file was removed or replaced while it was held:
// the folder was deleted (or its lock file) under the run.
var ErrLost = errors.New("lock lost")

// Lock is a held folder lock, from Take to Unlock (or Abandon).
type Lock struct {
	f       *os.File
	path    string
	created bool // Take made the file: Abandon removes it
}

// maxHolder bounds what is read of a lock file to name its holder.
const maxHolder = 4096

// Take locks dir for the run runID under the lock file name (dir must
// exist), and records the holder in it. It fails with ErrLocked, naming
// the holder, when another process (or another run in this one) holds it.
func Take(dir, name, runID string) (*Lock, error) {
	path := filepath.Join(dir, name)
	for tries := 1; ; tries++ {
		f, created, err := openLockFile(path)
		if err != nil {
			return nil, err
		}
		if err := flock(f); err != nil {
			who := holder(f)
			f.Close()
			if errors.Is(err, errWouldBlock) {
				if who == "" {
					who = "a run that has not yet written its name"
				}
				return nil, fmt.Errorf("%s is held by %s: %w", dir, who, ErrLocked)
			}
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		l := &Lock{f: f, path: path, created: created}
		if err := l.Held(); err != nil {
			// A refused run removed the file it had made (Abandon)
			// between this open and this lock: the lock is of a file no
			// longer the folder's. Take the folder's again.
			f.Close()
			if tries < 10 {
				continue
			}
			return nil, err
		}
		host, _ := os.Hostname()
		me := fmt.Sprintf("pid %d on host %s (run %s, since %s)\n", os.Getpid(), host, runID, time.Now().UTC().Format(time.RFC3339))
		if err := f.Truncate(0); err == nil {
			_, _ = f.WriteAt([]byte(me), 0)
		}
		return l, nil
	}
}

// openLockFile opens (creating) path for reading and writing, refusing a
// symlink (O_NOFOLLOW) and anything but a regular file; O_NONBLOCK keeps a
// FIFO planted there from blocking the open. created says whether this
// open made the file.
func openLockFile(path string) (f *os.File, created bool, err error) {
	const flags = os.O_RDWR | safefile.NoFollow | safefile.NonBlock
	f, err = os.OpenFile(path, flags|os.O_CREATE|os.O_EXCL, 0o644)
	created = err == nil
	if errors.Is(err, os.ErrExist) {
		f, err = os.OpenFile(path, flags|os.O_CREATE, 0o644)
	}
	if err != nil {
		if isLoop(err) {
			return nil, false, fmt.Errorf("lock file %s is a symbolic link: heat does not write through a link it did not create; remove it", path)
		}
		return nil, false, fmt.Errorf("lock file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, false, fmt.Errorf("lock file: %w", err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, false, fmt.Errorf("lock file %s is %s, not a regular file; remove it", path, safefile.Kind(st.Mode()))
	}
	if err := clearNonBlock(f); err != nil {
		f.Close()
		return nil, false, fmt.Errorf("lock file: %w", err)
	}
	return f, created, nil
}

// holder is who the lock file says holds it (its first line).
func holder(f *os.File) string {
	b, _ := io.ReadAll(io.NewSectionReader(f, 0, maxHolder))
	return strings.TrimSpace(string(b))
}

// Held checks that the lock is still the folder's: its file still exists
// under its name and is the file this lock holds. A folder deleted (or
// its lock file removed or replaced) under the run is ErrLost.
func (l *Lock) Held() error {
	if l == nil || l.f == nil {
		return nil
	}
	mine, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	now, err := os.Lstat(l.path)
	if err != nil || !os.SameFile(mine, now) {
		return fmt.Errorf("%s was removed or replaced while this run held it (was its folder deleted?): %w", l.path, ErrLost)
	}
	return nil
}

// Path is the lock file's path.
func (l *Lock) Path() string { return l.path }

// Abandon releases the lock of a run refused before it wrote anything,
// removing the lock file where Take made it: a refused run leaves no file
// behind in a folder, least of all one it did not write. The file goes
// while the lock is held; a run that opened it meanwhile finds, once it
// holds it, that it is no longer the folder's, and takes the folder's anew.
func (l *Lock) Abandon() error {
	if l == nil || l.f == nil {
		return nil
	}
	if l.created && l.Held() == nil {
		_ = os.Remove(l.path)
	}
	return l.Unlock()
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

// isLoop says whether err is the ELOOP of opening a symlink with O_NOFOLLOW.
func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
