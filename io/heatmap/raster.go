package heatmap

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// lutSize is the number of colours a picture's map is sampled at, as
// colour maps are usually tabulated: a table look-up instead of an
// interpolation per pixel, and with the greys the picture fits a 256-colour
// palette, which PNG encodes several times faster than RGBA (one byte a
// pixel, no filter search) and GIF needs.
const lutSize = 239

// The palette entries after the colour table: greys from black to white in
// 16 steps (antialiased text and lines), then NaN's colour.
const (
	greys   = 16
	black   = lutSize
	white   = lutSize + greys - 1
	nanGrey = lutSize + greys
)

// palette is every colour a picture of cmap uses: the table, the greys and
// NaN's colour, at the indices colourIndex, black, white and nanGrey use.
func palette(cmap func(float64) color.RGBA) color.Palette {
	p := make(color.Palette, 0, lutSize+greys+1)
	for i := range lutSize {
		p = append(p, cmap(float64(i)/(lutSize-1)))
	}
	for g := range greys {
		v := uint8(g * 255 / (greys - 1))
		p = append(p, color.RGBA{v, v, v, 255})
	}
	return append(p, nanColor)
}

// greyIndex maps an 8-bit grey level to the nearest palette grey.
var greyIndex = func() (t [256]uint8) {
	for v := range t {
		t[v] = uint8(black + (v*(greys-1)+127)/255)
	}
	return t
}()

// colourIndex maps a value to its palette entry for the range [lo, hi]: the
// ends of the range get exactly the map's ends (and ±Inf clamp to them),
// NaN the map's NaN colour.
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

// drawnRow is the drawn row of cells pixel row Y of a field fh pixels high
// shows: the one its centre falls in, through the plane's physical
// coordinates (row 0 at the bottom).
func (l *layout) drawnRow(Y, fh int) int {
	j := int((float64(fh-Y) - 0.5) * float64(l.rows) / float64(fh))
	return min(l.cy-1, j/l.factor)
}

// paintField fills r of dst with the drawn cells, each pixel the cell its
// centre falls in, found through the plane's physical coordinates (so
// the narrower last cells of an uneven average come out narrower).
func (f *figure) paintField(dst *image.Paletted, r image.Rectangle) {
	l := &f.l
	fw, fh := r.Dx(), r.Dy()
	index := colourIndex(l.lo, l.hi)
	col := make([]int, fw)
	identity := fw == l.cx
	for X := range col {
		i := int((float64(X) + 0.5) * float64(l.cols) / float64(fw))
		col[X] = min(l.cx-1, i/l.factor)
		identity = identity && col[X] == X
	}
	prev := -1
	for Y := range fh {
		J := l.drawnRow(Y, fh)
		row := dst.Pix[dst.PixOffset(r.Min.X, r.Min.Y+Y):][:fw]
		switch {
		case J == prev: // an enlarged cell: the row above again
			copy(row, dst.Pix[dst.PixOffset(r.Min.X, r.Min.Y+Y-1):][:fw])
		case identity: // a pixel a cell, the common case of a big field
			for X, v := range f.cells[J*l.cx:][:fw] {
				row[X] = index(v)
			}
		default:
			src := f.cells[J*l.cx:][:l.cx]
			for X, i := range col {
				row[X] = index(src[i])
			}
		}
		prev = J
	}
	f.outline(dst, r, col)
}

// outline draws black over the pixels of r where the region number
// changes to the pixel's right or below: a line one pixel wide along each
// region's edge. col is each pixel column's drawn cell.
func (f *figure) outline(dst *image.Paletted, r image.Rectangle, col []int) {
	if f.regions == nil {
		return
	}
	l := &f.l
	fw, fh := r.Dx(), r.Dy()
	cellRow := func(Y int) []int32 { return f.regions[l.drawnRow(Y, fh)*l.cx:][:l.cx] }
	for Y := range fh {
		here := cellRow(Y)
		var below []int32
		if Y+1 < fh {
			below = cellRow(Y + 1)
		}
		row := dst.Pix[dst.PixOffset(r.Min.X, r.Min.Y+Y):][:fw]
		for X, i := range col {
			v := here[i]
			if (X+1 < fw && here[col[X+1]] != v) || (below != nil && below[i] != v) {
				row[X] = black
			}
		}
	}
}

// paintBar fills r of dst with the colour bar: t = 1 in its top row, t = 0
// in its bottom one.
func (f *figure) paintBar(dst *image.Paletted, r image.Rectangle) {
	l := &f.l
	index := colourIndex(l.lo, l.hi)
	h := r.Dy()
	for y := range h {
		t := 1.0
		if h > 1 {
			t = 1 - float64(y)/float64(h-1)
		}
		c := index(l.lo + t*(l.hi-l.lo))
		row := dst.Pix[dst.PixOffset(r.Min.X, r.Min.Y+y):][:r.Dx()]
		for i := range row {
			row[i] = c
		}
	}
}

// raster draws the picture as a paletted image: the axes from the
// geometry's layer (drawn once), the title and the colour bar's text on
// small canvases of their own, each reduced to the palette's greys, then
// the field and the bar pixel for pixel.
func (f *figure) raster() (img *image.Paletted, err error) {
	l := &f.l
	cmap, err := Colormap(f.cmap)
	if err != nil {
		return nil, err
	}
	layer, err := l.axesLayer()
	if err != nil {
		return nil, err
	}
	defer recoverDrawing(&err)
	img = image.NewPaletted(image.Rect(0, 0, l.width, l.hgt), palette(cmap))
	lw := layer.Rect.Dx()
	for y := range l.hgt {
		row := img.Pix[img.PixOffset(0, y):][:l.width]
		copy(row, layer.Pix[layer.PixOffset(0, y):][:lw])
		for x := lw; x < l.width; x++ {
			row[x] = white
		}
	}
	// The bar's text: right of its frame, below the title band.
	strip(img, image.Rect(lw, l.titleBand, l.width, l.hgt), l.hgt, func(c vg.Canvas) { l.drawBarText(c, f.o.Label) })
	if f.o.Title != "" {
		strip(img, image.Rect(0, 0, l.width, l.titleBand), l.hgt, func(c vg.Canvas) { l.drawTitle(c, f.o.Title) })
	}
	f.paintField(img, l.field)
	f.paintBar(img, l.bar)
	return img, nil
}

// axesLayer is the geometry's axes and frames as palette greys, as wide as
// the bar's frame, drawn on first use.
func (g *geometry) axesLayer() (*image.Paletted, error) {
	g.layerOnce.Do(func() {
		defer recoverDrawing(&g.layerErr)
		w := g.bar.Max.X + g.line
		img := image.NewPaletted(image.Rect(0, 0, w, g.hgt), nil)
		strip(img, img.Rect, g.hgt, g.drawAxes)
		g.layer = img
	})
	return g.layer, g.layerErr
}

// strip draws on a white canvas the size of r (in dst's pixels, of a
// picture hgt pixels high) what draw draws in the picture's coordinates,
// and stores it in r of dst as palette greys: black on white antialiases
// to greys, so R alone tells the level.
func strip(dst *image.Paletted, r image.Rectangle, hgt int, draw func(vg.Canvas)) {
	if r.Empty() {
		return
	}
	c := vgimg.NewWith(vgimg.UseWH(vg.Length(r.Dx()), vg.Length(r.Dy())), vgimg.UseDPI(72)) // white
	// The strip's lower left corner is (r.Min.X, hgt-r.Max.Y) of the picture.
	c.Translate(vg.Point{X: -vg.Length(r.Min.X), Y: -vg.Length(hgt - r.Max.Y)})
	draw(c)
	src := c.Image().(*image.RGBA)
	for y := range r.Dy() {
		in := src.Pix[src.PixOffset(0, y):][:4*r.Dx()]
		out := dst.Pix[dst.PixOffset(r.Min.X, r.Min.Y+y):][:r.Dx()]
		for x := range out {
			out[x] = greyIndex[in[4*x]]
		}
	}
}

// encode writes the picture to w in format: PNG (paletted, fast), SVG or
// PDF (vector axes and text, fonts embedded, the field and the bar as
// images of the PNG's pixels).
func (f *figure) encode(w io.Writer, format string) (err error) {
	if format == "png" {
		img, err := f.raster()
		if err != nil {
			return err
		}
		return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, img)
	}
	l := &f.l
	cmap, err := Colormap(f.cmap)
	if err != nil {
		return err
	}
	defer recoverDrawing(&err)
	pal := palette(cmap)
	field := image.NewPaletted(image.Rect(0, 0, l.field.Dx(), l.field.Dy()), pal)
	f.paintField(field, field.Rect)
	bar := image.NewPaletted(image.Rect(0, 0, l.bar.Dx(), l.bar.Dy()), pal)
	f.paintBar(bar, bar.Rect)
	W, H := vg.Length(l.width), vg.Length(l.hgt)
	var c vg.CanvasWriterTo
	switch format {
	case "svg":
		c = vgsvg.NewWith(vgsvg.UseWH(W, H), vgsvg.EmbedFonts(true))
	case "pdf":
		c = vgpdf.New(W, H)
	default:
		return fmt.Errorf("heatmap: unknown image format %q (known: png, svg, pdf)", format)
	}
	if format == "pdf" { // vgpdf draws images upside down
		flip(field)
		flip(bar)
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	dc.DrawImage(l.vgRect(l.field), field)
	dc.DrawImage(l.vgRect(l.bar), bar)
	l.drawAxes(c)
	l.drawBarText(c, f.o.Label)
	l.drawTitle(c, f.o.Title)
	if format != "svg" {
		_, err = c.WriteTo(w)
		return err
	}
	// vgsvg labels its PNG images as JPEG, which strict readers (librsvg)
	// refuse, and lets viewers blur the cells when zoomed in.
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return err
	}
	out := bytes.ReplaceAll(buf.Bytes(), []byte(`<image `), []byte(`<image style="image-rendering:pixelated" `))
	out = bytes.ReplaceAll(out, []byte(`"data:image/jpg;base64,`), []byte(`"data:image/png;base64,`))
	_, err = w.Write(out)
	return err
}

// flip turns img upside down.
func flip(img *image.Paletted) {
	h := img.Rect.Dy()
	for y := range h / 2 {
		a := img.Pix[img.PixOffset(0, y):][:img.Rect.Dx()]
		b := img.Pix[img.PixOffset(0, h-1-y):][:img.Rect.Dx()]
		for i := range a {
			a[i], b[i] = b[i], a[i]
		}
	}
}

// recoverDrawing turns a panic of the drawing backends (they panic on what
// they cannot draw, a glyph a PDF font lacks, say) into an error.
func recoverDrawing(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("heatmap: drawing failed: %v", r)
	}
}
