package benchmarks

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// plotWidth and plotHeight are the size of a plot without its legend;
// legendMargin is the room around the legend.
const (
	plotWidth    = 7 * vg.Inch
	plotHeight   = 4.5 * vg.Inch
	legendMargin = vg.Length(10)
)

// withLegendBelow draws p as a PNG with its legend in a band below the
// axes, outside the data: the image grows by the legend's height (and
// widens when the legend is wider than the plot), so the legend never
// covers a point and is never cut off.
func withLegendBelow(p *plot.Plot) io.WriterTo {
	leg := p.Legend
	leg.Padding = vg.Points(4) // room for the flags' larger glyphs
	p.Legend = plot.NewLegend()
	size := leg.Rectangle(draw.Canvas{}).Size()
	band := vg.Length(0)
	if size.Y > 0 {
		band = size.Y + 2*legendMargin
	}
	w := max(plotWidth, size.X+2*legendMargin)
	img := vgimg.New(w, plotHeight+band)
	c := draw.New(img)
	p.Draw(draw.Crop(c, 0, 0, band, 0))
	leg.Top, leg.Left, leg.XOffs, leg.YOffs = true, true, 0, 0
	leg.Draw(draw.Crop(c, legendMargin, -legendMargin, legendMargin, -(plotHeight + legendMargin)))
	return vgimg.PngCanvas{Canvas: img}
}

// WritePlots draws the study's PNGs into dir: speedup.png (measured against
// ideal), efficiency.png, breakdown.png (stacked time per step of each
// point) and, with a model, model.png (predicted and measured time per
// step over cores, log–log, the model dashed past the measured ranks).
// Noisy points and model misses (Checks) carry a marker of their own, and
// each legend sits below its plot.
func WritePlots(dir string, st *Study) error {
	plots := []struct {
		name string
		make func(*Study) (*plot.Plot, error)
	}{{"speedup.png", speedupPlot}, {"efficiency.png", efficiencyPlot}, {"breakdown.png", breakdownPlot}}
	if st.Model != nil {
		plots = append(plots, struct {
			name string
			make func(*Study) (*plot.Plot, error)
		}{"model.png", modelPlot})
	}
	for _, pl := range plots {
		p, err := pl.make(st)
		if err != nil {
			return fmt.Errorf("plot %s: %w", pl.name, err)
		}
		wt := withLegendBelow(p)
		if err := writeFile(filepath.Join(dir, pl.name), func(w io.Writer) error { _, err := wt.WriteTo(w); return err }); err != nil {
			return err
		}
	}
	return nil
}

// errXYs are points with vertical error bars.
type errXYs struct {
	plotter.XYs
	plotter.YErrors
}

// coresAxis labels the x axis of a linear plot over cores with the
// measured core counts (no fractional cores) and pads it a little, and
// returns the smallest and largest count.
func coresAxis(p *plot.Plot, pts []PointSummary) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	var ticks plot.ConstantTicks
	for _, pt := range pts {
		x := float64(pt.Cores)
		lo, hi = min(lo, x), max(hi, x)
		if !slices.ContainsFunc(ticks, func(t plot.Tick) bool { return t.Value == x }) {
			ticks = append(ticks, plot.Tick{Value: x, Label: strconv.Itoa(pt.Cores)})
		}
	}
	pad := max(hi-lo, 1) * 0.04
	p.X.Min, p.X.Max = lo-pad, hi+pad
	p.X.Tick.Marker = ticks
	p.X.Label.Text = "cores (ranks × threads)"
	return lo, hi
}

func speedupPlot(st *Study) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("heat bench %s: speedup", st.Record.Kind)
	if st.Record.Kind == Weak {
		p.Title.Text += " (scaled: cells/cells_base · t_base/t)"
	}
	p.Y.Label.Text = "speedup over the smallest point"
	lo, hi := coresAxis(p, st.Points)
	ideal, err := plotter.NewLine(plotter.XYs{{X: lo, Y: 1}, {X: hi, Y: hi / lo}})
	if err != nil {
		return nil, err
	}
	ideal.Dashes = plotutil.Dashes(1)
	ideal.Color = plotutil.Color(0)
	top := hi / lo
	y := func(pt PointSummary) float64 { return pt.Speedup }
	if err := addMeasured(p, st.Points, y, &top); err != nil {
		return nil, err
	}
	p.Add(ideal)
	p.Legend.Add("ideal", ideal)
	if err := addFlags(p, st, y); err != nil {
		return nil, err
	}
	p.Y.Min, p.Y.Max = 0, 1.05*top
	return p, nil
}

// addMeasured draws y of the measured points over their cores, one series
// per thread count (points of equal cores but another split are not
// joined), with bars from the fastest to the slowest repetition (y scales
// as 1/time per step), and raises top to the highest bar.
func addMeasured(p *plot.Plot, pts []PointSummary, y func(PointSummary) float64, top *float64) error {
	var threads []int
	for _, pt := range pts {
		if !slices.Contains(threads, pt.Threads) {
			threads = append(threads, pt.Threads)
		}
	}
	for k, th := range threads {
		var d errXYs
		for _, pt := range pts {
			if pt.Threads != th {
				continue
			}
			v := y(pt)
			d.XYs = append(d.XYs, plotter.XY{X: float64(pt.Cores), Y: v})
			hiV := v * pt.StepMedianS / pt.StepMinS
			d.YErrors = append(d.YErrors, struct{ Low, High float64 }{v - v*pt.StepMedianS/pt.StepMaxS, hiV - v})
			*top = max(*top, hiV)
		}
		line, marks, err := plotter.NewLinePoints(d.XYs)
		if err != nil {
			return err
		}
		c := plotutil.Color(1 + k)
		line.Color, marks.Color = c, c
		marks.Shape = plotutil.Shape(k)
		bars, err := plotter.NewYErrorBars(d)
		if err != nil {
			return err
		}
		bars.Color = c
		p.Add(line, marks, bars)
		name := "measured (median; bars: min–max)"
		if len(threads) > 1 {
			name = fmt.Sprintf("%d thread(s) per rank (median; bars: min–max)", th)
		}
		p.Legend.Add(name, line, marks)
	}
	return nil
}

func efficiencyPlot(st *Study) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("heat bench %s: parallel efficiency", st.Record.Kind)
	p.Y.Label.Text = "efficiency (speedup / cores ratio)"
	lo, hi := coresAxis(p, st.Points)
	ideal, err := plotter.NewLine(plotter.XYs{{X: lo, Y: 1}, {X: hi, Y: 1}})
	if err != nil {
		return nil, err
	}
	ideal.Dashes = plotutil.Dashes(1)
	ideal.Color = plotutil.Color(0)
	top := 1.0
	y := func(pt PointSummary) float64 { return pt.Efficiency }
	if err := addMeasured(p, st.Points, y, &top); err != nil {
		return nil, err
	}
	p.Add(ideal)
	p.Legend.Add("ideal", ideal)
	if err := addFlags(p, st, y); err != nil {
		return nil, err
	}
	p.Y.Min, p.Y.Max = 0, 1.05*top
	return p, nil
}

// breakdownPlot stacks each point's time per step (mean over ranks of the
// median repetition) by where it went.
func breakdownPlot(st *Study) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("heat bench %s: time per step, mean over ranks", st.Record.Kind)
	p.Y.Label.Text = "ms per step"
	parts := []struct {
		name string
		of   func(Breakdown) float64
	}{
		{"compute", func(b Breakdown) float64 { return b.Compute }},
		{"halo wait", func(b Breakdown) float64 { return b.HaloWait }},
		{"reduce", func(b Breakdown) float64 { return b.Reduce }},
		{"checkpoint + output", func(b Breakdown) float64 { return b.IO() }},
		{"other", func(b Breakdown) float64 { return b.Other }},
	}
	names := make([]string, len(st.Points))
	checks := st.Checks()
	for i, pt := range st.Points {
		names[i] = fmt.Sprintf("%d×%d", pt.Ranks, pt.Threads)
		if checks[i].Noisy {
			names[i] += "\nnoisy"
		}
		if checks[i].ModelMiss {
			names[i] += "\nmodel miss"
		}
	}
	width := vg.Length(math.Min(40, 360/float64(len(st.Points))))
	var below *plotter.BarChart
	top := 0.0
	for k, part := range parts {
		v := make(plotter.Values, len(st.Points))
		for i, pt := range st.Points {
			v[i] = max(0, part.of(pt.Rep.MeanTime)/float64(pt.Rep.Steps)*1e3)
		}
		bars, err := plotter.NewBarChart(v, width)
		if err != nil {
			return nil, err
		}
		bars.Color = plotutil.Color(k)
		bars.LineStyle.Width = 0
		if below != nil {
			bars.StackOn(below)
		}
		below = bars
		for i := range v {
			top = max(top, bars.BarHeight(i))
		}
		p.Add(bars)
		p.Legend.Add(part.name, bars)
	}
	p.NominalX(names...)
	p.X.Label.Text = "ranks × threads"
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	p.Y.Min, p.Y.Max = 0, 1.05*top
	return p, nil
}

// modelPlot draws the predicted time per step over cores (log–log) with
// the measured medians. The model on the measured network is solid up to
// the most ranks measured and dashed past them, where it is extrapolated;
// the model on a target network, never measured, is dash-dotted.
func modelPlot(st *Study) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("heat bench %s: model and measurements", st.Record.Kind)
	p.X.Label.Text = fmt.Sprintf("cores (ranks × threads; the model: %d per rank)", st.Model.Threads)
	p.Y.Label.Text = "time per step (s)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	most := st.measuredRanks()
	var within, past []Prediction
	for i, pr := range st.Predicted {
		switch {
		case pr.Ranks <= most:
			within = append(within, pr)
		case len(past) == 0 && i > 0:
			past = append(past, st.Predicted[i-1], pr) // joined to the last measured rank count
		default:
			past = append(past, pr)
		}
	}
	type series struct {
		name   string
		ps     []Prediction
		color  color.Color
		dashes []vg.Length
	}
	all := []series{
		{"α–β model, measured network (" + st.Model.Network.String() + ")", within, plotutil.Color(2), nil},
		{fmt.Sprintf("α–β model (extrapolated past %d ranks)", most), past, plotutil.Color(2), plotutil.Dashes(1)},
	}
	if st.Target != nil {
		all = append(all, series{"α–β model, target network (" + st.Target.String() + "), not measured",
			st.TargetPredicted, plotutil.Color(4), plotutil.Dashes(4)})
	}
	// Log axes need positive limits, set here so that a single value
	// cannot widen to a range through 0.
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	extend := func(x, y float64) {
		if x > 0 && y > 0 {
			xlo, xhi, ylo, yhi = min(xlo, x), max(xhi, x), min(ylo, y), max(yhi, y)
		}
	}
	for _, s := range all {
		if len(s.ps) < 2 {
			continue // no line to draw
		}
		xy := make(plotter.XYs, len(s.ps))
		for i, pr := range s.ps {
			xy[i] = plotter.XY{X: float64(pr.Cores), Y: pr.StepS}
			extend(xy[i].X, xy[i].Y)
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		line.Color, line.Dashes, line.Width = s.color, s.dashes, vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(s.name, line)
	}
	xy := make(plotter.XYs, len(st.Points))
	for i, pt := range st.Points {
		xy[i] = plotter.XY{X: float64(pt.Cores), Y: pt.StepMedianS}
		extend(xy[i].X, xy[i].Y)
	}
	if math.IsInf(xlo, 0) {
		return nil, fmt.Errorf("no positive times to draw on log axes")
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xlo/1.5, xhi*1.5, ylo/2, yhi*2
	pts, err := plotter.NewScatter(xy)
	if err != nil {
		return nil, err
	}
	pts.Color = plotutil.Color(1)
	pts.Shape = draw.CircleGlyph{}
	pts.Radius = vg.Points(4)
	p.Add(pts)
	p.Legend.Add("measured (median)", pts)
	return p, addFlags(p, st, func(pt PointSummary) float64 { return pt.StepMedianS })
}

// flagGlyph is an open ring, or an open square, drawn thick enough to
// stand out around a point's own glyph.
type flagGlyph struct{ square bool }

func (g flagGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.5)})
	r := sty.Radius
	var path vg.Path
	if g.square {
		path.Move(vg.Point{X: pt.X - r, Y: pt.Y - r})
		path.Line(vg.Point{X: pt.X + r, Y: pt.Y - r})
		path.Line(vg.Point{X: pt.X + r, Y: pt.Y + r})
		path.Line(vg.Point{X: pt.X - r, Y: pt.Y + r})
	} else {
		path.Move(vg.Point{X: pt.X + r, Y: pt.Y})
		path.Arc(pt, r, 0, 2*math.Pi)
	}
	path.Close()
	c.Stroke(path)
}

// addFlags rings the noisy points and boxes the model misses (Checks) at
// (cores, y) of each, and names each mark in the legend when some point
// carries it.
func addFlags(p *plot.Plot, st *Study, y func(PointSummary) float64) error {
	checks := st.Checks()
	for _, f := range []struct {
		name  string
		on    func(PointCheck) bool
		style draw.GlyphStyle
	}{
		{fmt.Sprintf("noisy: repetitions spread > %s (min–max over median)", pct(NoisySpread)),
			func(c PointCheck) bool { return c.Noisy },
			draw.GlyphStyle{Color: color.Black, Radius: vg.Points(6), Shape: flagGlyph{}}},
		{fmt.Sprintf("model miss: the α–β model is off the median by > %s", pct(ModelMissError)),
			func(c PointCheck) bool { return c.ModelMiss },
			draw.GlyphStyle{Color: color.RGBA{R: 190, A: 255}, Radius: vg.Points(7), Shape: flagGlyph{square: true}}},
	} {
		var xy plotter.XYs
		for i, pt := range st.Points {
			if f.on(checks[i]) {
				xy = append(xy, plotter.XY{X: float64(pt.Cores), Y: y(pt)})
			}
		}
		if len(xy) == 0 {
			continue
		}
		marks, err := plotter.NewScatter(xy)
		if err != nil {
			return err
		}
		marks.GlyphStyle = f.style
		p.Add(marks)
		p.Legend.Add(f.name, marks)
	}
	return nil
}
