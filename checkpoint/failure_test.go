package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// A file operation that fails on any one rank, at any point before the
// commit, fails Write on every rank, and leaves the previous checkpoint,
// latest and nothing else behind.
func TestWriteFailureOnOneRank(t *testing.T) {
	shape := []int{37, 29}
	const ranks = 4
	cases := []struct {
		name  string
		rank  int
		fail  func(string, string) error
		parts []string // what every rank's error says
	}{
		{"chunk write fails midway", 1, failNth("WriteFile", "/u/c/", 2), []string{"rank 1", "injected failure"}},
		{"first chunk write fails", 3, failNth("WriteFile", "/u/c/", 1), []string{"rank 3"}},
		{"root not writable", 0, failNth("MkdirAll", ".partial", 1), []string{"rank 0"}},
		{"chunk directory not writable", 2, failNth("MkdirAll", "/u/c/", 1), []string{"rank 2"}},
		{"chunk directory sync fails", 1, failNth("SyncDir", "/u/c", 1), []string{"rank 1"}},
		{"array metadata write fails", 0, failNth("WriteFile", "u/zarr.json", 1), []string{"rank 0", "injected failure"}},
		{"group metadata write fails", 0, failNth("WriteFile", ".partial/zarr.json", 1), []string{"rank 0", "injected failure"}},
		{"metadata sync fails", 0, func(op, path string) error {
			if op == "SyncDir" && strings.HasSuffix(path, partialSuffix) {
				return errInjected
			}
			return nil
		}, []string{"rank 0", "injected failure"}},
		{"rename fails", 0, failNth("Rename", ".partial", 1), []string{"rank 0", "injected failure"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeField(t, root, shape, ranks, 1, Options{Chunk: []int{7, 5}})
			_, errs := writeRanks(root, shape, ranks, 2, func(r int) Options {
				opt := Options{Chunk: []int{7, 5}, Workers: 2}
				if r == tc.rank {
					opt.FS = faultFS{fail: tc.fail}
				}
				return opt
			})
			requireAllFail(t, errs, nil, append(tc.parts, StepName(2))...)
			require.ErrorIs(t, errs[tc.rank], errInjected, "the failing rank keeps its cause")
			requireIntact(t, root, 1, shape)

			// The next write succeeds and reads back.
			writeField(t, root, shape, ranks, 3, Options{Chunk: []int{7, 5}})
			names, err := List(root)
			require.NoError(t, err)
			require.Equal(t, []string{StepName(3), StepName(1)}, names)
			require.Equal(t, StepName(3), latestName(t, root))
		})
	}
}

// When rank 0 cannot even remove the failed .partial, it stays behind,
// is never listed, and the next successful write removes it.
func TestFailedPartialIsCleanedLater(t *testing.T) {
	root := t.TempDir()
	shape := []int{9, 8}
	writeField(t, root, shape, 2, 1, Options{})
	chunkFail := failNth("WriteFile", "/u/c/", 1)
	_, errs := writeRanks(root, shape, 2, 2, func(r int) Options {
		if r != 0 {
			return Options{Chunk: []int{3, 3}}
		}
		return Options{Chunk: []int{3, 3}, FS: faultFS{fail: func(op, path string) error {
			if op == "RemoveAll" && strings.HasSuffix(path, ".partial") && !strings.Contains(path, StepName(1)) {
				if _, err := os.Stat(path); err == nil { // only the removal after the failure
					return errInjected
				}
			}
			return chunkFail(op, path)
		}}}
	})
	requireAllFail(t, errs, nil, "rank 0")
	require.DirExists(t, filepath.Join(root, StepName(2)+partialSuffix))
	names, err := List(root)
	require.NoError(t, err)
	require.Equal(t, []string{StepName(1)}, names)
	path, err := Resolve(root)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, StepName(1)), path)

	writeField(t, root, shape, 2, 3, Options{})
	requireNoPartial(t, root)
}

// A failure after the commit point (updating latest) leaves the new
// checkpoint complete: Write says so, with a valid Info, and latest still
// names the previous checkpoint, which is intact.
func TestFailureAfterCommit(t *testing.T) {
	root := t.TempDir()
	shape := []int{9, 8}
	writeField(t, root, shape, 2, 1, Options{})
	infos, errs := writeRanks(root, shape, 2, 2, func(r int) Options {
		if r != 0 {
			return Options{}
		}
		return Options{FS: faultFS{fail: failNth("WriteFile", "latest.tmp", 1)}}
	})
	requireAllFail(t, errs, nil, StepName(2), "is complete")
	for _, in := range infos {
		require.Equal(t, filepath.Join(root, StepName(2)), in.Path)
		require.Positive(t, in.Bytes)
	}
	require.Equal(t, StepName(1), latestName(t, root))
	require.Empty(t, Verify(filepath.Join(root, StepName(2))))
	require.Empty(t, Verify(filepath.Join(root, StepName(1))))
}

// Rewriting the step latest names, with the final rename failing, puts the
// old checkpoint back and latest on it.
func TestRewriteFailureRestores(t *testing.T) {
	root := t.TempDir()
	shape := []int{9, 8}
	writeField(t, root, shape, 2, 1, Options{})
	_, errs := writeRanks(root, shape, 2, 1, func(r int) Options {
		if r != 0 {
			return Options{}
		}
		return Options{FS: faultFS{fail: failNth("Rename", ".partial", 1)}}
	})
	requireAllFail(t, errs, nil, "rank 0")
	requireIntact(t, root, 1, shape)
}

// requireIntact checks that root holds exactly the complete checkpoint of
// step, latest naming it, and that it verifies and reads back.
func requireIntact(t *testing.T, root string, step int, shape []int) {
	t.Helper()
	names, err := List(root)
	require.NoError(t, err)
	require.Equal(t, []string{StepName(step)}, names)
	require.Equal(t, StepName(step), latestName(t, root))
	requireNoPartial(t, root)
	path := filepath.Join(root, StepName(step))
	require.Empty(t, Verify(path))
	requireAll(t, readRanks(t, path, 3, Options{}, func(idx []int) float64 { return value(shape, idx, step) }))
}

// A checkpoint folder deleted under the writer between its check that the
// array's folder is there and the making of a chunk's folder is not made
// anew: the chunk's folders are made one at a time below the array's, so
// the write fails naming the folder, and nothing is left where it was.
func TestDeletedRootNotMadeAnew(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "checkpoints")
	shape := []int{9, 8}
	var once sync.Once
	_, errs := writeRanks(root, shape, 1, 1, func(int) Options {
		return Options{FS: faultFS{fail: func(op, path string) error {
			if op == "MkdirAll" && strings.HasSuffix(path, filepath.Join(".partial", "u", "c")) {
				once.Do(func() { require.NoError(t, os.RemoveAll(root)) })
			}
			return nil
		}}}
	})
	require.Error(t, errs[0])
	require.Contains(t, errs[0].Error(), "no longer holds")
	require.NoDirExists(t, root, "not made anew by a chunk's folders")
}
