package heatmap

import (
	"image"
	"image/color"
	"math"
	"sync"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// layout places the parts of one picture. Pixel rectangles have y down
// (image coordinates); the drawing works in vg coordinates, y up, one point
// a pixel.
type layout struct {
	*geometry
	cy, cx     int // drawn cells
	rows, cols int // cells of the plane before any averaging
	factor     int // plane cells per drawn cell along each axis
	lo, hi     float64
	width      int       // the whole image; its height is geometry.hgt
	ticks      []float64 // colour bar, from lo (bottom) to hi (top)
	labels     []string
	nameX      float64 // left edge of the colour bar's rotated Label
}

// geometry is the part of a layout that depends on the field's drawn size
// and its axes only, not on its values or title: the same for every
// snapshot of a run, so it is planned (and its axes drawn, see axesLayer)
// once and kept.
type geometry struct {
	key        geometryKey
	hgt        int
	field, bar image.Rectangle // the field's pixels and the colour bar's
	fontSize   float64         // of tick labels; the rest scale with it
	line       int             // width of the frames and tick lines
	pad        float64         // margin around everything
	titleSize  float64
	titleBand  int          // pixel rows [0, titleBand) hold the title and nothing else
	labelX     float64      // left edge of the colour bar's tick labels
	plotRect   vg.Rectangle // the plot's canvas: its data area is exactly field
	xTicks     []plot.Tick
	yTicks     []plot.Tick

	layerOnce sync.Once
	layer     *image.Paletted // the axes drawn once, bar.Max.X+line wide
	layerErr  error
}

// geometryKey is what a geometry depends on.
type geometryKey struct {
	fw, fh         int     // the field's pixels
	width, height  float64 // its physical size
	xlabel, ylabel string
	title          bool
}

// The proportions of a picture: the tick label font size in pixels follows
// the field's size, the rest are multiples of it.
const (
	fontPerSide = 1.0 / 45 // font size per pixel of the field's longest side
	minFont     = 11.0
	maxFont     = 24.0
	titleScale  = 1.15 // title font size
	padScale    = 0.6
	barGap      = 1.0
	barWidth    = 1.1
	tickScale   = 0.35 // tick mark length
	minBar      = 8.0  // the bar keeps room for its labels beside a thin field
)

// sans is the font of every text: Liberation Sans, which gonum/plot embeds.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// textStyle is black sans text of size points.
func textStyle(size float64, xa text.XAlignment, ya text.YAlignment) text.Style {
	return text.Style{Color: color.Black, Font: font.From(sans, vg.Length(size)), XAlign: xa, YAlign: ya, Handler: plot.DefaultTextHandler}
}

// plan sizes and places the parts of the picture of cy×cx drawn cells that
// average factor×factor cells of a rows×cols plane, coloured over [lo, hi].
func plan(cy, cx, rows, cols, factor int, lo, hi float64, o Options) layout {
	l := layout{cy: cy, cx: cx, rows: rows, cols: cols, factor: factor, lo: lo, hi: hi}
	W, H := o.Width, o.Height
	if W == 0 {
		W, H = float64(cols), float64(rows)
	}
	// The densest axis gets a pixel per drawn cell; the other follows the
	// plane's aspect. A field drawn cell for cell grows by a whole factor
	// until its long side reaches MaxPixels (output.image_size): each cell
	// a block of whole pixels, no blur, whatever the grid; a downsampled
	// one is at least MaxPixels already (Factor). Only a plane whose cells
	// are so much longer along one axis that its long side passes twice
	// MaxPixels shrinks, to MaxPixels.
	ppu := max(float64(cols)/float64(factor)/W, float64(rows)/float64(factor)/H)
	w0, h0 := ppu*W, ppu*H
	long := max(w0, h0)
	maxPix := float64(o.MaxPixels)
	s := 1.0
	switch {
	case long > 2*maxPix:
		s = maxPix / long
	case factor == 1 && long < maxPix:
		s = math.Ceil(maxPix / long)
	case long < minSide:
		s = math.Ceil(minSide / long)
	}
	key := geometryKey{fw: max(1, int(math.Round(w0*s))), fh: max(1, int(math.Round(h0*s))), width: W, height: H,
		xlabel: o.XLabel, ylabel: o.YLabel, title: o.Title != ""}
	if key.xlabel == "" {
		key.xlabel = "x"
	}
	if key.ylabel == "" {
		key.ylabel = "y"
	}
	g := geometryOf(key)
	l.geometry = g

	n := max(3, min(8, int(float64(g.bar.Dy())/(2.2*g.fontSize))))
	var step float64
	l.ticks, step = niceTicks(lo, hi, n)
	l.labels = tickLabels(l.ticks, step)
	ts := textStyle(g.fontSize, 0, 0)
	right := g.labelX
	for _, s := range l.labels {
		right = max(right, g.labelX+float64(ts.Width(s)))
	}
	if o.Label != "" {
		l.nameX = right + 0.6*g.fontSize
		right = l.nameX + float64(ts.Height(o.Label))
	}
	l.width = int(math.Ceil(right + g.pad))
	return l
}

// geometries keeps the geometries planned so far (a run's snapshots share
// one); it forgets them all when it has many.
var geometries struct {
	sync.Mutex
	m map[geometryKey]*geometry
}

// geometryOf is the geometry for key, planned on first use.
func geometryOf(key geometryKey) *geometry {
	geometries.Lock()
	defer geometries.Unlock()
	if g := geometries.m[key]; g != nil {
		return g
	}
	if len(geometries.m) >= 16 || geometries.m == nil {
		geometries.m = make(map[geometryKey]*geometry)
	}
	g := newGeometry(key)
	geometries.m[key] = g
	return g
}

// newGeometry places the field, its axes, the colour bar and the title band.
func newGeometry(key geometryKey) *geometry {
	g := &geometry{key: key}
	fw, fh := key.fw, key.fh
	fs := min(maxFont, max(minFont, math.Round(float64(max(fw, fh))*fontPerSide)))
	g.fontSize = fs
	g.line = max(1, int(math.Round(fs/14)))
	g.pad = math.Round(padScale * fs)
	g.titleSize = titleScale * fs
	ts := textStyle(fs, 0, 0)
	g.xTicks = apart(axisTicks(key.width, float64(fw)/(4.5*fs)), key.width, fw, func(l string) float64 { return float64(ts.Width(l)) }, 0.5*fs)
	g.yTicks = apart(axisTicks(key.height, float64(fh)/(2.5*fs)), key.height, fh, func(l string) float64 { return float64(ts.Height(l)) }, 0.2*fs)
	p := g.newPlot()

	// Margins the axes need around the data area, measured on a large
	// canvas (they hardly depend on its size; the loop below settles the
	// rest).
	const big = 1e5
	dc := p.DataCanvas(draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: big, Y: big}}})
	left, right := float64(dc.Min.X), big-float64(dc.Max.X)
	bottom, top := float64(dc.Min.Y), big-float64(dc.Max.Y)

	y0 := g.pad
	if key.title {
		e := textStyle(g.titleSize, 0, 0).FontExtents()
		y0 += float64(e.Ascent+e.Descent) + 0.5*fs
	}
	g.titleBand = int(math.Ceil(y0))
	y0 = math.Ceil(y0 + max(top, 0.6*fs)) // the bar's top label reaches up as far
	x0 := math.Ceil(g.pad + left)
	g.field = image.Rect(int(x0), int(y0), int(x0)+fw, int(y0)+fh)

	bh := max(fh, int(math.Ceil(minBar*fs)))
	bx := int(math.Ceil(float64(g.field.Max.X) + right + barGap*fs))
	g.bar = image.Rect(bx, g.field.Min.Y, bx+int(math.Round(barWidth*fs)), g.field.Min.Y+bh)
	g.labelX = float64(g.bar.Max.X+g.line) + math.Round(tickScale*fs) + 0.3*fs
	g.hgt = int(math.Ceil(max(float64(g.field.Max.Y)+bottom, float64(g.bar.Max.Y)+0.6*fs) + g.pad))

	// The plot's canvas, in vg coordinates (y up), moved until its data
	// area is the field's pixels exactly.
	want := g.vgRect(g.field)
	g.plotRect = vg.Rectangle{
		Min: vg.Point{X: want.Min.X - vg.Length(left), Y: want.Min.Y - vg.Length(bottom)},
		Max: vg.Point{X: want.Max.X + vg.Length(right), Y: want.Max.Y + vg.Length(top)},
	}
	for range 20 {
		got := p.DataCanvas(draw.Canvas{Rectangle: g.plotRect}).Rectangle
		d := [4]vg.Length{want.Min.X - got.Min.X, want.Min.Y - got.Min.Y, want.Max.X - got.Max.X, want.Max.Y - got.Max.Y}
		if max(abs(d[0]), abs(d[1]), abs(d[2]), abs(d[3])) < 1e-6 {
			break
		}
		g.plotRect.Min.X += d[0]
		g.plotRect.Min.Y += d[1]
		g.plotRect.Max.X += d[2]
		g.plotRect.Max.Y += d[3]
	}
	return g
}

func abs(x vg.Length) vg.Length { return vg.Length(math.Abs(float64(x))) }

// vgRect is the pixel rectangle r in vg coordinates.
func (g *geometry) vgRect(r image.Rectangle) vg.Rectangle {
	H := float64(g.hgt)
	return vg.Rectangle{
		Min: vg.Point{X: vg.Length(r.Min.X), Y: vg.Length(H - float64(r.Max.Y))},
		Max: vg.Point{X: vg.Length(r.Max.X), Y: vg.Length(H - float64(r.Min.Y))},
	}
}

// newPlot is the field's plot: its axes only, the field is drawn apart. A
// fresh one each time, since drawing a plot writes to it.
func (g *geometry) newPlot() *plot.Plot {
	p := plot.New()
	p.BackgroundColor = nil
	axis(&p.X, g.key.width, g.key.xlabel, g.xTicks, g.fontSize, g.line, true)
	axis(&p.Y, g.key.height, g.key.ylabel, g.yTicks, g.fontSize, g.line, false)
	return p
}

// axisTicks are round ticks from 0 to length, about n of them (at least 2).
func axisTicks(length, n float64) []plot.Tick {
	v, step := niceTicks(0, length, max(2, min(8, int(n))))
	s := tickLabels(v, step)
	t := make([]plot.Tick, len(v))
	for i := range v {
		t[i] = plot.Tick{Value: v[i], Label: s[i]}
	}
	return t
}

// apart keeps the labels of ticks (along an axis of length, pixels long)
// that are clear of the one labelled before them — size is a label's extent
// along the axis, gap the least space between two — and leaves the others
// unlabelled: a narrow strip's axis reads 0 and 0.05 apart, never run
// together.
func apart(ticks []plot.Tick, length float64, pixels int, size func(string) float64, gap float64) []plot.Tick {
	last, lastHalf := math.Inf(-1), 0.0
	for i, t := range ticks {
		if t.Label == "" {
			continue
		}
		pos, half := t.Value/length*float64(pixels), size(t.Label)/2
		if pos-half < last+lastHalf+gap {
			ticks[i].Label = ""
			continue
		}
		last, lastHalf = pos, half
	}
	return ticks
}

// axis sets one axis of the field's plot: range [0, length], its name, its
// ticks pointing out of a frame drawn separately (so no axis line and no
// padding), text of size fs.
func axis(a *plot.Axis, length float64, name string, ticks []plot.Tick, fs float64, line int, horizontal bool) {
	a.Min, a.Max = 0, length
	a.Label.Text = name
	a.Label.TextStyle = textStyle(fs, text.XCenter, text.YBottom)
	a.Label.Padding = vg.Length(0.3 * fs)
	a.Width = 0
	a.Padding = 0
	a.Tick.Marker = plot.ConstantTicks(ticks)
	a.Tick.Length = vg.Length(math.Round(tickScale * fs))
	a.Tick.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Length(line)}
	if horizontal {
		a.Tick.Label = textStyle(fs, text.XCenter, text.YTop)
	} else {
		a.Tick.Label = textStyle(fs, text.XRight, text.YCenter)
	}
}

// drawAxes draws the axes and the frames around the field and the bar.
func (g *geometry) drawAxes(c vg.Canvas) {
	g.newPlot().Draw(draw.Canvas{Canvas: c, Rectangle: g.plotRect})
	dc := draw.NewCanvas(c, 0, 0)
	for _, r := range []image.Rectangle{g.field, g.bar} {
		ring(&dc, g.vgRect(r), vg.Length(g.line))
	}
}

// ring fills a frame of width w just outside r.
func ring(c *draw.Canvas, r vg.Rectangle, w vg.Length) {
	box := func(x0, y0, x1, y1 vg.Length) {
		c.FillPolygon(color.Black, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
	}
	box(r.Min.X-w, r.Min.Y-w, r.Max.X+w, r.Min.Y) // bottom
	box(r.Min.X-w, r.Max.Y, r.Max.X+w, r.Max.Y+w) // top
	box(r.Min.X-w, r.Min.Y, r.Min.X, r.Max.Y)     // left
	box(r.Max.X, r.Min.Y, r.Max.X+w, r.Max.Y)     // right
}

// drawBarText draws the colour bar's ticks, their labels and its name,
// all right of the bar's frame.
func (l *layout) drawBarText(c vg.Canvas, name string) {
	dc := draw.NewCanvas(c, 0, 0)
	br := l.vgRect(l.bar)
	lw := vg.Length(l.line)
	sty := draw.LineStyle{Color: color.Black, Width: lw}
	ts := textStyle(l.fontSize, text.XLeft, text.YCenter)
	tick := vg.Length(math.Round(tickScale * l.fontSize))
	span := l.hi - l.lo
	for k, v := range l.ticks {
		y := br.Min.Y
		if span > 0 {
			y += vg.Length((v - l.lo) / span * float64(br.Max.Y-br.Min.Y))
		}
		// On the middle of a pixel row (for an odd width), so a thin tick
		// stays sharp.
		y = vg.Length(math.Floor(float64(y-lw/2)+0.5)) + lw/2
		dc.StrokeLine2(sty, br.Max.X+lw, y, br.Max.X+lw+tick, y)
		dc.FillText(ts, vg.Point{X: vg.Length(l.labelX), Y: y}, l.labels[k])
	}
	if name != "" {
		ns := textStyle(l.fontSize, text.XCenter, text.YTop)
		ns.Rotation = math.Pi / 2
		dc.FillText(ns, vg.Point{X: vg.Length(l.nameX), Y: (br.Min.Y + br.Max.Y) / 2}, name)
	}
}

// drawTitle writes the title centred in the title band, smaller where it
// would not fit the image's width.
func (l *layout) drawTitle(c vg.Canvas, title string) {
	if title == "" {
		return
	}
	dc := draw.NewCanvas(c, 0, 0)
	size := l.titleSize
	room := float64(l.width) - 2*l.pad
	if w := float64(textStyle(size, 0, 0).Width(title)); w > room {
		size *= room / w
	}
	tt := textStyle(size, text.XCenter, text.YTop)
	dc.FillText(tt, vg.Point{X: vg.Length(l.width) / 2, Y: vg.Length(float64(l.hgt) - l.pad)}, title)
}
