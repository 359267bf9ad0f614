package checkpoint

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
	"heat/field"
)

// Begin compresses the field's chunks in place, from the rank's box and the
// parts other ranks send, into frames that live in reused buffers until the
// background write. Every chunk file must still be what a zstd encoder of
// the test's own makes of the whole chunk assembled in memory (the cells
// past the array filled), byte for byte: with the field changed right after
// Begin, with two writers in one process at once sharing the spare buffers
// and encoders, on later rounds that reuse them, for the field and the
// media arrays (float64 and uint8), sharded and not, for chunks of one
// value repeated too (their frames are kept and reused).
func TestWriteMatchesFreshEncoder(t *testing.T) {
	cases := []struct {
		shape, chunk, shard []int
		ranks, workers      int
	}{
		{[]int{37, 29}, []int{13, 10}, nil, 3, 2},
		{[]int{37, 29}, []int{8, 7}, []int{32, 21}, 4, 3},
		{[]int{9, 11, 13}, []int{4, 5, 6}, []int{8, 10, 13}, 2, 2},
		{[]int{20, 20}, []int{16, 10}, []int{32, 20}, 2, 2}, // frames over zstd's least window: single segment
		{[]int{5, 3}, []int{5, 3}, nil, 1, 1},               // a frame under smallFrame bytes: single segment too
	}
	for _, tc := range cases {
		name := fmt.Sprintf("%v/chunk%v/shard%v/%dranks", tc.shape, tc.chunk, tc.shard, tc.ranks)
		t.Run(name, func(t *testing.T) {
			g, err := decomp.New(tc.shape, tc.ranks, nil, nil)
			require.NoError(t, err)
			roots := []string{t.TempDir(), t.TempDir()}
			for round, level := range []int{1, 1, 3} { // frames kept in a round serve the next; they are of their level
				round++
				opt := Options{Chunk: tc.chunk, Shard: tc.shard, Workers: tc.workers, Level: level}
				var wg sync.WaitGroup
				errs := make([]error, len(roots))
				for wi, root := range roots {
					salt := 10*round + wi
					wg.Go(func() {
						errs[wi] = local.Run(tc.ranks, func(c comm.Comm) error {
							lay, u := rankField(g, c.Rank(), 1, func(idx []int) float64 { return value(tc.shape, idx, salt) })
							_, k := rankField(g, c.Rank(), 1, func(idx []int) float64 { return kOf(tc.shape, idx, salt) })
							_, mask := rankField(g, c.Rank(), 1, func(idx []int) float64 { return float64(maskOf(tc.shape, idx, salt)) })
							meta := Meta{Step: round, Arrays: []Array{{Name: "k", Data: k}, {Name: "mask", Type: Uint8, Data: mask}}}
							p, err := Begin(c, g, lay, u, root, meta, opt)
							if err != nil {
								return err
							}
							for i := range u {
								u[i] = -1 // the solver steps on
							}
							_, err = p.Finish()
							return err
						})
					})
				}
				wg.Wait()
				for wi, root := range roots {
					require.NoError(t, errs[wi])
					salt := 10*round + wi
					dir := filepath.Join(root, StepName(round))
					checkFresh(t, dir, level, "u", 8, tc.shape, tc.chunk, tc.shard, func(idx []int) []byte {
						return binary.LittleEndian.AppendUint64(nil, math.Float64bits(value(tc.shape, idx, salt)))
					})
					checkFresh(t, dir, level, "k", 8, tc.shape, tc.chunk, tc.shard, func(idx []int) []byte {
						return binary.LittleEndian.AppendUint64(nil, math.Float64bits(kOf(tc.shape, idx, salt)))
					})
					checkFresh(t, dir, level, "mask", 1, tc.shape, tc.chunk, tc.shard, func(idx []int) []byte {
						return []byte{maskOf(tc.shape, idx, salt)}
					})
				}
			}
		})
	}
}

// kOf is a test float64 array: a plateau of one value (the same in every
// round: its chunks' frames are kept) over the lower rows, smooth above.
func kOf(shape, idx []int, salt int) float64 {
	if idx[0] < shape[0]/2 {
		return 1.5
	}
	return smooth(shape, idx, salt)
}

// maskOf is a test uint8 array, whole numbers 0 to 255: 0 over the upper
// rows, mixed below.
func maskOf(shape, idx []int, salt int) uint8 {
	if idx[0] >= shape[0]/2 {
		return 0
	}
	s := salt
	for _, i := range idx {
		s = 31*s + i
	}
	return uint8(s % 7)
}

// checkFresh compares every chunk file of array name under the checkpoint
// dir with the file built independently: each chunk (or shard) assembled
// whole from cell (elem bytes a value; NaN or 0 past the array), each of
// its frames made by the test's own zstd encoders, the shard's index and
// CRC32-C after them.
func checkFresh(t *testing.T, dir string, level int, name string, elem int, shape, chunk, shard []int, cell func(idx []int) []byte) {
	t.Helper()
	outer, inner := chunk, []int(nil)
	if shard != nil {
		var err error
		outer, inner, err = shardShapes(shape, shard, chunk)
		require.NoError(t, err)
	}
	cg := newChunkGrid(shape, outer)
	array := decomp.Box{Lo: make([]int, len(shape)), Hi: shape}
	fresh := freshEncoder(t, level)
	eachIndex(make([]int, len(shape)), cg.count, func(ci []int) {
		full := cg.full(ci)
		raw := make([]byte, elem*full.Size())
		fillRaw(raw, elem)
		fv := decomp.NewLayout(full, 0)
		eachIndex(full.Lo, full.Hi, func(idx []int) {
			if array.Contains(idx) {
				copy(raw[elem*field.Index(fv, idx):], cell(idx))
			}
		})
		var want []byte
		if inner == nil {
			want = fresh(raw)
		} else {
			ig := innerGrid(outer, inner)
			var index []byte
			eachIndex(make([]int, len(ig.count)), ig.count, func(ii []int) {
				b := ig.full(ii)
				for a := range b.Lo {
					b.Lo[a] += full.Lo[a]
					b.Hi[a] += full.Lo[a]
				}
				part := make([]byte, elem*b.Size())
				copyBytesAs(elem, part, decomp.NewLayout(b, 0), raw, fv, b)
				f := fresh(part)
				index = binary.LittleEndian.AppendUint64(index, uint64(len(want)))
				index = binary.LittleEndian.AppendUint64(index, uint64(len(f)))
				want = append(want, f...)
			})
			want = append(want, index...)
			want = binary.LittleEndian.AppendUint32(want, crc32c(index))
		}
		path := filepath.Join(dir, name, filepath.FromSlash(cg.key(ci)))
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.True(t, string(want) == string(got), "%s (%d bytes) is not what a fresh encoder makes of the assembled chunk (%d bytes)", path, len(got), len(want))
	})
}

// freshEncoder compresses as Write does at level, with zstd encoders of
// its own (made for the caller, not shared with Write).
func freshEncoder(t *testing.T, level int) func(raw []byte) []byte {
	enc := map[bool]*zstd.Encoder{}
	for _, single := range []bool{false, true} {
		e, err := zstd.NewWriter(nil, append(encoderOptions(level, single), zstd.WithEncoderConcurrency(1))...)
		require.NoError(t, err)
		t.Cleanup(func() { e.Close() })
		enc[single] = e
	}
	return func(raw []byte) []byte { return enc[len(raw) < smallFrame].EncodeAll(raw, nil) }
}

// isUniform tells a chunk of one value repeated, of elem bytes, from every
// other: a repeated shorter pattern, one value different anywhere, or 0
// against -0 are not one value.
func TestIsUniform(t *testing.T) {
	f := func(vs ...float64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		return b
	}
	require.True(t, isUniform(f(2.5), 8))
	require.True(t, isUniform(f(2.5, 2.5, 2.5, 2.5), 8))
	require.True(t, isUniform([]byte{7, 7, 7}, 1))
	require.False(t, isUniform(f(2.5, 2.5, 2.5, 3), 8))
	require.False(t, isUniform(f(3, 2.5, 2.5, 2.5), 8))
	require.False(t, isUniform(f(0, math.Copysign(0, -1)), 8))
	require.False(t, isUniform([]byte{7, 7, 8}, 1))
	// A 4-byte pattern repeated is one float64 value; 8 bytes repeated at an
	// odd offset are not.
	require.True(t, isUniform([]byte{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}, 8))
	require.False(t, isUniform([]byte{1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 9}, 8))
	require.NotEqual(t, keyOf(1, f(1, 1), 8), keyOf(1, f(2, 2), 8))
	require.NotEqual(t, keyOf(1, f(1, 1), 8), keyOf(3, f(1, 1), 8))
	require.NotEqual(t, keyOf(1, f(1, 1), 8), keyOf(1, f(1, 1, 1), 8))
}
