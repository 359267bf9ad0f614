package benchmarks

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/vg/vgimg"

	"heat/internal/csvtest"
)

// checkedShape is the grid of the synthetic studies below.
var checkedShape = []int{1024, 1024}

// syntheticStudy is a strong study of checkedShape with testModel as its
// model (no runs: the repetitions are made up). Point i has the resources
// points[i] and one repetition per factor of reps[i], each taking that
// factor times the model's time per step at the point's ranks.
func syntheticStudy(t *testing.T, points []Resources, reps [][]float64) *Study {
	t.Helper()
	var runs []RunResult
	for i, pt := range points {
		pr, err := testModel.Predict(checkedShape, pt.Ranks)
		require.NoError(t, err)
		for k, f := range reps[i] {
			r := run(i+1, pt.Ranks, pt.Threads, k+1, cellsOf(checkedShape), f*pr.StepS)
			r.Metrics.Shape = checkedShape
			r.Metrics.MeanTime = Breakdown{Compute: 0.8 * r.Metrics.WallS, HaloWait: 0.15 * r.Metrics.WallS, Other: 0.05 * r.Metrics.WallS}
			runs = append(runs, r)
		}
	}
	pts, err := Summarise(runs)
	require.NoError(t, err)
	m := testModel
	return &Study{Record: Record{Kind: Strong, Shape: checkedShape, Steps: 10, Reps: 3, Transport: "local"},
		Points: pts, Runs: runs, Network: &NetworkResult{Transport: "local", Network: m.Network},
		Model: &m, Predicted: m.Strong(checkedShape, PredictRanks(1, 64))}
}

// summaryRow is the points table's row of point n in summary.md.
func summaryRow(t *testing.T, md string, n string) string {
	t.Helper()
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| "+n+" | ") {
			return line
		}
	}
	t.Fatalf("summary has no row for point %s:\n%s", n, md)
	return ""
}

// One point's repetitions spread 30%, another runs twice as long as the
// model predicts, a third has 2 threads per rank (the model has 1), and
// the base agrees: the summary, points.csv and model.csv flag exactly
// those two, and the plots are drawn.
func TestChecksFlagTheNoisyPointAndTheModelMiss(t *testing.T) {
	st := syntheticStudy(t, []Resources{{1, 1}, {2, 1}, {4, 1}, {2, 2}},
		[][]float64{{1, 1.02, 0.99}, {0.85, 1, 1.15}, {2, 2.02, 1.98}, {1.01, 1, 0.99}})

	c := st.Checks()
	require.Len(t, c, 4)
	require.InDelta(t, 0.30, c[1].Spread, 1e-12)
	require.InDelta(t, -0.5, c[2].ModelErr, 1e-12)
	require.Equal(t, []bool{false, true, false, false}, []bool{c[0].Noisy, c[1].Noisy, c[2].Noisy, c[3].Noisy})
	require.Equal(t, []bool{false, false, true, false}, []bool{c[0].ModelMiss, c[1].ModelMiss, c[2].ModelMiss, c[3].ModelMiss})
	require.True(t, math.IsNaN(c[3].ModelS), "2 threads per rank: not the model's points")
	require.Equal(t, []string{"−50%", "0%", "+3%"}, []string{signedPct(-0.5), signedPct(-0.001), signedPct(0.03)})

	out := t.TempDir()
	require.NoError(t, WriteResults(out, st))
	raw, err := os.ReadFile(filepath.Join(out, "summary.md"))
	require.NoError(t, err)
	md := string(raw)
	for n, want := range map[string][2]bool{"1": {false, false}, "2": {true, false}, "3": {false, true}, "4": {false, false}} {
		row := summaryRow(t, md, n)
		require.Equal(t, want[0], strings.Contains(row, noisyMark), "point %s: %s", n, row)
		require.Equal(t, want[1], strings.Contains(row, missMark), "point %s: %s", n, row)
	}
	require.Contains(t, summaryRow(t, md, "2"), "| 30% "+noisyMark+" |")
	require.Contains(t, summaryRow(t, md, "3"), "| −50% "+missMark+" |")
	require.Contains(t, summaryRow(t, md, "4"), "| – | – |", "no model figures for 2 threads per rank")
	require.Contains(t, md, "\n"+noisyMark+": point 2 (ranks 2 × threads 1): repetitions spread 30% (min–max over median of the times per step) > 10%")
	require.Contains(t, md, "\n"+missMark+": point 3 (ranks 4 × threads 1): the α–β model predicts 2.632 ms per step, the median is 5.264 ms: off by −50%")
	require.Equal(t, 2, strings.Count(md, noisyMark), "the row and its line")
	require.Equal(t, 2, strings.Count(md, missMark), "the row and its line")
	require.NotContains(t, md, "No point is noisy")
	require.Contains(t, md, "The model predicts only the points with its 1 thread(s) per rank (– elsewhere).")
	// The model's table: measured rank counts beside their medians, the
	// rest the model's, extrapolated past 4 ranks.
	require.Contains(t, md, "| model vs measured | 4 | 4 | 1024x1024 | 2x2 |")
	require.Contains(t, md, "| model (extrapolated) | 8 | 8 |")
	require.NotContains(t, md, "| model vs measured | 8 |")

	pts := csvtest.Read(t, filepath.Join(out, "points.csv"))
	require.Equal(t, []string{"false", "true", "false", "false"}, csvtest.Column(t, pts, "noisy"))
	require.Equal(t, []string{"false", "false", "true", ""}, csvtest.Column(t, pts, "model_miss"))
	require.Equal(t, "0.3", csvtest.Column(t, pts, "spread")[1])
	require.Equal(t, "-0.5", csvtest.Column(t, pts, "model_err")[2])
	require.Equal(t, "", csvtest.Column(t, pts, "model_s")[3])
	model := csvtest.Read(t, filepath.Join(out, "model.csv"))
	require.Equal(t, []string{"false", "false", "false", "true", "true", "true", "true"}, csvtest.Column(t, model, "extrapolated"))

	// The legend sits in a band below the plot, which makes the image
	// taller than the plot.
	for _, name := range []string{"speedup.png", "efficiency.png", "breakdown.png", "model.png"} {
		cfg := requirePNG(t, filepath.Join(out, name))
		require.Greater(t, cfg.Height, int(plotHeight.Dots(vgimg.DefaultDPI)), name)
	}
}

// Repetitions within 10% and the model within 25%: nothing is flagged.
func TestChecksOfAQuietStudyFlagNothing(t *testing.T) {
	st := syntheticStudy(t, []Resources{{1, 1}, {2, 1}, {4, 1}},
		[][]float64{{1, 1.02, 0.99}, {0.96, 1, 1.05}, {1.2, 1.18, 1.22}})
	for i, c := range st.Checks() {
		require.False(t, c.Noisy || c.ModelMiss, "point %d: %+v", i+1, c)
	}
	var b bytes.Buffer
	require.NoError(t, WriteSummary(&b, st))
	require.NotContains(t, b.String(), "⚠")
	require.NotContains(t, b.String(), "✗")
	require.Contains(t, b.String(), "\nNo point is noisy (repetitions spread ≤ 10%, min–max over median of the times per step) "+
		"or missed by the model (|model − measured| / measured ≤ 25%).")
	out := t.TempDir()
	require.NoError(t, WriteResults(out, st))
	pts := csvtest.Read(t, filepath.Join(out, "points.csv"))
	require.Equal(t, []string{"false", "false", "false"}, csvtest.Column(t, pts, "noisy"))
	require.Equal(t, []string{"false", "false", "false"}, csvtest.Column(t, pts, "model_miss"))
}

// One repetition has no spread: not noisy, but not called quiet either.
func TestChecksOfOneRepetition(t *testing.T) {
	st := syntheticStudy(t, []Resources{{1, 1}, {2, 1}}, [][]float64{{1}, {1}})
	c := st.Checks()
	require.True(t, math.IsNaN(c[1].Spread))
	require.False(t, c[1].Noisy)
	var b bytes.Buffer
	require.NoError(t, WriteSummary(&b, st))
	require.Contains(t, summaryRow(t, b.String(), "2"), "| – |")
	require.Contains(t, b.String(), "Points of one repetition have no spread to judge noise by.")
}
