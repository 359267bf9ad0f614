package operator

import (
	"math"

	"heat/decomp"
	"heat/stencil"
)

// Op is one grid level's operator L u = σ·ρc·u − β·∇·(k∇u) on one rank's
// box (AMReX's MLLinOp): what multigrid's cycles, its Krylov solvers and
// the implicit steps apply, without knowing whether the medium is uniform
// (NewUniformOp: ρc = 1, k folded into β) or not (NewMediaOp). Each method
// runs over the Work it was built on, its parts in parallel, and reads
// ghosts the caller filled (the halo, then ApplyFaces), but for the
// uniform Jacobi sweep's physical ones, which it sets run by run from the
// RunFaces it is given. The fields are the box's layout, ghosts included.
// In media every method leaves the cells that are not free alone (0 in a
// residual) and leaves their values to the caller.
type Op interface {
	// Scale sets σ and β (Poisson: 0, 1; an implicit step: 1, θ·dt).
	Scale(sigma, beta float64)
	// Jacobi sets dst = u + ω·D⁻¹(b − L u) (D the diagonal) over the box.
	Jacobi(dst, u, b []float64, omega float64, faces [][]RunFaces)
	// GaussSeidel updates u in place to D⁻¹(b − (L − D)u) on the cells of
	// one red–black colour (the parity of the sum of their global
	// indices). The uniform operator's only: the plan refuses red–black
	// sweeps in media.
	GaussSeidel(u, b []float64, colour int)
	// Residual sets dst = b − L u over the box.
	Residual(dst, u, b []float64)
	// ResidualMax is this rank's max |b − L u| over the box (NaN if any is
	// NaN).
	ResidualMax(u, b []float64) float64
	// Apply sets dst = L u over the box.
	Apply(dst, u []float64)
	// Backward is, over this rank's box and in one call, the worst
	// |b − L u|_i/((|L||u|)_i + max(|b_i|, data)) (the backward error
	// every solve's convergence is judged by: componentwise in the
	// coefficients, and in the data too where data is 0, normwise in it
	// where data is ‖b‖∞), max |b − L u| (what ResidualMax gives) and
	// ‖u‖∞; each NaN if any term is. u's ghosts must be current.
	Backward(u, b []float64, data float64) (omega, res, big float64)
	// StepRHS sets dst to an implicit step's known part ρc·u − c·(L₀ u) +
	// scale·src (src nil: none), L₀ = −∇·(k∇) (σ 0, β 1): Crank–Nicolson's
	// c = (1−θ)·dt, backward Euler's 0. u's ghosts must be current.
	StepRHS(dst, u, src []float64, c, scale float64)
	// NormInf is this rank's share of ‖L‖∞ (the run's is the max).
	NormInf() float64
	// Diagonal sets d to L's diagonal on the box's cells (in media 0 on
	// the cells that are not free).
	Diagonal(d []float64)
}

// uniformOp is the operator of the uniform medium on the constant-
// coefficient kernels.
type uniformOp struct {
	unif        Uniform
	wk          *Work
	nd, sy, sz  int
	sigma, diag float64
	jac, gs     stencil.Coeffs // weighted Jacobi's (c0 = 1−ω, c_a = ω·β/(h_a²·diag)) and Gauss–Seidel's (c_a = β/(h_a²·diag))
	res         stencil.Coeffs // the residual's: c0 = diag, c_a = β/h_a²
	lap         stencil.Coeffs // ∇²: c_a = 1/h_a²
	kern        stencil.RowsKernel
	resRows     stencil.RowsKernel
	resk        stencil.Kernel
	backward    stencil.BackwardKernel
	// The operands of the sweep under way, read by the bound methods (a
	// closure a sweep would be an allocation a sweep).
	dst, u, b      []float64
	faces          [][]RunFaces
	jacobiW, resW  func(w int)
	bufs           [][]float64 // per part: a scratch row
	maxes, maxes2  []float64   // per part: the maxima of one pass
	maxes3         []float64
	data           float64 // Backward's
	stepC, stepS   float64
	stepSrc        []float64
	stepW          func(w int)
	gsColour       int
	gsW, applyW    func(w int)
	componentW     func(w int)
	componentWorst float64
}

// NewUniformOp is the uniform operator σ·u − β·∇²u on cells of size h over
// wk (β carries the conductivity).
func NewUniformOp(h []float64, wk *Work) Op {
	nd := len(h)
	o := &uniformOp{unif: NewUniform(1, h), wk: wk, nd: nd, sy: wk.Lay.Stride[nd-2]}
	if nd == 3 {
		o.sz = wk.Lay.Stride[0]
	}
	for _, k := range []*stencil.Coeffs{&o.jac, &o.gs, &o.res, &o.lap} {
		k.SY, k.SZ = o.sy, o.sz
	}
	o.lap.CX, o.lap.CY, o.lap.CZ = o.unif.Inv2[2], o.unif.Inv2[1], o.unif.Inv2[0]
	o.kern = stencil.Active.Rows(nd)
	o.resRows = stencil.Active.ResidualRows(nd)
	o.resk = stencil.Active.Residual(nd)
	o.backward = stencil.Active.Backward(nd)
	o.bufs = make([][]float64, wk.Parts)
	o.maxes, o.maxes2, o.maxes3 = make([]float64, wk.Parts), make([]float64, wk.Parts), make([]float64, wk.Parts)
	o.jacobiW, o.resW, o.stepW = o.jacobiPart, o.residualPart, o.stepPart
	o.gsW, o.applyW, o.componentW = o.gsPart, o.applyPart, o.componentPart
	return o
}

func (o *uniformOp) Scale(sigma, beta float64) {
	o.sigma = sigma
	o.diag = o.unif.Residual(&o.res, sigma, beta)
	o.gs.C0, o.gs.CX, o.gs.CY, o.gs.CZ, o.gs.CF = 0, o.res.CX/o.diag, o.res.CY/o.diag, o.res.CZ/o.diag, 1/o.diag
}

// rowBuf is part w's scratch row of n values (each part touches only its
// own).
func (o *uniformOp) rowBuf(w, n int) []float64 {
	if len(o.bufs[w]) < n {
		o.bufs[w] = make([]float64, n)
	}
	return o.bufs[w][:n]
}

// Jacobi's weights: u' = (1−ω)·u + ω·(the Gauss–Seidel update),
// c_a = ω·β/(h_a²·diag), c0 = 1 − ω, cf = ω/diag (the kernel reads b itself).
func (o *uniformOp) Jacobi(dst, u, b []float64, omega float64, faces [][]RunFaces) {
	o.jac.C0, o.jac.CX, o.jac.CY, o.jac.CZ, o.jac.CF = 1-omega, omega*o.gs.CX, omega*o.gs.CY, omega*o.gs.CZ, omega/o.diag
	o.dst, o.u, o.b, o.faces = dst, u, b, faces
	o.wk.Team.Run(o.wk.Parts, o.jacobiW)
}

// jacobiPart is part w's share of a sweep: each run after the physical
// ghosts it reads.
func (o *uniformOp) jacobiPart(w int) {
	var args stencil.Row
	for i, r := range o.wk.Runs[w] {
		f := &o.faces[w][i]
		ApplyGhostRuns(f.Ghosts, o.u)
		args.W, args.E = f.W, f.E
		o.jac.At(&args, o.dst, o.u, o.b, r.Start, r.N)
		o.kern(&o.jac, &args, r.Count, o.sy)
	}
}

func (o *uniformOp) GaussSeidel(u, b []float64, colour int) {
	o.u, o.b, o.gsColour = u, b, colour
	o.wk.Team.Run(o.wk.Parts, o.gsW)
}

func (o *uniformOp) gsPart(w int) {
	var args stencil.Row
	lo, hi := o.wk.Share[w], o.wk.Share[w+1]
	for i, r := range o.wk.Rows[lo:hi] {
		o.gs.At(&args, o.u, o.u, o.b, r.Start, r.N)
		gsRow(&o.gs, &args, (o.gsColour+o.wk.Parity[lo+i])&1)
	}
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

func (o *uniformOp) Residual(dst, u, b []float64) {
	o.dst, o.u, o.b = dst, u, b
	o.wk.Team.Run(o.wk.Parts, o.resW)
}

// residualPart is part w's share of Residual, a run of rows a call.
func (o *uniformOp) residualPart(w int) {
	var args stencil.Row
	for _, r := range o.wk.Runs[w] {
		o.res.At(&args, o.dst, o.u, o.b, r.Start, r.N)
		o.resRows(&o.res, &args, r.Count, o.sy)
	}
}

// ResidualMax: each row's residual goes to the part's scratch row, in
// cache, and nothing is stored.
func (o *uniformOp) ResidualMax(u, b []float64) float64 {
	n := o.wk.Lay.N[o.nd-1]
	o.wk.Each(func(w int, rows []decomp.Span, _ []int) {
		var args stencil.Row
		buf := o.rowBuf(w, n)
		m := 0.0
		for _, r := range rows {
			o.res.At(&args, u, u, b, r.Start, r.N)
			args.D = buf[:r.N]
			o.resk(&o.res, &args)
			m = max(m, stencil.MaxAbs(args.D)) // max keeps a NaN
		}
		o.maxes[w] = m
	})
	return maxOf(o.maxes)
}

// maxOf is the largest of xs, NaN if any is.
func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = maxNaN(m, x)
	}
	return m
}

// maxNaN is the larger of x and y, NaN if either is.
func maxNaN(x, y float64) float64 {
	if y > x || y != y {
		return y
	}
	return x
}

// Apply: d = diag·c − Σ c_a·(neighbours), the residual's terms.
func (o *uniformOp) Apply(dst, u []float64) {
	o.dst, o.u = dst, u
	o.wk.Team.Run(o.wk.Parts, o.applyW)
}

func (o *uniformOp) applyPart(w int) {
	var args stencil.Row
	k := &o.res
	for _, rw := range o.wk.Rows[o.wk.Share[w]:o.wk.Share[w+1]] {
		k.At(&args, o.dst, o.u, nil, rw.Start, rw.N)
		c, d, s, n := args.C, args.D, args.S, args.N
		if args.L == nil {
			for j := range d {
				d[j] = float64(k.C0*c[j+1]) - (float64(k.CX*(c[j]+c[j+2])) + float64(k.CY*(s[j]+n[j])))
			}
			continue
		}
		lo, up := args.L, args.U
		for j := range d {
			d[j] = float64(k.C0*c[j+1]) - (float64(k.CX*(c[j]+c[j+2])) + float64(k.CY*(s[j]+n[j])) + float64(k.CZ*(lo[j]+up[j])))
		}
	}
}

func (o *uniformOp) Backward(u, b []float64, data float64) (omega, res, big float64) {
	o.u, o.b, o.data = u, b, data
	o.wk.Team.Run(o.wk.Parts, o.componentW)
	return maxOf(o.maxes), maxOf(o.maxes3), maxOf(o.maxes2)
}

// componentPart is part w's share of Backward: the stencil's backward
// kernel over each run of rows, on the residual's operands and weights (D
// is not read).
func (o *uniformOp) componentPart(w int) {
	var args stencil.Row
	worst, res, big := 0.0, 0.0, 0.0
	for _, r := range o.wk.Runs[w] {
		o.res.At(&args, o.u, o.u, o.b, r.Start, r.N)
		q, m, b := o.backward(&o.res, &args, r.Count, o.sy, o.data)
		worst, res, big = maxNaN(worst, q), maxNaN(res, m), maxNaN(big, b)
	}
	o.maxes[w], o.maxes2[w], o.maxes3[w] = worst, big, res
}

// relativeTo is |r|/den, or |r| where den is 0.
func relativeTo(r, den float64) float64 {
	e := math.Abs(r)
	if den > 0 {
		e /= den
	}
	return e
}

// StepRHS: b = u + c·∇²u + scale·src; backward Euler (c = 0) copies u.
func (o *uniformOp) StepRHS(dst, u, src []float64, c, scale float64) {
	o.dst, o.u, o.stepSrc, o.stepC, o.stepS = dst, u, src, c, scale
	o.wk.Team.Run(o.wk.Parts, o.stepW)
}

func (o *uniformOp) stepPart(w int) {
	var args stencil.Row
	c, scale, src := o.stepC, o.stepS, o.stepSrc
	for _, r := range o.wk.Rows[o.wk.Share[w]:o.wk.Share[w+1]] {
		u, b := o.u[r.Start:r.Start+r.N], o.dst[r.Start:r.Start+r.N]
		var s []float64
		if src != nil {
			s = src[r.Start : r.Start+r.N]
		}
		if c == 0 {
			copy(b, u)
			for j := range s {
				b[j] += float64(scale * s[j])
			}
			continue
		}
		o.lap.At(&args, o.dst, o.u, nil, r.Start, r.N)
		stepRow(&o.lap, &args, c, scale, s)
	}
}

// stepRow sets d = u + c·∇²u [+ scale·s] over a row, ∇²u = cx·((w−m)+(e−m))
// + cy·((s−m)+(n−m)) [+ cz·((l−m)+(u−m))] with c_a = 1/h_a², each axis'
// term over differences from the centre m, every product rounded on its
// own: one pass (three before, the same bits: 1024² Crank–Nicolson's right
// side took 2.5× as long).
func stepRow(k *stencil.Coeffs, r *stencil.Row, c, scale float64, src []float64) {
	ce, d, so, no := r.C, r.D, r.S[:len(r.D)], r.N[:len(r.D)]
	ce = ce[:len(d)+2]
	cx, cy := k.CX, k.CY
	switch {
	case r.L == nil && src == nil:
		for j := range d {
			m := ce[j+1]
			l := float64(cx*((ce[j]-m)+(ce[j+2]-m))) + float64(cy*((so[j]-m)+(no[j]-m)))
			d[j] = m + float64(c*l)
		}
	case r.L == nil:
		src = src[:len(d)]
		for j := range d {
			m := ce[j+1]
			l := float64(cx*((ce[j]-m)+(ce[j+2]-m))) + float64(cy*((so[j]-m)+(no[j]-m)))
			d[j] = m + float64(c*l) + float64(scale*src[j])
		}
	default:
		lo, up, cz := r.L[:len(d)], r.U[:len(d)], k.CZ
		for j := range d {
			m := ce[j+1]
			l := float64(cx*((ce[j]-m)+(ce[j+2]-m))) + float64(cy*((so[j]-m)+(no[j]-m))) + float64(cz*((lo[j]-m)+(up[j]-m)))
			x := m + float64(c*l)
			if src != nil {
				x += float64(scale * src[j])
			}
			d[j] = x
		}
	}
}

// NormInf: diag + Σ|off-diagonals| = 2·diag − σ.
func (o *uniformOp) NormInf() float64 { return 2*o.diag - o.sigma }

func (o *uniformOp) Diagonal(d []float64) {
	for _, r := range o.wk.Rows {
		for i := r.Start; i < r.Start+r.N; i++ {
			d[i] = o.diag
		}
	}
}
