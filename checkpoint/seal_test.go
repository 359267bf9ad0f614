package checkpoint

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"heat/internal/safefile"
)

// memFS serves a checkpoint's metadata files from memory (the bit-flip
// test opens one tens of thousands of times).
type memFS struct {
	OS
	files map[string][]byte
}

func (m memFS) ReadFile(path string, max int64, _ []byte) ([]byte, error) {
	b, ok := m.files[path]
	if !ok {
		return nil, fs.ErrNotExist
	}
	if int64(len(b)) > max {
		return nil, &safefile.TooLargeError{Path: path, Size: int64(len(b)), Max: max}
	}
	return b, nil
}

func (m memFS) Size(path string) (int64, error) {
	b, ok := m.files[path]
	if !ok {
		return 0, fs.ErrNotExist
	}
	return int64(len(b)), nil
}

// Every single-bit flip in every byte of both metadata files of a
// checkpoint is refused by Open: the seal covers every byte.
func TestEveryMetadataBitFlipRefused(t *testing.T) {
	root := t.TempDir()
	writeField(t, root, []int{20, 14}, 2, 7, Options{Chunk: []int{7, 5}})
	dir := filepath.Join(root, StepName(7))
	group, array := filepath.Join(dir, metaFile), filepath.Join(dir, arrayName, metaFile)
	files := map[string][]byte{group: mustRead(t, group), array: mustRead(t, array)}
	m := memFS{files: files}
	_, err := openFS(m, dir)
	require.NoError(t, err, "the undamaged checkpoint opens")
	flips := 0
	for _, file := range []string{group, array} {
		orig := files[file]
		for i := range orig {
			for bit := range 8 {
				damaged := append([]byte(nil), orig...)
				damaged[i] ^= 1 << bit
				files[file] = damaged
				_, err := openFS(m, dir)
				if err == nil {
					t.Fatalf("%s: flipping bit %d of byte %d (%q) went unseen", filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file), bit, i, orig[i])
				}
				require.True(t, errors.Is(err, ErrChecksum) || errors.Is(err, ErrIncompatible), "%v", err)
				flips++
			}
		}
		files[file] = orig
	}
	t.Logf("%d single-bit flips, every one refused", flips)
}

// A step that disagrees with the folder's name is refused, even sealed.
func TestStepMustMatchFolder(t *testing.T) {
	root := t.TempDir()
	writeField(t, root, []int{12, 10}, 1, 60, Options{})
	dir := filepath.Join(root, StepName(60))
	editGroup(t, dir, func(heat map[string]any) { heat["step"] = 61 })
	_, err := Open(dir)
	require.ErrorIs(t, err, ErrChecksum)
	require.ErrorContains(t, err, "step 61")
	require.ErrorContains(t, err, StepName(60))
}

// Absurd shapes or chunk shapes, sealed as a forger would, are refused at
// once and without allocating by them (under a memory limit far below
// the field they describe).
func TestAbsurdShapesRefusedWithoutAllocating(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(256 << 20))
	for _, c := range []struct{ shape, chunk []int }{
		{[]int{3000000, 3000000}, []int{1, 1}},
		{[]int{3000000, 3000000}, []int{3000, 3000}},
		{[]int{1 << 40, 1 << 20}, []int{1 << 12, 1 << 12}},
	} {
		root := t.TempDir()
		writeField(t, root, []int{8, 8}, 1, 1, Options{})
		dir := filepath.Join(root, StepName(1))
		editArray(t, dir, func(a map[string]any) {
			a["shape"] = c.shape
			a["chunk_grid"].(map[string]any)["configuration"] = map[string]any{"chunk_shape": c.chunk}
		})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		_, err := Open(dir)
		elapsed := time.Since(start)
		runtime.ReadMemStats(&after)
		require.ErrorIs(t, err, ErrIncompatible, "%v in chunks of %v", c.shape, c.chunk)
		require.Less(t, elapsed, time.Second)
		require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "allocated by the absurd shape")
		// Unsealed, the same edit is damage.
		b := mustRead(t, filepath.Join(dir, arrayName, metaFile))
		require.NoError(t, os.WriteFile(filepath.Join(dir, arrayName, metaFile), append(b, ' '), 0o644))
		_, err = Open(dir)
		require.ErrorIs(t, err, ErrChecksum)
	}
}
