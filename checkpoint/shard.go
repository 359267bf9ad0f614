package checkpoint

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"heat/decomp"
	"heat/field"
)

// Sharding (Zarr v3's sharding_indexed codec): with Options.Shard a chunk
// of the array's grid is a shard, one file holding the shard's inner chunks
// (Options.Chunk, which must divide it), each its own zstd frame, one after
// another, then the index — an (offset, length) pair of little-endian
// uint64 for every inner chunk in C order — then the index's CRC32-C
// (index_codecs [bytes, crc32c], index_location "end"). With shards the
// size of the ranks' boxes a checkpoint is one file per writer, whatever
// the chunk count.

// shardShapes are the shard and inner chunk shapes Write uses for a grid
// of shape: the shard cut to the grid (to whole inner chunks), and the
// inner chunk opt gives (cut to the grid; it must divide the shard) or, by
// default, along each axis the largest divisor of the shard's length up to
// DefaultChunk's.
func shardShapes(shape, shard, chunk []int) (outer, inner []int, err error) {
	if len(shard) != len(shape) {
		return nil, nil, fmt.Errorf("checkpoint: shard shape %v has %d axes but the grid %v has %d", shard, len(shard), shape, len(shape))
	}
	outer = make([]int, len(shape))
	cells := 1
	for a, n := range shard {
		if n < 1 {
			return nil, nil, fmt.Errorf("checkpoint: shard shape %v: every axis needs at least 1 cell", shard)
		}
		outer[a] = min(n, shape[a])
		cells *= outer[a]
		if cells > maxChunkValues {
			return nil, nil, fmt.Errorf("checkpoint: shard shape %v has more than %d values", outer, maxChunkValues)
		}
	}
	if len(chunk) == 0 {
		inner = DefaultChunk(outer)
		for a := range inner {
			for outer[a]%inner[a] != 0 {
				inner[a]--
			}
		}
		return outer, inner, nil
	}
	if len(chunk) != len(shape) {
		return nil, nil, fmt.Errorf("checkpoint: chunk shape %v has %d axes but the grid %v has %d", chunk, len(chunk), shape, len(shape))
	}
	inner = slices.Clone(chunk)
	for a := range inner {
		inner[a] = min(inner[a], shape[a])
		if inner[a] >= 1 && shard[a] >= shape[a] {
			// A shard as long as the grid or longer is cut to the grid's length
			// rounded up to whole inner chunks.
			outer[a] = inner[a] * ((shape[a] + inner[a] - 1) / inner[a])
		}
		if inner[a] < 1 || outer[a]%inner[a] != 0 {
			return nil, nil, fmt.Errorf("checkpoint: chunk shape %v does not divide the shard shape %v (Zarr's sharding needs whole inner chunks)", chunk, outer)
		}
	}
	return outer, inner, nil
}

// innerGrid is the grid of inner chunks of one shard.
func innerGrid(shard, inner []int) chunkGrid { return newChunkGrid(shard, inner) }

// emptyEntry marks an inner chunk that is not stored (the fill value).
const emptyEntry = math.MaxUint64

// encoded is one chunk file compressed and ready to write (io.WriterTo):
// the zstd frame of an unsharded chunk, or (sharded) the frames of the
// shard's inner chunks in C order, then the index and its CRC32-C. CRC and
// Bytes are the whole file's, once written.
type encoded struct {
	frames  [][]byte
	sharded bool
	CRC     uint32
	Bytes   int
}

// Len is the file's length in bytes (OS.WriteFile writes a file of at
// least directMin around the page cache).
func (e *encoded) Len() int {
	n := 0
	for _, f := range e.frames {
		n += len(f)
	}
	if e.sharded {
		n += 16*len(e.frames) + 4
	}
	return n
}

func (e *encoded) WriteTo(w io.Writer) (int64, error) {
	e.CRC, e.Bytes = 0, 0
	var index []byte
	if e.sharded {
		index = make([]byte, 16*len(e.frames), 16*len(e.frames)+4)
	}
	var off uint64
	for i, f := range e.frames {
		if e.sharded {
			binary.LittleEndian.PutUint64(index[16*i:], off)
			binary.LittleEndian.PutUint64(index[16*i+8:], uint64(len(f)))
		}
		if _, err := w.Write(f); err != nil {
			return int64(off), err
		}
		off += uint64(len(f))
		e.CRC = crc32.Update(e.CRC, castagnoli, f)
	}
	if e.sharded {
		tail := binary.LittleEndian.AppendUint32(index, crc32c(index))
		if _, err := w.Write(tail); err != nil {
			return int64(off), err
		}
		e.CRC = crc32.Update(e.CRC, castagnoli, tail)
		off += uint64(len(tail))
	}
	e.Bytes = int(off)
	return int64(off), nil
}

// chunkJob is one chunk (or shard) to compress: fill puts the cells of a
// box of it into dst (C order over the box, elem bytes a value); full is
// its whole box, reaching past the array at the far edges; inner is the
// shape of its inner chunks (sharded), or nil for one frame of it all.
type chunkJob struct {
	fill  func(dst []byte, b decomp.Box)
	full  decomp.Box
	inner []int
	elem  int
	out   *encoded
}

// boxes are the boxes of j's frames in file order: its inner chunks in C
// order, or its full box.
func (j chunkJob) boxes() []decomp.Box {
	if j.inner == nil {
		return []decomp.Box{j.full}
	}
	ig := innerGrid(j.full.Shape(), j.inner)
	var bs []decomp.Box
	eachIndex(make([]int, len(ig.count)), ig.count, func(idx []int) {
		b := ig.full(idx)
		for a := range b.Lo {
			b.Lo[a] += j.full.Lo[a]
			b.Hi[a] += j.full.Lo[a]
		}
		bs = append(bs, b)
	})
	return bs
}

// encodeChunks compresses every frame of jobs (each job's out), spread
// over workers goroutines, straight from the cells fill gives into frames
// held in ar: no copy of a whole chunk is made, and the memory a
// checkpoint touches is its compressed size and a scratch inner chunk per
// worker (fresh memory cost 0.4 s a 134 MB copy on a virtual machine,
// where a page's first touch is a fault in the host). A chunk of one value
// repeated takes the frame kept from the first like it (uniformFrame). The
// first error wins.
func encodeChunks(jobs []chunkJob, level, workers int, ar *arena) error {
	type frame struct{ job, i int }
	var todo []frame
	boxes := make([][]decomp.Box, len(jobs))
	most := 0
	for k, j := range jobs {
		boxes[k] = j.boxes()
		j.out.frames = make([][]byte, len(boxes[k]))
		j.out.sharded = j.inner != nil
		for i, b := range boxes[k] {
			todo = append(todo, frame{k, i})
			most = max(most, j.elem*b.Size())
		}
	}
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range min(max(1, workers), len(todo)) {
		wg.Go(func() {
			buf := spare.take(most)
			defer spare.give(buf)
			var room []byte // the rest of this worker's arena block
			for {
				n := int(next.Add(1) - 1)
				if n >= len(todo) {
					return
				}
				f := todo[n]
				j, b := jobs[f.job], boxes[f.job][f.i]
				raw := buf[:j.elem*b.Size()]
				j.fill(raw, b)
				uni := isUniform(raw, j.elem)
				if data := uniformFrame(uni, level, raw, j.elem); data != nil {
					j.out.frames[f.i] = data
					continue
				}
				if bound := frameBound(len(raw)); cap(room) < bound {
					room = ar.block(bound)
				}
				data, err := compress(level, raw, room[:0])
				if err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
					next.Store(int64(len(todo))) // the others stop too
					return
				}
				if kept := keepUniform(uni, level, raw, j.elem, data); kept != nil {
					j.out.frames[f.i] = kept // the room stays free
					continue
				}
				j.out.frames[f.i] = data[:len(data):len(data)]
				room = room[len(data):len(data)]
			}
		})
	}
	wg.Wait()
	return first
}

// Chunks of one value repeated (a uniform background, a region of one
// material, the fill past the array) are common, and a frame is a function
// of its bytes and the level alone: each such frame is compressed once per
// process and kept (a 2 MiB chunk of zeros took 1 ms to compress, a
// comparison of its bytes 0.1 ms).

// uniformKey names a chunk of one value: its length, the value's bytes and
// size, and the zstd level.
type uniformKey struct {
	level, n, elem int
	value          uint64
}

// maxUniform bounds the frames kept (a field of many plateaus).
const maxUniform = 256

var uniform struct {
	mu     sync.Mutex
	frames map[uniformKey][]byte
}

// isUniform reports whether raw is one value of elem bytes repeated:
// every byte equals the one elem bytes further on.
func isUniform(raw []byte, elem int) bool {
	return len(raw) >= elem && bytes.Equal(raw[elem:], raw[:len(raw)-elem])
}

// keyOf is the key of raw, a chunk of one value.
func keyOf(level int, raw []byte, elem int) uniformKey {
	var v [8]byte
	copy(v[:], raw[:elem])
	return uniformKey{level, len(raw), elem, binary.LittleEndian.Uint64(v[:])}
}

// uniformFrame is the frame kept for raw if it is one value repeated (uni)
// and such a frame was kept, or nil.
func uniformFrame(uni bool, level int, raw []byte, elem int) []byte {
	if !uni {
		return nil
	}
	uniform.mu.Lock()
	defer uniform.mu.Unlock()
	return uniform.frames[keyOf(level, raw, elem)]
}

// keepUniform keeps a copy of data, the frame of raw if raw is one value
// repeated (uni), for later chunks like it, and returns the copy; nil if it
// keeps none (not uniform, or the keep is full).
func keepUniform(uni bool, level int, raw []byte, elem int, data []byte) []byte {
	if !uni {
		return nil
	}
	uniform.mu.Lock()
	defer uniform.mu.Unlock()
	k := keyOf(level, raw, elem)
	if f, ok := uniform.frames[k]; ok {
		return f
	}
	if len(uniform.frames) >= maxUniform {
		return nil
	}
	if uniform.frames == nil {
		uniform.frames = map[uniformKey][]byte{}
	}
	f := slices.Clip(slices.Clone(data))
	uniform.frames[k] = f
	return f
}

// arenaBlock is the size of the arena's blocks: many compressed chunks of
// the default 2 MiB each, so that little is left unused at a block's end.
const arenaBlock = 16 << 20

// arena holds compressed frames in blocks taken from the spare buffers, all
// given back at once (release) when the files that hold them are written.
type arena struct {
	mu     sync.Mutex
	blocks [][]byte
}

// block is a new block of at least n bytes of capacity, length 0.
func (ar *arena) block(n int) []byte {
	b := spare.take(max(n, arenaBlock))
	ar.mu.Lock()
	ar.blocks = append(ar.blocks, b)
	ar.mu.Unlock()
	return b[:0]
}

// release gives every block back to the spare buffers; the frames in them
// are not to be used after.
func (ar *arena) release() {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	for _, b := range ar.blocks {
		spare.give(b)
	}
	ar.blocks = nil
}

// eachInner calls f for every inner chunk of ig (its position in C order,
// its index, and a scratch buffer of one inner chunk's bytes, elem a
// value), spread over workers goroutines; the first error wins.
func eachInner(ig chunkGrid, workers, elem int, f func(i int, idx []int, buf []byte) error) error {
	var idxs [][]int
	eachIndex(make([]int, len(ig.count)), ig.count, func(idx []int) { idxs = append(idxs, slices.Clone(idx)) })
	errs := make([]error, len(idxs))
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range max(1, min(workers, len(idxs))) {
		wg.Go(func() {
			buf := make([]byte, elem*ig.cells())
			for {
				i := int(next.Add(1) - 1)
				if i >= len(idxs) {
					return
				}
				errs[i] = f(i, idxs[i], buf)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeShard is encodeShard undone for the inner chunks that hold a cell
// of need (in the shard's own coordinates; the whole shard for all), into
// the shard's raw bytes (its full shape), into dst's storage when it has
// room; cells of other inner chunks are left as they were. A damaged index
// (its CRC32-C), an entry outside the file, or an inner chunk that does not
// decode to its size is an error.
func decodeShard(data []byte, shard, inner []int, need decomp.Box, workers int, dst []byte) ([]byte, error) {
	return decodeShardAs(8, data, shard, inner, need, workers, dst)
}

// decodeShardAs is decodeShard for values of elem bytes.
func decodeShardAs(elem int, data []byte, shard, inner []int, need decomp.Box, workers int, dst []byte) ([]byte, error) {
	n := innerGrid(shard, inner).len()
	if len(data) < 16*n+4 {
		return nil, fmt.Errorf("shard of %d bytes is too short for the index of %d inner chunks", len(data), n)
	}
	body := uint64(len(data) - 16*n - 4)
	return decodeShardFrom(elem, func(off, length uint64) ([]byte, error) { return data[off : off+length], nil },
		data[body:], body, shard, inner, need, workers, dst)
}

// decodeShardFrom decodes the inner chunks of a shard that cross need,
// given the shard's index with its CRC32-C (indexCRC: the file's last
// 16·n+4 bytes), the length of its data before the index, and a way to
// fetch a range of the data (from memory, or by a range read of the file);
// its values are elem bytes each.
func decodeShardFrom(elem int, fetch func(off, length uint64) ([]byte, error), indexCRC []byte, body uint64, shard, inner []int, need decomp.Box, workers int, dst []byte) ([]byte, error) {
	ig := innerGrid(shard, inner)
	n := ig.len()
	if len(indexCRC) != 16*n+4 {
		return nil, fmt.Errorf("shard index of %d bytes, want %d", len(indexCRC), 16*n+4)
	}
	index := indexCRC[:16*n]
	if got, want := crc32c(index), binary.LittleEndian.Uint32(indexCRC[16*n:]); got != want {
		return nil, fmt.Errorf("shard index has CRC32-C %08x, it records %08x", got, want)
	}
	whole := decomp.Box{Lo: make([]int, len(shard)), Hi: shard}
	size := elem * whole.Size()
	if cap(dst) < size {
		dst = make([]byte, size)
	}
	dst = dst[:size]
	sv := decomp.NewLayout(whole, 0)
	err := eachInner(ig, workers, elem, func(i int, idx []int, buf []byte) error {
		b := ig.full(idx)
		if b.Intersect(need).Empty() {
			return nil
		}
		off, length := binary.LittleEndian.Uint64(index[16*i:]), binary.LittleEndian.Uint64(index[16*i+8:])
		if off == emptyEntry && length == emptyEntry {
			fillBox(dst, sv, b, elem)
			return nil
		}
		if off > body || length > body-off {
			return fmt.Errorf("inner chunk %v at %d+%d lies outside the shard's %d data bytes", idx, off, length, body)
		}
		frame, err := fetch(off, length)
		if err != nil {
			return err
		}
		raw, err := decompress(frame, elem*ig.cells(), buf)
		if err != nil {
			return fmt.Errorf("inner chunk %v: %w", idx, err)
		}
		copyBytesAs(elem, dst, sv, raw, decomp.NewLayout(b, 0), b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return dst, nil
}

// copyBytesAs copies box b of the raw bytes src (laid out as sv, values
// of elem bytes) into dst (laid out as dv), a row at a time.
func copyBytesAs(elem int, dst []byte, dv decomp.Layout, src []byte, sv decomp.Layout, b decomp.Box) {
	eachRow(b, func(lo []int, n int) {
		copy(dst[elem*field.Index(dv, lo):elem*(field.Index(dv, lo)+n)], src[elem*field.Index(sv, lo):elem*(field.Index(sv, lo)+n)])
	})
}

// fillBox sets box b of dst (raw bytes of values of elem bytes, laid out
// as dv) to the fill value: NaN for float64, 0 for uint8.
func fillBox(dst []byte, dv decomp.Layout, b decomp.Box, elem int) {
	eachRow(b, func(lo []int, n int) { fillRaw(dst[elem*field.Index(dv, lo):elem*(field.Index(dv, lo)+n)], elem) })
}

// WriterShards is the shard and inner chunk shape of checkpoint.shard =
// "auto" for a grid of shape written by a process grid of dims writers:
// along each axis the writers' box length rounded up to whole inner chunks,
// so that there is one shard per writer (fewer where the rounding covers
// two boxes), none larger than a chunk may be. The inner chunk is chunk
// (cut to the grid) or, by default, about DefaultChunk's of the box, a
// divisor of the box length where one lies within a factor 2 of it (no
// shard then reaches past its box).
func WriterShards(shape, dims, chunk []int) (shard, inner []int, err error) {
	nd := len(shape)
	if len(dims) != nd {
		return nil, nil, fmt.Errorf("checkpoint: process grid %v has %d axes but the grid %v has %d", dims, len(dims), shape, nd)
	}
	box := make([]int, nd)
	for a, n := range shape {
		if dims[a] < 1 || n < 1 {
			return nil, nil, fmt.Errorf("checkpoint: cannot shard a grid %v over a process grid %v", shape, dims)
		}
		box[a] = (n + dims[a] - 1) / dims[a]
	}
	if len(chunk) > 0 {
		if inner, err = chunkShape(shape, chunk); err != nil {
			return nil, nil, err
		}
	} else {
		inner = DefaultChunk(box)
		for a := range inner {
			inner[a] = nearDivisor(box[a], inner[a])
		}
	}
	shard = make([]int, nd)
	for a := range shard {
		shard[a] = inner[a] * ((box[a] + inner[a] - 1) / inner[a])
	}
	// A shard is read and written whole in memory: halve the axis holding
	// the most inner chunks until it fits.
	for prod(shard) > maxChunkValues {
		a := 0
		for x := range shard {
			if shard[x]/inner[x] > shard[a]/inner[a] {
				a = x
			}
		}
		per := shard[a] / inner[a]
		if per == 1 {
			break // one inner chunk, which chunkShape bounded
		}
		shard[a] = inner[a] * ((per + 1) / 2)
	}
	return shard, inner, nil
}

// nearDivisor is the divisor of n closest to want by ratio within a factor
// 2 (the larger one on a tie), or want when n has none there.
func nearDivisor(n, want int) int {
	best, bestR := want, 2.0
	for d := max(1, want/2); d <= min(n, 2*want); d++ {
		if n%d != 0 {
			continue
		}
		r := float64(max(d, want)) / float64(min(d, want))
		if r <= bestR {
			best, bestR = d, r
		}
	}
	return best
}
