package media

import (
	"math/rand/v2"
	"testing"

	"heat/field"

	"github.com/stretchr/testify/require"
)

// A material whose region holds no cell centre — a thin layer between two
// rows of centres, a ball between four, a region off the grid — is
// refused naming material[i], its name, the region and the cell size (it
// was dropped without a word); one that holds a single centre is taken.
func TestMaterialCoversNoCell(t *testing.T) {
	shape := []int{8, 8} // cells 0.125 wide: centres 0.0625, 0.1875, 0.3125, …
	for _, c := range []struct {
		name string
		r    Region
		want string // "" when it covers a centre
	}{
		{"layer between centres", Region{Kind: Box, Lo: []float64{0.2, 0}, Hi: []float64{0.3125, 1}},
			"along y no cell centre lies in [0.2, 0.3125): the centres on either side are 0.1875 and 0.3125 (cells 0.125 wide)"},
		{"layer on a centre", Region{Kind: Box, Lo: []float64{0.3125, 0}, Hi: []float64{0.3126, 1}}, ""},
		{"past the grid", Region{Kind: Box, Lo: []float64{0, 1.5}, Hi: []float64{1, 2}},
			"along x no cell centre lies in [1.5, 2): the last centre is 0.9375 (cells 0.125 wide)"},
		{"before the grid", Region{Kind: Box, Lo: []float64{-1, 0}, Hi: []float64{0.0625, 1}},
			"along y no cell centre lies in [-1, 0.0625): the first centre is 0.0625 (cells 0.125 wide)"},
		{"ball between four centres", Region{Kind: Ball, Center: []float64{0.25, 0.25}, Radius: 0.08},
			"the cell centre nearest [0.25 0.25] is [0.1875 0.1875], at distance 0.08838834764831845 > radius 0.08 (cell size [0.125 0.125])"},
		{"ball reaching four centres", Region{Kind: Ball, Center: []float64{0.25, 0.25}, Radius: 0.09}, ""},
		{"half-space off the grid", Region{Kind: HalfSpace, Point: []float64{0, 1.2}, Normal: []float64{0, 1}},
			"every cell centre lies behind the plane through [0 1.2] with normal [0 1] (cell size [0.125 0.125])"},
		{"half-space over the grid", Region{Kind: HalfSpace, Point: []float64{0, 1.2}, Normal: []float64{0, -1}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Spec{Shape: shape, K: 1, Materials: []Material{
				{Region: Region{Kind: Box, Lo: []float64{0, 0}, Hi: []float64{1, 1}}, K: 2},
				{Name: "film", Region: c.r, K: 5},
			}}
			err := s.Check()
			if c.want == "" {
				require.NoError(t, err)
				return
			}
			want := `media: material[1].region ("film"): covers no cell centre, so it would set nothing: ` + c.want
			require.EqualError(t, err, want)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, "material[1].region", fe.Key())
			_, err = s.Fill([]int{0, 0}, shape)
			require.EqualError(t, err, want)
		})
	}
	s3 := &Spec{Shape: []int{4, 8, 8}, Materials: []Material{{Region: Region{Kind: Cylinder, Center: []float64{0, 0.25, 0.25}, Radius: 0.08, Axis: 0}}}}
	require.ErrorContains(t, s3.Check(), "material[0].region: covers no cell centre, so it would set nothing: the cell centre nearest [0 0.25 0.25] is [0 0.1875 0.1875]")
}

// The check is exact: over many random regions on an uneven grid it says
// a region covers no cell centre exactly when no cell's centre, as Fill
// computes it, lies in the region.
func TestCoversNoneMatchesFill(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, shape := range [][]int{{7, 5}, {3, 4, 6}} {
		nd := len(shape)
		length := []float64{1.3, 0.7, 2.1}[:nd]
		s := &Spec{Shape: shape, Length: length}
		coord := func(a int) float64 {
			h := length[a] / float64(shape[a])
			// Near cell centres and faces, sometimes exactly on them, and
			// sometimes off the grid.
			return float64(rng.IntN(2*shape[a]+4)-2)*h/2 + []float64{0, 1e-12, -1e-12, 0.01 * h}[rng.IntN(4)]
		}
		for range 3000 {
			var r Region
			switch k := Kinds[rng.IntN(len(Kinds))]; k {
			case Box:
				r = Region{Kind: Box, Lo: make([]float64, nd), Hi: make([]float64, nd)}
				for a := range nd {
					r.Lo[a] = coord(a)
					r.Hi[a] = r.Lo[a] + []float64{1e-9, 0.3, 1}[rng.IntN(3)]*length[a]/float64(shape[a])
				}
			case Ball, Cylinder:
				if k == Cylinder && nd != 3 {
					k = Ball
				}
				r = Region{Kind: k, Center: make([]float64, nd), Radius: rng.Float64() * 0.2}
				if k == Cylinder {
					r.Axis = rng.IntN(3)
				}
				for a := range nd {
					r.Center[a] = coord(a)
				}
			case HalfSpace:
				r = Region{Kind: HalfSpace, Point: make([]float64, nd), Normal: make([]float64, nd)}
				for a := range nd {
					r.Point[a] = coord(a) * 1.5
					r.Normal[a] = float64(rng.IntN(3) - 1)
				}
				r.Normal[rng.IntN(nd)] = 1
			}
			any := false
			x := make([]float64, nd)
			for k := range field.Cells(shape) {
				idx := unravel(k, shape)
				for a := range nd {
					x[a] = s.geometry().Centre(a, idx[a])
				}
				any = any || r.Contains(x)
			}
			require.Equal(t, !any, s.coversNone(&r) != "", "%+v on %v", r, shape)
		}
	}
}

// Coverage counts each material's cells and its extent: a material under a
// later one that covers it sets nothing, a thin layer is the one row of
// centres it holds, drawn as that row's faces.
func TestCoverage(t *testing.T) {
	box := func(lo, hi []float64) Material {
		return Material{K: 2, Region: Region{Kind: Box, Lo: lo, Hi: hi}}
	}
	s := &Spec{Shape: []int{10, 20}, Length: []float64{1, 2}, K: 1, Materials: []Material{
		box([]float64{0, 0}, []float64{1, 1}),       // the left half: 100 cells
		box([]float64{0, 0}, []float64{1, 1.2}),     // over it, and 2 columns more
		box([]float64{0.44, 0}, []float64{0.46, 2}), // one row of centres (y = 0.45)
	}}
	cov, ok := s.Coverage()
	require.True(t, ok)
	require.Equal(t, Coverage{Region: 100}, cov[0])
	require.Equal(t, 120, cov[1].Region)
	require.Equal(t, 108, cov[1].Owned, "the layer takes its 12 cells of a row")
	require.Equal(t, []float64{0, 0}, cov[1].Lo)
	require.InDeltaSlice(t, []float64{1, 1.2}, cov[1].Hi, 1e-15)
	require.Equal(t, Coverage{Region: 20, Owned: 20, Lo: []float64{0.4, 0}, Hi: []float64{0.5, 2}}, cov[2])
	big := &Spec{Shape: []int{8192, 8192}, K: 1, Materials: s.Materials}
	_, ok = big.Coverage()
	require.False(t, ok)
}
