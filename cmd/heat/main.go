// Command heat solves the heat equation and Poisson's equation on 2D and 3D
// grids split across ranks. See README.md for the commands and the config.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

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
	if err != nil && !errors.Is(err, errHelp) && !errors.As(err, &agreed) {
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

// errHelp ends a run that only printed help.
var errHelp = errors.New("help requested")

// exitCode maps an error to the process exit status (run.ExitCode; help
// is a success).
func exitCode(err error) int {
	if errors.Is(err, errHelp) {
		return 0
	}
	return run.ExitCode(err)
}

const usage = `heat — heat equation and Poisson/Laplace (Jacobi) on 2D/3D grids split across ranks

Usage:
  heat run [-c FILE] [--set key=value]... [--steps N] [--ranks N] [--threads N]
           [--dims AxB[xC]] [--out DIR] [--restart PATH|latest] [--report FILE] [-q]
  heat inspect PATH [--verify]
  heat render PATH [-o FILE.png] [--cmap NAME] [--slice z=mid] [--range MIN,MAX]
  heat bench kernel [--dims 2] [--sizes 256,2048] [--threads 1,2] [--ghost 1,4]
  heat bench strong|weak [-c FILE] [--set k=v]... [--steps N] [--ranks 1,2,4] [--threads 1,2]
           [--reps 3] [--transport local|mpi] [--launcher T] [--out DIR]
  heat bench pingpong [--sizes ...] [--json]
  heat bench multigrid [--dims 2] [--sizes 256,1024,2048] [--ranks 1,2] [--cycle f|w|v]
  heat version

Run 'heat run --help' for the flags of run.
`

// cli is the whole command line: main only maps its error to an exit code.
func cli(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usagef("no command given")
	}
	// HEAT_KERNEL forces a kernel set (generic, avx2, avx512; auto: the
	// fastest), to measure the path this CPU would not pick.
	if err := stencil.Select(os.Getenv("HEAT_KERNEL")); err != nil {
		return usagef("HEAT_KERNEL: %v", err)
	}
	switch args[0] {
	case "run":
		return runCmd(ctx, args[1:], stdout, stderr)
	case "bench":
		return benchCmd(ctx, args[1:], stdout, stderr)
	case "inspect":
		return inspectCmd(ctx, args[1:], stdout, stderr)
	case "render":
		return renderCmd(ctx, args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, run.VersionString())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return usagef("unknown command %q", args[0])
	}
}
