// Package field is the one owner of a grid's geometry and of a rank's
// field: the cell size and cell centres of the global grid (Geometry), and
// a rank's values with the layout they are stored in (Field) — the flat
// index of a cell and its inverse, and the walk over the rows of the box.
// Code that needs any of these asks here instead of writing the arithmetic
// again, so every place computes them with the same bits.
//
// Axes are in C order, slowest first, as in decomp. It imports decomp
// alone; decomp imports nothing of heat's.
package field

import (
	"fmt"

	"heat/decomp"
)

// Geometry is the global grid: its cells per axis and its physical extent
// per axis, both in C order. An axis Length does not reach is 1 long (a
// nil Length: the default of a grid that does not say).
type Geometry struct {
	Shape  []int
	Length []float64
}

// Extent is the physical length of axis a: Length[a], or 1 when Length
// does not reach a.
func (g Geometry) Extent(a int) float64 {
	if a >= len(g.Length) {
		return 1
	}
	return g.Length[a]
}

// H is the cell size along axis a, length/shape: every cell size in heat
// is this one division.
func (g Geometry) H(a int) float64 { return g.Extent(a) / float64(g.Shape[a]) }

// Spacing is the cell size of every axis, a new slice.
func (g Geometry) Spacing() []float64 {
	h := make([]float64, len(g.Shape))
	for a := range h {
		h[a] = g.H(a)
	}
	return h
}

// CellVolume is the product of the cell sizes, multiplied from the
// slowest axis on.
func (g Geometry) CellVolume() float64 {
	v := 1.0
	for a := range g.Shape {
		v *= g.H(a)
	}
	return v
}

// Centre is the coordinate of the centre of cell i along axis a,
// (i+0.5)·H(a): the centre the solver evaluates profiles, sources and
// faces at.
func (g Geometry) Centre(a, i int) float64 { return float64((float64(i) + 0.5) * g.H(a)) }

// CentreScaled is the centre of cell i along axis a computed as
// (i+0.5)·length/shape, multiplying before dividing: the form line-outs
// plot and compare with exact solutions. It may differ from Centre in the
// last bit; keep it where its bits are recorded.
func (g Geometry) CentreScaled(a, i int) float64 {
	return float64((float64(i)+0.5)*g.Extent(a)) / float64(g.Shape[a])
}

// CentreOf sets x to the centre of the cell with global index idx, Centre
// on every axis.
func (g Geometry) CentreOf(idx []int, x []float64) {
	for a, i := range idx {
		x[a] = g.Centre(a, i)
	}
}

// Cells is the number of cells of the grid.
func (g Geometry) Cells() int { return Cells(g.Shape) }

// Index is the C-order index (last axis fastest) of the cell with global
// index idx: the order of a whole field's values in a file, and of "the
// first bad cell". Cell is its inverse.
func (g Geometry) Index(idx []int) int { return Linear(idx, g.Shape) }

// Cell sets out to the global index of the cell of C-order index k.
func (g Geometry) Cell(k int, out []int) { Unravel(k, g.Shape, out) }

// Cells is the number of cells of an array of shape.
func Cells(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// Linear is the C-order index of idx in a dense array of shape (no
// ghosts): a chunk, a box packed without ghosts, a whole grid.
func Linear(idx, shape []int) int {
	k := 0
	for a, i := range idx {
		k = k*shape[a] + i
	}
	return k
}

// Unravel sets out to the index in a dense array of shape of its k-th
// value, C order: the inverse of Linear.
func Unravel(k int, shape, out []int) {
	for a := len(shape) - 1; a >= 0; a-- {
		out[a] = k % shape[a]
		k /= shape[a]
	}
}

// Field is a rank's values of one field and the layout they are stored
// in: its box of the global grid with ghost layers, C order. It is the
// one value to carry where a slice and its decomp.Layout go together.
type Field struct {
	Data   []float64
	Layout decomp.Layout
}

// New is a field of zeros laid out as lay.
func New(lay decomp.Layout) Field { return Field{Data: make([]float64, lay.Len()), Layout: lay} }

// Of is data seen as a field laid out as lay; data is not copied. A length
// that is not the layout's is a bug of the caller's and panics.
func Of(data []float64, lay decomp.Layout) Field {
	if len(data) != lay.Len() {
		panic(fmt.Sprintf("field: %d values for a layout of %d (box %v, ghost %d)", len(data), lay.Len(), lay.Box, lay.Ghost))
	}
	return Field{Data: data, Layout: lay}
}

// Index is the flat index, in a slice laid out as lay, of the cell with
// global index g (which may lie in the ghosts): for a slice that is not a
// []float64, such as the bytes of a chunk.
func Index(lay decomp.Layout, g []int) int {
	i := 0
	for a, x := range g {
		i += (x - lay.Box.Lo[a] + lay.Ghost) * lay.Stride[a]
	}
	return i
}

// Index is the flat index of the cell with global index g (which may lie
// in the ghosts).
func (f Field) Index(g ...int) int { return Index(f.Layout, g) }

// LocalIndex is the flat index of local coordinates c, 0 at the box's
// first cell, -Ghost in the first ghost layer.
func (f Field) LocalIndex(c ...int) int { return f.Layout.Index(c...) }

// Cell sets out to the global index of flat index i: the inverse of Index.
func (f Field) Cell(i int, out []int) { f.Layout.Global(i, out) }

// LocalCell sets out to the local coordinates of flat index i: the inverse
// of LocalIndex.
func (f Field) LocalCell(i int, out []int) { f.Layout.Coords(i, out) }

// Rows calls fn for every row of the box the rank owns (ghosts left out),
// in C order: the flat index of the row's first cell and its length.
func (f Field) Rows(fn func(start, n int)) {
	lay := f.Layout
	lay.ForRows(decomp.Box{Lo: make([]int, len(lay.N)), Hi: lay.N}, fn)
}

// Owned is a copy of the values of the box the rank owns, without ghosts,
// C order.
func (f Field) Owned() []float64 {
	out := make([]float64, 0, f.Layout.Box.Size())
	f.Rows(func(start, n int) { out = append(out, f.Data[start:start+n]...) })
	return out
}
