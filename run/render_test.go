package run

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/checkpoint"
	"heat/io/config"
)

// wideMedia is twoMaterials with conductivities over 6 decades (0.004 to
// 5000) and a 4×4 block of holes at the origin (pixel (0, 0) at factor 4).
func wideMedia() *twoMaterials {
	m := newTwoMaterials([]int{24, 20}, 17)
	for i := range m.k {
		switch {
		case m.k[i] == 0:
		case i%11 == 0:
			m.k[i] = 5000
		case i%13 == 0:
			m.k[i] = 0.004
		}
	}
	for y := range 4 {
		for x := range 4 {
			m.k[m.at([]int{y, x})] = 0
		}
	}
	return m
}

// pixels is the 4×4 box average of the values f gives each cell of m's
// grid, leaving the holes out (NaN for a pixel of holes only).
func pixels(m *twoMaterials, f func(i int) float64) []float64 {
	ny, nx := m.shape[0], m.shape[1]
	var out []float64
	for Y := 0; Y < ny; Y += 4 {
		for X := 0; X < nx; X += 4 {
			sum, n := 0.0, 0
			for y := Y; y < Y+4; y++ {
				for x := X; x < X+4; x++ {
					if i := y*nx + x; m.k[i] != 0 {
						sum += f(i)
						n++
					}
				}
			}
			out = append(out, sum/float64(n)) // 0/0: NaN
		}
	}
	return out
}

func requirePlane(t *testing.T, want, got []float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		if math.IsNaN(want[i]) {
			require.True(t, math.IsNaN(got[i]), "%s pixel %d: %v, want NaN (masked)", what, i, got[i])
			continue
		}
		require.InDelta(t, want[i], got[i], 1e-12, "%s pixel %d", what, i)
	}
}

// heat render --field draws the media a checkpoint keeps: k over more than
// 3 decades as log10 k, rho_c and the mask as they are, and in every
// field (u too) the holes masked.
func TestRenderMedia(t *testing.T) {
	m := wideMedia()
	ck := writeMediaCheckpoint(t, mediaSpec(m), 2, 10)
	o := RenderOptions{Size: 6} // factor 4: 6×5 pixels

	pic, err := renderPicture(ck, "k", o)
	require.NoError(t, err)
	require.True(t, pic.logged)
	require.Equal(t, [2]int{6, 5}, [2]int{pic.ny, pic.nx})
	requirePlane(t, pixels(m, func(i int) float64 { return math.Log10(m.k[i]) }), pic.plane, "k")
	require.Equal(t, "log10 k", pic.p.Label)
	require.InDelta(t, math.Log10(0.004), float64(pic.p.Min), 1e-15)
	require.InDelta(t, math.Log10(5000), float64(pic.p.Max), 1e-15)
	require.Nil(t, pic.p.Range)

	pic, err = renderPicture(ck, "rho_c", o)
	require.NoError(t, err)
	require.False(t, pic.logged, "1 to 2.5: linear")
	requirePlane(t, pixels(m, func(i int) float64 { return m.rhoC[i] }), pic.plane, "rho_c")
	require.Equal(t, "rho_c", pic.p.Label)

	pic, err = renderPicture(ck, "mask", o)
	require.NoError(t, err)
	require.False(t, pic.logged)
	requirePlane(t, pixels(m, func(i int) float64 {
		if math.IsNaN(m.held[i]) {
			return 0
		}
		return 1
	}), pic.plane, "mask")

	pic, err = renderPicture(ck, "u", o)
	require.NoError(t, err)
	require.True(t, math.IsNaN(pic.plane[0]), "u's holes masked")
	require.False(t, math.IsNaN(pic.plane[1]))
	require.Equal(t, "u", pic.p.Label, "the run's output.label")

	// A range for the log scale is given in k's units.
	pic, err = renderPicture(ck, "k", RenderOptions{Size: 6, Range: []float64{0.01, 1e4}})
	require.NoError(t, err)
	require.InDeltaSlice(t, []float64{-2, 4}, pic.p.Range, 1e-15)
	_, err = renderPicture(ck, "k", RenderOptions{Size: 6, Range: []float64{0, 10}})
	var ue UsageError
	require.True(t, errors.As(err, &ue), "%v", err)
	require.ErrorContains(t, err, "log scale")

	// k of two materials 40 apart: linear.
	narrow := writeMediaCheckpoint(t, mediaSpec(newTwoMaterials([]int{24, 20}, 3)), 1, 5)
	pic, err = renderPicture(narrow, "k", o)
	require.NoError(t, err)
	require.False(t, pic.logged)
	require.Equal(t, "k", pic.p.Label)

	// The picture itself, by default beside the checkpoint.
	msg, err := Render(ck.Path(), RenderOptions{Field: "k"})
	require.NoError(t, err)
	require.Equal(t, ck.Path()+"-k.png: k (log scale) of 24x20 at step 10", msg)
	data, err := os.ReadFile(ck.Path() + "-k.png")
	require.NoError(t, err)
	require.Equal(t, "\x89PNG", string(data[:4]))
}

// An unknown field, or one the checkpoint does not hold, is a usage error
// naming the field and listing what the checkpoint holds.
func TestRenderFieldRefused(t *testing.T) {
	media := writeMediaCheckpoint(t, mediaSpec(newTwoMaterials([]int{24, 20}, 3)), 2, 5)
	uniformSpec := mediaSpec(newTwoMaterials([]int{24, 20}, 3))
	uniformSpec.Media, uniformSpec.DT = nil, 0.0005
	uniform := writeMediaCheckpoint(t, uniformSpec, 2, 5)
	for _, tc := range []struct {
		ck          *checkpoint.Checkpoint
		field, want string
	}{
		{media, "T", "render: --field T: not a field heat draws (u, k, rho_c, mask); checkpoint " + media.Path() + " holds u, k, rho_c, mask"},
		{uniform, "k", "render: --field k: checkpoint " + uniform.Path() + " holds no k (it holds u)"},
		{uniform, "mask", "holds no mask (it holds u)"},
	} {
		out := filepath.Join(t.TempDir(), "x.png")
		_, err := Render(tc.ck.Path(), RenderOptions{Field: tc.field, Out: out})
		var ue UsageError
		require.True(t, errors.As(err, &ue), "%v", err)
		require.ErrorContains(t, err, tc.want)
		require.NoFileExists(t, out)
	}
	// u of a uniform run: nothing masked, the field as always.
	pic, err := renderPicture(uniform, "u", RenderOptions{Size: 6})
	require.NoError(t, err)
	for i, v := range pic.plane {
		require.False(t, math.IsNaN(v), "pixel %d", i)
	}
}

func TestSpansDecades(t *testing.T) {
	require.True(t, spansDecades([]float64{1, 1001}, nil))
	require.False(t, spansDecades([]float64{1, 1000}, nil), "3 decades exactly: linear")
	require.True(t, spansDecades([]float64{0.004, 0, 5000}, []float64{0.004, 0, 5000}), "holes aside")
	require.False(t, spansDecades([]float64{0.004, 0, 5000}, nil), "a zero that is not a hole")
	require.False(t, spansDecades([]float64{-1, 5000}, nil))
	require.False(t, spansDecades([]float64{1, math.Inf(1)}, nil))
	require.False(t, spansDecades([]float64{1, math.NaN(), 1e6}, nil))
	require.False(t, spansDecades([]float64{0}, []float64{0}), "holes only")
}

// planeRegions numbers each drawn value of a plane by the last material
// its middle cell lies in: in 2D cell for cell, in 3D in the cut, and
// averaged planes by the middle cell of each block; none without
// materials.
func TestPlaneRegions(t *testing.T) {
	mats := `material=[{name = "a", region = "box", lo = [0.0, 0.0], hi = [0.5, 0.25], k = 2.0}, {name = "b", region = "box", lo = [0.25, 0.0], hi = [1.0, 0.25], k = 3.0}]`
	regions := func(shape []int, spec string, size int, sets ...string) ([]int32, *planeImage) {
		cfg, err := config.Load("", append([]string{"grid.shape=" + strings.ReplaceAll(fmt.Sprint(shape), " ", ",")}, sets...))
		require.NoError(t, err)
		p, err := newPlaneImage(cfg, shape, spec, size, "heat", 0, 0, 0, 0, 1)
		require.NoError(t, err)
		r, err := planeRegions(cfg, shape, spec, p)
		require.NoError(t, err)
		return r, p
	}
	r, _ := regions([]int{8, 8}, "", 64)
	require.Nil(t, r, "no materials")
	r, p := regions([]int{8, 8}, "", 64, mats)
	require.Equal(t, 1, p.Factor)
	// Rows (y) 0–1 of columns 0–1 are a's alone, rows 2–7 b's (over a),
	// columns 2–7 neither.
	for j := range 8 {
		for i := range 8 {
			want := int32(0)
			switch {
			case i < 2 && j < 2:
				want = 1
			case i < 2:
				want = 2
			}
			require.Equal(t, want, r[j*8+i], "cell (%d, %d)", j, i)
		}
	}
	// Averaged 4×: the 64² plane's 16² values, each its block's middle cell.
	r, p = regions([]int{64, 64}, "", 16, mats)
	require.Equal(t, 4, p.Factor)
	require.Len(t, r, 16*16)
	require.Equal(t, []int32{1, 1, 1, 1, 0}, r[0:5])
	require.Equal(t, []int32{2, 2, 2, 2, 0}, r[4*16:4*16+5])
	// 3D: the cut z = 0.875 (its last layer) through both boxes.
	r, _ = regions([]int{4, 8, 8}, "z=3", 64, `material=[{name = "a", region = "box", lo = [0.0, 0.0, 0.0], hi = [1.0, 0.5, 0.25], k = 2.0}, {name = "b", region = "box", lo = [0.5, 0.25, 0.0], hi = [1.0, 1.0, 0.25], k = 3.0}]`)
	require.Len(t, r, 64)
	require.Equal(t, []int32{1, 1, 0}, r[0:3])
	require.Equal(t, []int32{2, 2, 0}, r[2*8:2*8+3])
	require.Equal(t, int32(0), r[7])
	r, _ = regions([]int{4, 8, 8}, "z=0", 64, `material=[{name = "b", region = "box", lo = [0.5, 0.25, 0.0], hi = [1.0, 1.0, 0.25], k = 3.0}]`)
	require.Nil(t, r, "a cut that meets no material")
}
