package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A regular file reads whole up to its bound, and into the caller's
// buffer when it has room.
func TestReadFileRegular(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte("step-00000010\n"), 0o644))
	b, err := ReadFile(p, 14)
	require.NoError(t, err)
	require.Equal(t, "step-00000010\n", string(b))

	buf := make([]byte, 0, 64)
	b, err = ReadFileInto(p, 64, buf)
	require.NoError(t, err)
	require.Equal(t, "step-00000010\n", string(b))
	require.Same(t, &buf[:1][0], &b[0], "read into the buffer given")

	f, st, err := Open(p)
	require.NoError(t, err)
	defer f.Close()
	require.EqualValues(t, 14, st.Size())
}

// A file over its bound is refused by its size, named with the bound,
// before anything is read or allocated: a 2 GiB sparse file in a second,
// with no memory to speak of.
func TestReadFileBound(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(p, []byte("0123456789"), 0o644))
	_, err := ReadFile(p, 9)
	require.ErrorIs(t, err, ErrTooLarge)
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	require.Equal(t, TooLargeError{Path: p, Size: 10, Max: 9}, *tl)
	require.ErrorContains(t, err, p+" is 10 bytes, more than the 9")

	sparse := filepath.Join(dir, "sparse")
	f, err := os.Create(sparse)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(2<<30))
	require.NoError(t, f.Close())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err = ReadFile(sparse, 4096)
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, ErrTooLarge)
	require.ErrorContains(t, err, "2147483648 bytes")
	require.Less(t, elapsed, time.Second)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "allocated for a file it refused")
}

// A directory, a link (to a file or to nothing) and a missing file are
// refused, each saying what is there; a link's target is neither read nor
// named.
func TestNotRegularRefused(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "secret-target")
	require.NoError(t, os.WriteFile(target, []byte("secret content"), 0o644))
	link := filepath.Join(dir, "link")
	dangling := filepath.Join(dir, "dangling")
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere"), dangling))
	for _, c := range []struct {
		path, kind string
	}{
		{sub, "a directory"},
		{link, "a symbolic link"},
		{dangling, "a symbolic link"},
	} {
		for name, read := range map[string]func(string) error{
			"ReadFile": func(p string) error { _, err := ReadFile(p, 1<<20); return err },
			"Open":     func(p string) error { f, _, err := Open(p); closeIf(f); return err },
			"Stat":     func(p string) error { _, err := Stat(p); return err },
		} {
			err := read(c.path)
			require.ErrorIs(t, err, ErrNotRegular, "%s %s", name, c.path)
			require.EqualError(t, err, c.path+" is "+c.kind+", not a regular file", name)
			require.NotContains(t, err.Error(), "secret", name)
		}
	}
	_, err := ReadFile(filepath.Join(dir, "missing"), 10)
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.False(t, errors.Is(err, ErrNotRegular))
}

func closeIf(f *os.File) {
	if f != nil {
		f.Close()
	}
}

func TestKind(t *testing.T) {
	for m, want := range map[fs.FileMode]string{
		fs.ModeNamedPipe:                  "a named pipe (FIFO)",
		fs.ModeDevice | fs.ModeCharDevice: "a character device",
		fs.ModeDevice:                     "a block device",
		fs.ModeSocket:                     "a socket",
		fs.ModeDir:                        "a directory",
		fs.ModeSymlink:                    "a symbolic link",
		fs.ModeIrregular:                  "an irregular file",
		0:                                 "a regular file",
		fs.ModeSymlink | fs.ModeNamedPipe: "a symbolic link",
	} {
		require.Equal(t, want, Kind(m), "%v", m)
	}
}
