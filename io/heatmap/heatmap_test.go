package heatmap

import (
	"flag"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/*.png from the current renderer")

// ramp is a ny×nx field whose value is its index, j*nx+i.
func ramp(ny, nx int) []float64 {
	f := make([]float64, ny*nx)
	for k := range f {
		f[k] = float64(k)
	}
	return f
}

// decodeFile reads a PNG back as the viewer would.
func decodeFile(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	return img
}

// rgbaAt is the pixel at (x, y) as 8-bit RGBA.
func rgbaAt(img image.Image, x, y int) color.RGBA {
	return color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
}

// cellCentre is the pixel in the middle of data cell (j, i) of an image
// drawn without downsampling.
func cellCentre(l layout, j, i int) (x, y int) {
	return l.field.Min.X + i*l.scale + l.scale/2, l.field.Max.Y - j*l.scale - l.scale/2 - 1
}

func mustMap(t *testing.T, name string) func(float64) color.RGBA {
	t.Helper()
	m, err := Colormap(name)
	require.NoError(t, err)
	return m
}

func TestWriteDecodesWithExtremesAtMapEnds(t *testing.T) {
	for _, name := range Cmaps() {
		t.Run(name, func(t *testing.T) {
			const ny, nx = 30, 50
			field := ramp(ny, nx) // coldest cell (0, 0), hottest (ny-1, nx-1)
			o := Options{Cmap: name, Title: "step 200  t = 0.0123"}
			path := filepath.Join(t.TempDir(), "u.png")
			require.NoError(t, Write(path, field, ny, nx, o))

			img := decodeFile(t, path)
			l, err := plan(field, ny, nx, o)
			require.NoError(t, err)
			require.Equal(t, image.Rect(0, 0, l.width, l.hgt), img.Bounds())
			require.Equal(t, 6, l.scale, "a 30×50 field is enlarged to about 256 px")
			require.Equal(t, image.Rect(pad, l.field.Min.Y, pad+nx*6, l.field.Min.Y+ny*6), l.field)

			m := mustMap(t, name)
			x, y := cellCentre(l, 0, 0)
			require.Equal(t, m(0), rgbaAt(img, x, y), "coldest cell")
			x, y = cellCentre(l, ny-1, nx-1)
			require.Equal(t, m(1), rgbaAt(img, x, y), "hottest cell")

			// Colour bar: its top and bottom pixels are the hot and cold ends.
			bx := (l.bar.Min.X + l.bar.Max.X) / 2
			require.Equal(t, m(1), rgbaAt(img, bx, l.bar.Min.Y))
			require.Equal(t, m(0), rgbaAt(img, bx, l.bar.Max.Y-1))
			require.Equal(t, []string{"0", "750", "1.5e+03"}, l.labels)
		})
	}
}

func TestRowZeroIsAtTheBottom(t *testing.T) {
	const ny, nx = 4, 3
	field := make([]float64, ny*nx)
	for i := range nx {
		field[i] = 1 // row 0 hot, the rest cold
	}
	img, err := Render(field, ny, nx, Options{})
	require.NoError(t, err)
	l, err := plan(field, ny, nx, Options{})
	require.NoError(t, err)
	m := mustMap(t, "")
	require.Equal(t, m(1), rgbaAt(img, l.field.Min.X, l.field.Max.Y-1), "bottom-left pixel shows row 0, column 0")
	require.Equal(t, m(0), rgbaAt(img, l.field.Min.X, l.field.Min.Y), "top row shows row ny-1")
}

func TestNaNIsGreyAndOffEveryMap(t *testing.T) {
	field := ramp(5, 5)
	field[7] = math.NaN() // row 1, column 2
	img, err := Render(field, 5, 5, Options{})
	require.NoError(t, err)
	l, err := plan(field, 5, 5, Options{})
	require.NoError(t, err)
	x, y := cellCentre(l, 1, 2)
	require.Equal(t, nanColor, rgbaAt(img, x, y))
	require.Equal(t, 0.0, l.lo, "NaN is left out of the automatic range")
	require.Equal(t, 24.0, l.hi)

	for _, name := range Cmaps() {
		m := mustMap(t, name)
		for k := 0; k <= 1000; k++ {
			c := m(float64(k) / 1000)
			d := math.Abs(float64(c.R)-128) + math.Abs(float64(c.G)-128) + math.Abs(float64(c.B)-128)
			require.Greater(t, d, 60.0, "%s at t=%g is too close to the NaN grey", name, float64(k)/1000)
		}
	}
}

func TestLargeFieldIsDownsampled(t *testing.T) {
	const ny, nx = 3000, 2000
	field := make([]float64, ny*nx)
	for k := range field {
		field[k] = float64(k % 977)
	}
	for _, maxPix := range []int{0, 500, 1000} {
		// A fixed range spares plan a pass over the data.
		l, err := plan(field, ny, nx, Options{MaxPixels: maxPix, Min: 0, Max: 1000, Fixed: true})
		require.NoError(t, err)
		limit := maxPix
		if limit == 0 {
			limit = DefaultMaxPixels
		}
		require.LessOrEqual(t, max(l.field.Dx(), l.field.Dy()), limit, "MaxPixels %d", maxPix)
		require.Greater(t, max(l.field.Dx(), l.field.Dy()), limit/2, "MaxPixels %d: not shrunk more than needed", maxPix)
	}
	o := Options{MaxPixels: 500}
	img, err := Render(field, ny, nx, o)
	require.NoError(t, err)
	l, err := plan(field, ny, nx, o)
	require.NoError(t, err)
	require.Equal(t, 6, l.factor)
	require.Equal(t, image.Rect(pad, pad, pad+334, pad+500), l.field) // ceil(2000/6) × 3000/6
	require.Equal(t, img.Bounds(), image.Rect(0, 0, l.width, l.hgt))
}

func TestDownsampleAveragesAndSkipsNaN(t *testing.T) {
	nan := math.NaN()
	field := []float64{
		1, 3, 5,
		nan, 2, nan,
		nan, nan, 8,
	}
	got := downsample(field, 3, 3, 2)
	require.Len(t, got, 4)
	require.Equal(t, 2.0, got[0]) // (1+3+2)/3
	require.Equal(t, 5.0, got[1]) // NaN skipped
	require.True(t, math.IsNaN(got[2]), "a box of NaN only stays NaN")
	require.Equal(t, 8.0, got[3])
}

func TestFixedRangeClamps(t *testing.T) {
	field := []float64{-5, 0.25, 0.75, 5}
	o := Options{Min: 0, Max: 1, Fixed: true}
	img, err := Render(field, 2, 2, o)
	require.NoError(t, err)
	l, err := plan(field, 2, 2, o)
	require.NoError(t, err)
	require.Equal(t, []string{"0", "0.25", "0.5", "0.75", "1"}, l.labels)
	m := mustMap(t, "")
	x, y := cellCentre(l, 0, 0)
	require.Equal(t, m(0), rgbaAt(img, x, y), "below Min clamps to the cold end")
	x, y = cellCentre(l, 1, 1)
	require.Equal(t, m(1), rgbaAt(img, x, y), "above Max clamps to the hot end")
	x, y = cellCentre(l, 0, 1)
	require.Equal(t, m(0.25), rgbaAt(img, x, y))

	// Without Fixed the given range widens to take in the data.
	l, err = plan(field, 2, 2, Options{Min: 0, Max: 1})
	require.NoError(t, err)
	require.Equal(t, [2]float64{-5, 5}, [2]float64{l.lo, l.hi})
	l, err = plan([]float64{0.5}, 1, 1, Options{Min: 0, Max: 1})
	require.NoError(t, err)
	require.Equal(t, [2]float64{0, 1}, [2]float64{l.lo, l.hi}, "data inside keep the given range")
}

func TestAutomaticRangeCorners(t *testing.T) {
	l, err := plan([]float64{3, 3, 3, 3}, 2, 2, Options{})
	require.NoError(t, err)
	require.Equal(t, [2]float64{1.5, 4.5}, [2]float64{l.lo, l.hi}, "a flat field sits mid-map")
	l, err = plan([]float64{math.NaN(), math.Inf(1)}, 1, 2, Options{})
	require.NoError(t, err)
	require.Equal(t, [2]float64{0, 1}, [2]float64{l.lo, l.hi})
	require.Equal(t, []string{"300.0001", "300.00015", "300.0002"}, tickLabels([]float64{300.0001, 300.00015, 300.0002}))
}

func TestRenderRejectsBadInput(t *testing.T) {
	_, err := Render(make([]float64, 5), 2, 3, Options{})
	require.ErrorContains(t, err, "field has 5 values, shape [2, 3] needs 6")
	_, err = Render(nil, 0, 3, Options{})
	require.ErrorContains(t, err, "must be positive")
	_, err = Render(make([]float64, 6), 2, 3, Options{MaxPixels: -1})
	require.ErrorContains(t, err, "MaxPixels")
	_, err = Render(make([]float64, 6), 2, 3, Options{Min: math.Inf(-1), Max: 1})
	require.ErrorContains(t, err, "finite")
	_, err = Render(make([]float64, 6), 2, 3, Options{Cmap: "jet"})
	require.ErrorContains(t, err, `unknown colour map "jet" (known: coolwarm, inferno, viridis)`)
}

func TestWriteIsAtomicAndReadable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "u.png")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	require.NoError(t, Write(path, ramp(2, 2), 2, 2, Options{}))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	decodeFile(t, path)

	require.Error(t, Write(filepath.Join(dir, "missing", "u.png"), ramp(2, 2), 2, 2, Options{}))
}

// TestGoldenTiny compares a small fixed-range picture, title and labels
// included, with testdata/tiny.png pixel for pixel. After an intended change
// of the drawing, regenerate it with `go test -run Golden -update` and look.
func TestGoldenTiny(t *testing.T) {
	field := []float64{
		0, 1, 2, 3,
		4, math.NaN(), 6, 7,
		8, 9, 10, 12, // 12 clamps to Max
	}
	img, err := Render(field, 3, 4, Options{Min: 0, Max: 10, Fixed: true, Title: "tiny 3x4"})
	require.NoError(t, err)
	golden := filepath.Join("testdata", "tiny.png")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		f, err := os.Create(golden)
		require.NoError(t, err)
		require.NoError(t, png.Encode(f, img))
		require.NoError(t, f.Close())
	}
	want := decodeFile(t, golden)
	require.Equal(t, want.Bounds(), img.Bounds())
	diff, first := 0, image.Point{-1, -1}
	for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y++ {
		for x := img.Rect.Min.X; x < img.Rect.Max.X; x++ {
			if rgbaAt(want, x, y) != rgbaAt(img, x, y) {
				if diff == 0 {
					first = image.Pt(x, y)
				}
				diff++
			}
		}
	}
	require.Zero(t, diff, "pixels differ from %s, first at %v; rerun with -update if intended", golden, first)
}

// Write stores the picture as a 256-colour PNG, losslessly: every pixel
// decodes to the colour Render painted.
func TestWriteIsPalettedAndLossless(t *testing.T) {
	ny, nx := 40, 70
	field := make([]float64, ny*nx)
	for i := range field {
		field[i] = math.Sin(float64(i) * 0.37)
	}
	field[5] = math.NaN()
	for _, cmap := range []string{"viridis", "inferno", "coolwarm"} {
		o := Options{Cmap: cmap, Title: "step 1  t = 0.5"}
		path := filepath.Join(t.TempDir(), "p.png")
		require.NoError(t, Write(path, field, ny, nx, o))
		f, err := os.Open(path)
		require.NoError(t, err)
		img, err := png.Decode(f)
		f.Close()
		require.NoError(t, err)
		_, ok := img.(*image.Paletted)
		require.True(t, ok, "%s: written as %T", cmap, img)
		want, err := Render(field, ny, nx, o)
		require.NoError(t, err)
		require.Equal(t, want.Bounds(), img.Bounds())
		for y := want.Rect.Min.Y; y < want.Rect.Max.Y; y++ {
			for x := want.Rect.Min.X; x < want.Rect.Max.X; x++ {
				r1, g1, b1, a1 := want.At(x, y).RGBA()
				r2, g2, b2, a2 := img.At(x, y).RGBA()
				require.Equal(t, [4]uint32{r1, g1, b1, a1}, [4]uint32{r2, g2, b2, a2}, "%s pixel %d,%d", cmap, x, y)
			}
		}
	}
}
