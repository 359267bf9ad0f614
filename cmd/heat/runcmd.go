package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"heat/io/config"
	"heat/run"
)

// runCmd parses heat run's command line and runs it.
func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("heat run", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	opt := run.Options{Flags: config.AddFlags(fs), Stdout: stdout, Stderr: stderr, World: world}
	fs.StringVar(&opt.Report, "report", "", "also write the run report (JSON) to `FILE`")
	fs.StringVar(&opt.Restart, "restart", "", "continue from checkpoint `PATH`, or \"latest\" (the newest complete one under checkpoint.dir)")
	fs.BoolVarP(&opt.Quiet, "quiet", "q", false, "print no progress and no summary, only errors")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: heat run [flags]\n\nSolves the problem of -c FILE (or the built-in default) and writes <out>/report.json.\n\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return run.UsageError{Err: err}
	}
	if fs.NArg() > 0 {
		return usagef("run: unexpected argument %q (config files go after -c)", fs.Arg(0))
	}
	return run.Run(ctx, opt)
}
