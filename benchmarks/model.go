package benchmarks

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"heat/decomp"
)

// Network is the α–β model of a transport: a message of n bytes takes
// Alpha + n·Beta seconds one way.
type Network struct {
	Alpha float64 `json:"alpha_s"`         // latency, seconds
	Beta  float64 `json:"beta_s_per_byte"` // inverse bandwidth, seconds per byte
}

// Bandwidth is 1/β in GB/s (0 for β = 0).
func (n Network) Bandwidth() float64 {
	if n.Beta <= 0 {
		return 0
	}
	return 1 / n.Beta / 1e9
}

func (n Network) String() string {
	return fmt.Sprintf("α = %.3g µs, β = %.3g ns/B (%.3g GB/s)", n.Alpha*1e6, n.Beta*1e9, n.Bandwidth())
}

// bytesPerCell is the size of one halo value: a float64.
const bytesPerCell = 8

// Model predicts the time of one step on P ranks:
//
//	T_step(P) = N_box·t_cell + Σ_faces (α + 8·A_face·β) + c·⌈log2 P⌉·α
//
// N_box = Π⌈n_a/d_a⌉ is the largest box (≈ cells/P) of the process grid d
// that decomp.AutoDims picks for P ranks; t_cell the compute time per cell
// and step of one rank with Threads workers; the sum runs over the faces of
// the busiest rank (two per split axis, one when the axis is split in two
// and does not wrap), each a message of A_face = Π_{b≠a}⌈n_b/d_b⌉ cells of
// 8 bytes (halo width 1, one exchange per step); c is the collectives
// (residual checks) per step, each a reduction tree of ⌈log2 P⌉ latencies.
// Nothing is overlapped: the prediction is an upper bound on a step when the
// exchange hides behind the interior update.
type Model struct {
	Network
	TCell              float64 `json:"t_cell_s"`             // seconds per cell per step, one rank
	Threads            int     `json:"threads"`              // workers per rank that TCell was measured with
	CollectivesPerStep float64 `json:"collectives_per_step"` // c
	Periodic           []bool  `json:"periodic"`             // axes that wrap (more neighbours)
}

// Prediction is the model's time of one step on Ranks ranks.
type Prediction struct {
	Ranks      int     `json:"ranks"`
	Cores      int     `json:"cores"` // Ranks × Model.Threads
	Shape      []int   `json:"shape"`
	Dims       []int   `json:"dims"`
	BoxCells   int     `json:"box_cells"`
	Faces      int     `json:"faces"`      // messages per step of the busiest rank
	FaceBytes  int     `json:"face_bytes"` // bytes per step it sends
	ComputeS   float64 `json:"compute_s"`
	HaloS      float64 `json:"halo_s"`
	CollectS   float64 `json:"collectives_s"`
	StepS      float64 `json:"step_s"`
	Speedup    float64 `json:"speedup"` // against the first prediction of its series
	Efficiency float64 `json:"efficiency"`
}

// Predict is the model's step time for shape on ranks ranks.
func (m Model) Predict(shape []int, ranks int) (Prediction, error) {
	dims, err := decomp.AutoDims(shape, ranks, m.Periodic)
	if err != nil {
		return Prediction{}, err
	}
	p := Prediction{Ranks: ranks, Cores: ranks * max(m.Threads, 1), Shape: slices.Clone(shape), Dims: dims}
	box := make([]int, len(shape))
	for a := range shape {
		box[a] = (shape[a] + dims[a] - 1) / dims[a]
	}
	p.BoxCells = cellsOf(box)
	for a := range shape {
		neighbours := 0
		switch {
		case dims[a] == 1:
		case dims[a] == 2 && !(a < len(m.Periodic) && m.Periodic[a]):
			neighbours = 1
		default:
			neighbours = 2
		}
		bytes := bytesPerCell * p.BoxCells / box[a]
		p.Faces += neighbours
		p.FaceBytes += neighbours * bytes
		p.HaloS += float64(neighbours) * (m.Alpha + float64(bytes)*m.Beta)
	}
	p.ComputeS = float64(p.BoxCells) * m.TCell
	p.CollectS = m.CollectivesPerStep * float64(ceilLog2(ranks)) * m.Alpha
	p.StepS = p.ComputeS + p.HaloS + p.CollectS
	return p, nil
}

// ceilLog2 is ⌈log2 n⌉ for n ≥ 1 (0 for n = 1).
func ceilLog2(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

// Strong predicts a strong-scaling series: shape fixed, each rank count of
// ranks. It stops at the first rank count the grid cannot be split over.
func (m Model) Strong(shape []int, ranks []int) []Prediction {
	return m.series(ranks, func(int) ([]int, error) { return shape, nil })
}

// Weak predicts a weak-scaling series: base cells per core, the shape grown
// by WeakShape for the cores of each rank count (ranks × m.Threads).
func (m Model) Weak(base []int, ranks []int) []Prediction {
	return m.series(ranks, func(r int) ([]int, error) { return WeakShape(base, r*max(m.Threads, 1), m.Periodic) })
}

// series predicts each rank count of ranks on the grid shapeOf gives it,
// stopping at the first that cannot be grown or split.
func (m Model) series(ranks []int, shapeOf func(ranks int) ([]int, error)) []Prediction {
	var out []Prediction
	for _, r := range ranks {
		shape, err := shapeOf(r)
		if err != nil {
			break
		}
		p, err := m.Predict(shape, r)
		if err != nil {
			break
		}
		out = append(out, p)
	}
	relate(out)
	return out
}

// relate fills speedup and efficiency against the first prediction, as
// Summarise does for measured points.
func relate(ps []Prediction) {
	for i := range ps {
		ps[i].Speedup, ps[i].Efficiency = speedup(cellsOf(ps[0].Shape), ps[0].Cores, ps[0].StepS,
			cellsOf(ps[i].Shape), ps[i].Cores, ps[i].StepS)
	}
}

// PredictRanks is the rank counts a prediction covers: from, then the powers
// of two above it up to most, then the extra counts (the measured ones) in
// that range; sorted, without repeats.
func PredictRanks(from, most int, extra ...int) []int {
	from = max(from, 1)
	out := []int{}
	if from <= most {
		out = append(out, from)
	}
	for p := 1; p <= most; p *= 2 {
		if p > from {
			out = append(out, p)
		}
	}
	for _, e := range extra {
		if e >= from && e <= most {
			out = append(out, e)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// FitModel builds the model from a study's smallest point (the baseline,
// whose median run gives t_cell: its slowest rank's compute time per cell
// and step) and a network.
func FitModel(base PointSummary, net Network, periodic []bool) (Model, error) {
	r := base.Rep
	if r.SlowestCells < 1 || r.Steps < 1 || r.SlowestTime.Compute <= 0 {
		return Model{}, fmt.Errorf("model: point %d (%s) has no compute time to fit t_cell (%g s over %d cells, %d steps)",
			base.Point, base.Resources, r.SlowestTime.Compute, r.SlowestCells, r.Steps)
	}
	if math.IsNaN(net.Alpha) || math.IsNaN(net.Beta) {
		return Model{}, fmt.Errorf("model: network %v is not a number", net)
	}
	return Model{Network: net, TCell: r.SlowestTime.Compute / float64(r.SlowestCells) / float64(r.Steps),
		Threads: base.Threads, CollectivesPerStep: r.CollectivesPerStep, Periodic: slices.Clone(periodic)}, nil
}
