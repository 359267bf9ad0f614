package run

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
	"heat/field"
	"heat/io/config"
	"heat/io/heatmap"
	"heat/operator"
	"heat/solver"
)

// The PNG's plane, averaged rank by rank into pixels, equals the plane cut
// from the gathered field and box-averaged in one place, on any split, by
// heatmap's rule: NaN cells left out, an infinity winning over finite
// cells, +Inf and -Inf together NaN.
func TestCoarsePlaneMatchesGatheredField(t *testing.T) {
	shape := []int{9, 23, 17}
	for _, spec := range []string{"z=mid", "y=3", "x=0.9"} {
		for _, rt := range [][2]int{{1, 1}, {1, 3}, {3, 2}, {4, 1}} {
			ranks := rt[0]
			sp := solver.Spec{Shape: shape, Length: []float64{1, 1, 1}, Ghost: 1, Equation: solver.Heat, Alpha: 1,
				Faces: make([][2]solver.Face, 3), Initial: solver.Random(shape, 9, 1, 0), Threads: rt[1], Steps: 0, CheckEvery: 1}
			sp.DT = 0.5 * operator.NewUniform(1, sp.Spacing()).StableDT()
			err := local.Run(ranks, func(c comm.Comm) error {
				s, err := solver.New(c, sp)
				if err != nil {
					return err
				}
				defer s.Close()
				// Cells that are not finite are left out of their pixel: a
				// few scattered, and a whole 4×4 block of NaN (pixel (0, 0)
				// of z=mid at factor 4).
				uf := field.Of(s.Field(), s.Layout())
				lay, u := uf.Layout, uf.Data
				for z := lay.Box.Lo[0]; z < lay.Box.Hi[0]; z++ {
					for y := lay.Box.Lo[1]; y < lay.Box.Hi[1]; y++ {
						for x := lay.Box.Lo[2]; x < lay.Box.Hi[2]; x++ {
							i := uf.Index(z, y, x)
							switch {
							case (z*31+y*7+x)%53 == 0:
								u[i] = math.NaN()
							case (z*13+y*5+x)%61 == 0:
								u[i] = math.Inf(1 - 2*(x%2))
							case z == 4 && y < 4 && x < 4:
								u[i] = math.NaN()
							}
						}
					}
				}
				plane, cy, cx, _, lo, hi, err := coarsePlane(c, viewOf(s), spec, 7, new(planeBufs))
				if err != nil {
					return err
				}
				field, err := s.Gather()
				if err != nil || c.Rank() != 0 {
					return err
				}
				full, ny, nx, _, err := heatmap.Slice(field, shape, spec)
				if err != nil {
					return err
				}
				f := heatmap.Factor(ny, nx, 7)
				require.Equal(t, (ny+f-1)/f, cy)
				require.Equal(t, (nx+f-1)/f, cx)
				finite := slices.DeleteFunc(slices.Clone(full), func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) })
				require.Equal(t, slices.Min(finite), lo)
				require.Equal(t, slices.Max(finite), hi)
				nan, infs := 0, 0
				for Y := range cy {
					for X := range cx {
						sum, n, pos, neg := 0.0, 0, false, false
						for y := Y * f; y < min(ny, (Y+1)*f); y++ {
							for x := X * f; x < min(nx, (X+1)*f); x++ {
								switch v := full[y*nx+x]; {
								case math.IsInf(v, 1):
									pos = true
								case math.IsInf(v, -1):
									neg = true
								case !math.IsNaN(v):
									sum += v
									n++
								}
							}
						}
						if pos != neg {
							require.Equal(t, math.Inf(map[bool]int{true: 1, false: -1}[pos]), plane[Y*cx+X], "%s ranks %d pixel %d,%d: an infinity wins", spec, ranks, Y, X)
							infs++
							continue
						}
						if n == 0 || (pos && neg) {
							require.True(t, math.IsNaN(plane[Y*cx+X]), "%s ranks %d pixel %d,%d", spec, ranks, Y, X)
							nan++
							continue
						}
						require.InDelta(t, sum/float64(n), plane[Y*cx+X], 1e-12, "%s ranks %d pixel %d,%d", spec, ranks, Y, X)
					}
				}
				if spec == "z=mid" {
					require.Positive(t, nan, "the all-NaN pixel")
				}
				require.Positive(t, infs, "%s: pixels with infinities", spec)
				return nil
			})
			require.NoError(t, err)
		}
	}
}

// In media the picture leaves the holes (k = 0) out as it leaves out NaN:
// a pixel averages the cells around the holes, one of holes only is NaN
// (drawn masked), and the range is of the cells that are not holes; held
// cells are drawn as they are. The same on any split.
func TestCoarsePlaneMasksHoles(t *testing.T) {
	m := newTwoMaterials([]int{24, 20}, 11)
	for y := range 4 {
		for x := range 4 {
			m.k[m.at([]int{y, x})] = 0 // pixel (0, 0) at factor 4: holes only
		}
	}
	spec := mediaSpec(m)
	for _, ranks := range []int{1, 3, 4} {
		require.NoError(t, local.Run(ranks, func(c comm.Comm) error {
			s, err := solver.New(c, spec)
			if err != nil {
				return err
			}
			defer s.Close()
			if err := s.RunTo(context.Background(), 3); err != nil {
				return err
			}
			// The holes' values (never updated) are far out of the range.
			uf := field.Of(s.Field(), s.Layout())
			eachCell(uf.Layout.Box.Lo, uf.Layout.Box.Hi, func(idx []int) {
				if m.k[m.at(idx)] == 0 {
					uf.Data[uf.Index(idx...)] = 1e9
				}
			})
			plane, cy, cx, _, lo, hi, err := coarsePlane(c, viewOf(s), "", 6, new(planeBufs))
			if err != nil {
				return err
			}
			field, err := s.Gather()
			if err != nil || c.Rank() != 0 {
				return err
			}
			f := heatmap.Factor(24, 20, 6)
			require.Equal(t, 4, f)
			require.Equal(t, [2]int{6, 5}, [2]int{cy, cx})
			wantLo, wantHi := math.Inf(1), math.Inf(-1)
			for i, v := range field {
				if m.k[i] != 0 {
					wantLo, wantHi = min(wantLo, v), max(wantHi, v)
				}
			}
			require.Equal(t, wantLo, lo, "ranks %d", ranks)
			require.Equal(t, wantHi, hi, "ranks %d", ranks)
			for Y := range cy {
				for X := range cx {
					sum, n := 0.0, 0
					for y := Y * f; y < (Y+1)*f; y++ {
						for x := X * f; x < (X+1)*f; x++ {
							if i := y*20 + x; m.k[i] != 0 {
								sum += field[i]
								n++
							}
						}
					}
					if n == 0 {
						require.True(t, math.IsNaN(plane[Y*cx+X]), "ranks %d pixel %d,%d", ranks, Y, X)
						continue
					}
					require.InDelta(t, sum/float64(n), plane[Y*cx+X], 1e-12, "ranks %d pixel %d,%d", ranks, Y, X)
				}
			}
			require.True(t, math.IsNaN(plane[0]), "the pixel of holes only")
			return nil
		}))
	}
}

// A snapshot of a run in media holds k, rho_c and the mask of held cells
// (UInt8) beside u in every .vti piece, and the .pvti lists them.
func TestSnapshotVTIHoldsMedia(t *testing.T) {
	m := newTwoMaterials([]int{24, 20}, 13)
	spec := mediaSpec(m)
	for _, ranks := range []int{1, 3} {
		out := t.TempDir()
		cfg := config.Default()
		cfg.Output.Dir = out
		cfg.Output.Formats = []string{"vti"}
		cfg.Grid.Shape, cfg.Grid.Length = spec.Shape, spec.Length
		cfg.Parallel.Ranks = ranks
		files, err := newManifest(out, "vti-test")
		require.NoError(t, err)
		o, err := openOutputs(cfg, files, false, true)
		require.NoError(t, err)
		g, err := decomp.New(spec.Shape, ranks, nil, nil)
		require.NoError(t, err)
		require.NoError(t, local.Run(ranks, func(c comm.Comm) error {
			s, err := solver.New(c, spec)
			if err != nil {
				return err
			}
			defer s.Close()
			return o.snapshot(c, s)
		}))
		require.NoError(t, o.close())
		require.NoError(t, files.close())
		pieces := []string{filepath.Join(out, "snapshots", "u-00000000.vti")}
		if ranks > 1 {
			pieces = pieces[:0]
			pvti, err := os.ReadFile(filepath.Join(out, "snapshots", "u-00000000.pvti"))
			require.NoError(t, err)
			for _, want := range []string{`type="Float64" Name="u"`, `type="Float64" Name="k"`, `type="Float64" Name="rho_c"`, `type="UInt8" Name="mask"`} {
				require.Contains(t, string(pvti), want)
			}
			for r := range ranks {
				pieces = append(pieces, filepath.Join(out, "snapshots", "u-00000000", fmt.Sprintf("piece-%04d.vti", r)))
			}
		}
		for r, piece := range pieces {
			arrays := readRawVTI(t, piece)
			b := g.Box(r)
			var k, rc, mask []float64
			eachCell(b.Lo, b.Hi, func(idx []int) {
				i := m.at(idx)
				k, rc = append(k, m.k[i]), append(rc, m.rhoC[i])
				mask = append(mask, map[bool]float64{true: 0, false: 1}[math.IsNaN(m.held[i])])
			})
			require.Equal(t, []string{"u", "k", "rho_c", "mask"}, arrays.names, piece)
			require.Equal(t, k, arrays.values[1], piece)
			require.Equal(t, rc, arrays.values[2], piece)
			require.Equal(t, mask, arrays.values[3], piece)
			require.Contains(t, mask, 1.0)
		}
	}
}

// rawVTI is what readRawVTI found in a .vti: its arrays' names and values.
type rawVTI struct {
	names  []string
	values [][]float64
}

// readRawVTI reads the arrays of an uncompressed .vti as vtk writes it
// (appended raw data, UInt64 byte counts; Float64 or UInt8 values).
func readRawVTI(t *testing.T, path string) rawVTI {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	const open = `<AppendedData encoding="raw">`
	at := bytes.Index(raw, []byte(open))
	require.Positive(t, at)
	data := bytes.TrimLeft(raw[at+len(open):], " \n")[1:] // past the _
	var r rawVTI
	re := regexp.MustCompile(`<DataArray type="(\w+)" Name="(\w+)" NumberOfComponents="1" format="appended" offset="(\d+)"/>`)
	for _, m := range re.FindAllSubmatch(raw[:at], -1) {
		off, err := strconv.Atoi(string(m[3]))
		require.NoError(t, err)
		n := binary.LittleEndian.Uint64(data[off:])
		block := data[off+8 : off+8+int(n)]
		var vals []float64
		switch string(m[1]) {
		case "Float64":
			for i := 0; i < len(block); i += 8 {
				vals = append(vals, math.Float64frombits(binary.LittleEndian.Uint64(block[i:])))
			}
		case "UInt8":
			for _, b := range block {
				vals = append(vals, float64(b))
			}
		default:
			t.Fatalf("%s: type %s", path, m[1])
		}
		r.names, r.values = append(r.names, string(m[2])), append(r.values, vals)
	}
	return r
}
