package media

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"

	"heat/field"
	"heat/internal/safefile"
)

// A Zarr v3 array folder (the core specification): zarr.json with
// "zarr_format": 3 and "node_type": "array", data_type float64 or float32,
// a regular chunk grid, the chunk key encoding default (separator "/" or
// ".") or v2, and the codecs "bytes" (little or big endian), then any of
// "zstd", "gzip" and "crc32c" — or "sharding_indexed" with inner chunks so
// coded and an index coded [bytes, crc32c?] at the start or the end of
// each shard (the layout heat's checkpoints write). A chunk (or inner
// chunk) that is not stored holds the fill value. A group (a heat
// checkpoint folder) stands for its array named as the map (k, rho_c: the
// media a heterogeneous run's checkpoint holds beside its field u).

// zarrArray is an open Zarr v3 array.
type zarrArray struct {
	dir      string
	meta     string // dir/zarr.json, for messages
	dims     []int
	chunk    []int // the chunk grid's chunk shape: with sharding, the shard shape
	dataType string
	item     int
	fill     float64
	key      func(idx []int) string // chunk index → key under dir
	codecs   chain                  // a chunk's codecs; with sharding, an inner chunk's
	shard    *sharding              // nil: not sharded
	zd       *zstd.Decoder
	bufs     [2][]byte // decoding buffers: a stage reads one, writes the other
	vals     []float64 // a decoded chunk's values
	// fillMissing reads a chunk that is not stored as the fill value;
	// false makes it a *missingChunk error.
	fillMissing bool
	dirs        map[string]error // folder → what inside found of it
}

// chain is a chunk's codecs: bytes with its byte order, then the
// bytes-to-bytes codecs in the order they were applied (decoding undoes
// them from the last).
type chain struct {
	order binary.ByteOrder
	post  []string // "zstd", "gzip", "crc32c"
}

// sharding is the sharding_indexed codec's configuration.
type sharding struct {
	inner      []int // the inner chunk shape
	per        []int // inner chunks per shard, per axis
	n          int   // inner chunks per shard
	indexOrder binary.ByteOrder
	indexCRC   bool
	atStart    bool
}

// named is a Zarr extension point: a name and an optional configuration.
type named struct {
	name string
	conf map[string]json.RawMessage
}

// parseNamed parses an extension point: a name, or an object with a name
// and a configuration; "must_understand": false marks one that may be
// ignored.
func parseNamed(v json.RawMessage) (named, bool, error) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return named{name: s}, true, nil
	}
	var obj struct {
		Name           *string                    `json:"name"`
		Configuration  map[string]json.RawMessage `json:"configuration"`
		MustUnderstand *bool                      `json:"must_understand"`
	}
	if err := json.Unmarshal(v, &obj); err != nil || obj.Name == nil {
		return named{}, true, fmt.Errorf("%s is not a name or an object with a name", shortJSON(v))
	}
	return named{*obj.Name, obj.Configuration}, obj.MustUnderstand == nil || *obj.MustUnderstand, nil
}

// shortJSON is a JSON value for a message: "missing" when absent, cut
// short when long.
func shortJSON(v json.RawMessage) string {
	if v == nil {
		return "missing"
	}
	s := string(v)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// openZarr opens the Zarr v3 array in folder dir, or, when dir is a group
// (a heat checkpoint), its array called name.
func openZarr(dir, name string) (*zarrArray, error) {
	meta := filepath.Join(dir, "zarr.json")
	b, err := readMeta(meta, dir)
	if err != nil {
		return nil, err
	}
	var head struct {
		ZarrFormat *int   `json:"zarr_format"`
		NodeType   string `json:"node_type"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("%s: not valid JSON: %v", meta, err)
	}
	if head.ZarrFormat == nil || *head.ZarrFormat != 3 {
		return nil, fmt.Errorf("%s: zarr_format is %s; heat reads Zarr v3 arrays (zarr_format 3)", meta, formatOf(head.ZarrFormat))
	}
	if head.NodeType == "group" {
		sub := filepath.Join(dir, name)
		if st, err := os.Lstat(sub); name != "" && err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s is a symbolic link: inside a Zarr folder heat follows no link", sub)
		}
		if st, err := os.Lstat(filepath.Join(sub, "zarr.json")); name != "" && err == nil && st.Mode().IsRegular() {
			return openZarr(sub, "") // the group's array called name
		}
		return nil, fmt.Errorf("%s is a Zarr group without an array %q: give the path of an array's folder, such as %s", dir, name, filepath.Join(dir, "u"))
	}
	if head.NodeType != "array" {
		return nil, fmt.Errorf("%s: node_type is %q, want \"array\"", meta, head.NodeType)
	}
	z := &zarrArray{dir: dir, meta: meta}
	if err := z.parse(b); err != nil {
		return nil, fmt.Errorf("%s: %v", meta, err)
	}
	return z, nil
}

func formatOf(p *int) string {
	if p == nil {
		return "missing"
	}
	return strconv.Itoa(*p)
}

// readMeta reads the metadata file meta of the folder dir.
func readMeta(meta, dir string) ([]byte, error) {
	b, err := safefile.ReadFile(meta, maxMetaBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s is a folder without zarr.json: not a Zarr v3 array", dir)
	case err != nil:
		return nil, openError(meta, err)
	}
	return b, nil
}

// parse takes the array metadata document b.
func (z *zarrArray) parse(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	if err := json.Unmarshal(m["shape"], &z.dims); err != nil || len(z.dims) < 1 {
		return fmt.Errorf("shape is %s, want a list of lengths", shortJSON(m["shape"]))
	}
	for _, n := range z.dims {
		if n < 0 {
			return fmt.Errorf("shape %v has a negative length", z.dims)
		}
	}
	if err := json.Unmarshal(m["data_type"], &z.dataType); err != nil {
		return fmt.Errorf("data_type is %s, want \"float64\" or \"float32\"", shortJSON(m["data_type"]))
	}
	switch z.dataType {
	case "float64":
		z.item = 8
	case "float32":
		z.item = 4
	default:
		return fmt.Errorf("data_type %q is not supported; a map is \"float64\" or \"float32\"", z.dataType)
	}
	grid, _, err := parseNamed(m["chunk_grid"])
	if err != nil || grid.name != "regular" {
		return fmt.Errorf("chunk_grid is %s; heat reads regular chunk grids", shortJSON(m["chunk_grid"]))
	}
	if err := json.Unmarshal(grid.conf["chunk_shape"], &z.chunk); err != nil || len(z.chunk) != len(z.dims) || slices.Min(z.chunk) < 1 {
		return fmt.Errorf("chunk_shape is %s, want %d positive lengths", shortJSON(grid.conf["chunk_shape"]), len(z.dims))
	}
	if err := z.parseKeys(m["chunk_key_encoding"]); err != nil {
		return err
	}
	if z.fill, err = parseFill(m["fill_value"], z.item); err != nil {
		return err
	}
	if err := z.parseCodecs(m["codecs"]); err != nil {
		return err
	}
	if v, ok := m["storage_transformers"]; ok {
		var ts []json.RawMessage
		if err := json.Unmarshal(v, &ts); err != nil || len(ts) > 0 {
			return fmt.Errorf("storage_transformers %s are not supported", shortJSON(v))
		}
	}
	known := []string{"zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding",
		"fill_value", "codecs", "dimension_names", "storage_transformers", "attributes"}
	for k, v := range m {
		if slices.Contains(known, k) {
			continue
		}
		var ext struct {
			MustUnderstand *bool `json:"must_understand"`
		}
		if json.Unmarshal(v, &ext) == nil && ext.MustUnderstand != nil && !*ext.MustUnderstand {
			continue
		}
		return fmt.Errorf("member %q is not one heat understands (and it does not say \"must_understand\": false)", k)
	}
	return z.bound()
}

// bound refuses chunks whose decoding would take more memory than the
// array's shape implies (or 8 MiB, for a small array), before any is read.
func (z *zarrArray) bound() error {
	limit := 1 << 20
	total := 1
	for _, n := range z.dims {
		if n > 0 && total > math.MaxInt32/n {
			total = math.MaxInt32
			break
		}
		total *= n
	}
	limit = max(limit, total)
	decoded := z.chunk
	if z.shard != nil {
		decoded = z.shard.inner
		if z.shard.n > limit {
			return fmt.Errorf("shards of %v inner chunks of %v: %d inner chunks a shard, more than the %d a map of shape %v may take", z.chunk, z.shard.inner, z.shard.n, limit, z.dims)
		}
	}
	n := 1
	for _, c := range decoded {
		if n > limit/c {
			return fmt.Errorf("chunks of %v hold more values than the %d a map of shape %v may take", decoded, limit, z.dims)
		}
		n *= c
	}
	return nil
}

// parseKeys takes the chunk key encoding.
func (z *zarrArray) parseKeys(v json.RawMessage) error {
	enc, _, err := parseNamed(v)
	if err != nil {
		return fmt.Errorf("chunk_key_encoding: %v", err)
	}
	sep := map[string]string{"default": "/", "v2": "."}[enc.name]
	if sep == "" {
		return fmt.Errorf("chunk_key_encoding %q is not supported (heat reads \"default\" and \"v2\")", enc.name)
	}
	if s, ok := enc.conf["separator"]; ok {
		if err := json.Unmarshal(s, &sep); err != nil || (sep != "/" && sep != ".") {
			return fmt.Errorf("chunk key separator is %s, want \"/\" or \".\"", shortJSON(s))
		}
	}
	prefix := "c" + sep
	if enc.name == "v2" {
		prefix = ""
	}
	z.key = func(idx []int) string {
		var b strings.Builder
		b.WriteString(prefix)
		for a, i := range idx {
			if a > 0 {
				b.WriteString(sep)
			}
			b.WriteString(strconv.Itoa(i))
		}
		return b.String()
	}
	return nil
}

// parseFill parses a float fill value: a number, "NaN", "Infinity",
// "-Infinity", or the value's bits as "0x" and hex digits (8 for float32,
// 16 for float64).
func parseFill(v json.RawMessage, item int) (float64, error) {
	var f float64
	if json.Unmarshal(v, &f) == nil {
		return f, nil
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		switch {
		case s == "NaN":
			return math.NaN(), nil
		case s == "Infinity":
			return math.Inf(1), nil
		case s == "-Infinity":
			return math.Inf(-1), nil
		case strings.HasPrefix(s, "0x") && len(s) == 2+2*item:
			bits, err := strconv.ParseUint(s[2:], 16, 64)
			if err == nil && item == 8 {
				return math.Float64frombits(bits), nil
			}
			if err == nil {
				return float64(math.Float32frombits(uint32(bits))), nil
			}
		}
	}
	return 0, fmt.Errorf("fill_value is %s, want a number, \"NaN\", \"Infinity\", \"-Infinity\" or hex bits", shortJSON(v))
}

// codecList is the codecs heat reads, for messages.
const codecList = `"bytes", then "zstd", "gzip" or "crc32c"; or "sharding_indexed" with those inside`

// parseCodecs takes the array's codecs: a chain (parseChain) or one
// sharding_indexed codec.
func (z *zarrArray) parseCodecs(v json.RawMessage) error {
	var list []json.RawMessage
	if err := json.Unmarshal(v, &list); err != nil || len(list) == 0 {
		return fmt.Errorf("codecs is %s, want a list", shortJSON(v))
	}
	first, _, err := parseNamed(list[0])
	if err != nil {
		return fmt.Errorf("codec 0: %v", err)
	}
	if first.name != "sharding_indexed" {
		z.codecs, err = parseChain(list)
		return err
	}
	if len(list) > 1 {
		c, _, _ := parseNamed(list[1])
		return fmt.Errorf("codec %q after sharding_indexed is not supported (heat reads %s)", c.name, codecList)
	}
	sh := &sharding{}
	if err := json.Unmarshal(first.conf["chunk_shape"], &sh.inner); err != nil || len(sh.inner) != len(z.dims) {
		return fmt.Errorf("sharding_indexed chunk_shape is %s, want %d lengths", shortJSON(first.conf["chunk_shape"]), len(z.dims))
	}
	sh.n = 1
	for a, c := range sh.inner {
		if c < 1 || z.chunk[a]%c != 0 {
			return fmt.Errorf("sharding_indexed chunk_shape %v does not divide the shard shape %v", sh.inner, z.chunk)
		}
		sh.per = append(sh.per, z.chunk[a]/c)
		if sh.n > math.MaxInt32/(z.chunk[a]/c) {
			return fmt.Errorf("shards of %v inner chunks of %v: too many inner chunks", z.chunk, sh.inner)
		}
		sh.n *= z.chunk[a] / c
	}
	var inner []json.RawMessage
	if err := json.Unmarshal(first.conf["codecs"], &inner); err != nil || len(inner) == 0 {
		return fmt.Errorf("sharding_indexed codecs is %s, want a list", shortJSON(first.conf["codecs"]))
	}
	if z.codecs, err = parseChain(inner); err != nil {
		return fmt.Errorf("sharding_indexed: %v", err)
	}
	var index []json.RawMessage
	if err := json.Unmarshal(first.conf["index_codecs"], &index); err != nil || len(index) == 0 {
		return fmt.Errorf("sharding_indexed index_codecs is %s, want a list", shortJSON(first.conf["index_codecs"]))
	}
	ic, err := parseChain(index)
	if err != nil {
		return fmt.Errorf("sharding_indexed index: %v", err)
	}
	switch {
	case len(ic.post) == 0:
	case len(ic.post) == 1 && ic.post[0] == "crc32c":
		sh.indexCRC = true
	default:
		return fmt.Errorf("sharding_indexed index_codecs %v are not supported (heat reads \"bytes\", then \"crc32c\" or nothing)", ic.post)
	}
	sh.indexOrder = ic.order
	loc := "end"
	if v, ok := first.conf["index_location"]; ok {
		if err := json.Unmarshal(v, &loc); err != nil || (loc != "start" && loc != "end") {
			return fmt.Errorf("sharding_indexed index_location is %s, want \"start\" or \"end\"", shortJSON(v))
		}
	}
	sh.atStart = loc == "start"
	z.shard = sh
	return nil
}

// parseChain parses the codecs of a chunk: "bytes" with its endian, then
// "zstd", "gzip" and "crc32c" in any order.
func parseChain(list []json.RawMessage) (chain, error) {
	var c chain
	for i, v := range list {
		n, _, err := parseNamed(v)
		if err != nil {
			return c, fmt.Errorf("codec %d: %v", i, err)
		}
		switch {
		case i == 0 && n.name == "bytes":
			var endian string
			if err := json.Unmarshal(n.conf["endian"], &endian); err != nil {
				return c, fmt.Errorf("the bytes codec has no endian (%s), which values of more than one byte need", shortJSON(n.conf["endian"]))
			}
			switch endian {
			case "little":
				c.order = binary.LittleEndian
			case "big":
				c.order = binary.BigEndian
			default:
				return c, fmt.Errorf("the bytes codec's endian is %q, want \"little\" or \"big\"", endian)
			}
		case i > 0 && (n.name == "zstd" || n.name == "gzip" || n.name == "crc32c"):
			c.post = append(c.post, n.name)
		case i == 0 && n.name == "sharding_indexed":
			return c, errors.New("codec \"sharding_indexed\" inside sharding_indexed (nested sharding) is not supported")
		default:
			return c, fmt.Errorf("codec %q is not supported (heat reads %s)", n.name, codecList)
		}
	}
	return c, nil
}

func (z *zarrArray) shape() []int { return z.dims }

func (z *zarrArray) close() {
	if z.zd != nil {
		z.zd.Close()
	}
}

// decodedShape is the shape of a chunk as decoded: an inner chunk
// when sharded.
func (z *zarrArray) decodedShape() []int {
	if z.shard != nil {
		return z.shard.inner
	}
	return z.chunk
}

// maxStored is the most bytes a stored chunk of raw bytes may take:
// compression may add a little, a crc32c four bytes.
func (c chain) maxStored(raw int) int {
	n := raw
	for _, p := range c.post {
		if p == "crc32c" {
			n += 4
		} else {
			n += n/64 + 1024
		}
	}
	return n
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// decode undoes the codecs of the stored chunk data (what, for messages)
// and converts its values into z.vals, which then holds the decoded
// chunk, C order. No stage may produce more than the chunk's bytes and
// the checksums still to strip.
func (z *zarrArray) decode(data []byte, what string) error {
	n := field.Cells(z.decodedShape())
	raw := n * z.item
	limit := raw + 4*len(z.codecs.post)
	cur := -1 // the buffer data lies in; -1: the stored bytes
	target := func() int {
		if cur < 0 {
			return 0
		}
		return 1 - cur
	}
	for i := len(z.codecs.post) - 1; i >= 0; i-- {
		switch z.codecs.post[i] {
		case "crc32c":
			if len(data) < 4 {
				return fmt.Errorf("%s: %d bytes, too short for its crc32c", what, len(data))
			}
			body := data[:len(data)-4]
			if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(data[len(body):]); got != want {
				return fmt.Errorf("%s: damaged: its CRC32-C is %08x, it records %08x", what, got, want)
			}
			data = body
		case "zstd":
			if z.zd == nil {
				// The bound is also the largest window a frame may ask
				// for; 8 MiB (the window of most encoders' default level)
				// at least, as bound allows for any map.
				d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(max(limit, 8<<20))))
				if err != nil {
					return err
				}
				z.zd = d
			}
			t := target()
			out, err := z.zd.DecodeAll(data, z.bufs[t][:0])
			if err != nil {
				return fmt.Errorf("%s: zstd: %v", what, err)
			}
			z.bufs[t], data, cur = out, out, t
		case "gzip":
			r, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				return fmt.Errorf("%s: gzip: %v", what, err)
			}
			t := target()
			if cap(z.bufs[t]) < limit+1 {
				z.bufs[t] = make([]byte, limit+1)
			}
			buf := z.bufs[t][:limit+1]
			m, err := io.ReadFull(r, buf[:limit+1])
			if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("%s: gzip: %v", what, err)
			}
			if m > limit {
				return fmt.Errorf("%s: gzip: decodes to more than the %d bytes of a chunk of %v %s values", what, raw, z.decodedShape(), z.dataType)
			}
			data, cur = buf[:m], t
		}
	}
	if len(data) != raw {
		return fmt.Errorf("%s decodes to %d bytes, but a chunk of %v %s values is %d", what, len(data), z.decodedShape(), z.dataType, raw)
	}
	if cap(z.vals) < n {
		z.vals = make([]float64, n)
	}
	z.vals = z.vals[:n]
	decodeValues(z.vals, data, z.item, z.codecs.order)
	return nil
}

// readChunk reads the stored chunk file (not sharded) into z.vals; errMissing
// when it is not stored.
func (z *zarrArray) readChunk(key string) error {
	file := joinKey(z.dir, key)
	if err := z.inside(file); err != nil {
		return err
	}
	raw := field.Cells(z.chunk) * z.item
	b, err := safefile.ReadFile(file, int64(z.codecs.maxStored(raw)))
	var big *safefile.TooLargeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errMissing
	case errors.As(err, &big):
		return fmt.Errorf("%s is %d bytes, more than a chunk of %v %s values can take (%d)", file, big.Size, z.chunk, z.dataType, big.Max)
	case err != nil:
		return openError(file, err)
	}
	return z.decode(b, file)
}

// shardFile is one open shard: its file and index.
type shardFile struct {
	f     *os.File
	path  string
	size  int64
	index []byte // 16 bytes an inner chunk: offset, length
}

// openShard opens the shard of the given key and reads its index; nil
// (and no error) when the shard is not stored.
func (z *zarrArray) openShard(key string) (*shardFile, error) {
	sh := z.shard
	file := joinKey(z.dir, key)
	if err := z.inside(file); err != nil {
		return nil, err
	}
	f, st, err := safefile.Open(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, openError(file, err)
	}
	s := &shardFile{f: f, path: file, size: st.Size()}
	n := int64(16 * sh.n)
	if sh.indexCRC {
		n += 4
	}
	if s.size < n {
		f.Close()
		return nil, fmt.Errorf("%s is %d bytes, too short for the index of its %d inner chunks (%d bytes)", file, s.size, sh.n, n)
	}
	at := s.size - n
	if sh.atStart {
		at = 0
	}
	idx := make([]byte, n)
	if _, err := f.ReadAt(idx, at); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: reading its index: %v", file, err)
	}
	if sh.indexCRC {
		body := idx[:16*sh.n]
		if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(idx[16*sh.n:]); got != want {
			f.Close()
			return nil, fmt.Errorf("%s: damaged index: its CRC32-C is %08x, it records %08x", file, got, want)
		}
	}
	s.index = idx[:16*sh.n]
	return s, nil
}

// readInner reads inner chunk number k (C order within the shard) of s
// into z.vals; errMissing when it is not stored.
func (z *zarrArray) readInner(s *shardFile, k int, buf *[]byte) error {
	order := z.shard.indexOrder
	off, n := order.Uint64(s.index[16*k:]), order.Uint64(s.index[16*k+8:])
	if off == math.MaxUint64 && n == math.MaxUint64 {
		return errMissing
	}
	inner := z.shard.inner
	most := uint64(z.codecs.maxStored(field.Cells(inner) * z.item))
	what := fmt.Sprintf("%s, inner chunk %v", s.path, unravel(k, z.shard.per))
	if n > most || off > uint64(s.size) || n > uint64(s.size)-off {
		return fmt.Errorf("%s: its index gives %d bytes at offset %d, outside the file of %d bytes or more than such a chunk takes (%d)", what, n, off, s.size, most)
	}
	if uint64(cap(*buf)) < n {
		*buf = make([]byte, n)
	}
	b := (*buf)[:n]
	if _, err := s.f.ReadAt(b, int64(off)); err != nil {
		return fmt.Errorf("%s: %v", what, err)
	}
	return z.decode(b, what)
}

// chunkBox is the box of the chunk (or shard) at grid index ci: its first
// cell and one past its last, inside the chunk's full shape (which may
// reach past the array).
func chunkBox(ci, chunk []int) (lo, hi []int) {
	lo, hi = make([]int, len(ci)), make([]int, len(ci))
	for a := range ci {
		lo[a] = ci[a] * chunk[a]
		hi[a] = lo[a] + chunk[a]
	}
	return lo, hi
}

// eachChunk calls fn with the grid index of every chunk of size chunk
// that meets the box [lo, hi), C order.
func eachChunk(lo, hi, chunk []int, fn func(ci []int) error) error {
	nd := len(lo)
	clo, chi := make([]int, nd), make([]int, nd)
	for a := range nd {
		if hi[a] <= lo[a] {
			return nil
		}
		clo[a], chi[a] = lo[a]/chunk[a], (hi[a]-1)/chunk[a]+1
	}
	ci := slices.Clone(clo)
	for {
		if err := fn(ci); err != nil {
			return err
		}
		a := nd - 1
		for ; a >= 0; a-- {
			if ci[a]++; ci[a] < chi[a] {
				break
			}
			ci[a] = clo[a]
		}
		if a < 0 {
			return nil
		}
	}
}

// blocks calls fn for every decoded chunk (inner chunk, when sharded) that
// meets the box [lo, hi): its box, its values (z.vals, C order over the
// chunk's full shape; nil when not stored) and its name for messages.
func (z *zarrArray) blocks(lo, hi []int, fn func(blo, bhi []int, vals []float64, name string) error) error {
	if z.shard == nil {
		return eachChunk(lo, hi, z.chunk, func(ci []int) error {
			blo, bhi := chunkBox(ci, z.chunk)
			key := z.key(ci)
			switch err := z.readChunk(key); {
			case errors.Is(err, errMissing):
				if err := z.missing(lo, hi, blo, bhi, joinKey(z.dir, key)); err != nil {
					return err
				}
				return fn(blo, bhi, nil, joinKey(z.dir, key))
			case err != nil:
				return err
			}
			return fn(blo, bhi, z.vals, joinKey(z.dir, key))
		})
	}
	var buf []byte
	return eachChunk(lo, hi, z.chunk, func(si []int) error {
		key := z.key(si)
		s, err := z.openShard(key)
		if err != nil {
			return err
		}
		slo, shi := chunkBox(si, z.chunk)
		if s == nil {
			if err := z.missing(lo, hi, slo, shi, joinKey(z.dir, key)); err != nil {
				return err
			}
			return fn(slo, shi, nil, joinKey(z.dir, key))
		}
		defer s.f.Close()
		ilo, ihi, _ := intersect(lo, hi, slo, shi)
		for a := range ilo {
			ilo[a] -= slo[a]
			ihi[a] -= slo[a]
		}
		return eachChunk(ilo, ihi, z.shard.inner, func(ii []int) error {
			blo, bhi := chunkBox(ii, z.shard.inner)
			for a := range blo {
				blo[a] += slo[a]
				bhi[a] += slo[a]
			}
			name := fmt.Sprintf("%s, inner chunk %v", joinKey(z.dir, key), ii)
			switch err := z.readInner(s, field.Linear(ii, z.shard.per), &buf); {
			case errors.Is(err, errMissing):
				if err := z.missing(lo, hi, blo, bhi, name); err != nil {
					return err
				}
				return fn(blo, bhi, nil, name)
			case err != nil:
				return err
			}
			return fn(blo, bhi, z.vals, name)
		})
	})
}

// read assembles the box from the chunks that meet it.
func (z *zarrArray) read(lo, hi []int, dst []float64) error {
	box := boxShape(lo, hi)
	return z.blocks(lo, hi, func(blo, bhi []int, vals []float64, _ string) error {
		ilo, ihi, ok := intersect(lo, hi, blo, bhi)
		if !ok {
			return nil
		}
		if vals == nil {
			_ = eachRow(ilo, ihi, func(start []int, n int) error {
				i := field.Linear(offsetNeg(start, lo), box)
				fill(dst[i:i+n], z.fill)
				return nil
			})
			return nil
		}
		copyBox(dst, lo, box, vals, blo, boxShape(blo, bhi), ilo, ihi)
		return nil
	})
}

// offsetNeg is idx − lo, a new slice.
func offsetNeg(idx, lo []int) []int {
	out := make([]int, len(idx))
	for a := range idx {
		out[a] = idx[a] - lo[a]
	}
	return out
}

// scan passes every chunk's part inside the array, one at a time.
func (z *zarrArray) scan(fn func(vals []float64, at func(int) []int, missing string) error) error {
	zero := make([]int, len(z.dims))
	var part []float64
	return z.blocks(zero, z.dims, func(blo, bhi []int, vals []float64, name string) error {
		ilo, ihi, ok := intersect(zero, z.dims, blo, bhi)
		if !ok {
			return nil
		}
		sh := boxShape(ilo, ihi)
		if vals == nil {
			// One value stands for the whole chunk: the fill value.
			return fn([]float64{z.fill}, func(int) []int { return ilo }, name)
		}
		if n := field.Cells(sh); cap(part) < n {
			part = make([]float64, n)
		}
		part = part[:field.Cells(sh)]
		copyBox(part, ilo, sh, vals, blo, boxShape(blo, bhi), ilo, ihi)
		return fn(part, func(k int) []int { return offset(ilo, unravel(k, sh)) }, "")
	})
}

// KeyMissing is the config key that lets a Zarr input's chunks that are
// not stored read as its fill value, in messages.
const KeyMissing = "maps.missing"

// missingChunk is a chunk (shard, inner chunk) of a Zarr input that is not
// stored, where its fill value is not to be read: name is its file (and
// inner chunk), first its first cell in the box read, fill the value it
// would have read as.
type missingChunk struct {
	name  string
	first []int
	fill  float64
}

func (e *missingChunk) Error() string {
	return fmt.Sprintf("chunk %s is not stored (its first cell read is %v): it would read as the fill value %s; store it, or set %s = \"fill\" to read the chunks a Zarr input does not store as its fill value",
		e.name, e.first, FormatNumber(e.fill), KeyMissing)
}

// missing is the error of the chunk called name, the box [blo, bhi), not
// being stored, when it meets the box [lo, hi) read and its fill value is
// not to be read; nil otherwise.
func (z *zarrArray) missing(lo, hi, blo, bhi []int, name string) error {
	ilo, _, ok := intersect(lo, hi, blo, bhi)
	if z.fillMissing || !ok {
		return nil
	}
	return &missingChunk{name: name, first: ilo, fill: z.fill}
}

// inside checks that every folder between the array's and file is a
// folder, not a link (nor anything else), so that no read leaves the
// array's folder. Each folder is looked at once; one that is missing
// passes (the file is then not stored).
func (z *zarrArray) inside(file string) error {
	rel, err := filepath.Rel(z.dir, filepath.Dir(file))
	if err != nil || rel == "." {
		return err
	}
	if z.dirs == nil {
		z.dirs = map[string]error{}
	}
	dir := z.dir
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		dir = filepath.Join(dir, part)
		bad, seen := z.dirs[dir]
		if !seen {
			st, err := os.Lstat(dir)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return nil
			case err != nil:
				bad = fmt.Errorf("%s: %v", dir, unwrapPath(err))
			case !st.IsDir():
				bad = fmt.Errorf("%s is %s, not a folder: inside a Zarr folder heat follows no link, so that nothing read resolves outside it", dir, safefile.Kind(st.Mode().Type()))
			}
			z.dirs[dir] = bad
		}
		if bad != nil {
			return bad
		}
	}
	return nil
}
