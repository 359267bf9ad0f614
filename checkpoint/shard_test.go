package checkpoint

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/decomp"
)

// Sharded checkpoints: N writers, M readers, every value back bit for bit;
// one file per shard (shards the size of the boxes: one per writer); the
// metadata says sharding_indexed; a flipped byte anywhere in a shard is
// refused.
func TestShardedRoundTrip(t *testing.T) {
	for _, c := range []struct {
		shape, shard, chunk []int
		writers, files      int
	}{
		{[]int{40, 30}, []int{20, 30}, nil, 2, 2}, // a shard per box
		{[]int{40, 30}, []int{20, 15}, []int{5, 5}, 4, 4},
		{[]int{37, 29}, []int{16, 16}, []int{4, 8}, 3, 6}, // shards past the edge
		{[]int{9, 11, 10}, []int{9, 6, 10}, []int{3, 3, 5}, 2, 2},
	} {
		root := t.TempDir()
		writeField(t, root, c.shape, c.writers, 2, Options{Shard: c.shard, Chunk: c.chunk, Workers: 2})
		dir := filepath.Join(root, StepName(2))
		var files []string
		require.NoError(t, filepath.Walk(filepath.Join(dir, arrayName, "c"), func(p string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() {
				files = append(files, p)
			}
			return err
		}))
		require.Len(t, files, c.files, "%v in shards of %v", c.shape, c.shard)
		array := string(mustRead(t, filepath.Join(dir, arrayName, metaFile)))
		require.Contains(t, array, `"sharding_indexed"`)
		require.Contains(t, array, `"crc32c"`)
		for _, readers := range []int{1, 3, 5} {
			for r, err := range readRanks(t, dir, readers, Options{Workers: 2}, func(idx []int) float64 { return value(c.shape, idx, 2) }) {
				require.NoError(t, err, "%v: reader %d of %d", c.shape, r, readers)
			}
		}
		require.Empty(t, Verify(dir))
		b := mustRead(t, files[0])
		b[len(b)-10] ^= 4 // in the index
		require.NoError(t, os.WriteFile(files[0], b, 0o644))
		errs := Verify(dir)
		require.Len(t, errs, 1)
		require.ErrorIs(t, errs[0], ErrChecksum)
	}
}

// A shard's index and entries are checked on their own too (a shard whose
// file CRC32-C a forger fixed up).
func TestDecodeShardRefusesDamage(t *testing.T) {
	shard, inner := []int{8, 8}, []int{4, 4}
	raw := make([]byte, 8*64)
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	data, err := encodeShardFile(raw, shard, inner, 1, 3)
	require.NoError(t, err)
	all := decomp.Box{Lo: []int{0, 0}, Hi: shard}
	got, err := decodeShard(data, shard, inner, all, 2, nil)
	require.NoError(t, err)
	require.Equal(t, raw, got)
	// Decoding what a box needs touches only the inner chunks it crosses.
	part, err := decodeShard(data, shard, inner, decomp.Box{Lo: []int{0, 0}, Hi: []int{3, 3}}, 1, make([]byte, len(raw)))
	require.NoError(t, err)
	require.Equal(t, raw[:32], part[:32], "the first row of the first inner chunk")
	require.Equal(t, make([]byte, 32), part[8*4:8*8], "the second inner chunk left alone")
	bad := append([]byte(nil), data...)
	bad[len(bad)-20] ^= 1 // an index entry: the index CRC
	_, err = decodeShard(bad, shard, inner, all, 1, nil)
	require.ErrorContains(t, err, "CRC32-C")
	_, err = decodeShard(data[:10], shard, inner, all, 1, nil)
	require.ErrorContains(t, err, "too short")
	bad = append([]byte(nil), data...)
	bad[3] ^= 0x55 // an inner chunk's frame
	_, err = decodeShard(bad, shard, inner, all, 1, nil)
	require.Error(t, err)
	_, _, err = shardShapes([]int{16, 16}, []int{8, 8}, []int{3, 4})
	require.ErrorContains(t, err, "does not divide")
}

// countFS counts the bytes read.
type countFS struct {
	OS
	n *atomic.Int64
}

func (c countFS) ReadFile(path string, max int64, buf []byte) ([]byte, error) {
	b, err := c.OS.ReadFile(path, max, buf)
	c.n.Add(int64(len(b)))
	return b, err
}

func (c countFS) ReadRange(path string, off int64, n int, buf []byte) ([]byte, error) {
	b, err := c.OS.ReadRange(path, off, n, buf)
	c.n.Add(int64(len(b)))
	return b, err
}

// A reader whose box takes part of a shard reads only that part's inner
// chunks and the index (range reads), not the shard; a damaged inner
// chunk it reads is still refused.
func TestShardRangeReads(t *testing.T) {
	shape := []int{40, 32}
	root := t.TempDir()
	writeField(t, root, shape, 1, 4, Options{Shard: shape, Chunk: []int{10, 8}})
	dir := filepath.Join(root, StepName(4))
	shard := filepath.Join(dir, arrayName, "c", "0", "0")
	st, err := os.Stat(shard)
	require.NoError(t, err)
	var read atomic.Int64
	for r, err := range readRanks(t, dir, 4, Options{FS: countFS{n: &read}}, func(idx []int) float64 { return value(shape, idx, 4) }) {
		require.NoError(t, err, "reader %d", r)
	}
	require.Less(t, read.Load(), 2*st.Size(), "4 readers of a quarter each read about one shard's worth, not four")

	b := mustRead(t, shard)
	b[40] ^= 0x20 // inside the first inner chunk's compressed data (its frame checksum catches it)
	require.NoError(t, os.WriteFile(shard, b, 0o644))
	errs := readRanks(t, dir, 4, Options{}, func(idx []int) float64 { return value(shape, idx, 4) })
	require.ErrorIs(t, errs[0], ErrChecksum, "the reader of the damaged inner chunk")
}

// WriterShards ("auto"): shards of whole inner chunks, at most one per
// writer along each axis, none past the largest chunk a file may hold, the
// inner chunk dividing the box where a divisor lies near the default; a
// checkpoint so sharded is one file per writer and reads back on any count.
func TestWriterShards(t *testing.T) {
	for _, c := range []struct {
		shape, dims, chunk []int
		files              int // shard files of the checkpoint
	}{
		{[]int{40, 30}, []int{2, 1}, nil, 2},
		{[]int{37, 29}, []int{2, 2}, nil, 4},  // uneven boxes
		{[]int{37, 29}, []int{3, 1}, nil, 3},  // 13-row boxes, 13 prime
		{[]int{4099, 7}, []int{2, 1}, nil, 2}, // 2050 = 2·5²·41
		{[]int{64, 48}, []int{2, 2}, []int{5, 7}, 4},
		{[]int{9, 11, 10}, []int{2, 1, 1}, nil, 2},
		{[]int{1 << 15, 1 << 14}, []int{1, 1}, nil, 4}, // 2^29 cells: over 1 GiB a file
	} {
		shard, inner, err := WriterShards(c.shape, c.dims, c.chunk)
		require.NoError(t, err, "%v over %v", c.shape, c.dims)
		files := 1
		for a, n := range c.shape {
			require.Zero(t, shard[a]%inner[a], "%v: inner %v divides the shard %v", c.shape, inner, shard)
			per := (n + shard[a] - 1) / shard[a]
			if prod(c.shape)/prod(c.dims) <= maxChunkValues {
				require.LessOrEqual(t, per, c.dims[a], "%v axis %d: a shard per writer", c.shape, a)
			}
			files *= per
		}
		require.LessOrEqual(t, prod(shard), maxChunkValues)
		require.Equal(t, c.files, files, "%v over %v: shards %v of %v", c.shape, c.dims, shard, inner)
		if c.chunk != nil {
			require.Equal(t, c.chunk, inner)
		}
		if prod(c.shape) > 1<<20 {
			continue // too big to write here
		}
		ranks := prod(c.dims)
		root := t.TempDir()
		writeField(t, root, c.shape, ranks, 2, Options{Shard: shard, Chunk: inner, Workers: 2})
		dir := filepath.Join(root, StepName(2))
		n := 0
		require.NoError(t, filepath.Walk(filepath.Join(dir, arrayName, "c"), func(p string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() {
				n++
			}
			return err
		}))
		require.Equal(t, c.files, n, "%v: files written", c.shape)
		for _, readers := range []int{1, 3} {
			for r, err := range readRanks(t, dir, readers, Options{Workers: 2}, func(idx []int) float64 { return value(c.shape, idx, 2) }) {
				require.NoError(t, err, "%v: reader %d of %d", c.shape, r, readers)
			}
		}
	}
	// The inner chunk of a box with a divisor near the default divides it.
	shard, inner, err := WriterShards([]int{4096, 4096}, []int{2, 1}, nil)
	require.NoError(t, err)
	require.Equal(t, []int{2048, 4096}, shard, "inner %v", inner)
	_, _, err = WriterShards([]int{8, 8}, []int{2}, nil)
	require.Error(t, err)
}

// failAfter is a writer that takes n bytes, then fails.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, errInjected
	}
	f.n -= len(p)
	return len(p), nil
}

// A shard compresses to the same file whatever the worker count (more
// workers than chunks too), which decodes back; a write failing at any
// point is returned.
func TestShardFileWorkers(t *testing.T) {
	shard, inner := []int{16, 12}, []int{4, 3}
	raw := make([]byte, 8*16*12)
	for i := range 16 * 12 {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(float64(i)*0.37))
	}
	want, err := encodeShardFile(raw, shard, inner, 1, 1)
	require.NoError(t, err)
	for _, workers := range []int{2, 3, 16, 100} {
		got, err := encodeShardFile(raw, shard, inner, 1, workers)
		require.NoError(t, err)
		require.Equal(t, want, got, "%d workers", workers)
	}
	back, err := decodeShard(want, shard, inner, decomp.Box{Lo: []int{0, 0}, Hi: shard}, 2, nil)
	require.NoError(t, err)
	require.Equal(t, raw, back)
	for _, workers := range []int{1, 3} {
		for _, at := range []int{0, 1, len(want) / 2, len(want) - 5} {
			e, release, err := encodeRawShard(raw, shard, inner, 1, workers)
			require.NoError(t, err)
			_, err = e.WriteTo(&failAfter{n: at})
			release()
			require.ErrorIs(t, err, errInjected, "%d workers, failing after %d bytes", workers, at)
		}
	}
}
