package benchmarks

import (
	"fmt"
	"io"
	"slices"

	"heat/decomp"
	"heat/multigrid"
)

// MGModel is the α–β model of one multigrid cycle on P ranks, level by
// level, as heat's multigrid runs it: level l is visited Cycle.Visits(l)
// times a cycle (V 1, W 2^l, F l+1); a visit of a distributed level costs Passes sweeps over the
// busiest rank's box (t_cell each) and Exchanges face exchanges of its
// box (α + 8·A_face·β a face); once a box of the next level would have
// fewer than GatherBelow cells along an axis and the level has at most
// GatherCells cells, that level and all below run
// on rank 0 alone (no exchanges), reached by a gather and a scatter of the
// last distributed level through rank 0 (P−1 messages each way, one after
// the other at the root).
type MGModel struct {
	Network
	TCell       float64 // seconds per cell and pass on one rank (an explicit step's)
	Passes      float64 // cell passes a level visit costs (fitted to a measured cycle)
	Exchanges   int     // face exchanges a visit of a distributed level makes
	Cycle       multigrid.Cycle
	GatherBelow int // multigrid.Options' gathering rule
	GatherCells int
}

// MGLevel is one level's share of a predicted cycle.
type MGLevel struct {
	Shape            []int
	Ranks, Visits    int
	ComputeS, HaloS  float64 // all of the level's visits in a cycle
	GatherS          float64 // the gather and scatter below it, if it is the last distributed level
	BoxCells, MaxBox int
}

// MGPrediction is one cycle's predicted time on Ranks ranks.
type MGPrediction struct {
	Ranks  int
	Levels []MGLevel
	CycleS float64
	// CoarseShare is the levels below the finest, gathering included, of
	// the cycle's time.
	CoarseShare float64
}

// Predict is the model's cycle on ranks ranks for the levels' shapes
// (finest first, as multigrid.Hierarchy gives them).
func (m MGModel) Predict(shapes [][]int, ranks int) (MGPrediction, error) {
	dims, err := decomp.AutoDims(shapes[0], ranks, nil)
	if err != nil {
		return MGPrediction{}, err
	}
	g := &decomp.Grid{Shape: shapes[0], Dims: dims, Periodic: make([]bool, len(dims))}
	boxes := make([]decomp.Box, ranks)
	for r := range boxes {
		boxes[r] = g.Box(r)
	}
	p := MGPrediction{Ranks: ranks}
	gathered := ranks == 1
	for l, shape := range shapes {
		visits := m.Cycle.Visits(l)
		if l > 0 {
			smallest := 1 << 62
			for r := range boxes {
				smallest = min(smallest, slices.Min(coarseBox(boxes[r], shapes[0], shape).Shape()))
			}
			cells := 1
			for _, n := range shape {
				cells *= n
			}
			if !gathered && (l == len(shapes)-1 || (smallest < m.GatherBelow && cells <= m.GatherCells)) {
				// The edge: the last distributed level sends its box to rank 0
				// and gets its correction back, once a visit of it.
				last := &p.Levels[l-1]
				bytes := float64(bytesPerCell * last.MaxBox)
				last.GatherS = float64(last.Visits) * 2 * float64(ranks-1) * (m.Alpha + bytes*m.Beta)
				gathered = true
			}
		}
		lv := MGLevel{Shape: shape, Visits: visits, Ranks: ranks}
		cells := 1
		for _, n := range shape {
			cells *= n
		}
		if gathered {
			lv.Ranks, lv.BoxCells, lv.MaxBox = 1, cells, cells
		} else {
			for r := range boxes {
				b := coarseBox(boxes[r], shapes[0], shape)
				lv.MaxBox = max(lv.MaxBox, b.Size())
				if lv.MaxBox == b.Size() {
					lv.BoxCells = b.Size()
					// Faces of the busiest box: one message per neighbour.
					halo := 0.0
					for a, n := range b.Shape() {
						neighbours := 0
						if dims[a] > 1 {
							neighbours = 2
							if dims[a] == 2 {
								neighbours = 1
							}
						}
						halo += float64(neighbours) * (m.Alpha + float64(bytesPerCell*b.Size()/n)*m.Beta)
					}
					lv.HaloS = float64(visits*m.Exchanges) * halo
				}
			}
		}
		lv.ComputeS = float64(visits) * m.Passes * float64(lv.BoxCells) * m.TCell
		p.Levels = append(p.Levels, lv)
	}
	fine := 0.0
	for i, lv := range p.Levels {
		t := lv.ComputeS + lv.HaloS + lv.GatherS
		p.CycleS += t
		if i == 0 {
			fine = lv.ComputeS + lv.HaloS
		}
	}
	p.CoarseShare = 1 - fine/p.CycleS
	return p, nil
}

// coarseBox is fine box b on the level of shape: [⌈lo/q⌉, ⌈hi/q⌉) per
// axis, q the axis' coarsening from fine (a power of two; halving
// repeatedly rounds the same way).
func coarseBox(b decomp.Box, fine, shape []int) decomp.Box {
	c := decomp.Box{Lo: make([]int, len(b.Lo)), Hi: make([]int, len(b.Hi))}
	for a := range shape {
		q := fine[a] / shape[a]
		c.Lo[a], c.Hi[a] = (b.Lo[a]+q-1)/q, (b.Hi[a]+q-1)/q
	}
	return c
}

// FitPasses sets m.Passes so that the model's one-rank cycle takes
// cycleS.
func (m *MGModel) FitPasses(shapes [][]int, cycleS float64) error {
	m.Passes = 1
	p, err := m.Predict(shapes, 1)
	if err != nil {
		return err
	}
	m.Passes = cycleS / p.CycleS
	return nil
}

// WriteMGPredictions prints the model's cycle for each rank count.
func WriteMGPredictions(w io.Writer, m MGModel, shapes [][]int, ranks []int) error {
	fmt.Fprintf(w, "%8s %12s %10s %9s %8s %10s\n", "ranks", "cycle_ms", "speedup", "coarse", "gathered", "edge_ms")
	var first float64
	for _, r := range ranks {
		p, err := m.Predict(shapes, r)
		if err != nil {
			return err
		}
		if first == 0 {
			first = p.CycleS
		}
		gathered, edge := 0, 0.0
		for _, lv := range p.Levels {
			if lv.Ranks == 1 && r > 1 {
				gathered++
			}
			edge += lv.GatherS
		}
		fmt.Fprintf(w, "%8d %12.3f %10.2f %8.1f%% %8d %10.3f\n", r, 1e3*p.CycleS, first/p.CycleS, 100*p.CoarseShare, gathered, 1e3*edge)
	}
	return nil
}
