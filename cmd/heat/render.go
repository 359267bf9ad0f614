package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"heat/io/heatmap"
	"heat/run"
)

func renderCommand() *cobra.Command {
	var o run.RenderOptions
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
			msg, err := run.Render(args[0], o)
			if err == nil {
				fmt.Fprintln(cmd.OutOrStdout(), msg)
			}
			return err
		}),
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.Out, "output", "o", "", "PNG `FILE` to write (default: <checkpoint>.png beside the checkpoint)")
	fs.StringVar(&o.Cmap, "cmap", heatmap.DefaultCmap, "colour map: "+strings.Join(heatmap.Cmaps(), ", "))
	fs.StringVar(&o.Slice, "slice", heatmap.DefaultSlice, "plane of a 3D field: z=mid, y=10, x=0.25")
	fs.Float64SliceVar(&o.Range, "range", nil, "fixed colour range min,max (default: the data's)")
	fs.IntVar(&o.Size, "size", heatmap.DefaultMaxPixels, "longest side of the field in pixels (larger fields are downsampled)")
	return cmd
}
