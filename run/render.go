package run

import (
	"fmt"

	"heat/checkpoint"
	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
	"heat/io/heatmap"
)

// RenderOptions are heat render's: the PNG to write (default beside the
// checkpoint), colour map, plane of a 3D field, fixed colour range (nil:
// the data's) and the longest side in pixels.
type RenderOptions struct {
	Out, Cmap, Slice string
	Range            []float64
	Size             int
}

// Render draws the field of the checkpoint arg names (CheckpointPath) as a
// PNG, box-averaged to at most o.Size pixels a side by the same routine as
// a run's snapshots (finite cells only; a pixel of none is NaN, grey), and
// says what it drew.
func Render(arg string, o RenderOptions) (string, error) {
	if len(o.Range) != 0 && (len(o.Range) != 2 || !(o.Range[0] < o.Range[1])) {
		return "", Usagef("render: --range must be min,max with min < max (got %v)", o.Range)
	}
	if _, err := heatmap.Colormap(o.Cmap); err != nil {
		return "", UsageError{err}
	}
	path, err := CheckpointPath(arg)
	if err != nil {
		return "", UsageError{fmt.Errorf("render: %w", err)}
	}
	ck, err := checkpoint.Open(path)
	if err != nil {
		return "", UsageError{fmt.Errorf("render: %w", err)}
	}
	shape := ck.Shape()
	if len(shape) == 3 {
		if _, _, _, err := heatmap.ParseSlice(o.Slice, shape); err != nil {
			return "", UsageError{err}
		}
	}
	var (
		plane  []float64
		ny, nx int
		label  string
		lo, hi float64
	)
	err = local.Run(1, func(c comm.Comm) error {
		g, err := decomp.New(shape, 1, nil, nil)
		if err != nil {
			return err
		}
		lay := decomp.NewLayout(g.Box(0), 0)
		field := make([]float64, lay.Len())
		if err := checkpoint.Read(c, ck, g, lay, field, checkpoint.Options{Workers: 2}); err != nil {
			return err
		}
		plane, ny, nx, label, lo, hi, err = coarsePlane(c, fieldView{grid: g, lay: lay, u: field, threads: 2}, o.Slice, o.Size, new(planeBufs))
		return err
	})
	if err != nil {
		return "", fmt.Errorf("render: %w", err)
	}
	m := ck.Meta()
	title := fmt.Sprintf("step %d  t = %.4g", m.Step, m.Time)
	if label != "" {
		title += "  " + label
	}
	opt := heatmap.Options{Cmap: o.Cmap, MaxPixels: o.Size, Title: title, Min: lo, Max: hi}
	if len(o.Range) == 2 {
		opt.Min, opt.Max, opt.Fixed = o.Range[0], o.Range[1], true
	}
	if o.Out == "" {
		o.Out = ck.Path() + ".png"
	}
	if err := heatmap.Write(o.Out, plane, ny, nx, opt); err != nil {
		return "", err
	}
	what := "the field"
	if label != "" {
		what = "plane " + label
	}
	return fmt.Sprintf("%s: %s of %s at step %d", o.Out, what, decomp.FormatDims(shape), m.Step), nil
}
