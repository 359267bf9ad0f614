package checkpoint

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Damage to a chunk or to the metadata is found by Verify, which names the
// file, and makes Read fail on every rank with the matching sentinel.
func TestCorruption(t *testing.T) {
	shape := []int{37, 29}
	chunkFile := func(dir string) string { return filepath.Join(dir, "u", "c", "2", "3") }
	cases := []struct {
		name     string
		damage   func(t *testing.T, dir string)
		sentinel error
		file     func(dir string) string // the file the errors must name
		open     bool                    // whether Open already fails
	}{
		{
			name: "flipped byte",
			damage: func(t *testing.T, dir string) {
				b := mustRead(t, chunkFile(dir))
				b[len(b)/2] ^= 0x10
				require.NoError(t, os.WriteFile(chunkFile(dir), b, 0o644))
			},
			sentinel: ErrChecksum, file: chunkFile,
		},
		{
			name: "truncated",
			damage: func(t *testing.T, dir string) {
				b := mustRead(t, chunkFile(dir))
				require.NoError(t, os.WriteFile(chunkFile(dir), b[:len(b)-5], 0o644))
			},
			sentinel: ErrChecksum, file: chunkFile,
		},
		{
			name:     "deleted",
			damage:   func(t *testing.T, dir string) { require.NoError(t, os.Remove(chunkFile(dir))) },
			sentinel: ErrIncomplete, file: chunkFile,
		},
		{
			// Garbage whose size and CRC the metadata records: only
			// decompression can tell.
			name: "undecodable",
			damage: func(t *testing.T, dir string) {
				garbage := []byte("definitely not a zstd frame")
				require.NoError(t, os.WriteFile(chunkFile(dir), garbage, 0o644))
				editGroup(t, dir, func(heat map[string]any) {
					heat["chunks"].(map[string]any)["c/2/3"] = map[string]any{"crc32c": crc32c(garbage), "bytes": len(garbage)}
				})
			},
			sentinel: ErrChecksum, file: chunkFile,
		},
		{
			name: "group zarr.json damaged",
			damage: func(t *testing.T, dir string) {
				f := filepath.Join(dir, "zarr.json")
				b := mustRead(t, f)
				require.NoError(t, os.WriteFile(f, b[:len(b)/2], 0o644))
			},
			sentinel: ErrChecksum, file: func(dir string) string { return filepath.Join(dir, "zarr.json") }, open: true,
		},
		{
			name: "array zarr.json damaged",
			damage: func(t *testing.T, dir string) {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "u", "zarr.json"), []byte("{\"zarr_format\": 3,"), 0o644))
			},
			sentinel: ErrChecksum, file: func(dir string) string { return filepath.Join(dir, "u", "zarr.json") }, open: true,
		},
		{
			name:     "group zarr.json missing",
			damage:   func(t *testing.T, dir string) { require.NoError(t, os.Remove(filepath.Join(dir, "zarr.json"))) },
			sentinel: ErrIncomplete, file: func(dir string) string { return filepath.Join(dir, "zarr.json") }, open: true,
		},
		{
			name: "unknown format version",
			damage: func(t *testing.T, dir string) {
				editGroup(t, dir, func(heat map[string]any) { heat["format"] = Format + 1 })
			},
			sentinel: ErrIncompatible, file: func(dir string) string { return filepath.Join(dir, "zarr.json") }, open: true,
		},
		{
			name: "other data type",
			damage: func(t *testing.T, dir string) {
				editArray(t, dir, func(a map[string]any) { a["data_type"] = "float32" })
			},
			sentinel: ErrIncompatible, file: func(dir string) string { return filepath.Join(dir, "u", "zarr.json") }, open: true,
		},
		{
			name: "other codec",
			damage: func(t *testing.T, dir string) {
				editArray(t, dir, func(a map[string]any) {
					a["codecs"].([]any)[1] = map[string]any{"name": "gzip", "configuration": map[string]any{"level": 5}}
				})
			},
			sentinel: ErrIncompatible, file: func(dir string) string { return filepath.Join(dir, "u", "zarr.json") }, open: true,
		},
		{
			name: "unknown member that must be understood",
			damage: func(t *testing.T, dir string) {
				editArray(t, dir, func(a map[string]any) { a["sharding"] = map[string]any{"name": "x"} })
			},
			sentinel: ErrIncompatible, file: func(dir string) string { return filepath.Join(dir, "u", "zarr.json") }, open: true,
		},
		{
			name: "chunk shape for other dimensions",
			damage: func(t *testing.T, dir string) {
				editArray(t, dir, func(a map[string]any) {
					a["chunk_grid"].(map[string]any)["configuration"] = map[string]any{"chunk_shape": []int{7, 5, 1}}
				})
			},
			sentinel: ErrIncompatible, file: func(dir string) string { return filepath.Join(dir, "u", "zarr.json") }, open: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeField(t, root, shape, 2, 1, Options{Chunk: []int{7, 5}})
			dir := filepath.Join(root, StepName(1))
			tc.damage(t, dir)
			file := tc.file(dir)

			errs := Verify(dir)
			require.Len(t, errs, 1, "%v", errs)
			require.ErrorIs(t, errs[0], tc.sentinel)
			require.Contains(t, errs[0].Error(), file)

			_, err := Open(dir)
			if tc.open {
				require.ErrorIs(t, err, tc.sentinel)
				require.Contains(t, err.Error(), file)
				return
			}
			require.NoError(t, err)
			// Read on 3 ranks: every rank fails, with the sentinel and the
			// chunk file, whichever rank read the chunk.
			errs = readRanks(t, dir, 3, Options{Workers: 2}, func(idx []int) float64 { return value(shape, idx, 1) })
			requireAllFail(t, errs, tc.sentinel, file)
		})
	}
}

// Verify reports every bad chunk, in chunk order.
func TestVerifyReportsEveryChunk(t *testing.T) {
	root := t.TempDir()
	writeField(t, root, []int{37, 29}, 3, 1, Options{Chunk: []int{7, 5}})
	dir := filepath.Join(root, StepName(1))
	require.Empty(t, Verify(dir))
	require.NoError(t, os.Remove(filepath.Join(dir, "u", "c", "4", "1")))
	f := filepath.Join(dir, "u", "c", "0", "5")
	b := mustRead(t, f)
	b[0] ^= 1
	require.NoError(t, os.WriteFile(f, b, 0o644))
	errs := Verify(dir)
	require.Len(t, errs, 2)
	require.ErrorIs(t, errs[0], ErrChecksum)
	require.Contains(t, errs[0].Error(), filepath.Join("c", "0", "5"))
	require.ErrorIs(t, errs[1], ErrIncomplete)
	require.Contains(t, errs[1].Error(), filepath.Join("c", "4", "1"))
}

// editGroup rewrites the group metadata of dir through f.
func editGroup(t *testing.T, dir string, f func(heat map[string]any)) {
	t.Helper()
	editJSON(t, filepath.Join(dir, "zarr.json"), func(m map[string]any) {
		f(m["attributes"].(map[string]any)["heat"].(map[string]any))
	})
	reseal(t, dir)
}

// editArray rewrites the array metadata of dir through f.
func editArray(t *testing.T, dir string, f func(m map[string]any)) {
	t.Helper()
	editJSON(t, filepath.Join(dir, "u", "zarr.json"), f)
	reseal(t, dir)
}

// reseal seals dir's metadata again after an edit, as a forger who knows
// the format would: the array document's CRC32-C into the group, the
// group's own seal. What Open then refuses, it refuses for what the edit
// says, not for a broken seal.
func reseal(t *testing.T, dir string) {
	t.Helper()
	ab := mustRead(t, filepath.Join(dir, "u", "zarr.json"))
	group := filepath.Join(dir, "zarr.json")
	var m map[string]any
	require.NoError(t, json.Unmarshal(mustRead(t, group), &m))
	heat := m["attributes"].(map[string]any)["heat"].(map[string]any)
	heat["array_crc32c"] = fmt.Sprintf("%08x", crc32c(ab))
	heat["metadata_crc32c"] = sealZero
	b, err := json.MarshalIndent(m, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(group, seal(b), 0o644))
}

func editJSON(t *testing.T, file string, f func(m map[string]any)) {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(mustRead(t, file), &m))
	f(m)
	b, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, b, 0o644))
}
