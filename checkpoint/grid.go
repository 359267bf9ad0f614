package checkpoint

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"heat/decomp"
	"heat/field"
)

// defaultChunkValues is the size of a default chunk: 2^18 float64 values,
// 2 MiB raw, large enough for zstd to find its matches and for few files,
// small enough to spread over many writers and readers.
const defaultChunkValues = 1 << 18

// maxChunkValues bounds a chunk (1 GiB raw), so that one chunk fits in
// memory and in what common zstd decoders accept as one frame.
const maxChunkValues = 1 << 27

// maxChunks and maxValues bound what Open accepts of a checkpoint's
// metadata before allocating by it: 2^20 chunks (2 TiB of the default 2 MiB
// chunks) and 2^44 cells (128 TiB).
const (
	maxChunks = 1 << 20
	maxValues = 1 << 44
)

// DefaultChunk is the chunk shape Write uses when Options.Chunk is empty:
// about 2^18 values, each axis a like fraction of the grid's, so chunks are
// shaped like the grid; no axis is longer than the grid's, and a grid of at
// most 2^18 cells is one chunk.
func DefaultChunk(shape []int) []int {
	total := 1.0
	for _, n := range shape {
		total *= float64(n)
	}
	if total <= defaultChunkValues {
		return slices.Clone(shape)
	}
	chunk := make([]int, len(shape))
	free := make([]bool, len(shape))
	for a := range free {
		free[a] = true
	}
	// Scale the free axes by one factor f so their product meets the
	// budget; an axis that would drop below one cell is fixed at one and
	// the rest rescaled.
	for {
		p, nfree := 1.0, 0
		for a, n := range shape {
			if free[a] {
				p *= float64(n)
				nfree++
			}
		}
		if nfree == 0 {
			return chunk
		}
		f := math.Pow(defaultChunkValues/p, 1/float64(nfree))
		fixed := false
		for a, n := range shape {
			if free[a] && float64(n)*f < 1 {
				chunk[a], free[a], fixed = 1, false, true
			}
		}
		if fixed {
			continue
		}
		for a, n := range shape {
			if free[a] {
				chunk[a] = min(max(1, int(math.Round(float64(n)*f))), n)
			}
		}
		return chunk
	}
}

// chunkShape is the chunk shape Write uses for a grid of shape under opt:
// opt.Chunk cut to the grid, or DefaultChunk.
func chunkShape(shape []int, want []int) ([]int, error) {
	if len(want) == 0 {
		return DefaultChunk(shape), nil
	}
	if len(want) != len(shape) {
		return nil, fmt.Errorf("checkpoint: chunk shape %v has %d axes but the grid %v has %d", want, len(want), shape, len(shape))
	}
	chunk := make([]int, len(want))
	cells := 1
	for a, n := range want {
		if n < 1 {
			return nil, fmt.Errorf("checkpoint: chunk shape %v: every axis needs at least 1 cell", want)
		}
		chunk[a] = min(n, shape[a])
		cells *= chunk[a]
		if cells > maxChunkValues {
			return nil, fmt.Errorf("checkpoint: chunk shape %v has more than %d values", chunk, maxChunkValues)
		}
	}
	return chunk, nil
}

// chunkGrid is the regular chunk grid of a Zarr array: chunks of shape
// chunk tile the array from the origin; the last chunk along an axis may
// reach past the array, and is stored at the full chunk shape all the same.
type chunkGrid struct {
	shape []int // array shape
	chunk []int // chunk shape
	count []int // chunks per axis
}

func newChunkGrid(shape, chunk []int) chunkGrid {
	cg := chunkGrid{shape: slices.Clone(shape), chunk: slices.Clone(chunk), count: make([]int, len(shape))}
	for a := range shape {
		cg.count[a] = (shape[a] + chunk[a] - 1) / chunk[a]
	}
	return cg
}

// len is the number of chunks.
func (cg chunkGrid) len() int {
	n := 1
	for _, c := range cg.count {
		n *= c
	}
	return n
}

// cells is the number of values in one (full) chunk.
func (cg chunkGrid) cells() int {
	n := 1
	for _, c := range cg.chunk {
		n *= c
	}
	return n
}

// full is the box chunk idx covers, reaching past the array at its far edges.
func (cg chunkGrid) full(idx []int) decomp.Box {
	b := decomp.Box{Lo: make([]int, len(idx)), Hi: make([]int, len(idx))}
	for a, i := range idx {
		b.Lo[a] = i * cg.chunk[a]
		b.Hi[a] = b.Lo[a] + cg.chunk[a]
	}
	return b
}

// box is the part of the array that chunk idx holds.
func (cg chunkGrid) box(idx []int) decomp.Box {
	b := cg.full(idx)
	for a := range b.Hi {
		b.Hi[a] = min(b.Hi[a], cg.shape[a])
	}
	return b
}

// key is the chunk's key under the default chunk key encoding with
// separator "/": "c/i/j[/k]", relative to the array.
func (cg chunkGrid) key(idx []int) string {
	var sb strings.Builder
	sb.WriteString("c")
	for _, i := range idx {
		sb.WriteByte('/')
		sb.WriteString(strconv.Itoa(i))
	}
	return sb.String()
}

// linear is the position of chunk idx in C order.
func (cg chunkGrid) linear(idx []int) int {
	l := 0
	for a, i := range idx {
		l = l*cg.count[a] + i
	}
	return l
}

// index is the chunk at position l in C order.
func (cg chunkGrid) index(l int) []int {
	idx := make([]int, len(cg.count))
	for a := len(cg.count) - 1; a >= 0; a-- {
		idx[a] = l % cg.count[a]
		l /= cg.count[a]
	}
	return idx
}

// keys are the keys of every chunk, in C order.
func (cg chunkGrid) keys() []string {
	keys := make([]string, 0, cg.len())
	eachIndex(make([]int, len(cg.count)), cg.count, func(idx []int) { keys = append(keys, cg.key(idx)) })
	return keys
}

// crossing is the range [lo, hi) of chunk indices whose chunks hold a cell
// of b; it is empty when b is.
func (cg chunkGrid) crossing(b decomp.Box) (lo, hi []int) {
	lo, hi = make([]int, len(b.Lo)), make([]int, len(b.Lo))
	if b.Empty() {
		return lo, lo
	}
	for a := range b.Lo {
		lo[a] = b.Lo[a] / cg.chunk[a]
		hi[a] = (b.Hi[a]-1)/cg.chunk[a] + 1
	}
	return lo, hi
}

// starting is the range [lo, hi) of chunk indices whose first cell lies
// in b: the chunks that b's owner writes.
func (cg chunkGrid) starting(b decomp.Box) (lo, hi []int) {
	lo, hi = make([]int, len(b.Lo)), make([]int, len(b.Lo))
	for a := range b.Lo {
		lo[a] = (b.Lo[a] + cg.chunk[a] - 1) / cg.chunk[a]
		hi[a] = max(lo[a], (b.Hi[a]+cg.chunk[a]-1)/cg.chunk[a])
	}
	return lo, hi
}

// eachIndex calls f with every index in the range [lo, hi), in C order
// (last axis fastest). f must not keep idx, which is reused.
func eachIndex(lo, hi []int, f func(idx []int)) {
	for a := range lo {
		if hi[a] <= lo[a] {
			return
		}
	}
	idx := slices.Clone(lo)
	for {
		f(idx)
		a := len(idx) - 1
		for ; a >= 0; a-- {
			idx[a]++
			if idx[a] < hi[a] {
				break
			}
			idx[a] = lo[a]
		}
		if a < 0 {
			return
		}
	}
}

// eachRow calls f with the first cell of every row of b (rows run along
// the last axis, n cells long), in C order. f must not keep lo.
func eachRow(b decomp.Box, f func(lo []int, n int)) {
	if b.Empty() {
		return
	}
	nd := len(b.Lo)
	n := b.Hi[nd-1] - b.Lo[nd-1]
	hi := slices.Clone(b.Hi)
	hi[nd-1] = b.Lo[nd-1] + 1
	eachIndex(b.Lo, hi, func(lo []int) { f(lo, n) })
}

// copyBox copies the cells of box b from src (laid out as sv) to dst
// (laid out as dv).
func copyBox(dst []float64, dv decomp.Layout, src []float64, sv decomp.Layout, b decomp.Box) {
	eachRow(b, func(lo []int, n int) {
		d, s := field.Index(dv, lo), field.Index(sv, lo)
		copy(dst[d:d+n], src[s:s+n])
	})
}
