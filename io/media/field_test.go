package media

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"heat/field"

	"github.com/stretchr/testify/require"
)

// A field file reads back exactly, box by box, whatever it is: a .npy of
// float64 or float32, a Zarr v3 array, a heat checkpoint folder (its u).
func TestFieldReadsEveryFormat(t *testing.T) {
	shape := []int{24, 20}
	dir := t.TempDir()
	for _, path := range []string{
		writeNPY(t, dir, "u8.npy", "<f8", shape, nil),
		writeNPY(t, dir, "u4.npy", ">f4", shape, nil),
		writeZarr(t, dir, "u.zarr", shape, nil, zarrSpec{chunk: []int{7, 6}, post: []string{"zstd"}}),
		writeCheckpoint(t, shape, 3, true),
	} {
		require.NoError(t, CheckField("initial.path", path, shape), path)
		whole, err := ReadField("initial.path", path, shape, []int{0, 0}, shape)
		require.NoError(t, err, path)
		require.Equal(t, fieldValues(shape), whole, path)
		for _, b := range boxes(shape) {
			part, err := ReadField("initial.path", path, shape, b[0], b[1])
			require.NoError(t, err)
			require.Equal(t, sliceOf(whole, shape, b[0], b[1]), part, "%s %v", path, b)
		}
	}
}

// A wrong shape, a value that is not finite and a missing file are
// errors that name the key, the file, and the cell and value.
func TestFieldRefused(t *testing.T) {
	shape := []int{6, 5}
	dir := t.TempDir()
	vals := fieldValues(shape)
	vals[field.Linear([]int{4, 3}, shape)] = math.NaN()
	vals[field.Linear([]int{5, 0}, shape)] = math.Inf(-1)
	bad := writeNPY(t, dir, "bad.npy", "<f8", shape, vals)
	_, err := ReadField("initial.path", bad, shape, []int{0, 0}, shape)
	require.EqualError(t, err, fmt.Sprintf("media: initial.path: %s: cell [4 3] is nan (a field's values must be finite)", bad))
	var cell *MapError
	require.ErrorAs(t, err, &cell)
	require.Equal(t, []int{4, 3}, cell.Cell, "the cell, for the ranks to agree on the first")
	_, err = ReadField("initial.path", bad, shape, []int{5, 0}, []int{6, 5})
	require.EqualError(t, err, fmt.Sprintf("media: initial.path: %s: cell [5 0] is -inf (a field's values must be finite)", bad))
	part, err := ReadField("initial.path", bad, shape, []int{0, 0}, []int{4, 5})
	require.NoError(t, err, "the rows before the bad cells are read without them")
	require.Len(t, part, 20)

	small := writeNPY(t, dir, "small.npy", "<f8", []int{6, 4}, nil)
	err = CheckField("initial.path", small, shape)
	require.EqualError(t, err, fmt.Sprintf("media: initial.path: %s has shape [6 4], the grid is [6 5]", small))
	var me *MapError
	require.ErrorAs(t, err, &me)
	require.Equal(t, "initial.path", me.Key)

	gone := filepath.Join(dir, "gone.npy")
	require.EqualError(t, CheckField("initial.path", gone, shape), fmt.Sprintf("media: initial.path: %s: no such file or folder", gone))
}
