package runplot

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// SweepFile is a parameter study's plot, beside its table.
const SweepFile = "sweep.png"

// SweepSeries is one line of a study's plot: the points that share the
// other swept keys' values (Name says which; "" where no other key is
// swept), each figure Y at the swept value X.
type SweepSeries struct {
	Name string
	X, Y []float64
}

// SweepPlot is a study's figure against one swept key, a line a series,
// points in the key's order with marks. An axis whose values are all
// positive and span two decades or more is logarithmic (a convection
// coefficient over 5…500, a grid over 64…1024). Non-finite figures (a
// failed point) are left out. The legend comes apart, to be drawn beside
// the data.
func SweepPlot(key, figure string, series []SweepSeries) (*plot.Plot, plot.Legend, error) {
	leg := plot.NewLegend()
	pl := plot.New()
	pl.Title.Text = fmt.Sprintf("%s against %s", figure, key)
	pl.X.Label.Text, pl.Y.Label.Text = key, figure
	pl.X.Tick.Marker, pl.Y.Tick.Marker = distinctTicks{}, distinctTicks{}
	var xs, ys []float64
	drawn := make([]plotter.XYs, len(series))
	for k, s := range series {
		for i := range s.X {
			x, y := s.X[i], s.Y[i]
			if finiteNum(x) && finiteNum(y) {
				drawn[k] = append(drawn[k], plotter.XY{X: x, Y: y})
				xs, ys = append(xs, x), append(ys, y)
			}
		}
		sort.SliceStable(drawn[k], func(i, j int) bool { return drawn[k][i].X < drawn[k][j].X })
	}
	if len(xs) == 0 {
		return nil, leg, fmt.Errorf("sweep plot: no point has a finite %s", figure)
	}
	if wide(xs) {
		pl.X.Scale, pl.X.Tick.Marker = plot.LogScale{}, LogTicks{}
	}
	if wide(ys) {
		pl.Y.Scale, pl.Y.Tick.Marker = plot.LogScale{}, LogTicks{}
	}
	for k, pts := range drawn {
		if len(pts) == 0 {
			continue
		}
		thumbs, err := drawLine(pl, k, pts)
		if err != nil {
			return nil, leg, err
		}
		marks, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, leg, err
		}
		marks.Color = thumbs[0].(*plotter.Line).Color
		pl.Add(marks)
		if series[k].Name != "" {
			leg.Add(series[k].Name, thumbs[0], marks)
		}
	}
	leg.Top, leg.Left = true, true
	return pl, leg, nil
}

// WriteSweep draws SweepPlot into path (a PNG; its folder made when
// missing), the legend beside the data.
func WriteSweep(path, key, figure string, series []SweepSeries) error {
	pl, leg, err := SweepPlot(key, figure, series)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return saveBeside(path, pl, leg)
}

func finiteNum(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// wide: every value positive, the largest at least 100 times the least.
func wide(v []float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range v {
		if x <= 0 {
			return false
		}
		lo, hi = min(lo, x), max(hi, x)
	}
	return hi >= 100*lo
}
