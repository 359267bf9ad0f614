package run

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"heat/checkpoint"
	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
	"heat/field"
	"heat/io/config"
	"heat/io/heatmap"
	"heat/io/runplot"
)

// LineOptions are heat render --line's: the file to write (.png, .svg or
// .pdf; "" is beside the checkpoint), the line, and in 3D the plane the
// line lies in (--slice) when the line fixes one axis only.
type LineOptions struct {
	Out, Line, Slice string
}

// lineOut is the field of a checkpoint along one line of cells.
type lineOut struct {
	Along int    // the axis the line runs along
	Name  string // that axis's name: z, y or x
	Where string // the fixed coordinates, e.g. "y = 0.508 (row 32)"
	Label string // the same for a file name, e.g. "y32"
	Shape []int
	// X are the cell centres along the line in physical coordinates, U the
	// field there; Exact the exact solution at the same cells (nil when
	// the problem has none).
	X, U, Exact []float64
	Step        int
	Time        float64
	Equation    string
	// Label names the field on the y axis (output.label, "u" when none);
	// Units the units the axes write.
	FieldLabel string
	Units      config.Units
}

// MaxError is max |U − Exact| over the line's finite cells (NaN when the
// problem has no exact solution).
func (l *lineOut) MaxError() float64 {
	if l.Exact == nil {
		return math.NaN()
	}
	e := 0.0
	for i, u := range l.U {
		e = max(e, math.Abs(u-l.Exact[i]))
	}
	return e
}

// RenderLine plots the field of the checkpoint arg names (CheckpointPath)
// along the line o.Line names, against the exact solution where the
// problem has one (run/spec.go: exactOf), and says what it wrote.
//
// o.Line is AXIS=AT: the line y=AT runs along x (in 3D, in the plane
// o.Slice names; z=mid by default), x=AT along y. AT has the forms of
// --slice: mid, a cell index, or a fraction of the domain length (with a
// '.': 0.5) from 0 to 1. In 3D the line may name both fixed axes
// instead: y=0.5,z=0.25 runs along x, whatever o.Slice says.
func RenderLine(arg string, o LineOptions) (string, error) {
	if err := checkImageFile(o.Out); err != nil {
		return "", err
	}
	ck, err := openCheckpoint(arg)
	if err != nil {
		return "", err
	}
	l, err := readLine(ck, o.Line, o.Slice)
	if err != nil {
		return "", err
	}
	p, err := linePlot(l)
	if err != nil {
		return "", fmt.Errorf("render: %w", err)
	}
	if o.Out == "" {
		o.Out = ck.Path() + "-line-" + l.Label + ".png"
	}
	if err := runplot.Save(p, o.Out, 7*vg.Inch, 4.5*vg.Inch); err != nil {
		return "", fmt.Errorf("render: %w", err)
	}
	msg := fmt.Sprintf("%s: u along %s at %s of %s at step %d", o.Out, l.Name, l.Where, decomp.FormatDims(l.Shape), l.Step)
	if l.Exact != nil {
		msg += fmt.Sprintf("; max |u − exact| %.3g", l.MaxError())
	}
	return msg, nil
}

// readLine reads checkpoint ck's field (on one in-process rank) and cuts
// the line spec (and, in 3D, slice) names out of it, with the exact
// solution at its cells where one is known.
func readLine(ck *checkpoint.Checkpoint, spec, slice string) (*lineOut, error) {
	shape := ck.Shape()
	along, fixed, err := parseLine(spec, slice, shape)
	if err != nil {
		return nil, UsageError{fmt.Errorf("render: %w", err)}
	}
	cfg, err := configOf(ck.Meta())
	if err != nil {
		return nil, fmt.Errorf("render: %s: %w", ck.Path(), err)
	}
	nd := len(shape)
	geo := field.Geometry{Shape: shape, Length: cfg.Grid.Length}
	if len(geo.Length) != nd {
		geo.Length = nil // 1 per axis: the default of a checkpoint that does not record it
	}
	var whole fieldView
	err = local.Run(1, func(c comm.Comm) (err error) {
		whole, err = readWhole(c, ck)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	m := ck.Meta()
	l := &lineOut{Along: along, Name: decomp.AxisName(nd, along), Shape: shape, Step: m.Step, Time: m.Time, Equation: cfg.Equation.Kind,
		FieldLabel: cfg.Output.Label, Units: cfg.Output.Units}
	exact := exactOf(cfg, m.Time)
	var where, label []string
	for a := range nd {
		if a != along {
			where = append(where, fmt.Sprintf("%s = %.4g (cell %d)", decomp.AxisName(nd, a), geo.Centre(a, fixed[a]), fixed[a]))
			label = append(label, fmt.Sprintf("%s%d", decomp.AxisName(nd, a), fixed[a]))
		}
	}
	l.Where, l.Label = strings.Join(where, ", "), strings.Join(label, "-")
	idx := slices.Clone(fixed)
	x := make([]float64, nd)
	n := shape[along]
	l.X, l.U = make([]float64, n), make([]float64, n)
	if exact != nil {
		l.Exact = make([]float64, n)
	}
	for i := range n {
		idx[along] = i
		for a := range nd {
			x[a] = geo.CentreScaled(a, idx[a])
		}
		l.X[i], l.U[i] = x[along], whole.Data[whole.Index(idx...)]
		if exact != nil {
			l.Exact[i] = exact(x, idx)
		}
	}
	return l, nil
}

// parseLine resolves a --line spec (and in 3D the --slice plane, when the
// line fixes one axis) against shape: the axis the line runs along, and
// the cell index on every other axis (fixed[along] is unused).
func parseLine(spec, slice string, shape []int) (along int, fixed []int, err error) {
	nd := len(shape)
	fixed = make([]int, nd)
	set := make([]bool, nd)
	parts := strings.Split(spec, ",")
	if len(parts) > nd-1 {
		return 0, nil, fmt.Errorf("--line %q: a line of a %dD field fixes %d axis(es), not %d", spec, nd, nd-1, len(parts))
	}
	for _, part := range parts {
		a, i, err := heatmap.ParseCoord(part, shape)
		if err != nil {
			return 0, nil, fmt.Errorf("--line %q: %w", spec, err)
		}
		if set[a] {
			return 0, nil, fmt.Errorf("--line %q: %s is given twice", spec, decomp.AxisName(nd, a))
		}
		fixed[a], set[a] = i, true
	}
	if nd == 3 && len(parts) == 1 {
		if strings.TrimSpace(slice) == "" {
			slice = "z=mid"
		}
		a, i, err := heatmap.ParseCoord(slice, shape)
		if err != nil {
			return 0, nil, fmt.Errorf("--slice %q: %w", slice, err)
		}
		if set[a] {
			return 0, nil, fmt.Errorf("--line %q and --slice %q fix the same axis: name the line's second axis, e.g. --line %s,%s=mid",
				spec, slice, strings.TrimSpace(spec), decomp.AxisName(nd, (a+1)%nd))
		}
		fixed[a], set[a] = i, true
	}
	along = slices.Index(set, false)
	return along, fixed, nil
}

// linePlot draws a line-out: the field at the cell centres (marked while
// they are few enough to tell apart) and the exact solution beside it
// where there is one. Cells that are not finite are left out.
func linePlot(l *lineOut) (*plot.Plot, error) {
	p := plot.New()
	when := fmt.Sprintf("step %d, t = %.4g", l.Step, l.Time)
	if l.Units.Time != "" {
		when += " " + l.Units.Time
	}
	if l.Equation == config.Poisson {
		when = fmt.Sprintf("iteration %d", l.Step)
	}
	name := l.FieldLabel
	if name == "" {
		name = "u"
	}
	p.Title.Text = fmt.Sprintf("%s along %s at %s; %s", name, l.Name, l.Where, when)
	if l.Exact != nil {
		p.Title.Text += fmt.Sprintf("\nmax |u − exact| = %.3g", l.MaxError())
	}
	p.X.Label.Text = config.WithUnit(l.Name, l.Units.Length)
	p.Y.Label.Text = fieldAxis(l.FieldLabel, l.Units.Field)
	p.Legend.Top = true
	p.X.Min, p.X.Max = 0, l.X[len(l.X)-1]+l.X[0] // the domain: the centres are half a cell in
	lo, hi := math.Inf(1), math.Inf(-1)
	pts := func(y []float64) plotter.XYs {
		var xy plotter.XYs
		for i, v := range y {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				xy = append(xy, plotter.XY{X: l.X[i], Y: v})
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		return xy
	}
	if u := pts(l.U); len(u) > 0 {
		line, err := plotter.NewLine(u)
		if err != nil {
			return nil, err
		}
		line.Color = plotutil.Color(0)
		p.Add(line)
		thumbs := []plot.Thumbnailer{line}
		if len(u) <= 128 {
			marks, err := plotter.NewScatter(u)
			if err != nil {
				return nil, err
			}
			marks.Color = line.Color
			marks.Shape = plotutil.Shape(0)
			marks.Radius = vg.Points(2)
			p.Add(marks)
			thumbs = append(thumbs, marks)
		}
		p.Legend.Add("numerical", thumbs...)
	}
	// The exact solution over the numerical one, dashed, so it shows
	// where they agree.
	if e := pts(l.Exact); len(e) > 0 {
		line, err := plotter.NewLine(e)
		if err != nil {
			return nil, err
		}
		line.Color = plotutil.Color(1)
		line.Dashes = plotutil.Dashes(1)
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add("exact", line)
	}
	if lo <= hi {
		// Room above the lines for the legend.
		r := max(hi-lo, math.Abs(hi)*1e-3, 1e-300)
		p.Y.Min, p.Y.Max = lo-0.05*r, hi+0.25*r
	}
	return p, nil
}

// fieldAxis names the field on an axis: output.label ("u" when "") with
// the field's unit, unless the label says one already ("T (K)").
func fieldAxis(label, unit string) string {
	if label == "" {
		label = "u"
	}
	if strings.HasSuffix(label, ")") {
		return label
	}
	return config.WithUnit(label, unit)
}
