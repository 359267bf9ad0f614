package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"heat/decomp"
	"heat/internal/safefile"
)

// The metadata documents of a checkpoint, as the Zarr v3 core specification
// defines them: the group's zarr.json at the checkpoint's top, holding heat's
// own record under attributes.heat, and the array's u/zarr.json.

// arrayName is the name of the field's array inside the group.
const arrayName = "u"

// The value types of a checkpoint's arrays: the field and the media's
// float64 arrays, and uint8 for the held-cell mask.
const (
	Float64 = "float64"
	Uint8   = "uint8"
)

// MediaArrays are the arrays a checkpoint may hold beside the field, the
// media of a heterogeneous run: conductivity k (0 on a hole), volumetric
// heat capacity rho_c (float64), and mask (uint8: 1 on a held cell).
var MediaArrays = []string{"k", "rho_c", "mask"}

// Array is an array Write stores beside the field (Meta.Arrays): a Zarr
// array like u, in its own folder of the group, chunked, sharded,
// compressed and checksummed as u is and written by the same writers.
type Array struct {
	Name string // one of MediaArrays
	// Type is Float64 ("" too) or Uint8; a Uint8 array's values must be
	// whole numbers 0 to 255.
	Type string
	// Data is laid out as the field (the layout given to Write or Begin):
	// its box is stored, its ghosts are not read. Begin does not copy it:
	// it is read until Finish returns, so it must not change meanwhile (a
	// run's media never do).
	Data []float64
}

// elemSize is the bytes a value of type dtype takes in a chunk.
func elemSize(dtype string) int {
	if dtype == Uint8 {
		return 1
	}
	return 8
}

// arrayOf is one array of a checkpoint as Open found it: its name (its
// folder), value type and the checksums of its chunk files, by key.
type arrayOf struct {
	name  string
	dtype string
	sums  map[string]chunkSum
}

// elem is the bytes a value of a takes in a chunk.
func (a *arrayOf) elem() int { return elemSize(a.dtype) }

// metaFile is the key of a Zarr v3 metadata document.
const metaFile = "zarr.json"

// named is a Zarr extension object: a name and an optional configuration.
type named struct {
	Name          string         `json:"name"`
	Configuration map[string]any `json:"configuration,omitempty"`
}

// arrayDoc is the array metadata document that Write stores, members in
// the order of the specification.
type arrayDoc struct {
	ZarrFormat       int            `json:"zarr_format"`
	NodeType         string         `json:"node_type"`
	Shape            []int          `json:"shape"`
	DataType         string         `json:"data_type"`
	ChunkGrid        named          `json:"chunk_grid"`
	ChunkKeyEncoding named          `json:"chunk_key_encoding"`
	FillValue        any            `json:"fill_value"`
	Codecs           []named        `json:"codecs"`
	DimensionNames   []string       `json:"dimension_names"`
	Attributes       map[string]any `json:"attributes"`
}

// chunkSum is what the group metadata records of one chunk file.
type chunkSum struct {
	CRC32C uint32 `json:"crc32c"`
	Bytes  int    `json:"bytes"`
}

// heatAttrs is attributes.heat of the group metadata.
type heatAttrs struct {
	Format int                 `json:"format"`
	Step   int                 `json:"step"`
	Time   float64             `json:"time"`
	Ranks  int                 `json:"ranks"`
	Config json.RawMessage     `json:"config"`
	Chunks map[string]chunkSum `json:"chunks"`
	Extra  map[string]any      `json:"extra"`
	// Arrays are the arrays beside u (the media), by name; absent (a
	// uniform medium's checkpoint) when there are none.
	Arrays map[string]arrayRecord `json:"arrays,omitempty"`
	// ArrayCRC is the CRC32-C of the array's zarr.json (8 hex digits), and
	// MetaCRC seals the group's own document (seal).
	ArrayCRC string `json:"array_crc32c"`
	MetaCRC  string `json:"metadata_crc32c"`
}

// arrayRecord is what the group metadata records of an array beside u: its
// value type, its zarr.json's CRC32-C (8 hex digits) and the CRC32-C and
// size of each of its chunk files, as it records u's.
type arrayRecord struct {
	DataType string              `json:"data_type"`
	ArrayCRC string              `json:"array_crc32c"`
	Chunks   map[string]chunkSum `json:"chunks"`
}

// The seal: attributes.heat.metadata_crc32c holds the CRC32-C of the whole
// group document as written with those 8 hex digits zeroed. With the array
// document's CRC32-C inside it, every byte of both metadata files is
// covered: a flipped bit anywhere, the digits included, is refused before
// anything of the document is believed.
const (
	sealKey  = `"metadata_crc32c": "`
	sealZero = "00000000"
)

// seal fills the zeroed metadata_crc32c of doc in place.
func seal(doc []byte) []byte {
	i := bytes.Index(doc, []byte(sealKey+sealZero+`"`))
	if i < 0 || bytes.Count(doc, []byte(sealKey)) != 1 {
		panic("checkpoint: the group document has no single metadata_crc32c to seal") // encodeGroup writes one
	}
	copy(doc[i+len(sealKey):], fmt.Sprintf("%08x", crc32c(doc)))
	return doc
}

// checkSeal refuses a group document whose seal is missing, malformed or
// wrong.
func checkSeal(doc []byte) error {
	if n := bytes.Count(doc, []byte(sealKey)); n != 1 {
		return fmt.Errorf("has %d metadata_crc32c seals, want 1: %w", n, ErrChecksum)
	}
	i := bytes.Index(doc, []byte(sealKey)) + len(sealKey)
	if i+9 > len(doc) || doc[i+8] != '"' {
		return fmt.Errorf("metadata_crc32c is not 8 hex digits: %w", ErrChecksum)
	}
	want, err := parseHex32(string(doc[i : i+8]))
	if err != nil {
		return fmt.Errorf("metadata_crc32c %q: %v: %w", doc[i:i+8], err, ErrChecksum)
	}
	zeroed := slices.Clone(doc)
	copy(zeroed[i:], sealZero)
	if got := crc32c(zeroed); got != want {
		return fmt.Errorf("damaged: its CRC32-C is %08x, its seal says %08x: %w", got, want, ErrChecksum)
	}
	return nil
}

// parseHex32 parses 8 lower-case hex digits, as Write writes them.
func parseHex32(s string) (uint32, error) {
	if len(s) != 8 || strings.Trim(s, "0123456789abcdef") != "" {
		return 0, errors.New("want 8 lower-case hex digits")
	}
	v, err := strconv.ParseUint(s, 16, 32)
	return uint32(v), err
}

// groupDoc is the group metadata document that Write stores.
type groupDoc struct {
	ZarrFormat int    `json:"zarr_format"`
	NodeType   string `json:"node_type"`
	Attributes struct {
		Heat heatAttrs `json:"heat"`
	} `json:"attributes"`
}

// encodeArray is the array metadata document of a checkpoint's float64
// array of a grid of shape in chunks of chunk, compressed at level; with
// inner, the chunks are shards of inner chunks of that shape.
func encodeArray(shape, chunk, inner []int, level int) ([]byte, error) {
	return encodeArrayOf(Float64, shape, chunk, inner, level)
}

// encodeArrayOf is encodeArray for values of type dtype: a uint8 array's
// fill value is 0, a float64 array's NaN.
func encodeArrayOf(dtype string, shape, chunk, inner []int, level int) ([]byte, error) {
	nd := len(shape)
	names := make([]string, nd)
	for a := range names {
		names[a] = decomp.AxisName(nd, a)
	}
	doc := arrayDoc{
		ZarrFormat:       3,
		NodeType:         "array",
		Shape:            shape,
		DataType:         dtype,
		ChunkGrid:        named{Name: "regular", Configuration: map[string]any{"chunk_shape": chunk}},
		ChunkKeyEncoding: named{Name: "default", Configuration: map[string]any{"separator": "/"}},
		FillValue:        "NaN",
		Codecs:           chunkCodecs(level),
		DimensionNames:   names,
		Attributes:       map[string]any{},
	}
	if dtype == Uint8 {
		doc.FillValue = 0
	}
	if inner != nil {
		doc.Codecs = []named{{Name: "sharding_indexed", Configuration: map[string]any{
			"chunk_shape":    inner,
			"codecs":         chunkCodecs(level),
			"index_codecs":   []named{{Name: "bytes", Configuration: map[string]any{"endian": "little"}}, {Name: "crc32c"}},
			"index_location": "end",
		}}}
	}
	return marshal(doc)
}

// chunkCodecs are the codecs of a chunk (or of a shard's inner chunk).
func chunkCodecs(level int) []named {
	return []named{
		{Name: "bytes", Configuration: map[string]any{"endian": "little"}},
		{Name: "zstd", Configuration: map[string]any{"level": level, "checksum": true}},
	}
}

// encodeGroup is the sealed group metadata document of a checkpoint whose
// array document is arrayDoc; arrays are the records of the arrays beside
// u (nil: none, the uniform medium's format).
func encodeGroup(meta Meta, sums map[string]chunkSum, arrayDoc []byte, arrays map[string]arrayRecord) ([]byte, error) {
	var doc groupDoc
	doc.ZarrFormat = 3
	doc.NodeType = "group"
	h := &doc.Attributes.Heat
	h.Format = Format
	h.Step = meta.Step
	h.Time = meta.Time
	h.Ranks = meta.Ranks
	h.Config = meta.Config
	if len(bytes.TrimSpace(h.Config)) == 0 {
		h.Config = json.RawMessage("null")
	}
	h.Chunks = sums
	if h.Chunks == nil {
		h.Chunks = map[string]chunkSum{}
	}
	h.Extra = meta.Extra
	if h.Extra == nil {
		h.Extra = map[string]any{}
	}
	if len(arrays) > 0 {
		h.Format = MediaFormat
		h.Arrays = arrays
	}
	h.ArrayCRC = fmt.Sprintf("%08x", crc32c(arrayDoc))
	h.MetaCRC = sealZero
	b, err := marshal(doc)
	if err != nil {
		return nil, err
	}
	return seal(b), nil
}

// marshal is v as indented JSON ending in a newline; Zarr readers do not
// care, people reading the files do.
func marshal(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// arrayMeta is what an array's zarr.json says of how its values are
// stored.
type arrayMeta struct {
	dtype    string    // Float64 or Uint8
	grid     chunkGrid // the array's chunks: with sharding, its shards
	inner    []int     // a sharded array's inner chunk shape, or nil
	level    int
	checksum bool
	fill     float64
}

// Checkpoint is the validated metadata of one checkpoint on disk, as Open
// found it.
type Checkpoint struct {
	path      string
	meta      Meta
	arrayMeta                     // u's, and so every array's
	sums      map[string]chunkSum // u's chunks (arrays[0].sums)
	// arrays are the arrays of the checkpoint: u first, then those beside
	// it in the order of MediaArrays. Every one has u's shape, chunk grid,
	// sharding and codecs.
	arrays   []*arrayOf
	keys     []string // every chunk key, C order
	metaSize int64    // bytes of every zarr.json file
	dirs     sync.Map // folder path → dirCheck: what inside found of it
}

// Path is the checkpoint's directory.
func (ck *Checkpoint) Path() string { return ck.path }

// Name is the checkpoint's directory name, step-NNNNNNNN.
func (ck *Checkpoint) Name() string { return filepath.Base(ck.path) }

// Meta is what the checkpoint records besides the field. Config and Extra
// are the caller's to keep.
func (ck *Checkpoint) Meta() Meta {
	m := ck.meta
	m.Config = slices.Clone(m.Config)
	m.Extra = maps.Clone(m.Extra)
	return m
}

// Shape is the global shape of the field, C order.
func (ck *Checkpoint) Shape() []int { return slices.Clone(ck.grid.shape) }

// Chunk is the chunk shape, C order.
func (ck *Checkpoint) Chunk() []int { return slices.Clone(ck.grid.chunk) }

// InnerChunk is a sharded checkpoint's inner chunk shape (its Chunk is then
// the shard shape, a file each), nil when not sharded.
func (ck *Checkpoint) InnerChunk() []int { return slices.Clone(ck.inner) }

// Level is the zstd level the chunks were compressed at.
func (ck *Checkpoint) Level() int { return ck.level }

// ChunkKeys are the keys of every chunk relative to the array, "c/i/j", in
// C order of the chunk grid.
func (ck *Checkpoint) ChunkKeys() []string { return slices.Clone(ck.keys) }

// ChunkFile is the path of the field's chunk file with the given key.
func (ck *Checkpoint) ChunkFile(key string) string { return ck.ArrayChunkFile(arrayName, key) }

// ArrayChunkFile is the path of the chunk file of array name with the
// given key (the keys are the same for every array: ChunkKeys).
func (ck *Checkpoint) ArrayChunkFile(name, key string) string {
	return filepath.Join(ck.path, name, filepath.FromSlash(key))
}

// Arrays names the checkpoint's arrays: "u", then those beside it (the
// media: k, rho_c, mask) in the order of MediaArrays.
func (ck *Checkpoint) Arrays() []string {
	names := make([]string, len(ck.arrays))
	for i, a := range ck.arrays {
		names[i] = a.name
	}
	return names
}

// Has says whether the checkpoint holds the array name ("u" always).
func (ck *Checkpoint) Has(name string) bool { return ck.array(name) != nil }

// ArrayType is the value type of array name (Float64 or Uint8), "" when
// the checkpoint has no such array.
func (ck *Checkpoint) ArrayType(name string) string {
	if a := ck.array(name); a != nil {
		return a.dtype
	}
	return ""
}

// array is the checkpoint's array name, or nil.
func (ck *Checkpoint) array(name string) *arrayOf {
	for _, a := range ck.arrays {
		if a.name == name {
			return a
		}
	}
	return nil
}

// StoredBytes is what the checkpoint takes on disk: every chunk file of
// every array as the metadata records it, and every metadata file.
func (ck *Checkpoint) StoredBytes() int64 {
	n := ck.metaSize
	for _, a := range ck.arrays {
		for _, s := range a.sums {
			n += int64(s.Bytes)
		}
	}
	return n
}

// RawBytes is the size of the values themselves: 8 bytes per cell of the
// field, and per array beside it its value's size per cell.
func (ck *Checkpoint) RawBytes() int64 {
	cells := int64(1)
	for _, s := range ck.grid.shape {
		cells *= int64(s)
	}
	n := int64(0)
	for _, a := range ck.arrays {
		n += cells * int64(a.elem())
	}
	return n
}

// Ratio is the compression ratio, RawBytes / StoredBytes.
func (ck *Checkpoint) Ratio() float64 {
	return float64(ck.RawBytes()) / float64(max(1, ck.StoredBytes()))
}

// Open reads and validates the metadata of the checkpoint in directory
// path: the group and array zarr.json, heat's format version, and the data
// type, chunk grid, chunk key encoding and codecs this package writes. It
// reads no chunk; Verify and Read check those.
func Open(path string) (*Checkpoint, error) { return openFS(OS{}, path) }

func openFS(fsys FS, path string) (*Checkpoint, error) {
	path = filepath.Clean(path)
	if strings.HasSuffix(path, partialSuffix) || strings.HasSuffix(path, oldSuffix) {
		return nil, fmt.Errorf("checkpoint: %s is still being written (or its writer died): %w", path, ErrIncomplete)
	}
	ck := &Checkpoint{path: path}
	groupFile := filepath.Join(path, metaFile)
	gb, err := readMeta(fsys, groupFile)
	if err != nil {
		return nil, err
	}
	arrayFile := filepath.Join(path, arrayName, metaFile)
	if err := ck.inside(fsys, arrayFile); err != nil {
		return nil, err
	}
	ab, err := readMeta(fsys, arrayFile)
	if err != nil {
		return nil, err
	}
	ck.metaSize = int64(len(gb) + len(ab))
	// Nothing of either document is believed before the seal holds.
	if err := checkSeal(gb); err != nil {
		return nil, fmt.Errorf("checkpoint: %s: %w", groupFile, err)
	}
	var sums struct {
		Attributes struct {
			Heat struct {
				Format   int    `json:"format"`
				ArrayCRC string `json:"array_crc32c"`
				Config   struct {
					Grid struct {
						Shape []int `json:"shape"`
					} `json:"grid"`
				} `json:"config"`
			} `json:"heat"`
		} `json:"attributes"`
	}
	if err := json.Unmarshal(gb, &sums); err != nil {
		return nil, fmt.Errorf("checkpoint: %s: damaged, not valid JSON (%v): %w", groupFile, err, ErrChecksum)
	}
	switch f := sums.Attributes.Heat.Format; {
	case f == 0:
		return nil, fmt.Errorf("checkpoint: %s: %w", groupFile, incompatible("no attributes.heat.format: not a heat checkpoint"))
	case f != Format && f != MediaFormat:
		return nil, fmt.Errorf("checkpoint: %s: %w", groupFile, incompatible("format version %d, this heat reads versions %d and %d", f, Format, MediaFormat))
	}
	if want, err := parseHex32(sums.Attributes.Heat.ArrayCRC); err != nil || crc32c(ab) != want {
		return nil, fmt.Errorf("checkpoint: %s: damaged: its CRC32-C is %08x, the group records %q: %w", arrayFile, crc32c(ab), sums.Attributes.Heat.ArrayCRC, ErrChecksum)
	}
	if err := ck.parseArray(ab); err != nil {
		return nil, fmt.Errorf("checkpoint: %s: %w", arrayFile, err)
	}
	if ck.dtype != Float64 {
		return nil, fmt.Errorf("checkpoint: %s: %w", arrayFile, incompatible("data_type is %q, want \"float64\"", ck.dtype))
	}
	// The array is the run's grid, as its config says.
	if want := sums.Attributes.Heat.Config.Grid.Shape; want != nil && !slices.Equal(want, ck.grid.shape) {
		return nil, fmt.Errorf("checkpoint: %s: shape %v, but the run's config (in %s) has grid.shape %v: %w", arrayFile, ck.grid.shape, groupFile, want, ErrIncompatible)
	}
	ck.keys = ck.grid.keys()
	records, err := ck.parseGroup(gb)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %s: %w", groupFile, err)
	}
	if err := ck.openArrays(fsys, records); err != nil {
		return nil, err
	}
	// The folder's name is the step's.
	name := strings.TrimSuffix(filepath.Base(path), prevSuffix)
	if step, ok := parseName(name); !ok || step != ck.meta.Step {
		return nil, fmt.Errorf("checkpoint: %s records step %d, but its folder is %s: %w", groupFile, ck.meta.Step, name, ErrChecksum)
	}
	return ck, nil
}

// openArrays checks the arrays beside u that the group records (records,
// by name) and takes them into ck, in the order of MediaArrays: each one's
// zarr.json against the CRC32-C the group records, its layout against u's
// (shape, chunk grid, sharding and codecs are the same for every array),
// its value type against the record's, and its chunks' record as u's.
func (ck *Checkpoint) openArrays(fsys FS, records map[string]arrayRecord) error {
	groupFile := filepath.Join(ck.path, metaFile)
	for name := range records {
		if !slices.Contains(MediaArrays, name) {
			return fmt.Errorf("checkpoint: %s: %w", groupFile, incompatible("attributes.heat.arrays holds %q, not one of %s", name, strings.Join(MediaArrays, ", ")))
		}
	}
	for _, name := range MediaArrays {
		rec, ok := records[name]
		if !ok {
			continue
		}
		file := filepath.Join(ck.path, name, metaFile)
		if err := ck.inside(fsys, file); err != nil {
			return err
		}
		b, err := readMeta(fsys, file)
		if err != nil {
			return err
		}
		ck.metaSize += int64(len(b))
		if want, err := parseHex32(rec.ArrayCRC); err != nil || crc32c(b) != want {
			return fmt.Errorf("checkpoint: %s: damaged: its CRC32-C is %08x, the group records %q: %w", file, crc32c(b), rec.ArrayCRC, ErrChecksum)
		}
		var am arrayMeta
		if err := am.parseArray(b); err != nil {
			return fmt.Errorf("checkpoint: %s: %w", file, err)
		}
		switch {
		case am.dtype != rec.DataType:
			return fmt.Errorf("checkpoint: %s: %w", file, incompatible("data_type is %q, the group records %q", am.dtype, rec.DataType))
		case !slices.Equal(am.grid.shape, ck.grid.shape) || !slices.Equal(am.grid.chunk, ck.grid.chunk) || !slices.Equal(am.inner, ck.inner) ||
			am.level != ck.level || am.checksum != ck.checksum:
			return fmt.Errorf("checkpoint: %s: %w", file, incompatible("shape %v in chunks %v (inner %v, zstd level %d), unlike u's %v in %v (inner %v, level %d)",
				am.grid.shape, am.grid.chunk, am.inner, am.level, ck.grid.shape, ck.grid.chunk, ck.inner, ck.level))
		}
		a := &arrayOf{name: name, dtype: am.dtype, sums: rec.Chunks}
		if err := ck.checkSums(a, "attributes.heat.arrays."+name+".chunks"); err != nil {
			return fmt.Errorf("checkpoint: %s: %w", groupFile, err)
		}
		ck.arrays = append(ck.arrays, a)
	}
	return nil
}

// checkSums checks that the chunk record of array a (named what in
// messages) has exactly one entry per chunk, each of a size a chunk file
// of a can have.
func (ck *Checkpoint) checkSums(a *arrayOf, what string) error {
	most := ck.maxFileBytesOf(a.elem())
	for _, k := range ck.keys {
		s, ok := a.sums[k]
		if !ok {
			return fmt.Errorf("%s has no entry for chunk %s: %w", what, k, ErrChecksum)
		}
		if s.Bytes < 1 || s.Bytes > most {
			return fmt.Errorf("%s[%q] records %d bytes, want 1 to %d: %w", what, k, s.Bytes, most, ErrChecksum)
		}
	}
	if len(a.sums) != len(ck.keys) {
		return fmt.Errorf("%s has %d entries for %d chunks: %w", what, len(a.sums), len(ck.keys), ErrChecksum)
	}
	return nil
}

// maxMetaBytes bounds what is read of a metadata file before any of it is
// believed. The group's lists every chunk's checksum, about 100 bytes each
// as written (an indented key, CRC32-C and size: 85 bytes a chunk at 2^14
// chunks, up to 100 with the longest keys and numbers), for at most
// maxChunks chunks of each of its arrays (u and at most three beside it):
// 4 × 2^20 × 100 B = 400 MiB, and the run's config. An array's is a few
// hundred bytes.
const maxMetaBytes = 512 << 20

// readMeta reads a metadata file: a regular file of at most maxMetaBytes.
// One that is missing, or anything but a regular file in its place (a
// FIFO, a directory, a link: never opened so as to block, never followed),
// makes the checkpoint incomplete; one larger than any heat writes makes
// it damaged.
func readMeta(fsys FS, file string) ([]byte, error) {
	b, err := fsys.ReadFile(file, maxMetaBytes, nil)
	var big *safefile.TooLargeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("checkpoint: %s is missing: %w", file, ErrIncomplete)
	case errors.Is(err, safefile.ErrNotRegular):
		return nil, fmt.Errorf("checkpoint: %w: %w", err, ErrIncomplete)
	case errors.As(err, &big):
		return nil, fmt.Errorf("checkpoint: %s is %d bytes, more than any metadata heat writes (%d): %w", file, big.Size, big.Max, ErrChecksum)
	case err != nil:
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return b, nil
}

// object parses a metadata document as a JSON object; text that is not one
// is a damaged file.
func object(b []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		if err == nil {
			err = errors.New("not a JSON object")
		}
		return nil, fmt.Errorf("damaged, not valid JSON (%v): %w", err, ErrChecksum)
	}
	return m, nil
}

// incompatible is an ErrIncompatible error with a formatted reason.
func incompatible(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrIncompatible)
}

// header checks the members every Zarr v3 metadata document has.
func header(m map[string]json.RawMessage, nodeType string) error {
	var zf int
	if err := json.Unmarshal(m["zarr_format"], &zf); err != nil || zf != 3 {
		return incompatible("zarr_format is %s, want 3", shown(m["zarr_format"]))
	}
	var nt string
	if err := json.Unmarshal(m["node_type"], &nt); err != nil || nt != nodeType {
		return incompatible("node_type is %s, want %q", shown(m["node_type"]), nodeType)
	}
	return nil
}

// shown is a JSON value as an error message quotes it: "missing" when
// absent, cut short when long.
func shown(v json.RawMessage) string {
	if v == nil {
		return "missing"
	}
	s := string(v)
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return s
}

// extension parses a Zarr extension point: an object with a name and an
// optional configuration object, or a short-hand name.
func extension(v json.RawMessage) (name string, config map[string]json.RawMessage, mustUnderstand bool, err error) {
	if err := json.Unmarshal(v, &name); err == nil {
		return name, nil, true, nil
	}
	var obj struct {
		Name           *string                    `json:"name"`
		Configuration  map[string]json.RawMessage `json:"configuration"`
		MustUnderstand *bool                      `json:"must_understand"`
	}
	if err := json.Unmarshal(v, &obj); err != nil || obj.Name == nil {
		return "", nil, true, fmt.Errorf("%s is not an extension (an object with a name, or a name)", shown(v))
	}
	return *obj.Name, obj.Configuration, obj.MustUnderstand == nil || *obj.MustUnderstand, nil
}

// parseArray checks the array metadata and takes the grid, chunking and
// codecs from it.
func (am *arrayMeta) parseArray(b []byte) error {
	m, err := object(b)
	if err != nil {
		return err
	}
	if err := header(m, "array"); err != nil {
		return err
	}
	var shape []int
	if err := json.Unmarshal(m["shape"], &shape); err != nil || len(shape) < 1 || len(shape) > 3 {
		return incompatible("shape is %s, want 1 to 3 axes", shown(m["shape"]))
	}
	for _, n := range shape {
		if n < 1 {
			return incompatible("shape %v has an axis without cells", shape)
		}
	}
	nd := len(shape)

	var dt string
	if err := json.Unmarshal(m["data_type"], &dt); err != nil || (dt != Float64 && dt != Uint8) {
		return incompatible("data_type is %s, want \"float64\" (or \"uint8\" for a mask)", shown(m["data_type"]))
	}
	am.dtype = dt

	name, cfg, _, err := extension(m["chunk_grid"])
	if err != nil || name != "regular" {
		return incompatible("chunk_grid is %s, want a regular grid", shown(m["chunk_grid"]))
	}
	var chunk []int
	if err := json.Unmarshal(cfg["chunk_shape"], &chunk); err != nil || len(chunk) != nd || slices.Min(chunk) < 1 {
		return incompatible("chunk_shape is %s, want %d positive lengths", shown(cfg["chunk_shape"]), nd)
	}
	cells := 1
	for _, c := range chunk {
		cells *= c
		if cells > maxChunkValues {
			return incompatible("chunk_shape %v has more than %d values", chunk, maxChunkValues)
		}
	}
	// Bounds before anything is sized by them: the chunk count (each has a
	// key and a checksum in memory), the field's size.
	chunks, values := 1, 1
	for a, n := range shape {
		chunks *= (n + chunk[a] - 1) / chunk[a]
		values *= n
		if chunks > maxChunks || values > maxValues {
			return incompatible("shape %v in chunks of %v: more than %d chunks or %d values, more than heat writes", shape, chunk, maxChunks, maxValues)
		}
	}

	name, cfg, _, err = extension(m["chunk_key_encoding"])
	if err != nil || name != "default" {
		return incompatible("chunk_key_encoding is %s, want \"default\"", shown(m["chunk_key_encoding"]))
	}
	if sep, ok := cfg["separator"]; ok {
		var s string
		if err := json.Unmarshal(sep, &s); err != nil || s != "/" {
			return incompatible("chunk key separator is %s, want \"/\"", shown(sep))
		}
	}

	fill, err := fillValue(m["fill_value"])
	if err != nil {
		return err
	}
	if dt == Uint8 && (fill != math.Trunc(fill) || fill < 0 || fill > 255) {
		return incompatible("fill_value is %s, want a uint8", shown(m["fill_value"]))
	}
	am.fill = fill

	am.grid = newChunkGrid(shape, chunk) // the sharding codec checks its shards
	if err := am.parseCodecs(m["codecs"]); err != nil {
		return err
	}

	if v, ok := m["dimension_names"]; ok && string(v) != "null" {
		var names []*string
		if err := json.Unmarshal(v, &names); err != nil || len(names) != nd {
			return incompatible("dimension_names is %s, want %d names", shown(v), nd)
		}
	}
	if v, ok := m["storage_transformers"]; ok {
		var ts []json.RawMessage
		if err := json.Unmarshal(v, &ts); err != nil || len(ts) > 0 {
			return incompatible("storage_transformers %s are not supported", shown(v))
		}
	}
	if v, ok := m["attributes"]; ok {
		var attrs map[string]json.RawMessage
		if err := json.Unmarshal(v, &attrs); err != nil {
			return incompatible("attributes is %s, want an object", shown(v))
		}
	}
	known := []string{"zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding",
		"fill_value", "codecs", "dimension_names", "storage_transformers", "attributes"}
	if err := unknownMembers(m, known); err != nil {
		return err
	}
	am.grid = newChunkGrid(shape, chunk)
	return nil
}

// fillValue parses a float64 fill value: a number, "NaN", "Infinity",
// "-Infinity" or the bits as "0x" and 16 hex digits.
func fillValue(v json.RawMessage) (float64, error) {
	var f float64
	if err := json.Unmarshal(v, &f); err == nil {
		return f, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		switch {
		case s == "NaN":
			return math.Float64frombits(nanBits), nil
		case s == "Infinity":
			return math.Inf(1), nil
		case s == "-Infinity":
			return math.Inf(-1), nil
		case strings.HasPrefix(s, "0x") && len(s) == 18:
			if bits, err := strconv.ParseUint(s[2:], 16, 64); err == nil {
				return math.Float64frombits(bits), nil
			}
		}
	}
	return 0, incompatible("fill_value is %s, want a float64", shown(v))
}

// parseCodecs checks that the codecs are exactly [bytes (little endian),
// zstd], the chain Write uses.
func (am *arrayMeta) parseCodecs(v json.RawMessage) error {
	var codecs []json.RawMessage
	if err := json.Unmarshal(v, &codecs); err != nil {
		return incompatible("codecs is %s, want a list", shown(v))
	}
	if len(codecs) == 1 {
		if name, cfg, _, err := extension(codecs[0]); err == nil && name == "sharding_indexed" {
			return am.parseSharding(cfg)
		}
	}
	want := `[{"name":"bytes","configuration":{"endian":"little"}}, {"name":"zstd",...}]`
	if len(codecs) != 2 {
		return incompatible("codecs are %s, want %s", shown(v), want)
	}
	name, cfg, _, err := extension(codecs[0])
	if err != nil || name != "bytes" {
		return incompatible("codec 0 is %s, want %s", shown(codecs[0]), want)
	}
	var endian string
	if err := json.Unmarshal(cfg["endian"], &endian); err != nil || endian != "little" {
		return incompatible("bytes codec endian is %s, want \"little\"", shown(cfg["endian"]))
	}
	name, cfg, _, err = extension(codecs[1])
	if err != nil || name != "zstd" {
		return incompatible("codec 1 is %s, want %s", shown(codecs[1]), want)
	}
	if err := json.Unmarshal(cfg["level"], &am.level); err != nil {
		return incompatible("zstd level is %s, want an integer", shown(cfg["level"]))
	}
	if err := json.Unmarshal(cfg["checksum"], &am.checksum); err != nil {
		return incompatible("zstd checksum is %s, want a boolean", shown(cfg["checksum"]))
	}
	return nil
}

// parseSharding checks a sharding_indexed codec as Write writes it: inner
// chunks that divide the shard, their codecs [bytes, zstd], the index
// [bytes, crc32c] at the end.
func (am *arrayMeta) parseSharding(cfg map[string]json.RawMessage) error {
	nd := len(am.grid.shape)
	var inner []int
	if err := json.Unmarshal(cfg["chunk_shape"], &inner); err != nil || len(inner) != nd {
		return incompatible("sharding chunk_shape is %s, want %d lengths", shown(cfg["chunk_shape"]), nd)
	}
	n := 1
	for a, c := range inner {
		if c < 1 || am.grid.chunk[a]%c != 0 {
			return incompatible("sharding chunk_shape %v does not divide the shard shape %v", inner, am.grid.chunk)
		}
		n *= am.grid.chunk[a] / c
	}
	if n > maxChunks {
		return incompatible("shards of %d inner chunks, more than %d", n, maxChunks)
	}
	var loc string
	if err := json.Unmarshal(cfg["index_location"], &loc); err != nil || loc != "end" {
		return incompatible("sharding index_location is %s, want \"end\"", shown(cfg["index_location"]))
	}
	var ic []named
	if err := json.Unmarshal(cfg["index_codecs"], &ic); err != nil || len(ic) != 2 || ic[0].Name != "bytes" || ic[1].Name != "crc32c" {
		return incompatible("sharding index_codecs are %s, want [bytes, crc32c]", shown(cfg["index_codecs"]))
	}
	if e, _ := ic[0].Configuration["endian"].(string); e != "little" {
		return incompatible("sharding index endian is %v, want little", ic[0].Configuration["endian"])
	}
	if err := am.parseCodecs(cfg["codecs"]); err != nil {
		return err
	}
	if am.inner != nil {
		return incompatible("nested sharding is not supported")
	}
	am.inner = inner
	return nil
}

// unknownMembers refuses members outside known unless they are objects
// that say "must_understand": false, as the specification requires.
func unknownMembers(m map[string]json.RawMessage, known []string) error {
	for k, v := range m {
		if slices.Contains(known, k) {
			continue
		}
		var ext struct {
			MustUnderstand *bool `json:"must_understand"`
		}
		if err := json.Unmarshal(v, &ext); err == nil && ext.MustUnderstand != nil && !*ext.MustUnderstand {
			continue
		}
		return incompatible("unknown member %q that must be understood", k)
	}
	return nil
}

// parseGroup checks the group metadata and heat's record in it; it runs
// after parseArray, whose chunk grid the record must match. records are
// the group's records of the arrays beside u, by name.
func (ck *Checkpoint) parseGroup(b []byte) (records map[string]arrayRecord, err error) {
	m, err := object(b)
	if err != nil {
		return nil, err
	}
	if err := header(m, "group"); err != nil {
		return nil, err
	}
	if err := unknownMembers(m, []string{"zarr_format", "node_type", "attributes"}); err != nil {
		return nil, err
	}
	var attrs map[string]json.RawMessage
	if err := json.Unmarshal(m["attributes"], &attrs); err != nil || attrs["heat"] == nil {
		return nil, incompatible("no attributes.heat: not a heat checkpoint")
	}
	// (The format version was checked before the seal's array CRC32-C.)
	var h heatAttrs
	if err := json.Unmarshal(attrs["heat"], &h); err != nil {
		return nil, incompatible("attributes.heat: %v", err)
	}
	if h.Step < 0 || h.Ranks < 1 {
		return nil, incompatible("attributes.heat has step %d and ranks %d", h.Step, h.Ranks)
	}
	// Format for the field alone, MediaFormat with arrays beside it.
	if media := len(h.Arrays) > 0; media != (h.Format == MediaFormat) {
		return nil, incompatible("format version %d with %d arrays beside u (version %d is the field alone, %d the field with its media)", h.Format, len(h.Arrays), Format, MediaFormat)
	}
	u := &arrayOf{name: arrayName, dtype: Float64, sums: h.Chunks}
	if err := ck.checkSums(u, "attributes.heat.chunks"); err != nil {
		return nil, err
	}
	ck.sums = h.Chunks
	ck.arrays = []*arrayOf{u}
	ck.meta = Meta{Step: h.Step, Time: h.Time, Ranks: h.Ranks, Config: h.Config, Extra: h.Extra}
	if string(ck.meta.Config) == "null" {
		ck.meta.Config = nil
	}
	return h.Arrays, nil
}

// maxFileBytes is the most bytes a chunk file of ck can hold as Write
// writes it: one zstd frame of a chunk's values, or (sharded) a frame per
// inner chunk and the index. A chunk file is read by the size the metadata
// records (checked against the file's), so this bounds what a reader
// allocates for one, whatever the metadata says.
func (ck *Checkpoint) maxFileBytes() int { return ck.maxFileBytesOf(8) }

// maxFileBytesOf is maxFileBytes for an array of values of elem bytes.
func (ck *Checkpoint) maxFileBytesOf(elem int) int {
	if ck.inner == nil {
		return frameBound(elem * ck.grid.cells())
	}
	ig := innerGrid(ck.grid.chunk, ck.inner)
	return ig.len()*frameBound(elem*ig.cells()) + 16*ig.len() + 4
}
