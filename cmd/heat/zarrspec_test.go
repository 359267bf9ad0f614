package main

// An independent Zarr v3 reader for heat's checkpoints. It shares no code
// with package checkpoint: everything it knows comes from the Zarr v3 core
// specification (array and group metadata, regular chunk grid, default and
// v2 chunk key encodings, fill values, the bytes codec), the zstd and crc32c
// codec specifications and RFC 8878 (the zstd frame format). If heat's
// writer drifts from the spec, this reader is the one that notices.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
)

// zarrSpecNaN is the float64 the fill value "NaN" denotes: sign 0, the mantissa's
// most significant bit 1, every other mantissa bit 0.
const zarrSpecNaN = 0x7ff8000000000000

// zarrZstdFrame is what RFC 8878 §3.1.1.1 says about one frame's header.
type zarrZstdFrame struct {
	contentSize    int64 // -1: the header does not carry it
	checksum       bool  // Content_Checksum_flag
	dictionaryID   bool  // a Dictionary_ID field is present
	singleSegment  bool
	headerBytes    int
	reservedBitSet bool
}

// zarrZstdFrameHeader reads the frame header at the start of b.
func zarrZstdFrameHeader(b []byte) (zarrZstdFrame, error) {
	var f zarrZstdFrame
	if len(b) < 5 {
		return f, fmt.Errorf("zstd: %d bytes is too short for a frame header", len(b))
	}
	if m := binary.LittleEndian.Uint32(b); m != 0xFD2FB528 {
		if m&0xFFFFFFF0 == 0x184D2A50 {
			return f, fmt.Errorf("zstd: starts with a skippable frame (magic %#x)", m)
		}
		return f, fmt.Errorf("zstd: bad magic number %#x", m)
	}
	d := b[4]
	fcsFlag := d >> 6
	f.singleSegment = d&0x20 != 0
	f.reservedBitSet = d&0x08 != 0
	f.checksum = d&0x04 != 0
	didFlag := d & 0x03
	f.dictionaryID = didFlag != 0
	n := 5
	if !f.singleSegment {
		n++ // Window_Descriptor
	}
	n += [4]int{0, 1, 2, 4}[didFlag]
	fcsSize := [4]int{0, 2, 4, 8}[fcsFlag]
	if fcsFlag == 0 && f.singleSegment {
		fcsSize = 1
	}
	if len(b) < n+fcsSize {
		return f, fmt.Errorf("zstd: frame header truncated")
	}
	f.contentSize = -1
	switch fcsSize {
	case 1:
		f.contentSize = int64(b[n])
	case 2:
		f.contentSize = int64(binary.LittleEndian.Uint16(b[n:])) + 256
	case 4:
		f.contentSize = int64(binary.LittleEndian.Uint32(b[n:]))
	case 8:
		f.contentSize = int64(binary.LittleEndian.Uint64(b[n:]))
	}
	f.headerBytes = n + fcsSize
	return f, nil
}

// zarrCodec is one entry of an array's codec list, as this reader runs it.
type zarrCodec struct {
	name     string
	endian   binary.ByteOrder // bytes
	checksum bool             // zstd
	level    int              // zstd
}

// zarrArraySpec is an array metadata document, checked against the spec.
type zarrArraySpec struct {
	shape      []int
	chunkShape []int
	keyName    string // "default" or "v2"
	separator  string
	fillBits   uint64
	codecs     []zarrCodec // in the order the metadata lists them
	dimNames   []any       // strings or nil; nil slice when absent
	attributes map[string]any
}

// chunkKey is the store key of the chunk at grid index idx, per the array's
// chunk key encoding.
func (a *zarrArraySpec) chunkKey(idx []int) string {
	parts := make([]string, len(idx))
	for i, v := range idx {
		parts[i] = strconv.Itoa(v)
	}
	if a.keyName == "v2" {
		if len(idx) == 0 {
			return "0"
		}
		return strings.Join(parts, a.separator)
	}
	return strings.Join(append([]string{"c"}, parts...), a.separator)
}

// gridShape is ceil(shape / chunk_shape) per dimension.
func (a *zarrArraySpec) gridShape() []int {
	g := make([]int, len(a.shape))
	for i := range g {
		g[i] = (a.shape[i] + a.chunkShape[i] - 1) / a.chunkShape[i]
	}
	return g
}

// zarrChunk is one decoded chunk and what the reader saw on the way.
type zarrChunk struct {
	key     string
	missing bool // no value in the store: every element is the fill value
	encoded []byte
	values  []float64
	frames  []zarrZstdFrame // one per zstd codec, outermost first
}

// zarrReader reads one Zarr v3 hierarchy stored as a directory (the file
// system store: a key is a path relative to the root).
type zarrReader struct {
	root string
	dec  *zstd.Decoder
}

func newZarrReader(root string) (*zarrReader, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	return &zarrReader{root: root, dec: dec}, nil
}

func (r *zarrReader) Close() { r.dec.Close() }

// get is the store's get: nil, nil when the key has no value.
func (r *zarrReader) get(key string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(key)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// metadata reads the metadata document of the node at path ("" is the root).
func (r *zarrReader) metadata(path string) (map[string]any, error) {
	key := "zarr.json"
	if path != "" {
		key = path + "/zarr.json"
	}
	b, err := r.get(key)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, fmt.Errorf("%s: no such key", key)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var doc map[string]any
	if err := d.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%s: trailing data after the JSON object", key)
	}
	return doc, nil
}

// zarrJSONInt is a JSON number with no fraction or exponent part.
func zarrJSONInt(v any) (int, error) {
	n, ok := v.(json.Number)
	if !ok || strings.ContainsAny(n.String(), ".eE") {
		return 0, fmt.Errorf("%v (%T) is not an integer", v, v)
	}
	i, err := strconv.Atoi(n.String())
	return i, err
}

func zarrJSONInts(v any) ([]int, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%v (%T) is not an array", v, v)
	}
	out := make([]int, len(list))
	for i, e := range list {
		n, err := zarrJSONInt(e)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// zarrExtensionName is the form of a registered extension name; URIs (an
// older form) are still permitted.
var zarrExtensionName = regexp.MustCompile(`^[a-z][a-z0-9-_.]+$|^[a-z][a-z0-9+.-]*:`)

// extension reads an extension point's value: an object with a name and an
// optional configuration object, or a short-hand name (a string).
func zarrExtension(field string, v any) (name string, cfg map[string]any, err error) {
	switch e := v.(type) {
	case string:
		if !zarrExtensionName.MatchString(e) {
			return "", nil, fmt.Errorf("%s: %q is not a valid extension name", field, e)
		}
		return e, map[string]any{}, nil
	case map[string]any:
		n, ok := e["name"].(string)
		if !ok {
			return "", nil, fmt.Errorf("%s: name missing or not a string: %v", field, v)
		}
		cfg = map[string]any{}
		if c, present := e["configuration"]; present {
			if cfg, ok = c.(map[string]any); !ok {
				return "", nil, fmt.Errorf("%s: configuration is not an object: %v", field, v)
			}
		}
		for k := range e {
			if k != "name" && k != "configuration" && k != "must_understand" {
				return "", nil, fmt.Errorf("%s: unknown member %q", field, k)
			}
		}
		if !zarrExtensionName.MatchString(n) {
			return "", nil, fmt.Errorf("%s: %q is not a valid extension name", field, n)
		}
		return n, cfg, nil
	default:
		return "", nil, fmt.Errorf("%s: %v (%T) is neither an extension object nor a name", field, v, v)
	}
}

// zarrOnlyKeys fails on configuration members this reader does not know.
func zarrOnlyKeys(field string, cfg map[string]any, known ...string) error {
	for k := range cfg {
		found := false
		for _, kk := range known {
			found = found || k == kk
		}
		if !found {
			return fmt.Errorf("%s: unknown configuration member %q", field, k)
		}
	}
	return nil
}

// zarrCheckCommon checks zarr_format, node_type and the keys every node may have,
// and fails, as the spec requires, on any other key that does not say
// "must_understand": false.
func zarrCheckCommon(doc map[string]any, nodeType string, known ...string) error {
	zf, ok := doc["zarr_format"]
	if !ok {
		return errors.New("zarr_format missing")
	}
	if n, err := zarrJSONInt(zf); err != nil || n != 3 {
		return fmt.Errorf("zarr_format is %v, want the integer 3", zf)
	}
	if nt, _ := doc["node_type"].(string); nt != nodeType {
		return fmt.Errorf("node_type is %v, want %q", doc["node_type"], nodeType)
	}
	if a, present := doc["attributes"]; present {
		if _, ok := a.(map[string]any); !ok {
			return fmt.Errorf("attributes is not an object: %v", a)
		}
	}
	for k, v := range doc {
		isKnown := k == "zarr_format" || k == "node_type" || k == "attributes"
		for _, kk := range known {
			isKnown = isKnown || k == kk
		}
		if isKnown {
			continue
		}
		if o, ok := v.(map[string]any); ok && o["must_understand"] == false {
			continue
		}
		return fmt.Errorf("unknown metadata key %q (without \"must_understand\": false) must make a reader refuse the node", k)
	}
	return nil
}

// group reads and checks the group metadata document at path.
func (r *zarrReader) group(path string) (map[string]any, error) {
	doc, err := r.metadata(path)
	if err != nil {
		return nil, err
	}
	if err := zarrCheckCommon(doc, "group"); err != nil {
		return nil, fmt.Errorf("group %q: %w", path, err)
	}
	attrs, _ := doc["attributes"].(map[string]any)
	return attrs, nil
}

// array reads and checks the array metadata document at path.
func (r *zarrReader) array(path string) (*zarrArraySpec, error) {
	doc, err := r.metadata(path)
	if err != nil {
		return nil, err
	}
	a, err := zarrParseArray(doc)
	if err != nil {
		return nil, fmt.Errorf("array %q: %w", path, err)
	}
	return a, nil
}

func zarrParseArray(doc map[string]any) (*zarrArraySpec, error) {
	if err := zarrCheckCommon(doc, "array", "shape", "data_type", "chunk_grid", "chunk_key_encoding",
		"fill_value", "codecs", "storage_transformers", "dimension_names"); err != nil {
		return nil, err
	}
	for _, k := range []string{"shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs"} {
		if _, ok := doc[k]; !ok {
			return nil, fmt.Errorf("mandatory key %q missing", k)
		}
	}
	a := &zarrArraySpec{}
	a.attributes, _ = doc["attributes"].(map[string]any)

	var err error
	if a.shape, err = zarrJSONInts(doc["shape"]); err != nil {
		return nil, fmt.Errorf("shape: %w", err)
	}
	for _, n := range a.shape {
		if n < 0 {
			return nil, fmt.Errorf("shape %v has a negative length", a.shape)
		}
	}

	dt, _, err := zarrExtension("data_type", doc["data_type"])
	if err != nil {
		return nil, err
	}
	if dt != "float64" {
		return nil, fmt.Errorf("data_type %q: this reader only reads float64", dt)
	}

	name, cfg, err := zarrExtension("chunk_grid", doc["chunk_grid"])
	if err != nil {
		return nil, err
	}
	if name != "regular" {
		return nil, fmt.Errorf("chunk_grid %q: this reader only reads the regular grid", name)
	}
	if err := zarrOnlyKeys("chunk_grid", cfg, "chunk_shape"); err != nil {
		return nil, err
	}
	if a.chunkShape, err = zarrJSONInts(cfg["chunk_shape"]); err != nil {
		return nil, fmt.Errorf("chunk_grid.configuration.chunk_shape: %w", err)
	}
	if len(a.chunkShape) != len(a.shape) {
		return nil, fmt.Errorf("chunk_shape %v and shape %v differ in rank", a.chunkShape, a.shape)
	}
	for i, c := range a.chunkShape {
		if c <= 0 && a.shape[i] > 0 {
			return nil, fmt.Errorf("chunk_shape %v has a non-positive length", a.chunkShape)
		}
	}

	name, cfg, err = zarrExtension("chunk_key_encoding", doc["chunk_key_encoding"])
	if err != nil {
		return nil, err
	}
	if err := zarrOnlyKeys("chunk_key_encoding", cfg, "separator"); err != nil {
		return nil, err
	}
	a.keyName = name
	switch name {
	case "default":
		a.separator = "/"
	case "v2":
		a.separator = "."
	default:
		return nil, fmt.Errorf("chunk_key_encoding %q is not in the core spec", name)
	}
	if s, present := cfg["separator"]; present {
		if s != "/" && s != "." {
			return nil, fmt.Errorf("chunk_key_encoding separator %v: must be \"/\" or \".\"", s)
		}
		a.separator = s.(string)
	}

	if a.fillBits, err = zarrParseFill(doc["fill_value"]); err != nil {
		return nil, err
	}

	if a.codecs, err = zarrParseCodecs(doc["codecs"]); err != nil {
		return nil, err
	}

	if st, present := doc["storage_transformers"]; present {
		if list, ok := st.([]any); !ok || len(list) != 0 {
			return nil, fmt.Errorf("storage_transformers %v: this reader knows none", st)
		}
	}

	if dn, present := doc["dimension_names"]; present {
		list, ok := dn.([]any)
		if !ok || len(list) != len(a.shape) {
			return nil, fmt.Errorf("dimension_names %v: must be an array of %d strings or nulls", dn, len(a.shape))
		}
		for _, e := range list {
			if _, isString := e.(string); e != nil && !isString {
				return nil, fmt.Errorf("dimension_names %v: %v is neither a string nor null", dn, e)
			}
		}
		a.dimNames = list
	}
	return a, nil
}

// zarrParseFill reads a float64 fill value: a JSON number, "NaN",
// "Infinity", "-Infinity", or "0x" and the 16 hex digits of the bits.
func zarrParseFill(v any) (uint64, error) {
	switch f := v.(type) {
	case json.Number:
		x, err := strconv.ParseFloat(f.String(), 64)
		if err != nil {
			return 0, fmt.Errorf("fill_value %v: %w", v, err)
		}
		return math.Float64bits(x), nil
	case string:
		switch {
		case f == "NaN":
			return zarrSpecNaN, nil
		case f == "Infinity":
			return math.Float64bits(math.Inf(1)), nil
		case f == "-Infinity":
			return math.Float64bits(math.Inf(-1)), nil
		case strings.HasPrefix(f, "0x") && len(f) == 18:
			return strconv.ParseUint(f[2:], 16, 64)
		}
	}
	return 0, fmt.Errorf("fill_value %v (%T) is not a permitted float64 fill value", v, v)
}

// zarrParseCodecs checks the codec list's form (array->array codecs, exactly one
// array->bytes codec, bytes->bytes codecs) and each codec's configuration.
func zarrParseCodecs(v any) ([]zarrCodec, error) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, fmt.Errorf("codecs %v: must be a non-empty array", v)
	}
	var out []zarrCodec
	arrayToBytes := 0
	for i, e := range list {
		name, cfg, err := zarrExtension(fmt.Sprintf("codecs[%d]", i), e)
		if err != nil {
			return nil, err
		}
		c := zarrCodec{name: name}
		switch name {
		case "bytes":
			if arrayToBytes++; arrayToBytes > 1 {
				return nil, errors.New("codecs: more than one array -> bytes codec")
			}
			if err := zarrOnlyKeys("bytes", cfg, "endian"); err != nil {
				return nil, err
			}
			switch cfg["endian"] {
			case "little":
				c.endian = binary.LittleEndian
			case "big":
				c.endian = binary.BigEndian
			default:
				return nil, fmt.Errorf("bytes codec: endian %v: required for float64, \"little\" or \"big\"", cfg["endian"])
			}
		case "zstd", "crc32c":
			if arrayToBytes == 0 {
				return nil, fmt.Errorf("codecs: bytes -> bytes codec %q before the array -> bytes codec", name)
			}
			if name == "crc32c" {
				if err := zarrOnlyKeys(name, cfg); err != nil {
					return nil, err
				}
				break
			}
			if err := zarrOnlyKeys(name, cfg, "level", "checksum"); err != nil {
				return nil, err
			}
			if l, present := cfg["level"]; present {
				if c.level, err = zarrJSONInt(l); err != nil || c.level < -131072 || c.level > 22 {
					return nil, fmt.Errorf("zstd: level %v: an integer from -131072 to 22", l)
				}
			}
			if cs, present := cfg["checksum"]; present {
				if c.checksum, ok = cs.(bool); !ok {
					return nil, fmt.Errorf("zstd: checksum %v is not a boolean", cs)
				}
			}
		default:
			return nil, fmt.Errorf("codecs[%d]: codec %q is not one this reader implements", i, name)
		}
		out = append(out, c)
	}
	if arrayToBytes != 1 {
		return nil, errors.New("codecs: no array -> bytes codec")
	}
	return out, nil
}

// readChunk gets the chunk at grid index idx and decodes it, running the
// codec list in reverse as the spec's decoding procedure says.
func (r *zarrReader) readChunk(path string, a *zarrArraySpec, idx []int) (*zarrChunk, error) {
	ch := &zarrChunk{key: a.chunkKey(idx)}
	n := 1
	for _, c := range a.chunkShape {
		n *= c
	}
	ch.values = make([]float64, n)
	b, err := r.get(path + "/" + ch.key)
	if err != nil {
		return nil, err
	}
	if b == nil {
		ch.missing = true
		for i := range ch.values {
			ch.values[i] = math.Float64frombits(a.fillBits)
		}
		return ch, nil
	}
	ch.encoded = b
	for i := len(a.codecs) - 1; i >= 0; i-- {
		c := a.codecs[i]
		switch c.name {
		case "crc32c":
			if len(b) < 4 {
				return nil, fmt.Errorf("%s: crc32c: %d bytes", ch.key, len(b))
			}
			body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
			if got := crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)); got != sum {
				return nil, fmt.Errorf("%s: crc32c codec: stored %08x, computed %08x", ch.key, sum, got)
			}
			b = body
		case "zstd":
			f, err := zarrZstdFrameHeader(b)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", ch.key, err)
			}
			out, err := r.dec.DecodeAll(b, nil)
			if err != nil {
				return nil, fmt.Errorf("%s: zstd: %w", ch.key, err)
			}
			ch.frames = append(ch.frames, f)
			b = out
		case "bytes":
			if len(b) != 8*n {
				return nil, fmt.Errorf("%s: bytes codec: %d bytes, a %v chunk of float64 is %d", ch.key, len(b), a.chunkShape, 8*n)
			}
			for k := range ch.values {
				ch.values[k] = math.Float64frombits(c.endian.Uint64(b[8*k:]))
			}
		}
	}
	return ch, nil
}

// zarrRead is a whole array read back: the values in C order and every chunk.
type zarrRead struct {
	values []float64
	chunks []*zarrChunk
	// outside holds, per chunk in the same order, the bits of the elements
	// that lie past the array's edge.
	outside [][]uint64
}

// readAll reads every chunk of the grid and reassembles the array.
func (r *zarrReader) readAll(path string, a *zarrArraySpec) (*zarrRead, error) {
	total := 1
	for _, s := range a.shape {
		total *= s
	}
	res := &zarrRead{values: make([]float64, total)}
	grid := a.gridShape()
	nd := len(a.shape)
	idx := make([]int, nd)
	if total == 0 {
		return res, nil
	}
	for {
		ch, err := r.readChunk(path, a, idx)
		if err != nil {
			return nil, err
		}
		res.chunks = append(res.chunks, ch)
		var outside []uint64
		// Walk the chunk's elements in C order.
		local := make([]int, nd)
		for _, v := range ch.values {
			flat, in := 0, true
			for d := 0; d < nd; d++ {
				g := idx[d]*a.chunkShape[d] + local[d]
				if g >= a.shape[d] {
					in = false
				}
				flat = flat*a.shape[d] + g
			}
			if in {
				res.values[flat] = v
			} else {
				outside = append(outside, math.Float64bits(v))
			}
			for d := nd - 1; d >= 0; d-- {
				if local[d]++; local[d] < a.chunkShape[d] {
					break
				}
				local[d] = 0
			}
		}
		res.outside = append(res.outside, outside)
		d := nd - 1
		for ; d >= 0; d-- {
			if idx[d]++; idx[d] < grid[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return res, nil
		}
	}
}

// zarrFingerprint is report.json's field.sha256: SHA-256 over the values in C
// order, each as 8 little-endian bytes.
func zarrFingerprint(values []float64) string {
	h := sha256.New()
	var b [8]byte
	for _, v := range values {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func zarrJSONList(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, ",") + "]"
}

// zarrWriteFinalCheckpoint runs heat in-process and returns the report path and
// the directory of its final checkpoint.
func zarrWriteFinalCheckpoint(t *testing.T, shape, chunk []int, ranks, steps, level int, extra ...string) (out, ckpt string) {
	t.Helper()
	out = t.TempDir()
	args := []string{"run", "-q", "--out", out, "--steps", strconv.Itoa(steps), "--ranks", strconv.Itoa(ranks),
		"--set", "grid.shape=" + zarrJSONList(shape),
		"--set", "initial.kind=random",
		"--set", "checkpoint.final=true",
		"--set", "checkpoint.level=" + strconv.Itoa(level),
	}
	if chunk != nil {
		args = append(args, "--set", "checkpoint.chunk="+zarrJSONList(chunk))
	}
	args = append(args, extra...)
	code, _, stderr := heat(t, args...)
	require.Equal(t, 0, code, stderr)
	ckpt = filepath.Join(out, "checkpoints", fmt.Sprintf("step-%08d", steps))
	require.DirExists(t, ckpt, "the final checkpoint goes to <out>/checkpoints/step-NNNNNNNN")
	return out, ckpt
}

func TestZarrSpecReaderOpensCheckpoints(t *testing.T) {
	cases := []struct {
		name         string
		shape, chunk []int
		ranks, level int
	}{
		{"2d-edges", []int{37, 29}, []int{8, 7}, 3, 1},
		{"2d-exact", []int{32, 28}, []int{8, 7}, 4, 3},
		{"3d-edges", []int{9, 11, 10}, []int{4, 5, 3}, 4, 1},
		{"3d-whole-axis", []int{9, 11, 10}, []int{2, 11, 4}, 5, 5},
		{"2d-default-chunk", []int{37, 29}, nil, 2, 1},
		{"2d-tiny-chunks", []int{5, 4}, []int{2, 3}, 2, 1},         // single segment frames
		{"2d-large-chunk", []int{200, 300}, []int{128, 256}, 3, 1}, // 256 KiB, several zstd blocks
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const steps = 20
			out, dir := zarrWriteFinalCheckpoint(t, tc.shape, tc.chunk, tc.ranks, steps, tc.level, "--set", "checkpoint.shard=none") // the layout this reader reads: a file per chunk
			rep := readReport(t, filepath.Join(out, "report.json"))
			require.Len(t, rep.Field.SHA256, 64)

			r, err := newZarrReader(dir)
			require.NoError(t, err)
			defer r.Close()

			// The root is a group whose attributes.heat describe the state.
			attrs, err := r.group("")
			require.NoError(t, err)
			h, ok := attrs["heat"].(map[string]any)
			require.True(t, ok, "group attributes.heat missing: %v", attrs)
			step, err := zarrJSONInt(h["step"])
			require.NoError(t, err, "attributes.heat.step")
			require.Equal(t, steps, step)
			simTime, err := h["time"].(json.Number).Float64()
			require.NoError(t, err, "attributes.heat.time")
			require.Equal(t, float64(rep.SimTime), simTime, "attributes.heat.time is the report's sim_time")
			_, ok = h["config"].(map[string]any)
			require.True(t, ok, "attributes.heat.config is the resolved config, an object: %v", h["config"])

			// Every child of the group is a node with its own zarr.json.
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, e := range entries {
				if e.IsDir() && !strings.HasPrefix(e.Name(), "__") {
					require.FileExists(t, filepath.Join(dir, e.Name(), "zarr.json"), "child %q of the group is not a Zarr node", e.Name())
				}
			}

			a, err := r.array("u")
			require.NoError(t, err)
			require.Equal(t, tc.shape, a.shape)
			if tc.chunk != nil {
				require.Equal(t, tc.chunk, a.chunkShape)
			}
			require.Equal(t, "default", a.keyName)
			require.Equal(t, "/", a.separator)
			require.Equal(t, uint64(zarrSpecNaN), a.fillBits, `fill_value "NaN"`)
			require.Len(t, a.codecs, 2, "codecs [bytes, zstd]")
			require.Equal(t, "bytes", a.codecs[0].name)
			require.Equal(t, binary.ByteOrder(binary.LittleEndian), a.codecs[0].endian)
			require.Equal(t, "zstd", a.codecs[1].name)
			require.Equal(t, tc.level, a.codecs[1].level, "zstd level is checkpoint.level")
			require.True(t, a.codecs[1].checksum, "zstd checksum: true")
			require.Len(t, a.dimNames, len(a.shape), "dimension_names")

			got, err := r.readAll("u", a)
			require.NoError(t, err)

			// The field is the one the run fingerprinted, bit for bit.
			require.Equal(t, rep.Field.SHA256, zarrFingerprint(got.values), "SHA-256 of the array read back vs report.json field.sha256")

			nChunk := 1
			for _, c := range a.chunkShape {
				nChunk *= c
			}
			grid := a.gridShape()
			nGrid := 1
			for _, g := range grid {
				nGrid *= g
			}
			require.Len(t, got.chunks, nGrid)
			for i, ch := range got.chunks {
				require.False(t, ch.missing, "chunk %s is not in the store (it would read as fill values)", ch.key)
				require.Len(t, ch.frames, 1, ch.key)
				f := ch.frames[0]
				require.Equal(t, int64(8*nChunk), f.contentSize,
					"chunk %s: the zstd frame header must carry the content size (%d bytes, full chunk shape)", ch.key, 8*nChunk)
				require.Equal(t, a.codecs[1].checksum, f.checksum, "chunk %s: frame Content_Checksum_flag vs the codec's checksum", ch.key)
				require.False(t, f.dictionaryID, "chunk %s: a frame that needs a dictionary no reader has", ch.key)
				require.False(t, f.reservedBitSet, "chunk %s: reserved bit set in the frame header", ch.key)
				for _, bits := range got.outside[i] {
					require.True(t, math.IsNaN(math.Float64frombits(bits)), "chunk %s: an element past the array's edge is %v, not NaN", ch.key, math.Float64frombits(bits))
					require.Equal(t, fmt.Sprintf("%#016x", uint64(zarrSpecNaN)), fmt.Sprintf("%#016x", bits),
						"chunk %s: an element past the array's edge is not the fill value \"NaN\" bit for bit", ch.key)
				}
			}
			zarrCheckChunkSums(t, h, got)
		})
	}
}

// The reader is strict where the spec is: these documents and frames must
// be refused or flagged, or passing the tests above would prove little.
func TestZarrSpecReaderRefuses(t *testing.T) {
	valid := `{"zarr_format": 3, "node_type": "array", "shape": [5, 4], "data_type": "float64",
		"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 3]}},
		"chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
		"fill_value": "NaN",
		"codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
			{"name": "zstd", "configuration": {"level": 1, "checksum": true}}],
		"dimension_names": ["y", null], "attributes": {}}`
	parse := func(t *testing.T, edit func(map[string]any)) (*zarrArraySpec, error) {
		d := json.NewDecoder(strings.NewReader(valid))
		d.UseNumber()
		var doc map[string]any
		require.NoError(t, d.Decode(&doc))
		edit(doc)
		return zarrParseArray(doc)
	}
	a, err := parse(t, func(map[string]any) {})
	require.NoError(t, err)
	require.Equal(t, "c/2/1", a.chunkKey([]int{2, 1}))

	ok := map[string]func(map[string]any){
		"ignorable extension key": func(m map[string]any) { m["x"] = map[string]any{"must_understand": false} },
		"short-hand codec name":   func(m map[string]any) { m["codecs"] = []any{m["codecs"].([]any)[0], "zstd"} },
		"fill value as bits":      func(m map[string]any) { m["fill_value"] = "0x7ff8000000000000" },
		"no separator":            func(m map[string]any) { m["chunk_key_encoding"] = "default" },
	}
	for name, edit := range ok {
		_, err := parse(t, edit)
		require.NoError(t, err, name)
	}
	bad := map[string]func(map[string]any){
		"zarr_format 2":     func(m map[string]any) { m["zarr_format"] = json.Number("2") },
		"zarr_format 3.0":   func(m map[string]any) { m["zarr_format"] = json.Number("3.0") },
		"group node_type":   func(m map[string]any) { m["node_type"] = "group" },
		"unknown key":       func(m map[string]any) { m["consolidated"] = map[string]any{} },
		"no fill_value":     func(m map[string]any) { delete(m, "fill_value") },
		"no codecs":         func(m map[string]any) { m["codecs"] = []any{} },
		"zstd before bytes": func(m map[string]any) { c := m["codecs"].([]any); m["codecs"] = []any{c[1], c[0]} },
		"no endian":         func(m map[string]any) { m["codecs"] = []any{"bytes"} },
		"chunk rank": func(m map[string]any) {
			m["chunk_grid"].(map[string]any)["configuration"] = map[string]any{"chunk_shape": []any{json.Number("2")}}
		},
		"separator _": func(m map[string]any) {
			m["chunk_key_encoding"].(map[string]any)["configuration"] = map[string]any{"separator": "_"}
		},
		"fill value nan":       func(m map[string]any) { m["fill_value"] = "nan" },
		"dimension_names rank": func(m map[string]any) { m["dimension_names"] = []any{"y"} },
		"storage transformer":  func(m map[string]any) { m["storage_transformers"] = []any{"x"} },
		"unknown codec":        func(m map[string]any) { m["codecs"] = append(m["codecs"].([]any), "gzip") },
		"bad extension name":   func(m map[string]any) { m["codecs"].([]any)[1].(map[string]any)["name"] = "Zstd" },
	}
	for name, edit := range bad {
		_, err := parse(t, edit)
		require.Error(t, err, name)
	}

	// A streamed zstd frame has no content size in its header; a frame
	// from EncodeAll of small input, encoded as a single segment, has one.
	raw := bytes.Repeat([]byte("heat"), 1000)
	var streamed bytes.Buffer
	w, err := zstd.NewWriter(&streamed, zstd.WithEncoderCRC(true))
	require.NoError(t, err)
	_, err = w.Write(raw)
	require.NoError(t, err)
	require.NoError(t, w.Flush())
	require.NoError(t, w.Close())
	f, err := zarrZstdFrameHeader(streamed.Bytes())
	require.NoError(t, err)
	require.Equal(t, int64(-1), f.contentSize)
	require.True(t, f.checksum)
	e, err := zstd.NewWriter(nil, zstd.WithSingleSegment(true), zstd.WithEncoderCRC(false))
	require.NoError(t, err)
	f, err = zarrZstdFrameHeader(e.EncodeAll(raw[:100], nil))
	require.NoError(t, err)
	require.True(t, f.singleSegment)
	require.Equal(t, int64(100), f.contentSize)
	require.False(t, f.checksum)
	_, err = zarrZstdFrameHeader([]byte{0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0})
	require.Error(t, err, "skippable frame")
}

// zarrCheckChunkSums checks attributes.heat.chunks, heat's record of every
// chunk file (its CRC-32C and size), against the chunk files as stored: the
// record names exactly the chunks of the grid, under their Zarr keys.
func zarrCheckChunkSums(t *testing.T, heatAttrs map[string]any, got *zarrRead) {
	t.Helper()
	rec, ok := heatAttrs["chunks"].(map[string]any)
	require.True(t, ok, "attributes.heat.chunks is an object: %v", heatAttrs["chunks"])
	require.Len(t, rec, len(got.chunks), "attributes.heat.chunks names every chunk once")
	table := crc32.MakeTable(crc32.Castagnoli)
	for _, ch := range got.chunks {
		e, ok := rec[ch.key].(map[string]any)
		require.True(t, ok, "attributes.heat.chunks has no entry for chunk key %q", ch.key)
		crc, err := zarrJSONInt(e["crc32c"])
		require.NoError(t, err, "chunk %s: crc32c", ch.key)
		size, err := zarrJSONInt(e["bytes"])
		require.NoError(t, err, "chunk %s: bytes", ch.key)
		require.Equal(t, len(ch.encoded), size, "chunk %s: recorded size vs the file", ch.key)
		require.Equal(t, uint32(crc), crc32.Checksum(ch.encoded, table), "chunk %s: recorded CRC-32C vs the file", ch.key)
	}
}
