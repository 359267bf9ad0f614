package runplot

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"heat/internal/atomicfile"
)

// ProbeFile is the plot of probes.csv: each probe's value over time.
const ProbeFile = "probes.png"

// Probes are the rows of probes.csv: the probes' names (the columns after
// step and time) and, per row, the step, the simulated time and each
// probe's value.
type Probes struct {
	Names []string
	Rows  []ProbeRow
}

// ProbeRow is one row of probes.csv.
type ProbeRow struct {
	Step   int
	Time   float64
	Values []float64 // one per name
}

// ReadProbes parses the probes file at path (ParseProbes).
func ReadProbes(path string) (*Probes, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseProbes(f, path)
}

// ParseProbes reads probes.csv from r: the header step,time,<name>…, then
// rows of as many fields. Its errors start with name (the file) and the
// line. A restart's rows replace those the stopped run wrote from their
// step on, as Parse does for diagnostics.csv; non-finite values are kept
// (the plot leaves them out).
func ParseProbes(r io.Reader, name string) (*Probes, error) {
	p := &Probes{}
	err := readRecords(r, name, "step,time,<probe>…", func(head []string) error {
		if len(head) < 3 || head[0] != "step" || head[1] != "time" {
			return fmt.Errorf("%s:1: header %q is not probes.csv's step,time,<probe>…", name, strings.Join(head, ","))
		}
		p.Names = head[2:]
		return nil
	}, func(step int, nums []float64) {
		p.Rows = inStepOrder(p.Rows, ProbeRow{Step: step, Time: nums[0], Values: nums[1:]}, func(r ProbeRow) int { return r.Step })
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// ProbePlot is the plot of the probes: a line a probe of its value
// against the simulated time, or against the step where the time does not
// advance (a Poisson run's iterations), the y axis named run.Label (the
// field's name, output.label). The legend comes apart, to be drawn beside
// the data (WriteProbes), never over it. Non-finite values are left out.
func ProbePlot(p *Probes, run Run) (*plot.Plot, plot.Legend, error) {
	leg := plot.NewLegend()
	if len(p.Rows) == 0 {
		return nil, leg, fmt.Errorf("no rows to plot")
	}
	rows := p.Rows
	scale, unit := 1.0, run.TimeUnit
	if from, to := Seconds[run.TimeUnit], Seconds[run.ProbeTime]; from > 0 && to > 0 {
		scale, unit = from/to, run.ProbeTime
	}
	xOf, xLabel := func(r ProbeRow) float64 { return r.Time * scale }, timeAxis(unit)
	if rows[len(rows)-1].Time <= rows[0].Time {
		xOf, xLabel = func(r ProbeRow) float64 { return float64(r.Step) }, "step"
		if run.Equation == "poisson" {
			xLabel = "iteration"
		}
	}
	pl := plot.New()
	what := "probes"
	if run.Label != "" {
		what = run.Label + " at the probes"
	}
	pl.Title.Text = fmt.Sprintf("%s (steps %d–%d)", what, rows[0].Step, rows[len(rows)-1].Step)
	pl.X.Label.Text = xLabel
	pl.Y.Label.Text = run.Label
	pl.X.Tick.Marker, pl.Y.Tick.Marker = distinctTicks{}, distinctTicks{}
	if run.ProbeLog {
		pl.Y.Scale, pl.Y.Tick.Marker = plot.LogScale{}, LogTicks{}
		lo, hi := math.Inf(1), 0.0
		for _, r := range rows {
			for _, v := range r.Values {
				if v > 0 && !math.IsInf(v, 1) {
					lo, hi = min(lo, v), max(hi, v)
				}
			}
		}
		if hi < 10*lo {
			pl.Y.Tick.Marker = distinctTicks{} // within a decade: round values, not decades
		}
	}
	for k, name := range p.Names {
		var pts plotter.XYs
		for _, r := range rows {
			x, y := xOf(r), r.Values[k]
			if !math.IsNaN(x) && !math.IsInf(x, 0) && !math.IsNaN(y) && !math.IsInf(y, 0) && (!run.ProbeLog || y > 0) {
				pts = append(pts, plotter.XY{X: x, Y: y})
			}
		}
		thumbs, err := drawLine(pl, k, pts)
		if err != nil {
			return nil, leg, err
		}
		if thumbs != nil {
			leg.Add(name, thumbs...)
		}
	}
	leg.Top, leg.Left = true, true
	return pl, leg, nil
}

// WriteProbes draws the probes' plot into dir (created when missing) as
// ProbeFile and returns its path (saveBeside: the legend to the data's
// right).
func WriteProbes(dir string, p *Probes, run Run) (string, error) {
	pl, leg, err := ProbePlot(p, run)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, ProbeFile)
	return path, saveBeside(path, pl, leg)
}

// saveBeside writes pl as a PNG at path: the data 7 by 4.5 inches, the
// legend to its right, the picture widened (and made taller) as far as the
// legend needs, so it is never cut off and never covers a line.
func saveBeside(path string, pl *plot.Plot, leg plot.Legend) error {
	const w, h = 7 * vg.Inch, 4.5 * vg.Inch
	pad := 4 * vg.Millimeter
	r := leg.Rectangle(draw.Canvas{})
	lw, lh := r.Max.X-r.Min.X, r.Max.Y-r.Min.Y
	top := pad + pl.Title.TextStyle.Rectangle(pl.Title.Text).Max.Y + pl.Title.Padding
	c, err := draw.NewFormattedCanvas(w+lw+2*pad, max(h, top+lh+pad), "png")
	if err != nil {
		return err
	}
	dc := draw.New(c)
	pl.Draw(draw.Crop(dc, 0, -(lw + 2*pad), 0, 0))
	leg.Draw(draw.Crop(dc, w+pad, -pad, 0, -top))
	return atomicfile.Write(path, func(out io.Writer) error { _, err := c.WriteTo(out); return err })
}
