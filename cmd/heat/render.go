package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"heat/checkpoint"
	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
	"heat/io/heatmap"
	"heat/run"
)

// renderCmd draws a PNG of a checkpoint (a plane of it in 3D) without
// running anything.
func renderCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("heat render", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.StringP("output", "o", "", "PNG file to write (default: <checkpoint>.png beside the checkpoint)")
	cmap := fs.String("cmap", heatmap.DefaultCmap, "colour map: viridis, inferno, coolwarm")
	slice := fs.String("slice", heatmap.DefaultSlice, "plane of a 3D field: z=mid, y=10, x=0.25")
	rng := fs.Float64Slice("range", nil, "fixed colour range min,max (default: the data's)")
	size := fs.Int("size", heatmap.DefaultMaxPixels, "longest side of the field in pixels (larger fields are downsampled)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: heat render PATH [-o FILE.png] [flags]\n\nPATH is a checkpoint (step-NNNNNNNN), a checkpoint directory or its `latest` file.\n\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return run.UsageError{Err: err}
	}
	if fs.NArg() != 1 {
		return usagef("render: need one checkpoint path, got %d arguments", fs.NArg())
	}
	if len(*rng) != 0 && (len(*rng) != 2 || !((*rng)[0] < (*rng)[1])) {
		return usagef("render: --range must be min,max with min < max (got %v)", *rng)
	}
	if _, err := heatmap.Colormap(*cmap); err != nil {
		return run.UsageError{Err: err}
	}
	path, err := checkpointPath(fs.Arg(0))
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
	plane, ny, nx, label, err := heatmap.Slice(field, shape, *slice)
	if err != nil {
		return run.UsageError{Err: err}
	}
	m := ck.Meta()
	title := fmt.Sprintf("step %d  t = %.4g", m.Step, m.Time)
	if label != "" {
		title += "  " + label
	}
	opt := heatmap.Options{Cmap: *cmap, MaxPixels: *size, Title: title}
	if len(*rng) == 2 {
		opt.Min, opt.Max, opt.Fixed = (*rng)[0], (*rng)[1], true
	}
	if *out == "" {
		*out = ck.Path() + ".png"
	}
	if err := heatmap.Write(*out, plane, ny, nx, opt); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s of %s at step %d\n", *out, planeName(label), decomp.FormatDims(shape), m.Step)
	return nil
}

func planeName(label string) string {
	if label == "" {
		return "the field"
	}
	return "plane " + label
}
