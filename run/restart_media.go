package run

import (
	"fmt"
	"math"
	"slices"

	"heat/checkpoint"
	"heat/comm"
	"heat/decomp"
	"heat/operator"
	"heat/solver"
)

// A checkpoint of a run in heterogeneous media holds the media beside the
// field (checkpoint.MediaArrays): k and rho_c as the solver holds them, and
// the mask of held cells (1 where held). A held cell's value is the
// field's there (u never changes at a held cell), so a restart takes its
// media from the checkpoint alone, without the run's map files.

// mediaArrays are the arrays a checkpoint of a run in media m keeps beside
// the field, laid out as the field (m's layout is the solver's); nil for
// the uniform medium (m nil). k and rho_c are the solver's own arrays,
// which never change during a run, so a checkpoint written in the
// background (checkpoint.Begin) reads them as they are; the mask is made
// anew for each checkpoint.
func mediaArrays(m *operator.Media) []checkpoint.Array {
	if m == nil {
		return nil
	}
	mask := make([]float64, len(m.Held))
	for i, v := range m.Held {
		if !math.IsNaN(v) {
			mask[i] = 1
		}
	}
	return []checkpoint.Array{
		{Name: "k", Type: checkpoint.Float64, Data: m.K},
		{Name: "rho_c", Type: checkpoint.Float64, Data: m.RhoC},
		{Name: "mask", Type: checkpoint.Uint8, Data: mask},
	}
}

// checkpointMedia is the media of a restart from ck, read from ck's arrays
// (k, rho_c, mask, and u for the held values), or nil when ck holds no
// media (a uniform run's checkpoint). Each rank reads the chunks that
// cross its box, collectively over the comm the solver gives; a checkpoint
// written on N ranks gives its media to a run on M. A held cell (mask 1)
// keeps the value u has there; every other cell's held value is NaN (free).
func checkpointMedia(ck *checkpoint.Checkpoint) solver.MediaFunc {
	if ck == nil || !ck.Has("k") {
		return nil
	}
	return func(c comm.Comm, lo, hi []int) (k, rhoC, held []float64, err error) {
		k, rhoC, held, err = readMedia(c, ck, lo, hi)
		if err != nil {
			return nil, nil, nil, UsageError{fmt.Errorf("cannot restart from %s: its media: %w", ck.Path(), err)}
		}
		return k, rhoC, held, nil
	}
}

// readMedia reads the media of box [lo, hi) of every rank of c from ck, box
// cells in C order. Collective.
func readMedia(c comm.Comm, ck *checkpoint.Checkpoint, lo, hi []int) (k, rhoC, held []float64, err error) {
	g, err := boxGrid(c, ck.Shape(), lo, hi)
	if err != nil {
		return nil, nil, nil, err
	}
	// Without ghosts: the layout is the box's cells in C order, what a
	// MediaFunc returns.
	lay := decomp.NewLayout(g.Box(c.Rank()), 0)
	opt := checkpoint.Options{Workers: readWorkers(c, 1)}
	read := func(name string) ([]float64, error) {
		dst := make([]float64, lay.Len())
		// (An array ck lacks fails on every rank alike, naming what it holds.)
		return dst, checkpoint.ReadArray(c, ck, name, g, lay, dst, opt)
	}
	if k, err = read("k"); err != nil {
		return nil, nil, nil, err
	}
	if rhoC, err = read("rho_c"); err != nil {
		return nil, nil, nil, err
	}
	mask, err := read("mask")
	if err != nil {
		return nil, nil, nil, err
	}
	if held, err = read("u"); err != nil {
		return nil, nil, nil, err
	}
	for i, m := range mask {
		if m != 1 {
			held[i] = math.NaN()
		}
	}
	return k, rhoC, held, nil
}

// boxGrid is the decomposition whose box on each rank of c is that rank's
// [lo, hi) of a grid of shape: a MediaFunc is given its box, not the
// process grid. Along axis a the process grid has as many ranks as there
// are boxes at the grid's low corner of every other axis (one line of
// ranks along a), which one Allreduce counts; decomp then splits the grid
// as the solver did, which is checked on every rank (and agreed).
func boxGrid(c comm.Comm, shape, lo, hi []int) (*decomp.Grid, error) {
	nd := len(shape)
	if len(lo) != nd || len(hi) != nd {
		return nil, fmt.Errorf("box %v..%v for a grid of %d axes", lo, hi, nd)
	}
	line := make([]float64, nd) // per axis: 1 where this box starts the line of boxes along it
	for a := range nd {
		corner := true
		for b := range nd {
			if b != a && lo[b] != 0 {
				corner = false
			}
		}
		if corner {
			line[a] = 1
		}
	}
	dims := make([]int, nd)
	count := make([]float64, nd)
	if err := c.Allreduce(comm.Sum, line, count); err != nil {
		return nil, err
	}
	for a := range nd {
		dims[a] = int(count[a])
	}
	g, gerr := decomp.New(shape, c.Size(), dims, nil)
	bad := 0.0
	if gerr != nil {
		bad = 1
	} else if b := g.Box(c.Rank()); !slices.Equal(b.Lo, lo) || !slices.Equal(b.Hi, hi) {
		bad = 1
	}
	var out [1]float64
	if err := c.Allreduce(comm.Max, []float64{bad}, out[:]); err != nil {
		return nil, err
	}
	switch {
	case gerr != nil:
		return nil, gerr
	case out[0] != 0:
		return nil, fmt.Errorf("the ranks' boxes (rank %d: %v..%v) are not the process grid %s's of the grid %s", c.Rank(), lo, hi,
			decomp.FormatDims(dims), decomp.FormatDims(shape))
	}
	return g, nil
}
