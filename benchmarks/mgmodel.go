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
// fewer than GatherBelow cells along an axis, the ranks hand their boxes on,
// as multigrid does: if the level has at most GatherCells cells (or is the
// last), all to rank 0, which runs the rest alone (P−1 messages each way,
// one after the other at the root), else to one rank of each group of
// neighbours (pairs along every split axis: up to 2^d−1 messages at each
// receiver), which go on with their boxes merged and may hand on again.
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
// (finest first, as plan.Hierarchy gives them).
func (m MGModel) Predict(shapes [][]int, ranks int) (MGPrediction, error) {
	dims, err := decomp.AutoDims(shapes[0], ranks, nil)
	if err != nil {
		return MGPrediction{}, err
	}
	g := &decomp.Grid{Shape: shapes[0], Dims: dims, Periodic: make([]bool, len(dims))}
	boxes := make([]decomp.Box, ranks) // the current ranks' boxes of the level before
	for r := range boxes {
		boxes[r] = g.Box(r)
	}
	p := MGPrediction{Ranks: ranks}
	for l, shape := range shapes {
		cells := 1
		for _, n := range shape {
			cells *= n
		}
		if l > 0 {
			for len(boxes) > 1 {
				smallest := 1 << 62
				for _, b := range boxes {
					smallest = min(smallest, slices.Min(coarseBox(b, shapes[l-1], shape).Shape()))
				}
				if l < len(shapes)-1 && smallest >= m.GatherBelow {
					break
				}
				// The edge: the last level of these ranks hands its boxes on
				// and gets its correction back, once a visit of it.
				last := &p.Levels[l-1]
				whole := l == len(shapes)-1 || cells <= m.GatherCells
				var unions []decomp.Box
				var senders int
				dims, unions, senders = mergeBoxes(dims, boxes, whole)
				bytes := 0.0
				for _, b := range boxes {
					bytes = max(bytes, float64(bytesPerCell*b.Size()))
				}
				last.GatherS += float64(last.Visits) * 2 * float64(senders) * (m.Alpha + bytes*m.Beta)
				boxes = unions
			}
			for r, b := range boxes {
				boxes[r] = coarseBox(b, shapes[l-1], shape)
			}
		}
		lv := MGLevel{Shape: shape, Visits: m.Cycle.Visits(l), Ranks: len(boxes)}
		for _, b := range boxes {
			if b.Size() <= lv.MaxBox {
				continue
			}
			lv.MaxBox, lv.BoxCells = b.Size(), b.Size()
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
			lv.HaloS = float64(lv.Visits*m.Exchanges) * halo
		}
		lv.ComputeS = float64(lv.Visits) * m.Passes * float64(lv.BoxCells) * m.TCell
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

// mergeBoxes is multigrid's hand-on of boxes on process grid dims (C
// order of ranks): all onto one rank (whole), or each group of neighbours
// (pairs along every axis) onto one, their boxes merged; senders is the
// most messages one receiver takes.
func mergeBoxes(dims []int, boxes []decomp.Box, whole bool) (merged []int, unions []decomp.Box, senders int) {
	merged = make([]int, len(dims))
	for a, d := range dims {
		merged[a] = (d + 1) / 2
		if whole {
			merged[a] = 1
		}
	}
	from := &decomp.Grid{Dims: dims}
	to := &decomp.Grid{Dims: merged}
	unions = make([]decomp.Box, to.Size())
	count := make([]int, to.Size())
	for r, b := range boxes {
		co := from.Coords(r)
		for a := range co {
			co[a] /= 2
			if whole {
				co[a] = 0
			}
		}
		k := to.RankOf(co)
		if count[k] == 0 {
			unions[k] = decomp.Box{Lo: slices.Clone(b.Lo), Hi: slices.Clone(b.Hi)}
		}
		for a := range b.Lo {
			unions[k].Lo[a], unions[k].Hi[a] = min(unions[k].Lo[a], b.Lo[a]), max(unions[k].Hi[a], b.Hi[a])
		}
		count[k]++
	}
	return merged, unions, slices.Max(count) - 1
}

// coarseBox is box b of the level of shape fine on the level of shape:
// [⌈lo/q⌉, ⌈hi/q⌉) per axis, q the axis' coarsening (1 or 2).
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
