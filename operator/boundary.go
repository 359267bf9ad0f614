package operator

import (
	"heat/decomp"
	"heat/stencil"
)

// BC is the kind of a boundary condition on one face.
type BC int

const (
	// Dirichlet fixes u = Value on the face (the face lies half a cell
	// outside the outermost cell centres; the ghost is 2·Value − u).
	Dirichlet BC = iota
	// Neumann is the flux k∂u/∂n = Value through the face (n outward;
	// Value > 0 heats): the ghost u + Value·h/k, the mirror at zero flux.
	Neumann
	// Periodic wraps the axis around; both faces of the axis must have it.
	Periodic
	// Robin is a convective face, −k∂u/∂n = H·(u_face − Value) (Value
	// the ambient): the ghost 2·u_face − u with u_face from the half
	// cell's balance (Ghost has the formula).
	Robin
	// Affine is a ghost A·mirror + B with coefficients per ghost cell
	// (SetAffine): how Robin faces, Neumann faces with a flux and faces
	// whose value varies in space or time are applied.
	Affine
)

func (b BC) String() string {
	return [...]string{"dirichlet", "neumann", "periodic", "robin", "affine"}[b]
}

// Face is the boundary condition on one face of the global grid.
type Face struct {
	Kind  BC
	Value float64 // Dirichlet: u on the face; Neumann: the flux; Robin: the ambient
	H     float64 // Robin: the heat-transfer coefficient
	// Varies says the value is not one number (it depends on space or
	// time): the ghosts then take per-cell coefficients from SetAffine.
	Varies bool
}

// PerCell reports whether the face's ghosts need coefficients per cell
// (SetAffine) rather than the fixed Dirichlet reflection or the mirror.
func (f Face) PerCell() bool {
	return f.Kind == Robin || f.Varies || (f.Kind == Neumann && f.Value != 0)
}

// Homogeneous is the face's condition on an error equation: the same kind
// and coefficient, no value (a Robin face's coefficient may still vary).
func (f Face) Homogeneous() Face {
	return Face{Kind: f.Kind, H: f.H, Varies: f.Varies && f.Kind == Robin}
}

// kind is the ghost kind GhostFaces gives the face.
func (f Face) kind() BC {
	if f.PerCell() {
		return Affine
	}
	return f.Kind
}

// Ghost is a ghost cell's value from its mirror cell across the face:
// Dirichlet 2·value − mirror (the value holds on the face between them),
// Neumann the mirror (zero flux). Faces that need coefficients per cell
// have none here (PerCell).
func (f Face) Ghost(mirror float64) float64 {
	if f.Kind == Dirichlet {
		return float64(2*f.Value) - mirror
	}
	return mirror
}

// GhostFace is one ghost layer of a physical face of a rank's box: each
// ghost cell takes its value from the cell mirrored across the face.
type GhostFace struct {
	Kind  BC
	Twice float64 // 2·value, for Dirichlet
	Delta int     // flat offset from a ghost cell to its mirror cell
	Rows  []decomp.Span
	Cells bool // every row is one cell (a face across the last axis)
	// Affine: the face, its axis and side, and the ghost A·mirror + B of
	// each ghost cell, the rows' cells in order (SetAffine).
	Face       Face
	Axis, Side int
	A, B       []float64
}

// GhostFaces lists the ghost layers of the faces of the global grid that
// the box laid out as lay touches, axis by axis (periodic axes and faces
// with a neighbour have none: their ghosts come from the halo). Each layer
// spans the ghosts of the other axes, so that applying them in order fills
// the corners too (temporal blocking updates cells there; prolongation reads
// them).
func GhostFaces(lay decomp.Layout, faces [][2]Face, hasNeighbour [][2]bool) []GhostFace {
	nd := len(lay.N)
	n := lay.N
	var out []GhostFace
	for a := range nd {
		for side := range 2 {
			f := faces[a][side]
			if f.Kind == Periodic || hasNeighbour[a][side] {
				continue
			}
			for j := 1; j <= min(lay.Ghost, n[a]); j++ {
				b := decomp.Box{Lo: make([]int, nd), Hi: make([]int, nd)}
				for x := range nd {
					b.Lo[x], b.Hi[x] = -lay.Ghost, n[x]+lay.Ghost
				}
				var ghost, mirror int
				if side == 0 {
					ghost, mirror = -j, j-1
				} else {
					ghost, mirror = n[a]-1+j, n[a]-j
				}
				b.Lo[a], b.Hi[a] = ghost, ghost+1
				gf := GhostFace{Kind: f.kind(), Twice: 2 * f.Value, Delta: (mirror - ghost) * lay.Stride[a], Cells: a == nd-1, Face: f, Axis: a, Side: side}
				lay.ForRows(b, func(start, n int) { gf.Rows = append(gf.Rows, decomp.Span{Start: start, N: n}) })
				out = append(out, gf)
			}
		}
	}
	return out
}

// ApplyFaces sets the ghosts of the given faces of u, in order.
func ApplyFaces(faces []GhostFace, u []float64) {
	for i := range faces {
		f := &faces[i]
		if f.Kind == Affine {
			j := 0
			for _, r := range f.Rows {
				j += affine(u[r.Start:r.Start+r.N], u[r.Start+f.Delta:r.Start+f.Delta+r.N], f.A[j:], f.B[j:])
			}
			continue
		}
		if f.Cells {
			// A face across the last axis: one cell per row.
			for _, r := range f.Rows {
				if f.Kind == Dirichlet {
					u[r.Start] = f.Twice - u[r.Start+f.Delta]
				} else {
					u[r.Start] = u[r.Start+f.Delta]
				}
			}
			continue
		}
		for _, r := range f.Rows {
			g := u[r.Start : r.Start+r.N]
			m := u[r.Start+f.Delta : r.Start+f.Delta+r.N]
			if f.Kind == Dirichlet {
				stencil.Reflect(g, m, f.Twice)
			} else {
				copy(g, m)
			}
		}
	}
}

// affine sets g[j] = a[j]·m[j] + b[j] and returns len(g).
func affine(g, m, a, b []float64) int {
	m, a, b = m[:len(g)], a[:len(g)], b[:len(g)]
	for j := range g {
		g[j] = float64(a[j]*m[j]) + b[j]
	}
	return len(g)
}

// SetAffine sets the coefficients of every ghost cell of the Affine faces
// to coef(face, mirror): the ghost's mirror cell (its flat index) and the
// face it lies on, which give the cell's k, the face's centre and value.
func SetAffine(faces []GhostFace, coef func(f *GhostFace, mirror int) (a, b float64)) {
	for i := range faces {
		f := &faces[i]
		if f.Kind != Affine {
			continue
		}
		if f.A == nil {
			n := 0
			for _, r := range f.Rows {
				n += r.N
			}
			f.A, f.B = make([]float64, n), make([]float64, n)
		}
		j := 0
		for _, r := range f.Rows {
			for c := r.Start; c < r.Start+r.N; c++ {
				f.A[j], f.B[j] = coef(f, c+f.Delta)
				j++
			}
		}
	}
}

// GhostRun is ghost cells of one physical face: Count spans of N cells,
// the first at flat index Start and each Stride after the last, every
// ghost set from the cell Delta on (its mirror across the face).
type GhostRun struct {
	Start, N, Count, Stride, Delta int
	Kind                           BC
	Twice                          float64 // 2·value, for Dirichlet
	// Affine: the face, its axis and side, and each ghost's A·mirror + B,
	// the Count spans' cells in order (SetAffineRuns).
	Face       Face
	Axis, Side int
	A, B       []float64
}

// RunGhosts lists the ghost cells of the physical faces of lay's box that
// the cells of run rn read through a 5- or 7-point stencil: the x ghosts at
// the ends of its rows, the ghost row beside its first or last row, the
// ghost rows of the plane beyond it. A face ghost is read by one cell only
// (the one across the face), so the runs of a sweep own disjoint ghosts,
// and each worker can set those its rows read just before it updates them
// (no serial pass over the faces, no barrier, the cells still in cache).
// Faces with a neighbour, and periodic ones, get their ghosts from the
// halo instead.
func RunGhosts(lay decomp.Layout, faces [][2]Face, hasNeighbour [][2]bool, rn decomp.Run) []GhostRun {
	nd := len(lay.N)
	x, y := nd-1, nd-2
	// The run's first cell's coordinates.
	c := make([]int, nd)
	lay.Coords(rn.Start, c)
	sy := lay.Stride[y]
	var out []GhostRun
	for a := range nd {
		for side := range 2 {
			f := faces[a][side]
			if f.Kind == Periodic || hasNeighbour[a][side] {
				continue
			}
			g := GhostRun{Kind: f.kind(), Twice: 2 * f.Value, Stride: sy, Face: f, Axis: a, Side: side}
			low := side == 0
			switch a {
			case x: // one cell at an end of every row
				if (low && c[x] != 0) || (!low && c[x]+rn.N != lay.N[x]) {
					continue
				}
				g.N, g.Count, g.Start, g.Delta = 1, rn.Count, rn.Start-1, 1
				if !low {
					g.Start, g.Delta = rn.Start+rn.N, -1
				}
			case y: // the row before the first or after the last
				if (low && c[y] != 0) || (!low && c[y]+rn.Count != lay.N[y]) {
					continue
				}
				g.N, g.Count, g.Start, g.Delta = rn.N, 1, rn.Start-sy, sy
				if !low {
					g.Start, g.Delta = rn.Start+rn.Count*sy, -sy
				}
			default: // the rows of the plane beyond
				if (low && c[a] != 0) || (!low && c[a] != lay.N[a]-1) {
					continue
				}
				d := lay.Stride[a]
				g.N, g.Count, g.Start, g.Delta = rn.N, rn.Count, rn.Start-d, d
				if !low {
					g.Start, g.Delta = rn.Start+d, -d
				}
			}
			out = append(out, g)
		}
	}
	return out
}

// Edges takes the x faces' ghosts (a cell at an end of every row) out of
// the ghosts of a run, as the edges its update kernel sets itself (Row.W,
// Row.E), and returns the other ghosts.
func Edges(gs []GhostRun) (rest []GhostRun, w, e stencil.Edge) {
	for _, g := range gs {
		if g.Kind == Affine {
			rest = append(rest, g) // set before the kernel, which reads it
			continue
		}
		switch g.Delta {
		case 1:
			w = stencil.Edge{On: true, Reflect: g.Kind == Dirichlet, Twice: g.Twice}
		case -1:
			e = stencil.Edge{On: true, Reflect: g.Kind == Dirichlet, Twice: g.Twice}
		default:
			rest = append(rest, g)
		}
	}
	return rest, w, e
}

// ApplyGhostRuns sets the ghosts gs of u, in order.
func ApplyGhostRuns(gs []GhostRun, u []float64) {
	for i := range gs {
		g := &gs[i]
		if g.Kind == Affine {
			for c := range g.Count {
				o := g.Start + c*g.Stride
				affine(u[o:o+g.N], u[o+g.Delta:o+g.Delta+g.N], g.A[c*g.N:], g.B[c*g.N:])
			}
			continue
		}
		if g.N == 1 {
			// A cell a row: a scalar loop (a call a cell would cost more).
			for c := range g.Count {
				o := g.Start + c*g.Stride
				if g.Kind == Dirichlet {
					u[o] = g.Twice - u[o+g.Delta]
				} else {
					u[o] = u[o+g.Delta]
				}
			}
			continue
		}
		for c := range g.Count {
			o := g.Start + c*g.Stride
			d, m := u[o:o+g.N], u[o+g.Delta:o+g.Delta+g.N]
			if g.Kind == Dirichlet {
				stencil.Reflect(d, m, g.Twice)
			} else {
				copy(d, m)
			}
		}
	}
}

// SetAffineRuns is SetAffine for the ghosts of runs: every Affine one of
// runs[w][i] (as RunsFaces gives them).
func SetAffineRuns(runs [][]RunFaces, coef func(g *GhostRun, mirror int) (a, b float64)) {
	for _, rs := range runs {
		for _, rf := range rs {
			gs := rf.Ghosts
			for i := range gs {
				g := &gs[i]
				if g.Kind != Affine {
					continue
				}
				if g.A == nil {
					g.A, g.B = make([]float64, g.N*g.Count), make([]float64, g.N*g.Count)
				}
				for c := range g.Count {
					o := g.Start + c*g.Stride
					for j := range g.N {
						g.A[c*g.N+j], g.B[c*g.N+j] = coef(g, o+j+g.Delta)
					}
				}
			}
		}
	}
}
