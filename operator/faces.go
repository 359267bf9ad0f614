package operator

import (
	"fmt"
	"slices"

	"heat/decomp"
)

// The boundary faces of the operator: every condition is a ghost cell
// g = a·u_i + b from the cell u_i beside the face (conductivity k_i,
// spacing h along the face's normal), so the face's flux k_i(g − u_i)/h²
// enters the same row arithmetic on every solver and level:
//
//	dirichlet, value v:     g = 2v − u_i                       (a = −1, b = 2v)
//	neumann, flux q:        g = u_i + q·h/k_i                  (a = 1, b = q·h/k_i)
//	robin, h_c, ambient v:  u_f = (2k_i u_i/h + h_c v)/(2k_i/h + h_c), g = 2u_f − u_i
//	                        (a = (2k_i/h − h_c)/(2k_i/h + h_c), b = 2h_c v/(2k_i/h + h_c))
//
// An error equation (multigrid's coarse levels) takes the same a and b = 0.

// Ghost is a boundary ghost's a and b for a face of kind with value v
// (Dirichlet: u on the face; Neumann: the flux k∂u/∂n, n outward, v > 0
// heats; Robin: the ambient) and Robin's hc, beside a cell of conductivity
// k at spacing h. A hole (k = 0) takes no flux: a = 1, b = 0.
func Ghost(kind BC, k, h, hc, v float64) (a, b float64) {
	switch kind {
	case Dirichlet:
		return -1, 2 * v
	case Neumann:
		if k == 0 {
			return 1, 0
		}
		return 1, v * h / k
	case Robin:
		if k == 0 {
			return 1, 0
		}
		s := 2 * k / h
		return (s - hc) / (s + hc), 2 * hc * v / (s + hc)
	}
	return 1, 0
}

// FaceAt gives the value and Robin's hc of face (axis, side) at the face
// centre x (physical coordinates, C order) and time t, for faces whose
// value varies (Face.Varies).
type FaceAt func(axis, side int, x []float64, t float64) (value, hc float64)

// Boundary computes the per-cell ghost coefficients of a box's faces (the
// Affine ones, Face.PerCell) at a time: the cells' conductivity
// from K (per cell, with ghosts) or the uniform K0, the face centre from
// the layout, the value from the face or At.
type Boundary struct {
	Lay    decomp.Layout
	H      []float64 // spacing per axis
	Length []float64 // extent per axis (the high faces' coordinate)
	K      func(mirror, axis, side int) float64
	At     FaceAt // nil: every face's own Value and H
	// Homogeneous gives the error equation's coefficients (b = 0).
	Homogeneous bool

	g  []int // scratch of centre
	xs []float64
	// Bad is the first face value or coefficient Set met that is not
	// finite (nil: none); Set leaves the ghost's a = 1, b = 0 there.
	Bad *FaceError
}

// FaceError is a face value (or Robin's hc, H set) that is not finite, or
// a Robin hc that is negative, at a face centre and time.
type FaceError struct {
	Axis, Side int
	H          bool
	X          []float64
	T, Value   float64
}

func (e *FaceError) Error() string {
	what := "value"
	if e.H {
		what = "h"
	}
	return fmt.Sprintf("the face's %s is %v at x = %v, t = %g%s", what, e.Value, e.X, e.T, e.Rule())
}

// Rule is what the value breaks, in words after the value: "" for a value
// that is not finite, the sign rule for a negative h.
func (e *FaceError) Rule() string {
	if e.H && e.Value < 0 {
		return " (h must be >= 0: a negative one pumps heat against the gradient)"
	}
	return ""
}

// coef is the ghost of the face f (axis, side) across from cell mirror at
// time t.
func (b *Boundary) coef(f Face, axis, side, mirror int, t float64) (float64, float64) {
	v, hc := f.Value, f.H
	if f.Varies && b.At != nil {
		v, hc = b.At(axis, side, b.centre(axis, side, mirror), t)
		for i, x := range [2]float64{v, hc} {
			if x-x != 0 && (i == 0 || f.Kind == Robin) || i == 1 && f.Kind == Robin && x < 0 {
				if b.Bad == nil {
					b.Bad = &FaceError{Axis: axis, Side: side, H: i == 1, X: slices.Clone(b.centre(axis, side, mirror)), T: t, Value: x}
				}
				return 1, 0
			}
		}
	}
	if b.Homogeneous {
		v = 0
	}
	return Ghost(f.Kind, b.K(mirror, axis, side), b.H[axis], hc, v)
}

// centre is the centre of the face (axis, side) of cell mirror (a corner
// ghost's: of the nearest face cell).
func (b *Boundary) centre(axis, side, mirror int) []float64 {
	nd := len(b.H)
	if b.g == nil {
		b.g, b.xs = make([]int, nd), make([]float64, nd)
	}
	b.Lay.Global(mirror, b.g)
	for a := range nd {
		// A corner ghost's mirror lies past another face: the nearest
		// cell's centre along that axis (the value of the face beside it).
		b.xs[a] = min(max((float64(b.g[a])+0.5)*b.H[a], 0.5*b.H[a]), b.Length[a]-float64(0.5*b.H[a]))
	}
	b.xs[axis] = 0
	if side == 1 {
		b.xs[axis] = b.Length[axis]
	}
	return b.xs
}

// Set sets the coefficients of the faces' and the runs' ghosts at time t.
func (b *Boundary) Set(faces []GhostFace, runs [][]RunFaces, t float64) {
	SetAffine(faces, func(f *GhostFace, mirror int) (float64, float64) {
		return b.coef(f.Face, f.Axis, f.Side, mirror, t)
	})
	SetAffineRuns(runs, func(g *GhostRun, mirror int) (float64, float64) {
		return b.coef(g.Face, g.Axis, g.Side, mirror, t)
	})
}

// Conductivity is the k a face's ghost sees beside cell mirror: the cell's
// own where the media has cell k, else the boundary face's coefficient
// times h² (coarse levels: the mean of the fine faces' k).
func (m *Media) Conductivity(mirror, axis, side int) float64 {
	if m.K != nil {
		return m.K[mirror]
	}
	face := mirror
	if side == 0 {
		face = mirror - m.Lay.Stride[axis]
	}
	return m.B[axis][face] * m.H[axis] * m.H[axis]
}
