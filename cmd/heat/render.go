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
	var line string
	var movie bool
	cmd := &cobra.Command{
		Use:   "render PATH",
		Short: "draw a checkpoint's field (a plane of it in 3D) as PNG, SVG or PDF, or a run's snapshots as a GIF movie",
		Long: `Draws the field of a checkpoint as a run's snapshots are drawn (physical axes, true
aspect ratio, labelled colour bar), without running anything; -o picks the
format by its extension: .png, .svg or .pdf. PATH is a run's output folder, its
checkpoints folder or latest file, or one checkpoint (step-NNNNNNNN). The field is
at least --size pixels on its long side: a smaller one enlarged, each cell a block
of whole pixels; one of twice as many cells or more box-averaged.

--field draws, of a run in heterogeneous media, its conductivity k, heat capacity
rho_c or the mask of held cells (1 where held) instead of u, as the checkpoint keeps
them. In media the holes (k = 0) are masked in every field's picture; k whose values
span more than 3 decades is coloured by log10 k.

With --movie, PATH is a run's output folder or its snapshots folder, and the
planes its image snapshots kept (u-NNNNNNNN.npy) become the frames of an
animated GIF, in step order, all in one colour range: --range, or the min and
max over every frame.`,
		Example: `  heat render heat-out -o field.png
  heat render heat-out/checkpoints/step-00000500 --slice y=0.25 --cmap inferno
  heat render heat-out --line y=0.5 -o line.png      # u along x at y = 0.5 against the exact solution
  heat render heat-out -o field.pdf                  # for a paper: vector axes and text
  heat render heat-out --field k                     # the conductivity of a run in media
  heat render --movie heat-out -o run.gif            # every snapshot, one colour range`,
		Args: cobra.ExactArgs(1),
		RunE: body(func(cmd *cobra.Command, args []string) error {
			if o.Field != "" && o.Field != "u" && (movie || line != "") {
				return run.Usagef("render: --field %s draws a checkpoint's picture; --movie and --line draw u", o.Field)
			}
			if movie {
				if line != "" {
					return run.Usagef("render: --movie and --line draw different things; give one")
				}
				msg, err := run.Movie(args[0], run.MovieOptions{Out: o.Out, Cmap: o.Cmap, Range: o.Range, Size: o.Size})
				if err == nil {
					fmt.Fprintln(cmd.OutOrStdout(), msg)
				}
				return err
			}
			if line != "" {
				msg, err := run.RenderLine(args[0], run.LineOptions{Out: o.Out, Line: line, Slice: o.Slice})
				if err == nil {
					fmt.Fprintln(cmd.OutOrStdout(), msg)
				}
				return err
			}
			msg, err := run.Render(args[0], o)
			if err == nil {
				fmt.Fprintln(cmd.OutOrStdout(), msg)
			}
			return err
		}),
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.Out, "output", "o", "", "`FILE` to write: .png, .svg or .pdf (default: <checkpoint>.png beside the checkpoint); with --movie a .gif (default: <snapshots>/u.gif)")
	fs.StringVar(&o.Cmap, "cmap", "", "colour map: "+strings.Join(heatmap.Cmaps(), ", ")+" (default: the run's output.cmap)")
	fs.StringVar(&o.Slice, "slice", "", "plane of a 3D field: z=mid, y=10, x=0.25 (default: the run's output.slice; z=mid for --line)")
	fs.Float64SliceVar(&o.Range, "range", nil, "fixed colour range min,max (default: the data's)")
	fs.IntVar(&o.Size, "size", 0, "least long side of the field in pixels; fields of twice as many cells or more are box-averaged (default: the run's output.image_size)")
	fs.BoolVar(&movie, "movie", false, "assemble the run's snapshots into an animated GIF instead")
	fs.StringVar(&o.Field, "field", "u", "field to draw: "+strings.Join(run.RenderFields, ", ")+" (the media of a run in heterogeneous media)")
	fs.StringVar(&line, "line", "", "plot u along a line instead, beside the exact solution where known (-o .png, .svg or .pdf): y=AT runs along x, x=AT along y, in 3D in the --slice plane or with both axes (y=0.5,z=mid); AT is mid, a cell index or a fraction from 0 to 1")
	return cmd
}
