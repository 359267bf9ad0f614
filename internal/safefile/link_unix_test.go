//go:build unix

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Follow takes a link to a regular file once (a relative target from the
// link's folder), leaves anything else as it is, and refuses a link to a
// folder, to another link or to nothing, naming the link and its target.
func TestFollow(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "data.npy")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	rel := filepath.Join(sub, "rel")
	require.NoError(t, os.Symlink("../data.npy", rel))
	abs := filepath.Join(dir, "abs")
	require.NoError(t, os.Symlink(file, abs))
	for p, want := range map[string]string{file: file, sub: sub, rel: file, abs: file, filepath.Join(dir, "none"): filepath.Join(dir, "none")} {
		got, err := Follow(p)
		require.NoError(t, err, p)
		require.Equal(t, want, got, p)
	}
	toDir := filepath.Join(dir, "to-dir")
	require.NoError(t, os.Symlink("sub", toDir))
	chain := filepath.Join(dir, "chain")
	require.NoError(t, os.Symlink("abs", chain))
	gone := filepath.Join(dir, "gone")
	require.NoError(t, os.Symlink("nothing", gone))
	for p, mode := range map[string]fs.FileMode{toDir: fs.ModeDir, chain: fs.ModeSymlink} {
		_, err := Follow(p)
		var le *LinkError
		require.ErrorAs(t, err, &le, p)
		require.Equal(t, mode, le.Mode, p)
		require.ErrorIs(t, err, ErrLink)
		require.False(t, errors.Is(err, fs.ErrNotExist))
	}
	_, err := Follow(gone)
	require.EqualError(t, err, gone+" is a symbolic link to nothing, which does not exist")
	require.ErrorIs(t, err, fs.ErrNotExist)
}
