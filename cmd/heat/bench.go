package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"heat/benchmarks"
)

// benchCmd runs measurement studies: `heat bench kernel` (a roofline).
func benchCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "kernel" {
		fmt.Fprintln(stderr, "Usage: heat bench kernel [flags]   (heat bench kernel --help)")
		if len(args) == 0 {
			return usagef("bench: say which study: kernel")
		}
		return usagef("bench: unknown study %q (known: kernel)", args[0])
	}
	fs := pflag.NewFlagSet("heat bench kernel", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	dims := fs.Int("dims", 2, "2 or 3")
	sizes := fs.IntSlice("sizes", []int{256, 2048, 8192}, "grid cells per axis (n^dims grids)")
	threads := fs.IntSlice("threads", []int{1, 2}, "worker threads")
	ghosts := fs.IntSlice("ghost", []int{1, 4}, "ghost widths: temporal-blocking depths (1 = one sweep per step)")
	seconds := fs.Float64("seconds", 1, "measuring time per point")
	copyMiB := fs.Int("copy-mib", 512, "array size of the in-process copy-bandwidth measurement")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: heat bench kernel [flags]\n\nMeasures the machine's copy bandwidth in-process, then the heat step on one rank for each\nsize × threads × ghost width, and prints Mupdates/s, effective GB/s (16 B per update) and\nthe fraction of the one-sweep ceiling (copy GB/s ÷ 16 B); temporal blocking can pass 1×.\n\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return usageError{err}
	}
	if *dims != 2 && *dims != 3 {
		return usagef("bench kernel: --dims must be 2 or 3 (got %d)", *dims)
	}
	for _, list := range []struct {
		name string
		v    []int
	}{{"--sizes", *sizes}, {"--threads", *threads}, {"--ghost", *ghosts}} {
		for _, x := range list.v {
			if x < 1 {
				return usagef("bench kernel: %s must be positive (got %d)", list.name, x)
			}
		}
	}
	for _, n := range *sizes {
		for _, g := range *ghosts {
			if g > n {
				return usagef("bench kernel: ghost width %d exceeds the grid size %d", g, n)
			}
		}
	}
	if *seconds <= 0 || *copyMiB < 1 {
		return usagef("bench kernel: --seconds and --copy-mib must be positive")
	}
	_, err := benchmarks.Roofline(stdout, benchmarks.RooflineOptions{
		Dims: *dims, Sizes: *sizes, Threads: *threads, Ghosts: *ghosts,
		Target: time.Duration(*seconds * float64(time.Second)), CopyMiB: *copyMiB,
	})
	return err
}
