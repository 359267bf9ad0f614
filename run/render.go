package run

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"heat/checkpoint"
	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
	"heat/field"
	"heat/io/config"
	"heat/io/heatmap"
	"heat/io/report"
)

// RenderOptions are heat render's: the image to write (.png, .svg or .pdf;
// default <checkpoint>.png beside the checkpoint, <checkpoint>-<field>.png
// for a field other than u), colour map ("": the run's output.cmap), plane
// of a 3D field ("": the run's output.slice), fixed colour range (nil: the
// data's), the longest side in pixels (0: the run's output.image_size) and
// the field to draw (RenderFields; "": u).
type RenderOptions struct {
	Out, Cmap, Slice string
	Range            []float64
	Size             int
	Field            string
}

// RenderFields are the fields heat render draws: the solution u and, of a
// run in media, its conductivity k, heat capacity rho_c and the mask of
// held cells (checkpoint.MediaArrays).
var RenderFields = append([]string{"u"}, checkpoint.MediaArrays...)

// logDecades is how many decades a field's positive values must span for
// its picture to be coloured by log10 (k of rock and copper: 6).
const logDecades = 3

// Render draws the field of the checkpoint arg names (CheckpointPath) as an
// image, box-averaged to at most o.Size pixels a side by the same routine
// as a run's snapshots and drawn by the same one (drawPlane), and says what
// it drew. o.Field picks one of the media instead of u.
func Render(arg string, o RenderOptions) (string, error) {
	if err := checkDrawing("render", o.Range, o.Cmap, o.Size); err != nil {
		return "", err
	}
	if err := checkImageFile(o.Out); err != nil {
		return "", err
	}
	ck, err := openCheckpoint(arg)
	if err != nil {
		return "", err
	}
	name := o.Field
	if name == "" {
		name = "u"
	}
	switch {
	case !slices.Contains(RenderFields, name):
		return "", Usagef("render: --field %s: not a field heat draws (%s); checkpoint %s holds %s", name, strings.Join(RenderFields, ", "), ck.Path(), strings.Join(ck.Arrays(), ", "))
	case !ck.Has(name):
		return "", Usagef("render: --field %s: checkpoint %s holds no %s (it holds %s)", name, ck.Path(), name, strings.Join(ck.Arrays(), ", "))
	}
	pic, err := renderPicture(ck, name, o)
	if err != nil {
		return "", err
	}
	if o.Out == "" {
		o.Out = ck.Path() + ".png"
		if name != "u" {
			o.Out = ck.Path() + "-" + name + ".png"
		}
	}
	if err := drawPlane(o.Out, pic.plane, pic.ny, pic.nx, pic.p); err != nil {
		return "", err
	}
	what := "the field"
	if name != "u" {
		what = name
	}
	if pic.p.Plane != "" {
		what = "plane " + pic.p.Plane + " of " + what
	}
	if pic.logged {
		what += " (log scale)"
	}
	return fmt.Sprintf("%s: %s of %s at step %d", o.Out, what, decomp.FormatDims(ck.Shape()), ck.Meta().Step), nil
}

// picture is what Render draws: the plane, box-averaged (ny×nx values),
// its description, and whether the values are log10 of the field's.
type picture struct {
	plane  []float64
	ny, nx int
	p      *planeImage
	logged bool
}

// renderPicture is the picture of array name of ck (u, or one of the
// media) as o asks for it. In media the holes are masked whatever the
// field (NaN where a pixel holds nothing else); k and rho_c whose values
// (holes aside) are all positive and span more than logDecades decades are
// drawn as their log10, and a --range given for them is taken in their
// own units.
func renderPicture(ck *checkpoint.Checkpoint, name string, o RenderOptions) (*picture, error) {
	shape := ck.Shape()
	m := ck.Meta()
	cfg, err := configOf(m)
	if err != nil {
		return nil, fmt.Errorf("render: %s: %w", ck.Path(), err)
	}
	if o.Size == 0 {
		o.Size = cfg.Output.ImageSize
	}
	if o.Slice == "" {
		o.Slice = cfg.Output.Slice
	}
	if len(shape) == 3 {
		if _, _, _, err := heatmap.ParseSlice(o.Slice, shape); err != nil {
			return nil, UsageError{err}
		}
	}
	pic := &picture{}
	var lo, hi float64
	err = local.Run(1, func(c comm.Comm) error {
		fv, err := readWholeArray(c, ck, name)
		if err != nil {
			return err
		}
		if ck.Has("k") {
			// The holes are masked in every field's picture.
			if name == "k" {
				fv.holes = slices.Clone(fv.Data)
			} else {
				k, err := readWholeArray(c, ck, "k")
				if err != nil {
					return err
				}
				fv.holes = k.Data
			}
		}
		if (name == "k" || name == "rho_c") && spansDecades(fv.Data, fv.holes) {
			pic.logged = true
			for i, v := range fv.Data {
				if fv.holes == nil || fv.holes[i] != 0 {
					fv.Data[i] = math.Log10(v)
				}
			}
		}
		pic.plane, pic.ny, pic.nx, _, lo, hi, err = coarsePlane(c, fv, o.Slice, o.Size, new(planeBufs))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	kind := cfg.Equation.Kind
	if k, ok := m.Extra["equation"].(string); ok {
		kind = k
	}
	residual, ok := m.Extra["residual"].(float64)
	if !ok {
		residual = math.NaN()
	}
	p, err := newPlaneImage(cfg, shape, o.Slice, o.Size, kind, m.Step, m.Time, residual, lo, hi)
	if err != nil {
		return nil, UsageError{err}
	}
	if o.Cmap != "" {
		p.Cmap = o.Cmap
	}
	if name != "u" {
		// The run's output.range and output.label are u's.
		p.Range, p.Label = nil, name
		if pic.logged {
			p.Label = "log10 " + name
		}
	}
	if len(o.Range) == 2 {
		p.Range = o.Range
		if pic.logged {
			if !(o.Range[0] > 0) {
				return nil, Usagef("render: --range %g,%g: %s is drawn on a log scale (its values span more than %d decades), so the range must be positive", o.Range[0], o.Range[1], name, logDecades)
			}
			p.Range = []float64{math.Log10(o.Range[0]), math.Log10(o.Range[1])}
		}
	}
	if p.Regions, err = planeRegions(cfg, shape, o.Slice, p); err != nil {
		return nil, UsageError{err}
	}
	pic.p = p
	return pic, nil
}

// spansDecades says whether the values of v that are not holes (k = 0 in
// holes; nil: none) are all positive and finite and span more than
// logDecades decades: a field to colour by its log10.
func spansDecades(v, holes []float64) bool {
	lo, hi := math.Inf(1), 0.0
	for i, x := range v {
		if holes != nil && holes[i] == 0 {
			continue
		}
		if !(x > 0) || math.IsInf(x, 1) {
			return false
		}
		lo, hi = min(lo, x), max(hi, x)
	}
	return hi > 0 && hi/lo > math.Pow(10, logDecades)
}

// checkRange checks a fixed colour range given as flag: empty, or min,max
// with min < max, both finite.
// checkDrawing checks the drawing flags of heat render (what names the
// command in messages): the colour range, the colour map ("" = the run's)
// and the image size (0 = the run's).
func checkDrawing(what string, r []float64, cmap string, size int) error {
	if err := checkRange(what+": --range", r); err != nil {
		return err
	}
	if cmap != "" {
		if _, err := heatmap.Colormap(cmap); err != nil {
			return UsageError{fmt.Errorf("%s: --cmap: %w", what, err)}
		}
	}
	if size < 0 || (size > 0 && size < 16) {
		return Usagef("%s: --size must be at least 16 pixels (got %d)", what, size)
	}
	return nil
}

// checkImageFile checks that render -o names a format it writes (by its
// extension: .png, .svg or .pdf); "" is the default name.
func checkImageFile(out string) error {
	if out == "" {
		return nil
	}
	if _, err := heatmap.FormatOf(out); err != nil {
		return UsageError{fmt.Errorf("render: -o %w", err)}
	}
	return nil
}

// openCheckpoint opens the checkpoint arg names (CheckpointPath) for heat
// render; not finding or not opening it is a usage error.
func openCheckpoint(arg string) (*checkpoint.Checkpoint, error) {
	path, err := CheckpointPath(arg)
	if err != nil {
		return nil, UsageError{fmt.Errorf("render: %w", err)}
	}
	ck, err := checkpoint.Open(path)
	if err != nil {
		return nil, UsageError{fmt.Errorf("render: %w", err)}
	}
	return ck, nil
}

// readWhole reads the whole field of ck onto the one rank c, without ghost
// layers.
func readWhole(c comm.Comm, ck *checkpoint.Checkpoint) (fieldView, error) {
	return readWholeArray(c, ck, "u")
}

// readWholeArray is readWhole for array name of ck: the field u, or one of
// its media.
func readWholeArray(c comm.Comm, ck *checkpoint.Checkpoint, name string) (fieldView, error) {
	g, err := decomp.New(ck.Shape(), 1, nil, nil)
	if err != nil {
		return fieldView{}, err
	}
	f := field.New(decomp.NewLayout(g.Box(0), 0))
	if err := checkpoint.ReadArray(c, ck, name, g, f.Layout, f.Data, checkpoint.Options{Workers: 2}); err != nil {
		return fieldView{}, err
	}
	return fieldView{Field: f, grid: g, threads: 2}, nil
}

func checkRange(what string, r []float64) error {
	if len(r) != 0 && (len(r) != 2 || !(r[0] < r[1]) || math.IsInf(r[0], 0) || math.IsInf(r[1], 0)) {
		return Usagef("%s must be min,max with min < max, both finite (got %v)", what, r)
	}
	return nil
}

// configOf is the run's config a checkpoint keeps, over the defaults (so a
// checkpoint of an older heat, without the newer keys, reads too).
func configOf(m checkpoint.Meta) (*config.Config, error) {
	cfg := config.Default()
	if len(m.Config) > 0 && string(m.Config) != "null" {
		if err := json.Unmarshal(m.Config, cfg); err != nil {
			return nil, fmt.Errorf("its config does not read: %w", err)
		}
	}
	return cfg, nil
}

// planeImage is what a picture of a plane of the field shows besides the
// values: the one description snapshots, heat render and movies draw from
// (drawPlane), so the three title, label, scale and colour their pictures
// alike. A snapshot keeps it beside its plane (u-NNNNNNNN.json, next to the
// values in u-NNNNNNNN.npy), so a movie draws its frames as the snapshots
// were drawn.
type planeImage struct {
	Kind     string       `json:"kind"` // "heat" or "poisson": the title's words
	Step     int          `json:"step"`
	Time     report.Float `json:"time"`
	Residual report.Float `json:"residual"`
	Plane    string       `json:"plane,omitempty"`     // the cut of a 3D field, "z = 0.25"; "" in 2D
	TimeUnit string       `json:"time_unit,omitempty"` // output.units.time, after the title's time
	// Axes names the plane's column and row axes; Extent is its physical
	// width and height.
	Axes   [2]string  `json:"axes"`
	Extent [2]float64 `json:"extent"`
	// Cells is the plane's [rows, columns] of cells; each value drawn
	// averages Factor×Factor of them (fewer at the far edges).
	Cells  [2]int `json:"cells"`
	Factor int    `json:"factor"`
	// Min and Max are the plane's finite data range (±Inf where it has no
	// finite cell), the colour range unless Range fixes one.
	Min   report.Float `json:"min"`
	Max   report.Float `json:"max"`
	Range []float64    `json:"range,omitempty"`
	Cmap  string       `json:"cmap"`
	Label string       `json:"label"`
	Size  int          `json:"size"` // longest side of the field in pixels
	// Regions is the material of each drawn value (planeRegions), whose
	// edges the picture outlines; nil: none (no [[material]]).
	Regions []int32 `json:"-"`
}

// planeRegions is, for each value of p's plane (its Cells averaged by its
// Factor), the material the plane's middle cell of it lies in (media.Spec's
// Owner: its centre, in the cut of a 3D field); nil where cfg has no
// [[material]] or every value lies in the same one.
func planeRegions(cfg *config.Config, shape []int, spec string, p *planeImage) ([]int32, error) {
	m := cfg.Media()
	if len(m.Materials) == 0 {
		return nil, nil
	}
	nd := len(shape)
	py, px, cut, at, _, err := planeAxes(spec, shape)
	if err != nil {
		return nil, err
	}
	g := field.Geometry{Shape: shape, Length: cfg.Grid.Length}
	f := max(1, p.Factor)
	cy, cx := (p.Cells[0]+f-1)/f, (p.Cells[1]+f-1)/f
	x := make([]float64, nd)
	if cut >= 0 {
		x[cut] = g.Centre(cut, at)
	}
	out := make([]int32, cy*cx)
	one := true
	for J := range cy {
		x[py] = g.Centre(py, min(p.Cells[0]-1, J*f+f/2))
		for I := range cx {
			x[px] = g.Centre(px, min(p.Cells[1]-1, I*f+f/2))
			out[J*cx+I] = int32(m.Owner(x))
			one = one && out[J*cx+I] == out[0]
		}
	}
	if one {
		return nil, nil
	}
	return out, nil
}

// newPlaneImage describes the picture of the plane spec cuts (3D) from a
// field of cfg's grid: axes and extent from grid.length, colour map, label
// and fixed range from output.*, averaged to at most size pixels a side.
func newPlaneImage(cfg *config.Config, shape []int, spec string, size int, kind string, step int, t, residual, lo, hi float64) (*planeImage, error) {
	py, px, cut, at, _, err := planeAxes(spec, shape)
	if err != nil {
		return nil, err
	}
	plane := ""
	if cut >= 0 {
		// The plane by the coordinate of its cell centres, as the axes read.
		g := field.Geometry{Shape: shape, Length: cfg.Grid.Length}
		plane = fmt.Sprintf("%s = %s", decomp.AxisName(3, cut), heatmap.Shortest(roundTo(g.Centre(cut, at), 4)))
		if u := cfg.Output.Units.Length; u != "" {
			plane += " " + u
		}
	}
	length := cfg.Grid.Length
	if len(length) != len(shape) {
		length = make([]float64, len(shape))
		for a := range length {
			length[a] = 1
		}
	}
	nd := len(shape)
	p := &planeImage{
		Kind: kind, Step: step, Time: report.Float(t), Residual: report.Float(residual), Plane: plane,
		Axes: [2]string{config.WithUnit(decomp.AxisName(nd, px), cfg.Output.Units.Length),
			config.WithUnit(decomp.AxisName(nd, py), cfg.Output.Units.Length)},
		TimeUnit: cfg.Output.Units.Time,
		Extent:   [2]float64{length[px], length[py]},
		Cells:    [2]int{shape[py], shape[px]},
		Factor:   heatmap.Factor(shape[py], shape[px], size),
		Min:      report.Float(lo), Max: report.Float(hi),
		Cmap: cfg.Output.Cmap, Label: cfg.Output.Label, Size: size,
	}
	if p.Label != "" {
		p.Label = fieldAxis(p.Label, cfg.Output.Units.Field)
	}
	if r := cfg.Output.Range; len(r) == 2 {
		p.Range = r
	}
	return p, nil
}

// title is the picture's title: step and time (heat) or iteration and
// residual (poisson), and the plane of a 3D field.
func (p *planeImage) title() string {
	s := fmt.Sprintf("step %d  t = %.4g", p.Step, float64(p.Time))
	if p.TimeUnit != "" {
		s += " " + p.TimeUnit
	}
	if p.Kind == "poisson" {
		s = fmt.Sprintf("iteration %d  residual %.3g", p.Step, float64(p.Residual))
	}
	if p.Plane != "" {
		s += "  " + p.Plane
	}
	return s
}

// options are the heatmap options of the picture. The colour range is
// Range when fixed, else the data's (not the averaged pixels'), so a
// render and a snapshot of the same field colour alike.
func (p *planeImage) options() heatmap.Options {
	o := heatmap.Options{Cmap: p.Cmap, MaxPixels: p.Size, Title: p.title(), Label: p.Label,
		Width: p.Extent[0], Height: p.Extent[1], XLabel: p.Axes[0], YLabel: p.Axes[1],
		Factor: p.Factor, Cells: p.Cells, Regions: p.Regions}
	lo, hi := float64(p.Min), float64(p.Max)
	if len(p.Range) == 2 {
		lo, hi = p.Range[0], p.Range[1]
	}
	if lo < hi && !math.IsInf(lo, 0) && !math.IsInf(hi, 0) && (len(p.Range) == 2 || !heatmap.Flat(lo, hi)) {
		// Fixed: the range is already the data's (or the one asked for),
		// heatmap need not look for it again.
		o.Min, o.Max, o.Fixed = lo, hi, true
	}
	return o
}

// drawPlane draws the plane (ny×nx values, what coarsePlane returns) as p
// describes at path, in the format of its extension: the one drawing path
// of snapshots, heat render and (through p.options) movies.
func drawPlane(path string, plane []float64, ny, nx int, p *planeImage) error {
	return heatmap.Write(path, plane, ny, nx, p.options())
}

// roundTo is x to digits significant digits (a title's coordinate).
func roundTo(x float64, digits int) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', digits, 64), 64)
	return v
}
