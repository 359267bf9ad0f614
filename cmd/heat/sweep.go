package main

import (
	"os"

	"github.com/spf13/cobra"

	"heat/io/config"
	"heat/run"
)

func sweepCommand() *cobra.Command {
	var opt run.SweepOptions
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "a parameter study: one run per point of the values swept, one table",
		Long: `Runs the problem of -c FILE (or NAME, or the built-in default) once for every
combination of the swept keys' values, each in a folder of its own under --out
(point-0000, point-0001, …), and writes one table, <out>/sweep.csv: the point,
its folder, each swept key's value, the run's status and exit code, steps,
simulated time, wall time, the field's min, max, mean and sha256, the energy
balance's residual, and each probe's last value. The table is printed too.

A key is swept when --set gives it an array of values, --set boundary.x_hi.h=[5,25,100]
(a key that is an array itself, as grid.shape, takes an array of arrays:
--set 'grid.shape=[[64,64],[128,128]]'); the other --set and the flags are
every run's. Every point's config is checked before the first run; a point
that fails is recorded in the table, the study goes on, and heat exits 1.

--jobs N runs N points at once, each in this process on its own ranks and
threads (give --threads so that N × ranks × threads fits the cores); the table
is the same, in point order. --plot FIGURE draws a column of the table (steps,
sim_time, wall_s, min, max, mean, energy_residual, flux_held, flux_net, or
probe_NAME) against a swept key of numbers (--against KEY; the first swept key
by default) into <out>/sweep.png, a line for each combination of the other
keys' values; an axis spanning two decades or more is logarithmic.`,
		Example: `  heat sweep -c power-module-3d --set boundary.z_lo.h=[1000,2000,5000] --out runs/h-study
  heat sweep -c power-module-3d --set boundary.z_lo.h=[500,5000,50000] --plot probe_chip --jobs 2 --threads 1
  heat sweep -c poisson-2d --set 'grid.shape=[[64,64],[128,128],[256,256]]' --set equation.solver=[multigrid,mgcg]`,
		Args: cobra.NoArgs,
		RunE: body(func(cmd *cobra.Command, _ []string) error {
			rest, axes, err := run.SplitSweep(opt.Flags.Sets)
			if err != nil {
				return err
			}
			opt.Flags.Sets, opt.Axes = rest, axes
			opt.Stdout, opt.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			opt.Program, opt.Args = program(), os.Args
			return run.Sweep(cmd.Context(), opt)
		}),
	}
	fs := cmd.Flags()
	opt.Flags = config.AddFlags(fs)
	fs.IntVarP(&opt.Jobs, "jobs", "j", 1, "points run at once (each on its own ranks and threads)")
	fs.StringVar(&opt.Plot, "plot", "", "draw this column of the table against a swept key into <out>/sweep.png")
	fs.StringVar(&opt.Against, "against", "", "the swept key --plot draws against (default: the first swept key)")
	fs.BoolVar(&opt.Overwrite, "overwrite", false, "replace an earlier study's table and its points' results in --out")
	fs.BoolVarP(&opt.Quiet, "quiet", "q", false, "print no progress and no table, only errors")
	return cmd
}
