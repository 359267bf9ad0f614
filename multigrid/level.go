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
	"heat/stencil"
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

	unif operator.Uniform // the uniform operator's weights (β carries α)
	rows []decomp.Span
	// parity[i] is (sum of the global indices of row i's first cell) mod 2,
	// which, with the cell's offset along the row, gives its red-black colour.
	parity []int
	share  []int          // worker w takes rows[share[w]:share[w+1]]
	runs   [][]decomp.Run // worker w's rows as runs, for the many-row kernel
	tm     *team.Team
	parts  int // the parts a sweep of the level is cut into (team.PartsFor)

	// The smoother's and residual's weights (set by setOperator).
	diag float64            // σ + β·Σ 2/h²
	jac  stencil.Coeffs     // weighted Jacobi: c0 = 1−ω, c_a = ω·β/(h_a²·diag)
	gs   stencil.Coeffs     // Gauss–Seidel: c_a = β/(h_a²·diag)
	res  stencil.Coeffs     // residual: c0 = diag, c_a = β/h_a²
	kern stencil.RowsKernel // the Jacobi sweep's kernel, a run of rows a call
	// sweep is jacobiSweep bound to the level, sweepBC the boundary of the
	// sweeps under way.
	sweep   func(w int)
	sweepBC *boundary
	resk    stencil.Kernel     // the residual's
	resRows stencil.RowsKernel // the residual of a run of rows

	// Heterogeneous media (nil: uniform, the Coeffs above): the level's
	// media, its kernels' coefficients and kernels, the cells that are not
	// free (and the top level's values of them), a scratch field for the
	// residual norm, and the weight of the sweep under way.
	med          *operator.Media
	vc           *stencil.VarCoeffs
	vk           stencil.VarKernels
	fixed        []int
	fixedVal     []float64
	scratch      []float64
	omega        float64
	varSweepW    func(w int)
	varResidualW func(w int)
	hasNeighbour [][2]bool
	rhs          *stencil.VarCoeffs // an implicit step's right-hand side operator, for rhsC
	rhsC         float64

	cg     *cg                         // the bottom solver's vectors, on the coarsest level
	kc     *kvectors                   // the K-cycle's vectors, on a coarse level in media
	mixed  bool                        // media: the level's error equation is solved by the K-cycle (judgeMixed)
	accs   []*[maxDots]exactsum.Binned // per worker: an accumulator per sum of one collective
	bufs   [][]float64                 // per worker: scratch rows (prolongation)
	maxes  []float64                   // per worker: max |r| of the last residual norm
	maxes2 []float64                   // per worker: a second maximum of one pass (ComponentError's ‖u‖∞)
}

// rowBuf is worker w's scratch of n values (each worker touches only its
// own).
func (l *level) rowBuf(w, n int) []float64 {
	if len(l.bufs[w]) < n {
		l.bufs[w] = make([]float64, n)
	}
	return l.bufs[w][:n]
}

// newLevel lays out box of a global grid of the given shape on c's ranks
// (topo is their process grid) with one ghost layer, and its exchange plans.
// tag is the base tag of the level's plans.
func newLevel(c comm.Comm, topo *decomp.Grid, shape []int, length []float64, box decomp.Box, faces [][2]operator.Face, tm *team.Team, tag int) (*level, error) {
	nd := len(shape)
	l := &level{c: c, topo: topo, shape: slices.Clone(shape), tm: tm}
	l.h = make([]float64, nd)
	for a := range nd {
		l.h[a] = length[a] / float64(shape[a])
	}
	l.unif = operator.NewUniform(1, l.h)
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
	l.varSweepW, l.varResidualW = l.varSweep, l.varResidual
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
	g := make([]int, nd)
	l.lay.ForRows(decomp.Box{Lo: make([]int, nd), Hi: l.lay.N}, func(start, n int) {
		l.rows = append(l.rows, decomp.Span{Start: start, N: n})
		l.lay.Global(start, g)
		p := 0
		for _, x := range g {
			p += x
		}
		l.parity = append(l.parity, p&1)
	})
	l.parts = tm.PartsFor(l.lay.Box.Size())
	l.share = decomp.Shares(l.rows, l.parts)
	l.runs = make([][]decomp.Run, l.parts)
	for w := range l.runs {
		l.runs[w] = decomp.Runs(l.rows[l.share[w]:l.share[w+1]], l.lay.Stride[nd-2])
	}
	l.bc.forRuns(l.lay, faces, hasNeighbour, l.runs)
	l.bc0.forRuns(l.lay, zero, hasNeighbour, l.runs)
	l.bufs = make([][]float64, l.parts)
	l.maxes, l.maxes2 = make([]float64, l.parts), make([]float64, l.parts)
	sy, sz := l.lay.Stride[nd-2], 0
	if nd == 3 {
		sz = l.lay.Stride[0]
	}
	for _, k := range []*stencil.Coeffs{&l.jac, &l.gs, &l.res} {
		k.SY, k.SZ = sy, sz
	}
	l.kern = stencil.Active.Rows(nd)
	l.resRows = stencil.Active.ResidualRows(nd)
	l.sweep = l.jacobiSweep
	l.resk = stencil.Active.Residual(nd)
	return l, nil
}

// setOperator sets the weights of σ·u − β·∇²u.
func (l *level) setOperator(op Operator) {
	l.diag = l.unif.Residual(&l.res, op.Sigma, op.Beta)
	l.gs.C0, l.gs.CX, l.gs.CY, l.gs.CZ, l.gs.CF = 0, l.res.CX/l.diag, l.res.CY/l.diag, l.res.CZ/l.diag, 1/l.diag
}

// weight sets the Jacobi kernel's weights for a sweep of weight omega:
// u' = (1−ω)·u + ω·(the Gauss–Seidel update): c_a = ω·β/(h_a²·diag),
// c0 = 1 − ω, cf = ω/diag (the kernel reads b itself).
func (l *level) weight(omega float64) {
	l.jac.C0, l.jac.CX, l.jac.CY, l.jac.CZ, l.jac.CF = 1-omega, omega*l.gs.CX, omega*l.gs.CY, omega*l.gs.CZ, omega/l.diag
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
func (l *level) parallel(f func(w int, rows []decomp.Span, parity []int)) {
	l.tm.Run(l.parts, func(w int) {
		lo, hi := l.share[w], l.share[w+1]
		f(w, l.rows[lo:hi], l.parity[lo:hi])
	})
}

// boundary is one set of boundary values of a level: every ghost layer of
// its physical faces, corners included (for the exchanges before transfers,
// residuals and the bottom solve), and, per worker and run of the Jacobi
// sweep, the face ghosts that run reads, which the worker sets just before
// it (no serial pass over the faces before every sweep).
type boundary struct {
	faces []operator.GhostFace
	runs  [][][]operator.GhostRun
	edges [][][2]stencil.Edge // the x faces' ghosts of each run, set by the kernel
}

// forRuns lists the ghosts each of runs reads (operator.RunGhosts): the x
// faces' as the edges the sweep's kernel sets (west, east), the others to
// set before it.
func (bc *boundary) forRuns(lay decomp.Layout, faces [][2]operator.Face, hasNeighbour [][2]bool, runs [][]decomp.Run) {
	bc.runs = make([][][]operator.GhostRun, len(runs))
	bc.edges = make([][][2]stencil.Edge, len(runs))
	for w, rs := range runs {
		bc.runs[w] = make([][]operator.GhostRun, len(rs))
		bc.edges[w] = make([][2]stencil.Edge, len(rs))
		for i, rn := range rs {
			e := &bc.edges[w][i]
			bc.runs[w][i], e[0], e[1] = operator.Edges(operator.RunGhosts(lay, faces, hasNeighbour, rn))
		}
	}
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
// each worker's runs, each after the physical ghosts it reads.
func (l *level) jacobi(weights []float64, bc *boundary) error {
	l.sweepBC = bc
	for _, w := range weights {
		if l.vc != nil {
			l.omega = w
			if err := l.exchange(l.u, bc); err != nil {
				return err
			}
			l.tm.Run(l.parts, l.varSweepW)
			l.u, l.tmp = l.tmp, l.u
			continue
		}
		l.weight(w)
		if err := l.halo(l.u); err != nil {
			return err
		}
		l.tm.Run(l.parts, l.sweep)
		l.u, l.tmp = l.tmp, l.u
	}
	return nil
}

// jacobiSweep is worker w's share of a Jacobi sweep (bound once to
// l.sweep: a closure a sweep would be an allocation a sweep).
func (l *level) jacobiSweep(w int) {
	var args stencil.Row
	sy := l.lay.Stride[len(l.shape)-2]
	for i, r := range l.runs[w] {
		operator.ApplyGhostRuns(l.sweepBC.runs[w][i], l.u)
		args.W, args.E = l.sweepBC.edges[w][i][0], l.sweepBC.edges[w][i][1]
		l.jac.At(&args, l.tmp, l.u, l.b, r.Start, r.N)
		l.kern(&l.jac, &args, r.Count, sy)
	}
}

// gaussSeidel does sweeps red-black Gauss–Seidel sweeps on u in place: first the cells whose global indices sum to an even
// number, then the odd ones, each colour after a fresh exchange. A cell's
// neighbours all have the other colour, so every update is the same formula
// of the same values however the grid is split.
func (l *level) gaussSeidel(sweeps int, bc *boundary) error {
	for range sweeps {
		for colour := range 2 {
			if err := l.exchange(l.u, bc); err != nil {
				return err
			}
			l.parallel(func(_ int, rows []decomp.Span, parity []int) {
				var args stencil.Row
				for i, r := range rows {
					l.gs.At(&args, l.u, l.u, l.b, r.Start, r.N)
					gsRow(&l.gs, &args, (colour+parity[i])&1)
				}
			})
		}
	}
	return nil
}

// gsRow updates the cells first, first+2, … of a row in place:
// u = cx·(w+e) + cy·(s+n) [+ cz·(l+u)] + cf·f, each product rounded on its own.
func gsRow(k *stencil.Coeffs, r *stencil.Row, first int) {
	c, d, s, n, f := r.C, r.D, r.S, r.N, r.F
	if r.L == nil {
		for j := first; j < len(d); j += 2 {
			d[j] = float64(k.CX*(c[j]+c[j+2])) + float64(k.CY*(s[j]+n[j])) + float64(k.CF*f[j])
		}
		return
	}
	lo, up := r.L, r.U
	for j := first; j < len(d); j += 2 {
		d[j] = float64(k.CX*(c[j]+c[j+2])) + float64(k.CY*(s[j]+n[j])) + float64(k.CZ*(lo[j]+up[j])) + float64(k.CF*f[j])
	}
}

// residual sets tmp = b − A·u over the box (u's ghosts must be current),
// a run of rows a kernel call.
func (l *level) residual() {
	if l.vc != nil {
		l.tm.Run(l.parts, l.varResidualW)
		return
	}
	l.tm.Run(l.parts, l.residualRuns)
}

// residualRuns is worker w's share of residual (bound once, as sweep).
func (l *level) residualRuns(w int) {
	var args stencil.Row
	sy := l.lay.Stride[len(l.shape)-2]
	for _, r := range l.runs[w] {
		l.res.At(&args, l.tmp, l.u, l.b, r.Start, r.N)
		l.resRows(&l.res, &args, r.Count, sy)
	}
}

// residualNorm is this rank's max |b − A·u| over the box for the field u
// (its ghosts current), NaN if any is NaN. Each row's residual goes to the
// worker's scratch row, in cache, and nothing is stored.
func (l *level) residualNorm(u []float64) float64 {
	if l.vc != nil {
		return l.varResidualNorm(u)
	}
	n := l.lay.N[len(l.lay.N)-1]
	l.parallel(func(w int, rows []decomp.Span, _ []int) {
		var args stencil.Row
		buf := l.rowBuf(w, n)
		m := 0.0
		for _, r := range rows {
			l.res.At(&args, u, u, l.b, r.Start, r.N)
			args.D = buf[:r.N]
			l.resk(&l.res, &args)
			m = max(m, stencil.MaxAbs(args.D)) // max keeps a NaN
		}
		l.maxes[w] = m
	})
	return slices.Max(l.maxes) // a NaN too
}

// laplacianRow sets d = cx·((w−c)+(e−c)) + cy·((s−c)+(n−c)) [+ cz·((l−c)+(u−c))]:
// ∇²u with c_a = 1/h_a², each axis' term over differences from the centre.
func laplacianRow(k *stencil.Coeffs, r *stencil.Row) {
	c, d, s, n := r.C, r.D, r.S[:len(r.D)], r.N[:len(r.D)]
	c = c[:len(d)+2]
	if r.L == nil {
		for j := range d {
			m := c[j+1]
			d[j] = float64(k.CX*((c[j]-m)+(c[j+2]-m))) + float64(k.CY*((s[j]-m)+(n[j]-m)))
		}
		return
	}
	lo, up := r.L[:len(d)], r.U[:len(d)]
	for j := range d {
		m := c[j+1]
		d[j] = float64(k.CX*((c[j]-m)+(c[j+2]-m))) + float64(k.CY*((s[j]-m)+(n[j]-m))) + float64(k.CZ*((lo[j]-m)+(up[j]-m)))
	}
}

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
