package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"heat/checkpoint"
	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
	"heat/io/heatmap"
	"heat/run"
)

func renderCommand() *cobra.Command {
	var o renderOptions
	cmd := &cobra.Command{
		Use:   "render PATH",
		Short: "draw a checkpoint's field (a plane of it in 3D) as a PNG",
		Long: `Draws the field of a checkpoint as a PNG heatmap, without running anything. PATH is a
run's output folder, its checkpoints folder or latest file, or one checkpoint
(step-NNNNNNNN). Fields larger than --size pixels a side are box-averaged.`,
		Example: `  heat render heat-out -o field.png
  heat render heat-out/checkpoints/step-00000500 --slice y=0.25 --cmap inferno`,
		Args: cobra.ExactArgs(1),
		RunE: body(func(cmd *cobra.Command, args []string) error {
			return render(args[0], o, cmd.OutOrStdout())
		}),
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.out, "output", "o", "", "PNG `FILE` to write (default: <checkpoint>.png beside the checkpoint)")
	fs.StringVar(&o.cmap, "cmap", heatmap.DefaultCmap, "colour map: "+strings.Join(heatmap.Cmaps(), ", "))
	fs.StringVar(&o.slice, "slice", heatmap.DefaultSlice, "plane of a 3D field: z=mid, y=10, x=0.25")
	fs.Float64SliceVar(&o.rng, "range", nil, "fixed colour range min,max (default: the data's)")
	fs.IntVar(&o.size, "size", heatmap.DefaultMaxPixels, "longest side of the field in pixels (larger fields are downsampled)")
	return cmd
}

type renderOptions struct {
	out, cmap, slice string
	rng              []float64
	size             int
}

// render draws checkpoint arg as a PNG.
func render(arg string, o renderOptions, stdout io.Writer) error {
	if len(o.rng) != 0 && (len(o.rng) != 2 || !(o.rng[0] < o.rng[1])) {
		return usagef("render: --range must be min,max with min < max (got %v)", o.rng)
	}
	if _, err := heatmap.Colormap(o.cmap); err != nil {
		return run.UsageError{Err: err}
	}
	path, err := run.CheckpointPath(arg)
	if err != nil {
		return run.UsageError{Err: fmt.Errorf("render: %w", err)}
	}
	ck, err := checkpoint.Open(path)
	if err != nil {
		return run.UsageError{Err: fmt.Errorf("render: %w", err)}
	}
	shape := ck.Shape()
	field := make([]float64, 1)
	err = local.Run(1, func(c comm.Comm) error {
		g, err := decomp.New(shape, 1, nil, nil)
		if err != nil {
			return err
		}
		lay := decomp.NewLayout(g.Box(0), 0)
		field = make([]float64, lay.Len())
		return checkpoint.Read(c, ck, g, lay, field, checkpoint.Options{Workers: 2})
	})
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	plane, ny, nx, label, err := heatmap.Slice(field, shape, o.slice)
	if err != nil {
		return run.UsageError{Err: err}
	}
	m := ck.Meta()
	title := fmt.Sprintf("step %d  t = %.4g", m.Step, m.Time)
	if label != "" {
		title += "  " + label
	}
	opt := heatmap.Options{Cmap: o.cmap, MaxPixels: o.size, Title: title}
	if len(o.rng) == 2 {
		opt.Min, opt.Max, opt.Fixed = o.rng[0], o.rng[1], true
	}
	if o.out == "" {
		o.out = ck.Path() + ".png"
	}
	if err := heatmap.Write(o.out, plane, ny, nx, opt); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s of %s at step %d\n", o.out, planeName(label), decomp.FormatDims(shape), m.Step)
	return nil
}

func planeName(label string) string {
	if label == "" {
		return "the field"
	}
	return "plane " + label
}
