package runplot

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// FlowFile is the plot of a heat run's heat flows: through each face, from
// held cells, from the source.
const FlowFile = "flows.png"

// FlowPlot draws the heat flowing in through each face (a line a face, the
// rows' q_x_lo …), from held cells and from the source where any row has
// them, against the simulated time (the step where it does not advance),
// and their sum; the legend apart, for saveBeside. ok is false when no row
// carries the flows (a Poisson run, temporal blocking). timeUnit is
// output.units.time.
func FlowPlot(rows []Row, timeUnit string) (pl *plot.Plot, leg plot.Legend, ok bool, err error) {
	leg = plot.NewLegend()
	var names []string
	for _, r := range rows {
		for name := range r.Q {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return nil, leg, false, nil
	}
	// Faces in the columns' order (z, y, x, lo then hi), then held, source.
	order := FlowColumns(3)
	slices.SortFunc(names, func(a, b string) int { return slices.Index(order, "q_"+a) - slices.Index(order, "q_"+b) })
	xOf, xLabel := func(r Row) float64 { return r.Time }, timeAxis(timeUnit)
	if rows[len(rows)-1].Time <= rows[0].Time {
		xOf, xLabel = func(r Row) float64 { return float64(r.Step) }, "step"
	}
	pl = plot.New()
	pl.Title.Text = fmt.Sprintf("heat flowing in (steps %d–%d)", rows[0].Step, rows[len(rows)-1].Step)
	pl.X.Label.Text = xLabel
	pl.Y.Label.Text = "heat per unit time (k∂u/∂n over a face)"
	pl.X.Tick.Marker, pl.Y.Tick.Marker = distinctTicks{}, distinctTicks{}
	series := func(of func(Row) (float64, bool)) plotter.XYs {
		var pts plotter.XYs
		for _, r := range rows {
			x := xOf(r)
			y, has := of(r)
			if has && !math.IsNaN(x) && !math.IsInf(x, 0) && !math.IsNaN(y) && !math.IsInf(y, 0) {
				pts = append(pts, plotter.XY{X: x, Y: y})
			}
		}
		return pts
	}
	add := func(k int, name string, pts plotter.XYs) error {
		thumbs, err := drawLine(pl, k, pts)
		if err == nil && thumbs != nil {
			leg.Add(name, thumbs...)
		}
		return err
	}
	var quiet []string
	k := 0 // the drawn series' colours, one each
	for _, name := range names {
		pts := series(func(r Row) (float64, bool) { y, has := r.Q[name]; return y, has })
		if !slices.ContainsFunc(pts, func(p plotter.XY) bool { return p.Y != 0 }) {
			quiet = append(quiet, name) // zero throughout: left out of the plot and its legend
			continue
		}
		label := "through " + name
		switch name {
		case "held":
			label = "from held cells"
		case "source":
			label = "from the source"
		}
		if err := add(k, label, pts); err != nil {
			return nil, leg, false, err
		}
		k++
	}
	total := series(func(r Row) (float64, bool) {
		sum := 0.0
		for _, name := range names {
			sum += r.Q[name]
		}
		return sum, r.Q != nil
	})
	if err := add(k, "in all", total); err != nil {
		return nil, leg, false, err
	}
	if len(quiet) > 0 {
		pl.Title.Text += "\nno flow throughout: " + strings.Join(quiet, ", ")
	}
	leg.Top, leg.Left = true, true
	return pl, leg, true, nil
}
