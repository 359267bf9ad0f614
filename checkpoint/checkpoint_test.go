package checkpoint

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
	"heat/field"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// A checkpoint written by W ranks reads back bit for bit on R ranks, with
// chunks that cut across the boxes of both, and leaves the ghosts alone.
func TestRoundTripAcrossRankCounts(t *testing.T) {
	cases := []struct {
		shape []int
		chunk []int
	}{
		{[]int{37, 29}, []int{7, 5}},
		{[]int{37, 29}, nil},
		{[]int{11, 13, 9}, []int{4, 6, 5}},
		{[]int{11, 13, 9}, nil},
	}
	pairs := [][2]int{{1, 1}, {4, 4}, {4, 3}, {2, 6}, {6, 1}}
	for _, tc := range cases {
		for _, p := range pairs {
			w, r := p[0], p[1]
			name := fmt.Sprintf("shape=%v/chunk=%v/write=%d/read=%d", tc.shape, tc.chunk, w, r)
			t.Run(name, func(t *testing.T) {
				root := t.TempDir()
				const step = 7
				infos := writeField(t, root, tc.shape, w, step, Options{Chunk: tc.chunk, Workers: w % 3})
				path := filepath.Join(root, StepName(step))
				for _, in := range infos {
					require.Equal(t, step, in.Step)
					require.Equal(t, path, in.Path)
					require.Equal(t, int64(8*prod(tc.shape)), in.Raw)
					require.Equal(t, infos[0].Bytes, in.Bytes)
					require.Positive(t, in.Bytes)
				}
				errs := readRanks(t, path, r, Options{Workers: r % 4}, func(idx []int) float64 { return value(tc.shape, idx, step) })
				requireAll(t, errs)
			})
		}
	}
}

// Different chunk shapes store the same field: every read is identical.
func TestChunkShapeIndependence(t *testing.T) {
	shape := []int{37, 29}
	for _, chunk := range [][]int{{5, 5}, {37, 1}, {16, 29}, {100, 100}} {
		t.Run(fmt.Sprint(chunk), func(t *testing.T) {
			root := t.TempDir()
			writeField(t, root, shape, 3, 1, Options{Chunk: chunk})
			requireAll(t, readRanks(t, filepath.Join(root, StepName(1)), 5, Options{}, func(idx []int) float64 { return value(shape, idx, 1) }))
			ck, err := Open(filepath.Join(root, StepName(1)))
			require.NoError(t, err)
			for a := range chunk {
				require.Equal(t, min(chunk[a], shape[a]), ck.Chunk()[a], "chunks are cut to the grid")
			}
		})
	}
}

// The metadata documents hold every member the Zarr v3 core specification
// requires, with the values heat promises, and the chunks sit at their
// default-encoded keys at the full chunk shape.
func TestMetadataFollowsSpec(t *testing.T) {
	root := t.TempDir()
	shape, chunk := []int{37, 29}, []int{7, 5}
	writeField(t, root, shape, 4, 3, Options{Chunk: chunk, Level: 3})
	dir := filepath.Join(root, StepName(3))

	var array map[string]any
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(dir, "u", "zarr.json")), &array))
	require.ElementsMatch(t, []string{"zarr_format", "node_type", "shape", "data_type", "chunk_grid",
		"chunk_key_encoding", "fill_value", "codecs", "dimension_names", "attributes"}, keysOf(array))
	require.Equal(t, 3.0, array["zarr_format"])
	require.Equal(t, "array", array["node_type"])
	require.Equal(t, []any{37.0, 29.0}, array["shape"])
	require.Equal(t, "float64", array["data_type"])
	require.Equal(t, map[string]any{"name": "regular", "configuration": map[string]any{"chunk_shape": []any{7.0, 5.0}}}, array["chunk_grid"])
	require.Equal(t, map[string]any{"name": "default", "configuration": map[string]any{"separator": "/"}}, array["chunk_key_encoding"])
	require.Equal(t, "NaN", array["fill_value"])
	require.Equal(t, []any{
		map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "little"}},
		map[string]any{"name": "zstd", "configuration": map[string]any{"level": 3.0, "checksum": true}},
	}, array["codecs"])
	require.Equal(t, []any{"y", "x"}, array["dimension_names"])
	require.Equal(t, map[string]any{}, array["attributes"])

	var group map[string]any
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(dir, "zarr.json")), &group))
	require.ElementsMatch(t, []string{"zarr_format", "node_type", "attributes"}, keysOf(group))
	require.Equal(t, 3.0, group["zarr_format"])
	require.Equal(t, "group", group["node_type"])
	heat := group["attributes"].(map[string]any)["heat"].(map[string]any)
	require.ElementsMatch(t, []string{"format", "step", "time", "ranks", "config", "chunks", "extra", "array_crc32c", "metadata_crc32c"}, keysOf(heat))
	require.Equal(t, float64(Format), heat["format"])
	require.Equal(t, fmt.Sprintf("%08x", crc32c(mustRead(t, filepath.Join(dir, "u", "zarr.json")))), heat["array_crc32c"])
	require.NoError(t, checkSeal(mustRead(t, filepath.Join(dir, "zarr.json"))))
	require.Equal(t, 3.0, heat["step"])
	require.Equal(t, 0.375, heat["time"])
	require.Equal(t, 4.0, heat["ranks"])
	require.Equal(t, map[string]any{"grid": map[string]any{"shape": []any{37.0, 29.0}}, "run": map[string]any{"steps": 3.0}}, heat["config"])
	require.Equal(t, map[string]any{"equation": "heat", "converged": false}, heat["extra"])

	// Every chunk is at u/c/i/j, recorded with its size and CRC32-C, and
	// nothing else is under u/c.
	chunks := heat["chunks"].(map[string]any)
	require.Len(t, chunks, 6*6)
	var files []string
	require.NoError(t, filepath.WalkDir(filepath.Join(dir, "u", "c"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(filepath.Join(dir, "u"), p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	}))
	require.Len(t, files, 36)
	for i := range 6 {
		for j := range 6 {
			key := fmt.Sprintf("c/%d/%d", i, j)
			require.Contains(t, files, key)
			data := mustRead(t, filepath.Join(dir, "u", "c", fmt.Sprint(i), fmt.Sprint(j)))
			rec := chunks[key].(map[string]any)
			require.Equal(t, float64(len(data)), rec["bytes"], key)
			require.Equal(t, float64(crc32c(data)), rec["crc32c"], key)
		}
	}

	// The edge chunk c/5/5 holds rows 35..41 and columns 25..29 at the full
	// chunk shape: cells past the array are the fill value's exact bits.
	raw, err := decompress(mustRead(t, filepath.Join(dir, "u", "c", "5", "5")), 8*7*5, nil)
	require.NoError(t, err)
	for i := range 7 {
		for j := range 5 {
			got := binary.LittleEndian.Uint64(raw[8*(i*5+j):])
			y, x := 35+i, 25+j
			if y < 37 && x < 29 {
				require.Equal(t, math.Float64bits(value(shape, []int{y, x}, 3)), got, "cell %d,%d", y, x)
			} else {
				require.Equal(t, uint64(nanBits), got, "cell %d,%d past the array", y, x)
			}
		}
	}

	ck, err := Open(dir)
	require.NoError(t, err)
	require.Equal(t, shape, ck.Shape())
	require.Equal(t, chunk, ck.Chunk())
	require.Equal(t, 3, ck.Level())
	require.Equal(t, dir, ck.Path())
	require.Equal(t, StepName(3), ck.Name())
	require.Len(t, ck.ChunkKeys(), 36)
	require.Equal(t, "c/0/0", ck.ChunkKeys()[0])
	require.Equal(t, "c/0/1", ck.ChunkKeys()[1])
	m := ck.Meta()
	require.Equal(t, 3, m.Step)
	require.Equal(t, 0.375, m.Time)
	require.Equal(t, 4, m.Ranks)
	require.JSONEq(t, `{"grid":{"shape":[37,29]},"run":{"steps":3}}`, string(m.Config))
	require.Equal(t, map[string]any{"equation": "heat", "converged": false}, m.Extra)
	require.Equal(t, int64(8*37*29), ck.RawBytes())
	require.Greater(t, ck.Ratio(), 0.0)
}

// 3D chunks sit at u/c/i/j/k, and dimension_names are z, y, x.
func TestMetadata3D(t *testing.T) {
	root := t.TempDir()
	writeField(t, root, []int{11, 13, 9}, 2, 0, Options{Chunk: []int{4, 6, 5}})
	dir := filepath.Join(root, StepName(0))
	for _, key := range []string{"c/0/0/0", "c/2/2/1", "c/1/0/1"} {
		require.FileExists(t, filepath.Join(dir, "u", filepath.FromSlash(key)))
	}
	var array map[string]any
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(dir, "u", "zarr.json")), &array))
	require.Equal(t, []any{"z", "y", "x"}, array["dimension_names"])
	require.Empty(t, Verify(dir))
}

// The array metadata of a fixed case matches the golden file
// (go test -run Golden -update rewrites it).
func TestArrayMetadataGolden(t *testing.T) {
	root := t.TempDir()
	writeField(t, root, []int{37, 29}, 2, 1, Options{Chunk: []int{7, 5}})
	got := mustRead(t, filepath.Join(root, StepName(1), "u", "zarr.json"))
	golden := filepath.Join("testdata", "u-zarr.json")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	require.Equal(t, string(mustRead(t, golden)), string(got))
}

// Every chunk frame carries its content size (numcodecs refuses frames
// without one) and a content checksum, small chunks included.
func TestFrameHeaderCarriesContentSize(t *testing.T) {
	for _, chunk := range [][]int{{1, 1}, {2, 3}, {4, 8}, {7, 5}, {37, 29}} {
		t.Run(fmt.Sprint(chunk), func(t *testing.T) {
			root := t.TempDir()
			shape := []int{max(8, chunk[0]), max(8, chunk[1])}
			writeField(t, root, shape, 1, 1, Options{Chunk: chunk})
			data := mustRead(t, filepath.Join(root, StepName(1), "u", "c", "0", "0"))
			size := 8 * chunk[0] * chunk[1]

			// The frame header descriptor, read by hand: bits 7-6 are the
			// content size flag, bit 5 single segment (which implies a
			// content size), bit 2 the content checksum.
			require.Equal(t, []byte{0x28, 0xb5, 0x2f, 0xfd}, data[:4], "zstd magic")
			fhd := data[4]
			require.True(t, fhd>>6 != 0 || fhd&(1<<5) != 0, "frame header descriptor %08b has no content size", fhd)
			require.NotZero(t, fhd&(1<<2), "no content checksum")

			var h zstd.Header
			require.NoError(t, h.Decode(data))
			require.True(t, h.HasFCS)
			require.Equal(t, uint64(size), h.FrameContentSize)
			require.True(t, h.HasCheckSum)
		})
	}
}

// Default chunks hold about 2^18 values, shaped like the grid, no axis
// longer than the grid's.
func TestDefaultChunk(t *testing.T) {
	cases := []struct{ shape, want []int }{
		{[]int{37, 29}, []int{37, 29}},
		{[]int{1024, 1024}, []int{512, 512}},
		{[]int{4096, 1024}, []int{1024, 256}},
		{[]int{512, 512, 512}, []int{64, 64, 64}},
		{[]int{2, 1000000}, []int{1, 262144}},
		{[]int{3, 3, 10000000}, []int{1, 1, 262144}},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, DefaultChunk(tc.shape), "shape %v", tc.shape)
	}
	for _, shape := range [][]int{{1000, 3000}, {100, 200, 300}, {7, 100000}, {5000, 5000}} {
		c := DefaultChunk(shape)
		n := prod(c)
		require.InDelta(t, 1<<18, n, 0.1*(1<<18), "shape %v chunk %v", shape, c)
		for a := range c {
			require.LessOrEqual(t, c[a], shape[a])
			require.GreaterOrEqual(t, c[a], 1)
		}
	}
}

// After five checkpoints with Keep 2, the newest two remain and latest
// names the newest.
func TestKeep(t *testing.T) {
	root := t.TempDir()
	shape := []int{37, 29}
	for step := 1; step <= 5; step++ {
		writeField(t, root, shape, 3, 100*step, Options{Chunk: []int{10, 10}, Keep: 2})
	}
	names, err := List(root)
	require.NoError(t, err)
	require.Equal(t, []string{StepName(500), StepName(400)}, names)
	require.Equal(t, StepName(500), latestName(t, root))
	require.ElementsMatch(t, []string{StepName(500), StepName(400), latestFile}, dirNames(t, root))
	path, err := Resolve(root)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, StepName(500)), path)
	requireAll(t, readRanks(t, path, 2, Options{}, func(idx []int) float64 { return value(shape, idx, 500) }))
}

// Keep 0 keeps everything.
func TestKeepAll(t *testing.T) {
	root := t.TempDir()
	for step := 1; step <= 3; step++ {
		writeField(t, root, []int{9, 8}, 2, step, Options{})
	}
	names, err := List(root)
	require.NoError(t, err)
	require.Equal(t, []string{StepName(3), StepName(2), StepName(1)}, names)
}

// Writing a step that exists already (a rerun) replaces it, and latest
// names it.
func TestRewriteSameStep(t *testing.T) {
	root := t.TempDir()
	shape := []int{37, 29}
	writeField(t, root, shape, 2, 1, Options{})
	writeField(t, root, shape, 2, 1, Options{Chunk: []int{5, 5}})
	require.Equal(t, StepName(1), latestName(t, root))
	ck, err := Open(filepath.Join(root, StepName(1)))
	require.NoError(t, err)
	require.Equal(t, []int{5, 5}, ck.Chunk())
	requireNoPartial(t, root)

	writeField(t, root, shape, 2, 2, Options{})
	writeField(t, root, shape, 3, 1, Options{Chunk: []int{6, 6}})
	names, err := List(root)
	require.NoError(t, err)
	require.Equal(t, []string{StepName(2), StepName(1)}, names)
	require.Equal(t, StepName(1), latestName(t, root), "latest names the checkpoint written last")
	requireNoPartial(t, root)
	require.Empty(t, Verify(filepath.Join(root, StepName(1))))
}

// List and Resolve never return a .partial directory, Resolve falls back
// when latest names something unusable, and finds nothing in an empty root.
func TestListAndResolve(t *testing.T) {
	root := t.TempDir()
	_, err := Resolve(root)
	require.ErrorIs(t, err, fs.ErrNotExist)
	names, err := List(filepath.Join(root, "missing"))
	require.NoError(t, err)
	require.Empty(t, names)

	shape := []int{9, 8}
	writeField(t, root, shape, 1, 1, Options{})
	writeField(t, root, shape, 1, 2, Options{})
	// A dead writer's partial checkpoint of a later step, complete-looking.
	partial := filepath.Join(root, StepName(3)+partialSuffix)
	require.NoError(t, os.CopyFS(partial, os.DirFS(filepath.Join(root, StepName(2)))))
	require.NoError(t, os.Mkdir(filepath.Join(root, "step-12"), 0o755))   // too few digits
	require.NoError(t, os.Mkdir(filepath.Join(root, StepName(9)), 0o755)) // no zarr.json
	names, err = List(root)
	require.NoError(t, err)
	require.Equal(t, []string{StepName(2), StepName(1)}, names)
	path, err := Resolve(root)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, StepName(2)), path)
	_, err = Open(partial)
	require.ErrorIs(t, err, ErrIncomplete)

	// latest names a checkpoint whose metadata is gone: fall back.
	require.NoError(t, os.Remove(filepath.Join(root, StepName(2), "u", "zarr.json")))
	path, err = Resolve(root)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, StepName(1)), path)

	// latest holds garbage: fall back too.
	require.NoError(t, os.WriteFile(filepath.Join(root, latestFile), []byte("../../etc\n"), 0o644))
	_, err = Latest(root)
	require.Error(t, err)
	path, err = Resolve(root)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, StepName(1)), path)

	// The next successful write removes the dead writer's leftovers.
	writeField(t, root, shape, 2, 4, Options{})
	require.NoDirExists(t, partial)
	requireNoPartial(t, root)
}

// Bad arguments fail on every rank without touching the root.
func TestWriteRejectsBadArguments(t *testing.T) {
	shape := []int{9, 8}
	cases := map[string]Options{
		"chunk axes":     {Chunk: []int{3}},
		"chunk zero":     {Chunk: []int{3, 0}},
		"level":          {Level: 23},
		"negative keep":  {Keep: -1},
		"negative works": {Workers: -2},
	}
	for name, opt := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			_, errs := writeRanks(root, shape, 3, 1, func(int) Options { return opt })
			requireAllFail(t, errs, nil, "checkpoint:")
			require.Empty(t, dirNames(t, root))
		})
	}
	t.Run("config not JSON", func(t *testing.T) {
		root := t.TempDir()
		g, _ := decomp.New(shape, 2, nil, nil)
		errs := make([]error, 2)
		require.NoError(t, local.Run(2, func(c comm.Comm) error {
			lay, u := rankField(g, c.Rank(), 1, func([]int) float64 { return 1 })
			_, errs[c.Rank()] = Write(c, g, lay, u, root, Meta{Step: 1, Config: []byte("{oops")}, Options{})
			return nil
		}))
		requireAllFail(t, errs, nil, "rank 0")
		require.Contains(t, errs[0].Error(), "not valid JSON")
	})
	t.Run("layout of another box", func(t *testing.T) {
		root := t.TempDir()
		g, _ := decomp.New(shape, 2, nil, nil)
		errs := make([]error, 2)
		require.NoError(t, local.Run(2, func(c comm.Comm) error {
			lay, u := rankField(g, 0, 1, func([]int) float64 { return 1 }) // every rank passes rank 0's box
			_, errs[c.Rank()] = Write(c, g, lay, u, root, Meta{Step: 1}, Options{})
			return nil
		}))
		requireAllFail(t, errs, nil, "rank 1")
		names, err := List(root)
		require.NoError(t, err)
		require.Empty(t, names)
		requireNoPartial(t, root)
	})
}

// Read refuses a checkpoint of another shape on every rank.
func TestReadRejectsOtherShape(t *testing.T) {
	root := t.TempDir()
	writeField(t, root, []int{9, 8}, 1, 1, Options{})
	ck, err := Open(filepath.Join(root, StepName(1)))
	require.NoError(t, err)
	g, err := decomp.New([]int{8, 9}, 3, nil, nil)
	require.NoError(t, err)
	errs := make([]error, 3)
	require.NoError(t, local.Run(3, func(c comm.Comm) error {
		lay, u := rankField(g, c.Rank(), 1, func([]int) float64 { return 0 })
		errs[c.Rank()] = Read(c, ck, g, lay, u, Options{})
		return nil
	}))
	requireAllFail(t, errs, ErrIncompatible)
	require.Contains(t, errs[0].Error(), "[9 8]")
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func keysOf(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Copying rows as they are (on a little-endian host) and encoding value by
// value give the same chunk bytes and the same values back, for a box that
// is a strided part of both the field and the chunk.
func TestBoxCopyPathsAgree(t *testing.T) {
	if !littleHost {
		t.Skip("a big-endian host has only the value-by-value path")
	}
	whole := decomp.Box{Lo: []int{2, 3}, Hi: []int{9, 12}}
	chunk := decomp.Box{Lo: []int{4, 4}, Hi: []int{12, 16}}
	part := whole.Intersect(chunk)
	src := make([]float64, whole.Size())
	for i := range src {
		src[i] = math.Float64frombits(0x3ff0_1234_5678_9abc + uint64(i)*0x0101_0101)
	}
	paths := map[bool][]byte{}
	for _, fast := range []bool{true, false} {
		littleHost = fast
		raw := make([]byte, 8*chunk.Size())
		putBox(raw, decomp.NewLayout(chunk, 0), src, decomp.NewLayout(whole, 0), part)
		back := make([]float64, whole.Size())
		getBox(back, decomp.NewLayout(whole, 0), raw, decomp.NewLayout(chunk, 0), part)
		eachRow(part, func(lo []int, n int) {
			at := field.Index(decomp.NewLayout(whole, 0), lo)
			require.Equal(t, src[at:at+n], back[at:at+n], "fast=%v row %v", fast, lo)
		})
		paths[fast] = raw
	}
	littleHost = true
	require.Equal(t, paths[false], paths[true])
}
