package checkpoint

import (
	"bytes"
	"path/filepath"
	"testing"

	"heat/decomp"
)

// fuzzSeed is a small real checkpoint's metadata, the fuzzers' start.
func fuzzSeed(f *testing.F) (group, array []byte) {
	f.Helper()
	root := f.TempDir()
	writeField(f, root, []int{9, 7}, 2, 3, Options{Chunk: []int{4, 4}})
	dir := filepath.Join(root, StepName(3))
	return mustRead(f, filepath.Join(dir, metaFile)), mustRead(f, filepath.Join(dir, arrayName, metaFile))
}

// The metadata reader takes any bytes without a panic, a hang or an
// allocation sized by them, and what it accepts is self-consistent.
func FuzzOpenMetadata(f *testing.F) {
	group, array := fuzzSeed(f)
	f.Add(group, array)
	root := f.TempDir()
	writeField(f, root, []int{9, 7}, 2, 3, Options{Shard: []int{8, 7}, Chunk: []int{4, 7}})
	sharded := filepath.Join(root, StepName(3))
	f.Add(mustRead(f, filepath.Join(sharded, metaFile)), mustRead(f, filepath.Join(sharded, arrayName, metaFile)))
	f.Add([]byte("{}"), array)
	f.Add(group, []byte(`{"zarr_format":3,"node_type":"array","shape":[3000000,3000000]}`))
	dir := filepath.Join("fuzz", StepName(3))
	f.Fuzz(func(t *testing.T, group, array []byte) {
		m := memFS{files: map[string][]byte{filepath.Join(dir, metaFile): group, filepath.Join(dir, arrayName, metaFile): array}}
		ck, err := openFS(m, dir)
		if err != nil {
			return
		}
		if ck.Meta().Step != 3 {
			t.Fatalf("accepted step %d in folder %s", ck.Meta().Step, dir)
		}
		n := 1
		for a, s := range ck.grid.shape {
			if s < 1 || ck.grid.chunk[a] < 1 {
				t.Fatalf("accepted shape %v, chunk %v", ck.grid.shape, ck.grid.chunk)
			}
			n *= (s + ck.grid.chunk[a] - 1) / ck.grid.chunk[a]
		}
		if n != len(ck.keys) || n > maxChunks {
			t.Fatalf("%d chunk keys for %d chunks", len(ck.keys), n)
		}
	})
}

// The chunk decoder takes any bytes: a wrong frame is an error, never a
// panic, and never more than the chunk's size decoded.
func FuzzDecompressChunk(f *testing.F) {
	raw := bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8}, 64)
	good, err := compress(1, raw, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good, len(raw))
	f.Add(good[:len(good)/2], len(raw))
	f.Add([]byte("not zstd"), 8)
	f.Fuzz(func(t *testing.T, data []byte, size int) {
		if size < 0 || size > 1<<16 {
			return // a chunk's size comes from the sealed metadata, not the bytes
		}
		out, err := decompress(data, size, nil)
		if err == nil && len(out) != size {
			t.Fatalf("decoded %d bytes for a chunk of %d", len(out), size)
		}
	})
}

// The shard decoder takes any bytes: a damaged index, an entry outside the
// file or a bad inner frame is an error, never a panic, and a decoded shard
// has its full size.
func FuzzDecodeShard(f *testing.F) {
	shard, inner := []int{8, 6}, []int{4, 3}
	raw := make([]byte, 8*48)
	for i := range raw {
		raw[i] = byte(i)
	}
	good, err := encodeShardFile(raw, shard, inner, 1, 2)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add(append([]byte{0}, good...))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := decodeShard(data, shard, inner, decomp.Box{Lo: []int{0, 0}, Hi: shard}, 1, nil)
		if err == nil && len(out) != len(raw) {
			t.Fatalf("decoded %d bytes for a shard of %d", len(out), len(raw))
		}
	})
}
