//go:build unix

package media

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A FIFO, a link or a device in place of a map is refused at once, saying
// what is there, without blocking on the FIFO or following the link.
func TestNPYNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	grid := []int{4, 4}
	real := writeNPY(t, dir, "real.npy", "<f8", grid, nil)
	link := filepath.Join(dir, "link.npy")
	require.NoError(t, os.Symlink(real, link))
	fifo := filepath.Join(dir, "fifo.npy")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	done := make(chan error, 1)
	go func() {
		for _, c := range []struct{ path, kind string }{
			{link, "a symbolic link"}, {fifo, "a named pipe (FIFO)"}, {"/dev/null", "a character device"},
		} {
			err := (&Spec{Shape: grid, KMap: c.path}).Check()
			if err == nil || !strings.Contains(err.Error(), c.path+" is "+c.kind) {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("a map check blocked")
	}
}
