package run

import (
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeNPY writes what NumPy writes: the bytes of
// np.save(f, np.array([[0, 1.5, -2], [nan, inf, 1e-3]], dtype='<f4'))
// from NumPy 1.24, so np.load reads a snapshot's plane.
func TestNPYIsWhatNumPyWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "u.npy")
	require.NoError(t, writeNPY(path, []float64{0, 1.5, -2, math.NaN(), math.Inf(1), 1e-3}, 2, 3))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	dict := "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
	header := "\x93NUMPY\x01\x00\x76\x00" + dict + strings.Repeat(" ", 0x76-len(dict)-1) + "\n" // 128 bytes in all
	data, err := hex.DecodeString("000000000000c03f000000c00000c07f0000807f6f12833a")
	require.NoError(t, err)
	require.Equal(t, header+string(data), string(got))
}

func TestNPYRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, shape := range [][2]int{{1, 1}, {3, 700}, {64, 128}} {
		ny, nx := shape[0], shape[1]
		plane := make([]float64, ny*nx)
		for i := range plane {
			plane[i] = math.Sin(float64(i)) * 1e3
		}
		plane[0] = math.Inf(-1)
		path := filepath.Join(dir, "p.npy")
		require.NoError(t, writeNPY(path, plane, ny, nx))
		fi, err := os.Stat(path)
		require.NoError(t, err)
		require.Zero(t, (fi.Size()-int64(4*ny*nx))%64, "the data start on a 64-byte boundary")
		got, gy, gx, err := readNPY(path)
		require.NoError(t, err)
		require.Equal(t, [2]int{ny, nx}, [2]int{gy, gx})
		for i, v := range plane {
			require.Equal(t, float64(float32(v)), got[i], "value %d", i)
		}
	}
	// A float64 array, as np.save(f, a.astype('<f8')) writes it.
	f8 := string(npyHeader("<f8", 1, 2)) + "\x00\x00\x00\x00\x00\x00\xf0\x3f\x00\x00\x00\x00\x00\x00\x00\xc0"
	path := filepath.Join(dir, "f8.npy")
	require.NoError(t, os.WriteFile(path, []byte(f8), 0o644))
	got, ny, nx, err := readNPY(path)
	require.NoError(t, err)
	require.Equal(t, []float64{1, -2}, got)
	require.Equal(t, [2]int{1, 2}, [2]int{ny, nx})
	require.Error(t, writeNPY(filepath.Join(dir, "bad.npy"), []float64{1, 2, 3}, 2, 2))
}

func TestNPYRejectsWhatIsNotAPlane(t *testing.T) {
	dir := t.TempDir()
	good := string(npyHeader("<f4", 2, 2)) + strings.Repeat("\x00", 16)
	cases := map[string]string{
		"no NumPy .npy magic": "PNG....." + good,
		"dtype '>f4'":         strings.Replace(good, "<f4", ">f4", 1),
		"dtype '<i8'":         strings.Replace(good, "<f4", "<i8", 1),
		"Fortran order":       strings.Replace(good, "False", "True ", 1),
		"is not 2D":           strings.Replace(good, "(2, 2)", "(4,)  ", 1),
		"bytes of data":       good[:len(good)-1],
		"truncated header":    good[:20],
		"format version 9.0":  strings.Replace(good, "\x01\x00", "\x09\x00", 1),
	}
	for want, data := range cases {
		path := filepath.Join(dir, "x.npy")
		require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
		_, _, _, err := readNPY(path)
		require.ErrorContains(t, err, want)
		require.ErrorContains(t, err, path)
	}
}
