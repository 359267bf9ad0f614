// Package operator owns heat's discrete equation on one rank's box: the
// finite-volume operator L u = a·u − ∇·(b∇u) on the cell-centred grid, in
// the uniform case (b = α everywhere, a = 0 or 1/dt) and in heterogeneous
// media (per-cell conductivity k and volumetric heat capacity ρc, with
// insulating holes and held cells).
//
// It decides what the solvers must agree on: the face coefficients
// (k_f = 2·k_i·k_j/(k_i + k_j), 0 where either is 0, k_i itself at a
// physical face), the boundary kinds and their ghost formulas, the
// explicit stability limit, the diagonal and the smoothers' eigenvalue
// bound, and the coarse levels' coefficients. Op applies it (Apply,
// Residual, Jacobi and Gauss–Seidel sweeps, an implicit step's right side,
// ‖L‖∞, the componentwise backward error) on stencil's kernels — the
// uniform kernels for the uniform case (NewUniformOp), the variable-
// coefficient ones otherwise (NewMediaOp) —, and Transfer moves fields
// between grid levels: multigrid sees only these.
package operator

import (
	"fmt"
	"math"

	"heat/decomp"
	"heat/internal/hugemem"
	"heat/internal/team"
	"heat/stencil"
)

// SafetyFactor is the share of the stability limit an explicit step takes
// when the time step is automatic.
const SafetyFactor = 0.9

// Harmonic is the coefficient of the face between cells of conductivity ki
// and kj: their harmonic mean, ki itself where they are equal (so a uniform
// region's faces are its k exactly) and 0 where either is 0 (a hole).
func Harmonic(ki, kj float64) float64 {
	switch {
	case ki == kj:
		return ki
	case ki == 0 || kj == 0:
		return 0
	}
	if h := float64(2*ki) * kj / (ki + kj); h <= math.MaxFloat64 {
		return h
	}
	// 2·ki·kj (or ki + kj) overflowed: the same mean of the scaled pair,
	// which no finite ki, kj overflow (it lies between them).
	s := max(ki, kj)
	a, b := ki/s, kj/s
	return s * (float64(2*a) * b / (a + b))
}

// Media are the coefficients of one box in heterogeneous media, in the
// box's flat layout (ghosts included). K's ghosts hold the neighbours'
// conductivities, or the box's own mirrored at a physical face, so that
// the face coefficients follow from K alone.
type Media struct {
	Lay  decomp.Layout
	H    []float64 // cell size per axis, C order
	K    []float64 // conductivity per cell; 0: an insulating hole
	RhoC []float64 // volumetric heat capacity per cell (box cells; ghosts 0)
	Held []float64 // the value a held cell keeps, NaN on a free cell (box cells)
	// B[a][i] is k_f/h_a² of the face between cell i and cell i + Stride[a]
	// (a in C order); the face below the box's first cell along a is at the
	// ghost index below it.
	B [][]float64
	// Free[i] is 1 on a cell the solvers update, 0 on a hole or a held cell.
	Free []float64
	// Tie[i], on a coarse multigrid level, is the Σ k_f/h² (restricted as
	// the faces are) of the faces that join cell i's free children to cells
	// that are not free: a held cell's error is 0, so its faces add to the
	// diagonal of the free cells beside it and join them to nothing. nil on
	// the fine level, whose held cells are in the operator as known values.
	Tie []float64
}

// Exchange fills the ghosts of a field of the box's layout that
// neighbouring boxes own (periodic wrap included); physical faces' ghosts
// are left alone.
type Exchange func(x []float64) error

// NewMedia lays out the per-cell k, ρc and held values of the box (C order,
// last axis fastest; held NaN where free) and derives the face
// coefficients: K's ghosts come from the neighbours through exchange, and
// are mirrored at the physical faces (hasNeighbour[a][side] false).
func NewMedia(lay decomp.Layout, h []float64, k, rhoC, held []float64, hasNeighbour [][2]bool, exchange Exchange) (*Media, error) {
	n := lay.Box.Size()
	if len(k) != n || len(rhoC) != n || len(held) != n {
		return nil, fmt.Errorf("operator: media of %d, %d, %d cells for a box of %d", len(k), len(rhoC), len(held), n)
	}
	m := &Media{Lay: lay, H: h, K: hugemem.Floats(lay.Len()), RhoC: hugemem.Floats(lay.Len()),
		Held: hugemem.Floats(lay.Len()), Free: hugemem.Floats(lay.Len())}
	for i := range m.Held {
		m.Held[i] = math.NaN()
	}
	m.scatter(k, m.K)
	m.scatter(rhoC, m.RhoC)
	m.scatter(held, m.Held)
	if err := m.faces(hasNeighbour, exchange); err != nil {
		return nil, err
	}
	return m, nil
}

// box is the box's own cells in local coordinates.
func (m *Media) box() decomp.Box {
	return decomp.Box{Lo: make([]int, len(m.Lay.N)), Hi: m.Lay.N}
}

// scatter copies box values (C order) into a laid-out field.
func (m *Media) scatter(src, dst []float64) {
	o := 0
	m.Lay.ForRows(m.box(), func(start, n int) {
		copy(dst[start:start+n], src[o:o+n])
		o += n
	})
}

// Gather copies a laid-out field's box cells into C order (the inverse of
// the layout, for checkpoints and snapshots).
func (m *Media) Gather(src []float64) []float64 {
	out := hugemem.Floats(m.Lay.Box.Size())[:0]
	m.Lay.ForRows(m.box(), func(start, n int) {
		out = append(out, src[start:start+n]...)
	})
	return out
}

// faces sets K's ghosts and the face coefficients and free mask from K.
func (m *Media) faces(hasNeighbour [][2]bool, exchange Exchange) error {
	lay := m.Lay
	nd := len(lay.N)
	if err := exchange(m.K); err != nil {
		return err
	}
	mirror := make([][2]Face, nd)
	for a := range mirror {
		mirror[a] = [2]Face{{Kind: Neumann}, {Kind: Neumann}}
	}
	ApplyFaces(GhostFaces(lay, mirror, hasNeighbour), m.K)
	m.B = make([][]float64, nd)
	for a := range nd {
		b := hugemem.Floats(lay.Len())
		inv2 := 1 / (m.H[a] * m.H[a])
		st := lay.Stride[a]
		// The faces above every cell of the box, and above the ghost layer
		// below it along a (the box's low faces).
		r := m.box()
		r.Lo = append([]int(nil), r.Lo...)
		r.Lo[a] = -1
		lay.ForRows(r, func(start, n int) {
			for i := start; i < start+n; i++ {
				b[i] = float64(Harmonic(m.K[i], m.K[i+st]) * inv2)
			}
		})
		m.B[a] = b
	}
	m.Lay.ForRows(m.box(), func(start, n int) {
		for i := start; i < start+n; i++ {
			if m.K[i] != 0 && m.Held[i] != m.Held[i] && m.faceSum(i) > 0 {
				m.Free[i] = 1
			}
		}
	})
	return nil
}

// faceSum is Σ k_f/h² over the faces of cell i.
func (m *Media) faceSum(i int) float64 {
	s := 0.0
	for a, b := range m.B {
		s += b[i] + b[i-m.Lay.Stride[a]]
	}
	return s
}

// StableDT is this box's explicit stability limit, min over its free cells
// of ρc_i/Σ_faces(k_f/h²) (+Inf where none is free); the run's is the
// minimum over the boxes.
func (m *Media) StableDT() float64 {
	lim := math.Inf(1)
	m.Lay.ForRows(m.box(), func(start, n int) {
		for i := start; i < start+n; i++ {
			if m.Free[i] != 0 {
				lim = min(lim, m.RhoC[i]/m.faceSum(i))
			}
		}
	})
	return lim
}

// coeffs are the operands every variable-coefficient kernel shares.
func (m *Media) coeffs() *stencil.VarCoeffs {
	nd := len(m.Lay.N)
	vc := &stencil.VarCoeffs{SY: m.Lay.Stride[nd-2], BX: m.B[nd-1], BY: m.B[nd-2], M: m.Free}
	if nd == 3 {
		vc.SZ, vc.BZ = m.Lay.Stride[0], m.B[0]
	}
	return vc
}

// Explicit is the explicit step's coefficients for a step of dt: the faces
// and S = dt/ρc on free cells, 0 on holes and held cells.
func (m *Media) Explicit(dt float64) *stencil.VarCoeffs {
	vc := m.coeffs()
	vc.S = hugemem.Floats(m.Lay.Len())
	m.SetStep(vc, dt)
	return vc
}

// SetStep sets the S of explicit coefficients for a step of dt (a
// shortened last step).
func (m *Media) SetStep(vc *stencil.VarCoeffs, dt float64) {
	m.Lay.ForRows(m.box(), func(start, n int) {
		for i := start; i < start+n; i++ {
			vc.S[i] = 0
			if m.Free[i] != 0 {
				vc.S[i] = dt / m.RhoC[i]
			}
		}
	})
}

// Jacobi is the coefficients of the Poisson operator −∇·(k∇u) (a = 0) for
// weighted Jacobi sweeps: W = 1/Σ_faces(k_f/h²) on free cells, 0 elsewhere.
func (m *Media) Jacobi() *stencil.VarCoeffs {
	vc := m.coeffs()
	vc.W = hugemem.Floats(m.Lay.Len())
	m.Lay.ForRows(m.box(), func(start, n int) {
		for i := start; i < start+n; i++ {
			if m.Free[i] != 0 {
				vc.W[i] = 1 / m.faceSum(i)
			}
		}
	})
	return vc
}

// Hold sets every held cell of a field to its held value.
func (m *Media) Hold(u []float64) {
	m.Lay.ForRows(m.box(), func(start, n int) {
		for i := start; i < start+n; i++ {
			if v := m.Held[i]; v == v {
				u[i] = v
			}
		}
	})
}

// Implicit is the coefficients of a·u − ∇·(b∇u) with a = σ·ρc and
// b = β·k_f/h² (an implicit step: σ = 1, β = θ·dt; Poisson: σ = 0, β = 1):
// the faces, A (nil when σ = 0 and nothing is tied; a coarse level's ties
// add β·Tie to it), the free mask, and the Jacobi weights
// W = 1/D on free cells with D = a + Σ_faces b. Gershgorin bounds the
// eigenvalues of D⁻¹A by (a + 2Σb)/(a + Σb) <= 2 for any coefficients (a
// Dirichlet face's ghost adds its b to the diagonal and takes it from the
// off-diagonal sum), so the smoothers' interval ends at 2 as in the uniform
// case.
func (m *Media) Implicit(sigma, beta float64) *stencil.VarCoeffs {
	return m.ImplicitOn(new(Scaled), NewWork(m.Lay, team.New(1, false)), sigma, beta)
}

// Scaled holds the arrays of one scaling of a Media's operator (Implicit's
// coefficients) for the next to write over: a step controller rescales the
// operator at every step length (the power module to 60 s: some 80
// scalings, each of its levels' arrays new, were 15% of the run).
type Scaled struct {
	vc   stencil.VarCoeffs
	b    [3][]float64
	a, w []float64
}

// ImplicitOn is Implicit written into s's arrays (made at the first call),
// its passes split over the parts of wk. It
// returns s's coefficients, valid until the next call on s. The same
// values cell by cell as Implicit, however split.
func (m *Media) ImplicitOn(s *Scaled, wk *Work, sigma, beta float64) *stencil.VarCoeffs {
	nd := len(m.Lay.N)
	n := m.Lay.Len()
	own := func(p *[]float64) []float64 {
		if len(*p) != n {
			*p = hugemem.Floats(n)
		}
		return *p
	}
	s.vc = *m.coeffs()
	vc := &s.vc
	var b [3][]float64
	if beta != 1 {
		for a := range nd {
			b[a] = own(&s.b[a])
		}
		vc.BX, vc.BY = b[nd-1], b[nd-2]
		if nd == 3 {
			vc.BZ = b[0]
		}
	}
	tie := m.Tie
	var aa []float64
	if sigma != 0 || tie != nil {
		aa = own(&s.a)
	}
	vc.A = aa
	w := own(&s.w)
	vc.W = w
	// Every index: the scaled faces, A and a cleared W; then W = 1/D on
	// the box's free cells.
	parts := wk.Parts
	wk.Team.Run(parts, func(p int) {
		lo, hi := p*n/parts, (p+1)*n/parts
		for a := range nd {
			if b[a] != nil {
				src, dst := m.B[a][lo:hi], b[a][lo:hi]
				for i, x := range src {
					dst[i] = float64(beta * x)
				}
			}
		}
		if aa != nil {
			for i := lo; i < hi; i++ {
				aa[i] = float64(sigma * m.RhoC[i])
				if tie != nil {
					aa[i] += float64(beta * tie[i])
				}
			}
		}
		clear(w[lo:hi])
	})
	wk.Each(func(_ int, rows []decomp.Span, _ []int) {
		for _, r := range rows {
			for i := r.Start; i < r.Start+r.N; i++ {
				if m.Free[i] == 0 {
					continue
				}
				d := 0.0
				if aa != nil {
					d = aa[i]
				}
				d += float64(beta * m.faceSum(i))
				w[i] = 1 / d
			}
		}
	})
	return vc
}

// NormInf is this box's share of ‖A‖∞ for coefficients from Implicit: max
// over free rows of a + 2·Σ_faces b (the run's is the max over the boxes),
// for the normwise backward error ‖f − Au‖∞/(‖A‖∞‖u‖∞ + ‖f‖∞).
func (m *Media) NormInf(vc *stencil.VarCoeffs) float64 {
	nrm := 0.0
	m.Lay.ForRows(m.box(), func(start, n int) {
		for i := start; i < start+n; i++ {
			if m.Free[i] == 0 {
				continue
			}
			r := 2 / vc.W[i]
			if vc.A != nil {
				r -= vc.A[i]
			}
			nrm = max(nrm, r)
		}
	})
	return nrm
}

// NewCoarse is the media of a coarse multigrid level from its coarsened
// fields, laid out like the level: the face coefficients per axis (ghosts
// below the box included), ρc, the free mask and the ties. It has no K or
// Held: a coarse level is an error equation, whose cells that are not
// free keep 0.
func NewCoarse(lay decomp.Layout, h []float64, b [][]float64, rhoC, free, tie []float64) *Media {
	m := &Media{Lay: lay, H: h, B: b, RhoC: rhoC, Free: free, Tie: tie}
	m.Lay.ForRows(m.box(), func(start, n int) {
		for i := start; i < start+n; i++ {
			if m.Free[i] != 0 && !(m.faceSum(i)+m.Tie[i] > 0) {
				m.Free[i] = 0 // cut off by holes: no equation
			}
		}
	})
	return m
}

// LowFaces is, per axis, a field of the box's cells holding the
// coefficient of the face below each cell on the box's low physical face
// along that axis (0 elsewhere): the boundary faces as box cells, so that
// they travel wherever the box's cells do. alloc gives each field, zeroed.
func (m *Media) LowFaces(hasNeighbour [][2]bool, alloc func(n int) []float64) [][]float64 {
	out := make([][]float64, len(m.B))
	for a := range m.B {
		out[a] = alloc(m.Lay.Len())
		if hasNeighbour[a][0] {
			continue
		}
		r := m.box()
		r.Hi = append([]int(nil), r.Hi...)
		r.Hi[a] = 1
		st := m.Lay.Stride[a]
		m.Lay.ForRows(r, func(start, n int) {
			for i := start; i < start+n; i++ {
				out[a][i] = m.B[a][i-st]
			}
		})
	}
	return out
}

// SetLowFaces puts LowFaces' values back below the box's low physical
// faces.
func SetLowFaces(lay decomp.Layout, b, low [][]float64, hasNeighbour [][2]bool) {
	for a := range b {
		if hasNeighbour[a][0] {
			continue
		}
		r := decomp.Box{Lo: make([]int, len(lay.N)), Hi: append([]int(nil), lay.N...)}
		r.Hi[a] = 1
		st := lay.Stride[a]
		lay.ForRows(r, func(start, n int) {
			for i := start; i < start+n; i++ {
				b[a][i-st] = low[a][i]
			}
		})
	}
}

// BytesPerCell is what the media add to a box's memory per cell, fine
// level: K, ρc, held values, the free mask and a face array per axis
// (Media), and the kernels' coefficients — S for explicit steps; for
// multigrid A, W, the faces scaled by β and the prolongation's weights per
// axis (FluxWeights, where the levels take them) on the fine level, and
// the coarse levels' media and coefficients, at most 1/(2^d − 1) of the
// fine level's more.
func BytesPerCell(nd int, multigrid bool) int {
	media := 8 * (5 + nd)
	if !multigrid {
		return media + 8
	}
	fine := media + 8*(2+2*nd)
	return fine + fine/((1<<nd)-1)
}
