package runplot

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"heat/internal/atomicfile"
	"heat/io/heatmap"
)

// The files Write draws.
const (
	FieldFile    = "field.png"    // heat: min, max, mean over time; total heat over time
	ResidualFile = "residual.png" // poisson: the residual per iteration, log axis
)

// Run is what the plots need to know of a run beside its rows, from its
// report.
type Run struct {
	// Equation is "heat" or "poisson"; "" (no report yet: a run still
	// going or killed) draws the plots of both.
	Equation string
	// Solver is the report's solver.kind ("multigrid", "jacobi", ...): it
	// names the iterations.
	Solver string
	// History is the residual after each iteration First+1, First+2, ...
	// (the report's solver.residual_history): it fills in the iterations
	// between the CSV's rows. Nil when unknown.
	History []float64
	First   int
	// Factor is the mean convergence factor per iteration (the report's
	// solver.convergence_factor); 0 when unknown: the plot computes it.
	Factor float64
	// Label is the field's name (output.label) on the axes of its values;
	// "" leaves them unnamed.
	Label string
	// Media: the run is in heterogeneous media, where ∫u dV is not the
	// heat (that weighs u by ρc: the report's energy_balance).
	Media bool
	// TimeUnit is output.units.time, on the time axes ("": "simulated
	// time").
	TimeUnit string
	// ProbeTime is the unit the probes' plot draws time in (s, min, h, d;
	// "": TimeUnit's), converted from TimeUnit (then one of those too);
	// ProbeLog draws its values on a log axis (the positive ones).
	ProbeTime string
	ProbeLog  bool
}

// Seconds are the time units a plot converts between, in seconds.
var Seconds = map[string]float64{"s": 1, "min": 60, "h": 3600, "d": 86400}

// timeAxis names a time axis: t with its unit, or "t (simulated time)".
func timeAxis(unit string) string {
	if unit == "" {
		unit = "simulated time"
	}
	return "t (" + unit + ")"
}

// Write draws the plots of a run with these rows into dir (created when
// missing) and returns their paths: FieldFile for a heat run (and
// FlowFile where the rows carry its heat flows), ResidualFile for a
// Poisson run, and both when the equation is unknown (ResidualFile only
// where a residual is positive).
func Write(dir string, rows []Row, run Run) ([]string, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("no rows to plot")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	if run.Equation != "poisson" {
		stats, total, err := FieldPlots(rows, run)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, FieldFile)
		if err := saveStacked(path, 7*vg.Inch, 7*vg.Inch, stats, total); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	if pl, leg, ok, err := FlowPlot(rows, run.TimeUnit); err != nil {
		return nil, err
	} else if ok {
		path := filepath.Join(dir, FlowFile)
		if err := saveBeside(path, pl, leg); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	if run.Equation == "poisson" || (run.Equation == "" && len(residuals(rows)) > 0) {
		p, err := ResidualPlot(rows, run)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, ResidualFile)
		if err := Save(p, path, 7*vg.Inch, 4.5*vg.Inch); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// Save writes p to path in the format its extension names (png, svg, pdf),
// w by h, whole or not at all.
func Save(p *plot.Plot, path string, w, h vg.Length) error {
	format := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	wt, err := p.WriterTo(w, h, format)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return atomicfile.Write(path, func(out io.Writer) error { _, err := wt.WriteTo(out); return err })
}

// saveStacked writes the plots one above the other on one PNG, their data
// areas aligned.
func saveStacked(path string, w, h vg.Length, plots ...*plot.Plot) error {
	c, err := draw.NewFormattedCanvas(w, h, "png")
	if err != nil {
		return err
	}
	grid := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		grid[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: 4 * vg.Millimeter, PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter,
		PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	cs := plot.Align(grid, tiles, draw.New(c))
	for i, p := range plots {
		p.Draw(cs[i][0])
	}
	return atomicfile.Write(path, func(out io.Writer) error { _, err := c.WriteTo(out); return err })
}

// FieldPlots are a heat run's plots: the field's min, max and mean over
// time, and the total heat ∫u dV over time. The x axis is the simulated
// time, or the step where the time does not advance (a Poisson run's
// rows). Non-finite values are left out. run.Label names the field
// (output.label; "": u). In media the total panel says it is ∫u dV, not
// the heat.
func FieldPlots(rows []Row, run Run) (stats, total *plot.Plot, err error) {
	label, media := run.Label, run.Media
	if label == "" {
		label = "u"
	}
	xOf, xLabel := func(r Row) float64 { return r.Time }, timeAxis(run.TimeUnit)
	if rows[len(rows)-1].Time <= rows[0].Time {
		xOf, xLabel = func(r Row) float64 { return float64(r.Step) }, "step"
	}
	stats = plot.New()
	stats.Title.Text = fmt.Sprintf("field %s: min, max, mean (steps %d–%d)", label, rows[0].Step, rows[len(rows)-1].Step)
	stats.X.Label.Text = xLabel
	stats.Y.Label.Text = label
	stats.Legend.Top = true
	lo, hi := math.Inf(1), math.Inf(-1)
	for k, s := range []struct {
		name string
		of   func(Row) float64
	}{{"max", func(r Row) float64 { return r.Max }}, {"mean", func(r Row) float64 { return r.Mean }}, {"min", func(r Row) float64 { return r.Min }}} {
		pts := finite(rows, xOf, s.of)
		for _, pt := range pts {
			lo, hi = min(lo, pt.Y), max(hi, pt.Y)
		}
		if err := addLine(stats, s.name, k, pts); err != nil {
			return nil, nil, err
		}
	}
	if lo <= hi {
		// Room above the lines for the legend.
		r := max(hi-lo, math.Abs(hi)*1e-3, 1e-300)
		stats.Y.Min, stats.Y.Max = lo-0.05*r, hi+0.3*r
	}

	// The total as its drift from the first row's, where that is a number
	// to divide by: conservation (periodic, Neumann faces) shows as 1e-15,
	// not as a flat line of equal labels.
	total = plot.New()
	total.X.Label.Text = xLabel
	q0 := math.NaN()
	if pts := finite(rows, xOf, func(r Row) float64 { return r.Total }); len(pts) > 0 {
		q0 = pts[0].Y
	}
	of := func(r Row) float64 { return r.Total }
	total.Title.Text = "total heat ∫u dV"
	total.Y.Label.Text = "∫u dV"
	if q0 != 0 && !math.IsNaN(q0) {
		of = func(r Row) float64 { return (r.Total - q0) / math.Abs(q0) }
		total.Title.Text = fmt.Sprintf("total heat ∫u dV, relative to the first row's Q₀ = %.6g", q0)
		total.Y.Label.Text = "(∫u dV − Q₀) / |Q₀|"
	}
	if media {
		total.Title.Text = strings.Replace(total.Title.Text, "total heat ∫u dV", "∫u dV (in media not the heat, Σ ρc·u·V: see the report's energy_balance)", 1)
	}
	if err := addLine(total, "", 0, finite(rows, xOf, of)); err != nil {
		return nil, nil, err
	}
	for _, p := range []*plot.Plot{stats, total} {
		p.X.Tick.Marker, p.Y.Tick.Marker = distinctTicks{}, distinctTicks{}
	}
	return stats, total, nil
}

// LogTicks mark the decades of a log axis, labelled 0.001, 1e-5 (gonum's
// own read 9.999999999999999e-06), the 2 and 5 between them labelled too
// on a range of two decades or less, the minor marks left out over a wide
// one, where only every few decades are labelled.
type LogTicks struct{}

func (LogTicks) Ticks(lo, hi float64) []plot.Tick {
	k0, k1 := decade(lo, false), decade(hi, true)
	span := k1 - k0
	every := max(1, (span+7)/8) // labelled decades: at most about 8
	var ticks []plot.Tick
	for k := k0; k <= k1; k++ {
		for m := 1; m < 10 && (m == 1 || (k < k1 && span <= 12)); m++ {
			v := float64(m) * math.Pow10(k)
			t := plot.Tick{Value: v}
			if (m == 1 && (k-k0)%every == 0) || (span <= 2 && (m == 2 || m == 5)) {
				r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 1, 64), 64)
				t.Label = heatmap.Shortest(r)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// decade is the power of ten at or below x (at or above, up), x itself
// when it is one though its logarithm rounds (log10(1e-4) > -4).
func decade(x float64, up bool) int {
	l := math.Log10(x)
	if k := math.Round(l); math.Abs(l-k) < 1e-9 {
		return int(k)
	}
	if up {
		return int(math.Ceil(l))
	}
	return int(math.Floor(l))
}

// distinctTicks are gonum's default ticks, labelled with as few digits as
// tell them apart and place each within a thousandth of the spacing
// (gonum's own may all read 0.031 on a narrow range).
type distinctTicks struct{}

func (distinctTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	var vals []float64
	for _, t := range ticks {
		if t.Label != "" {
			vals = append(vals, t.Value)
		}
	}
	gap := math.Inf(1)
	for i := 1; i < len(vals); i++ {
		gap = min(gap, vals[i]-vals[i-1])
	}
	if math.IsInf(gap, 1) && len(vals) == 1 {
		gap = math.Abs(vals[0])
	}
	for prec := 1; prec <= 17; prec++ {
		seen := map[string]bool{}
		ok := true
		labels := make([]string, len(ticks))
		for i, t := range ticks {
			if t.Label == "" {
				continue
			}
			v, _ := strconv.ParseFloat(strconv.FormatFloat(t.Value, 'g', prec, 64), 64)
			l := heatmap.Shortest(v) // plain notation: 10, not 1e+01

			ok = ok && !seen[l] && !(math.Abs(v-t.Value) > 1e-3*gap)
			seen[l] = true
			labels[i] = l
		}
		if ok {
			for i := range ticks {
				ticks[i].Label = labels[i]
			}
			break
		}
	}
	return ticks
}

// ResidualPlot is a Poisson run's plot: the residual per iteration on a
// logarithmic y axis, the CSV's rows as marks and, where the report has
// every iteration's residual, those as a line, with the mean convergence
// factor (run.Factor, or the geometric mean of the ratios of the drawn
// residuals, per iteration) in the title. Residuals that are zero (before
// the first iteration) or not finite are left out.
func ResidualPlot(rows []Row, run Run) (*plot.Plot, error) {
	unit, xLabel, yLabel := "iteration", "iteration", "residual"
	switch run.Solver {
	case "multigrid":
		unit, xLabel, yLabel = "cycle", "multigrid cycle", "‖f − Au‖∞ / ‖f‖∞"
	case "jacobi":
		unit, xLabel, yLabel = "sweep", "Jacobi sweep", "max |Δu| of a sweep"
	}
	p := plot.New()
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = LogTicks{}
	p.Legend.Top = true

	csvPts := residuals(rows)
	var every plotter.XYs
	for i, r := range run.History {
		if r > 0 && !math.IsInf(r, 0) {
			every = append(every, plotter.XY{X: float64(run.First + i + 1), Y: r})
		}
	}
	if len(every) > 0 {
		if err := addLine(p, "every "+unit+" (report.json)", 1, every); err != nil {
			return nil, err
		}
	}
	if len(csvPts) > 0 {
		marks, err := plotter.NewScatter(csvPts)
		if err != nil {
			return nil, err
		}
		marks.Color = plotutil.Color(0)
		marks.Shape = plotutil.Shape(0)
		p.Add(marks)
		name := "diagnostics.csv"
		if len(every) == 0 {
			line, err := plotter.NewLine(csvPts)
			if err != nil {
				return nil, err
			}
			line.Color = plotutil.Color(0)
			p.Add(line)
			p.Legend.Add(name, line, marks)
		} else {
			p.Legend.Add(name, marks)
		}
	}

	// A log axis needs a positive range: whole decades around the data.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pts := range []plotter.XYs{csvPts, every} {
		for _, pt := range pts {
			lo, hi = min(lo, pt.Y), max(hi, pt.Y)
		}
	}
	p.Title.Text = "residual per " + unit
	if run.Solver != "" {
		p.Title.Text = run.Solver + ": " + p.Title.Text
	}
	if lo > hi {
		p.Title.Text += " (no positive residual yet)"
		lo, hi = 1e-16, 1
	}
	p.Y.Min, p.Y.Max = math.Pow10(decade(lo, false)), math.Pow10(decade(hi, true))
	if p.Y.Min == p.Y.Max {
		p.Y.Min /= 10
		p.Y.Max *= 10
	}
	f := run.Factor
	if !(f > 0) || math.IsInf(f, 0) {
		pts := csvPts
		if len(every) > len(csvPts) {
			pts = every
		}
		f = MeanFactor(pts)
	}
	if f > 0 {
		p.Title.Text += fmt.Sprintf("\nmean convergence factor %.4g per %s", f, unit)
	}
	return p, nil
}

// MeanFactor is the geometric mean of the residual's reduction per
// iteration from the first point to the last, (r_last/r_first)^(1/(n_last
// − n_first)) with n the iteration: the product of the ratios between
// consecutive iterations, which the points need not all show. 0 with fewer
// than two iterations.
func MeanFactor(pts plotter.XYs) float64 {
	if len(pts) < 2 {
		return 0
	}
	a, b := pts[0], pts[len(pts)-1]
	if !(b.X > a.X) {
		return 0
	}
	return math.Pow(b.Y/a.Y, 1/(b.X-a.X))
}

// residuals are the rows' positive finite residuals over the step.
func residuals(rows []Row) plotter.XYs {
	var pts plotter.XYs
	for _, r := range rows {
		if r.Residual > 0 && !math.IsInf(r.Residual, 0) {
			pts = append(pts, plotter.XY{X: float64(r.Step), Y: r.Residual})
		}
	}
	return pts
}

// finite are the points (x(r), y(r)) of the rows where both are finite.
func finite(rows []Row, x, y func(Row) float64) plotter.XYs {
	var pts plotter.XYs
	for _, r := range rows {
		X, Y := x(r), y(r)
		if !math.IsNaN(X) && !math.IsInf(X, 0) && !math.IsNaN(Y) && !math.IsInf(Y, 0) {
			pts = append(pts, plotter.XY{X: X, Y: Y})
		}
	}
	return pts
}

// addLine draws pts as a line in colour k, in the legend as name (none
// when ""); a single point gets a mark too, so it shows. No points, no
// line.
func addLine(p *plot.Plot, name string, k int, pts plotter.XYs) error {
	thumbs, err := drawLine(p, k, pts)
	if err == nil && name != "" && thumbs != nil {
		p.Legend.Add(name, thumbs...)
	}
	return err
}

// drawLine draws pts as a line in colour k (past the palette's colours,
// the same colours dashed), a single point with a mark too, and returns
// what stands for it in a legend; nil for no points.
func drawLine(p *plot.Plot, k int, pts plotter.XYs) ([]plot.Thumbnailer, error) {
	if len(pts) == 0 {
		return nil, nil
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	line.Color = plotutil.Color(k)
	line.Dashes = plotutil.Dashes(k / len(plotutil.DefaultColors))
	line.Width = vg.Points(1.5)
	p.Add(line)
	thumbs := []plot.Thumbnailer{line}
	if len(pts) == 1 {
		marks, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		marks.Color = line.Color
		p.Add(marks)
		thumbs = append(thumbs, marks)
	}
	return thumbs, nil
}
