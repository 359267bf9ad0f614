package decomp

// Layout is how a rank stores its box: one flat []float64 with Ghost layers
// on every side, C order (last axis contiguous). Local coordinates run from
// -Ghost to N[a]+Ghost-1 along axis a; 0..N[a]-1 is the box itself.
type Layout struct {
	Box    Box
	Ghost  int
	N      []int // cells of the box per axis
	Padded []int // N + 2·Ghost per axis
	Stride []int // distance in the flat slice between neighbours along each axis
}

// NewLayout lays out box b with ghost layers of width ghost.
func NewLayout(b Box, ghost int) Layout {
	n := b.Shape()
	nd := len(n)
	l := Layout{Box: b, Ghost: ghost, N: n, Padded: make([]int, nd), Stride: make([]int, nd)}
	s := 1
	for a := nd - 1; a >= 0; a-- {
		l.Padded[a] = n[a] + 2*ghost
		l.Stride[a] = s
		s *= l.Padded[a]
	}
	return l
}

// Len is the length of the flat slice, ghosts included.
func (l Layout) Len() int {
	n := 1
	for _, p := range l.Padded {
		n *= p
	}
	return n
}

// Index is the flat index of local coordinates c (each in [-Ghost, N+Ghost)).
func (l Layout) Index(c ...int) int {
	i := 0
	for a, x := range c {
		i += (x + l.Ghost) * l.Stride[a]
	}
	return i
}

// Coords sets out to the local coordinates of flat index i (each in
// [-Ghost, N+Ghost)): the inverse of Index.
func (l Layout) Coords(i int, out []int) {
	for a := range l.N {
		out[a] = i/l.Stride[a] - l.Ghost
		i %= l.Stride[a]
	}
}

// Global sets out to the global cell index of flat index i: Coords shifted
// by the box's offset.
func (l Layout) Global(i int, out []int) {
	l.Coords(i, out)
	for a := range out {
		out[a] += l.Box.Lo[a]
	}
}

// ForRows calls f for every row of the local box r (local coordinates,
// half-open, may reach into the ghosts) with the flat index of the row's
// first cell and the row's length. Rows run along the last axis, in C order.
func (l Layout) ForRows(r Box, f func(start, n int)) {
	nd := len(l.N)
	n := r.Hi[nd-1] - r.Lo[nd-1]
	if r.Empty() {
		return
	}
	c := make([]int, nd)
	copy(c, r.Lo)
	for {
		f(l.Index(c...), n)
		a := nd - 2
		for ; a >= 0; a-- {
			c[a]++
			if c[a] < r.Hi[a] {
				break
			}
			c[a] = r.Lo[a]
		}
		if a < 0 {
			return
		}
	}
}
