package solver

import (
	"fmt"
	"math"

	"heat/comm"
)

// Probes sample the field at fixed points of the domain (probes.csv), each
// by multilinear interpolation between the cell centres around it, with
// the same bits on every split: the corner cells' values reach rank 0 as
// they are (a message copies them, a sum with zeros would turn −0 into +0)
// and rank 0 combines each probe's corners in one fixed order.
//
// Along an axis of n cells of width h a point x lies p = x/h − ½ cell
// widths past the first centre. Its cells are i0 = floor(p), clamped to
// [0, n−2], and i0+1, with the weight w = p − i0 clamped to [0, 1] on
// i0+1: between the outermost centre and the face the value is held at
// the outermost cell's. A point within 10⁻⁹ of a cell width of a centre
// is at that centre (0.3 on 5 cells of 0.2 is p = 0.9999999999999998
// in floating point), so a probe placed at a centre reads that cell's value
// exactly; so does an axis of one cell. The axes combine last to first:
// the pairs along the last axis, then the results along the one before,
// each pair a + w·(b − a) (a constant field reads back exactly).
type Probes struct {
	s     *Solver
	axes  [][]probeAxis // per probe, per axis
	first []int         // per probe: the index in vals of its first corner
	mine  []int         // the flat indices (s.lay) of this rank's corners, in the order they are sent
	send  []float64     // rank > 0: their values
	// Rank 0: every probe's corners, probe after probe, each probe's in C
	// order over its axes; where its own come from (the order of mine);
	// the other ranks that hold corners.
	vals  []float64
	local []int
	from  []probeSource
}

// probeAxis is a probe's cells along one axis: n (1 or 2) cells from lo,
// the second weighted w.
type probeAxis struct {
	lo, n int
	w     float64
}

// probeSource is a rank > 0 that holds corners of the probes: where in
// vals its values go, in the order it sends them, and the buffer they
// arrive in.
type probeSource struct {
	rank  int
	slots []int
	buf   []float64
}

// probeTag is the message tag of the corners sent to rank 0.
const probeTag = comm.TagProbe

// snapCells is how close, in cell widths, a point must be to a cell centre
// to be taken as at it.
const snapCells = 1e-9

// probeAxisOf is where a point x lies along an axis of n cells of width h
// (Probes).
func probeAxisOf(x, h float64, n int) probeAxis {
	if n == 1 {
		return probeAxis{lo: 0, n: 1}
	}
	p := x/h - 0.5
	if r := math.Round(p); math.Abs(p-r) <= snapCells {
		p = r
	}
	i0 := min(max(int(math.Floor(p)), 0), n-2)
	w := min(max(p-float64(i0), 0), 1)
	switch w {
	case 0:
		return probeAxis{lo: i0, n: 1}
	case 1:
		return probeAxis{lo: i0 + 1, n: 1}
	}
	return probeAxis{lo: i0, n: 2, w: w}
}

// Probes prepares the sampling of the field at the points at (physical
// coordinates, C order, each inside [0, length] on every axis). Every
// rank calls it with the same points; it sends nothing.
func (s *Solver) Probes(at [][]float64) (*Probes, error) {
	nd := len(s.spec.Shape)
	h := s.spec.Spacing()
	p := &Probes{s: s}
	rank := s.c.Rank()
	slots := map[int][]int{} // rank > 0: its slots in vals, in order
	idx := make([]int, nd)
	local := make([]int, nd)
	for i, x := range at {
		if len(x) != nd {
			return nil, fmt.Errorf("solver: probe %d at %v: want %d coordinates", i, x, nd)
		}
		axes := make([]probeAxis, nd)
		corners := 1
		for a := range nd {
			if !(x[a] >= 0 && x[a] <= s.spec.Length[a]) {
				return nil, fmt.Errorf("solver: probe %d at %v: outside the domain along axis %d, [0, %g]", i, x, a, s.spec.Length[a])
			}
			axes[a] = probeAxisOf(x[a], h[a], s.spec.Shape[a])
			corners *= axes[a].n
		}
		p.axes = append(p.axes, axes)
		p.first = append(p.first, len(p.vals))
		for k := range corners {
			// Corner k in C order: the last axis fastest.
			rest := k
			for a := nd - 1; a >= 0; a-- {
				idx[a] = axes[a].lo + rest%axes[a].n
				rest /= axes[a].n
			}
			slot := len(p.vals)
			p.vals = append(p.vals, 0)
			owner := s.grid.Owner(idx)
			if owner == rank {
				for a := range nd {
					local[a] = idx[a] - s.lay.Box.Lo[a]
				}
				p.mine = append(p.mine, s.lay.Index(local...))
				if rank == 0 {
					p.local = append(p.local, slot)
				}
			} else if rank == 0 {
				slots[owner] = append(slots[owner], slot)
			}
		}
	}
	if rank != 0 {
		p.vals = nil // rank 0's alone
		p.send = make([]float64, len(p.mine))
		return p, nil
	}
	for r := 1; r < s.c.Size(); r++ {
		if sl := slots[r]; len(sl) > 0 {
			p.from = append(p.from, probeSource{rank: r, slots: sl, buf: make([]float64, len(sl))})
		}
	}
	return p, nil
}

// Sample puts the probes' values of the current field into out (one per
// probe) on rank 0; other ranks only send their corners, and leave out
// alone. Collective over the ranks that hold corners and rank 0.
func (p *Probes) Sample(out []float64) error {
	u := p.s.Field()
	c := p.s.c
	if c.Rank() != 0 {
		if len(p.mine) == 0 {
			return nil
		}
		for k, i := range p.mine {
			p.send[k] = u[i]
		}
		req, err := c.Isend(p.send, 0, probeTag)
		if err != nil {
			return err
		}
		return c.Waitall([]comm.Request{req})
	}
	reqs := make([]comm.Request, 0, len(p.from))
	for _, f := range p.from {
		req, err := c.Irecv(f.buf, f.rank, probeTag)
		if err != nil {
			return err
		}
		reqs = append(reqs, req)
	}
	for k, i := range p.mine {
		p.vals[p.local[k]] = u[i]
	}
	if err := c.Waitall(reqs); err != nil {
		return fmt.Errorf("probes: %w", err)
	}
	for _, f := range p.from {
		for k, slot := range f.slots {
			p.vals[slot] = f.buf[k]
		}
	}
	for i, axes := range p.axes {
		out[i] = combine(p.vals[p.first[i]:], axes)
	}
	return nil
}

// combine interpolates a probe's corners v (C order over axes; v is used
// as scratch) along each axis, the last first.
func combine(v []float64, axes []probeAxis) float64 {
	m := 1
	for _, ax := range axes {
		m *= ax.n
	}
	for a := len(axes) - 1; a >= 0; a-- {
		if axes[a].n == 1 {
			continue
		}
		w := axes[a].w
		m /= 2
		for i := range m {
			lo, hi := v[2*i], v[2*i+1]
			// The conversion rounds the product: no fused multiply-add,
			// the same bits on every architecture.
			v[i] = lo + float64(w*(hi-lo))
		}
	}
	return v[0]
}
