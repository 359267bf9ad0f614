package run

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/io/config"
)

// claimOut takes the output folder out for a fresh run runID of an 8×8
// problem, as prepare does.
func claimOut(t *testing.T, out, runID string, overwrite bool) (*folders, error) {
	t.Helper()
	cfg, err := config.Load("", []string{"grid.shape=[8,8]", "output.dir=" + out})
	require.NoError(t, err)
	return claimFolders(cfg, "", overwrite, runID, false, true, nil, func(string, ...any) {})
}

// The root and the home folder are found as such however they are named
// (a link to either, a path with dots); a folder inside either is not.
func TestSharedFolders(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	links := t.TempDir()
	require.NoError(t, os.Symlink("/", filepath.Join(links, "root")))
	require.NoError(t, os.Symlink(home, filepath.Join(links, "home")))
	for dir, want := range map[string]string{
		"/": "root", "/./": "root", "/tmp/..": "root", filepath.Join(links, "root"): "root",
		home: "home", home + "/": "home", filepath.Join(links, "home"): "home",
		filepath.Join(home, "runs"): "", "/tmp": "", links: "",
	} {
		require.Equal(t, want, sharedFolder(dir), dir)
	}
	err := refuseShared("checkpoint.dir", "/", "checkpoints", "--set checkpoint.dir=DIR")
	var ue UsageError
	require.ErrorAs(t, err, &ue)
	require.EqualError(t, err, "checkpoint.dir / is the root folder: heat does not write a run's checkpoints there; give the run a folder of its own (--set checkpoint.dir=DIR)")
}

// A manifest whose first record cannot be written (a full disk) leaves no
// file behind, so the next run into the folder goes ahead; one whose
// later record fails keeps its first (the run it names is refused as a
// run, not as a broken manifest).
func TestManifestWriteFailureLeavesNothing(t *testing.T) {
	out := t.TempDir()
	calls := 0
	writeManifest = func(f *os.File, b []byte) (int, error) {
		calls++
		return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	defer func() { writeManifest = (*os.File).Write }()
	_, err := claimOut(t, out, "00000000000000aa", false)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Equal(t, 1, calls)
	require.NoFileExists(t, filepath.Join(out, manifestFile), "no empty manifest left to block the folder")

	writeManifest = (*os.File).Write
	f, err := claimOut(t, out, "00000000000000bb", false)
	require.NoError(t, err)
	m, err := readManifest(out)
	require.NoError(t, err)
	require.Equal(t, "00000000000000bb", m.runID)
	require.NoError(t, f.release())
}

// A manifest cut short in its first record, at any byte, names no run and
// is no one's to keep; a file of other text under its name is not taken
// for one.
func TestUnfinishedManifest(t *testing.T) {
	line := `{"heat_manifest":1,"run":"0123456789abcdef"}`
	for n := range len(line) {
		require.True(t, unfinished([]byte(line[:n])), "%q", line[:n])
	}
	for _, text := range []string{line, line + "\n", "my notes\n", `{"heat_manifest":1,"run":"01x`, "\n"} {
		require.False(t, unfinished([]byte(text)), "%q", text)
	}
	for _, text := range []string{"", line[:20], line[:len(line)-2]} {
		out := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(out, manifestFile), []byte(text), 0o644))
		_, err := readManifest(out)
		require.ErrorIs(t, err, errUnfinished, "%q", text)
		f, err := claimOut(t, out, "00000000000000cc", false)
		require.NoError(t, err, "%q", text)
		require.NoError(t, f.release())
	}
	out := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(out, manifestFile), []byte("my notes\n"), 0o644))
	_, err := claimOut(t, out, "00000000000000dd", true)
	require.Error(t, err)
	require.False(t, errors.Is(err, errUnfinished))
	data, err := os.ReadFile(filepath.Join(out, manifestFile))
	require.NoError(t, err)
	require.Equal(t, "my notes\n", string(data), "a file heat cannot read as its own stays")
}

// overlaps is same-or-inside on whole path elements.
func TestOverlaps(t *testing.T) {
	require.True(t, overlaps("/a/b", "/a/b"))
	require.True(t, overlaps("/a/b/c", "/a/b"))
	require.True(t, overlaps("/a/b", "/a/b/c"))
	require.False(t, overlaps("/a/bc", "/a/b"))
	require.False(t, overlaps("/a/b", "/a/bc/d"))
	require.True(t, overlaps("/x", "/"), "everything is inside the root")
	require.False(t, strings.Contains(realParent("/tmp/x"), ".."))
}
