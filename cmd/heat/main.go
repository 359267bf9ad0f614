// Command heat solves the heat equation and Poisson's equation on 2D and 3D
// grids split across ranks. See README.md for the commands and the config.
//
// This package is the command line only (commands, flags, help, completion,
// exit codes); a run itself is package run's.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"heat/run"
	"heat/stencil"
)

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		first := <-sigs
		cancel(run.SignalError{Sig: first})
		second := <-sigs
		fmt.Fprintf(os.Stderr, "heat: second %v: aborting now\n", second)
		os.Exit(exitCode(run.SignalError{Sig: second}))
	}()
	os.Exit(execute(ctx, os.Args[1:]))
}

// execute is the process's whole life after signal set-up: join MPI if a
// launcher started it, run the command line, print the error (once per
// job), finalize MPI, and return the exit status. Call it from the main
// goroutine, as MPI wants.
func execute(ctx context.Context, args []string) int {
	err := startMPI(args)
	if err == nil {
		err = cli(ctx, args, os.Stdout, os.Stderr)
	}
	var agreed run.AgreedError
	if err != nil && !errors.As(err, &agreed) {
		fmt.Fprintf(os.Stderr, "heat: %v\n", err)
	}
	code := exitCode(err)
	if mpiWorld != nil {
		// Every rank gets here.
		if ferr := mpiWorld.Finalize(); ferr != nil && code == 0 {
			fmt.Fprintf(os.Stderr, "heat: %v\n", ferr)
			code = 1
		}
	}
	return code
}

// usagef is bad input (exit 2).
var usagef = run.Usagef

// exitCode maps an error to the process exit status (run.ExitCode).
func exitCode(err error) int { return run.ExitCode(err) }

// cli is the whole command line: main only maps its error to an exit code.
// An error of cobra's own (an unknown command or flag, a wrong argument
// count) is a usage error; a command's error says what it is.
func cli(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	var ce commandError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return ce.err
	}
	return run.UsageError{Err: err}
}

// commandError marks an error returned by a command's own code (not by
// cobra's parsing), so cli can tell the two apart.
type commandError struct{ err error }

func (e commandError) Error() string { return e.err.Error() }

// body wraps a command's function: its errors are its own.
func body(f func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := f(cmd, args); err != nil {
			return commandError{err}
		}
		return nil
	}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "heat",
		Short: "heat equation and Poisson/Laplace on 2D and 3D grids split across ranks",
		Long: `heat solves the heat equation (explicit, backward Euler, Crank–Nicolson; fixed
steps, or equation.dt = "auto": steps chosen by their error, landing on switches) and
Poisson/Laplace problems (geometric multigrid, CG preconditioned by multigrid,
Jacobi) on 2D and 3D grids split across ranks, in uniform or heterogeneous media
(conductivity and heat-capacity maps, materials, insulating holes, held cells;
Dirichlet, Neumann, Robin and periodic faces, values in space and time):
goroutine ranks in one process, or MPI ranks under mpirun/srun (a build with
-tags mpi). Results are bit-for-bit the same on every split. "heat config keys"
describes every config key.`,
		Example: `  heat run                              # the built-in default problem, outputs under heat-out/
  heat run -c poisson-2d --ranks 4      # an example problem (heat config list) on 4 ranks
  heat run --restart heat-out           # continue a stopped run where it stopped
  heat inspect heat-out/checkpoints/latest --verify`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// HEAT_KERNEL forces a kernel set (generic, avx2, avx512; auto: the
		// fastest), to measure the path this CPU would not pick.
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if err := stencil.Select(os.Getenv("HEAT_KERNEL")); err != nil {
				return commandError{usagef("HEAT_KERNEL: %v", err)}
			}
			return nil
		},
	}
	root.SuggestionsMinimumDistance = 2
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(runCommand(), inspectCommand(), renderCommand(), plotCommand(), benchCommand(), configCommand(), sweepCommand(), versionCommand())
	root.SetHelpCommand(helpCommand())
	return root
}

// flagError is a bad flag, with the nearest flag the command has when the
// name looks mistyped.
func flagError(cmd *cobra.Command, err error) error {
	if s := suggestFlag(cmd, err); s != "" {
		return fmt.Errorf("%w\n\nDid you mean this?\n\t--%s", err, s)
	}
	return err
}

// group makes cmd, a command of subcommands only, refuse to run without
// one: no subcommand, or an unknown one (with the nearest names), is a
// usage error naming those there are, as noun.
func group(cmd *cobra.Command, noun string) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = body(func(c *cobra.Command, args []string) error {
		var names []string
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		known := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
		if len(args) == 0 {
			return usagef("%s: say which %s: %s", c.Name(), noun, known)
		}
		msg := fmt.Sprintf("%s: unknown %s %q (known: %s)", c.Name(), noun, args[0], known)
		c.SuggestionsMinimumDistance = 2
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			msg += fmt.Sprintf("; did you mean %q?", s[0])
		}
		return usagef("%s", msg)
	})
	return cmd
}
