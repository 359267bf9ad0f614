// Package heatmap draws a 2D field as a PNG that opens in any image viewer:
// the field in a perceptually uniform colour map, a colour bar with its scale,
// and a title. It is for looking at snapshots at once; for analysis write VTK
// (heat/io/vtk) or read a checkpoint.
//
// Orientation follows the physics convention, not the image one: row 0 of the
// field (y = 0, or z = 0 for a y= or x= slice) is the bottom row of the
// picture, and column 0 (x = 0) is its left edge. Cells are drawn square.
package heatmap

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"heat/internal/atomicfile"
)

// Options say how Render draws a field. The zero value is usable: viridis,
// a colour range fitted to the data, fields up to 1024 cells a side drawn
// cell for cell, no title.
type Options struct {
	// Cmap names the colour map: "viridis" (default), "inferno", "coolwarm".
	Cmap string
	// Min and Max are the colour range. If Min >= Max (e.g. both 0) the range
	// is the data's own (finite values only). Otherwise the range is
	// [Min, Max] widened to take in the data, unless Fixed.
	Min, Max float64
	// Fixed keeps [Min, Max] as given even where the data exceed it; values
	// outside clamp to the ends of the map. Use it to compare the frames of a
	// run. It has no effect unless Min < Max.
	Fixed bool
	// MaxPixels bounds the longest side of the field part of the image.
	// Larger fields are downsampled by an integer factor (a box average that
	// skips NaN); 0 means 1024.
	MaxPixels int
	// Title is written at the top of the image, e.g. "step 200  t = 0.0123".
	// The font covers printable ASCII; other characters show as a box.
	Title string
}

// Defaults of Options and the fixed parts of the picture, in pixels.
const (
	DefaultMaxPixels = 1024
	minSide          = 256 // small fields are enlarged by an integer factor to about this
	pad              = 10  // margin around everything
	titleGap         = 8   // between the title line and the field
	barGap           = 16  // between the field and the colour bar
	barWidth         = 18
	minBarHeight     = 120 // the bar keeps room for its labels next to a flat field
	tickLength       = 4
	labelGap         = 3
)

// face is the font of the title and the tick labels: 7×13 pixel cells.
var face = basicfont.Face7x13

// layout places the parts of one picture.
type layout struct {
	factor     int // data cells per drawn cell along each axis (downsampling)
	cy, cx     int // drawn cells: ceil(ny/factor) × ceil(nx/factor)
	scale      int // pixels per drawn cell along each axis (upscaling)
	field      image.Rectangle
	bar        image.Rectangle
	labelX     int       // left edge of the tick labels
	ticks      []float64 // values labelled on the bar, from lo (bottom) to hi (top)
	labels     []string  // their text
	titleBase  int       // baseline of the title; 0 when there is none
	lo, hi     float64   // colour range: lo maps to t = 0, hi to t = 1
	width, hgt int       // the whole image
}

// Render draws a 2D field of ny rows and nx columns (C order: index j*nx+i is
// row j, column i) as described in the package comment and in Options.
// NaN cells are mid grey; ±Inf clamp to the ends of the map. The picture is
// paletted: the colour map sampled at lutSize colours, white, black and
// NaN's grey, so it is drawn a byte a pixel and PNG stores it compactly.
func Render(field []float64, ny, nx int, o Options) (*image.Paletted, error) {
	if ny < 1 || nx < 1 {
		return nil, fmt.Errorf("heatmap: field shape [%d, %d] must be positive", ny, nx)
	}
	if len(field) != ny*nx {
		return nil, fmt.Errorf("heatmap: field has %d values, shape [%d, %d] needs %d", len(field), ny, nx, ny*nx)
	}
	cmap, err := Colormap(o.Cmap)
	if err != nil {
		return nil, err
	}
	l, err := plan(field, ny, nx, o)
	if err != nil {
		return nil, err
	}
	cells := downsample(field, ny, nx, l.factor)

	img := image.NewPaletted(image.Rect(0, 0, l.width, l.hgt), palette(cmap))
	fill(img, img.Rect, white)
	index := colourIndex(l.lo, l.hi)
	for J := range l.cy {
		// Drawn row J (data rows J*factor...) goes up from the bottom edge.
		y0 := l.field.Max.Y - (J+1)*l.scale
		if l.scale == 1 {
			row := img.Pix[img.PixOffset(l.field.Min.X, y0):img.PixOffset(l.field.Min.X+l.cx, y0)]
			for I, v := range cells[J*l.cx : (J+1)*l.cx] {
				row[I] = index(v)
			}
			continue
		}
		for I := range l.cx {
			x0 := l.field.Min.X + I*l.scale
			fill(img, image.Rect(x0, y0, x0+l.scale, y0+l.scale), index(cells[J*l.cx+I]))
		}
	}
	drawBar(img, l, index)
	if l.titleBase > 0 {
		text(img, o.Title, pad, l.titleBase)
	}
	return img, nil
}

// Write renders the field and stores it as a PNG at path. It writes a
// temporary file in the same directory and renames it, so a viewer (or a
// crash) never sees half an image.
func Write(path string, field []float64, ny, nx int, o Options) error {
	img, err := Render(field, ny, nx, o)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, func(w io.Writer) error {
		return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, img)
	}); err != nil {
		return fmt.Errorf("heatmap: %w", err)
	}
	return nil
}

// plan sizes and places the parts of the picture of field.
func plan(field []float64, ny, nx int, o Options) (layout, error) {
	maxPix := o.MaxPixels
	switch {
	case maxPix < 0:
		return layout{}, fmt.Errorf("heatmap: MaxPixels must be >= 0 (got %d)", maxPix)
	case maxPix == 0:
		maxPix = DefaultMaxPixels
	}
	var l layout
	var err error
	if l.lo, l.hi, err = colourRange(field, o); err != nil {
		return layout{}, err
	}

	l.factor = Factor(ny, nx, maxPix)
	l.cy, l.cx = ceilDiv(ny, l.factor), ceilDiv(nx, l.factor)
	l.scale = 1
	if long := max(l.cy, l.cx); long < minSide {
		l.scale = max(1, min(ceilDiv(minSide, long), maxPix/long))
	}

	top := pad
	if o.Title != "" {
		l.titleBase = pad + face.Ascent
		top += face.Height + titleGap
	}
	fw, fh := l.cx*l.scale, l.cy*l.scale
	l.field = image.Rect(pad, top, pad+fw, top+fh)
	bh := max(fh, minBarHeight)
	l.bar = image.Rect(l.field.Max.X+barGap, top, l.field.Max.X+barGap+barWidth, top+bh)
	l.labelX = l.bar.Max.X + tickLength + labelGap

	nticks := 3
	if bh >= 200 {
		nticks = 5
	}
	l.ticks = make([]float64, nticks)
	for k := range l.ticks {
		l.ticks[k] = l.lo + (l.hi-l.lo)*float64(k)/float64(nticks-1)
	}
	l.ticks[nticks-1] = l.hi // exact, whatever the rounding above
	l.labels = tickLabels(l.ticks)
	labelW := 0
	for _, s := range l.labels {
		labelW = max(labelW, textWidth(s))
	}
	l.width = max(l.labelX+labelW+pad, pad+textWidth(o.Title)+pad)
	// The lowest label is centred on the bar's bottom edge; keep its lower
	// half inside the image.
	l.hgt = top + max(fh, bh) + max(pad, face.Height/2+2)
	return l, nil
}

// colourRange resolves the colour range of Options for field.
func colourRange(field []float64, o Options) (lo, hi float64, err error) {
	given := o.Min < o.Max
	if given && (math.IsInf(o.Min, 0) || math.IsInf(o.Max, 0)) {
		return 0, 0, fmt.Errorf("heatmap: colour range [%g, %g] must be finite", o.Min, o.Max)
	}
	if given && o.Fixed {
		return o.Min, o.Max, nil
	}
	dlo, dhi := math.Inf(1), math.Inf(-1)
	for _, v := range field {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			dlo, dhi = min(dlo, v), max(dhi, v)
		}
	}
	switch {
	case given:
		return min(o.Min, dlo), max(o.Max, dhi), nil // no finite data leaves [Min, Max]
	case dlo > dhi: // no finite data: any range will do
		return 0, 1, nil
	case dlo == dhi: // a flat field: centre it, so it shows the map's middle
		d := 0.5 * max(math.Abs(dlo), 1)
		return dlo - d, dlo + d, nil
	}
	return dlo, dhi, nil
}

// downsample averages factor×factor boxes of the field (fewer at the far
// edges), skipping NaN; a box of NaN only stays NaN. factor 1 returns field.
func downsample(field []float64, ny, nx, factor int) []float64 {
	if factor == 1 {
		return field
	}
	cy, cx := ceilDiv(ny, factor), ceilDiv(nx, factor)
	sum := make([]float64, cy*cx)
	cnt := make([]int32, cy*cx)
	for j := range ny {
		row := field[j*nx : (j+1)*nx]
		out := (j / factor) * cx
		for i, v := range row {
			if !math.IsNaN(v) {
				sum[out+i/factor] += v
				cnt[out+i/factor]++
			}
		}
	}
	for k := range sum {
		if cnt[k] == 0 {
			sum[k] = math.NaN()
		} else {
			sum[k] /= float64(cnt[k])
		}
	}
	return sum
}

// drawBar paints the colour bar, top t = 1 to bottom t = 0, with a tick and
// a label at each of l.ticks.
func drawBar(img *image.Paletted, l layout, index func(float64) uint8) {
	h := l.bar.Dy()
	for y := l.bar.Min.Y; y < l.bar.Max.Y; y++ {
		t := 1.0
		if h > 1 {
			t = 1 - float64(y-l.bar.Min.Y)/float64(h-1)
		}
		fill(img, image.Rect(l.bar.Min.X, y, l.bar.Max.X, y+1), index(l.lo+t*(l.hi-l.lo)))
	}
	for k, v := range l.ticks {
		y := l.bar.Min.Y + (h - 1)
		if l.hi > l.lo {
			y = l.bar.Min.Y + int(math.Round((1-(v-l.lo)/(l.hi-l.lo))*float64(h-1)))
		}
		fill(img, image.Rect(l.bar.Max.X, y, l.bar.Max.X+tickLength, y+1), black)
		// Centre the digits (about 9 px above the baseline) on the tick.
		text(img, l.labels[k], l.labelX, y+4)
	}
}

// tickLabels formats tick values with %.3g, adding digits only where that
// would print two ticks alike (a narrow range far from zero).
func tickLabels(v []float64) []string {
	s := make([]string, len(v))
	for prec := 3; prec <= 17; prec++ {
		distinct := true
		for k := range v {
			s[k] = fmt.Sprintf("%.*g", prec, v[k])
			if k > 0 && s[k] == s[k-1] {
				distinct = false
			}
		}
		if distinct {
			break
		}
	}
	return s
}

// fill paints r in palette entry c.
func fill(img *image.Paletted, r image.Rectangle, c uint8) {
	r = r.Intersect(img.Rect)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := img.Pix[img.PixOffset(r.Min.X, y):img.PixOffset(r.Max.X, y)]
		for i := range row {
			row[i] = c
		}
	}
}

// text writes s in black with its baseline at y, starting at x.
func text(img *image.Paletted, s string, x, y int) {
	d := font.Drawer{Dst: img, Src: image.Black, Face: face, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// textWidth is the width of s in pixels.
func textWidth(s string) int { return font.MeasureString(face, s).Ceil() }

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// lutSize is the number of colours a picture's map is sampled at, as
// colour maps are usually tabulated: a table look-up instead of an
// interpolation per pixel, and with white, black and the NaN grey the
// picture fits a 256-colour palette, which PNG encodes several times faster
// than RGBA (one byte a pixel, no filter search).
const lutSize = 252

// The palette entries after the colour table.
const (
	white = lutSize + iota
	black
	nanGrey
)

// palette is every colour Render paints with cmap: the table, white, black
// and NaN's colour, at the indices colourIndex, white, black and nanGrey use.
func palette(cmap func(float64) color.RGBA) color.Palette {
	p := make(color.Palette, 0, lutSize+3)
	for i := range lutSize {
		p = append(p, cmap(float64(i)/(lutSize-1)))
	}
	return append(p, color.RGBA{255, 255, 255, 255}, color.RGBA{0, 0, 0, 255}, cmap(math.NaN()))
}

// colourIndex maps a value to its palette entry for the range [lo, hi]: the
// ends of the range get exactly the map's ends, NaN the map's NaN colour.
func colourIndex(lo, hi float64) func(float64) uint8 {
	span := hi - lo
	return func(v float64) uint8 {
		t := (v - lo) / span
		switch {
		case t != t:
			return nanGrey
		case t <= 0:
			return 0
		case t >= 1:
			return lutSize - 1
		}
		return uint8(t*(lutSize-1) + 0.5)
	}
}
