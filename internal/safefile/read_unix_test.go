//go:build unix

package safefile

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// within fails the test if f has not returned after d (a blocking open
// would never return: the test ends instead of hanging).
func within(t *testing.T, d time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("still blocked after %v", d)
		return nil
	}
}

// A FIFO, a socket and a device are refused at once, each by name and
// kind: nothing waits for a FIFO's writer.
func TestSpecialFilesRefusedAtOnce(t *testing.T) {
	dir, err := os.MkdirTemp("", "sf") // short: a socket's path has a length limit
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o644))
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	cases := []struct{ path, kind string }{
		{fifo, "a named pipe (FIFO)"},
		{sock, "a socket"},
	}
	if st, err := os.Lstat("/dev/null"); err == nil && st.Mode()&os.ModeCharDevice != 0 {
		cases = append(cases, struct{ path, kind string }{"/dev/null", "a character device"})
	}
	for _, c := range cases {
		err := within(t, time.Second, func() error { _, err := ReadFile(c.path, 1<<20); return err })
		require.ErrorIs(t, err, ErrNotRegular)
		require.EqualError(t, err, c.path+" is "+c.kind+", not a regular file")
	}
}

// The open itself refuses what the lstat before it would have, for a file
// swapped in between: a FIFO opens without blocking and fstat refuses it,
// a link is not followed.
func TestOpenRefusesWhatChangedSinceTheLstat(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o644))
	err := within(t, time.Second, func() error { _, err := openRegular(fifo); return err })
	require.EqualError(t, err, fifo+" is a named pipe (FIFO), not a regular file")

	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, []byte("x"), 0o644))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(target, link))
	_, err = openRegular(link)
	require.EqualError(t, err, link+" is a symbolic link, not a regular file")

	_, err = openRegular(dir)
	require.EqualError(t, err, dir+" is a directory, not a regular file")
}

// A regular file comes back in blocking mode, as os.Open leaves one.
func TestOpenClearsNonBlock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte("abc"), 0o644))
	f, _, err := Open(p)
	require.NoError(t, err)
	defer f.Close()
	// (f.Fd would put the descriptor in blocking mode itself.)
	rc, err := f.SyscallConn()
	require.NoError(t, err)
	var flags int
	require.NoError(t, rc.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) }))
	require.NoError(t, err)
	require.Zero(t, flags&unix.O_NONBLOCK)
}
