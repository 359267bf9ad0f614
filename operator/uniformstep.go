package operator

import (
	"heat/decomp"
	"heat/stencil"
)

// UniformStep is the time loop's update of the uniform medium on the
// constant-coefficient kernels, u' = c0·u + Σ c_a·(the neighbours along a)
// + cf·f (stencil/kernel.go): an explicit (FTCS) step of the heat equation
// or a weighted Jacobi sweep of Poisson, with f the source scaled to the
// update. Run updates a worker's runs of one-step sweeps, Slab the rows of
// a temporal tile; both evaluate every cell with the same kernel and the
// same operands, so the bits do not depend on the path.
type UniformStep struct {
	k, base stencil.Coeffs
	kern    stencil.Kernel      // the update of temporal tiles
	sweep   stencil.Kernel      // the streaming update of one-step sweeps on large grids, else nil
	runk    stencil.RowsKernel  // the update of one-step sweeps otherwise, a run of rows a call
	runChk  stencil.CheckKernel // runk with the max|Δu| check, on check steps
	sy      int
}

// ExplicitStep is the explicit step of dt over lay's box (stream: one-step
// sweeps store past the caches), and the source's scale in f (dt).
func (u Uniform) ExplicitStep(lay decomp.Layout, dt float64, stream bool) (s *UniformStep, sourceScale float64) {
	s = newUniformStep(lay, stream)
	sourceScale = u.Explicit(&s.k, dt)
	s.k.CF = 1 // the source is scaled to the update already
	s.base = s.k
	return s, sourceScale
}

// JacobiStep is the weighted Jacobi sweep of ∇²u = f over lay's box, and
// the source's scale in f.
func (u Uniform) JacobiStep(lay decomp.Layout, stream bool) (s *UniformStep, sourceScale float64) {
	s = newUniformStep(lay, stream)
	sourceScale = u.Jacobi(&s.k)
	s.k.CF = 1
	s.base = s.k
	return s, sourceScale
}

func newUniformStep(lay decomp.Layout, stream bool) *UniformStep {
	nd := len(lay.N)
	s := &UniformStep{sy: lay.Stride[nd-2]}
	s.k.SY = s.sy
	if nd == 3 {
		s.k.SZ = lay.Stride[0]
	}
	s.kern = stencil.Active.Pick(nd)
	s.runk = stencil.Active.Rows(nd)
	s.runChk = stencil.Active.Check(nd)
	if stream {
		s.sweep = stencil.Active.Stream(nd)
	}
	return s
}

// Shorten sets the weights for one explicit step of r times the full one
// (a shortened last step: the source, prescaled by the full step, weighted
// by r); r = 1 restores the full step's.
func (s *UniformStep) Shorten(r float64) {
	s.k = s.base
	if r == 1 {
		return
	}
	s.k.CX, s.k.CY, s.k.CZ = float64(s.base.CX*r), float64(s.base.CY*r), float64(s.base.CZ*r)
	s.k.C0 = 1 - float64(2*(s.k.CX+s.k.CY+s.k.CZ))
	s.k.CF = r
}

// Run updates runs (a worker's share of a sweep) from u into v, each
// after the physical ghosts it reads (faces[i] for runs[i]; the kernels set
// the x faces' ghosts of each row); with check it returns their max |Δu|
// (NaN if any is NaN).
func (s *UniformStep) Run(v, u, f []float64, runs []decomp.Run, faces []RunFaces, check bool) float64 {
	var args stencil.Row
	sy := s.sy
	m := 0.0
	for ri, rn := range runs {
		g := &faces[ri]
		ApplyGhostRuns(g.Ghosts, u)
		args.W, args.E = g.W, g.E
		switch {
		case s.sweep != nil:
			for i := range rn.Count {
				s.k.At(&args, v, u, f, rn.Start+i*sy, rn.N)
				s.sweep(&s.k, &args)
			}
		case check:
			// The update and its max|Δu| in one pass.
			s.k.At(&args, v, u, f, rn.Start, rn.N)
			m = maxNaN(m, s.runChk(&s.k, &args, rn.Count, sy))
			continue
		default:
			s.k.At(&args, v, u, f, rn.Start, rn.N)
			s.runk(&s.k, &args, rn.Count, sy)
		}
		if check {
			for i := range rn.Count {
				a := rn.Start + i*sy
				m = maxNaN(m, stencil.MaxAbsDiff(v[a:a+rn.N], u[a:a+rn.N]))
			}
		}
	}
	stencil.Fence() // the streaming kernel's stores, before the team's barrier
	return m
}

// SlabRows are one worker's operands of Slab, kept by the worker: a
// kernel's operands on Slab's stack would escape through the kernel's
// function value, an allocation a slab step (7% of a 2D block's time on
// narrow tiles).
type SlabRows struct {
	args stencil.Row
	_    [64]byte // each worker's on cache lines of its own
}

// Slab updates rows rows of cnt cells of a temporal tile's slab, the first
// from offset i of dst, each further one stride on: src holds the slabs
// below, at and above the one updated (rows in 2D, planes in 3D), f the
// source's slab (nil: none). With check it returns max |Δu| over the cells
// it wrote.
func (s *UniformStep) Slab(a *SlabRows, dst []float64, src [3][]float64, f []float64, i, cnt, rows, stride int, check bool) float64 {
	args := &a.args
	args.D = dst[i : i+cnt]
	args.C = src[1][i-1 : i+cnt+1]
	if s.k.SZ == 0 {
		args.S = src[0][i : i+cnt]
		args.N = src[2][i : i+cnt]
	} else {
		sy := stride
		args.S = src[1][i-sy : i-sy+cnt]
		args.N = src[1][i+sy : i+sy+cnt]
		args.L = src[0][i : i+cnt]
		args.U = src[2][i : i+cnt]
	}
	if f != nil {
		args.F = f[i : i+cnt]
	}
	if rows == 1 {
		s.kern(&s.k, args)
	} else {
		s.runk(&s.k, args, rows, stride)
	}
	resid := 0.0
	if check {
		for r := range rows {
			o := i + r*stride
			resid = maxNaN(resid, stencil.MaxAbsDiff(dst[o:o+cnt], src[1][o:o+cnt]))
		}
	}
	return resid
}

// Prefetch asks the CPU to bring x into the caches (a tile's piece of a
// row too short for the hardware prefetchers).
func Prefetch(x []float64) { stencil.Prefetch(x) }

// KernelName is the name of the kernel set this build and CPU use:
// "generic", "avx2" or "avx512".
func KernelName() string { return stencil.Active.Name }

// SetSourceWeight sets the weight of the source in the update (a source
// that varies in time: the step's weight times a shortened step's share).
func (s *UniformStep) SetSourceWeight(cf float64) { s.k.CF = cf }
