// Package halo exchanges the ghost layers of one field between neighbouring
// ranks. A Plan is built once from the decomposition; every step the solver
// calls Start (post receives, pack and send faces), updates what needs no
// remote data, then Finish (wait, unpack).
package halo

import (
	"fmt"
	"time"

	"heat/comm"
	"heat/decomp"
)

// Options tune a Plan.
type Options struct {
	// Width is the number of ghost layers exchanged (1..Layout.Ghost);
	// 0 means all of them.
	Width int
	// Corners also exchanges edge and corner regions (diagonal neighbours),
	// which stencils that read diagonals, or several steps per exchange, need.
	Corners bool
	// Phased fills the same ghosts as Corners with face messages only: one
	// phase per axis, last axis first, each phase's faces spanning the ghosts
	// the earlier phases filled. 2·d messages instead of 3^d − 1, but the
	// phases run one after the other.
	Phased bool
	// Tag is the base tag; a plan uses tags Tag..Tag+26. Give each field
	// exchanged at the same time its own base.
	Tag int
}

// Stats count what a plan sent and how long Finish waited.
type Stats struct {
	Exchanges int64         // completed Start/Finish pairs
	Messages  int64         // messages sent
	Bytes     int64         // payload bytes sent
	Wait      time.Duration // time blocked in Finish
}

// transfer is one message to and one from a neighbour at a given offset.
// A region to send that is one contiguous run of the field (a 2D face along
// y, a face spanning the ghosts of the faster axes) is sent straight from
// the field; any other is packed into sbuf. Received regions are always
// unpacked from rbuf in Finish: the ghosts must not change before then
// (the solver's boundary conditions read the corner ghosts during the
// exchange, which the race detector caught when messages landed in place).
type transfer struct {
	peer             int
	sendTag, recvTag int
	send, recv       decomp.Box // local coordinates
	sbuf, rbuf       []float64  // sbuf is nil for a contiguous region
	sendAt           int        // a contiguous send region's first index in the field; -1 otherwise
	phase            int        // Phased: the axis order position; 0 otherwise
}

// Plan is the ghost exchange of one field on one rank.
type Plan struct {
	c      comm.Comm
	lay    decomp.Layout
	xs     []transfer
	phases int // 1, or d when Phased
	reqs   []comm.Request
	stats  Stats
	open   bool
}

// NewPlan builds the exchange plan of the field laid out as lay on this rank
// of grid g.
func NewPlan(c comm.Comm, g *decomp.Grid, lay decomp.Layout, opt Options) (*Plan, error) {
	w := opt.Width
	if w == 0 {
		w = lay.Ghost
	}
	if w < 1 || w > lay.Ghost {
		return nil, fmt.Errorf("halo: exchange width %d outside 1..%d (the ghost width)", w, lay.Ghost)
	}
	if g.Size() != c.Size() {
		return nil, fmt.Errorf("halo: process grid %s has %d ranks but the world has %d", decomp.FormatDims(g.Dims), g.Size(), c.Size())
	}
	nd := g.NDim()
	p := &Plan{c: c, lay: lay, phases: 1}
	if opt.Phased {
		p.phases = nd
	}
	rank := c.Rank()
	for k, off := range Offsets(nd) {
		nonzero, axis := 0, 0
		for a, o := range off {
			if o != 0 {
				nonzero++
				axis = a
			}
		}
		if nonzero > 1 && (!opt.Corners || opt.Phased) {
			continue
		}
		peer, ok := g.Neighbor(rank, off)
		if !ok {
			continue
		}
		// The neighbour at off sends its region facing us with the tag of
		// its own offset, which is -off.
		back := make([]int, nd)
		for a := range off {
			back[a] = -off[a]
		}
		x := transfer{peer: peer, sendTag: opt.Tag + k, recvTag: opt.Tag + offsetIndex(back)}
		if opt.Phased {
			x.phase = nd - 1 - axis
		}
		x.send = decomp.Box{Lo: make([]int, nd), Hi: make([]int, nd)}
		x.recv = decomp.Box{Lo: make([]int, nd), Hi: make([]int, nd)}
		for a, o := range off {
			n := lay.N[a]
			if o != 0 && n < w {
				return nil, fmt.Errorf("halo: rank %d has %d cells along %s, fewer than the ghost width %d", rank, n, decomp.AxisName(nd, a), w)
			}
			switch o {
			case -1:
				x.send.Lo[a], x.send.Hi[a] = 0, w
				x.recv.Lo[a], x.recv.Hi[a] = -w, 0
			case 0:
				x.send.Lo[a], x.send.Hi[a] = 0, n
				x.recv.Lo[a], x.recv.Hi[a] = 0, n
				if opt.Phased && a > axis {
					// Axes after this one were exchanged in earlier phases:
					// pass their ghosts on, which fills the corners.
					x.send.Lo[a], x.send.Hi[a] = -w, n+w
					x.recv.Lo[a], x.recv.Hi[a] = -w, n+w
				}
			case 1:
				x.send.Lo[a], x.send.Hi[a] = n-w, n
				x.recv.Lo[a], x.recv.Hi[a] = n, n+w
			}
		}
		if x.sendAt = run(lay, x.send); x.sendAt < 0 {
			x.sbuf = make([]float64, x.send.Size())
		}
		x.rbuf = make([]float64, x.recv.Size())
		p.xs = append(p.xs, x)
	}
	p.reqs = make([]comm.Request, 0, 2*len(p.xs))
	return p, nil
}

// run is the index of the first cell of box b in a field laid out as lay
// when b's cells are one contiguous run of it, and -1 otherwise.
func run(lay decomp.Layout, b decomp.Box) int {
	first, next := -1, -1
	lay.ForRows(b, func(start, n int) {
		switch {
		case first == -1:
			first, next = start, start+n
		case start == next && next >= 0:
			next += n
		default:
			next = -2 // a gap: not one run
		}
	})
	if next < 0 {
		return -1
	}
	return first
}

// sendBuf is what x sends from field: the region itself when it is one run
// of it, else the region packed into sbuf. The cells sent are never written
// between Start and Finish (the solver writes the next step's field, and
// sets only ghosts of this one), so MPI may read them while the interior is
// computed.
func (x *transfer) sendBuf(lay decomp.Layout, field []float64) []float64 {
	if x.sendAt >= 0 {
		return field[x.sendAt : x.sendAt+x.send.Size()]
	}
	k := 0
	lay.ForRows(x.send, func(start, n int) {
		k += copy(x.sbuf[k:], field[start:start+n])
	})
	return x.sbuf
}

// Start posts every receive, then packs and sends every face of field (the
// first phase's, for a Phased plan).
func (p *Plan) Start(field []float64) error {
	if p.open {
		return fmt.Errorf("halo: Start called twice without Finish")
	}
	if len(field) != p.lay.Len() {
		return fmt.Errorf("halo: field has %d values, layout needs %d", len(field), p.lay.Len())
	}
	p.open = true
	return p.startPhase(field, 0)
}

func (p *Plan) startPhase(field []float64, phase int) error {
	p.reqs = p.reqs[:0]
	for i := range p.xs {
		x := &p.xs[i]
		if x.phase != phase {
			continue
		}
		r, err := p.c.Irecv(x.rbuf, x.peer, x.recvTag)
		if err != nil {
			return fmt.Errorf("halo: receive from rank %d: %w", x.peer, err)
		}
		p.reqs = append(p.reqs, r)
	}
	for i := range p.xs {
		x := &p.xs[i]
		if x.phase != phase {
			continue
		}
		buf := x.sendBuf(p.lay, field)
		r, err := p.c.Isend(buf, x.peer, x.sendTag)
		if err != nil {
			return fmt.Errorf("halo: send to rank %d: %w", x.peer, err)
		}
		p.reqs = append(p.reqs, r)
		p.stats.Messages++
		p.stats.Bytes += int64(8 * len(buf))
	}
	return nil
}

// Finish waits for every message of the exchange Start began and unpacks the
// received values into field's ghost layers; a Phased plan runs its
// remaining phases here.
func (p *Plan) Finish(field []float64) error {
	if !p.open {
		return fmt.Errorf("halo: Finish called without Start")
	}
	p.open = false
	for phase := range p.phases {
		if phase > 0 {
			if err := p.startPhase(field, phase); err != nil {
				return err
			}
		}
		t0 := time.Now()
		err := p.c.Waitall(p.reqs)
		p.stats.Wait += time.Since(t0)
		if err != nil {
			return fmt.Errorf("halo: %w", err)
		}
		for i := range p.xs {
			x := &p.xs[i]
			if x.phase != phase {
				continue
			}
			k := 0
			p.lay.ForRows(x.recv, func(start, n int) {
				k += copy(field[start:start+n], x.rbuf[k:])
			})
		}
	}
	p.stats.Exchanges++
	return nil
}

// Stats are the plan's counters so far.
func (p *Plan) Stats() Stats { return p.stats }

// MessagesPerExchange is the number of messages this rank sends per exchange.
func (p *Plan) MessagesPerExchange() int { return len(p.xs) }

// Offsets lists the 3^nd - 1 neighbour offsets (each entry -1, 0, +1) in a
// fixed order; an offset's position in it is its tag.
func Offsets(nd int) [][]int {
	n := 1
	for range nd {
		n *= 3
	}
	out := make([][]int, 0, n-1)
	for k := range n {
		if o := offsetOf(nd, k); o != nil {
			out = append(out, o)
		}
	}
	return out
}

// offsetOf decodes k in base 3 into an offset; nil for the zero offset.
func offsetOf(nd, k int) []int {
	o := make([]int, nd)
	zero := true
	for a := nd - 1; a >= 0; a-- {
		o[a] = k%3 - 1
		k /= 3
		zero = zero && o[a] == 0
	}
	if zero {
		return nil
	}
	return o
}

// offsetIndex is the position of off in Offsets(len(off)).
func offsetIndex(off []int) int {
	k := 0
	for _, o := range off {
		k = k*3 + o + 1
	}
	center := 0
	for range off {
		center = center*3 + 1
	}
	if k > center {
		k--
	}
	return k
}
