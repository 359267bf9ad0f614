package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"heat/run"
)

func plotCommand() *cobra.Command {
	var o run.PlotOptions
	cmd := &cobra.Command{
		Use:   "plot OUT",
		Short: "draw a run's diagnostics.csv and probes.csv as PNG plots (in OUT/plots)",
		Long: `Draws the diagnostics.csv and probes.csv of the run whose output folder is OUT (or the
one CSV given) as PNG plots in OUT/plots, without running anything:

  field.png     heat: min, max and mean of u over time, and the total heat ∫u dV
                (as its drift from the first row's)
  residual.png  poisson: the residual per iteration (Jacobi sweep or multigrid
                cycle) on a logarithmic axis, with the mean convergence factor
  probes.png    each [[output.probe]]'s value over time (poisson: per iteration),
                its axis named by output.label, the legend beside the data

The run's report.json beside the CSV tells which; without one (a run still going,
or killed) both are drawn. Rows with NaN or Inf (a diverged run) are left out of
the lines. heat run draws the same plots at its end when snapshots are on
(output.snapshot_every > 0, output.formats not empty). A missing OUT or CSV, or a
malformed CSV or report.json, exits 2 naming the file (and the line).`,
		Example: `  heat plot heat-out
  heat plot poisson-out -o figures`,
		Args: cobra.ExactArgs(1),
		RunE: body(func(cmd *cobra.Command, args []string) error {
			msg, err := run.Plot(args[0], o)
			if err == nil {
				fmt.Fprintln(cmd.OutOrStdout(), msg)
			}
			return err
		}),
	}
	cmd.Flags().StringVarP(&o.Out, "output", "o", "", "`DIR` to write the plots to (default: OUT/plots)")
	return cmd
}
