package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"heat/benchmarks"
	"heat/comm"
	"heat/comm/local"
	"heat/comm/mpi"
	"heat/decomp"
	"heat/io/config"
	"heat/multigrid"
	"heat/plan"
	"heat/run"
)

func benchCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "measure: the kernel's roofline, strong and weak scaling, the network, multigrid",
		Long: `Measurement studies. Performance is measured here, never asserted by tests: compare
figures taken side by side in one run, and name the machine with them.`,
		Example: `  heat bench kernel --sizes 256,8192 --threads 1,2 --ghost 1,8
  heat bench strong -c cube-3d --ranks 1,2,4 --out strong
  mpirun -np 2 heat bench pingpong`,
	}
	cmd.AddCommand(benchKernelCommand(), benchStudyCommand(benchmarks.Strong), benchStudyCommand(benchmarks.Weak),
		benchPingPongCommand(), benchMultigridCommand())
	return group(cmd, "study")
}

func benchKernelCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kernel",
		Short: "roofline of the heat step on one rank",
		Long: `Measures the machine's copy bandwidth in-process, then the heat step on one rank for each
size × threads × ghost width, and prints Mupdates/s, effective GB/s (16 B per update),
the fraction of the one-sweep ceiling (copy GB/s ÷ 16 B, or with --media the variable-coefficient step's 40 B in 2D and 48 in 3D; temporal blocking can pass 1×)
and the fraction of the same kernel's rate in cache (near 1: compute-bound).`,
		Example: "  heat bench kernel --dims 3 --sizes 64,256 --threads 1,2\n  HEAT_KERNEL=avx2 heat bench kernel\n  heat bench kernel --media --sizes 2048,8192",
		Args:    cobra.NoArgs,
	}
	fs := cmd.Flags()
	dims := fs.Int("dims", 2, "2 or 3")
	sizes := fs.IntSlice("sizes", []int{256, 2048, 8192}, "grid cells per axis (n^dims grids)")
	threads := fs.IntSlice("threads", []int{1, 2}, "worker threads")
	ghosts := fs.IntSlice("ghost", []int{1, 4}, "ghost widths: temporal-blocking depths (1 = one sweep per step)")
	seconds := fs.Float64("seconds", 1, "measuring time per point")
	copyMiB := fs.Int("copy-mib", 512, "array size of the in-process copy-bandwidth measurement")
	media := fs.Bool("media", false, "the variable-coefficient step (k = 1 and 10 split along x, as refbench's var), ghost 1")
	cmd.RunE = body(func(cmd *cobra.Command, _ []string) error {
		return benchKernel(cmd.OutOrStdout(), *dims, *sizes, *threads, *ghosts, *seconds, *copyMiB, *media)
	})
	return cmd
}

func benchKernel(stdout io.Writer, dims int, sizes, threads, ghosts []int, seconds float64, copyMiB int, media bool) error {
	if dims != 2 && dims != 3 {
		return usagef("bench kernel: --dims must be 2 or 3 (got %d)", dims)
	}
	for _, list := range []struct {
		name string
		v    []int
	}{{"--sizes", sizes}, {"--threads", threads}, {"--ghost", ghosts}} {
		for _, x := range list.v {
			if x < 1 {
				return usagef("bench kernel: %s must be positive (got %d)", list.name, x)
			}
		}
	}
	for _, n := range sizes {
		for _, g := range ghosts {
			if g > n {
				return usagef("bench kernel: ghost width %d exceeds the grid size %d", g, n)
			}
		}
	}
	if seconds <= 0 || copyMiB < 1 {
		return usagef("bench kernel: --seconds and --copy-mib must be positive")
	}
	_, err := benchmarks.Roofline(stdout, benchmarks.RooflineOptions{
		Dims: dims, Sizes: sizes, Threads: threads, Ghosts: ghosts,
		Target: time.Duration(seconds * float64(time.Second)), CopyMiB: copyMiB, Media: media,
	})
	return err
}

func benchMultigridCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "multigrid",
		Short: "Poisson solves in work units (explicit steps), against Jacobi",
		Long: `Solves −∇²u = f (u = Π sin(πx), zero Dirichlet faces) from a zero guess by multigrid for each
size × ranks and prints the time in work units (1 WU = one explicit heat step of the same grid
on the same ranks and threads, timed just before), cycles, convergence factor, the coarse
levels' share of the time, one FMG cycle's cost and error, and the time of weighted Jacobi.`,
		Example: "  heat bench multigrid --dims 3 --sizes 64,128 --ranks 1,2",
		Args:    cobra.NoArgs,
	}
	fs := cmd.Flags()
	dims := fs.Int("dims", 2, "2 or 3")
	sizes := fs.IntSlice("sizes", nil, "cells per axis (default 256,1024,2048 in 2D; 64,128,256 in 3D)")
	ranks := fs.IntSlice("ranks", []int{1, 2}, "in-process ranks")
	threads := fs.Int("threads", 1, "worker threads per rank")
	tol := fs.Float64("tolerance", 1e-10, "relative residual to stop at")
	smoother := fs.String("smoother", "chebyshev", "chebyshev, jacobi or rbgs")
	cycle := fs.String("cycle", "f", "f, w or v")
	jacobi := fs.Int("jacobi-max", 256, "largest size also solved by weighted Jacobi (0: none)")
	implicit := fs.Bool("implicit", true, "also time Crank–Nicolson against explicit steps to the same time and accuracy (smallest size)")
	predictMax := fs.Int("predict-max", 1024, "print the α–β model of a cycle at the largest size up to this many ranks (0: none)")
	alpha := fs.Duration("alpha", 0, "also predict for a target network of latency α (e.g. 1.5us)")
	bandwidth := fs.Float64("bandwidth", 0, "… and bandwidth in `GB/s`")
	cmd.RunE = body(func(cmd *cobra.Command, _ []string) error {
		stdout := cmd.OutOrStdout()
		if *dims != 2 && *dims != 3 {
			return usagef("bench multigrid: --dims must be 2 or 3 (got %d)", *dims)
		}
		if len(*sizes) == 0 {
			*sizes = map[int][]int{2: {256, 1024, 2048}, 3: {64, 128, 256}}[*dims]
		}
		sm := slices.Index(plan.Smoothers, *smoother)
		cy := slices.Index(plan.Cycles, *cycle)
		if sm < 0 || cy < 0 {
			return usagef("bench multigrid: --smoother must be %s and --cycle %s", strings.Join(plan.Smoothers, ", "), strings.Join(plan.Cycles, ", "))
		}
		for _, x := range append(slices.Clone(*sizes), append(*ranks, *threads)...) {
			if x < 1 {
				return usagef("bench multigrid: --sizes, --ranks and --threads must be positive (got %d)", x)
			}
		}
		var target *benchmarks.Network
		if fs.Changed("alpha") || fs.Changed("bandwidth") {
			if *alpha < 0 || *bandwidth <= 0 {
				return usagef("bench multigrid: a target network needs --alpha >= 0 and --bandwidth > 0 (got %v, %g)", *alpha, *bandwidth)
			}
			target = &benchmarks.Network{Alpha: alpha.Seconds(), Beta: 1 / (*bandwidth * 1e9)}
		}
		_, err := benchmarks.MultigridStudy(stdout, benchmarks.MGOptions{
			Dims: *dims, Sizes: *sizes, Ranks: *ranks, Threads: *threads, Tolerance: *tol,
			MG: multigrid.Options{Smoother: multigrid.Smoother(sm), Cycle: multigrid.Cycle(cy)}, JacobiMax: *jacobi, Implicit: *implicit,
			PredictMax: *predictMax, Target: target,
		})
		return err
	})
	return cmd
}

// changedFlags is the flags the user set, as a command line again.
func changedFlags(fs *pflag.FlagSet) []string {
	var args []string
	fs.Visit(func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok && f.Value.Type() == "stringArray" {
			for _, v := range sv.GetSlice() {
				args = append(args, "--"+f.Name, v)
			}
			return
		}
		args = append(args, "--"+f.Name+"="+f.Value.String())
	})
	return args
}

// defaultRanks is 1, 2, 4, … up to this machine's cores.
func defaultRanks() []int {
	r := []int{1}
	for p := 2; p <= runtime.NumCPU(); p *= 2 {
		r = append(r, p)
	}
	return r
}

const studyHelp = `Runs the problem of -c/--set/--steps (as heat run takes them; the built-in default
problem without -c) at every point of --ranks × --threads, --reps times each (in rounds, so
a drift of the machine spreads over all points), each run a separate "heat run" whose report
is kept under DIR/runs/. Every run writes no snapshots or diagnostics unless --set turns them on.

%s

With --transport mpi every run is started by the --launcher template ({ranks} and {threads}
are replaced; "srun -n {ranks} -c {threads}" works the same, also inside an allocation), and
heat takes its ranks from the launcher; that needs heat built with -tags mpi.

Results in --out DIR: runs.csv and runs.json (every run, with its whole report and a record
of the machine and software), points.csv and summary.md (per point: median/min/max time per
step, Mupdates/s, speedup and efficiency against the point with the fewest cores, the split of
wall time, messages and bytes per step, load imbalance), model.csv, and speedup.png,
efficiency.png, breakdown.png and model.png. A point is marked noisy when its repetitions
spread more than 10% ((max − min) / median time per step), and a model miss when the model
is off its median by more than 25%; the model past the most measured ranks is marked
extrapolated (dashed in model.png).

The model (--model, on by default) measures the transport's latency α and inverse bandwidth
β by ping-pong (heat bench pingpong) and t_cell from the smallest point, then predicts
  %s
up to --predict-max ranks, also for a target network given by --alpha and --beta/--bandwidth
(InfiniBand: --alpha 1.5us --bandwidth 12).

`

const strongGrowth = `Strong scaling: every point solves the same grid.`

const weakGrowth = `Weak scaling: the problem's grid is the base, the cells each core gets. A point of
P = ranks × threads cores solves the base with every axis multiplied by its factor in the
process grid that heat would lay over the base for P ranks (fewest cut faces, ties to
slower axes): for a square base [n, n], 2 cores solve [2n, n], 4 [2n, 2n], 8 [4n, 2n]; in
3D 8 cores solve [2n, 2n, 2n]. Cells per core stay exactly the base's; grid.length stays
as set, so the cells get smaller.`

func benchStudyCommand(kind benchmarks.Kind) *cobra.Command {
	name := "bench " + string(kind)
	growth, short := strongGrowth, "strong scaling: one problem, more cores"
	if kind == benchmarks.Weak {
		growth, short = weakGrowth, "weak scaling: the problem grows with the cores"
	}
	cmd := &cobra.Command{
		Use:     string(kind),
		Short:   short,
		Long:    fmt.Sprintf(strings.TrimSuffix(studyHelp, "\n\n"), growth, benchmarks.ModelFormula),
		Example: fmt.Sprintf("  heat %s -c cube-3d --ranks 1,2,4 --threads 1,2 --reps 5\n  heat %s --transport mpi --launcher 'srun -n {ranks} -c {threads}'", name, name),
		Args:    cobra.NoArgs,
	}
	fs := cmd.Flags()
	cfgFile := fs.StringP("config", "c", "", "problem `FILE` (TOML); default: the built-in problem")
	sets := fs.StringArray("set", nil, "override any config `key=value` of the problem (repeatable)")
	steps := fs.Int("steps", 0, "time steps (heat) or iteration cap (poisson) of every run")
	ranks := fs.IntSlice("ranks", defaultRanks(), "rank counts of the points")
	threads := fs.IntSlice("threads", []int{1}, "worker threads per rank of the points")
	reps := fs.Int("reps", 3, "runs per point (median, min, max)")
	transport := fs.String("transport", "local", "local (in-process ranks) or mpi (--launcher)")
	launcher := fs.String("launcher", "mpirun -np {ranks}", "MPI launcher `template`, before heat on each run")
	out := fs.String("out", "heat-bench-"+string(kind), "results `DIR`")
	model := fs.Bool("model", true, "measure α, β by ping-pong and predict the scaling")
	predictMax := fs.Int("predict-max", 4096, "largest rank count the model predicts")
	alpha := fs.Duration("alpha", 0, "target network latency α (e.g. 1.5us)")
	beta := fs.Float64("beta", 0, "target network inverse bandwidth β in `ns/B`")
	bandwidth := fs.Float64("bandwidth", 0, "target network bandwidth in `GB/s`, instead of --beta")
	quiet := fs.BoolP("quiet", "q", false, "no progress and no summary, only errors")
	cmd.RunE = body(func(cmd *cobra.Command, _ []string) error {
		ctx, stdout, stderr := cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr()
		args := changedFlags(fs)

		// The problem, resolved as heat run would, so a bad config stops here.
		flags := config.Flags{Config: *cfgFile, Sets: *sets}
		var runArgs []string
		if *cfgFile != "" {
			runArgs = append(runArgs, "-c", *cfgFile)
		}
		for _, s := range *sets {
			runArgs = append(runArgs, "--set", s)
		}
		if fs.Changed("steps") {
			flags.Sets = append(slices.Clone(*sets), "run.steps="+strconv.Itoa(*steps))
			runArgs = append(runArgs, "--steps", strconv.Itoa(*steps))
		}
		cfg, err := flags.Resolve()
		if err != nil {
			return run.UsageError{Err: err}
		}
		if len(cfg.Parallel.Dims) > 0 {
			return usagef("%s: parallel.dims = %s fixes the process grid, but the study varies the ranks: leave it empty",
				name, decomp.FormatDims(cfg.Parallel.Dims))
		}
		periodic := make([]bool, cfg.NDim())
		for a := range periodic {
			kind, _ := cfg.FaceKind(a, 0)
			periodic[a] = kind == "periodic"
		}

		o := benchmarks.StudyOptions{Kind: kind, Reps: *reps, Shape: cfg.Grid.Shape, Periodic: periodic, Steps: cfg.Run.Steps,
			RunArgs: runArgs, Transport: *transport, Launcher: *launcher, Out: *out, Model: *model, PredictMax: *predictMax,
			Command: append([]string{"heat", "bench", string(kind)}, args...), Version: run.Version, Revision: run.Revision()}
		if o.Points, err = studyPoints(name, *ranks, *threads); err != nil {
			return err
		}
		if *transport == "mpi" && !mpi.Enabled {
			return usagef("%s: --transport mpi runs this heat under the launcher, but %v", name, mpi.ErrNoMPI)
		}
		if fs.Changed("alpha") || fs.Changed("beta") || fs.Changed("bandwidth") {
			if !*model {
				return usagef("%s: --alpha, --beta and --bandwidth are for the model; drop --model=false", name)
			}
			if fs.Changed("beta") && fs.Changed("bandwidth") {
				return usagef("%s: give --beta or --bandwidth, not both", name)
			}
			if *alpha < 0 || *beta < 0 || *bandwidth < 0 || (fs.Changed("bandwidth") && *bandwidth == 0) {
				return usagef("%s: --alpha, --beta and --bandwidth must be positive (got %v, %g, %g)", name, *alpha, *beta, *bandwidth)
			}
			// Negative: take the measured value.
			o.Target = &benchmarks.Network{Alpha: -1, Beta: -1}
			if fs.Changed("alpha") {
				o.Target.Alpha = alpha.Seconds()
			}
			if fs.Changed("beta") {
				o.Target.Beta = *beta * 1e-9
			}
			if fs.Changed("bandwidth") {
				o.Target.Beta = 1 / (*bandwidth * 1e9)
			}
		}
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("%s: cannot find heat's own executable to run the points: %w", name, err)
		}
		o.Exec = []string{exe}
		if err := o.Validate(); err != nil {
			return usagef("%s: %v", name, err)
		}
		for _, p := range o.Points {
			if _, err := o.PointShape(p); err != nil {
				return usagef("%s: %v", name, err)
			}
		}
		if !*quiet {
			o.Progress = stderr
			if *transport == "local" {
				for _, p := range o.Points {
					if p.Cores() > runtime.NumCPU() {
						fmt.Fprintf(stderr, "heat %s: warning: point %s needs %d cores, this machine has %d: its timings share cores\n",
							name, p, p.Cores(), runtime.NumCPU())
					}
				}
			}
		}
		st, err := benchmarks.RunStudy(ctx, o)
		if err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return fmt.Errorf("%s: %w", name, err)
		}
		if !*quiet {
			if err := benchmarks.WriteSummary(stdout, st); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "\nresults: %s\n", filepath.Join(*out, "summary.md"))
		}
		return nil
	})
	return cmd
}

// studyPoints is every ranks × threads pair, repeats dropped, in the order
// given.
func studyPoints(name string, ranks, threads []int) ([]benchmarks.Resources, error) {
	var pts []benchmarks.Resources
	for _, r := range ranks {
		for _, t := range threads {
			if r < 1 || t < 1 {
				return nil, usagef("%s: --ranks and --threads must be positive (got %d and %d)", name, r, t)
			}
			p := benchmarks.Resources{Ranks: r, Threads: t}
			if !slices.Contains(pts, p) {
				pts = append(pts, p)
			}
		}
	}
	if len(pts) == 0 {
		return nil, usagef("%s: --ranks and --threads need at least one value each", name)
	}
	return pts, nil
}

// benchPingPong measures the transport's α and β between two ranks: two
// in-process ranks, or ranks 0 and 1 of the MPI job that started it.
func benchPingPongCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pingpong",
		Short: "the transport's latency α and bandwidth 1/β",
		Long: `Times round trips of each message size between ranks 0 and 1 (two in-process ranks, or the
first two of an MPI job: mpirun -np 2 heat bench pingpong) and fits the one-way time
t = α + bytes·β by least squares on relative errors.`,
		Example: "  heat bench pingpong\n  mpirun -np 2 heat bench pingpong --json",
		Args:    cobra.NoArgs,
	}
	fs := cmd.Flags()
	sizes := fs.IntSlice("sizes", benchmarks.PingPongSizes(), "message sizes in bytes")
	perSize := fs.Duration("time", 50*time.Millisecond, "measuring time per size")
	asJSON := fs.Bool("json", false, "print the samples and the fit as JSON")
	cmd.RunE = body(func(cmd *cobra.Command, _ []string) error {
		stdout := cmd.OutOrStdout()
		for _, b := range *sizes {
			if b < 8 {
				return usagef("bench pingpong: --sizes must be at least 8 bytes, one value (got %d)", b)
			}
		}
		if len(*sizes) < 2 || *perSize <= 0 {
			return usagef("bench pingpong: need 2 or more --sizes and a positive --time")
		}
		res := benchmarks.NetworkResult{Transport: "local"}
		measure := func(c comm.Comm) error {
			s, net, err := benchmarks.MeasureNetwork(c, *sizes, *perSize)
			if c.Rank() == 0 {
				res.Samples, res.Network = s, net
			}
			return err
		}
		var err error
		if mpiWorld != nil {
			res.Transport = "mpi"
			c := mpiWorld.Comm()
			if c.Rank() != 0 {
				stdout = io.Discard
			}
			err = measure(c)
		} else {
			err = local.Run(2, measure)
		}
		if err != nil {
			return fmt.Errorf("bench pingpong: %w", err)
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(res)
		}
		fmt.Fprintf(stdout, "ping-pong through %s, one way:\n%12s %12s %10s\n", res.Transport, "bytes", "time (µs)", "GB/s")
		for _, s := range res.Samples {
			fmt.Fprintf(stdout, "%12d %12.3f %10.3f\n", s.Bytes, s.OneWayS*1e6, float64(s.Bytes)/s.OneWayS/1e9)
		}
		fmt.Fprintf(stdout, "%s\n", res.Network)
		return nil
	})
	return cmd
}
