package run

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/io/config"
)

// colours is the number of colour map entries in heatmap's palette: indices
// below it are field colours, the rest greys.
const colours = 239

// writeSnapshots leaves what a run's image snapshots leave of their planes:
// u-NNNNNNNN.npy and .json, frame k of a 12×20 field on a 2:1 domain
// rising to k+1 at its centre (so each frame's own range differs).
func writeSnapshots(t *testing.T, dir string, steps []int) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	cfg := config.Default()
	cfg.Grid.Shape, cfg.Grid.Length = []int{12, 20}, []float64{1, 2}
	for k, step := range steps {
		const ny, nx = 12, 20
		plane := make([]float64, ny*nx)
		peak := float64(k + 1)
		for j := range ny {
			for i := range nx {
				plane[j*nx+i] = peak * math.Exp(-math.Hypot(float64(i-10), float64(j-6))/3)
			}
		}
		p, err := newPlaneImage(cfg, cfg.Grid.Shape, "", 1024, "heat", step, float64(step)*0.01, math.NaN(), 0, peak)
		require.NoError(t, err)
		require.NoError(t, snapshotPlane(filepath.Join(dir, fmt.Sprintf("u-%08d", step)), plane, ny, nx, p))
	}
}

// barOf finds the colour bar of a frame: the rightmost run of colour map
// pixels across its middle row, and that run's rows.
func barOf(img *image.Paletted) image.Rectangle {
	y := img.Rect.Dy() / 2
	x1 := img.Rect.Max.X - 1
	for x1 > 0 && img.ColorIndexAt(x1, y) >= colours {
		x1--
	}
	x0 := x1
	for x0 > 0 && img.ColorIndexAt(x0-1, y) < colours {
		x0--
	}
	xm := (x0 + x1) / 2
	y0, y1 := y, y
	for y0 > 0 && img.ColorIndexAt(xm, y0-1) < colours {
		y0--
	}
	for y1 < img.Rect.Max.Y-1 && img.ColorIndexAt(xm, y1+1) < colours {
		y1++
	}
	return image.Rect(x0, y0, x1+1, y1+1)
}

// hottest is the highest colour index left of the bar: the field's.
func hottest(img *image.Paletted, bar image.Rectangle) uint8 {
	h := uint8(0)
	for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y++ {
		for x := img.Rect.Min.X; x < bar.Min.X-3; x++ {
			if c := img.ColorIndexAt(x, y); c < colours {
				h = max(h, c)
			}
		}
	}
	return h
}

func decodeGIF(t *testing.T, path string) *gif.GIF {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	g, err := gif.DecodeAll(bytes.NewReader(data))
	require.NoError(t, err)
	return g
}

// A movie has one frame per snapshot, in step order, all of one size and
// one colour range: the colour bar and its labels are the same pixels in
// every frame, and a frame's field is coloured on the common scale, not
// its own.
func TestMovieHasAFramePerSnapshotInOneColourRange(t *testing.T) {
	out := t.TempDir()
	snaps := filepath.Join(out, "snapshots")
	writeSnapshots(t, snaps, []int{0, 5, 10, 15})
	msg, err := Movie(out, MovieOptions{}) // the run's folder; default output
	require.NoError(t, err)
	require.Contains(t, msg, "4 frames, steps 0 to 15")
	require.Contains(t, msg, "colour range [0, 4]")
	g := decodeGIF(t, filepath.Join(snaps, "u.gif"))
	require.Len(t, g.Image, 4)
	first := g.Image[0]
	bar := barOf(first)
	require.Greater(t, bar.Dy(), 80, "found the bar: %v", bar)
	right := image.Rect(bar.Min.X, bar.Min.Y-5, first.Rect.Max.X, bar.Max.Y+5) // bar, ticks, labels
	for k, img := range g.Image {
		require.Equal(t, first.Rect, img.Rect, "frame %d", k)
		require.Equal(t, bar, barOf(img), "frame %d", k)
		for y := right.Min.Y; y < right.Max.Y; y++ {
			require.Equal(t, first.Pix[first.PixOffset(right.Min.X, y):first.PixOffset(right.Max.X, y)],
				img.Pix[img.PixOffset(right.Min.X, y):img.PixOffset(right.Max.X, y)], "frame %d, row %d of the bar", k, y)
		}
		// Frame k peaks at k+1 of 4: the colour index of t = (k+1)/4.
		require.InDelta(t, float64(k+1)/4*(colours-1), float64(hottest(img, bar)), 6, "frame %d", k)
		require.Equal(t, movieDelay, g.Delay[k])
	}

	// --range fixes it instead; the frames stay in step order.
	msg, err = Movie(snaps, MovieOptions{Out: filepath.Join(out, "m.GIF"), Range: []float64{0, 8}, Cmap: "inferno"})
	require.NoError(t, err)
	require.Contains(t, msg, "colour range [0, 8]")
	g = decodeGIF(t, filepath.Join(out, "m.GIF"))
	require.Len(t, g.Image, 4)
	require.InDelta(t, 4.0/8*(colours-1), float64(hottest(g.Image[3], barOf(g.Image[3]))), 6)
}

// Snapshots are taken in step order, not name order or the order they
// were written in.
func TestMovieOrdersFramesBySteps(t *testing.T) {
	dir := t.TempDir()
	writeSnapshots(t, dir, []int{1000, 20, 300}) // peaks 1, 2, 3
	_, err := Movie(dir, MovieOptions{Out: filepath.Join(dir, "m.gif")})
	require.NoError(t, err)
	g := decodeGIF(t, filepath.Join(dir, "m.gif"))
	var peaks []float64
	for _, img := range g.Image {
		peaks = append(peaks, math.Round(float64(hottest(img, barOf(img)))/(colours-1)*3))
	}
	require.Equal(t, []float64{2, 3, 1}, peaks, "steps 20, 300, 1000")
}

func TestMovieRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	var ue UsageError
	_, err := Movie(dir, MovieOptions{})
	require.ErrorAs(t, err, &ue)
	require.ErrorContains(t, err, "no snapshot planes (u-NNNNNNNN.npy) in "+dir)

	_, err = Movie(filepath.Join(dir, "nowhere"), MovieOptions{})
	require.ErrorAs(t, err, &ue)
	require.ErrorContains(t, err, "nowhere")

	_, err = Movie(dir, MovieOptions{Out: "m.png"})
	require.ErrorAs(t, err, &ue)
	require.ErrorContains(t, err, "-o m.png: a movie is a GIF")

	_, err = Movie(dir, MovieOptions{Range: []float64{1, 1}})
	require.ErrorAs(t, err, &ue)
	require.ErrorContains(t, err, "--range must be min,max with min < max")

	writeSnapshots(t, dir, []int{0, 1})
	require.NoError(t, os.Remove(filepath.Join(dir, "u-00000001.json")))
	_, err = Movie(dir, MovieOptions{})
	require.ErrorAs(t, err, &ue)
	require.ErrorContains(t, err, "u-00000001.npy has no u-00000001.json beside it")

	// A plane of another shape (the run changed output.image_size).
	writeSnapshots(t, dir, []int{0, 1})
	require.NoError(t, writeNPY(filepath.Join(dir, "u-00000001.npy"), make([]float64, 6), 2, 3))
	_, err = Movie(dir, MovieOptions{})
	require.ErrorContains(t, err, "u-00000001.npy")
	require.False(t, errors.As(err, &ue), "a damaged run is not a usage error")
}
