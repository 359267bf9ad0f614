package media

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"heat/field"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
)

// mapValue is the test map's value at global cell idx of shape: distinct for
// every cell, positive, and exact in float32 (a multiple of 1/8 below 2^20).
func mapValue(shape, idx []int) float64 {
	return 1 + float64(field.Linear(idx, shape))/8
}

// fieldValues is mapValue over the whole grid, C order.
func fieldValues(shape []int) []float64 {
	out := make([]float64, field.Cells(shape))
	for k := range out {
		out[k] = mapValue(shape, unravel(k, shape))
	}
	return out
}

// npyBytes is a .npy file as numpy writes it: the magic, the version, the
// header length, the header dict padded with spaces to a multiple of 64
// bytes (magic included) and ending in a newline, then the values.
func npyBytes(t testing.TB, major byte, descr string, fortran bool, shape []int, vals []float64) []byte {
	t.Helper()
	dims := make([]string, len(shape))
	for i, n := range shape {
		dims[i] = fmt.Sprint(n)
	}
	tuple := "(" + strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	tuple += ")"
	order := "False"
	if fortran {
		order = "True"
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, order, tuple)
	pre := 10
	if major > 1 {
		pre = 12
	}
	total := (pre + len(dict) + 1 + 63) / 64 * 64
	var b bytes.Buffer
	b.WriteString(npyMagic)
	b.Write([]byte{major, 0})
	if major > 1 {
		binary.Write(&b, binary.LittleEndian, uint32(total-pre))
	} else {
		binary.Write(&b, binary.LittleEndian, uint16(total-pre))
	}
	b.WriteString(dict)
	for b.Len() < total-1 {
		b.WriteByte(' ')
	}
	b.WriteByte('\n')
	b.Write(encodeValues(descr[1:], orderOf(descr[0]), vals))
	return b.Bytes()
}

func orderOf(c byte) binary.AppendByteOrder {
	if c == '>' {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// encodeValues stores vals as "f8" or "f4" values in byte order.
func encodeValues(kind string, order binary.AppendByteOrder, vals []float64) []byte {
	var b []byte
	for _, v := range vals {
		if kind == "f4" {
			b = order.AppendUint32(b, math.Float32bits(float32(v)))
		} else {
			b = order.AppendUint64(b, math.Float64bits(v))
		}
	}
	return b
}

// writeNPY writes a .npy map of the test field (or vals) under dir.
func writeNPY(t testing.TB, dir, name, descr string, shape []int, vals []float64) string {
	t.Helper()
	if vals == nil {
		vals = fieldValues(shape)
	}
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, npyBytes(t, 1, descr, false, shape, vals), 0o644))
	return p
}

// zarrSpec is how writeZarr stores a test array.
type zarrSpec struct {
	dataType  string   // "float64" (default) or "float32"
	endian    string   // "little" (default) or "big"
	post      []string // bytes-to-bytes codecs: "zstd", "gzip", "crc32c"
	chunk     []int
	shard     []int // with inner = chunk: sharding_indexed
	indexAt   string
	keys      string // "default/" (default), "default.", "v2.", "v2/"
	fill      any    // fill_value; default "NaN"
	skip      func(key string) bool
	skipInner func(key string, inner []int) bool
	codecs    []any // the codecs member as written, instead of the above
}

// writeZarr writes the test field (or vals) as a Zarr v3 array folder
// under dir, coding every chunk as s says, as the specification does.
func writeZarr(t testing.TB, dir, name string, shape []int, vals []float64, s zarrSpec) string {
	t.Helper()
	if vals == nil {
		vals = fieldValues(shape)
	}
	if s.dataType == "" {
		s.dataType = "float64"
	}
	if s.endian == "" {
		s.endian = "little"
	}
	if s.keys == "" {
		s.keys = "default/"
	}
	if s.fill == nil {
		s.fill = "NaN"
	}
	if s.indexAt == "" {
		s.indexAt = "end"
	}
	root := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(root, 0o755))
	chain := []any{map[string]any{"name": "bytes", "configuration": map[string]any{"endian": s.endian}}}
	for _, p := range s.post {
		c := map[string]any{"name": p}
		if p == "zstd" {
			c["configuration"] = map[string]any{"level": 3, "checksum": false}
		}
		if p == "gzip" {
			c["configuration"] = map[string]any{"level": 5}
		}
		chain = append(chain, c)
	}
	outer := s.chunk
	codecs := chain
	if s.shard != nil {
		outer = s.shard
		codecs = []any{map[string]any{"name": "sharding_indexed", "configuration": map[string]any{
			"chunk_shape":    s.chunk,
			"codecs":         chain,
			"index_codecs":   []any{map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "little"}}, map[string]any{"name": "crc32c"}},
			"index_location": s.indexAt,
		}}}
	}
	if s.codecs != nil {
		codecs = s.codecs
	}
	enc, sep := s.keys[:len(s.keys)-1], s.keys[len(s.keys)-1:]
	meta := map[string]any{
		"zarr_format":        3,
		"node_type":          "array",
		"shape":              shape,
		"data_type":          s.dataType,
		"chunk_grid":         map[string]any{"name": "regular", "configuration": map[string]any{"chunk_shape": outer}},
		"chunk_key_encoding": map[string]any{"name": enc, "configuration": map[string]any{"separator": sep}},
		"fill_value":         s.fill,
		"codecs":             codecs,
		"attributes":         map[string]any{},
	}
	doc, err := json.MarshalIndent(meta, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "zarr.json"), doc, 0o644))

	kind := "f8"
	if s.dataType == "float32" {
		kind = "f4"
	}
	order := binary.AppendByteOrder(binary.LittleEndian)
	if s.endian == "big" {
		order = binary.BigEndian
	}
	code := func(box []float64) []byte {
		b := encodeValues(kind, order, box)
		for _, p := range s.post {
			b = codeBytes(t, p, b)
		}
		return b
	}
	nd := len(shape)
	grid := make([]int, nd)
	for a := range nd {
		grid[a] = (shape[a] + outer[a] - 1) / outer[a]
	}
	for k := range field.Cells(grid) {
		ci := unravel(k, grid)
		parts := make([]string, nd)
		for a, i := range ci {
			parts[a] = fmt.Sprint(i)
		}
		key := strings.Join(parts, sep)
		if enc == "default" {
			key = "c" + sep + key
		}
		if s.skip != nil && s.skip(key) {
			continue
		}
		lo, hi := chunkBox(ci, outer)
		var data []byte
		if s.shard == nil {
			data = code(chunkValues(shape, vals, lo, hi, s.fill))
		} else {
			data = shardBytes(shape, vals, lo, s, code, key)
		}
		file := filepath.Join(root, filepath.FromSlash(key))
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		require.NoError(t, os.WriteFile(file, data, 0o644))
	}
	return root
}

// chunkValues is the chunk [lo, hi) of the array vals of shape, C order,
// cells past the array holding a stand-in fill value.
func chunkValues(shape []int, vals []float64, lo, hi []int, fill any) []float64 {
	sh := boxShape(lo, hi)
	out := make([]float64, field.Cells(sh))
	for k := range out {
		idx := offset(lo, unravel(k, sh))
		inside := true
		for a := range idx {
			inside = inside && idx[a] < shape[a]
		}
		if inside {
			out[k] = vals[field.Linear(idx, shape)]
		} else {
			out[k] = -12345 // past the array: never read
		}
	}
	return out
}

// shardBytes is a shard file: the inner chunks coded one after another,
// the index (offset, length per inner chunk, little-endian uint64, C
// order; both all ones for one not stored) and its CRC32-C, at the end or
// the start.
func shardBytes(shape []int, vals []float64, lo []int, s zarrSpec, code func([]float64) []byte, key string) []byte {
	nd := len(shape)
	per := make([]int, nd)
	for a := range nd {
		per[a] = s.shard[a] / s.chunk[a]
	}
	n := field.Cells(per)
	indexLen := 16*n + 4
	var body []byte
	index := make([]byte, 16*n)
	base := 0
	if s.indexAt == "start" {
		base = indexLen
	}
	for k := range n {
		ii := unravel(k, per)
		ilo := make([]int, nd)
		ihi := make([]int, nd)
		for a := range nd {
			ilo[a] = lo[a] + ii[a]*s.chunk[a]
			ihi[a] = ilo[a] + s.chunk[a]
		}
		past := false
		for a := range nd {
			past = past || ilo[a] >= shape[a]
		}
		if past || (s.skipInner != nil && s.skipInner(key, ii)) {
			binary.LittleEndian.PutUint64(index[16*k:], math.MaxUint64)
			binary.LittleEndian.PutUint64(index[16*k+8:], math.MaxUint64)
			continue
		}
		c := code(chunkValues(shape, vals, ilo, ihi, s.fill))
		binary.LittleEndian.PutUint64(index[16*k:], uint64(base+len(body)))
		binary.LittleEndian.PutUint64(index[16*k+8:], uint64(len(c)))
		body = append(body, c...)
	}
	index = binary.LittleEndian.AppendUint32(index, crc32.Checksum(index, crc32.MakeTable(crc32.Castagnoli)))
	if s.indexAt == "start" {
		return append(index, body...)
	}
	return append(body, index...)
}

// codeBytes applies one bytes-to-bytes codec.
func codeBytes(t testing.TB, codec string, b []byte) []byte {
	switch codec {
	case "zstd":
		e, err := zstd.NewWriter(nil)
		require.NoError(t, err)
		defer e.Close()
		return e.EncodeAll(b, nil)
	case "gzip":
		var out bytes.Buffer
		w := gzip.NewWriter(&out)
		_, err := w.Write(b)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		return out.Bytes()
	case "crc32c":
		return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
	}
	t.Fatalf("no codec %q", codec)
	return nil
}

// sliceOf is the box [lo, hi) of the whole-grid values all, C order.
func sliceOf(all []float64, shape, lo, hi []int) []float64 {
	box := boxShape(lo, hi)
	out := make([]float64, field.Cells(box))
	copyBox(out, lo, box, all, make([]int, len(shape)), shape, lo, hi)
	return out
}

// boxes splits the grid into a few uneven boxes along every axis (and a
// few odd ones), as ranks would hold it.
func boxes(shape []int) [][2][]int {
	nd := len(shape)
	cuts := make([][]int, nd)
	for a, n := range shape {
		cuts[a] = []int{0, n / 3, n/3 + n/4 + 1, n}
	}
	var out [][2][]int
	per := make([]int, nd)
	for a := range per {
		per[a] = 3
	}
	for k := range field.Cells(per) {
		ci := unravel(k, per)
		lo, hi := make([]int, nd), make([]int, nd)
		for a := range nd {
			lo[a], hi[a] = cuts[a][ci[a]], cuts[a][ci[a]+1]
		}
		out = append(out, [2][]int{lo, hi})
	}
	one := make([]int, nd)
	for a := range one {
		one[a] = 1
	}
	out = append(out, [2][]int{make([]int, nd), one}) // a single cell
	last := make([]int, nd)
	for a := range last {
		last[a] = shape[a] - 1
	}
	out = append(out, [2][]int{last, shape})
	return out
}
