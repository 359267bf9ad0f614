package benchmarks

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"heat/io/report"
)

// Kind is the kind of scaling study.
type Kind string

const (
	// Strong keeps the problem and adds resources: ideally the time per
	// step falls as 1/cores.
	Strong Kind = "strong"
	// Weak grows the problem with the resources (WeakShape): ideally the
	// time per step stays the same.
	Weak Kind = "weak"
)

// Resources is one point of a study: ranks, each with Threads workers.
type Resources struct {
	Ranks   int `json:"ranks"`
	Threads int `json:"threads"`
}

// Cores is the point's worker count, ranks × threads: the P that speedup
// and efficiency are measured against.
func (r Resources) Cores() int { return r.Ranks * r.Threads }

func (r Resources) String() string { return fmt.Sprintf("ranks %d × threads %d", r.Ranks, r.Threads) }

// Name is the point's name in file names: "r4-t2".
func (r Resources) Name() string { return fmt.Sprintf("r%d-t%d", r.Ranks, r.Threads) }

// Breakdown splits one rank's wall time (seconds) into where it went.
// Other is the rest: wall − the named parts (setup of a step, the loop's
// own overhead, waiting at the final barrier).
type Breakdown struct {
	Compute    float64 `json:"compute_s"`
	HaloWait   float64 `json:"halo_wait_s"`
	Reduce     float64 `json:"reduce_s"`
	Checkpoint float64 `json:"checkpoint_s"`
	Output     float64 `json:"output_s"`
	Other      float64 `json:"other_s"`
}

// IO is the time spent writing: checkpoints and outputs.
func (b Breakdown) IO() float64 { return b.Checkpoint + b.Output }

// breakdownOf is rank r's breakdown of wall seconds.
func breakdownOf(r report.Rank, wall float64) Breakdown {
	b := Breakdown{Compute: r.ComputeS, HaloWait: r.HaloWaitS, Reduce: r.ReduceS, Checkpoint: r.CheckpointS, Output: r.OutputS}
	b.Other = wall - b.Compute - b.HaloWait - b.Reduce - b.Checkpoint - b.Output
	return b
}

// scale multiplies every part by f (per-step figures, percentages).
func (b Breakdown) scale(f float64) Breakdown {
	return Breakdown{b.Compute * f, b.HaloWait * f, b.Reduce * f, b.Checkpoint * f, b.Output * f, b.Other * f}
}

// RunMetrics are the figures of one run, taken from its report.
type RunMetrics struct {
	Shape     []int   `json:"shape"`
	Dims      []int   `json:"dims"`
	Cells     int     `json:"cells"`
	Steps     int     `json:"steps"`
	WallS     float64 `json:"wall_s"`
	StepS     float64 `json:"step_s"`         // wall_s / steps
	MUpdatesS float64 `json:"mupdates_per_s"` // cells · steps / wall_s / 1e6
	// ReportMUpdatesS is the report's own rate, which leaves out the time
	// spent writing checkpoints and outputs.
	ReportMUpdatesS float64 `json:"report_mupdates_per_s"`

	// Slowest is the rank with the most compute time; SlowestCells is the
	// size of its box.
	Slowest      int       `json:"slowest_rank"`
	SlowestCells int       `json:"slowest_cells"`
	SlowestTime  Breakdown `json:"slowest"` // the slowest rank's breakdown
	MeanTime     Breakdown `json:"mean"`    // the mean over ranks
	// Imbalance is max/mean compute time over the ranks (1 = balanced);
	// SlowestExcessPct is how much more compute time the slowest rank had
	// than the median rank, in %.
	Imbalance        float64 `json:"imbalance"`
	SlowestExcessPct float64 `json:"slowest_excess_pct"`

	Messages           int64   `json:"messages"` // sent, all ranks
	Bytes              int64   `json:"bytes"`
	Collectives        int64   `json:"collectives"` // per rank (every rank joins each)
	MessagesPerStep    float64 `json:"messages_per_step"`
	BytesPerStep       float64 `json:"bytes_per_step"`
	CollectivesPerStep float64 `json:"collectives_per_step"`

	CheckpointBytes  int64    `json:"checkpoint_bytes"`
	CheckpointWriteS float64  `json:"checkpoint_write_s"`
	Hosts            []string `json:"hosts"`
	SHA256           string   `json:"sha256"`
}

// Metrics derives a run's figures from its report. shape is the global
// grid the run solved (the report's config has it too, but as untyped JSON).
func Metrics(r *report.Report, shape []int) (RunMetrics, error) {
	if r.Steps < 1 || r.WallS <= 0 {
		return RunMetrics{}, fmt.Errorf("report has %d steps in %g s: nothing to measure", r.Steps, r.WallS)
	}
	if len(r.PerRank) == 0 {
		return RunMetrics{}, fmt.Errorf("report has no per_rank timings (%d ranks)", r.Ranks)
	}
	m := RunMetrics{Shape: slices.Clone(shape), Dims: slices.Clone(r.Dims), Cells: cellsOf(shape), Steps: r.Steps,
		WallS: r.WallS, StepS: r.WallS / float64(r.Steps), ReportMUpdatesS: float64(r.MUpdatesPS), SHA256: r.Field.SHA256}
	m.MUpdatesS = float64(m.Cells) * float64(m.Steps) / m.WallS / 1e6
	compute := make([]float64, len(r.PerRank))
	for i, pr := range r.PerRank {
		compute[i] = pr.ComputeS
		b := breakdownOf(pr, r.WallS)
		m.MeanTime = Breakdown{m.MeanTime.Compute + b.Compute, m.MeanTime.HaloWait + b.HaloWait, m.MeanTime.Reduce + b.Reduce,
			m.MeanTime.Checkpoint + b.Checkpoint, m.MeanTime.Output + b.Output, m.MeanTime.Other + b.Other}
		m.Messages += pr.MessagesSent
		m.Bytes += pr.BytesSent
		m.Collectives = max(m.Collectives, pr.Collectives)
		if pr.Host != "" && !slices.Contains(m.Hosts, pr.Host) {
			m.Hosts = append(m.Hosts, pr.Host)
		}
	}
	m.MeanTime = m.MeanTime.scale(1 / float64(len(r.PerRank)))
	slowest := slices.Index(compute, slices.Max(compute))
	m.Slowest = r.PerRank[slowest].Rank
	m.SlowestCells = cellsOf(r.PerRank[slowest].Shape)
	m.SlowestTime = breakdownOf(r.PerRank[slowest], r.WallS)
	m.Imbalance, m.SlowestExcessPct = imbalance(compute)
	steps := float64(r.Steps)
	m.MessagesPerStep = float64(m.Messages) / steps
	m.BytesPerStep = float64(m.Bytes) / steps
	m.CollectivesPerStep = float64(m.Collectives) / steps
	for _, c := range r.Checkpoints {
		m.CheckpointBytes += c.Bytes
		m.CheckpointWriteS += c.WriteS
	}
	return m, nil
}

// imbalance is max/mean of the ranks' compute times, and the excess of the
// maximum over the median in %. All-zero times count as balanced.
func imbalance(compute []float64) (ratio, excessPct float64) {
	mx, mean, med := slices.Max(compute), stat.Mean(compute, nil), median(compute)
	ratio, excessPct = 1, 0
	if mean > 0 {
		ratio = mx / mean
	}
	if med > 0 {
		excessPct = (mx - med) / med * 100
	}
	return ratio, excessPct
}

// median is the middle value of x, or the mean of the two middle values
// when len(x) is even; NaN for no values. x is not modified.
func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// PointSummary condenses the repetitions of one point. Times come from all
// repetitions; the breakdown, traffic and balance figures (Rep) from the
// median one: the middle repetition by time per step, the faster of the two
// middle ones for an even count.
type PointSummary struct {
	Point int `json:"point"` // 1-based, in the study's order
	Resources
	Cores int `json:"cores"`
	Reps  int `json:"reps"`

	StepMedianS float64 `json:"step_median_s"`
	StepMinS    float64 `json:"step_min_s"`
	StepMaxS    float64 `json:"step_max_s"`
	MUpdatesS   float64 `json:"mupdates_per_s"` // cells / median time per step / 1e6

	// Speedup is the throughput (cell updates per second) over the
	// baseline's, the point with the fewest cores: t_base/t for a strong
	// study, (cells/cells_base)·t_base/t (scaled speedup) for a weak one.
	// Efficiency is Speedup / (cores/cores_base).
	Speedup    float64 `json:"speedup"`
	Efficiency float64 `json:"efficiency"`

	RepIndex int        `json:"median_rep"` // 1-based
	Rep      RunMetrics `json:"median_rep_metrics"`
}

// Summarise groups the runs by point and summarises each, in the order of
// the points' first appearance; speedup and efficiency are against the point
// with the fewest cores (the first of equals).
func Summarise(runs []RunResult) ([]PointSummary, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("no runs to summarise")
	}
	var order []int
	byPoint := map[int][]RunResult{}
	for _, r := range runs {
		if _, ok := byPoint[r.Point]; !ok {
			order = append(order, r.Point)
		}
		byPoint[r.Point] = append(byPoint[r.Point], r)
	}
	out := make([]PointSummary, 0, len(order))
	for _, p := range order {
		rs := byPoint[p]
		steps := make([]float64, len(rs))
		for i, r := range rs {
			steps[i] = r.Metrics.StepS
		}
		med := median(steps)
		idx := make([]int, len(rs))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(steps[a], steps[b]) })
		pick := idx[(len(idx)-1)/2]
		s := PointSummary{Point: p, Resources: rs[0].Resources, Cores: rs[0].Cores(), Reps: len(rs),
			StepMedianS: med, StepMinS: slices.Min(steps), StepMaxS: slices.Max(steps),
			RepIndex: rs[pick].Rep, Rep: rs[pick].Metrics}
		s.MUpdatesS = float64(s.Rep.Cells) / med / 1e6
		out = append(out, s)
	}
	base := slices.MinFunc(out, func(a, b PointSummary) int { return cmp.Compare(a.Cores, b.Cores) })
	for i := range out {
		out[i].Speedup, out[i].Efficiency = speedup(base.Rep.Cells, base.Cores, base.StepMedianS,
			out[i].Rep.Cells, out[i].Cores, out[i].StepMedianS)
	}
	return out, nil
}

// speedup is the throughput ratio of a point (cells, cores, seconds per
// step) over a baseline, and that ratio over the ideal cores/cores0.
func speedup(cells0, cores0 int, step0 float64, cells, cores int, step float64) (s, eff float64) {
	s = float64(cells) / float64(cells0) * step0 / step
	return s, s / (float64(cores) / float64(cores0))
}
