package solver

import (
	"heat/decomp"
	"heat/multigrid"
	"heat/plan"
)

// Memory is the bytes rank r of a run of spec on grid g allocates for its
// fields: u and v (or the multigrid levels' u, b and scratch, each level a
// quarter (2D) or an eighth (3D) of the one above), the source, the halo
// buffers and the temporal-blocking rings. A run checks it against the
// memory there before allocating anything.
func Memory(spec Spec, g *decomp.Grid, r int) int64 {
	lay := decomp.NewLayout(g.Box(r), spec.Ghost)
	cells := int64(lay.Len())
	nd := len(spec.Shape)
	var fields float64
	if spec.usesMG() {
		// u, b and tmp on every level; the levels shrink geometrically.
		shrink := 1.0 / float64(int(1)<<nd)
		fields = 3 / (1 - shrink)
		if spec.Equation == Heat && spec.Source != nil {
			fields++
		}
		if p := spec.Plan(); p.Method == plan.MGCG || p.KrylovOnStall {
			// CG's vectors on the fine level (multigrid/krylov.go: r, z,
			// z_old, p, q, the cycle's iterate and buffer, z − z_old).
			fields += 8
			if spec.Media != nil {
				fields++ // the solve's start (handover.go: beginSolve)
			}
		}
		if spec.Scheme == SDIRK4 {
			// The stages' Vᵢ and X₁…X₄, and with fixed steps uⁿ
			// (solver/sdirk.go).
			fields += 5
			if spec.Adaptive == nil {
				fields++
			}
		}
		if spec.Adaptive != nil {
			// Steps that choose themselves: the step's start, the whole
			// step's end and the next step's start (solver/adaptive.go).
			fields += 3
		}
		if spec.Media != nil {
			// Per level a scratch field (the residual's norm); per coarse
			// level at most the K-cycle's four vectors; and, while the
			// levels are built, the fine level's coarsening fields (the
			// free mask, ties, ρc, the upper and the low faces per axis),
			// which the heap keeps after.
			fields += 1/(1-shrink) + 4*shrink/(1-shrink) + float64(3+2*nd)
		}
	} else {
		fields = 2
		if spec.Source != nil {
			fields++
		}
	}
	bytes := int64(fields * float64(8*cells))
	if spec.usesMG() && spec.Media != nil && r == 0 {
		// Rank 0 holds the bottom level whole, and in media its dense
		// factor: 8·n² bytes for at most multigrid.DenseCells cells.
		bytes += 8 * multigrid.DenseCells * multigrid.DenseCells
	}
	// Halo buffers: a send and a receive buffer per face, Ghost deep.
	for a := range nd {
		face := int64(spec.Ghost) * cells / int64(lay.Padded[a])
		bytes += 2 * 2 * 8 * face
	}
	if spec.Ghost > 1 && !spec.usesMG() {
		// Per worker: four slabs (a row in 2D, a plane in 3D) per step of
		// a block but the last.
		bytes += int64(spec.Threads) * int64(spec.Ghost-1) * 4 * 8 * int64(lay.Stride[0])
	}
	return bytes
}
