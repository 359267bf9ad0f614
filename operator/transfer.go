package operator

import (
	"heat/decomp"
	"heat/internal/hugemem"
	"heat/stencil"
)

// Transfer moves fields between the box of a fine grid level and the box
// of the next coarser one on the same rank (AMReX's MLLinOp restriction
// and interpolation; an operator-dependent interpolation is a Transfer of
// its own). Coarse cell I of an axis the fine level halves (Ratio 2) has
// the fine children 2I and 2I+1; a coarse box is [⌈lo/2⌉, ⌈hi/2⌉) of the
// fine box [lo, hi) (Coarsen), so a rank's coarse cells' children lie in
// its fine box or in its first ghost layer, and its fine cells' coarse
// parents and their neighbours in its coarse box or in the coarse ghost
// layer: one ghost layer serves both directions. Every value is a fixed
// formula of global indices, so the transfers give the same bits however
// the grid is split.
type Transfer struct {
	Fine, Coarse *Work
	Ratio        []int
	bufs         [][]float64 // per fine part: the prolongation's rows
}

// NewTransfer is the transfer between fine and coarse, whose axes a are
// coarsened by ratio[a] (1 or 2).
func NewTransfer(fine, coarse *Work, ratio []int) *Transfer {
	return &Transfer{Fine: fine, Coarse: coarse, Ratio: ratio, bufs: make([][]float64, fine.Parts)}
}

// Coarsen is the coarse box of fine box b under ratio.
func Coarsen(b decomp.Box, ratio []int) decomp.Box {
	c := decomp.Box{Lo: make([]int, len(b.Lo)), Hi: make([]int, len(b.Hi))}
	for a, r := range ratio {
		c.Lo[a], c.Hi[a] = (b.Lo[a]+r-1)/r, (b.Hi[a]+r-1)/r
	}
	return c
}

// Restrict sets dst (a coarse field) to the average of the children of
// each coarse cell in src (a fine field, whose ghosts must be current where
// the boxes are not even-aligned). The children are summed in pairs along
// x, then y, then z.
func (t *Transfer) Restrict(dst, src []float64) {
	fl, cl := t.Fine.Lay, t.Coarse.Lay
	nd := len(fl.N)
	rx, ry, rz := t.Ratio[nd-1], t.Ratio[nd-2], 1
	sy, sz := fl.Stride[nd-2], 0
	if nd == 3 {
		rz, sz = t.Ratio[0], fl.Stride[0]
	}
	w := 1 / float64(rx*ry*rz)
	t.Coarse.Each(func(_ int, rows []decomp.Span, _ []int) {
		lc := make([]int, nd)
		fc := make([]int, nd)
		for _, r := range rows {
			cl.Coords(r.Start, lc)
			for a := range nd {
				fc[a] = (cl.Box.Lo[a]+lc[a])*t.Ratio[a] - fl.Box.Lo[a]
			}
			base := fl.Index(fc...)
			b := dst[r.Start : r.Start+r.N]
			if rx == 2 && ry == 2 {
				// Every axis halved (the common case): the kernels.
				a, n := src[base:], src[base+sy:]
				if rz == 1 {
					stencil.Restrict2D(b, a, n, w)
				} else {
					stencil.Restrict3D(b, a, n, src[base+sz:], src[base+sz+sy:], w)
				}
				continue
			}
			for j := range b {
				i := base + rx*j
				v := pairY(src, i, rx, ry, sy)
				if rz == 2 {
					v += pairY(src, i+sz, rx, ry, sy)
				}
				v *= w
				b[j] = v
			}
		}
	})
}

// pairY is the sum of the children of one coarse cell in one fine plane.
func pairY(src []float64, i, rx, ry, sy int) float64 {
	v := pairX(src, i, rx)
	if ry == 2 {
		v += pairX(src, i+sy, rx)
	}
	return v
}

// pairX is the sum of the children of one coarse cell in one fine row.
func pairX(src []float64, i, rx int) float64 {
	if rx == 2 {
		return src[i] + src[i+1]
	}
	return src[i]
}

// axisWeights are, for fine global index g along an axis of ratio r, the
// coarse parent's and its nearer neighbour's local coordinates in the
// coarse box starting at lo, and whether the fine cell interpolates between
// them (linear, r = 2) or copies the parent.
func axisWeights(g, r, lo int, linear bool) (p, q int, mix bool) {
	if r == 1 {
		return g - lo, g - lo, false
	}
	p = g/2 - lo
	q = p + 1
	if g%2 == 0 {
		q = p - 1
	}
	return p, q, linear
}

// Interpolation weights: 3/4 from the parent, 1/4 from its nearer
// neighbour, along each halved axis (tensor-product linear interpolation
// for cell-centred grids).
const (
	near = 0.75
	far  = 0.25
)

// Prolong sets dst (a fine field) to the interpolation of src (a coarse
// field, whose ghosts, corners included, must be current) at every cell of
// the fine box — or, with add, adds it to dst: linear, or piecewise
// constant. Each
// coarse row read is first interpolated along x to the fine row, then the
// rows are combined along y, then z: near·(near·A + far·B) + far·(near·C +
// far·D), the same operations for every cell however the grid is split.
func (t *Transfer) Prolong(dst, src []float64, linear, add bool) {
	fl, cl := t.Fine.Lay, t.Coarse.Lay
	nd := len(fl.N)
	rx := t.Ratio[nd-1]
	csy, csz := cl.Stride[nd-2], 0
	if nd == 3 {
		csz = cl.Stride[0]
	}
	flo, clo := fl.Box.Lo, cl.Box.Lo
	n := fl.N[nd-1]
	t.Fine.Each(func(w int, rows []decomp.Span, _ []int) {
		lc := make([]int, nd)
		if m := (2 + len(rowCache{}.key)) * n; len(t.bufs[w]) < m {
			t.bufs[w] = make([]float64, m)
		}
		buf := t.bufs[w]
		a, cc := buf[:n], buf[n:2*n]
		cache := newRowCache(buf[2*n:], n)
		gx := flo[nd-1]
		// x is coarse row (y, z) interpolated along x, each coarse row once
		// for the two to four fine rows that read it.
		x := func(y, z int) []float64 {
			i := (y+1)*csy + (z+1)*csz // flat index in c of the row's x = −1 ghost
			out, hit := cache.get(i)
			if !hit {
				interpRow(out, src[i:i+cl.Padded[nd-1]], gx, clo[nd-1], rx, linear)
			}
			return out
		}
		for _, r := range rows {
			fl.Coords(r.Start, lc)
			py, qy, my := axisWeights(flo[nd-2]+lc[nd-2], t.Ratio[nd-2], clo[nd-2], linear)
			pz, qz, mz := 0, 0, false
			if nd == 3 {
				pz, qz, mz = axisWeights(flo[0]+lc[0], t.Ratio[0], clo[0], linear)
			}
			// near·A + far·B along y (and z), then added to dst or copied.
			out := dst[r.Start : r.Start+r.N]
			v, u := x(py, pz), []float64(nil)
			if my {
				u = x(qy, pz)
			}
			if mz {
				if my {
					stencil.Mix(a, v, u, near, far)
					v = a
				}
				u = x(py, qz)
				if my {
					stencil.Mix(cc, u, x(qy, qz), near, far)
					u = cc
				}
			}
			switch {
			case u != nil && add:
				stencil.MixAdd(out, v, u, near, far)
			case u != nil:
				stencil.Mix(out, v, u, near, far)
			case add:
				for j := range out {
					out[j] += v[j]
				}
			default:
				copy(out, v)
			}
		}
	})
}

// rowCache holds the last few coarse rows interpolated along x, by the
// flat index of the coarse row: in 2D a fine row reads 2 of 3 coarse rows
// its neighbour also read, in 3D 4 of 6.
type rowCache struct {
	key  [8]int
	rows [8][]float64
	next int // the slot to replace next
}

func newRowCache(buf []float64, n int) *rowCache {
	rc := &rowCache{}
	for k := range rc.rows {
		rc.key[k] = -1
		rc.rows[k] = buf[k*n : (k+1)*n]
	}
	return rc
}

// get is the row stored under key i, or the slot to fill for it (hit false).
func (rc *rowCache) get(i int) (row []float64, hit bool) {
	for k, key := range rc.key {
		if key == i {
			return rc.rows[k], true
		}
	}
	k := rc.next
	rc.next = (k + 1) % len(rc.key)
	rc.key[k] = i
	return rc.rows[k], false
}

// interpRow sets dst, the fine cells from global x index g0 on, from src,
// a coarse row starting at its ghost cell x = −1 of a box starting at clo:
// near·parent + far·(its nearer neighbour) when r = 2 and linear, else the
// parent.
func interpRow(dst, src []float64, g0, clo, r int, linear bool) {
	if r == 1 {
		copy(dst, src[g0-clo+1:])
		return
	}
	p := g0/2 - clo + 1
	j := 0
	if !linear {
		for ; j < len(dst); j++ {
			dst[j] = src[(g0+j)/2-clo+1]
		}
		return
	}
	if g0%2 == 1 {
		dst[0] = float64(near*src[p]) + float64(far*src[p+1])
		p++
		j = 1
	}
	pairs := (len(dst) - j) / 2
	stencil.Interp(dst[j:j+2*pairs], src[p-1:], near, far)
	p += pairs
	j += 2 * pairs
	if j < len(dst) {
		dst[j] = float64(near*src[p]) + float64(far*src[p-1])
	}
}

// FluxWeights are the weights of an operator-dependent prolongation over
// media (ProlongFlux): per halved axis a and fine cell i, how far the
// cell's correction leans from its coarse parent towards the parent's
// neighbour on the cell's side, min(1/2, ¼·b_across/b_inside) — b_across
// the face of i on the coarse cells' common face, b_inside the face to its
// sibling. On a uniform medium ¼, linear interpolation; across a jump the
// value a piecewise-linear error with a continuous flux has there: towards
// ½ beside a conductor, towards 0 beside an insulator; 0 beside a hole,
// and where the sibling is one (the parent stands for the cell alone).
// b holds the fine level's faces (ghost faces below the box included);
// nil for the axes not halved. Cells that are not free get 0.
func (t *Transfer) FluxWeights(b [][]float64, free []float64) [][]float64 {
	fl := t.Fine.Lay
	nd := len(fl.N)
	w := make([][]float64, nd)
	for a := range nd {
		if t.Ratio[a] == 2 {
			w[a] = hugemem.Floats(fl.Len())
		}
	}
	t.Fine.Each(func(_ int, rows []decomp.Span, _ []int) {
		lc := make([]int, nd)
		for _, r := range rows {
			fl.Coords(r.Start, lc)
			for a := range nd {
				if w[a] == nil {
					continue
				}
				st, ba, wa := fl.Stride[a], b[a], w[a]
				g := fl.Box.Lo[a] + lc[a]
				for i := r.Start; i < r.Start+r.N; i++ {
					if a == nd-1 {
						g = fl.Box.Lo[a] + lc[a] + i - r.Start
					}
					if free[i] == 0 {
						continue
					}
					across, inside := ba[i-st], ba[i] // a lower child
					if g%2 == 1 {
						across, inside = ba[i], ba[i-st]
					}
					switch {
					case !(across > 0) || !(inside > 0):
						wa[i] = 0 // a hole across, or the sibling a hole: the parent's value is the cell's
					case across >= 2*inside:
						wa[i] = 0.5
					default:
						wa[i] = float64(0.25 * across / inside)
					}
				}
			}
		}
	})
	return w
}

// ProlongFlux is Prolong's linear interpolation with the weights of
// FluxWeights (w) in place of ¼: along x first, then y, then z, the same
// operations for every cell however the grid is split.
func (t *Transfer) ProlongFlux(dst, src []float64, w [][]float64, add bool) {
	fl, cl := t.Fine.Lay, t.Coarse.Lay
	nd := len(fl.N)
	x := nd - 1
	t.Fine.Each(func(_ int, rows []decomp.Span, _ []int) {
		lc := make([]int, nd)
		for _, r := range rows {
			fl.Coords(r.Start, lc)
			// The coarse parents' row (flat index at x = 0, ghost included)
			// and the flat steps to the neighbouring rows on the fine row's
			// side along z and y (0 where the axis is not halved).
			off := 0
			var step [2]int
			for a := range x {
				p, st := coarseAxis(fl.Box.Lo[a]+lc[a], t.Ratio[a], cl.Box.Lo[a], cl.Stride[a])
				off += p * cl.Stride[a]
				step[a+3-nd] = st
			}
			prolongFluxRow(dst[r.Start:r.Start+r.N], src, w, r.Start, off, fl.Box.Lo[x]+lc[x], cl.Box.Lo[x], t.Ratio[x], step, add)
		}
	})
}

// prolongFluxRow is ProlongFlux on one fine row, out, whose first cell is
// at flat index start and global x g0: off is the flat index in src of the
// coarse parents' row at x = 0, lo the coarse box's first x, rx the ratio
// along x, step the flat steps to the neighbouring coarse rows along z and
// y (0: the axis not halved). Each cell: along x towards its parent's
// neighbour, then along y between two such rows, then along z between two
// such planes, by the cell's weights.
func prolongFluxRow(out, src []float64, w [][]float64, start, off, g0, lo, rx int, step [2]int, add bool) {
	nd := len(w)
	var wx, wy, wz []float64
	for a, p := range []*[]float64{&wz, &wy, &wx}[3-nd:] {
		if w[a] != nil {
			*p = w[a][start : start+len(out)]
		}
	}
	sz, sy := step[0], step[1]
	var ax, ay float64
	c, sx := coarseAxis(g0, rx, lo, 1)
	c += off
	for j := range out {
		if sx != 0 {
			ax = wx[j]
		}
		if sy != 0 {
			ay = wy[j]
		}
		v := fluxLine(src, c, sx, ax)
		if sy != 0 {
			v = lerp(v, fluxLine(src, c+sy, sx, ax), ay)
		}
		if sz != 0 {
			d := c + sz
			u := fluxLine(src, d, sx, ax)
			if sy != 0 {
				u = lerp(u, fluxLine(src, d+sy, sx, ax), ay)
			}
			v = lerp(v, u, wz[j])
		}
		if add {
			out[j] += v
		} else {
			out[j] = v
		}
		// The next cell's parent: the same one after a lower child.
		if sx >= 0 {
			c++
		}
		sx = -sx
	}
}

// fluxLine is coarse cell c interpolated along x towards c + sx by ax.
func fluxLine(src []float64, c, sx int, ax float64) float64 {
	if sx == 0 {
		return src[c]
	}
	return lerp(src[c], src[c+sx], ax)
}

// lerp is a + w·(b − a), the product rounded alone (no fused multiply–add).
func lerp(a, b, w float64) float64 { return a + float64(w*(b-a)) }

// coarseAxis is, for fine global index g along an axis of ratio r, the
// coarse parent's local coordinate plus the ghost layer in the coarse box
// starting at lo, and the flat step (stride st) to the parent's neighbour
// on the fine cell's side (0 where the axis is not halved).
func coarseAxis(g, r, lo, st int) (p, step int) {
	if r == 1 {
		return g - lo + 1, 0
	}
	p = g/2 - lo + 1
	if g%2 == 1 {
		return p, st
	}
	return p, -st
}
