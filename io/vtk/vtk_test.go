package vtk

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// vtiDoc is the XML part of a .vti, as encoding/xml reads it.
type vtiDoc struct {
	XMLName    xml.Name `xml:"VTKFile"`
	Type       string   `xml:"type,attr"`
	Version    string   `xml:"version,attr"`
	ByteOrder  string   `xml:"byte_order,attr"`
	HeaderType string   `xml:"header_type,attr"`
	Compressor string   `xml:"compressor,attr"`
	Image      struct {
		WholeExtent string `xml:"WholeExtent,attr"`
		Origin      string `xml:"Origin,attr"`
		Spacing     string `xml:"Spacing,attr"`
		Piece       struct {
			Extent   string `xml:"Extent,attr"`
			CellData struct {
				Scalars string     `xml:"Scalars,attr"`
				Arrays  []arrayDoc `xml:"DataArray"`
			} `xml:"CellData"`
			PointData *struct{} `xml:"PointData"`
		} `xml:"Piece"`
	} `xml:"ImageData"`
}

type arrayDoc struct {
	Type       string `xml:"type,attr"`
	Name       string `xml:"Name,attr"`
	Components string `xml:"NumberOfComponents,attr"`
	Format     string `xml:"format,attr"`
	Offset     string `xml:"offset,attr"`
}

// readVTI parses a .vti written by WriteVTI back: the XML with encoding/xml,
// the appended block by hand, following the VTK XML format description. It
// returns the document and the values of its one array, widened to float64.
func readVTI(t *testing.T, path string) (vtiDoc, []float64) {
	t.Helper()
	doc, vals := readVTIArrays(t, path)
	require.Len(t, doc.Image.Piece.CellData.Arrays, 1)
	return doc, vals[0]
}

// readVTIArrays is readVTI for a .vti of one or more arrays: the values of
// each, in the document's order. The first is the active scalars, and the
// arrays' blocks follow one another, each at its offset.
func readVTIArrays(t *testing.T, path string) (vtiDoc, [][]float64) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	const open = `<AppendedData encoding="raw">`
	at := bytes.Index(raw, []byte(open))
	require.Positive(t, at, "no raw AppendedData section")

	var doc vtiDoc
	head := append(append([]byte(nil), raw[:at]...), "</VTKFile>"...)
	require.NoError(t, xml.Unmarshal(head, &doc))
	require.Equal(t, "ImageData", doc.Type)
	require.Equal(t, "1.0", doc.Version)
	require.Equal(t, "LittleEndian", doc.ByteOrder)
	require.Equal(t, "UInt64", doc.HeaderType)
	arrays := doc.Image.Piece.CellData.Arrays
	require.NotEmpty(t, arrays)
	require.Equal(t, arrays[0].Name, doc.Image.Piece.CellData.Scalars)

	// After the tag, whitespace, then the underscore that starts the data.
	rest := bytes.TrimLeft(raw[at+len(open):], " \n\t")
	require.Equal(t, byte('_'), rest[0])
	block := rest[1:]
	var all [][]float64
	end := 0
	for _, arr := range arrays {
		require.Equal(t, "appended", arr.Format)
		require.Equal(t, "1", arr.Components)
		off, err := strconv.Atoi(arr.Offset)
		require.NoError(t, err)
		require.Equal(t, end, off, "array %s starts where the one before ends", arr.Name)
		vals, rest := readBlock(t, doc, arr, block[off:])
		end = len(block) - len(rest)
		all = append(all, vals)
	}
	require.True(t, bytes.HasPrefix(block[end:], []byte("\n  </AppendedData>\n</VTKFile>")), "the blocks end where their headers say")
	return doc, all
}

// readBlock reads the appended block of array arr at the start of data:
// its values, widened to float64, and what follows it.
func readBlock(t *testing.T, doc vtiDoc, arr arrayDoc, data []byte) ([]float64, []byte) {
	t.Helper()

	u64 := func() uint64 {
		require.GreaterOrEqual(t, len(data), 8)
		v := binary.LittleEndian.Uint64(data)
		data = data[8:]
		return v
	}
	var payload []byte
	switch doc.Compressor {
	case "":
		n := u64()
		require.GreaterOrEqual(t, uint64(len(data)), n)
		payload, data = data[:n], data[n:]
	case "vtkZLibDataCompressor":
		nblocks, bsize, partial := u64(), u64(), u64()
		csize := make([]uint64, nblocks)
		for k := range csize {
			csize[k] = u64()
		}
		for k, c := range csize {
			zr, err := zlib.NewReader(bytes.NewReader(data[:c]))
			require.NoError(t, err)
			block, err := io.ReadAll(zr)
			require.NoError(t, err)
			want := bsize
			if uint64(k) == nblocks-1 && partial != 0 {
				want = partial
			}
			require.Equal(t, want, uint64(len(block)), "block %d", k)
			payload = append(payload, block...)
			data = data[c:]
		}
	default:
		t.Fatalf("unknown compressor %q", doc.Compressor)
	}
	var vals []float64
	switch arr.Type {
	case "UInt8":
		for _, b := range payload {
			vals = append(vals, float64(b))
		}
	case "Float64":
		require.Zero(t, len(payload)%8)
		for i := 0; i < len(payload); i += 8 {
			vals = append(vals, math.Float64frombits(binary.LittleEndian.Uint64(payload[i:])))
		}
	case "Float32":
		require.Zero(t, len(payload)%4)
		for i := 0; i < len(payload); i += 4 {
			vals = append(vals, float64(math.Float32frombits(binary.LittleEndian.Uint32(payload[i:]))))
		}
	default:
		t.Fatalf("unexpected type %q", arr.Type)
	}
	require.Equal(t, cellsOf(t, doc.Image.Piece.Extent), len(vals), "one value per cell of the piece")
	return vals, data
}

// ints parses a space-separated list of integers.
func ints(t *testing.T, s string) []int {
	t.Helper()
	var v []int
	for _, f := range strings.Fields(s) {
		n, err := strconv.Atoi(f)
		require.NoError(t, err)
		v = append(v, n)
	}
	return v
}

// cellsOf counts the cells of a VTK point extent; a flat axis (0..0) counts one.
func cellsOf(t *testing.T, extent string) int {
	e := ints(t, extent)
	require.Len(t, e, 6)
	n := 1
	for a := range 3 {
		n *= max(e[2*a+1]-e[2*a], 1)
	}
	return n
}

// testField has distinct, awkward values: fractions, negatives, huge and
// tiny magnitudes, a NaN and infinities, so any reordering or truncation shows.
func testField(n int) []float64 {
	f := make([]float64, n)
	for k := range f {
		f[k] = (float64(k) + 1.0/3) * math.Pow(-1.5, float64(k%7))
	}
	f[0] = math.NaN()
	if n > 3 {
		f[1], f[2], f[3] = math.Inf(1), 1e-300, -1e300
	}
	return f
}

func sameValue(want, got float64) bool {
	return want == got || (math.IsNaN(want) && math.IsNaN(got))
}

func TestVTIRoundTrip(t *testing.T) {
	shapes := [][]int{
		{5, 7},       // 2D, one small block
		{64, 64},     // 2D Float64: exactly one full 32 KiB block (partial size 0)
		{20, 30, 41}, // 3D: several blocks and a partial last one
		{1, 1, 1},
	}
	for _, shape := range shapes {
		for _, f32 := range []bool{false, true} {
			for _, comp := range []bool{false, true} {
				o := Options{Float32: f32, Compress: comp}
				t.Run(fmt.Sprintf("shape=%v/float32=%v/compress=%v", shape, f32, comp), func(t *testing.T) {
					g := Grid{Shape: shape}
					n := 1
					for _, s := range shape {
						n *= s
					}
					field := testField(n)
					path := filepath.Join(t.TempDir(), "u.vti")
					require.NoError(t, WriteVTI(path, g, make([]int, len(shape)), shape, field, o))

					doc, got := readVTI(t, path)
					require.Len(t, got, n)
					for k, v := range field {
						want := v
						if f32 {
							want = float64(float32(v))
						}
						require.True(t, sameValue(want, got[k]), "value %d: want %g, got %g", k, want, got[k])
					}
					arr := doc.Image.Piece.CellData.Arrays[0]
					require.Equal(t, "u", arr.Name)
					require.Equal(t, map[bool]string{false: "Float64", true: "Float32"}[f32], arr.Type)
					require.Equal(t, doc.Image.WholeExtent, doc.Image.Piece.Extent)
				})
			}
		}
	}
}

func TestExtentsOriginSpacingAreXFirst(t *testing.T) {
	dir := t.TempDir()
	// 3D: shape [nz, ny, nx] = [4, 5, 6]; the box is z 1..3, y 2..5, x 3..6.
	g := Grid{Shape: []int{4, 5, 6}, Spacing: []float64{0.3, 0.2, 0.1}, Origin: []float64{3, 2, 1}}
	lo, hi := []int{1, 2, 3}, []int{3, 5, 6}
	path := filepath.Join(dir, "box.vti")
	require.NoError(t, WriteVTI(path, g, lo, hi, testField(2*3*3), Options{}))
	doc, _ := readVTI(t, path)
	require.Equal(t, "0 6 0 5 0 4", doc.Image.WholeExtent)
	require.Equal(t, "3 6 2 5 1 3", doc.Image.Piece.Extent)
	require.Equal(t, "1 2 3", doc.Image.Origin)
	require.Equal(t, "0.1 0.2 0.3", doc.Image.Spacing)

	// 2D: shape [ny, nx] = [5, 6] becomes one point thick in z.
	g2 := Grid{Shape: []int{5, 6}, Spacing: []float64{0.25, 0.125}, Origin: []float64{-1, 2}}
	path = filepath.Join(dir, "flat.vti")
	require.NoError(t, WriteVTI(path, g2, []int{0, 0}, []int{5, 6}, testField(30), Options{}))
	doc, _ = readVTI(t, path)
	require.Equal(t, "0 6 0 5 0 0", doc.Image.WholeExtent)
	require.Equal(t, "0 6 0 5 0 0", doc.Image.Piece.Extent)
	require.Equal(t, "2 -1 0", doc.Image.Origin)
	require.Equal(t, "0.125 0.25 1", doc.Image.Spacing)

	// Defaults: origin 0, spacing 1.
	path = filepath.Join(dir, "plain.vti")
	require.NoError(t, WriteVTI(path, Grid{Shape: []int{2, 3}}, []int{0, 0}, []int{2, 3}, testField(6), Options{}))
	doc, _ = readVTI(t, path)
	require.Equal(t, "0 0 0", doc.Image.Origin)
	require.Equal(t, "1 1 1", doc.Image.Spacing)
}

func TestVTIValuesKeepCOrder(t *testing.T) {
	// VTK's cell order is x fastest, then y, then z: heat's C order. Value
	// (k, j, i) must sit at (k*ny + j)*nx + i.
	const nz, ny, nx = 3, 4, 5
	field := make([]float64, nz*ny*nx)
	for k := range nz {
		for j := range ny {
			for i := range nx {
				field[(k*ny+j)*nx+i] = float64(100*k + 10*j + i)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "u.vti")
	require.NoError(t, WriteVTI(path, Grid{Shape: []int{nz, ny, nx}}, []int{0, 0, 0}, []int{nz, ny, nx}, field, Options{}))
	_, got := readVTI(t, path)
	require.Equal(t, field, got)
}

func TestArrayName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "u.vti")
	require.NoError(t, WriteVTI(path, Grid{Shape: []int{2, 2}}, []int{0, 0}, []int{2, 2}, testField(4), Options{Name: `T "K" & <more>`}))
	doc, _ := readVTI(t, path)
	require.Equal(t, `T "K" & <more>`, doc.Image.Piece.CellData.Arrays[0].Name)
}

func TestWriteVTIRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.vti")
	cases := []struct {
		g      Grid
		lo, hi []int
		n      int
		want   string
	}{
		{Grid{Shape: []int{4}}, []int{0}, []int{4}, 4, "must have 2 or 3 axes"},
		{Grid{Shape: []int{0, 4}}, []int{0, 0}, []int{0, 4}, 0, "must be positive"},
		{Grid{Shape: []int{2, 4}, Spacing: []float64{1}}, []int{0, 0}, []int{2, 4}, 8, "needs 2 values"},
		{Grid{Shape: []int{2, 4}, Spacing: []float64{1, -1}}, []int{0, 0}, []int{2, 4}, 8, "positive and finite"},
		{Grid{Shape: []int{2, 4}, Origin: []float64{0, math.NaN()}}, []int{0, 0}, []int{2, 4}, 8, "must be finite"},
		{Grid{Shape: []int{2, 4}}, []int{0, 0}, []int{2, 5}, 10, "axis 1 must satisfy 0 <= lo < hi <= 4"},
		{Grid{Shape: []int{2, 4}}, []int{1, 0}, []int{1, 4}, 0, "axis 0"},
		{Grid{Shape: []int{2, 4}}, []int{0}, []int{2}, 2, "needs 2 values per corner"},
		{Grid{Shape: []int{2, 4}}, []int{0, 0}, []int{2, 4}, 7, "field has 7 values, box [0 0]..[2 4] needs 8"},
	}
	for _, c := range cases {
		err := WriteVTI(path, c.g, c.lo, c.hi, make([]float64, c.n), Options{})
		require.ErrorContains(t, err, c.want, "%+v", c)
	}
	_, err := os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "nothing written on error")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries)
}

// pvtiDoc is a .pvti as encoding/xml reads it.
type pvtiDoc struct {
	Type       string `xml:"type,attr"`
	Version    string `xml:"version,attr"`
	ByteOrder  string `xml:"byte_order,attr"`
	HeaderType string `xml:"header_type,attr"`
	Image      struct {
		WholeExtent string `xml:"WholeExtent,attr"`
		GhostLevel  string `xml:"GhostLevel,attr"`
		Origin      string `xml:"Origin,attr"`
		Spacing     string `xml:"Spacing,attr"`
		CellData    struct {
			Scalars string     `xml:"Scalars,attr"`
			Arrays  []arrayDoc `xml:"PDataArray"`
		} `xml:"PCellData"`
		Pieces []struct {
			Extent string `xml:"Extent,attr"`
			Source string `xml:"Source,attr"`
		} `xml:"Piece"`
	} `xml:"PImageData"`
}

// split cuts n cells at the given interior points into [lo, hi) ranges.
func split(n int, cuts ...int) [][2]int {
	var r [][2]int
	lo := 0
	for _, c := range append(cuts, n) {
		r = append(r, [2]int{lo, c})
		lo = c
	}
	return r
}

func TestPVTIJoinsPiecesThatTileTheGrid(t *testing.T) {
	dir := t.TempDir()
	const nz, ny, nx = 5, 7, 9
	g := Grid{Shape: []int{nz, ny, nx}, Spacing: []float64{0.5, 0.25, 0.125}, Origin: []float64{1, 2, 3}}
	o := Options{Float32: true, Compress: true, Name: "T"}
	global := testField(nz * ny * nx)

	// 2×2×3 uneven boxes, as a decomposition would make them; each rank
	// writes its box into pieces/.
	require.NoError(t, os.Mkdir(filepath.Join(dir, "pieces"), 0o755))
	var pieces []Piece
	for _, z := range split(nz, 2) {
		for _, y := range split(ny, 3) {
			for _, x := range split(nx, 4, 6) {
				lo, hi := []int{z[0], y[0], x[0]}, []int{z[1], y[1], x[1]}
				var box []float64
				for k := lo[0]; k < hi[0]; k++ {
					for j := lo[1]; j < hi[1]; j++ {
						box = append(box, global[(k*ny+j)*nx+lo[2]:(k*ny+j)*nx+hi[2]]...)
					}
				}
				src := filepath.Join(dir, "pieces", fmt.Sprintf("u-r%d.vti", len(pieces)))
				require.NoError(t, WriteVTI(src, g, lo, hi, box, o))
				pieces = append(pieces, Piece{Lo: lo, Hi: hi, Source: src})
			}
		}
	}
	path := filepath.Join(dir, "u.pvti")
	require.NoError(t, WritePVTI(path, g, pieces, o))

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc pvtiDoc
	require.NoError(t, xml.Unmarshal(raw, &doc))
	require.Equal(t, "PImageData", doc.Type)
	require.Equal(t, "1.0", doc.Version)
	require.Equal(t, "LittleEndian", doc.ByteOrder)
	require.Equal(t, "UInt64", doc.HeaderType)
	require.Equal(t, "0 9 0 7 0 5", doc.Image.WholeExtent)
	require.Equal(t, "0", doc.Image.GhostLevel)
	require.Equal(t, "3 2 1", doc.Image.Origin)
	require.Equal(t, "0.125 0.25 0.5", doc.Image.Spacing)
	require.Equal(t, "T", doc.Image.CellData.Scalars)
	require.Equal(t, []arrayDoc{{Type: "Float32", Name: "T", Components: "1"}}, doc.Image.CellData.Arrays)
	require.Len(t, doc.Image.Pieces, len(pieces))

	// Every cell of the whole extent is in exactly one piece, and each
	// piece's file holds the global values of its cells.
	seen := make([]int, len(global))
	got := make([]float64, len(global))
	for k, p := range doc.Image.Pieces {
		require.Equal(t, fmt.Sprintf("pieces/u-r%d.vti", k), p.Source, "Source is relative to the .pvti")
		e := ints(t, p.Extent) // x0 x1 y0 y1 z0 z1, in points
		vti, vals := readVTI(t, filepath.Join(dir, filepath.FromSlash(p.Source)))
		require.Equal(t, p.Extent, vti.Image.Piece.Extent)
		require.Equal(t, doc.Image.WholeExtent, vti.Image.WholeExtent)
		require.Equal(t, doc.Image.Origin, vti.Image.Origin)
		require.Equal(t, doc.Image.Spacing, vti.Image.Spacing)
		n := 0
		for z := e[4]; z < e[5]; z++ {
			for y := e[2]; y < e[3]; y++ {
				for x := e[0]; x < e[1]; x++ {
					c := (z*ny+y)*nx + x
					seen[c]++
					got[c] = vals[n]
					n++
				}
			}
		}
	}
	for c := range global {
		require.Equal(t, 1, seen[c], "cell %d", c)
		require.True(t, sameValue(float64(float32(global[c])), got[c]), "cell %d: want %g, got %g", c, global[c], got[c])
	}
}

func TestPVTIRejectsPiecesThatDoNotTile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "u.pvti")
	g := Grid{Shape: []int{4, 6}}
	left := Piece{Lo: []int{0, 0}, Hi: []int{4, 3}, Source: "a.vti"}
	right := Piece{Lo: []int{0, 3}, Hi: []int{4, 6}, Source: "b.vti"}
	require.NoError(t, WritePVTI(path, g, []Piece{left, right}, Options{}))

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc pvtiDoc
	require.NoError(t, xml.Unmarshal(raw, &doc))
	require.Equal(t, "a.vti", doc.Image.Pieces[0].Source, "names relative to the .pvti stay as they are")
	require.Equal(t, "b.vti", doc.Image.Pieces[1].Source)

	cases := []struct {
		pieces []Piece
		want   string
	}{
		{nil, "no pieces"},
		{[]Piece{left}, "pieces cover 12 of the grid's 24 cells"},
		{[]Piece{left, right, {Lo: []int{1, 2}, Hi: []int{2, 4}, Source: "c.vti"}}, "pieces 0 ([0 0]..[4 3]) and 2 ([1 2]..[2 4]) overlap"},
		{[]Piece{left, {Lo: []int{0, 3}, Hi: []int{4, 7}, Source: "b.vti"}}, "piece 1: box [0 3]..[4 7]"},
		{[]Piece{left, {Lo: []int{0, 3}, Hi: []int{4, 6}}}, "piece 1: empty Source"},
	}
	for _, c := range cases {
		require.ErrorContains(t, WritePVTI(path, g, c.pieces, Options{}), c.want)
	}
}

// Extra arrays (a run's media) are stored beside the field in the same
// piece, each its own appended block at its offset, the field staying the
// active scalars; a UInt8 array takes a byte a cell. The .pvti lists them.
func TestExtraArrays(t *testing.T) {
	for _, o := range []Options{{}, {Float32: true}, {Compress: true}, {Float32: true, Compress: true, Name: "T"}} {
		t.Run(fmt.Sprintf("float32=%v/compress=%v", o.Float32, o.Compress), func(t *testing.T) {
			dir := t.TempDir()
			g := Grid{Shape: []int{6, 1000}} // Float64: two zlib blocks of 32 KiB each array
			lo, hi := []int{1, 0}, []int{6, 1000}
			n := 5 * 1000
			field, k, rc, mask := testField(n), make([]float64, n), make([]float64, n), make([]float64, n)
			for i := range k {
				k[i], rc[i], mask[i] = float64(i%3)*1.5, 1e6+float64(i), float64(i%2)
			}
			o.Extra = []Array{{Name: "k", Data: k}, {Name: "rho_c", Data: rc}, {Name: "mask", Data: mask, UInt8: true}}
			path := filepath.Join(dir, "u.vti")
			require.NoError(t, WriteVTI(path, g, lo, hi, field, o))
			doc, vals := readVTIArrays(t, path)
			name, typ := "u", "Float64"
			if o.Name != "" {
				name = o.Name
			}
			if o.Float32 {
				typ = "Float32"
			}
			var names, types []string
			for _, a := range doc.Image.Piece.CellData.Arrays {
				names, types = append(names, a.Name), append(types, a.Type)
			}
			require.Equal(t, []string{name, "k", "rho_c", "mask"}, names)
			require.Equal(t, []string{typ, typ, typ, "UInt8"}, types)
			require.Equal(t, name, doc.Image.Piece.CellData.Scalars)
			for a, want := range [][]float64{field, k, rc, mask} {
				for i := range want {
					w := want[i]
					if o.Float32 {
						w = float64(float32(w))
					}
					require.True(t, sameValue(w, vals[a][i]), "array %s cell %d: want %v, got %v", names[a], i, w, vals[a][i])
				}
			}

			pvti := filepath.Join(dir, "u.pvti")
			o.Extra[0].Data = nil // the .pvti reads no values
			require.NoError(t, WritePVTI(pvti, g, []Piece{{Lo: []int{0, 0}, Hi: []int{1, 1000}, Source: "a.vti"}, {Lo: lo, Hi: hi, Source: path}}, o))
			raw, err := os.ReadFile(pvti)
			require.NoError(t, err)
			var pdoc pvtiDoc
			require.NoError(t, xml.Unmarshal(raw, &pdoc))
			require.Equal(t, name, pdoc.Image.CellData.Scalars)
			require.Equal(t, []arrayDoc{{Type: typ, Name: name, Components: "1"}, {Type: typ, Name: "k", Components: "1"},
				{Type: typ, Name: "rho_c", Components: "1"}, {Type: "UInt8", Name: "mask", Components: "1"}}, pdoc.Image.CellData.Arrays)
		})
	}
}

// Extra arrays that cannot be stored are refused, naming the array.
func TestExtraArraysRejected(t *testing.T) {
	g := Grid{Shape: []int{2, 3}}
	lo, hi := []int{0, 0}, []int{2, 3}
	field := testField(6)
	for _, tc := range []struct {
		extra []Array
		want  string
	}{
		{[]Array{{Name: "k", Data: make([]float64, 5)}}, `array "k" has 5 values, the box 6 cells`},
		{[]Array{{Name: "u", Data: field}}, `array name "u" given twice`},
		{[]Array{{Name: "k", Data: field}, {Name: "k", Data: field}}, `array name "k" given twice`},
		{[]Array{{Data: field}}, "no name"},
		{[]Array{{Name: "mask", Data: []float64{0, 1, 2, 3, 256, 0}, UInt8: true}}, `array "mask" is UInt8, but its value 4 is 256`},
		{[]Array{{Name: "mask", Data: []float64{0, 1, math.NaN(), 0, 0, 0}, UInt8: true}}, `its value 2 is NaN`},
	} {
		err := WriteVTI(filepath.Join(t.TempDir(), "u.vti"), g, lo, hi, field, Options{Extra: tc.extra})
		require.ErrorContains(t, err, tc.want)
	}
}
