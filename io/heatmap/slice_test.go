package heatmap

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSlicePicksThePlane(t *testing.T) {
	const nz, ny, nx = 4, 5, 6
	shape := []int{nz, ny, nx}
	field := ramp(1, nz*ny*nx) // each value is its C-order index (k*ny + j)*nx + i
	idx := func(k, j, i int) float64 { return float64((k*ny+j)*nx + i) }

	cases := []struct {
		spec       string
		ny, nx     int
		label      string
		want       func(r, c int) float64
		planeIndex int
	}{
		{"", ny, nx, "z=2", func(r, c int) float64 { return idx(2, r, c) }, 0},
		{"z=mid", ny, nx, "z=2", func(r, c int) float64 { return idx(2, r, c) }, 0},
		{"z=3", ny, nx, "z=3", func(r, c int) float64 { return idx(3, r, c) }, 0},
		{"z=0.0", ny, nx, "z=0", func(r, c int) float64 { return idx(0, r, c) }, 0},
		{"z=1.0", ny, nx, "z=3", func(r, c int) float64 { return idx(3, r, c) }, 0},
		{"y=1", nz, nx, "y=1", func(r, c int) float64 { return idx(r, 1, c) }, 0},
		{"y=mid", nz, nx, "y=2", func(r, c int) float64 { return idx(r, 2, c) }, 0},
		{"x=0.25", nz, ny, "x=1", func(r, c int) float64 { return idx(r, c, 1) }, 0},
		{" x = 5 ", nz, ny, "x=5", func(r, c int) float64 { return idx(r, c, 5) }, 0},
	}
	for _, c := range cases {
		plane, gy, gx, label, err := Slice(field, shape, c.spec)
		require.NoError(t, err, c.spec)
		require.Equal(t, [2]int{c.ny, c.nx}, [2]int{gy, gx}, c.spec)
		require.Equal(t, c.label, label, c.spec)
		require.Len(t, plane, gy*gx, c.spec)
		for r := range gy {
			for col := range gx {
				require.Equal(t, c.want(r, col), plane[r*gx+col], "%s at (%d, %d)", c.spec, r, col)
			}
		}
	}

	plane, _, _, _, err := Slice(field, shape, "z=1")
	require.NoError(t, err)
	plane[0] = -1
	require.Equal(t, idx(1, 0, 0), field[(1*ny+0)*nx], "a 3D slice is a copy")
}

func TestSliceOf2DIsTheField(t *testing.T) {
	field := ramp(3, 4)
	plane, ny, nx, label, err := Slice(field, []int{3, 4}, "z=mid")
	require.NoError(t, err)
	require.Equal(t, [2]int{3, 4}, [2]int{ny, nx})
	require.Empty(t, label)
	require.Same(t, &field[0], &plane[0])
}

func TestSliceErrorsNameSpecAndRange(t *testing.T) {
	field := make([]float64, 4*5*6)
	shape := []int{4, 5, 6}
	cases := map[string]string{
		"z=4":   `heatmap: slice "z=4": z=4 is outside the domain: a cell index along z is from 0 to 3`,
		"y=-1":  `heatmap: slice "y=-1": y=-1 is outside the domain: a cell index along y is from 0 to 4`,
		"x=abc": `heatmap: slice "x=abc": x=abc: want mid, a cell index from 0 to 5, or a fraction like 0.5`,
		"x=1.5": `heatmap: slice "x=1.5": x=1.5 is outside the domain: a fraction of its length is from 0 to 1`,
		"w=1":   `heatmap: slice "w=1": want AXIS=AT with AXIS one of z, y, x`,
		"mid":   `heatmap: slice "mid": want AXIS=AT`,
	}
	for spec, want := range cases {
		_, _, _, _, err := Slice(field, shape, spec)
		require.ErrorContains(t, err, want, "spec %q", spec)
	}
	_, _, _, _, err := Slice(field, []int{4, 31}, "")
	require.ErrorContains(t, err, "field has 120 values, shape [4 31] needs 124")
	_, _, _, _, err = Slice(field, []int{120}, "")
	require.ErrorContains(t, err, "must have 2 or 3 axes")
}
