package checkpoint

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/klauspost/compress/zstd"

	"heat/decomp"
	"heat/field"
)

// The chunk codecs are the Zarr chain [bytes (little endian), zstd]: a
// chunk's values in C order as 8 little-endian bytes each, compressed into
// one zstd frame that carries its content size and a content checksum.

// nanBits is the Zarr fill value "NaN": sign 0, the mantissa's top bit set
// and the rest clear. (Go's math.NaN has another payload.)
const nanBits = 0x7ff8_0000_0000_0000

// castagnoli is the CRC32-C table of the chunk checksums.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crc32c is the CRC32-C of data.
func crc32c(data []byte) uint32 { return crc32.Checksum(data, castagnoli) }

// littleHost reports whether this machine stores a float64 as the chunks
// do (little endian), so that a row's bytes can be copied as they are.
var littleHost = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// putBox stores the cells of box b from src (laid out as sv) into the
// little-endian chunk bytes dst (laid out as dv).
func putBox(dst []byte, dv decomp.Layout, src []float64, sv decomp.Layout, b decomp.Box) {
	eachRow(b, func(lo []int, n int) {
		d, s := 8*field.Index(dv, lo), field.Index(sv, lo)
		row, vals := dst[d:d+8*n], src[s:s+n]
		if littleHost {
			copy(row, floatBytes(vals))
			return
		}
		for k, x := range vals {
			binary.LittleEndian.PutUint64(row[8*k:], math.Float64bits(x))
		}
	})
}

// getBox loads the cells of box b from the little-endian chunk bytes src
// (laid out as sv) into dst (laid out as dv).
func getBox(dst []float64, dv decomp.Layout, src []byte, sv decomp.Layout, b decomp.Box) {
	eachRow(b, func(lo []int, n int) {
		d, s := field.Index(dv, lo), 8*field.Index(sv, lo)
		row, out := src[s:s+8*n], dst[d:d+n]
		if littleHost {
			copy(floatBytes(out), row)
			return
		}
		for k := range out {
			out[k] = math.Float64frombits(binary.LittleEndian.Uint64(row[8*k:]))
		}
	})
}

// putBoxAs is putBox for chunk values of elem bytes: 8 (float64), or 1
// (uint8, the values whole numbers 0 to 255, as Write checked).
func putBoxAs(elem int, dst []byte, dv decomp.Layout, src []float64, sv decomp.Layout, b decomp.Box) {
	if elem == 8 {
		putBox(dst, dv, src, sv, b)
		return
	}
	eachRow(b, func(lo []int, n int) {
		d, s := field.Index(dv, lo), field.Index(sv, lo)
		row := dst[d : d+n]
		for k, x := range src[s : s+n] {
			row[k] = uint8(x)
		}
	})
}

// getBoxAs is getBox for chunk values of elem bytes: 8 (float64) or 1
// (uint8).
func getBoxAs(elem int, dst []float64, dv decomp.Layout, src []byte, sv decomp.Layout, b decomp.Box) {
	if elem == 8 {
		getBox(dst, dv, src, sv, b)
		return
	}
	eachRow(b, func(lo []int, n int) {
		d, s := field.Index(dv, lo), field.Index(sv, lo)
		out := dst[d : d+n]
		for k, x := range src[s : s+n] {
			out[k] = float64(x)
		}
	})
}

// fillRaw sets every value of the chunk bytes raw, of elem bytes each, to
// the fill value: NaN for float64, 0 for uint8.
func fillRaw(raw []byte, elem int) {
	if elem == 8 {
		fillNaN(raw)
		return
	}
	clear(raw)
}

// floatBytes is the memory of v as bytes.
func floatBytes(v []float64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 8*len(v))
}

// fillNaN sets every value of the chunk bytes raw to the fill value.
func fillNaN(raw []byte) {
	for i := 0; i+8 <= len(raw); i += 8 {
		binary.LittleEndian.PutUint64(raw[i:], nanBits)
	}
}

// smallFrame is the size below which a zstd frame that is not "single
// segment" leaves out its content size. numcodecs (zarr-python) refuses
// frames without one, so chunks smaller than this are encoded as single
// segment frames, which always carry it.
const smallFrame = 256

type encoderKey struct {
	level  int
	single bool
}

var (
	encodersMu sync.Mutex
	encoders   = map[encoderKey]*zstd.Encoder{}
)

// encoder is the shared zstd encoder of one level (used concurrently
// through EncodeAll by every rank and worker of the process).
func encoder(level int, single bool) (*zstd.Encoder, error) {
	k := encoderKey{level, single}
	encodersMu.Lock()
	defer encodersMu.Unlock()
	if e := encoders[k]; e != nil {
		return e, nil
	}
	opts := append(encoderOptions(level, single), zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
	e, err := zstd.NewWriter(nil, opts...)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: zstd level %d: %w", level, err)
	}
	encoders[k] = e
	return e, nil
}

// encoderOptions are the options that decide the bytes of a frame at level
// (single: one segment, for frames smaller than smallFrame).
func encoderOptions(level int, single bool) []zstd.EOption {
	opts := []zstd.EOption{zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)), zstd.WithEncoderCRC(true)}
	if single {
		opts = append(opts, zstd.WithSingleSegment(true))
	}
	if zstd.EncoderLevelFromZstd(level) == zstd.SpeedFastest {
		// The fastest level leaves literals unencoded: a field of doubles
		// is mostly mantissa bytes that entropy coding barely shrinks
		// (0.3% on a 4096² field) at nearly twice the time.
		opts = append(opts, zstd.WithNoEntropyCompression(true))
	}
	return opts
}

// compress is the zstd frame of raw at level: one frame, with the content
// size in its header and a content checksum. It is written into dst's
// storage, grown once to the largest frame raw can give: a field of doubles
// barely compresses, and growing a smaller guess while encoding copied each
// chunk about twice (a third of a checkpoint's time).
func compress(level int, raw, dst []byte) ([]byte, error) {
	e, err := encoder(level, len(raw) < smallFrame)
	if err != nil {
		return nil, err
	}
	if most := frameBound(len(raw)); cap(dst) < most {
		dst = make([]byte, 0, most)
	}
	return e.EncodeAll(raw, dst[:0]), nil
}

// frameBound is the most bytes compress makes of n: zstd's bound for
// incompressible data (its raw blocks' headers and the frame's), with room
// to spare.
func frameBound(n int) int { return n + n/128 + 1024 }

// decoder is the shared zstd decoder. DecodeAll is limited to the capacity
// of its destination, so a damaged frame cannot make it allocate more than
// a chunk.
var decoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true))
})

// decompress decodes the zstd data of a chunk that must hold exactly size
// bytes, into dst's storage when it has room (a worker reuses one buffer:
// fresh memory per chunk cost more than the decoding).
func decompress(data []byte, size int, dst []byte) ([]byte, error) {
	d, err := decoder()
	if err != nil {
		return nil, err
	}
	if cap(dst) < size {
		dst = make([]byte, 0, size)
	}
	raw, err := d.DecodeAll(data, dst[:0:size])
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	if len(raw) != size {
		return nil, fmt.Errorf("decompressed to %d bytes, want %d", len(raw), size)
	}
	return raw, nil
}
