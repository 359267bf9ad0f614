// Package vtk writes fields as VTK XML ImageData, which ParaView and VisIt
// open as they are: one .vti per box of the grid, a .pvti that joins the
// boxes of one snapshot (one piece per rank), and a .pvd that lists the
// snapshots of a run with their times, so the series plays as an animation.
//
// Conventions a caller must know:
//   - heat lists axes in C order (slowest first: [ny, nx] or [nz, ny, nx]);
//     VTK lists them x first. Grid, boxes and pieces here take C order and
//     the writer reverses them. A 2D grid becomes a VTK image one point
//     thick in z (extent 0..0).
//   - Values are cell data: one value per cell, and extents count points,
//     cells+1 per axis. Cell i along an axis spans [Origin + i*h,
//     Origin + (i+1)*h], so its centre is Origin + (i+0.5)*h as in heat.
//   - The layout of values is the field's own C order, which is VTK's
//     x-fastest order, so the data are written without reordering.
//   - Options.Extra adds cell arrays beside the field in the same piece (a
//     run's media: k, rho_c and a UInt8 mask); the field stays the piece's
//     active scalars.
//   - Data are binary, appended raw after the XML with UInt64 headers, in
//     little-endian byte order; Options.Compress adds zlib blocks. The files
//     are not plain XML (the appended section is raw bytes); VTK, ParaView
//     and VisIt read them, XML tools do not.
//   - Every file is written to a temporary name in its directory and
//     renamed, so a reader never sees half a file.
package vtk

import (
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zlib"

	"heat/internal/atomicfile"
)

// Grid is the global grid of a field, in heat's C order.
type Grid struct {
	Shape   []int     // cells per axis: [ny, nx] or [nz, ny, nx]
	Spacing []float64 // cell size per axis (length/shape); nil means 1 on every axis
	Origin  []float64 // position of the grid's low corner (not of the first cell's centre); nil means 0
}

// Options say how values are stored.
type Options struct {
	Float32  bool   // store values as Float32 (half the size) instead of Float64
	Compress bool   // zlib-compress the values (vtkZLibDataCompressor, blocks of 32 KiB)
	Name     string // name of the data array; "" means "u"
	// Extra are cell arrays stored beside the field, in this order (a run's
	// media). WriteVTI writes their Data; WritePVTI lists their names and
	// types and reads no Data.
	Extra []Array
}

// Array is a cell array stored beside the field: one value per cell of the
// box, C order, as the field.
type Array struct {
	Name string
	Data []float64
	// UInt8 stores the values as UInt8 (a mask: whole numbers 0 to 255);
	// otherwise they are stored as the field's (Float64, or Float32).
	UInt8 bool
}

// Piece is one box of a parallel snapshot: cells [Lo, Hi) of the global grid
// (C order), stored in the .vti file Source. Source may be the path given to
// WriteVTI (absolute, or relative to the working directory) or a path
// relative to the .pvti; WritePVTI stores it relative to the .pvti (see
// relativeTo for how a relative path is read).
type Piece struct {
	Lo, Hi []int
	Source string
}

// blockSize is the uncompressed size of a zlib block, VTK's default.
const blockSize = 1 << 15

// WriteVTI writes one .vti holding the cells [lo, hi) (C order) of the
// global grid g: field has prod(hi-lo) values in C order. For a whole grid,
// lo is all zeros and hi is g.Shape. The file's WholeExtent is the global
// grid's, its Piece Extent the box's, so the .vti files of one snapshot line
// up in space and a .pvti can join them. The arrays of o.Extra, one value
// per cell of the box each, follow the field as further cell data.
func WriteVTI(path string, g Grid, lo, hi []int, field []float64, o Options) error {
	if err := g.check(); err != nil {
		return fmt.Errorf("vtk: %s: %w", path, err)
	}
	if err := g.checkBox(lo, hi); err != nil {
		return fmt.Errorf("vtk: %s: %w", path, err)
	}
	if n := boxLen(lo, hi); len(field) != n {
		return fmt.Errorf("vtk: %s: field has %d values, box %v..%v needs %d", path, len(field), lo, hi, n)
	}
	if err := o.checkExtra(boxLen(lo, hi)); err != nil {
		return fmt.Errorf("vtk: %s: %w", path, err)
	}
	name, _ := o.names()
	arrays := o.arrays(field)
	payloads := make([]func(io.Writer) error, len(arrays))
	offsets := make([]int64, len(arrays))
	var at int64
	for i, a := range arrays {
		payload, size, err := encode(a, o)
		if err != nil {
			return fmt.Errorf("vtk: %s: %w", path, err)
		}
		payloads[i], offsets[i] = payload, at
		at += size
	}

	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n")
	fmt.Fprintf(&b, "<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\"%s>\n", compressorAttr(o))
	fmt.Fprintf(&b, "  <ImageData WholeExtent=\"%s\" Origin=\"%s\" Spacing=\"%s\">\n",
		g.extent(make([]int, len(g.Shape)), g.Shape), g.origin(), g.spacing())
	fmt.Fprintf(&b, "    <Piece Extent=\"%s\">\n", g.extent(lo, hi))
	fmt.Fprintf(&b, "      <CellData Scalars=\"%s\">\n", name)
	for i, a := range arrays {
		fmt.Fprintf(&b, "        <DataArray type=\"%s\" Name=\"%s\" NumberOfComponents=\"1\" format=\"appended\" offset=\"%d\"/>\n", a.typ, a.name, offsets[i])
	}
	b.WriteString("      </CellData>\n")
	b.WriteString("    </Piece>\n")
	b.WriteString("  </ImageData>\n")
	// The underscore marks the start of the raw bytes; offsets count from
	// the byte after it.
	b.WriteString("  <AppendedData encoding=\"raw\">\n   _")

	return writeAtomic(path, func(w io.Writer) error {
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
		for _, payload := range payloads {
			if err := payload(w); err != nil {
				return err
			}
		}
		_, err := io.WriteString(w, "\n  </AppendedData>\n</VTKFile>\n")
		return err
	})
}

// WritePVTI writes the .pvti that joins the .vti files of one snapshot of
// the grid g, one piece per box. The pieces must tile the grid: no overlaps,
// no gaps. o must match the options the pieces were written with (value
// type and array name).
func WritePVTI(path string, g Grid, pieces []Piece, o Options) error {
	if err := g.check(); err != nil {
		return fmt.Errorf("vtk: %s: %w", path, err)
	}
	if err := g.checkTiling(pieces); err != nil {
		return fmt.Errorf("vtk: %s: %w", path, err)
	}
	if err := o.checkExtra(-1); err != nil {
		return fmt.Errorf("vtk: %s: %w", path, err)
	}
	name, _ := o.names()
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n")
	b.WriteString("<VTKFile type=\"PImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n")
	fmt.Fprintf(&b, "  <PImageData WholeExtent=\"%s\" GhostLevel=\"0\" Origin=\"%s\" Spacing=\"%s\">\n",
		g.extent(make([]int, len(g.Shape)), g.Shape), g.origin(), g.spacing())
	fmt.Fprintf(&b, "    <PCellData Scalars=\"%s\">\n", name)
	for _, a := range o.arrays(nil) {
		fmt.Fprintf(&b, "      <PDataArray type=\"%s\" Name=\"%s\" NumberOfComponents=\"1\"/>\n", a.typ, a.name)
	}
	b.WriteString("    </PCellData>\n")
	for _, p := range pieces {
		fmt.Fprintf(&b, "    <Piece Extent=\"%s\" Source=\"%s\"/>\n", g.extent(p.Lo, p.Hi), attr(relativeTo(path, p.Source)))
	}
	b.WriteString("  </PImageData>\n")
	b.WriteString("</VTKFile>\n")
	return writeAtomic(path, func(w io.Writer) error {
		_, err := io.WriteString(w, b.String())
		return err
	})
}

// names are the escaped array name and the VTK value type of o.
func (o Options) names() (name, typ string) {
	name = o.Name
	if name == "" {
		name = "u"
	}
	typ = "Float64"
	if o.Float32 {
		typ = "Float32"
	}
	return attr(name), typ
}

// stored is one array as a file stores it: its escaped name, VTK type,
// bytes per value and values.
type stored struct {
	name, typ string
	size      int
	data      []float64
}

// arrays are the arrays a piece stores: the field (data), then o.Extra.
func (o Options) arrays(field []float64) []stored {
	name, typ := o.names()
	size := 8
	if o.Float32 {
		size = 4
	}
	out := []stored{{name, typ, size, field}}
	for _, a := range o.Extra {
		s := stored{attr(a.Name), typ, size, a.Data}
		if a.UInt8 {
			s.typ, s.size = "UInt8", 1
		}
		out = append(out, s)
	}
	return out
}

// checkExtra checks o.Extra: names given, none twice nor the field's, and
// (n >= 0, a piece of n cells) n values each, a UInt8 array's whole
// numbers 0 to 255.
func (o Options) checkExtra(n int) error {
	field, _ := o.names()
	seen := map[string]bool{field: true}
	for _, a := range o.Extra {
		switch {
		case a.Name == "":
			return fmt.Errorf("an extra array has no name")
		case seen[attr(a.Name)]:
			return fmt.Errorf("array name %q given twice", a.Name)
		case n >= 0 && len(a.Data) != n:
			return fmt.Errorf("array %q has %d values, the box %d cells", a.Name, len(a.Data), n)
		}
		seen[attr(a.Name)] = true
		if a.UInt8 && n >= 0 {
			for i, v := range a.Data {
				if !(v >= 0 && v <= 255 && v == math.Trunc(v)) {
					return fmt.Errorf("array %q is UInt8, but its value %d is %v", a.Name, i, v)
				}
			}
		}
	}
	return nil
}

func compressorAttr(o Options) string {
	if o.Compress {
		return ` compressor="vtkZLibDataCompressor"`
	}
	return ""
}

// encode returns a writer of the appended bytes of array a, and how many
// bytes it writes: uncompressed, a UInt64 byte count then the values;
// compressed, the header [#blocks][block size][size of a partial last
// block, or 0][compressed size of each block] in UInt64, then the zlib
// stream of each block. The compressed blocks are made here, so the header
// knows their sizes.
func encode(a stored, o Options) (func(io.Writer) error, int64, error) {
	field, size := a.data, a.size
	total := len(field) * size
	// put writes values as little-endian bytes into dst (len(vals)*size bytes).
	put := func(dst []byte, vals []float64) {
		switch size {
		case 1:
			for i, v := range vals {
				dst[i] = uint8(v)
			}
			return
		case 4:
			for i, v := range vals {
				binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(float32(v)))
			}
			return
		}
		for i, v := range vals {
			binary.LittleEndian.PutUint64(dst[8*i:], math.Float64bits(v))
		}
	}
	perBlock := blockSize / size
	buf := make([]byte, blockSize)

	if !o.Compress {
		return func(w io.Writer) error {
			if err := binary.Write(w, binary.LittleEndian, uint64(total)); err != nil {
				return err
			}
			for start := 0; start < len(field); start += perBlock {
				vals := field[start:min(start+perBlock, len(field))]
				put(buf, vals)
				if _, err := w.Write(buf[:len(vals)*size]); err != nil {
					return err
				}
			}
			return nil
		}, int64(8 + total), nil
	}

	nblocks := (total + blockSize - 1) / blockSize
	header := make([]uint64, 3, 3+nblocks)
	header[0], header[1], header[2] = uint64(nblocks), blockSize, uint64(total%blockSize)
	var data bytes.Buffer
	zw, err := zlib.NewWriterLevel(&data, zlib.DefaultCompression)
	if err != nil {
		return nil, 0, err
	}
	for start := 0; start < len(field); start += perBlock {
		vals := field[start:min(start+perBlock, len(field))]
		put(buf, vals)
		before := data.Len()
		zw.Reset(&data)
		if _, err := zw.Write(buf[:len(vals)*size]); err != nil {
			return nil, 0, err
		}
		if err := zw.Close(); err != nil {
			return nil, 0, err
		}
		header = append(header, uint64(data.Len()-before))
	}
	return func(w io.Writer) error {
		if err := binary.Write(w, binary.LittleEndian, header); err != nil {
			return err
		}
		_, err := data.WriteTo(w)
		return err
	}, int64(8*len(header) + data.Len()), nil
}

// check validates the grid.
func (g Grid) check() error {
	nd := len(g.Shape)
	if nd != 2 && nd != 3 {
		return fmt.Errorf("grid shape %v must have 2 or 3 axes", g.Shape)
	}
	for _, n := range g.Shape {
		if n < 1 {
			return fmt.Errorf("grid shape %v must be positive", g.Shape)
		}
	}
	if g.Spacing != nil {
		if len(g.Spacing) != nd {
			return fmt.Errorf("grid spacing %v needs %d values, one per axis of shape %v", g.Spacing, nd, g.Shape)
		}
		for _, h := range g.Spacing {
			if !(h > 0) || math.IsInf(h, 0) {
				return fmt.Errorf("grid spacing %v must be positive and finite", g.Spacing)
			}
		}
	}
	if g.Origin != nil {
		if len(g.Origin) != nd {
			return fmt.Errorf("grid origin %v needs %d values, one per axis of shape %v", g.Origin, nd, g.Shape)
		}
		for _, x := range g.Origin {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("grid origin %v must be finite", g.Origin)
			}
		}
	}
	return nil
}

// checkBox validates a box [lo, hi) of cells against the grid.
func (g Grid) checkBox(lo, hi []int) error {
	if len(lo) != len(g.Shape) || len(hi) != len(g.Shape) {
		return fmt.Errorf("box %v..%v needs %d values per corner for grid shape %v", lo, hi, len(g.Shape), g.Shape)
	}
	for a := range g.Shape {
		if lo[a] < 0 || lo[a] >= hi[a] || hi[a] > g.Shape[a] {
			return fmt.Errorf("box %v..%v: axis %d must satisfy 0 <= lo < hi <= %d", lo, hi, a, g.Shape[a])
		}
	}
	return nil
}

// checkTiling checks that the pieces cover every cell of the grid once.
func (g Grid) checkTiling(pieces []Piece) error {
	if len(pieces) == 0 {
		return fmt.Errorf("no pieces")
	}
	cells := 0
	for k, p := range pieces {
		if err := g.checkBox(p.Lo, p.Hi); err != nil {
			return fmt.Errorf("piece %d: %w", k, err)
		}
		if p.Source == "" {
			return fmt.Errorf("piece %d: empty Source", k)
		}
		for m := range k {
			if overlap(p, pieces[m]) {
				return fmt.Errorf("pieces %d (%v..%v) and %d (%v..%v) overlap", m, pieces[m].Lo, pieces[m].Hi, k, p.Lo, p.Hi)
			}
		}
		cells += boxLen(p.Lo, p.Hi)
	}
	// Disjoint boxes inside the grid cover it exactly when their cells add up.
	if all := boxLen(make([]int, len(g.Shape)), g.Shape); cells != all {
		return fmt.Errorf("pieces cover %d of the grid's %d cells", cells, all)
	}
	return nil
}

func overlap(p, q Piece) bool {
	for a := range p.Lo {
		if p.Hi[a] <= q.Lo[a] || q.Hi[a] <= p.Lo[a] {
			return false
		}
	}
	return true
}

func boxLen(lo, hi []int) int {
	n := 1
	for a := range lo {
		n *= hi[a] - lo[a]
	}
	return n
}

// extent is the VTK extent (point indices, x first) of cells [lo, hi).
func (g Grid) extent(lo, hi []int) string {
	nd := len(g.Shape)
	var s [6]string
	for a := range 3 { // VTK axis a is heat axis nd-1-a
		s[2*a], s[2*a+1] = "0", "0"
		if c := nd - 1 - a; c >= 0 {
			s[2*a], s[2*a+1] = strconv.Itoa(lo[c]), strconv.Itoa(hi[c])
		}
	}
	return strings.Join(s[:], " ")
}

// origin and spacing are g's, x first; a 2D grid's z gets 0 and 1.
func (g Grid) origin() string  { return g.xyz(g.Origin, 0) }
func (g Grid) spacing() string { return g.xyz(g.Spacing, 1) }

func (g Grid) xyz(v []float64, def float64) string {
	nd := len(g.Shape)
	var s [3]string
	for a := range 3 {
		x := def
		if c := nd - 1 - a; c >= 0 && v != nil {
			x = v[c]
		}
		s[a] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(s[:], " ")
}

// attr escapes s for an XML attribute value.
func attr(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s)) // escapes quotes as well; cannot fail on a Builder
	return b.String()
}

// relativeTo returns how the XML file at xmlPath (.pvti, .pvd) refers to
// file: relative to its own directory, with forward slashes, as VTK readers
// resolve it. Callers may name file either way they hold it:
//   - absolute: made relative to the XML's directory (kept absolute where no
//     relative path exists, as across Windows volumes);
//   - relative, and inside the XML's directory when read from the working
//     directory (the path the file was written at, "out/u-1.vti" for
//     "out/u.pvd"): made relative to the XML's directory ("u-1.vti");
//   - any other relative path (a bare "u-1.vti" while the working directory
//     is elsewhere): taken as relative to the XML's directory already.
//
// So both the path a writer used and the name as the index lists it work.
func relativeTo(xmlPath, file string) string {
	dir, err1 := filepath.Abs(filepath.Dir(xmlPath))
	abs, err2 := filepath.Abs(file)
	if err1 != nil || err2 != nil {
		return filepath.ToSlash(filepath.Clean(file))
	}
	rel, err := filepath.Rel(dir, abs)
	switch {
	case filepath.IsAbs(file) && err != nil:
		return filepath.ToSlash(abs)
	case filepath.IsAbs(file) || (err == nil && filepath.IsLocal(rel)):
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(filepath.Clean(file))
}

// writeAtomic writes path whole or not at all (see internal/atomicfile).
func writeAtomic(path string, write func(io.Writer) error) error {
	if err := atomicfile.Write(path, write); err != nil {
		return fmt.Errorf("vtk: %w", err)
	}
	return nil
}
