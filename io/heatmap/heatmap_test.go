package heatmap

import (
	"bytes"
	"encoding/base64"
	"flag"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"

	"heat/internal/imagetest"
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

// rgbaAt is the pixel at (x, y) as 8-bit RGBA.
func rgbaAt(img image.Image, x, y int) color.RGBA {
	return color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
}

// cellCentre is the pixel in the middle of cell (j, i) of a picture of a
// field drawn without downsampling.
func cellCentre(l layout, j, i int) (x, y int) {
	fw, fh := float64(l.field.Dx()), float64(l.field.Dy())
	return l.field.Min.X + int((float64(i)+0.5)*fw/float64(l.cols)), l.field.Max.Y - 1 - int((float64(j)+0.5)*fh/float64(l.rows))
}

func mustMap(t *testing.T, name string) func(float64) color.RGBA {
	t.Helper()
	m, err := Colormap(name)
	require.NoError(t, err)
	return m
}

func mustPlan(t *testing.T, field []float64, ny, nx int, o Options) layout {
	t.Helper()
	f, err := prepare(field, ny, nx, o)
	require.NoError(t, err)
	return f.l
}

func TestWriteDecodesWithExtremesAtMapEnds(t *testing.T) {
	for _, name := range Cmaps() {
		t.Run(name, func(t *testing.T) {
			const ny, nx = 30, 50
			field := ramp(ny, nx) // coldest cell (0, 0), hottest (ny-1, nx-1)
			o := Options{Cmap: name, Title: "step 200  t = 0.0123", Label: "u"}
			path := filepath.Join(t.TempDir(), "u.png")
			require.NoError(t, Write(path, field, ny, nx, o))

			img := imagetest.DecodePNG(t, path)
			l := mustPlan(t, field, ny, nx, o)
			require.Equal(t, image.Rect(0, 0, l.width, l.hgt), img.Bounds())
			require.Equal(t, image.Pt(1050, 630), l.field.Size(), "a 30×50 field of square cells is enlarged 21× to at least MaxPixels (1024): whole pixels a cell")

			m := mustMap(t, name)
			x, y := cellCentre(l, 0, 0)
			require.Equal(t, m(0), rgbaAt(img, x, y), "coldest cell")
			x, y = cellCentre(l, ny-1, nx-1)
			require.Equal(t, m(1), rgbaAt(img, x, y), "hottest cell")

			// Colour bar: its top and bottom pixels are the hot and cold ends.
			bx := (l.bar.Min.X + l.bar.Max.X) / 2
			require.Equal(t, m(1), rgbaAt(img, bx, l.bar.Min.Y))
			require.Equal(t, m(0), rgbaAt(img, bx, l.bar.Max.Y-1))
			require.Equal(t, []string{"0", "200", "400", "600", "800", "1000", "1200", "1400"}, l.labels) // range [0, 1499]
			// The frames are black, just outside the field and the bar.
			require.Equal(t, color.RGBA{0, 0, 0, 255}, rgbaAt(img, l.field.Min.X-1, l.field.Min.Y))
			require.Equal(t, color.RGBA{0, 0, 0, 255}, rgbaAt(img, l.bar.Max.X, l.bar.Max.Y-1))
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
	l := mustPlan(t, field, ny, nx, Options{})
	m := mustMap(t, "")
	require.Equal(t, m(1), rgbaAt(img, l.field.Min.X, l.field.Max.Y-1), "bottom-left pixel shows row 0, column 0")
	require.Equal(t, m(0), rgbaAt(img, l.field.Min.X, l.field.Min.Y), "top row shows row ny-1")
}

// discBox is the width and height, in pixels, of the cells of img inside
// r painted c.
func discBox(img image.Image, r image.Rectangle, c color.RGBA) (w, h int) {
	x0, y0, x1, y1 := r.Max.X, r.Max.Y, r.Min.X, r.Min.Y
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if rgbaAt(img, x, y) == c {
				x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
			}
		}
	}
	return x1 - x0 + 1, y1 - y0 + 1
}

// A disc on a 2:1 domain of cells that are not square comes out round: one
// unit of x is as long on the picture as one unit of y.
func TestTrueAspectRatioDrawsADiscRound(t *testing.T) {
	cases := []struct {
		ny, nx        int
		width, height float64
	}{
		{128, 128, 1, 2}, // cells 1/128 wide, 1/64 high
		{100, 160, 2, 1}, // cells 1/80 wide, 1/100 high
		{64, 64, 3, 1.5}, // a square grid of 2:1 cells
		{600, 900, 1, 2}, // downsampled 3×, then shrunk to 400 pixels
	}
	for _, c := range cases {
		field := make([]float64, c.ny*c.nx)
		for j := range c.ny {
			for i := range c.nx {
				x := (float64(i) + 0.5) * c.width / float64(c.nx)
				y := (float64(j) + 0.5) * c.height / float64(c.ny)
				if math.Hypot(x-c.width/2, y-c.height/2) < 0.35*min(c.width, c.height) {
					field[j*c.nx+i] = 1
				}
			}
		}
		o := Options{Width: c.width, Height: c.height, Label: "u", Title: "disc", MaxPixels: 400}
		path := filepath.Join(t.TempDir(), "disc.png")
		require.NoError(t, Write(path, field, c.ny, c.nx, o))
		img := imagetest.DecodePNG(t, path)
		l := mustPlan(t, field, c.ny, c.nx, o)
		require.InDelta(t, c.width/c.height, float64(l.field.Dx())/float64(l.field.Dy()), 0.02, "%+v: the field's pixels keep the plane's aspect", c)
		long := max(l.field.Dx(), l.field.Dy())
		if c.ny*c.nx > 400*400 {
			require.LessOrEqual(t, long, 400, "%+v: downsampled, then shrunk to MaxPixels", c)
		} else {
			require.True(t, long >= 400 && long < 800, "%+v: cell for cell, enlarged by a whole factor to at least MaxPixels (%d)", c, long)
		}
		w, h := discBox(img, l.field, mustMap(t, "")(1))
		require.Greater(t, w, 20, "%+v", c)
		require.InDelta(t, 1, float64(w)/float64(h), 0.05, "%+v: disc %d×%d pixels", c, w, h)
	}
}

// An uneven box average (10 columns by 4: 4, 4, 2 cells) draws its last
// column half as wide, so the axes stay exact.
func TestUnevenAverageDrawsNarrowerLastCells(t *testing.T) {
	field := []float64{0, 1, 2} // one row of 3 averages of a 1×10 plane
	o := Options{Factor: 4, Cells: [2]int{1, 10}, Width: 10, Height: 1}
	img, err := Render(field, 1, 3, o)
	require.NoError(t, err)
	l := mustPlan(t, field, 1, 3, o)
	require.InDelta(t, 10, float64(l.field.Dx())/float64(l.field.Dy()), 0.5, "the plane is 10:1")
	m := mustMap(t, "")
	counts := map[color.RGBA]int{}
	y := (l.field.Min.Y + l.field.Max.Y) / 2
	for x := l.field.Min.X; x < l.field.Max.X; x++ {
		counts[rgbaAt(img, x, y)]++
	}
	require.InDelta(t, 0.4*float64(l.field.Dx()), counts[m(0)], 1)
	require.InDelta(t, 0.4*float64(l.field.Dx()), counts[m(0.5)], 1)
	require.InDelta(t, 0.2*float64(l.field.Dx()), counts[m(1)], 1)

	_, err = Render(field, 1, 3, Options{Factor: 4, Cells: [2]int{1, 13}})
	require.ErrorContains(t, err, "not a 4× box average of [1, 13] cells")
}

func TestNaNIsGreyAndInfClampsToTheEnds(t *testing.T) {
	field := ramp(5, 5)
	field[7] = math.NaN()    // row 1, column 2
	field[12] = math.Inf(1)  // row 2, column 2
	field[18] = math.Inf(-1) // row 3, column 3
	img, err := Render(field, 5, 5, Options{})
	require.NoError(t, err)
	l := mustPlan(t, field, 5, 5, Options{})
	m := mustMap(t, "")
	x, y := cellCentre(l, 1, 2)
	require.Equal(t, nanColor, rgbaAt(img, x, y))
	x, y = cellCentre(l, 2, 2)
	require.Equal(t, m(1), rgbaAt(img, x, y), "+Inf is the hot end")
	x, y = cellCentre(l, 3, 3)
	require.Equal(t, m(0), rgbaAt(img, x, y), "-Inf is the cold end")
	require.Equal(t, 0.0, l.lo, "NaN and ±Inf are left out of the automatic range")
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

// Fields that are awkward to scale draw as valid files: in every format
// those the acceptance names (vector formats cost a font each), in PNG all.
func TestAwkwardFieldsDrawInEveryFormat(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	vector := map[string]bool{"constant": true, "nan and inf": true, "all nan": true, "one column": true}
	cases := map[string]struct {
		field  []float64
		ny, nx int
		o      Options
	}{
		"constant":       {[]float64{3, 3, 3, 3, 3, 3}, 2, 3, Options{}},
		"zero":           {make([]float64, 6), 2, 3, Options{Label: "u"}},
		"nan and inf":    {[]float64{1, nan, inf, -inf, 2, 5}, 2, 3, Options{Label: "u"}},
		"all nan":        {[]float64{nan, nan, nan, nan}, 2, 2, Options{Title: "all NaN"}},
		"all inf":        {[]float64{inf, inf}, 1, 2, Options{}},
		"one column":     {ramp(40, 1), 40, 1, Options{Label: "T (°C)"}},
		"one row":        {ramp(1, 40), 1, 40, Options{Width: 1, Height: 1}},
		"one cell":       {[]float64{7}, 1, 1, Options{Title: "a title far too long for so small a picture, which shrinks it to fit"}},
		"thin strip":     {ramp(4, 400), 4, 400, Options{Width: 100, Height: 1, Label: "u"}},
		"tiny range":     {[]float64{1e5, 1e5 + 1e-9}, 1, 2, Options{Label: "u"}},
		"huge values":    {[]float64{-1e300, 1e300}, 1, 2, Options{}},
		"fixed 3d plane": {ramp(12, 20), 12, 20, Options{Min: -1, Max: 1, Fixed: true, XLabel: "y", YLabel: "z", Width: 2, Height: 1.2}},
	}
	for name, c := range cases {
		for _, format := range Formats {
			if format != "png" && !vector[name] {
				continue
			}
			var buf bytes.Buffer
			require.NoError(t, Encode(&buf, format, c.field, c.ny, c.nx, c.o), "%s %s", name, format)
			b := buf.Bytes()
			switch format {
			case "png":
				img, err := png.Decode(bytes.NewReader(b))
				require.NoError(t, err, name)
				require.Greater(t, img.Bounds().Dx(), 100, name)
			case "svg":
				require.True(t, bytes.HasPrefix(b, []byte("<?xml")), name)
				require.True(t, bytes.HasSuffix(bytes.TrimSpace(b), []byte("</svg>")), name)
				require.Contains(t, string(b), `data:image/png;base64,`, name)
			case "pdf":
				require.True(t, bytes.HasPrefix(b, []byte("%PDF-")), name)
				require.True(t, bytes.HasSuffix(bytes.TrimSpace(b), []byte("%%EOF")), name)
			}
		}
	}
}

// The picture's size depends on the field's shape and axes and the colour
// range, never on the title: the frames of a movie line up.
func TestTitleNeverChangesTheSize(t *testing.T) {
	o := Options{Min: 0, Max: 1, Fixed: true, Label: "u", Title: "step 0"}
	a, err := Render(ramp(3, 5), 3, 5, o)
	require.NoError(t, err)
	o.Title = "step 12345678  t = 1.234e+05  z=1000 and then some more words that do not fit"
	b, err := Render(ramp(3, 5), 3, 5, o)
	require.NoError(t, err)
	require.Equal(t, a.Bounds(), b.Bounds())
	o.Title = "step 1"
	c, err := Render(ramp(3, 5), 3, 5, o)
	require.NoError(t, err)
	require.Equal(t, a.Bounds(), c.Bounds())
	// Below the title band the pictures are the same.
	l := mustPlan(t, ramp(3, 5), 3, 5, o)
	for y := l.titleBand; y < l.hgt; y++ {
		require.Equal(t, a.Pix[a.PixOffset(0, y):][:l.width], c.Pix[c.PixOffset(0, y):][:l.width], "row %d", y)
	}
}

func TestLargeFieldIsDownsampled(t *testing.T) {
	const ny, nx = 3000, 2000
	field := make([]float64, ny*nx)
	for k := range field {
		field[k] = float64(k % 977)
	}
	for _, maxPix := range []int{0, 500, 1000} {
		l := mustPlan(t, field, ny, nx, Options{MaxPixels: maxPix, Min: 0, Max: 1000, Fixed: true})
		limit := maxPix
		if limit == 0 {
			limit = DefaultMaxPixels
		}
		require.GreaterOrEqual(t, max(l.field.Dx(), l.field.Dy()), limit, "MaxPixels %d: at least it", maxPix)
		require.Less(t, max(l.field.Dx(), l.field.Dy()), 2*limit, "MaxPixels %d: averaged by the largest factor that keeps it", maxPix)
	}
	o := Options{MaxPixels: 500}
	img, err := Render(field, ny, nx, o)
	require.NoError(t, err)
	l := mustPlan(t, field, ny, nx, o)
	require.Equal(t, 6, l.factor)
	require.Equal(t, image.Pt(333, 500), l.field.Size()) // 2000/6 × 3000/6 pixels, the last column a third of a cell
	require.Equal(t, img.Bounds(), image.Rect(0, 0, l.width, l.hgt))
}

func TestDownsampleAveragesSkipsNaNAndKeepsInf(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	field := []float64{
		1, 3, 5, inf, -inf, 1,
		nan, 2, nan, 1, inf, 2,
		nan, nan, 8, -inf, 2, 2,
	}
	got := downsample(field, 3, 6, 2)
	require.Len(t, got, 6)
	require.Equal(t, 2.0, got[0]) // (1+3+2)/3, NaN skipped
	require.Equal(t, inf, got[1]) // +Inf wins over finite cells
	require.True(t, math.IsNaN(got[2]), "+Inf and -Inf: NaN")
	require.True(t, math.IsNaN(got[3]), "a box of NaN only stays NaN")
	require.Equal(t, -inf, got[4])
	require.Equal(t, 2.0, got[5])
}

func TestFixedRangeClamps(t *testing.T) {
	field := []float64{-5, 0.5, 0.75, 5}
	o := Options{Min: 0, Max: 1, Fixed: true}
	img, err := Render(field, 2, 2, o)
	require.NoError(t, err)
	l := mustPlan(t, field, 2, 2, o)
	require.Equal(t, []string{"0", "0.2", "0.4", "0.6", "0.8", "1.0"}, l.labels)
	m := mustMap(t, "")
	x, y := cellCentre(l, 0, 0)
	require.Equal(t, m(0), rgbaAt(img, x, y), "below Min clamps to the cold end")
	x, y = cellCentre(l, 1, 1)
	require.Equal(t, m(1), rgbaAt(img, x, y), "above Max clamps to the hot end")
	x, y = cellCentre(l, 0, 1)
	require.Equal(t, m(0.5), rgbaAt(img, x, y))

	// Without Fixed the given range widens to take in the data.
	l = mustPlan(t, field, 2, 2, Options{Min: 0, Max: 1})
	require.Equal(t, [2]float64{-5, 5}, [2]float64{l.lo, l.hi})
	l = mustPlan(t, []float64{0.5}, 1, 1, Options{Min: 0, Max: 1})
	require.Equal(t, [2]float64{0, 1}, [2]float64{l.lo, l.hi}, "data inside keep the given range")
}

func TestAutomaticRangeCorners(t *testing.T) {
	l := mustPlan(t, []float64{3, 3, 3, 3}, 2, 2, Options{})
	require.Equal(t, [2]float64{1.5, 4.5}, [2]float64{l.lo, l.hi}, "a flat field sits mid-map")
	l = mustPlan(t, []float64{math.NaN(), math.Inf(1)}, 1, 2, Options{})
	require.Equal(t, [2]float64{0, 1}, [2]float64{l.lo, l.hi})
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
	_, err = Render(make([]float64, 6), 2, 3, Options{Width: 1})
	require.ErrorContains(t, err, "plane size 1 × 0")
	_, err = Render(make([]float64, 6), 2, 3, Options{Width: -1, Height: -1})
	require.ErrorContains(t, err, "plane size -1 × -1")
	err = Write(filepath.Join(t.TempDir(), "u.jpg"), make([]float64, 6), 2, 3, Options{})
	require.ErrorContains(t, err, `u.jpg: unknown image format ".jpg" (want a file ending in .png, .svg or .pdf)`)
	err = Encode(&bytes.Buffer{}, "gif", make([]float64, 6), 2, 3, Options{})
	require.ErrorContains(t, err, `unknown image format "gif"`)
}

func TestFormatOf(t *testing.T) {
	for path, want := range map[string]string{"a.png": "png", "b/c.SVG": "svg", "d.Pdf": "pdf"} {
		got, err := FormatOf(path)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	for _, path := range []string{"a", "a.gif", "png", "a.png.bak"} {
		_, err := FormatOf(path)
		require.ErrorContains(t, err, path)
	}
}

func TestWriteIsAtomicAndReadable(t *testing.T) {
	dir := t.TempDir()
	for _, format := range Formats {
		path := filepath.Join(dir, "u."+format)
		require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
		require.NoError(t, Write(path, ramp(2, 2), 2, 2, Options{}))
		fi, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 3, "no temporary file is left behind")
	imagetest.DecodePNG(t, filepath.Join(dir, "u.png"))
	svg, err := os.ReadFile(filepath.Join(dir, "u.svg"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(svg), "<?xml"))

	require.Error(t, Write(filepath.Join(dir, "missing", "u.png"), ramp(2, 2), 2, 2, Options{}))
}

// TestGoldenTiny compares a small fixed-range picture, title, axes and
// labels included, with testdata/tiny.png pixel for pixel. After an
// intended change of the drawing, regenerate it with
// `go test -run Golden -update` and look.
func TestGoldenTiny(t *testing.T) {
	field := []float64{
		0, 1, 2, 3,
		4, math.NaN(), 6, 7,
		8, 9, 10, 12, // 12 clamps to Max
	}
	img, err := Render(field, 3, 4, Options{Min: 0, Max: 10, Fixed: true, Title: "tiny 3x4", Label: "u", Width: 2, Height: 1})
	require.NoError(t, err)
	golden := filepath.Join("testdata", "tiny.png")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		f, err := os.Create(golden)
		require.NoError(t, err)
		require.NoError(t, png.Encode(f, img))
		require.NoError(t, f.Close())
	}
	want := imagetest.DecodePNG(t, golden)
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
		o := Options{Cmap: cmap, Title: "step 1  t = 0.5", Label: "u"}
		path := filepath.Join(t.TempDir(), "p.png")
		require.NoError(t, Write(path, field, ny, nx, o))
		img := imagetest.DecodePNG(t, path)
		_, ok := img.(*image.Paletted)
		require.True(t, ok, "%s: written as %T", cmap, img)
		want, err := Render(field, ny, nx, o)
		require.NoError(t, err)
		require.Len(t, want.Palette, 256)
		require.Equal(t, want.Bounds(), img.Bounds())
		// The first pixel that differs, if any (one assertion: a call per
		// pixel cost 10 s under the race detector).
		for y := want.Rect.Min.Y; y < want.Rect.Max.Y; y++ {
			for x := want.Rect.Min.X; x < want.Rect.Max.X; x++ {
				r1, g1, b1, a1 := want.At(x, y).RGBA()
				r2, g2, b2, a2 := img.At(x, y).RGBA()
				if p, q := [4]uint32{r1, g1, b1, a1}, [4]uint32{r2, g2, b2, a2}; p != q {
					require.Equal(t, p, q, "%s pixel %d,%d", cmap, x, y)
				}
			}
		}
	}
}

// The PDF's and the SVG's field images are the PNG's pixels: the same
// cells, the same colours.
func TestVectorFormatsEmbedThePNGsField(t *testing.T) {
	field := ramp(6, 9)
	field[10] = math.NaN()
	o := Options{Label: "u", Width: 3, Height: 2}
	img, err := Render(field, 6, 9, o)
	require.NoError(t, err)
	l := mustPlan(t, field, 6, 9, o)
	want := img.SubImage(l.field).(*image.Paletted)

	var buf bytes.Buffer
	require.NoError(t, Encode(&buf, "svg", field, 6, 9, o))
	svg := buf.String()
	const tag = `data:image/png;base64,`
	i := strings.Index(svg, tag)
	require.Positive(t, i)
	enc := svg[i+len(tag):]
	enc = enc[:strings.IndexByte(enc, '"')]
	got, err := png.Decode(base64Reader(enc))
	require.NoError(t, err)
	require.Equal(t, want.Rect.Size(), got.Bounds().Size())
	for y := range want.Rect.Dy() {
		for x := range want.Rect.Dx() {
			require.Equal(t, rgbaAt(want, want.Rect.Min.X+x, want.Rect.Min.Y+y), rgbaAt(got, x, y), "pixel %d,%d", x, y)
		}
	}
}

func base64Reader(s string) *bytes.Reader {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return bytes.NewReader(b)
}

// BenchmarkWrite times a snapshot-sized picture (a field of 1024² random
// values, a pixel a cell) in each format; PNG is what a run's snapshots
// pay for in the background.
func BenchmarkWrite(b *testing.B) {
	const n = 1024
	field := make([]float64, n*n)
	for k := range field {
		field[k] = math.Mod(float64(k)*0.618034, 1)
	}
	for _, format := range Formats {
		b.Run("format="+format+"/n=1024", func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "u."+format)
			b.SetBytes(8 * n * n)
			for b.Loop() {
				if err := Write(path, field, n, n, Options{Title: "step 0  t = 0", Label: "u"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Regions outline where the region number changes: a block of region 1
// inside region 0 on a uniform field is framed by black pixels — two a
// row across its sides, a whole run along its top and bottom — and
// nothing else in the field is black; without regions nothing is. The
// same holds for a field the picture downsamples (the outline follows
// the blocks).
func TestRegionsAreOutlined(t *testing.T) {
	for _, c := range []struct {
		ny, nx, lo, hi, maxPixels int
	}{
		{40, 60, 10, 30, 0},       // enlarged: each cell a block of pixels
		{400, 600, 100, 300, 200}, // downsampled 3×
	} {
		field := make([]float64, c.ny*c.nx)
		regions := make([]int32, c.ny*c.nx)
		for j := range c.ny {
			for i := range c.nx {
				field[j*c.nx+i] = 0.5
				if j >= c.lo && j < c.hi && i >= c.lo && i < c.hi {
					regions[j*c.nx+i] = 1
				}
			}
		}
		field[0] = 0 // a range to colour by
		blacks := func(o Options) (rows map[int]int, total int) {
			img, err := Render(field, c.ny, c.nx, o)
			require.NoError(t, err)
			l := mustPlan(t, field, c.ny, c.nx, o)
			rows = map[int]int{}
			for y := l.field.Min.Y; y < l.field.Max.Y; y++ {
				for x := l.field.Min.X; x < l.field.Max.X; x++ {
					if img.ColorIndexAt(x, y) == black {
						rows[y]++
						total++
					}
				}
			}
			return rows, total
		}
		_, none := blacks(Options{MaxPixels: c.maxPixels})
		require.Zero(t, none, "no regions, no outline")
		o := Options{MaxPixels: c.maxPixels, Regions: regions}
		rows, total := blacks(o)
		l := mustPlan(t, field, c.ny, c.nx, o)
		side := float64(c.hi-c.lo) * float64(l.field.Dx()) / float64(c.nx) // the block's width in pixels
		require.InDelta(t, 4*side, float64(total), 0.05*4*side+8, "%d×%d: the frame's pixels", c.ny, c.nx)
		var two, long int
		for _, n := range rows {
			switch {
			case n == 2:
				two++
			case float64(n) > 0.9*side:
				long++
			default:
				t.Fatalf("%d×%d: a row with %d outline pixels", c.ny, c.nx, n)
			}
		}
		require.Equal(t, 2, long, "top and bottom edges")
		require.InDelta(t, side, float64(two), 0.05*side+2, "the sides")
	}
	_, err := Render(make([]float64, 6), 2, 3, Options{Regions: make([]int32, 5)})
	require.ErrorContains(t, err, "5 region numbers for a field of shape [2, 3]")
}

// Pictures fit for a paper: a 64², a 512² and a 2000 × 30 field (a 2 m by
// 6 cm strip of square cells) drawn at the default size are at least 1024
// pixels on their long side, each cell a block of whole pixels of one
// colour (read back from the PNG: a checkerboard's blocks are uniform and
// their neighbours differ), and no two tick labels of an axis overlap.
func TestPicturesForAPaper(t *testing.T) {
	for _, c := range []struct {
		ny, nx int
		w, h   float64
	}{{64, 64, 1, 1}, {512, 512, 1, 1}, {30, 2000, 2, 0.06}} {
		field := make([]float64, c.ny*c.nx)
		for j := range c.ny {
			for i := range c.nx {
				field[j*c.nx+i] = float64((i + j) % 2)
			}
		}
		o := Options{Width: c.w, Height: c.h}
		path := filepath.Join(t.TempDir(), "f.png")
		require.NoError(t, Write(path, field, c.ny, c.nx, o))
		img := imagetest.DecodePNG(t, path)
		l := mustPlan(t, field, c.ny, c.nx, o)
		fw, fh := l.field.Dx(), l.field.Dy()
		require.GreaterOrEqual(t, max(fw, fh), DefaultMaxPixels, "%d×%d: the long side", c.ny, c.nx)
		require.Zero(t, fw%c.nx, "%d×%d: whole pixels a cell across (%d px)", c.ny, c.nx, fw)
		require.Zero(t, fh%c.ny, "%d×%d: whole pixels a cell up (%d px)", c.ny, c.nx, fh)
		sx, sy := fw/c.nx, fh/c.ny
		require.InDelta(t, (c.h/float64(c.ny))/(c.w/float64(c.nx)), float64(sy)/float64(sx), 1e-12, "%d×%d: blocks of the cells' aspect (%d×%d px)", c.ny, c.nx, fw, fh)
		for _, cell := range [][2]int{{0, 0}, {c.ny / 2, c.nx / 3}, {c.ny - 1, c.nx - 1}} {
			j, i := cell[0], cell[1]
			x0, y0 := l.field.Min.X+i*sx, l.field.Max.Y-(j+1)*sy
			want := rgbaAt(img, x0, y0)
			for y := y0; y < y0+sy; y++ {
				for x := x0; x < x0+sx; x++ {
					require.Equal(t, want, rgbaAt(img, x, y), "%d×%d: cell (%d, %d) one colour", c.ny, c.nx, j, i)
				}
			}
			if i+1 < c.nx {
				require.NotEqual(t, want, rgbaAt(img, x0+sx, y0), "its neighbour another")
			}
		}
		ts := textStyle(l.fontSize, 0, 0)
		for _, ax := range []struct {
			ticks  []plot.Tick
			length float64
			pixels int
			size   func(string) float64
		}{
			{l.xTicks, c.w, fw, func(s string) float64 { return float64(ts.Width(s)) }},
			{l.yTicks, c.h, fh, func(s string) float64 { return float64(ts.Height(s)) }},
		} {
			end, n := math.Inf(-1), 0
			for _, tk := range ax.ticks {
				if tk.Label == "" {
					continue
				}
				pos, half := tk.Value/ax.length*float64(ax.pixels), ax.size(tk.Label)/2
				require.Greater(t, pos-half, end, "%d×%d: tick label %q overlaps the one before", c.ny, c.nx, tk.Label)
				end, n = pos+half, n+1
				require.NotContains(t, tk.Label, "e+", "plain or engineering notation")
			}
			require.GreaterOrEqual(t, n, 1)
		}
	}
}

// apart blanks the labels that would run into the one labelled before:
// 0 and 0.05 on a 20-pixel axis of 24-pixel labels keep 0 only, and on a
// 60-pixel one keep both.
func TestApartKeepsLabelsClear(t *testing.T) {
	size := func(string) float64 { return 24 }
	ticks := func() []plot.Tick { return []plot.Tick{{Value: 0, Label: "0"}, {Value: 0.05, Label: "0.05"}} }
	require.Equal(t, []string{"0", ""}, labelsOf(apart(ticks(), 0.06, 20, size, 4)))
	require.Equal(t, []string{"0", "0.05"}, labelsOf(apart(ticks(), 0.06, 60, size, 4)))
	// A run of ticks keeps every other one where each would touch its neighbour.
	var many []plot.Tick
	for i := range 9 {
		many = append(many, plot.Tick{Value: float64(i), Label: strconv.Itoa(i)})
	}
	require.Equal(t, []string{"0", "", "2", "", "4", "", "6", "", "8"}, labelsOf(apart(many, 8, 160, size, 4)))
}

func labelsOf(ticks []plot.Tick) []string {
	s := make([]string, len(ticks))
	for i, t := range ticks {
		s[i] = t.Label
	}
	return s
}

// A field uniform but for its last bits is drawn flat, in the map's middle
// colour, not as its rounding noise over the whole map.
func TestRoundingNoiseIsFlat(t *testing.T) {
	field := make([]float64, 16*16)
	for i := range field {
		field[i] = 293 + float64(i%3)*1e-13
	}
	lo, hi, err := colourRange(field, Options{})
	require.NoError(t, err)
	require.Less(t, lo, 293.0-1)
	require.Greater(t, hi, 293.0+1)
	require.False(t, Flat(0, 1e-12), "a field near 0 keeps its own range")
	require.True(t, Flat(1, 1+1e-13))
}
