package media

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/checkpoint"
	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
	"heat/field"
)

// Zarr v3 arrays read back exactly whatever their data type, byte order,
// codecs, chunk key encoding and chunking (uneven edge chunks included),
// sharded or not, and every box of them equals the slice of the whole.
func TestZarrRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name  string
		shape []int
		s     zarrSpec
	}{
		{"plain", []int{10, 13}, zarrSpec{chunk: []int{4, 5}}},
		{"zstd", []int{10, 13}, zarrSpec{chunk: []int{4, 5}, post: []string{"zstd"}}},
		{"gzip", []int{10, 13}, zarrSpec{chunk: []int{3, 13}, post: []string{"gzip"}}},
		{"crc32c", []int{10, 13}, zarrSpec{chunk: []int{10, 13}, post: []string{"crc32c"}}},
		{"zstd+crc32c", []int{10, 13}, zarrSpec{chunk: []int{4, 4}, post: []string{"zstd", "crc32c"}}},
		{"crc32c+gzip", []int{10, 13}, zarrSpec{chunk: []int{4, 4}, post: []string{"crc32c", "gzip"}}},
		{"float32 big", []int{10, 13}, zarrSpec{chunk: []int{4, 5}, dataType: "float32", endian: "big", post: []string{"zstd"}}},
		{"float64 big", []int{7, 5, 6}, zarrSpec{chunk: []int{2, 3, 4}, endian: "big"}},
		{"dot keys", []int{10, 13}, zarrSpec{chunk: []int{4, 5}, keys: "default."}},
		{"v2 keys", []int{10, 13}, zarrSpec{chunk: []int{4, 5}, keys: "v2."}},
		{"v2 slash keys", []int{7, 5, 6}, zarrSpec{chunk: []int{3, 3, 3}, keys: "v2/", post: []string{"gzip"}}},
		{"chunk past the grid", []int{10, 13}, zarrSpec{chunk: []int{16, 16}, post: []string{"zstd"}}},
		{"sharded", []int{10, 13}, zarrSpec{chunk: []int{2, 3}, shard: []int{4, 6}, post: []string{"zstd"}}},
		{"sharded index first", []int{10, 13}, zarrSpec{chunk: []int{2, 3}, shard: []int{4, 6}, indexAt: "start", post: []string{"gzip"}}},
		{"sharded 3D", []int{7, 5, 6}, zarrSpec{chunk: []int{2, 2, 3}, shard: []int{4, 4, 6}, post: []string{"zstd", "crc32c"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := writeZarr(t, t.TempDir(), "k", c.shape, nil, c.s)
			s := &Spec{Shape: c.shape, KMap: p}
			require.NoError(t, s.Check())
			nd := len(c.shape)
			whole, err := s.Fill(make([]int, nd), c.shape)
			require.NoError(t, err)
			require.Equal(t, fieldValues(c.shape), whole.K)
			for _, b := range boxes(c.shape) {
				part, err := s.Fill(b[0], b[1])
				require.NoError(t, err)
				require.Equal(t, sliceOf(whole.K, c.shape, b[0], b[1]), part.K, "%v", b)
			}
		})
	}
}

// Chunks, shards and inner chunks that are not stored are refused, naming
// the key, the file and the chunk (a chunk lost in a copy read as fill 0
// made a silent insulating hole), unless FillMissing: then they hold the
// fill value, and a fill value that is not a valid k is refused by Check
// naming the chunk, and by Fill where a box reaches it.
func TestZarrMissingChunks(t *testing.T) {
	shape := []int{10, 13}
	dir := t.TempDir()
	want := fieldValues(shape)
	for _, c := range []struct {
		name string
		s    zarrSpec
		// the cells a missing part covers
		lo, hi []int
		miss   string
	}{
		{"chunk", zarrSpec{chunk: []int{4, 5}, skip: func(k string) bool { return k == "c/1/2" }}, []int{4, 10}, []int{8, 13}, "c/1/2"},
		{"shard", zarrSpec{chunk: []int{2, 3}, shard: []int{4, 6}, skip: func(k string) bool { return k == "c/2/0" }}, []int{8, 0}, []int{10, 6}, "c/2/0"},
		{"inner chunk", zarrSpec{chunk: []int{2, 3}, shard: []int{4, 6}, skipInner: func(k string, ii []int) bool { return k == "c/0/1" && ii[0] == 1 && ii[1] == 0 }},
			[]int{2, 6}, []int{4, 9}, "c/0/1, inner chunk [1 0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := c.s
			s.fill = 2.5
			p := writeZarr(t, dir, c.name+"-ok", shape, nil, s)
			refused := fmt.Sprintf("media: maps.k: %s: chunk %s is not stored (its first cell read is %v): it would read as the fill value 2.5; store it, or set maps.missing = \"fill\"",
				p, filepath.Join(p, filepath.FromSlash(c.miss)), c.lo)
			require.ErrorContains(t, (&Spec{Shape: shape, KMap: p}).Check(), refused)
			_, err := (&Spec{Shape: shape, KMap: p}).Fill([]int{0, 0}, shape)
			require.ErrorContains(t, err, refused)
			var me *MapError
			require.ErrorAs(t, err, &me)
			require.Equal(t, c.lo, me.Cell, "the first cell, for the ranks to agree on")
			_, err = ReadField("initial.path", p, shape, []int{0, 0}, shape)
			require.ErrorContains(t, err, "media: initial.path: "+p+": chunk ")
			_, err = (&Spec{Shape: shape, KMap: p}).Fill([]int{0, 0}, []int{1, 1})
			require.NoError(t, err, "a box the chunk does not meet")

			got, err := (&Spec{Shape: shape, KMap: p, FillMissing: true}).Fill([]int{0, 0}, shape)
			require.NoError(t, err)
			exp := append([]float64(nil), want...)
			_ = eachRow(c.lo, c.hi, func(start []int, n int) error {
				i := field.Linear(start, shape)
				fill(exp[i:i+n], 2.5)
				return nil
			})
			require.Equal(t, exp, got.K)
			field, err := ReadField("initial.path", p, shape, []int{0, 0}, shape, FillMissing(true))
			require.NoError(t, err)
			require.Equal(t, exp, field)

			s.fill = "NaN"
			p = writeZarr(t, dir, c.name+"-nan", shape, nil, s)
			spec := &Spec{Shape: shape, KMap: p, FillMissing: true}
			err = spec.Check()
			require.ErrorContains(t, err, fmt.Sprintf("media: maps.k: %s: cell %v is nan, the fill value of chunk %s, which is not stored (k must be finite and >= 0)",
				p, c.lo, filepath.Join(p, filepath.FromSlash(c.miss))))
			_, err = spec.Fill(c.lo, c.hi)
			require.ErrorContains(t, err, fmt.Sprintf("cell %v is nan (k must be finite and >= 0)", c.lo))
			_, err = spec.Fill([]int{0, 0}, []int{1, 1})
			require.NoError(t, err)
		})
	}
}

// A Zarr array heat does not read is refused naming the file and what is
// not supported: codecs (transpose, blosc, anything after sharding),
// data types, damaged chunks and indexes, chunks larger than the map may
// take, groups that are not heat checkpoints.
func TestZarrRefused(t *testing.T) {
	shape := []int{8, 8}
	dir := t.TempDir()
	bytesLE := map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "little"}}
	for _, c := range []struct {
		name string
		s    zarrSpec
		edit func(t *testing.T, root string)
		want string // after "media: maps.k: "
	}{
		{"transpose", zarrSpec{chunk: []int{4, 4}, codecs: []any{map[string]any{"name": "transpose", "configuration": map[string]any{"order": []int{1, 0}}}, bytesLE}},
			nil, `ROOT/zarr.json: codec "transpose" is not supported (heat reads "bytes", then "zstd", "gzip" or "crc32c"; or "sharding_indexed" with those inside)`},
		{"blosc", zarrSpec{chunk: []int{4, 4}, codecs: []any{bytesLE, map[string]any{"name": "blosc"}}}, nil, `ROOT/zarr.json: codec "blosc" is not supported`},
		{"after sharding", zarrSpec{chunk: []int{4, 4}, codecs: []any{map[string]any{"name": "sharding_indexed", "configuration": map[string]any{}}, map[string]any{"name": "zstd"}}},
			nil, `ROOT/zarr.json: codec "zstd" after sharding_indexed is not supported`},
		{"no endian", zarrSpec{chunk: []int{4, 4}, codecs: []any{map[string]any{"name": "bytes"}}}, nil, "ROOT/zarr.json: the bytes codec has no endian"},
		{"int32", zarrSpec{chunk: []int{4, 4}, dataType: "int32"}, nil, `ROOT/zarr.json: data_type "int32" is not supported; a map is "float64" or "float32"`},
		{"huge chunks", zarrSpec{chunk: []int{4, 4}}, func(t *testing.T, root string) {
			editMeta(t, root, `"chunk_shape": [`, `"chunk_shape": [1000000, 1000000`, `]`)
		},
			"ROOT/zarr.json: chunks of [1000000 1000000] hold more values than the 1048576 a map of shape [8 8] may take"},
		{"zarr v2", zarrSpec{chunk: []int{4, 4}}, func(t *testing.T, root string) { editMeta(t, root, `"zarr_format": `, `"zarr_format": 2`, "\n") },
			"ROOT/zarr.json: zarr_format is 2; heat reads Zarr v3 arrays (zarr_format 3)"},
		{"damaged crc", zarrSpec{chunk: []int{4, 4}, post: []string{"crc32c"}}, func(t *testing.T, root string) { flipByte(t, filepath.Join(root, "c", "1", "1"), 3) },
			"ROOT/c/1/1: damaged: its CRC32-C is"},
		{"damaged index", zarrSpec{chunk: []int{2, 2}, shard: []int{4, 4}}, func(t *testing.T, root string) { flipByte(t, filepath.Join(root, "c", "0", "1"), -10) },
			"ROOT/c/0/1: damaged index: its CRC32-C is"},
		{"short chunk", zarrSpec{chunk: []int{4, 4}}, func(t *testing.T, root string) { truncate(t, filepath.Join(root, "c", "0", "0"), 100) },
			"ROOT/c/0/0 decodes to 100 bytes, but a chunk of [4 4] float64 values is 128"},
		{"big chunk file", zarrSpec{chunk: []int{4, 4}}, func(t *testing.T, root string) { truncate(t, filepath.Join(root, "c", "0", "0"), 1<<30) },
			"ROOT/c/0/0 is 1073741824 bytes, more than a chunk of [4 4] float64 values can take (128)"},
		{"group", zarrSpec{chunk: []int{4, 4}}, func(t *testing.T, root string) {
			require.NoError(t, os.WriteFile(filepath.Join(root, "zarr.json"), []byte(`{"zarr_format": 3, "node_type": "group"}`), 0o644))
		}, `ROOT is a Zarr group without an array "k": give the path of an array's folder, such as ROOT/u`},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := writeZarr(t, dir, strings.ReplaceAll(c.name, " ", "-"), shape, nil, c.s)
			if c.edit != nil {
				c.edit(t, root)
			}
			want := "media: maps.k: " + strings.ReplaceAll(c.want, "ROOT", root)
			err := (&Spec{Shape: shape, KMap: root}).Check()
			require.ErrorContains(t, err, want)
			var me *MapError
			require.ErrorAs(t, err, &me)
			_, err = (&Spec{Shape: shape, KMap: root}).Fill([]int{0, 0}, shape)
			require.ErrorContains(t, err, want)
		})
	}
	// A shape other than the grid's.
	root := writeZarr(t, dir, "small", []int{8, 6}, nil, zarrSpec{chunk: []int{4, 4}})
	require.EqualError(t, (&Spec{Shape: shape, RhoCMap: root}).Check(), "media: maps.rho_c: "+root+" has shape [8 6], the grid is [8 8]")
}

// editMeta replaces in root's zarr.json the text from the first after to
// the next until with repl.
func editMeta(t *testing.T, root, after, repl, until string) {
	t.Helper()
	p := filepath.Join(root, "zarr.json")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	s := string(b)
	i := strings.Index(s, after)
	require.GreaterOrEqual(t, i, 0)
	j := strings.Index(s[i+len(after):], until)
	require.GreaterOrEqual(t, j, 0)
	s = s[:i] + repl + s[i+len(after)+j:]
	require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
}

// flipByte flips the bits of byte i of file p (from the end when i < 0).
func flipByte(t *testing.T, p string, i int) {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	if i < 0 {
		i += len(b)
	}
	b[i] ^= 0xff
	require.NoError(t, os.WriteFile(p, b, 0o644))
}

func truncate(t *testing.T, p string, n int64) {
	t.Helper()
	require.NoError(t, os.Truncate(p, n))
}

// A map heat's checkpoint package wrote — a checkpoint's array folder u —
// reads back exactly, sharded (one file per writer, as checkpoint.shard =
// "auto" writes) or a file per chunk, whatever the ranks that wrote it and
// the boxes that read it. The checkpoint folder itself stands for its
// arrays k and rho_c, which a checkpoint of a uniform medium lacks.
func TestCheckpointArrayReadsBack(t *testing.T) {
	shape := []int{24, 20}
	for _, c := range []struct {
		name    string
		ranks   int
		sharded bool
	}{
		{"a file per chunk", 3, false},
		{"sharded", 4, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeCheckpoint(t, shape, c.ranks, c.sharded)
			if c.sharded {
				var meta struct {
					Codecs []struct{ Name string } `json:"codecs"`
				}
				b, err := os.ReadFile(filepath.Join(path, "u", "zarr.json"))
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(b, &meta))
				require.Equal(t, "sharding_indexed", meta.Codecs[0].Name, "the test writes what run writes by default")
			}
			require.EqualError(t, (&Spec{Shape: shape, KMap: path}).Check(),
				fmt.Sprintf("media: maps.k: %s is a heat checkpoint without an array \"k\" (it holds u): give the path of a checkpoint that holds one, or of an array's folder, such as %s", path, filepath.Join(path, "u")))
			for _, p := range []string{filepath.Join(path, "u")} {
				s := &Spec{Shape: shape, KMap: p, RhoCMap: p}
				require.NoError(t, s.Check())
				whole, err := s.Fill([]int{0, 0}, shape)
				require.NoError(t, err)
				require.Equal(t, fieldValues(shape), whole.K)
				require.Equal(t, fieldValues(shape), whole.RhoC)
				for _, b := range boxes(shape) {
					part, err := s.Fill(b[0], b[1])
					require.NoError(t, err)
					require.Equal(t, sliceOf(whole.K, shape, b[0], b[1]), part.K, "%v", b)
				}
			}
		})
	}
}

// A Zarr group stands for its arrays k (maps.k) and rho_c (maps.rho_c),
// as a heterogeneous run's checkpoint holds them beside u.
func TestZarrGroupArrays(t *testing.T) {
	shape := []int{6, 7}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "zarr.json"), []byte(`{"zarr_format": 3, "node_type": "group", "attributes": {}}`), 0o644))
	k := fieldValues(shape)
	rc := make([]float64, len(k))
	for i := range rc {
		rc[i] = 2 * k[i]
	}
	writeZarr(t, dir, "k", shape, k, zarrSpec{chunk: []int{4, 4}, post: []string{"zstd"}})
	writeZarr(t, dir, "rho_c", shape, rc, zarrSpec{chunk: []int{4, 4}, post: []string{"zstd"}})
	s := &Spec{Shape: shape, KMap: dir, RhoCMap: dir}
	require.NoError(t, s.Check())
	c, err := s.Fill([]int{0, 0}, shape)
	require.NoError(t, err)
	require.Equal(t, k, c.K)
	require.Equal(t, rc, c.RhoC)
}

// writeCheckpoint writes the test field as a heat checkpoint with ranks
// ranks (with the writers' shards when sharded) and returns its folder.
func writeCheckpoint(t *testing.T, shape []int, ranks int, sharded bool) string {
	t.Helper()
	root := t.TempDir()
	g, err := decomp.New(shape, ranks, nil, nil)
	require.NoError(t, err)
	opt := checkpoint.Options{Chunk: []int{8, 8}}
	if sharded {
		opt.Shard, opt.Chunk, err = checkpoint.WriterShards(shape, g.Dims, []int{4, 5})
		require.NoError(t, err)
	}
	meta := checkpoint.Meta{Step: 7, Config: []byte(`{"grid":{"shape":[24,20]}}`)}
	paths := make([]string, ranks)
	require.NoError(t, local.Run(ranks, func(c comm.Comm) error {
		box := g.Box(c.Rank())
		lay := decomp.NewLayout(box, 1)
		u := make([]float64, lay.Len())
		for i := range u {
			u[i] = math.NaN() // ghosts: never stored
		}
		idx := make([]int, len(shape))
		for k := range box.Size() {
			local := unravel(k, box.Shape())
			for a := range idx {
				idx[a] = box.Lo[a] + local[a]
			}
			u[lay.Index(local...)] = mapValue(shape, idx)
		}
		info, err := checkpoint.Write(c, g, lay, u, root, meta, opt)
		paths[c.Rank()] = info.Path
		return err
	}))
	_, err = checkpoint.Open(paths[0])
	require.NoError(t, err)
	return paths[0]
}
