package multigrid

import (
	"fmt"
	"time"

	"heat/comm"
	"heat/decomp"
	"heat/internal/wait"
	"heat/stencil"
)

// Restriction and prolongation between a fine level f and the next coarser
// level c. Coarse cell I of an axis that f halves has the fine children 2I
// and 2I+1; a coarse box is [⌈lo/2⌉, ⌈hi/2⌉) of the fine box [lo, hi)
// (coarsen), so a rank's coarse cells' children lie in its fine box or in
// its first ghost layer, and its fine cells' coarse parents and their
// neighbours in its coarse box or in the coarse ghost layer: one ghost layer
// serves both directions. Every value is a fixed formula of global indices,
// so the transfers give the same bits however the grid is split.

// coarsen is the coarse box of fine box b under ratio.
func coarsen(b decomp.Box, ratio []int) decomp.Box {
	c := decomp.Box{Lo: make([]int, len(b.Lo)), Hi: make([]int, len(b.Hi))}
	for a, r := range ratio {
		c.Lo[a], c.Hi[a] = (b.Lo[a]+r-1)/r, (b.Hi[a]+r-1)/r
	}
	return c
}

// restrict sets c's b to the average of the children of each coarse cell in
// src (a field of f, whose ghosts must be current). The children are summed in pairs along x, then y, then z.
func restrict(f, c *level, src []float64) {
	nd := len(f.shape)
	rx, ry, rz := f.ratio[nd-1], f.ratio[nd-2], 1
	sy, sz := f.lay.Stride[nd-2], 0
	if nd == 3 {
		rz, sz = f.ratio[0], f.lay.Stride[0]
	}
	w := 1 / float64(rx*ry*rz)
	c.parallel(func(_ int, rows []decomp.Span, _ []int) {
		lc := make([]int, nd)
		fc := make([]int, nd)
		for _, r := range rows {
			c.lay.Coords(r.Start, lc)
			for a := range nd {
				fc[a] = (c.lay.Box.Lo[a]+lc[a])*f.ratio[a] - f.lay.Box.Lo[a]
			}
			base := f.lay.Index(fc...)
			b := c.b[r.Start : r.Start+r.N]
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

// restrictTo sets c's b to the restriction of src, a field of f, after
// exchanging src's ghosts where a box is not even-aligned (a child then
// lies in the ghost layer).
func (f *level) restrictTo(c *level, src []float64) error {
	if !f.aligned {
		if err := f.corners.Start(src); err != nil {
			return err
		}
		if err := f.corners.Finish(src); err != nil {
			return err
		}
	}
	restrict(f, c, src)
	return nil
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

// prolong sets dst (a field of f) to the interpolation of src (a field of
// c, whose ghosts, corners included, must be current) at every cell of f's
// box — or, with add, adds it to dst: linear, or piecewise constant. Each
// coarse row read is first interpolated along x to the fine row, then the
// rows are combined along y, then z: near·(near·A + far·B) + far·(near·C +
// far·D), the same operations for every cell however the grid is split.
func prolong(f, c *level, src, dst []float64, linear, add bool) {
	nd := len(f.shape)
	rx := f.ratio[nd-1]
	csy, csz := c.lay.Stride[nd-2], 0
	if nd == 3 {
		csz = c.lay.Stride[0]
	}
	flo, clo := f.lay.Box.Lo, c.lay.Box.Lo
	n := f.lay.N[nd-1]
	f.parallel(func(w int, rows []decomp.Span, _ []int) {
		lc := make([]int, nd)
		buf := f.rowBuf(w, (2+len(rowCache{}.key))*n)
		a, cc := buf[:n], buf[n:2*n]
		cache := newRowCache(buf[2*n:], n)
		gx := flo[nd-1]
		// x is coarse row (y, z) interpolated along x, each coarse row once
		// for the two to four fine rows that read it.
		x := func(y, z int) []float64 {
			i := (y+1)*csy + (z+1)*csz // flat index in c of the row's x = −1 ghost
			out, hit := cache.get(i)
			if !hit {
				interpRow(out, src[i:i+c.lay.Padded[nd-1]], gx, clo[nd-1], rx, linear)
			}
			return out
		}
		for _, r := range rows {
			f.lay.Coords(r.Start, lc)
			py, qy, my := axisWeights(flo[nd-2]+lc[nd-2], f.ratio[nd-2], clo[nd-2], linear)
			pz, qz, mz := 0, 0, false
			if nd == 3 {
				pz, qz, mz = axisWeights(flo[0]+lc[0], f.ratio[0], clo[0], linear)
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
		dst[0] = near*src[p] + far*src[p+1]
		p++
		j = 1
	}
	pairs := (len(dst) - j) / 2
	stencil.Interp(dst[j:j+2*pairs], src[p-1:], near, far)
	p += pairs
	j += 2 * pairs
	if j < len(dst) {
		dst[j] = near*src[p] + far*src[p-1]
	}
}

// gatherer moves a level's interior from each rank of a group to the
// group's leader, which holds the group's boxes merged, and back: the edge
// between the levels of some ranks and those agglomerated onto fewer.
type gatherer struct {
	c      comm.Comm
	lay    decomp.Layout // this rank's layout of the level
	leader int           // the rank this one hands its box to (itself, if the leader)
	// On the leader: the group's ranks (itself included), their boxes in
	// global coordinates, and its layout of their union.
	members []int
	boxes   []decomp.Box
	dest    decomp.Layout
	bufs    [][]float64 // the leader: one buffer per member; others: bufs[0]
	reqs    []comm.Request
}

// Tags of the gather and scatter messages. A rank hands its box on at most
// once, so no two hand-ons share a pair of ranks.
const (
	tagGather  = comm.TagMultigridHandOn
	tagScatter = comm.TagMultigridHandOn + 1
)

func newGatherer(c comm.Comm, lay decomp.Layout, leader int, members []int, boxes []decomp.Box, dest decomp.Layout) *gatherer {
	g := &gatherer{c: c, lay: lay, leader: leader, members: members, boxes: boxes, dest: dest}
	if c.Rank() == leader {
		for _, b := range boxes {
			g.bufs = append(g.bufs, make([]float64, b.Size()))
		}
	} else {
		g.bufs = [][]float64{make([]float64, lay.Box.Size())}
	}
	return g
}

// interior is the box of lay in its local coordinates.
func interior(lay decomp.Layout) decomp.Box {
	return decomp.Box{Lo: make([]int, len(lay.N)), Hi: lay.N}
}

// within is global box b in the local coordinates of lay.
func within(lay decomp.Layout, b decomp.Box) decomp.Box {
	out := decomp.Box{Lo: make([]int, len(b.Lo)), Hi: make([]int, len(b.Hi))}
	for a := range b.Lo {
		out.Lo[a], out.Hi[a] = b.Lo[a]-lay.Box.Lo[a], b.Hi[a]-lay.Box.Lo[a]
	}
	return out
}

func pack(lay decomp.Layout, b decomp.Box, src, buf []float64) {
	k := 0
	lay.ForRows(b, func(start, n int) { k += copy(buf[k:], src[start:start+n]) })
}

func unpack(lay decomp.Layout, b decomp.Box, buf, dst []float64) {
	k := 0
	lay.ForRows(b, func(start, n int) { k += copy(dst[start:start+n], buf[k:]) })
}

// gather copies the group's src (interiors) into the leader's dst.
func (g *gatherer) gather(src, dst []float64) error {
	if g.c.Rank() != g.leader {
		pack(g.lay, interior(g.lay), src, g.bufs[0])
		r, err := g.c.Isend(g.bufs[0], g.leader, tagGather)
		if err != nil {
			return err
		}
		return g.c.Waitall([]comm.Request{r})
	}
	g.reqs = g.reqs[:0]
	for k, r := range g.members {
		if r == g.leader {
			pack(g.lay, interior(g.lay), src, g.bufs[k])
			continue
		}
		q, err := g.c.Irecv(g.bufs[k], r, tagGather)
		if err != nil {
			return err
		}
		g.reqs = append(g.reqs, q)
	}
	if err := g.c.Waitall(g.reqs); err != nil {
		return fmt.Errorf("multigrid: agglomerating a coarse level: %w", err)
	}
	for k, b := range g.boxes {
		unpack(g.dest, within(g.dest, b), g.bufs[k], dst)
	}
	return nil
}

// scatter copies the leader's src back into the group's dst (interiors).
func (g *gatherer) scatter(src, dst []float64) error {
	if g.c.Rank() != g.leader {
		r, err := g.c.Irecv(g.bufs[0], g.leader, tagScatter)
		if err != nil {
			return err
		}
		if err := idleWait(g.c, r); err != nil {
			return fmt.Errorf("multigrid: receiving a coarse correction: %w", err)
		}
		unpack(g.lay, interior(g.lay), g.bufs[0], dst)
		return nil
	}
	g.reqs = g.reqs[:0]
	for k, r := range g.members {
		pack(g.dest, within(g.dest, g.boxes[k]), src, g.bufs[k])
		if r == g.leader {
			unpack(g.lay, interior(g.lay), g.bufs[k], dst)
			continue
		}
		q, err := g.c.Isend(g.bufs[k], r, tagScatter)
		if err != nil {
			return err
		}
		g.reqs = append(g.reqs, q)
	}
	return g.c.Waitall(g.reqs)
}

// Waiting for the coarse correction without keeping a core busy while the
// ranks below work. In-process ranks block in Waitall, which parks the
// goroutine (and returns when another rank fails). An MPI rank polls for a
// short solve (package wait: less, or not at all, when the cores are
// busy), then sleeps between polls: MPI_Waitall spins under Open MPI.
// (Should rank 0 fail meanwhile, heat's watchdog ends the job with
// MPI_Abort.)
const (
	idleSpin   = 100 * time.Microsecond
	idleNapMax = time.Millisecond
)

// idle is the polls of idleWait.
var idle = wait.NewSite(idleSpin, true)

// idleWait completes q: it polls q for a while, then sleeps between polls,
// doubling the nap from 5 µs up to idleNapMax.
func idleWait(c comm.Comm, q comm.Request) error {
	if comm.RanksHere(c) > 1 {
		return c.Waitall([]comm.Request{q})
	}
	if ok, start := idle.Until(q.Done); !ok {
		for nap := 5 * time.Microsecond; !q.Done(); nap = min(2*nap, idleNapMax) {
			time.Sleep(nap)
		}
		idle.Woke(start)
	}
	return c.Waitall([]comm.Request{q})
}
