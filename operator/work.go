package operator

import (
	"heat/decomp"
	"heat/internal/team"
	"heat/stencil"
)

// Work is how one rank's box is cut for the rank's workers: the box's rows
// in C order, each row's red–black parity (the sum of its first cell's
// global indices, mod 2), and part w's rows Rows[Share[w]:Share[w+1]], the
// same rows as runs for the many-row kernels. An operator applies itself
// over a Work; every cell's formula is the same whatever the cut, so the
// bits do not depend on it.
type Work struct {
	Lay    decomp.Layout
	Team   *team.Team
	Parts  int
	Rows   []decomp.Span
	Parity []int
	Share  []int
	Runs   [][]decomp.Run
}

// NewWork cuts the box of lay for the workers of tm (a small box: for
// its caller alone, team.For).
func NewWork(lay decomp.Layout, tm *team.Team) *Work {
	nd := len(lay.N)
	tm = tm.For(lay.Box.Size())
	wk := &Work{Lay: lay, Team: tm}
	g := make([]int, nd)
	lay.ForRows(decomp.Box{Lo: make([]int, nd), Hi: lay.N}, func(start, n int) {
		wk.Rows = append(wk.Rows, decomp.Span{Start: start, N: n})
		lay.Global(start, g)
		p := 0
		for _, x := range g {
			p += x
		}
		wk.Parity = append(wk.Parity, p&1)
	})
	wk.Parts = tm.PartsFor(lay.Box.Size())
	wk.Share = decomp.Shares(wk.Rows, wk.Parts)
	wk.Runs = make([][]decomp.Run, wk.Parts)
	for w := range wk.Runs {
		wk.Runs[w] = decomp.Runs(wk.Rows[wk.Share[w]:wk.Share[w+1]], lay.Stride[nd-2])
	}
	return wk
}

// Each runs f(w, rows, parity) for every part's rows, in parallel.
func (wk *Work) Each(f func(w int, rows []decomp.Span, parity []int)) {
	wk.Team.Run(wk.Parts, func(w int) {
		lo, hi := wk.Share[w], wk.Share[w+1]
		f(w, wk.Rows[lo:hi], wk.Parity[lo:hi])
	})
}

// RunFaces are the physical ghosts one run of a sweep reads: those to set
// before it, and the x faces' ghosts, which the uniform kernels set
// themselves as they go.
type RunFaces struct {
	Ghosts []GhostRun
	W, E   stencil.Edge
}

// NewRunFaces lists the ghosts of physical faces that run rn of a box reads
// (RunGhosts), the x faces' as the edges the kernel sets.
func NewRunFaces(lay decomp.Layout, faces [][2]Face, hasNeighbour [][2]bool, rn decomp.Run) RunFaces {
	var f RunFaces
	f.Ghosts, f.W, f.E = Edges(RunGhosts(lay, faces, hasNeighbour, rn))
	return f
}

// RunsFaces is NewRunFaces for every run of every part.
func RunsFaces(lay decomp.Layout, faces [][2]Face, hasNeighbour [][2]bool, runs [][]decomp.Run) [][]RunFaces {
	out := make([][]RunFaces, len(runs))
	for w, rs := range runs {
		out[w] = make([]RunFaces, len(rs))
		for i, rn := range rs {
			out[w][i] = NewRunFaces(lay, faces, hasNeighbour, rn)
		}
	}
	return out
}
