package multigrid

import (
	"fmt"
	"time"

	"heat/comm"
	"heat/decomp"
	"heat/internal/wait"
)

// Restriction and prolongation between a fine level f and the next coarser
// level c. Coarse cell I of an axis that f halves has the fine children 2I
// and 2I+1; a coarse box is [⌈lo/2⌉, ⌈hi/2⌉) of the fine box [lo, hi)
// (coarsen), so a rank's coarse cells' children lie in its fine box or in
// its first ghost layer, and its fine cells' coarse parents and their
// neighbours in its coarse box or in the coarse ghost layer: one ghost layer
// serves both directions. Every value is a fixed formula of global indices,
// so the transfers give the same bits however the grid is split.

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
	f.down.Restrict(c.b, src)
	return nil
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
	tag     int // the gather's tag; the scatter's is the next
}

// The tag of the gather messages (the scatter's is the next). A rank hands its box on at most
// once, so no two hand-ons share a pair of ranks.
const tagGather = comm.TagMultigridHandOn

func newGatherer(c comm.Comm, lay decomp.Layout, leader int, members []int, boxes []decomp.Box, dest decomp.Layout) *gatherer {
	g := &gatherer{c: c, lay: lay, leader: leader, members: members, boxes: boxes, dest: dest, tag: tagGather}
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
		r, err := g.c.Isend(g.bufs[0], g.leader, g.tag)
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
		q, err := g.c.Irecv(g.bufs[k], r, g.tag)
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
		r, err := g.c.Irecv(g.bufs[0], g.leader, g.tag+1)
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
		q, err := g.c.Isend(g.bufs[k], r, g.tag+1)
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
