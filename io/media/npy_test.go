package media

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"heat/field"

	"github.com/stretchr/testify/require"
)

// A .npy map reads back exactly, for every data type, byte order and
// format version heat reads, in 2D and 3D.
func TestNPYRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, shape := range [][]int{{6, 9}, {3, 4, 5}} {
		want := fieldValues(shape)
		for _, descr := range []string{"<f8", ">f8", "<f4", ">f4"} {
			for _, major := range []byte{1, 2, 3} {
				p := filepath.Join(dir, strings.NewReplacer("<", "le", ">", "be").Replace(descr)+"-"+string('0'+rune(major))+".npy")
				require.NoError(t, os.WriteFile(p, npyBytes(t, major, descr, false, shape, want), 0o644))
				s := &Spec{Shape: shape, K: 1, KMap: p, RhoCMap: p}
				require.NoError(t, s.Check(), "%s v%d", descr, major)
				c, err := s.Fill(make([]int, len(shape)), shape)
				require.NoError(t, err, "%s v%d", descr, major)
				require.Equal(t, want, c.K, "%s v%d", descr, major)
				require.Equal(t, want, c.RhoC, "%s v%d", descr, major)
			}
		}
	}
}

// A .npy as numpy writes it, byte for byte: the magic, version 1.0, the
// header length 118 (little-endian), the dict padded with 58 spaces to a
// multiple of 64 bytes and ended by a newline, then six '<f8' values.
func TestNPYGolden(t *testing.T) {
	golden := "\x93NUMPY\x01\x00\x76\x00" +
		"{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }" + strings.Repeat(" ", 58) + "\n" +
		"\x00\x00\x00\x00\x00\x00\xe0\x3f" + // 0.5
		"\x00\x00\x00\x00\x00\x00\xf0\x3f" + // 1
		"\x00\x00\x00\x00\x00\x00\x00\x40" + // 2
		"\x00\x00\x00\x00\x00\x00\x10\x40" + // 4
		"\x00\x00\x00\x00\x00\x00\x20\x40" + // 8
		"\x00\x00\x00\x00\x00\x40\x30\x40" // 16.25
	require.Len(t, golden, 128+48)
	require.Equal(t, golden, string(npyBytes(t, 1, "<f8", false, []int{2, 3}, []float64{0.5, 1, 2, 4, 8, 16.25})), "the test writer writes numpy's format")
	p := filepath.Join(t.TempDir(), "golden.npy")
	require.NoError(t, os.WriteFile(p, []byte(golden), 0o644))
	s := &Spec{Shape: []int{2, 3}, KMap: p}
	c, err := s.Fill([]int{0, 0}, []int{2, 3})
	require.NoError(t, err)
	require.Equal(t, []float64{0.5, 1, 2, 4, 8, 16.25}, c.K)
	c, err = s.Fill([]int{1, 1}, []int{2, 3})
	require.NoError(t, err)
	require.Equal(t, []float64{8, 16.25}, c.K)

	// Other spellings numpy's header has had: no trailing comma, a
	// Python 2 long, double quotes, keys in another order.
	for _, dict := range []string{
		`{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3)}`,
		`{'shape': (2L, 3L), 'fortran_order': False, 'descr': '<f8'}`,
		`{"descr": "<f8", "fortran_order": False, "shape": (2, 3), }`,
	} {
		pad := 64 - (10+len(dict)+1)%64
		h := "\x93NUMPY\x01\x00" + string([]byte{byte(len(dict) + pad + 1), 0}) + dict + strings.Repeat(" ", pad) + "\n"
		require.NoError(t, os.WriteFile(p, []byte(h+golden[128:]), 0o644))
		c, err := s.Fill([]int{0, 0}, []int{2, 3})
		require.NoError(t, err, dict)
		require.Equal(t, 16.25, c.K[5], dict)
	}
}

// A .npy that is not a map of the grid is refused by Check and Fill,
// naming the key, the file and what is wrong, with the numbers.
func TestNPYRefused(t *testing.T) {
	dir := t.TempDir()
	grid := []int{64, 64}
	wrongShape := writeNPY(t, dir, "ground-k.npy", "<f8", []int{64, 32}, nil)
	fortran := filepath.Join(dir, "fortran.npy")
	require.NoError(t, os.WriteFile(fortran, npyBytes(t, 1, "<f8", true, grid, fieldValues(grid)), 0o644))
	ints := filepath.Join(dir, "ints.npy")
	ib := npyBytes(t, 1, "<f8", false, grid, fieldValues(grid))
	ib = []byte(strings.Replace(string(ib), "'<f8'", "'<i8'", 1))
	require.NoError(t, os.WriteFile(ints, ib, 0o644))
	cut := filepath.Join(dir, "cut.npy")
	require.NoError(t, os.WriteFile(cut, npyBytes(t, 1, "<f8", false, grid, fieldValues(grid))[:4096+100], 0o644))
	text := filepath.Join(dir, "k.txt")
	require.NoError(t, os.WriteFile(text, []byte("1 2 3\n"), 0o644))
	version := filepath.Join(dir, "v4.npy")
	vb := npyBytes(t, 1, "<f8", false, grid, fieldValues(grid))
	vb[6] = 4
	require.NoError(t, os.WriteFile(version, vb, 0o644))
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))

	for _, c := range []struct {
		path string
		want string
	}{
		{wrongShape, "media: maps.k: " + wrongShape + " has shape [64 32], the grid is [64 64]"},
		{fortran, "media: maps.k: " + fortran + ": fortran_order is True; a map is C order"},
		{ints, "media: maps.k: " + ints + `: data type "<i8" is not supported; a map is float64 or float32`},
		{cut, "media: maps.k: " + cut + " is 4196 bytes, but its header and shape [64 64] of <f8 take 32896"},
		{text, "media: maps.k: " + text + `: not a .npy file (no \x93NUMPY magic at its start) nor a Zarr v3 array folder`},
		{version, "media: maps.k: " + version + ": not a .npy heat reads: format version 4.0"},
		{filepath.Join(dir, "nope.npy"), "media: maps.k: " + filepath.Join(dir, "nope.npy") + ": no such file or folder"},
		{empty, "media: maps.k: " + empty + " is a folder without zarr.json: not a Zarr v3 array"},
	} {
		s := &Spec{Shape: grid, K: 1, KMap: c.path}
		err := s.Check()
		require.ErrorContains(t, err, c.want)
		var me *MapError
		require.ErrorAs(t, err, &me)
		require.Equal(t, KeyK, me.Key)
		require.Equal(t, c.path, me.Path)
		_, err = s.Fill([]int{0, 0}, []int{1, 1})
		require.ErrorContains(t, err, c.want)
	}
}

// Values that are not a valid k or ρc are refused naming the file and the
// cell; Fill checks the box it fills (a bad cell outside it is not read),
// Check the whole file.
func TestNPYBadValues(t *testing.T) {
	dir := t.TempDir()
	grid := []int{16, 12}
	with := func(name string, idx []int, v float64) string {
		vals := fieldValues(grid)
		vals[field.Linear(idx, grid)] = v
		return writeNPY(t, dir, name, "<f8", grid, vals)
	}
	neg := with("ground-k.npy", []int{3, 7}, -1)
	nan := with("nan-k.npy", []int{15, 0}, math.NaN())
	inf := with("inf-k.npy", []int{0, 11}, math.Inf(1))
	zero := with("zero-rc.npy", []int{8, 8}, 0)
	f4 := filepath.Join(dir, "neg-f4.npy")
	vals := fieldValues(grid)
	vals[field.Linear([]int{2, 2}, grid)] = -0.5
	require.NoError(t, os.WriteFile(f4, npyBytes(t, 1, ">f4", false, grid, vals), 0o644))

	for _, c := range []struct {
		spec Spec
		cell []int
		want string
	}{
		{Spec{KMap: neg}, []int{3, 7}, "media: maps.k: " + neg + ": cell [3 7] is -1 (k must be finite and >= 0)"},
		{Spec{KMap: nan}, []int{15, 0}, "media: maps.k: " + nan + ": cell [15 0] is nan (k must be finite and >= 0)"},
		{Spec{KMap: inf}, []int{0, 11}, "media: maps.k: " + inf + ": cell [0 11] is inf (k must be finite and >= 0)"},
		{Spec{RhoCMap: zero}, []int{8, 8}, "media: maps.rho_c: " + zero + ": cell [8 8] is 0 (rho_c must be finite and > 0)"},
		{Spec{RhoCMap: f4}, []int{2, 2}, "media: maps.rho_c: " + f4 + ": cell [2 2] is -0.5 (rho_c must be finite and > 0)"},
	} {
		s := c.spec
		s.Shape, s.K = grid, 1
		require.EqualError(t, s.Check(), c.want)
		_, err := s.Fill([]int{0, 0}, grid)
		require.EqualError(t, err, c.want)
		_, err = s.Fill(c.cell, []int{c.cell[0] + 1, c.cell[1] + 1})
		require.EqualError(t, err, c.want)
		// A box without the cell: nothing to say.
		lo := []int{(c.cell[0] + 8) % 16, 0}
		_, err = s.Fill(lo, []int{lo[0] + 1, 12})
		require.NoError(t, err, c.want)
	}
}

// The header parser takes Python literals and refuses what is not one.
func TestParseDict(t *testing.T) {
	d, err := parseDict("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'x': [1, (2, None)], }  \n")
	require.NoError(t, err)
	require.Equal(t, map[string]any{"descr": "<f8", "fortran_order": false, "shape": []any{int64(3)}, "x": []any{int64(1), []any{int64(2), nil}}}, d)
	d, err = parseDict("{'shape': ()}")
	require.NoError(t, err)
	require.Equal(t, []any{}, d["shape"])
	for _, bad := range []string{"", "[1]", "{'a': 1", "{'a' 1}", "{1: 2}", "{'a': 1, 'a': 2}", "{'a': 'x\\'y'}", "{'a': 99999999999999999999}",
		"{'a': (1, 2}", "{'a': 1} junk", "{'a': " + strings.Repeat("(", 20) + "}"} {
		_, err := parseDict(bad)
		require.Error(t, err, bad)
	}
}
