// Package decomp is the pure geometry of a Cartesian domain decomposition:
// the process grid, each rank's box of the global grid, face and corner
// neighbours with periodic wrap, and box intersection (for N→M restarts and
// chunk ownership). Axes are listed in C order, slowest first: [ny, nx] or
// [nz, ny, nx]. It imports nothing of heat's.
package decomp

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// AxisName is the conventional name of axis a of an ndim-dimensional grid
// in C order: "y", "x" in 2D and "z", "y", "x" in 3D.
func AxisName(ndim, a int) string {
	names := []string{"z", "y", "x"}
	return names[3-ndim+a]
}

// Split gives part i of n cells split into parts pieces as the half-open range
// [lo, hi). The remainder is spread one cell at a time over the first parts,
// so sizes differ by at most one.
func Split(n, parts, i int) (lo, hi int) {
	q, r := n/parts, n%parts
	lo = i*q + min(i, r)
	hi = lo + q
	if i < r {
		hi++
	}
	return lo, hi
}

// Grid is a process grid laid over a global grid.
type Grid struct {
	Shape    []int  // global cells per axis
	Dims     []int  // ranks per axis
	Periodic []bool // whether each axis wraps around
}

// New builds the process grid for ranks ranks over shape. dims may be nil (or
// empty) for an automatic choice that minimises halo surface; periodic may be
// nil (no axis wraps).
func New(shape []int, ranks int, dims []int, periodic []bool) (*Grid, error) {
	nd := len(shape)
	if nd < 1 || nd > 3 {
		return nil, fmt.Errorf("grid must have 1 to 3 axes, got %d", nd)
	}
	for a, n := range shape {
		if n < 1 {
			return nil, fmt.Errorf("grid has %d cells along %s; need at least 1", n, AxisName(nd, a))
		}
	}
	if ranks < 1 {
		return nil, fmt.Errorf("need at least 1 rank, got %d", ranks)
	}
	if periodic == nil {
		periodic = make([]bool, nd)
	}
	if len(periodic) != nd {
		return nil, fmt.Errorf("periodic has %d axes but the grid has %d", len(periodic), nd)
	}
	if len(dims) == 0 {
		d, err := AutoDims(shape, ranks, periodic)
		if err != nil {
			return nil, err
		}
		dims = d
	}
	if len(dims) != nd {
		return nil, fmt.Errorf("process grid %s has %d axes but the grid has %d", FormatDims(dims), len(dims), nd)
	}
	p := 1
	for _, d := range dims {
		if d < 1 {
			return nil, fmt.Errorf("process grid %s: every axis needs at least 1 rank", FormatDims(dims))
		}
		p *= d
	}
	if p != ranks {
		return nil, fmt.Errorf("process grid %s has %d ranks, not %d", FormatDims(dims), p, ranks)
	}
	for a := range nd {
		if dims[a] > shape[a] {
			return nil, fmt.Errorf("cannot split %d cells over %d ranks along %s", shape[a], dims[a], AxisName(nd, a))
		}
	}
	return &Grid{Shape: slices.Clone(shape), Dims: slices.Clone(dims), Periodic: slices.Clone(periodic)}, nil
}

// FormatDims writes a process grid as users type it: "4x2".
func FormatDims(dims []int) string {
	s := make([]string, len(dims))
	for i, d := range dims {
		s[i] = strconv.Itoa(d)
	}
	return strings.Join(s, "x")
}

// AutoDims chooses a process grid of ranks ranks over shape that minimises
// the total area of the cuts between boxes (the halo traffic), like
// MPI_Dims_create but aware of the grid's aspect. Ties go to the grid whose
// largest box is smallest, then to more ranks along slower axes.
func AutoDims(shape []int, ranks int, periodic []bool) ([]int, error) {
	nd := len(shape)
	if periodic == nil {
		periodic = make([]bool, nd)
	}
	var best []int
	var bestCut, bestMax int
	dims := make([]int, nd)
	var walk func(a, left int)
	walk = func(a, left int) {
		if a == nd-1 {
			dims[a] = left
			if left > shape[a] {
				return
			}
			cut, biggest := cost(shape, dims, periodic)
			if best == nil || cut < bestCut || (cut == bestCut && biggest < bestMax) {
				best, bestCut, bestMax = slices.Clone(dims), cut, biggest
			}
			return
		}
		for d := left; d >= 1; d-- {
			if left%d == 0 && d <= shape[a] {
				dims[a] = d
				walk(a+1, left/d)
			}
		}
	}
	walk(0, ranks)
	if best == nil {
		total := 1
		for _, n := range shape {
			total *= n
		}
		return nil, fmt.Errorf("cannot split a %s grid (%d cells) over %d ranks: no process grid fits", FormatDims(shape), total, ranks)
	}
	return best, nil
}

// cost is the number of cell faces cut by the process grid and the number of
// cells in the largest box.
func cost(shape, dims []int, periodic []bool) (cut, biggest int) {
	biggest = 1
	for a := range shape {
		cuts := dims[a] - 1
		if periodic[a] && dims[a] > 1 {
			cuts = dims[a]
		}
		area := cuts
		for b := range shape {
			if b != a {
				area *= shape[b]
			}
		}
		cut += area
		biggest *= (shape[a] + dims[a] - 1) / dims[a]
	}
	return cut, biggest
}

// NDim is the number of axes.
func (g *Grid) NDim() int { return len(g.Shape) }

// Size is the number of ranks.
func (g *Grid) Size() int {
	p := 1
	for _, d := range g.Dims {
		p *= d
	}
	return p
}

// Coords are the process-grid coordinates of rank, C order (last axis
// fastest, as MPI_Cart_create numbers ranks).
func (g *Grid) Coords(rank int) []int {
	c := make([]int, len(g.Dims))
	for a := len(g.Dims) - 1; a >= 0; a-- {
		c[a] = rank % g.Dims[a]
		rank /= g.Dims[a]
	}
	return c
}

// RankOf is the rank at process-grid coordinates c.
func (g *Grid) RankOf(c []int) int {
	r := 0
	for a, d := range g.Dims {
		r = r*d + c[a]
	}
	return r
}

// Box is the part of the global grid that rank owns.
func (g *Grid) Box(rank int) Box {
	c := g.Coords(rank)
	b := Box{Lo: make([]int, len(c)), Hi: make([]int, len(c))}
	for a := range c {
		b.Lo[a], b.Hi[a] = Split(g.Shape[a], g.Dims[a], c[a])
	}
	return b
}

// Neighbor is the rank at offset (each entry -1, 0 or +1) from rank, wrapping
// periodic axes; ok is false past a non-periodic edge of the grid.
func (g *Grid) Neighbor(rank int, offset []int) (nb int, ok bool) {
	c := g.Coords(rank)
	for a, o := range offset {
		c[a] += o
		if c[a] < 0 || c[a] >= g.Dims[a] {
			if !g.Periodic[a] {
				return -1, false
			}
			c[a] = (c[a] + g.Dims[a]) % g.Dims[a]
		}
	}
	return g.RankOf(c), true
}

// Owner is the rank whose box holds global cell idx.
func (g *Grid) Owner(idx []int) int {
	c := make([]int, len(idx))
	for a, i := range idx {
		n, p := g.Shape[a], g.Dims[a]
		q, r := n/p, n%p
		// The first r parts have q+1 cells.
		if i < r*(q+1) {
			c[a] = i / (q + 1)
		} else {
			c[a] = r + (i-r*(q+1))/q
		}
	}
	return g.RankOf(c)
}

// Box is a half-open box of cells [Lo, Hi) in global indices, C order.
type Box struct {
	Lo, Hi []int
}

// Shape is the number of cells along each axis.
func (b Box) Shape() []int {
	s := make([]int, len(b.Lo))
	for a := range s {
		s[a] = max(0, b.Hi[a]-b.Lo[a])
	}
	return s
}

// Size is the number of cells in the box.
func (b Box) Size() int {
	n := 1
	for _, s := range b.Shape() {
		n *= s
	}
	return n
}

// Empty reports whether the box holds no cell.
func (b Box) Empty() bool { return b.Size() == 0 }

// Intersect is the box of cells in both b and o; it may be Empty.
func (b Box) Intersect(o Box) Box {
	r := Box{Lo: make([]int, len(b.Lo)), Hi: make([]int, len(b.Lo))}
	for a := range b.Lo {
		r.Lo[a] = max(b.Lo[a], o.Lo[a])
		r.Hi[a] = max(r.Lo[a], min(b.Hi[a], o.Hi[a]))
	}
	return r
}

// Contains reports whether global cell idx lies in b.
func (b Box) Contains(idx []int) bool {
	for a, i := range idx {
		if i < b.Lo[a] || i >= b.Hi[a] {
			return false
		}
	}
	return true
}

func (b Box) String() string {
	parts := make([]string, len(b.Lo))
	for a := range b.Lo {
		parts[a] = fmt.Sprintf("%d:%d", b.Lo[a], b.Hi[a])
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
