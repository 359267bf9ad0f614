package operator

import (
	"heat/decomp"
	"heat/internal/hugemem"
	"heat/stencil"
)

// mediaOp is the operator of heterogeneous media on the variable-
// coefficient kernels (Media.Implicit's coefficients).
type mediaOp struct {
	m      *Media
	wk     *Work
	nd, sy int
	vk     stencil.VarKernels
	vc     *stencil.VarCoeffs
	own    Scaled // vc's arrays
	// StepRHS's coefficients of ρc·u − c·L₀u for the last two c (an SDIRK
	// step alternates two: its stages' 0 and their time derivatives' dt),
	// slot last the latest used.
	rhs     [2]Scaled
	rhsC    [2]float64
	rhsSet  [2]bool
	last    int
	scratch []float64 // ResidualMax's residual
	// The operands of the sweep under way (see uniformOp).
	dst, u, b             []float64
	omega                 float64
	smoothW, resW         func(w int)
	maxes, maxes2, maxes3 []float64
}

// NewMediaOp is the operator σ·ρc·u − β·∇·(k∇u) of the media m over wk.
func NewMediaOp(m *Media, wk *Work) Op {
	nd := len(m.Lay.N)
	o := &mediaOp{m: m, wk: wk, nd: nd, sy: m.Lay.Stride[nd-2], vk: stencil.Active.Var(nd),
		scratch: hugemem.Floats(m.Lay.Len()),
		maxes:   make([]float64, wk.Parts), maxes2: make([]float64, wk.Parts), maxes3: make([]float64, wk.Parts)}
	o.smoothW, o.resW = o.smoothPart, o.residualPart
	return o
}

func (o *mediaOp) Scale(sigma, beta float64) { o.vc = o.m.ImplicitOn(&o.own, o.wk, sigma, beta) }

// Jacobi reads every ghost from u: the caller sets the physical ones with
// ApplyFaces (faces is unused).
func (o *mediaOp) Jacobi(dst, u, b []float64, omega float64, _ [][]RunFaces) {
	o.dst, o.u, o.b, o.omega = dst, u, b, omega
	o.wk.Team.Run(o.wk.Parts, o.smoothW)
}

func (o *mediaOp) smoothPart(w int) {
	for _, r := range o.wk.Runs[w] {
		o.vk.Smooth(o.vc, o.dst, o.u, o.b, o.omega, r.Start, r.N, r.Count, o.sy)
	}
}

func (o *mediaOp) GaussSeidel([]float64, []float64, int) {
	panic("operator: red–black Gauss–Seidel in media (the plan refuses it)")
}

func (o *mediaOp) Residual(dst, u, b []float64) {
	o.dst, o.u, o.b = dst, u, b
	o.wk.Team.Run(o.wk.Parts, o.resW)
}

func (o *mediaOp) residualPart(w int) {
	for _, r := range o.wk.Runs[w] {
		o.vk.Residual(o.vc, o.dst, o.u, o.b, 0, r.Start, r.N, r.Count, o.sy)
	}
}

func (o *mediaOp) ResidualMax(u, b []float64) float64 {
	o.wk.Team.Run(o.wk.Parts, func(w int) {
		m := 0.0
		for _, r := range o.wk.Runs[w] {
			o.vk.Residual(o.vc, o.scratch, u, b, 0, r.Start, r.N, r.Count, o.sy)
			for i := range r.Count {
				a := r.Start + i*o.sy
				m = max(m, stencil.MaxAbs(o.scratch[a:a+r.N]))
			}
		}
		o.maxes[w] = m
	})
	return maxOf(o.maxes)
}

func (o *mediaOp) Apply(dst, u []float64) {
	o.wk.Each(func(_ int, rows []decomp.Span, _ []int) {
		for _, r := range rows {
			o.vk.Apply(o.vc, dst, u, nil, 0, r.Start, r.N, 1, o.sy)
		}
	})
}

func (o *mediaOp) Backward(u, b []float64, data float64) (omega, res, big float64) {
	o.wk.Team.Run(o.wk.Parts, func(w int) {
		var q, m, g float64
		for _, r := range o.wk.Runs[w] {
			rq, rm, rg := o.vk.Backward(o.vc, u, b, data, r.Start, r.N, r.Count, o.sy)
			q, m, g = maxNaN(q, rq), maxNaN(m, rm), maxNaN(g, rg)
		}
		o.maxes[w], o.maxes2[w], o.maxes3[w] = q, m, g
	})
	return maxOf(o.maxes), maxOf(o.maxes2), maxOf(o.maxes3)
}

// StepRHS: dst = M·(ρc·u + c·∇·(k∇u)) + scale·src.
func (o *mediaOp) StepRHS(dst, u, src []float64, c, scale float64) {
	k := o.last
	switch {
	case o.rhsSet[k] && o.rhsC[k] == c:
	case o.rhsSet[1-k] && o.rhsC[1-k] == c:
		k = 1 - k
	default:
		k = 1 - k                              // over the one used longer ago
		o.m.ImplicitOn(&o.rhs[k], o.wk, 1, -c) // A = ρc, faces −c·k_f/h²
		o.rhsC[k], o.rhsSet[k] = c, true
	}
	o.last = k
	vc := &o.rhs[k].vc
	o.wk.Team.Run(o.wk.Parts, func(w int) {
		for _, r := range o.wk.Runs[w] {
			o.vk.Apply(vc, dst, u, nil, 0, r.Start, r.N, r.Count, o.sy)
			if src == nil {
				continue
			}
			for i := range r.Count {
				a := r.Start + i*o.sy
				b, s := dst[a:a+r.N], src[a:a+r.N]
				for j := range b {
					b[j] += float64(scale * s[j])
				}
			}
		}
	})
}

func (o *mediaOp) NormInf() float64 { return o.m.NormInf(o.vc) }

func (o *mediaOp) Diagonal(d []float64) {
	for _, r := range o.wk.Rows {
		for i := r.Start; i < r.Start+r.N; i++ {
			d[i] = 0
			if w := o.vc.W[i]; w != 0 {
				d[i] = 1 / w
			}
		}
	}
}
