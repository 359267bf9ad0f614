package media

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func ptr(v float64) *float64 { return &v }

// bits is xs as bit patterns, so that NaNs compare equal.
func bits(xs []float64) []uint64 {
	out := make([]uint64, len(xs))
	for i, x := range xs {
		out[i] = math.Float64bits(x)
	}
	return out
}

// Without maps and materials the media are k = K, ρc = 1, nothing held.
func TestUniform(t *testing.T) {
	s := &Spec{Shape: []int{3, 4}, K: 2.5}
	require.True(t, s.Uniform())
	require.NoError(t, s.Check())
	c, err := s.Fill([]int{1, 1}, []int{3, 3})
	require.NoError(t, err)
	require.Equal(t, []float64{2.5, 2.5, 2.5, 2.5}, c.K)
	require.Equal(t, []float64{1, 1, 1, 1}, c.RhoC)
	for _, f := range c.Fixed {
		require.True(t, math.IsNaN(f))
	}
	require.False(t, (&Spec{Shape: []int{3, 4}, KMap: "k.npy"}).Uniform())
	require.False(t, (&Spec{Shape: []int{3, 4}, Materials: []Material{{}}}).Uniform())
	require.Equal(t, 32, BytesPerCell(2))
	require.Equal(t, 40, BytesPerCell(3))

	c, err = s.Fill([]int{1, 1}, []int{1, 3})
	require.NoError(t, err, "an empty box")
	require.Empty(t, c.K)
	_, err = s.Fill([]int{0, 0}, []int{4, 4})
	require.ErrorContains(t, err, "media: box [0 0] to [4 4] is not inside the grid [3 4]")
	_, err = s.Fill([]int{0}, []int{3})
	require.ErrorContains(t, err, "for a grid of 2 axes")
}

// Each rank fills only its box, and the boxes put together are the whole
// grid's fill: maps (.npy and Zarr, f8 and f4), then materials. A map's
// damage outside a box does not reach that box's fill.
func TestFillBoxesMatchWhole(t *testing.T) {
	for _, shape := range [][]int{{20, 27}, {9, 10, 11}} {
		dir := t.TempDir()
		nd := len(shape)
		k := writeNPY(t, dir, "k.npy", ">f4", shape, nil)
		chunk := make([]int, nd)
		for a := range chunk {
			chunk[a] = 4
		}
		rc := writeZarr(t, dir, "rc", shape, nil, zarrSpec{post: []string{"zstd"}, chunk: chunk})
		centre := make([]float64, nd)
		lo, hi := make([]float64, nd), make([]float64, nd)
		for a := range nd {
			centre[a], lo[a], hi[a] = 0.5, 0.1, 0.6
		}
		mats := []Material{
			{Name: "slab", Region: Region{Kind: Box, Lo: lo, Hi: hi}, K: 100, RhoC: 3, Fixed: ptr(7)},
			{Name: "hole", Region: Region{Kind: Ball, Center: centre, Radius: 0.2}, K: 0},
			{Region: Region{Kind: HalfSpace, Point: centre, Normal: append([]float64{1}, make([]float64, nd-1)...)}, KeepK: true, Fixed: ptr(-2)},
		}
		s := &Spec{Shape: shape, Length: nil, K: 1, KMap: k, RhoCMap: rc, Materials: mats}
		require.NoError(t, s.Check())
		whole, err := s.Fill(make([]int, nd), shape)
		require.NoError(t, err)
		for _, b := range boxes(shape) {
			c, err := s.Fill(b[0], b[1])
			require.NoError(t, err, "%v", b)
			require.Equal(t, bits(sliceOf(whole.K, shape, b[0], b[1])), bits(c.K), "k %v", b)
			require.Equal(t, bits(sliceOf(whole.RhoC, shape, b[0], b[1])), bits(c.RhoC), "rho_c %v", b)
			require.Equal(t, bits(sliceOf(whole.Fixed, shape, b[0], b[1])), bits(c.Fixed), "fixed %v", b)
		}
		// Materials aside, the maps come through as written.
		plain := &Spec{Shape: shape, KMap: k, RhoCMap: rc}
		c, err := plain.Fill(make([]int, nd), shape)
		require.NoError(t, err)
		require.Equal(t, fieldValues(shape), c.K)
		require.Equal(t, fieldValues(shape), c.RhoC)

		// Damage a chunk of the Zarr map far from the first box: only
		// Fills whose box reaches it, and Check, see it.
		last := make([]string, nd)
		for a := range nd {
			last[a] = strconv.Itoa((shape[a] - 1) / chunk[a])
		}
		bad := filepath.Join(append([]string{rc, "c"}, last...)...)
		require.NoError(t, os.WriteFile(bad, []byte("not zstd"), 0o644))
		one := make([]int, nd)
		for a := range one {
			one[a] = 1
		}
		_, err = s.Fill(make([]int, nd), one)
		require.NoError(t, err, "a box that does not reach the damaged chunk reads none of it")
		_, err = s.Fill(make([]int, nd), shape)
		require.ErrorContains(t, err, "media: maps.rho_c: "+bad+": zstd:")
		require.ErrorContains(t, s.Check(), bad)
	}
}

// Materials apply in order over the maps: a later one sets what it gives
// over an earlier one, keeps what it does not (ρc 0, KeepK), and frees
// held cells when it holds none.
func TestMaterialsLaterOverEarlier(t *testing.T) {
	// 8×8 cells of 1/8 on the unit square: centres at (i+0.5)/8.
	s := &Spec{Shape: []int{8, 8}, K: 1, Materials: []Material{
		{Name: "left", Region: Region{Kind: Box, Lo: []float64{0, 0}, Hi: []float64{1, 0.5}}, K: 5, RhoC: 2, Fixed: ptr(1)},
		{Name: "corner", Region: Region{Kind: Box, Lo: []float64{0, 0}, Hi: []float64{0.25, 0.25}}, K: 0},
		{Name: "stripe", Region: Region{Kind: Box, Lo: []float64{0.75, 0}, Hi: []float64{1, 1}}, KeepK: true, RhoC: 9, Fixed: ptr(3)},
	}}
	require.NoError(t, s.Check())
	c, err := s.Fill([]int{0, 0}, []int{8, 8})
	require.NoError(t, err)
	at := func(y, x int) (float64, float64, float64) { i := y*8 + x; return c.K[i], c.RhoC[i], c.Fixed[i] }
	k, rc, f := at(0, 0) // left, then corner
	require.Equal(t, []float64{0, 2}, []float64{k, rc})
	require.True(t, math.IsNaN(f), "corner holds none: the cell is free again")
	k, rc, f = at(3, 2) // left only
	require.Equal(t, []float64{5, 2, 1}, []float64{k, rc, f})
	k, rc, f = at(3, 6) // nothing
	require.Equal(t, []float64{1, 1}, []float64{k, rc})
	require.True(t, math.IsNaN(f))
	k, rc, f = at(7, 1) // left, then stripe: k kept
	require.Equal(t, []float64{5, 9, 3}, []float64{k, rc, f})
	k, rc, f = at(6, 7) // stripe over the background
	require.Equal(t, []float64{1, 9, 3}, []float64{k, rc, f})
}

// count is the number of cells of the grid whose centre lies in r.
func count(t *testing.T, shape []int, r Region) int {
	t.Helper()
	s := &Spec{Shape: shape, K: 1, Materials: []Material{{Region: r, K: 0}}}
	require.NoError(t, s.Check())
	c, err := s.Fill(make([]int, len(shape)), shape)
	require.NoError(t, err)
	n := 0
	for _, k := range c.K {
		if k == 0 {
			n++
		}
	}
	return n
}

// Membership by the cell centre, against counts worked out by hand on
// grids of cells 1/8 wide (centres at odd sixteenths, exact in binary).
func TestRegionMembership(t *testing.T) {
	sq := []int{8, 8}
	// Box: lo inclusive, hi exclusive. y in [3/16, 7/16): centres 3/16,
	// 5/16; x in [0, 1): all 8.
	require.Equal(t, 16, count(t, sq, Region{Kind: Box, Lo: []float64{0.1875, 0}, Hi: []float64{0.4375, 1}}))
	// The same box on a 2×1 domain: x centres at odd eighths; x in
	// [0.5, 1.25) holds 5/8, 7/8, 9/8 → 2·3.
	require.Equal(t, 6, countLen(t, sq, []float64{1, 2}, Region{Kind: Box, Lo: []float64{0.1875, 0.5}, Hi: []float64{0.4375, 1.25}}))
	// A box reaching past the domain holds the cells inside it.
	require.Equal(t, 64, count(t, sq, Region{Kind: Box, Lo: []float64{-1, -1}, Hi: []float64{2, 2}}))
	// Ball (a disc) of radius 1/4 at the centre: offsets (±1, ±1)/16 and
	// (±1, ±3), (±3, ±1)/16 lie within 4/16; (±3, ±3) do not → 4 + 8.
	require.Equal(t, 12, count(t, sq, Region{Kind: Ball, Center: []float64{0.5, 0.5}, Radius: 0.25}))
	// Inclusive on the circle: around a cell centre the others lie at even
	// sixteenths, (0, 0), (0, ±2), (±2, 0) and (±2, ±2) (at 2√2/16) inside
	// 4/16, and (0, ±4), (±4, 0) on the circle itself → 1 + 4 + 4 + 4.
	require.Equal(t, 13, count(t, sq, Region{Kind: Ball, Center: []float64{0.5625, 0.5625}, Radius: 0.25}))
	// Half-space x >= 1/2: 4 columns.
	require.Equal(t, 32, count(t, sq, Region{Kind: HalfSpace, Point: []float64{0.5, 0.5}, Normal: []float64{0, 1}}))
	// Half-space y + x >= 1: of the 64 offset pairs (dy, dx) in odd
	// sixteenths, 8 sum to 0 (on the plane, inside), and half the rest
	// are above it → 28 + 8.
	require.Equal(t, 36, count(t, sq, Region{Kind: HalfSpace, Point: []float64{0.5, 0.5}, Normal: []float64{1, 1}}))
	// The other side, normal −(1, 1): the 28 below and the 8 on it.
	require.Equal(t, 36, count(t, sq, Region{Kind: HalfSpace, Point: []float64{0.5, 0.5}, Normal: []float64{-1, -1}}))
	// Cylinder along z (axis 0) through the centre: the disc's 12 per
	// layer, 4 layers; along x (axis 2) on 8×8×4: 12 per x.
	require.Equal(t, 48, count(t, []int{4, 8, 8}, Region{Kind: Cylinder, Center: []float64{0, 0.5, 0.5}, Radius: 0.25, Axis: 0}))
	require.Equal(t, 48, count(t, []int{8, 8, 4}, Region{Kind: Cylinder, Center: []float64{0.5, 0.5, 99}, Radius: 0.25, Axis: 2}))
	// A 3D ball of radius 1/4: (±1, ±1, ±1) at √3/16 and the 3·8 of
	// (±1, ±1, ±3) at √11/16 → 8 + 24.
	require.Equal(t, 32, count(t, []int{8, 8, 8}, Region{Kind: Ball, Center: []float64{0.5, 0.5, 0.5}, Radius: 0.25}))
}

func countLen(t *testing.T, shape []int, length []float64, r Region) int {
	t.Helper()
	s := &Spec{Shape: shape, Length: length, K: 1, Materials: []Material{{Region: r, K: 0}}}
	require.NoError(t, s.Check())
	c, err := s.Fill(make([]int, len(shape)), shape)
	require.NoError(t, err)
	n := 0
	for _, k := range c.K {
		if k == 0 {
			n++
		}
	}
	return n
}

// A material that is not what its kind needs is refused naming its index
// and the field, with the value; Fill refuses it too.
func TestMaterialRefused(t *testing.T) {
	two := []float64{0.5, 0.5}
	for _, c := range []struct {
		m     Material
		nd    int
		field string
		want  string
	}{
		{Material{Region: Region{Kind: "sphere"}}, 2, "region", `must be "box", "ball", "cylinder" or "half-space" (got "sphere")`},
		{Material{Region: Region{Kind: Ball, Center: []float64{0.5}, Radius: 1}}, 2, "center", "a ball needs center with one coordinate per axis, 2 for this grid, C order (got [0.5])"},
		{Material{Region: Region{Kind: Ball, Center: two, Radius: -1}}, 2, "radius", "must be finite and > 0 (got -1)"},
		{Material{Region: Region{Kind: Ball, Center: two}}, 2, "radius", "must be finite and > 0 (got 0)"},
		{Material{Region: Region{Kind: Box, Lo: two, Hi: []float64{1, 0.5}}}, 2, "hi", "must exceed lo on every axis (lo [0.5 0.5], hi [1 0.5])"},
		{Material{Region: Region{Kind: Box, Lo: two, Hi: []float64{1, 1}, Radius: 2}}, 2, "radius", "a box takes lo, hi; radius 2 would be ignored"},
		{Material{Region: Region{Kind: Box, Lo: two, Hi: []float64{1, 1}, Center: two}}, 2, "center", "a box takes lo, hi; center [0.5 0.5] would be ignored"},
		{Material{Region: Region{Kind: Ball, Center: two, Radius: 1, Axis: 1}}, 2, "axis", "a ball takes center, radius; axis 1 would be ignored"},
		{Material{Region: Region{Kind: Cylinder, Center: two, Radius: 1}}, 2, "region", "a cylinder needs a 3D grid; in 2D a disc is a ball"},
		{Material{Region: Region{Kind: Cylinder, Center: []float64{0, 0, 0}, Radius: 1, Axis: 3}}, 3, "axis", "must be the C-order index of the axis the cylinder runs along, 0 (z), 1 (y) or 2 (x) (got 3)"},
		{Material{Region: Region{Kind: HalfSpace, Point: two, Normal: []float64{0, 0}}}, 2, "normal", "must not be zero (got [0 0])"},
		{Material{Region: Region{Kind: HalfSpace, Point: []float64{math.NaN(), 0}, Normal: two}}, 2, "point", "must hold finite numbers (got [nan 0])"},
		{Material{Region: Region{Kind: Ball, Center: two, Radius: 1}, K: -1}, 2, "k", "must be finite and >= 0; 0 is an insulating hole (got -1)"},
		{Material{Region: Region{Kind: Ball, Center: two, Radius: 1}, K: math.Inf(1)}, 2, "k", "must be finite and >= 0; 0 is an insulating hole (got inf)"},
		{Material{Region: Region{Kind: Ball, Center: two, Radius: 1}, RhoC: -2}, 2, "rho_c", "must be finite and > 0 (got -2)"},
		{Material{Region: Region{Kind: Ball, Center: two, Radius: 1}, Fixed: ptr(math.NaN())}, 2, "fixed", "must be finite (got nan)"},
	} {
		shape := []int{4, 4}
		if c.nd == 3 {
			shape = []int{4, 4, 4}
		}
		ok := Material{Name: "fine", Region: Region{Kind: Ball, Center: make([]float64, c.nd), Radius: 1}, K: 1}
		c.m.Name = "copper"
		s := &Spec{Shape: shape, K: 1, Materials: []Material{ok, c.m}}
		err := s.Check()
		var fe *FieldError
		require.ErrorAs(t, err, &fe, c.want)
		require.Equal(t, 1, fe.Index)
		require.Equal(t, c.field, fe.Field, "%v", err)
		require.Equal(t, "material[1]."+c.field, fe.Key())
		require.ErrorContains(t, err, `media: material[1].`+c.field+` ("copper"): `+c.want)
		_, err = s.Fill(make([]int, c.nd), shape)
		require.ErrorAs(t, err, &fe)
	}
	dup := &Spec{Shape: []int{4, 4}, K: 1, Materials: []Material{
		{Name: "a", Region: Region{Kind: Ball, Center: two, Radius: 1}, K: 1},
		{Name: "a", Region: Region{Kind: Ball, Center: two, Radius: 1}, K: 1},
	}}
	require.ErrorContains(t, dup.Check(), `media: material[1].name ("a"): "a" is also the name of material[0]; names must be unique`)
	require.ErrorContains(t, (&Spec{Shape: []int{4}}).Check(), "want 2 or 3")
	require.ErrorContains(t, (&Spec{Shape: []int{4, 4}, K: -1}).Check(), "the uniform k -1 must be finite and >= 0")
	require.ErrorContains(t, (&Spec{Shape: []int{4, 4}, Length: []float64{1}}).Check(), "1 lengths [1] for a grid of 2 axes")
}
