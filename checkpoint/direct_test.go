package checkpoint

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Files written around the page cache hold exactly the bytes given, at
// every length around the block and the staging buffer's sizes (the padded
// last block is truncated away), read back through the ordinary path.
func TestDirectWritesExactBytes(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, directAlign - 1, directAlign, directAlign + 1, directStage - 1, directStage, directStage + 1, 2*directStage + directAlign + 7} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		p := filepath.Join(dir, "f")
		ok, err := writeDirect(p, bytes.NewReader(data))
		require.NoError(t, err, "%d bytes", n)
		if !ok {
			t.Skipf("%s refuses O_DIRECT: the buffered write is used there", dir)
		}
		got, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Equal(t, len(data), len(got), "%d bytes: the file's length", n)
		require.True(t, bytes.Equal(data, got), "%d bytes: the file's contents", n)
	}
	// Through OS.WriteFile: a large reader goes direct, a small one
	// buffered; both overwrite a longer file whole.
	for _, n := range []int{100, 3 << 20} {
		p := filepath.Join(dir, "g")
		require.NoError(t, os.WriteFile(p, bytes.Repeat([]byte{9}, 5<<20), 0o644))
		data := bytes.Repeat([]byte{1, 2, 3}, n/3)
		require.NoError(t, OS{}.WriteFile(p, bytes.NewReader(data)))
		got, err := os.ReadFile(p)
		require.NoError(t, err)
		require.True(t, bytes.Equal(data, got), "%d bytes over a longer file", len(data))
	}
}

// A file in a missing directory is an error of the direct path, not a
// reason to try the buffered one.
func TestDirectMissingDirectory(t *testing.T) {
	p := filepath.Join(t.TempDir(), "missing", "f")
	_, err := writeDirect(p, bytes.NewReader(make([]byte, 2*directMin)))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorIs(t, OS{}.WriteFile(p, bytes.NewReader(make([]byte, 2*directMin))), os.ErrNotExist)
}
