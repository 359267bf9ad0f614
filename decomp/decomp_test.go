package decomp

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplitSpreadsRemainder(t *testing.T) {
	for n := 1; n <= 50; n++ {
		for p := 1; p <= n; p++ {
			next := 0
			for i := range p {
				lo, hi := Split(n, p, i)
				require.Equal(t, next, lo, "n=%d p=%d i=%d", n, p, i)
				size := hi - lo
				require.True(t, size == n/p || size == n/p+1, "n=%d p=%d i=%d size=%d", n, p, i, size)
				if i > 0 {
					plo, phi := Split(n, p, i-1)
					require.GreaterOrEqual(t, phi-plo, size, "larger parts come first")
				}
				next = hi
			}
			require.Equal(t, n, next)
		}
	}
}

// Every global cell is owned by exactly one rank, Owner agrees with Box, and
// neighbours are symmetric, for every shape up to 40 cells per axis in 2D (12
// in 3D) and 1–16 ranks.
func TestEveryCellOwnedOnceAndNeighboursSymmetric(t *testing.T) {
	check := func(shape []int, ranks int, periodic []bool) {
		g, err := New(shape, ranks, nil, periodic)
		if err != nil {
			// Only acceptable when no process grid can fit.
			_, autoErr := AutoDims(shape, ranks, periodic)
			require.Error(t, autoErr, "shape %v ranks %d: %v", shape, ranks, err)
			return
		}
		require.Equal(t, ranks, g.Size())
		total := 1
		for _, n := range shape {
			total *= n
		}
		owned := make([]int, total)
		for r := range ranks {
			require.Equal(t, r, g.RankOf(g.Coords(r)))
			b := g.Box(r)
			require.False(t, b.Empty(), "shape %v ranks %d: rank %d owns nothing", shape, ranks, r)
			whole := Box{Lo: make([]int, len(shape)), Hi: shape}
			NewLayout(whole, 0).ForRows(b, func(start, n int) {
				for i := start; i < start+n; i++ {
					owned[i]++
				}
			})
			// Owner agrees on the box corners.
			require.Equal(t, r, g.Owner(b.Lo))
			hi := make([]int, len(shape))
			for a := range hi {
				hi[a] = b.Hi[a] - 1
			}
			require.Equal(t, r, g.Owner(hi))
			for _, off := range offsets(len(shape)) {
				nb, ok := g.Neighbor(r, off)
				if !ok {
					continue
				}
				back := make([]int, len(off))
				for a := range off {
					back[a] = -off[a]
				}
				rb, ok := g.Neighbor(nb, back)
				require.True(t, ok)
				require.Equal(t, r, rb, "shape %v ranks %d: %d -> %v -> %d", shape, ranks, r, off, nb)
			}
		}
		for i, c := range owned {
			require.Equal(t, 1, c, "shape %v ranks %d: cell %d owned %d times", shape, ranks, i, c)
		}
	}
	for ny := 1; ny <= 40; ny += 3 {
		for nx := 1; nx <= 40; nx += 2 {
			for ranks := 1; ranks <= 16; ranks++ {
				check([]int{ny, nx}, ranks, nil)
				check([]int{ny, nx}, ranks, []bool{true, false})
			}
		}
	}
	for nz := 1; nz <= 12; nz += 2 {
		for ny := 1; ny <= 12; ny += 3 {
			for nx := 1; nx <= 12; nx += 4 {
				for ranks := 1; ranks <= 16; ranks++ {
					check([]int{nz, ny, nx}, ranks, []bool{false, true, true})
				}
			}
		}
	}
}

func offsets(nd int) [][]int {
	var out [][]int
	n := 1
	for range nd {
		n *= 3
	}
	for k := range n {
		o := make([]int, nd)
		zero := true
		for a, m := nd-1, k; a >= 0; a, m = a-1, m/3 {
			o[a] = m%3 - 1
			zero = zero && o[a] == 0
		}
		if !zero {
			out = append(out, o)
		}
	}
	return out
}

func TestAutoDimsFollowsAspect(t *testing.T) {
	cases := []struct {
		shape []int
		ranks int
		want  []int
	}{
		{[]int{1024, 1024}, 4, []int{2, 2}},
		{[]int{64, 1024}, 4, []int{1, 4}}, // long in x: cut x only
		{[]int{1024, 64}, 4, []int{4, 1}}, // long in y: cut y only
		{[]int{64, 64, 64}, 8, []int{2, 2, 2}},
		{[]int{100, 100}, 6, []int{3, 2}}, // tie on cuts broken towards slower axes
		{[]int{3, 100}, 4, []int{1, 4}},
		{[]int{100, 100}, 7, []int{7, 1}},
	}
	for _, c := range cases {
		d, err := AutoDims(c.shape, c.ranks, nil)
		require.NoError(t, err)
		require.Equal(t, c.want, d, "shape %v ranks %d", c.shape, c.ranks)
	}
}

func TestErrorsCarryNumbers(t *testing.T) {
	_, err := New([]int{3, 100}, 4, []int{4, 1}, nil)
	require.EqualError(t, err, "cannot split 3 cells over 4 ranks along y")
	_, err = New([]int{8, 8, 2}, 3, []int{1, 1, 3}, nil)
	require.EqualError(t, err, "cannot split 2 cells over 3 ranks along x")
	_, err = New([]int{8, 8}, 6, []int{4, 2}, nil)
	require.EqualError(t, err, "process grid 4x2 has 8 ranks, not 6")
	_, err = New([]int{2, 2}, 5, nil, nil)
	require.EqualError(t, err, "cannot split a 2x2 grid (4 cells) over 5 ranks: no process grid fits")
	_, err = New([]int{8, 8}, 2, []int{2}, nil)
	require.ErrorContains(t, err, "has 1 axes but the grid has 2")
}

func TestNeighborWrapsOnlyPeriodicAxes(t *testing.T) {
	g, err := New([]int{12, 12}, 6, []int{3, 2}, []bool{true, false})
	require.NoError(t, err)
	// rank 0 is at (0,0): down in y wraps to (2,0) = rank 4; left in x does not exist.
	nb, ok := g.Neighbor(0, []int{-1, 0})
	require.True(t, ok)
	require.Equal(t, 4, nb)
	_, ok = g.Neighbor(0, []int{0, -1})
	require.False(t, ok)
	nb, ok = g.Neighbor(0, []int{0, 1})
	require.True(t, ok)
	require.Equal(t, 1, nb)
}

func TestIntersect(t *testing.T) {
	a := Box{Lo: []int{0, 0}, Hi: []int{10, 10}}
	b := Box{Lo: []int{5, 8}, Hi: []int{20, 30}}
	require.Equal(t, Box{Lo: []int{5, 8}, Hi: []int{10, 10}}, a.Intersect(b))
	c := Box{Lo: []int{10, 0}, Hi: []int{12, 4}}
	require.True(t, a.Intersect(c).Empty())
	require.Equal(t, 20, a.Intersect(b).Size()*2)
}

func TestLayoutIndexAndRows(t *testing.T) {
	l := NewLayout(Box{Lo: []int{4, 10}, Hi: []int{7, 15}}, 2)
	require.Equal(t, []int{3, 5}, l.N)
	require.Equal(t, []int{7, 9}, l.Padded)
	require.Equal(t, []int{9, 1}, l.Stride)
	require.Equal(t, 63, l.Len())
	require.Equal(t, 0, l.Index(-2, -2))
	require.Equal(t, 2*9+2, l.Index(0, 0))
	var rows [][2]int
	l.ForRows(Box{Lo: []int{-1, 0}, Hi: []int{1, 5}}, func(start, n int) { rows = append(rows, [2]int{start, n}) })
	require.Equal(t, [][2]int{{l.Index(-1, 0), 5}, {l.Index(0, 0), 5}}, rows)
}

// TestLayoutCoordsInvertIndex: Coords and Global undo Index for every cell
// of a layout, ghosts included.
func TestLayoutCoordsInvertIndex(t *testing.T) {
	lay := NewLayout(Box{Lo: []int{3, 5, 7}, Hi: []int{6, 9, 8}}, 2)
	c, g := make([]int, 3), make([]int, 3)
	for z := -2; z < lay.N[0]+2; z++ {
		for y := -2; y < lay.N[1]+2; y++ {
			for x := -2; x < lay.N[2]+2; x++ {
				i := lay.Index(z, y, x)
				lay.Coords(i, c)
				lay.Global(i, g)
				if c[0] != z || c[1] != y || c[2] != x || g[0] != z+3 || g[1] != y+5 || g[2] != x+7 {
					t.Fatalf("cell (%d, %d, %d): Coords %v, Global %v", z, y, x, c, g)
				}
			}
		}
	}
}
