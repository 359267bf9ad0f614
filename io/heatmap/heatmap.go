// Package heatmap draws a 2D field as a figure: the field in a perceptually
// uniform colour map, at its true aspect ratio, inside physical axes with
// coordinates, beside a labelled colour bar with round ticks, under a title.
// It writes PNG (for looking at snapshots at once, and the frames of a GIF
// movie), SVG and PDF (for papers); the figure is laid out and its text
// drawn by gonum/plot in Liberation Sans. For analysis write VTK
// (heat/io/vtk) or read a checkpoint.
//
// Orientation follows the physics convention, not the image one: row 0 of the
// field (y = 0, or z = 0 for a y= or x= slice) is the bottom row of the
// picture, and column 0 (x = 0) is its left edge. One unit of length is as
// long across as up: cells are drawn square only where they are square.
package heatmap

import (
	"fmt"
	"image"
	"io"
	"math"
	"path/filepath"
	"strings"

	"heat/internal/atomicfile"
)

// Options say how Render draws a field. The zero value is usable: viridis,
// a colour range fitted to the data, square cells with the axes counting
// cells, fields up to 1024 cells a side drawn cell for cell, no title.
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
	// MaxPixels is the least long side of the field part of the image: a
	// field with fewer cells is enlarged by a whole factor, one with twice
	// as many or more downsampled by the largest whole factor that keeps
	// it at least this (a box average, see Render; Factor); 0 means 1024.
	MaxPixels int
	// Title is written at the top of the image, e.g. "step 200  t = 0.0123";
	// a title too long for the image is drawn smaller, so it never changes
	// the image's size.
	Title string
	// Width and Height are the physical size of the plane along its columns
	// and its rows: the axes run from 0 to them and the picture keeps their
	// ratio. Both 0: the plane's cell counts (square cells).
	Width, Height float64
	// XLabel and YLabel name the axes along the columns and the rows; ""
	// means "x" and "y".
	XLabel, YLabel string
	// Label names the quantity on the colour bar, e.g. "u"; "" draws none.
	Label string
	// Factor and Cells say that the field is already a box average, as a
	// run's snapshots draw it: each value averages Factor×Factor cells of a
	// plane of Cells = [rows, columns] cells (fewer at the far edges, which
	// are then drawn narrower, so the axes stay exact). Factor 0: the
	// field's values are the cells.
	Factor int
	Cells  [2]int
	// Regions, when not nil, holds a region number per drawn value (as the
	// field: rows × columns, row 0 at y = 0), such as the material each
	// cell lies in; a black line one pixel wide is drawn where it changes
	// between neighbouring cells, the outlines of the materials.
	Regions []int32
}

// Defaults of Options and sizes of the picture.
const (
	DefaultMaxPixels = 1024
	minSide          = 256 // a downsampled field is enlarged to at least this
)

// Formats are the image formats Write knows, by file extension.
var Formats = []string{"png", "svg", "pdf"}

// FormatOf is the image format of path from its extension (any case): png,
// svg or pdf. Anything else is an error naming the file.
func FormatOf(path string) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	for _, f := range Formats {
		if ext == f {
			return f, nil
		}
	}
	return "", fmt.Errorf("heatmap: %s: unknown image format %q (want a file ending in .png, .svg or .pdf)", path, filepath.Ext(path))
}

// Render draws a 2D field of ny rows and nx columns (C order: index j*nx+i is
// row j, column i) as described in the package comment and in Options, as
// a PNG would show it.
//
// NaN cells are mid grey; ±Inf clamp to the ends of the map. A field larger
// than MaxPixels a side is box-averaged: a box holding +Inf and no -Inf is
// +Inf (and likewise -Inf), one holding both is NaN, otherwise it is the
// mean of its finite cells (NaN if none).
//
// The picture is paletted: the colour map sampled at lutSize colours, 16
// greys for the text and lines, and NaN's grey, so it is drawn a byte a
// pixel, PNG stores it compactly and GIF takes it as a frame as it is.
// Every picture of one colour map has the same palette.
func Render(field []float64, ny, nx int, o Options) (*image.Paletted, error) {
	f, err := prepare(field, ny, nx, o)
	if err != nil {
		return nil, err
	}
	return f.raster()
}

// Write renders the field and stores it at path in the format its
// extension names (FormatOf): PNG, SVG or PDF. It writes a temporary file
// in the same directory and renames it, so a viewer (or a crash) never sees
// half an image.
func Write(path string, field []float64, ny, nx int, o Options) error {
	format, err := FormatOf(path)
	if err != nil {
		return err
	}
	f, err := prepare(field, ny, nx, o)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, func(w io.Writer) error { return f.encode(w, format) }); err != nil {
		return fmt.Errorf("heatmap: %w", err)
	}
	return nil
}

// Encode renders the field and writes it to w in format (one of Formats).
func Encode(w io.Writer, format string, field []float64, ny, nx int, o Options) error {
	f, err := prepare(field, ny, nx, o)
	if err != nil {
		return err
	}
	return f.encode(w, format)
}

// figure is one field ready to draw: its drawn cells, colour map and plan.
type figure struct {
	cells   []float64 // cy×cx values, box-averaged as needed
	regions []int32   // cy×cx region numbers (Options.Regions, sampled as cells are); nil: no outlines
	cmap    string
	l       layout
	o       Options
}

// prepare checks the input, downsamples the field as needed and plans the
// picture.
func prepare(field []float64, ny, nx int, o Options) (*figure, error) {
	if ny < 1 || nx < 1 {
		return nil, fmt.Errorf("heatmap: field shape [%d, %d] must be positive", ny, nx)
	}
	if len(field) != ny*nx {
		return nil, fmt.Errorf("heatmap: field has %d values, shape [%d, %d] needs %d", len(field), ny, nx, ny*nx)
	}
	if o.Regions != nil && len(o.Regions) != ny*nx {
		return nil, fmt.Errorf("heatmap: %d region numbers for a field of shape [%d, %d]", len(o.Regions), ny, nx)
	}
	if _, err := Colormap(o.Cmap); err != nil {
		return nil, err
	}
	switch {
	case o.MaxPixels < 0:
		return nil, fmt.Errorf("heatmap: MaxPixels must be >= 0 (got %d)", o.MaxPixels)
	case o.MaxPixels == 0:
		o.MaxPixels = DefaultMaxPixels
	}
	if (o.Width == 0) != (o.Height == 0) || !(o.Width >= 0 && o.Height >= 0) || math.IsInf(o.Width, 0) || math.IsInf(o.Height, 0) {
		return nil, fmt.Errorf("heatmap: plane size %g × %g must be positive and finite, or both 0", o.Width, o.Height)
	}
	rows, cols, given := ny, nx, 1
	if o.Factor != 0 {
		if o.Factor < 1 || o.Cells[0] < 1 || o.Cells[1] < 1 || ceilDiv(o.Cells[0], o.Factor) != ny || ceilDiv(o.Cells[1], o.Factor) != nx {
			return nil, fmt.Errorf("heatmap: a field of [%d, %d] is not a %d× box average of [%d, %d] cells", ny, nx, o.Factor, o.Cells[0], o.Cells[1])
		}
		rows, cols, given = o.Cells[0], o.Cells[1], o.Factor
	}
	lo, hi, err := colourRange(field, o)
	if err != nil {
		return nil, err
	}
	own := Factor(ny, nx, o.MaxPixels)
	f := &figure{cells: downsample(field, ny, nx, own), regions: sample(o.Regions, ny, nx, own), cmap: o.Cmap, o: o}
	f.l = plan(ceilDiv(ny, own), ceilDiv(nx, own), rows, cols, given*own, lo, hi, o)
	return f, nil
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
		if v-v == 0 { // finite
			if v < dlo {
				dlo = v
			}
			if v > dhi {
				dhi = v
			}
		}
	}
	switch {
	case given:
		return min(o.Min, dlo), max(o.Max, dhi), nil // no finite data leaves [Min, Max]
	case dlo > dhi: // no finite data: any range will do
		return 0, 1, nil
	case Flat(dlo, dhi): // a flat field: centre it, so it shows the map's middle
		d := 0.5 * max(math.Abs(dlo), 1)
		return dlo - d, dlo + d, nil
	}
	return dlo, dhi, nil
}

// Flat reports whether a data range [lo, hi] is one value to rounding
// (within 1e-12 of its magnitude): a field uniform but for its last bits
// (293 K everywhere after the steps' rounding) is drawn flat, not as its
// rounding noise stretched over the whole colour map.
func Flat(lo, hi float64) bool {
	return hi-lo <= 1e-12*max(math.Abs(lo), math.Abs(hi))
}

// downsample averages factor×factor boxes of the field (fewer at the far
// edges) as Render describes: ±Inf win over finite cells, NaN cells are
// left out. factor 1 returns field.
func downsample(field []float64, ny, nx, factor int) []float64 {
	if factor == 1 {
		return field
	}
	cy, cx := ceilDiv(ny, factor), ceilDiv(nx, factor)
	sum := make([]float64, cy*cx)
	cnt := make([]int32, cy*cx)
	var inf []uint8 // per box: 1 saw +Inf, 2 saw -Inf; nil until one is seen
	for j := range ny {
		row := field[j*nx : (j+1)*nx]
		out := (j / factor) * cx
		for i, v := range row {
			switch {
			case v-v == 0: // finite
				sum[out+i/factor] += v
				cnt[out+i/factor]++
			case math.IsInf(v, 0):
				if inf == nil {
					inf = make([]uint8, cy*cx)
				}
				if v > 0 {
					inf[out+i/factor] |= 1
				} else {
					inf[out+i/factor] |= 2
				}
			}
		}
	}
	for k := range sum {
		switch {
		case inf != nil && inf[k] != 0:
			sum[k] = InfBox(inf[k]&1 != 0, inf[k]&2 != 0)
		case cnt[k] == 0:
			sum[k] = math.NaN()
		default:
			sum[k] /= float64(cnt[k])
		}
	}
	return sum
}

// InfBox is the value of a box average that met +Inf cells (pos) or -Inf
// cells (neg): that infinity, or NaN when it met both. A box of finite and
// NaN cells only is the mean of its finite cells; run's snapshots average
// their planes by the same rule.
func InfBox(pos, neg bool) float64 {
	switch {
	case pos && neg:
		return math.NaN()
	case pos:
		return math.Inf(1)
	case neg:
		return math.Inf(-1)
	}
	return math.NaN()
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// sample is r (ny×nx) as a field downsampled by factor is drawn: each
// block's number is its middle cell's (a region's edge stays where the
// cells put it, to a block).
func sample(r []int32, ny, nx, factor int) []int32 {
	if r == nil || factor == 1 {
		return r
	}
	cy, cx := ceilDiv(ny, factor), ceilDiv(nx, factor)
	out := make([]int32, cy*cx)
	for J := range cy {
		y := min(ny-1, J*factor+factor/2)
		for I := range cx {
			out[J*cx+I] = r[y*nx+min(nx-1, I*factor+factor/2)]
		}
	}
	return out
}
