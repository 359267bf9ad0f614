package checkpoint

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
	"heat/field"
)

// The media of the tests: k with holes (0) and full mantissas, rho_c, and
// a mask of held cells (uint8).
func mediaK(shape, idx []int) float64 {
	if lin(shape, idx)%7 == 3 {
		return 0 // a hole
	}
	return value(shape, idx, 11)
}

func mediaRhoC(shape, idx []int) float64 { return 1 + value(shape, idx, 0)/1e3 }

func mediaMask(shape, idx []int) float64 {
	if lin(shape, idx)%5 == 1 {
		return 1
	}
	return 0
}

// lin is idx's position in a grid of shape, C order.
func lin(shape, idx []int) int {
	l := 0
	for a, i := range idx {
		l = l*shape[a] + i
	}
	return l
}

// mediaWant is what array name holds at idx.
func mediaWant(shape []int, name string, step int) func(idx []int) float64 {
	return func(idx []int) float64 {
		switch name {
		case "k":
			return mediaK(shape, idx)
		case "rho_c":
			return mediaRhoC(shape, idx)
		case "mask":
			return mediaMask(shape, idx)
		}
		return value(shape, idx, step)
	}
}

// writeMedia writes the test field of step with the test media beside it
// on ranks ranks; with background through Begin, the field changed before
// Finish (the media, as a run's, not).
func writeMedia(t testing.TB, root string, shape []int, ranks, step int, opt Options, background bool) []error {
	t.Helper()
	g, err := decomp.New(shape, ranks, nil, nil)
	require.NoError(t, err)
	meta := Meta{Step: step, Time: 0.5, Config: []byte(`{"grid":{"shape":` + jsonInts(shape) + `}}`)}
	errs := make([]error, ranks)
	require.NoError(t, local.Run(ranks, func(c comm.Comm) error {
		r := c.Rank()
		lay, u := rankField(g, r, 1, mediaWant(shape, "u", step))
		_, k := rankField(g, r, 1, mediaWant(shape, "k", step))
		_, rc := rankField(g, r, 1, mediaWant(shape, "rho_c", step))
		_, mask := rankField(g, r, 1, mediaWant(shape, "mask", step))
		m := meta
		// Not in the order Open lists them, and mask's type given.
		m.Arrays = []Array{{Name: "mask", Type: Uint8, Data: mask}, {Name: "k", Data: k}, {Name: "rho_c", Type: Float64, Data: rc}}
		if !background {
			_, errs[r] = Write(c, g, lay, u, root, m, opt)
			return nil
		}
		p, err := Begin(c, g, lay, u, root, m, opt)
		if err != nil {
			errs[r] = err
			return nil
		}
		for i := range u {
			u[i] = -1 // the solver steps on
		}
		_, errs[r] = p.Finish()
		return nil
	}))
	return errs
}

func jsonInts(v []int) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// readArrayRanks reads array name of checkpoint dir on ranks ranks into
// fields with guard ghosts, checks every box cell against want and every
// ghost untouched, and returns every rank's error.
func readArrayRanks(t testing.TB, dir, name string, ranks int, want func(idx []int) float64) []error {
	t.Helper()
	ck, err := Open(dir)
	require.NoError(t, err)
	shape := ck.Shape()
	g, err := decomp.New(shape, ranks, nil, nil)
	require.NoError(t, err)
	errs := make([]error, ranks)
	var mismatch atomic.Value
	require.NoError(t, local.Run(ranks, func(c comm.Comm) error {
		box := g.Box(c.Rank())
		lay, dst := rankField(g, c.Rank(), 1, func([]int) float64 { return guard })
		if errs[c.Rank()] = ReadArray(c, ck, name, g, lay, dst, Options{Workers: 2}); errs[c.Rank()] != nil {
			return nil
		}
		all := decomp.Box{Lo: make([]int, len(shape)), Hi: make([]int, len(shape))}
		for a := range shape {
			all.Lo[a], all.Hi[a] = box.Lo[a]-1, box.Hi[a]+1
		}
		eachIndex(all.Lo, all.Hi, func(idx []int) {
			exp := guard
			if box.Contains(idx) {
				exp = want(idx)
			}
			if got := dst[field.Index(lay, idx)]; math.Float64bits(got) != math.Float64bits(exp) {
				mismatch.CompareAndSwap(nil, fmt.Sprintf("%s rank %d cell %v: got %v, want %v", name, c.Rank(), idx, got, exp))
			}
		})
		return nil
	}))
	if m := mismatch.Load(); m != nil {
		t.Fatal(m)
	}
	return errs
}

// A checkpoint with media holds k, rho_c and mask beside u, each a Zarr
// array like u (chunks, shards, codecs), written by 2 ranks and read back
// exactly on 1, 3 and 4, whether written at once or in the background.
func TestMediaRoundTrip(t *testing.T) {
	shape := []int{23, 17}
	for _, tc := range []struct {
		name       string
		opt        Options
		background bool
	}{
		{"chunks", Options{Chunk: []int{6, 5}, Workers: 2}, false},
		{"chunks in the background", Options{Chunk: []int{6, 5}, Workers: 3}, true},
		{"shards", Options{Shard: []int{12, 10}, Chunk: []int{4, 5}, Workers: 2}, false},
		{"shards in the background", Options{Shard: []int{12, 17}, Chunk: []int{3, 17}}, true},
		{"one chunk", Options{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			requireAll(t, writeMedia(t, root, shape, 2, 4, tc.opt, tc.background))
			dir := filepath.Join(root, StepName(4))
			require.Empty(t, Verify(dir))
			ck, err := Open(dir)
			require.NoError(t, err)
			require.Equal(t, []string{"u", "k", "rho_c", "mask"}, ck.Arrays())
			for _, name := range ck.Arrays() {
				require.True(t, ck.Has(name))
			}
			require.False(t, ck.Has("nope"))
			require.Equal(t, Float64, ck.ArrayType("k"))
			require.Equal(t, Uint8, ck.ArrayType("mask"))
			require.Equal(t, "", ck.ArrayType("nope"))
			cells := int64(23 * 17)
			require.Equal(t, (8+8+8+1)*cells, ck.RawBytes())
			for _, ranks := range []int{1, 3, 4} {
				for _, name := range ck.Arrays() {
					requireAll(t, readArrayRanks(t, dir, name, ranks, mediaWant(shape, name, 4)))
				}
			}
		})
	}
}

// The metadata of a checkpoint with media: every array a Zarr v3 array of
// u's layout (mask uint8 with fill value 0), the group in format
// MediaFormat listing the arrays with their documents' CRC32-C and their
// chunks' sizes and CRC32-C, and a file for every chunk of every array.
func TestMediaMetadata(t *testing.T) {
	shape := []int{23, 17}
	root := t.TempDir()
	requireAll(t, writeMedia(t, root, shape, 3, 2, Options{Chunk: []int{6, 5}, Level: 3}, false))
	dir := filepath.Join(root, StepName(2))
	var u map[string]any
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(dir, "u", "zarr.json")), &u))
	var group map[string]any
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(dir, "zarr.json")), &group))
	heat := group["attributes"].(map[string]any)["heat"].(map[string]any)
	require.Equal(t, float64(MediaFormat), heat["format"])
	arrays := heat["arrays"].(map[string]any)
	require.ElementsMatch(t, []string{"k", "rho_c", "mask"}, keysOf(arrays))
	for _, name := range []string{"k", "rho_c", "mask"} {
		var a map[string]any
		doc := mustRead(t, filepath.Join(dir, name, "zarr.json"))
		require.NoError(t, json.Unmarshal(doc, &a))
		rec := arrays[name].(map[string]any)
		require.Equal(t, fmt.Sprintf("%08x", crc32c(doc)), rec["array_crc32c"])
		require.Len(t, rec["chunks"].(map[string]any), 4*4)
		for key := range rec["chunks"].(map[string]any) {
			require.FileExists(t, filepath.Join(dir, name, filepath.FromSlash(key)))
		}
		want := map[string]any{}
		for k, v := range u {
			want[k] = v
		}
		if name == "mask" {
			want["data_type"], want["fill_value"] = "uint8", 0.0
		}
		require.Equal(t, want, a, name)
		require.Equal(t, want["data_type"], rec["data_type"])
	}
	// The one uint8 chunk holds a byte a cell.
	raw, err := decompress(mustRead(t, filepath.Join(dir, "mask", "c", "0", "0")), 6*5, nil)
	require.NoError(t, err)
	for i, b := range raw {
		require.Equal(t, byte(mediaMask(shape, []int{i / 5, i % 5})), b, "cell %d", i)
	}
}

// Damage to an array beside u is found as damage to u is: Verify names
// the file, and reading that array fails on every rank with the sentinel
// and the file (u, undamaged, still reads).
func TestMediaCorruption(t *testing.T) {
	shape := []int{23, 17}
	for _, tc := range []struct {
		name, array string
		damage      func(t *testing.T, file string)
		sentinel    error
	}{
		{"flipped byte in k", "k", func(t *testing.T, file string) {
			b := mustRead(t, file)
			b[len(b)/2] ^= 0x20
			require.NoError(t, os.WriteFile(file, b, 0o644))
		}, ErrChecksum},
		{"truncated rho_c", "rho_c", func(t *testing.T, file string) {
			b := mustRead(t, file)
			require.NoError(t, os.WriteFile(file, b[:len(b)-3], 0o644))
		}, ErrChecksum},
		{"deleted mask", "mask", func(t *testing.T, file string) { require.NoError(t, os.Remove(file)) }, ErrIncomplete},
	} {
		for _, sharded := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/sharded=%v", tc.name, sharded), func(t *testing.T) {
				root := t.TempDir()
				opt := Options{Chunk: []int{6, 5}}
				if sharded {
					opt = Options{Shard: []int{12, 10}, Chunk: []int{6, 5}}
				}
				requireAll(t, writeMedia(t, root, shape, 2, 1, opt, false))
				dir := filepath.Join(root, StepName(1))
				file := filepath.Join(dir, tc.array, "c", "1", "1")
				tc.damage(t, file)
				errs := Verify(dir)
				require.Len(t, errs, 1, "%v", errs)
				require.ErrorIs(t, errs[0], tc.sentinel)
				require.ErrorContains(t, errs[0], file)
				requireAllFail(t, readArrayRanks(t, dir, tc.array, 3, mediaWant(shape, tc.array, 1)), tc.sentinel, file)
				requireAll(t, readArrayRanks(t, dir, "u", 3, mediaWant(shape, "u", 1)))
			})
		}
	}
}

// A damaged array document, one whose layout is not u's, or a group that
// does not match its arrays is refused by Open.
func TestMediaMetadataRefused(t *testing.T) {
	shape := []int{23, 17}
	for _, tc := range []struct {
		name     string
		damage   func(t *testing.T, dir string)
		sentinel error
		file     string
	}{
		{"k zarr.json damaged", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "k", "zarr.json"), []byte(`{"zarr_format": 3}`), 0o644))
		}, ErrChecksum, filepath.Join("k", "zarr.json")},
		{"mask zarr.json missing", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "mask", "zarr.json")))
		}, ErrIncomplete, filepath.Join("mask", "zarr.json")},
		{"k chunked unlike u", func(t *testing.T, dir string) {
			editMediaArray(t, dir, "k", func(a map[string]any) {
				a["chunk_grid"].(map[string]any)["configuration"] = map[string]any{"chunk_shape": []int{5, 5}}
			})
		}, ErrIncompatible, filepath.Join("k", "zarr.json")},
		{"rho_c of another type than recorded", func(t *testing.T, dir string) {
			editMediaArray(t, dir, "rho_c", func(a map[string]any) { a["data_type"] = "uint8"; a["fill_value"] = 0 })
		}, ErrIncompatible, filepath.Join("rho_c", "zarr.json")},
		{"a chunk of k unrecorded", func(t *testing.T, dir string) {
			editGroup(t, dir, func(heat map[string]any) {
				delete(heat["arrays"].(map[string]any)["k"].(map[string]any)["chunks"].(map[string]any), "c/0/0")
			})
		}, ErrChecksum, "zarr.json"},
		{"an unknown array", func(t *testing.T, dir string) {
			editGroup(t, dir, func(heat map[string]any) {
				heat["arrays"].(map[string]any)["v"] = heat["arrays"].(map[string]any)["k"]
			})
		}, ErrIncompatible, "zarr.json"},
		{"the field's format with media", func(t *testing.T, dir string) {
			editGroup(t, dir, func(heat map[string]any) { heat["format"] = Format })
		}, ErrIncompatible, "zarr.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			requireAll(t, writeMedia(t, root, shape, 2, 1, Options{Chunk: []int{6, 5}}, false))
			dir := filepath.Join(root, StepName(1))
			tc.damage(t, dir)
			_, err := Open(dir)
			require.ErrorIs(t, err, tc.sentinel)
			require.ErrorContains(t, err, filepath.Join(dir, tc.file))
			errs := Verify(dir)
			require.Len(t, errs, 1)
			require.ErrorIs(t, errs[0], tc.sentinel)
		})
	}
}

// editMediaArray rewrites the zarr.json of array name of dir through f,
// and records its CRC32-C in the group, as a forger would.
func editMediaArray(t *testing.T, dir, name string, f func(m map[string]any)) {
	t.Helper()
	file := filepath.Join(dir, name, "zarr.json")
	editJSON(t, file, f)
	doc := mustRead(t, file)
	editGroup(t, dir, func(heat map[string]any) {
		heat["arrays"].(map[string]any)[name].(map[string]any)["array_crc32c"] = fmt.Sprintf("%08x", crc32c(doc))
	})
}

// A checkpoint of the field alone holds u only: it is written as before
// media (format Format, no arrays member), and asking it for k fails on
// every rank, naming what it holds.
func TestNoMediaArrays(t *testing.T) {
	shape := []int{23, 17}
	root := t.TempDir()
	writeField(t, root, shape, 2, 1, Options{Chunk: []int{6, 5}})
	dir := filepath.Join(root, StepName(1))
	ck, err := Open(dir)
	require.NoError(t, err)
	require.Equal(t, []string{"u"}, ck.Arrays())
	require.True(t, ck.Has("u"))
	require.False(t, ck.Has("k"))
	require.Equal(t, int64(8*23*17), ck.RawBytes())
	var group map[string]any
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(dir, "zarr.json")), &group))
	heat := group["attributes"].(map[string]any)["heat"].(map[string]any)
	require.NotContains(t, heat, "arrays")
	require.Equal(t, float64(Format), heat["format"])
	requireAllFail(t, readArrayRanks(t, dir, "k", 2, nil), ErrIncompatible, `no array "k"`, "it holds u")
	// A group that claims the media format without media is refused.
	editGroup(t, dir, func(heat map[string]any) { heat["format"] = MediaFormat })
	_, err = Open(dir)
	require.ErrorIs(t, err, ErrIncompatible)
}

// Write refuses, on every rank, arrays it cannot store: an unknown name,
// a name given twice, an unknown type, the wrong length, a uint8 value that
// is not a byte.
func TestWriteRejectsBadArrays(t *testing.T) {
	shape := []int{9, 8}
	g, err := decomp.New(shape, 2, nil, nil)
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		arrays func(n int) []Array
		want   string
	}{
		{"unknown name", func(n int) []Array { return []Array{{Name: "u2", Data: make([]float64, n)}} }, `array "u2": not one`},
		{"the field's name", func(n int) []Array { return []Array{{Name: "u", Data: make([]float64, n)}} }, `array "u": not one`},
		{"twice", func(n int) []Array {
			return []Array{{Name: "k", Data: make([]float64, n)}, {Name: "k", Data: make([]float64, n)}}
		}, `array "k" given twice`},
		{"unknown type", func(n int) []Array { return []Array{{Name: "k", Type: "int16", Data: make([]float64, n)}} }, `type "int16"`},
		{"short", func(n int) []Array { return []Array{{Name: "rho_c", Data: make([]float64, n-1)}} }, `array "rho_c" has`},
		{"not a byte", func(n int) []Array {
			d := make([]float64, n)
			for i := range d {
				d[i] = 0.5 // ghosts too: the box's first cell is what is checked
			}
			return []Array{{Name: "mask", Type: Uint8, Data: d}}
		}, `array "mask" is uint8, but cell`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			errs := make([]error, 2)
			require.NoError(t, local.Run(2, func(c comm.Comm) error {
				lay, u := rankField(g, c.Rank(), 1, func(idx []int) float64 { return 1 })
				_, errs[c.Rank()] = Write(c, g, lay, u, root, Meta{Step: 1, Arrays: tc.arrays(lay.Len())}, Options{})
				return nil
			}))
			requireAllFail(t, errs, nil)
			require.ErrorContains(t, errs[0], tc.want)
			_, err := Resolve(root)
			require.Error(t, err, "nothing committed")
		})
	}
}

// The arrays are a checkpoint's own files: pruning removes a media
// checkpoint whole, leaving no folder behind.
func TestMediaCheckpointsPruned(t *testing.T) {
	shape := []int{11, 9}
	root := t.TempDir()
	for step := 1; step <= 3; step++ {
		requireAll(t, writeMedia(t, root, shape, 2, step, Options{Chunk: []int{4, 4}, Keep: 1}, step == 2))
	}
	require.NoError(t, Settle(root))
	names := dirNames(t, root)
	require.ElementsMatch(t, []string{StepName(3), latestFile}, names)
}
