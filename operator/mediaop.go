package operator

import (
	"math"

	"heat/decomp"
	"heat/stencil"
)

// mediaOp is the operator of heterogeneous media on the variable-
// coefficient kernels (Media.Implicit's coefficients).
type mediaOp struct {
	m       *Media
	wk      *Work
	nd, sy  int
	vk      stencil.VarKernels
	vc      *stencil.VarCoeffs
	rhs     *stencil.VarCoeffs // StepRHS's ρc·u − c·L₀u, for rhsC
	rhsC    float64
	scratch []float64 // ResidualMax's residual, for Backward
	// The operands of the sweep under way (see uniformOp).
	dst, u, b     []float64
	omega         float64
	smoothW, resW func(w int)
	bufs          [][]float64
	maxes, maxes2 []float64
}

// NewMediaOp is the operator σ·ρc·u − β·∇·(k∇u) of the media m over wk.
func NewMediaOp(m *Media, wk *Work) Op {
	nd := len(m.Lay.N)
	o := &mediaOp{m: m, wk: wk, nd: nd, sy: m.Lay.Stride[nd-2], vk: stencil.Active.Var(nd),
		scratch: make([]float64, m.Lay.Len()), bufs: make([][]float64, wk.Parts),
		maxes: make([]float64, wk.Parts), maxes2: make([]float64, wk.Parts)}
	o.smoothW, o.resW = o.smoothPart, o.residualPart
	return o
}

func (o *mediaOp) Scale(sigma, beta float64) { o.vc = o.m.Implicit(sigma, beta) }

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
	res = o.ResidualMax(u, b)
	o.wk.Each(func(w int, rows []decomp.Span, _ []int) {
		if len(o.bufs[w]) < o.sy {
			o.bufs[w] = make([]float64, o.sy)
		}
		worst, big := 0.0, 0.0
		for _, r := range rows {
			rw, rb := componentRow(o.vc, u, o.scratch, b, o.bufs[w], r.Start, r.Start+r.N, o.nd == 3, data)
			worst, big = maxNaN(worst, rw), maxNaN(big, rb)
		}
		o.maxes[w], o.maxes2[w] = worst, big
	})
	return maxOf(o.maxes), res, maxOf(o.maxes2)
}

// componentRow is Backward's pass over the cells [lo, hi) of one
// row: the worst |r_i|/((|A||u|)_i + |f_i|) of its free cells, with r the
// residual left in res, and the largest |u_i| of all its cells. The
// magnitudes are summed into t (the row's length, in cache) one axis at a
// time, in the order of the formula: few arrays a loop, no spills.
func componentRow(vc *stencil.VarCoeffs, u, res, rhs, t []float64, lo, hi int, is3D bool, data float64) (worst, big float64) {
	n := hi - lo
	t = t[:n]
	uc := u[lo:hi]
	if vc.A != nil {
		for j, a := range vc.A[lo:hi][:n] {
			t[j] = math.Abs(a * uc[j])
		}
	} else {
		clear(t)
	}
	axis := func(s int, b []float64) {
		un, us := u[lo+s : hi+s][:n], u[lo-s : hi-s][:n]
		bn, bs := b[lo:hi][:n], b[lo-s : hi-s][:n]
		for j, c := range uc {
			ac := math.Abs(c)
			t[j] = t[j] + bn[j]*(math.Abs(un[j])+ac) + bs[j]*(ac+math.Abs(us[j]))
		}
	}
	axis(1, vc.BX)
	axis(vc.SY, vc.BY)
	if is3D {
		axis(vc.SZ, vc.BZ)
	}
	mk, rs, fs := vc.M[lo:hi][:n], res[lo:hi][:n], rhs[lo:hi][:n]
	for j, c := range uc {
		big = maxNaN(big, math.Abs(c))
		if mk[j] == 0 {
			continue
		}
		// Divide only where the quotient may beat worst: |r| below
		// worst·den less a margin past the products' rounding (1e-15 over
		// 2^-53) cannot round above worst. An overflowing worst·den is
		// above |r| too; a NaN fails the test and is divided.
		den := t[j] + max(math.Abs(fs[j]), data)
		if math.Abs(rs[j]) < worst*den*(1-1e-15) {
			continue
		}
		worst = maxNaN(worst, relativeTo(rs[j], den))
	}
	return worst, big
}

// StepRHS: dst = M·(ρc·u + c·∇·(k∇u)) + scale·src.
func (o *mediaOp) StepRHS(dst, u, src []float64, c, scale float64) {
	if o.rhs == nil || o.rhsC != c {
		o.rhs, o.rhsC = o.m.Implicit(1, -c), c // A = ρc, faces −c·k_f/h²
	}
	o.wk.Team.Run(o.wk.Parts, func(w int) {
		for _, r := range o.wk.Runs[w] {
			o.vk.Apply(o.rhs, dst, u, nil, 0, r.Start, r.N, r.Count, o.sy)
			if src == nil {
				continue
			}
			for i := range r.Count {
				a := r.Start + i*o.sy
				b, s := dst[a:a+r.N], src[a:a+r.N]
				for j := range b {
					b[j] += scale * s[j]
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
