// Package imagetest reads back, in tests, the images heat writes.
package imagetest

import (
	"image"
	"image/png"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// DecodePNG reads the PNG file at path as a viewer would, failing t unless
// it is one.
func DecodePNG(t testing.TB, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err, path)
	return img
}
