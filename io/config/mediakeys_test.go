package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// maps.missing takes "error" (or nothing: the default) and "fill", which
// is what lets the media reader take a Zarr input's chunks that are not
// stored as its fill value; anything else is refused naming the key.
func TestMapsMissing(t *testing.T) {
	for val, fill := range map[string]bool{"": false, `"error"`: false, `"fill"`: true} {
		var sets []string
		if val != "" {
			sets = []string{"maps.missing=" + val}
		}
		c, err := Load("", sets)
		require.NoError(t, err, val)
		require.Equal(t, fill, c.Media().FillMissing, val)
	}
	_, err := Load("", []string{`maps.missing="zero"`})
	var ce *Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "maps.missing", ce.Key)
	require.ErrorContains(t, err, `must be "error" (a chunk a Zarr input does not store is refused) or "fill" (it reads as the array's fill_value) (got "zero")`)
}

// A [[material]] region between two rows of cell centres covers no cell
// and is refused at load (exit 2) under its key, naming the material and
// the cell size; it was dropped without a word.
func TestMaterialCoveringNoCellRefused(t *testing.T) {
	_, err := Load("", []string{"grid.shape=[8, 8]", `material=[{name = "film", region = "box", lo = [0.2, 0.0], hi = [0.3, 1.0], k = 5.0}]`})
	var ce *Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "material[0].region", ce.Key)
	require.ErrorContains(t, err, `covers no cell centre, so it would set nothing: along y no cell centre lies in [0.2, 0.3): the centres on either side are 0.1875 and 0.3125 (cells 0.125 wide), in material "film"`)
}
