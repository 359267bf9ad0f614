package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"heat/io/config"
	"heat/run"
)

// program is how the user started heat, as a command to type again: the
// binary as they named it, or "go run ./cmd/heat" for a binary go run (or
// go test) built.
func program() string {
	p := os.Args[0]
	if strings.Contains(p, "go-build") || strings.HasSuffix(p, ".test") {
		return "go run ./cmd/heat"
	}
	return p
}

func runCommand() *cobra.Command {
	var opt run.Options
	cmd := &cobra.Command{
		Use:   "run",
		Short: "solve a problem: the built-in default, an example (-c NAME) or a config file",
		Long: `Solves the problem of -c FILE (a TOML config), -c NAME (an example problem: heat config
list) or, without -c, the built-in default problem, and writes <out>/report.json,
diagnostics.csv, snapshots and checkpoints as configured.

Layers, each overriding the keys it names: built-in defaults < config file < --set
key=value (in order) < the dedicated flags (--steps, --ranks, ...).

run.steps is the total step count (heat) or the iteration cap (poisson): a restart
continues to that total. --restart PATH continues a stopped run from its checkpoint
with the checkpoint's own config; PATH is a run's output folder, its checkpoints
folder, their latest file, or one checkpoint (step-NNNNNNNN).

Exit codes: 0 done, 1 the run failed (diverged, I/O), 2 bad input, 130/143 stopped
by SIGINT/SIGTERM after writing a checkpoint.`,
		Example: `  heat run
  heat run -c configs/cube-3d.toml --ranks 4 --threads 2
  heat run -c poisson-2d --set grid.shape=[1024,1024] --out poisson-out
  heat run --restart heat-out --steps 4000`,
		Args: cobra.NoArgs,
		RunE: body(func(cmd *cobra.Command, _ []string) error {
			opt.Stdout, opt.Stderr, opt.World = cmd.OutOrStdout(), cmd.ErrOrStderr(), world
			opt.Program, opt.Args = program(), os.Args
			return run.Run(cmd.Context(), opt)
		}),
	}
	fs := cmd.Flags()
	opt.Flags = config.AddFlags(fs)
	fs.StringVar(&opt.Report, "report", "", "also write the run report (JSON) to `FILE`")
	fs.StringVar(&opt.Restart, "restart", "", "continue the run whose checkpoint `PATH` names (an output folder, checkpoints folder, latest, or one checkpoint), or \"latest\" (the newest under checkpoint.dir)")
	fs.BoolVarP(&opt.Quiet, "quiet", "q", false, "print no progress and no summary, only errors")
	fs.BoolVar(&opt.DryRun, "dry-run", false, "print the resolved config, the split and the memory the run needs, and run nothing")
	fs.BoolVar(&opt.Overwrite, "overwrite", false, "replace another run's results in the output folder (report, diagnostics, snapshots, plots, checkpoints kept there)")
	fs.BoolVar(&opt.AllowInputChanges, "allow-input-changes", false, "with --restart: go on although a source field or time table changed since the checkpoint (the report records it; the run no longer reproduces the straight run)")
	return cmd
}
