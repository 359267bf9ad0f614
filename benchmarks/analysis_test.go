package benchmarks

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/io/report"
)

func TestMedian(t *testing.T) {
	x := []float64{3, 1, 2}
	require.Equal(t, 2.0, median(x))
	require.Equal(t, []float64{3, 1, 2}, x, "median leaves its input alone")
	require.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
	require.Equal(t, 5.0, median([]float64{5}))
	require.True(t, math.IsNaN(median(nil)))
}

// A two-rank run with hand-computed figures: rank 1 computes 3 s, rank 0
// 1 s, in a 4 s loop of 100 steps.
func TestMetricsOfASyntheticReport(t *testing.T) {
	r := &report.Report{Ranks: 2, Threads: 1, Dims: []int{2, 1}, Steps: 100, WallS: 4, MUpdatesPS: 7,
		Field: report.Field{SHA256: "abc"},
		PerRank: []report.Rank{
			{Rank: 0, Host: "n1", Shape: []int{50, 100}, ComputeS: 1, HaloWaitS: 2, ReduceS: 0.5, OutputS: 0.25,
				MessagesSent: 100, BytesSent: 80000, Collectives: 10},
			{Rank: 1, Host: "n1", Shape: []int{50, 100}, ComputeS: 3, HaloWaitS: 0.5, ReduceS: 0.25, CheckpointS: 0.125,
				MessagesSent: 100, BytesSent: 80000, Collectives: 10},
		},
		Checkpoints: []report.Checkpoint{{Step: 50, Bytes: 1000, WriteS: 0.1}, {Step: 100, Bytes: 3000, WriteS: 0.025}},
	}
	m, err := Metrics(r, []int{100, 100})
	require.NoError(t, err)
	require.Equal(t, 10000, m.Cells)
	require.InDelta(t, 0.04, m.StepS, 1e-15)
	require.InDelta(t, 10000*100/4.0/1e6, m.MUpdatesS, 1e-12)
	require.Equal(t, 7.0, m.ReportMUpdatesS)
	require.Equal(t, 1, m.Slowest)
	require.Equal(t, 5000, m.SlowestCells)
	require.Equal(t, Breakdown{Compute: 3, HaloWait: 0.5, Reduce: 0.25, Checkpoint: 0.125, Other: 4 - 3.875}, m.SlowestTime)
	require.Equal(t, Breakdown{Compute: 2, HaloWait: 1.25, Reduce: 0.375, Checkpoint: 0.0625, Output: 0.125,
		Other: (4 - 3.75 + 4 - 3.875) / 2}, m.MeanTime)
	require.InDelta(t, 1.5, m.Imbalance, 1e-15, "max/mean = 3/2")
	require.InDelta(t, 50.0, m.SlowestExcessPct, 1e-12, "(3 − median 2)/2")
	require.Equal(t, int64(200), m.Messages)
	require.Equal(t, 2.0, m.MessagesPerStep)
	require.Equal(t, 1600.0, m.BytesPerStep)
	require.Equal(t, int64(10), m.Collectives, "every rank joins the same collectives: counted once")
	require.Equal(t, 0.1, m.CollectivesPerStep)
	require.Equal(t, int64(4000), m.CheckpointBytes)
	require.InDelta(t, 0.125, m.CheckpointWriteS, 1e-15)
	require.Equal(t, []string{"n1"}, m.Hosts)
	require.Equal(t, "abc", m.SHA256)
}

func TestMetricsRefusesEmptyReports(t *testing.T) {
	_, err := Metrics(&report.Report{Steps: 0, WallS: 1}, []int{4, 4})
	require.ErrorContains(t, err, "report has 0 steps in 1 s")
	_, err = Metrics(&report.Report{Ranks: 2, Steps: 10, WallS: 1}, []int{4, 4})
	require.ErrorContains(t, err, "no per_rank timings (2 ranks)")
}

// run is a synthetic repetition: cells, cores as ranks × threads, seconds per step.
func run(point, ranks, threads, rep, cells int, step float64) RunResult {
	m := RunMetrics{Shape: []int{cells}, Cells: cells, Steps: 10, WallS: 10 * step, StepS: step}
	return RunResult{Point: point, Resources: Resources{ranks, threads}, Rep: rep, Metrics: m}
}

func TestSummariseStrong(t *testing.T) {
	runs := []RunResult{
		run(1, 1, 1, 1, 1000, 1.0), run(1, 1, 1, 2, 1000, 1.2), run(1, 1, 1, 3, 1000, 0.9),
		run(2, 2, 1, 1, 1000, 0.6), run(2, 2, 1, 2, 1000, 0.5), run(2, 2, 1, 3, 1000, 0.55),
		run(3, 2, 2, 1, 1000, 0.3), run(3, 2, 2, 2, 1000, 0.32),
	}
	pts, err := Summarise(runs)
	require.NoError(t, err)
	require.Len(t, pts, 3)

	p := pts[0]
	require.Equal(t, 1, p.Point)
	require.Equal(t, 3, p.Reps)
	require.Equal(t, [3]float64{1.0, 0.9, 1.2}, [3]float64{p.StepMedianS, p.StepMinS, p.StepMaxS})
	require.Equal(t, 1, p.RepIndex, "the repetition at the median")
	require.InDelta(t, 1000/1.0/1e6, p.MUpdatesS, 1e-18)
	require.Equal(t, [2]float64{1, 1}, [2]float64{p.Speedup, p.Efficiency})

	p = pts[1]
	require.Equal(t, 0.55, p.StepMedianS)
	require.Equal(t, 3, p.RepIndex)
	require.InDelta(t, 1/0.55, p.Speedup, 1e-12)
	require.InDelta(t, 1/0.55/2, p.Efficiency, 1e-12)

	p = pts[2]
	require.Equal(t, 4, p.Cores)
	require.InDelta(t, 0.31, p.StepMedianS, 1e-15, "the mean of two")
	require.InDelta(t, 1/0.31, p.Speedup, 1e-12)
	require.InDelta(t, 1/0.31/4, p.Efficiency, 1e-12)
}

// A weak study's speedup is scaled by the cells: constant time per step on
// twice the cells and cores is speedup 2, efficiency 1. The baseline is the
// point with the fewest cores even when it is not listed first.
func TestSummariseWeakAgainstTheFewestCores(t *testing.T) {
	runs := []RunResult{
		run(1, 2, 1, 1, 2000, 1.25),
		run(2, 1, 1, 1, 1000, 1.0),
		run(3, 4, 1, 1, 4000, 1.0),
	}
	pts, err := Summarise(runs)
	require.NoError(t, err)
	require.InDelta(t, 2*1.0/1.25, pts[0].Speedup, 1e-12)
	require.InDelta(t, 0.8, pts[0].Efficiency, 1e-12)
	require.Equal(t, [2]float64{1, 1}, [2]float64{pts[1].Speedup, pts[1].Efficiency})
	require.InDelta(t, 4.0, pts[2].Speedup, 1e-12)
	require.InDelta(t, 1.0, pts[2].Efficiency, 1e-12)

	_, err = Summarise(nil)
	require.ErrorContains(t, err, "no runs")
}
