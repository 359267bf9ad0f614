package multigrid

import (
	"slices"

	"heat/comm"
	"heat/decomp"
	"heat/halo"
	"heat/internal/exactsum"
	"heat/internal/hugemem"
	"heat/internal/team"
	"heat/operator"
)

// level is one global grid of the hierarchy as the ranks holding it store
// it: every rank of the world (a distributed level), or rank 0 alone (a
// gathered level, on a world of one rank).
type level struct {
	c     comm.Comm
	topo  *decomp.Grid // process grid: who neighbours whom
	shape []int        // global cells per axis
	h     []float64    // cell size per axis
	lay   decomp.Layout
	boxes []decomp.Box // every rank's box of this level (the algebraic gather)
	// ratio[a] is 2 where the next coarser level halved axis a, else 1.
	ratio []int
	// aligned: every rank's box of this level starts and ends on even
	// indices along the halved axes, so the restriction needs no exchange.
	aligned bool

	// u is the iterate; tmp the Jacobi sweeps' other buffer, which also
	// holds the residual between the pre-smoothing and the restriction and
	// a gathered correction before it is added (each use ends before the
	// next begins: one array fewer per level to allocate and touch).
	u, tmp []float64
	b      []float64 // right-hand side

	faces, corners *halo.Plan // face exchange (5/7-point), and one that fills corners (transfers)
	// bc applies the problem's boundary values, bc0 homogeneous ones (the
	// error equations of the coarse levels).
	bc, bc0 *boundary

	// wk is how the level's rows are cut for the workers (rows, their
	// parity, the parts' shares and runs), op the level's operator over it,
	// and down the transfer to the next coarser level (nil on the last).
	wk          *operator.Work
	op          operator.Op
	sigma, beta float64 // op's scale (the bottom level's dense factor is made for them)
	down        *operator.Transfer
	rows        []decomp.Span
	parity      []int
	share       []int          // part w takes rows[share[w]:share[w+1]]
	runs        [][]decomp.Run // part w's rows as runs, for the many-row kernel
	parts       int            // the parts a sweep of the level is cut into (team.PartsFor)

	// Heterogeneous media (nil: uniform): the level's media, the cells
	// that are not free (and the top level's values of them).
	med          *operator.Media
	flux         [][]float64 // the prolongation's weights to the coarser level (operator.FluxWeights)
	fixed        []int
	fixedVal     []float64
	hasNeighbour [][2]bool

	cg      *cg                         // the bottom solver's vectors, on the coarsest level
	kc      *kvectors                   // the K-cycle's vectors, on a coarse level in media
	mixed   bool                        // media: the level's error equation is solved by the K-cycle (judgeMixed)
	swamped bool                        // media: most of the level's cells are mixed (judgeMixed): no K-cycle will do
	accs    []*[maxDots]exactsum.Binned // per worker: an accumulator per sum of one collective
}

// newLevel lays out box of a global grid of the given shape on c's ranks
// (topo is their process grid) with one ghost layer, and its exchange plans.
// tag is the base tag of the level's plans.
func newLevel(c comm.Comm, topo *decomp.Grid, shape []int, length []float64, box decomp.Box, faces [][2]operator.Face, tm *team.Team, tag int) (*level, error) {
	nd := len(shape)
	l := &level{c: c, topo: topo, shape: slices.Clone(shape)}
	l.h = make([]float64, nd)
	for a := range nd {
		l.h[a] = length[a] / float64(shape[a])
	}
	l.ratio = slices.Repeat([]int{1}, nd)
	l.lay = decomp.NewLayout(box, 1)
	var err error
	if l.faces, err = halo.NewPlan(c, topo, l.lay, halo.Options{Width: 1, Tag: tag}); err != nil {
		return nil, err
	}
	if l.corners, err = halo.NewPlan(c, topo, l.lay, halo.Options{Width: 1, Phased: true, Tag: tag + 27}); err != nil {
		return nil, err
	}
	hasNeighbour := make([][2]bool, nd)
	for a := range nd {
		for side := range 2 {
			off := make([]int, nd)
			off[a] = 2*side - 1
			_, hasNeighbour[a][side] = topo.Neighbor(c.Rank(), off)
		}
	}
	l.hasNeighbour = hasNeighbour
	zero := make([][2]operator.Face, nd)
	for a := range nd {
		for side := range 2 {
			zero[a][side] = faces[a][side].Homogeneous()
		}
	}
	l.bc = &boundary{faces: operator.GhostFaces(l.lay, faces, hasNeighbour)}
	l.bc0 = &boundary{faces: operator.GhostFaces(l.lay, zero, hasNeighbour)}

	n := l.lay.Len()
	l.u, l.tmp = hugemem.Floats(n), hugemem.Floats(n)
	l.b = hugemem.Floats(n)
	l.wk = operator.NewWork(l.lay, tm)
	l.rows, l.parity, l.share, l.runs, l.parts = l.wk.Rows, l.wk.Parity, l.wk.Share, l.wk.Runs, l.wk.Parts
	l.bc.runs = operator.RunsFaces(l.lay, faces, hasNeighbour, l.runs)
	l.bc0.runs = operator.RunsFaces(l.lay, zero, hasNeighbour, l.runs)
	l.op = operator.NewUniformOp(l.h, l.wk)
	return l, nil
}

// cells is the number of cells of the global grid.
func (l *level) cells() int {
	n := 1
	for _, s := range l.shape {
		n *= s
	}
	return n
}

func (l *level) String() string { return decomp.FormatDims(l.shape) }

// parallel runs f(w, rows) for every worker's share of the level's rows.
func (l *level) parallel(f func(w int, rows []decomp.Span, parity []int)) { l.wk.Each(f) }

// boundary is one set of boundary values of a level: every ghost layer of
// its physical faces, corners included (for the exchanges before transfers,
// residuals and the bottom solve), and, per worker and run of the Jacobi
// sweep, the face ghosts that run reads, which the worker sets just before
// it (no serial pass over the faces before every sweep).
type boundary struct {
	faces []operator.GhostFace
	runs  [][]operator.RunFaces
}

// exchange fills the face ghosts of x: neighbours' cells through the halo,
// physical faces from bc.
func (l *level) exchange(x []float64, bc *boundary) error {
	if err := l.halo(x); err != nil {
		return err
	}
	operator.ApplyFaces(bc.faces, x)
	return nil
}

// halo fills the ghosts of x that neighbours' cells give.
func (l *level) halo(x []float64) error {
	if err := l.faces.Start(x); err != nil {
		return err
	}
	return l.faces.Finish(x)
}

// exchangeCorners fills every ghost of x, edges and corners included (the
// transfers read diagonal neighbours). The physical faces go first, so that
// the phased exchange passes neighbours' boundary ghosts on, and again
// after it, for the corners between a physical face and a neighbour.
func (l *level) exchangeCorners(x []float64, bc *boundary) error {
	operator.ApplyFaces(bc.faces, x)
	if err := l.corners.Start(x); err != nil {
		return err
	}
	if err := l.corners.Finish(x); err != nil {
		return err
	}
	operator.ApplyFaces(bc.faces, x)
	return nil
}

// jacobi does one weighted Jacobi sweep on u per weight: the halo, then
// the operator's sweep (the uniform one sets the physical ghosts each run
// reads as it goes; in media they are set with the halo).
func (l *level) jacobi(weights []float64, bc *boundary) error {
	for _, w := range weights {
		var err error
		if l.med != nil {
			err = l.exchange(l.u, bc)
		} else {
			err = l.halo(l.u)
		}
		if err != nil {
			return err
		}
		l.op.Jacobi(l.tmp, l.u, l.b, w, bc.runs)
		l.u, l.tmp = l.tmp, l.u
	}
	return nil
}

// gaussSeidel does sweeps red-black Gauss–Seidel sweeps on u in place:
// first the cells whose global indices sum to an even number, then the odd
// ones, each colour after a fresh exchange. A cell's neighbours all have
// the other colour, so every update is the same formula of the same values
// however the grid is split.
func (l *level) gaussSeidel(sweeps int, bc *boundary) error {
	for range sweeps {
		for colour := range 2 {
			if err := l.exchange(l.u, bc); err != nil {
				return err
			}
			l.op.GaussSeidel(l.u, l.b, colour)
		}
	}
	return nil
}

// residual sets tmp = b − A·u over the box (u's ghosts must be current).
func (l *level) residual() { l.op.Residual(l.tmp, l.u, l.b) }

// residualNorm is this rank's max |b − A·u| over the box for the field u
// (its ghosts current), NaN if any is NaN.
func (l *level) residualNorm(u []float64) float64 { return l.op.ResidualMax(u, l.b) }

// addTmp sets u += tmp over the box (the correction rank 0 sent).
func (l *level) addTmp() {
	l.parallel(func(_ int, rows []decomp.Span, _ []int) {
		for _, r := range rows {
			u, t := l.u[r.Start:r.Start+r.N], l.tmp[r.Start:r.Start+r.N]
			for j := range u {
				u[j] += t[j]
			}
		}
	})
}

// prolong interpolates the coarser level's correction src into dst (or
// adds it, add): linear or piecewise constant. In media, linear is by the
// operator's weights (l.flux) where the level has them (judgeMixed), and
// piecewise constant where not.
func (l *level) prolong(dst, src []float64, linear, add bool) {
	switch {
	case linear && l.flux != nil:
		l.down.ProlongFlux(dst, src, l.flux, add)
	case l.med != nil:
		l.down.Prolong(dst, src, false, add)
	default:
		l.down.Prolong(dst, src, linear, add)
	}
}
