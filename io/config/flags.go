package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// Flags holds the values of the configuration flags of `heat run`, bound by
// AddFlags. Resolve layers them over the config file and --set overrides.
type Flags struct {
	Config  string   // -c/--config FILE; "" = the built-in default problem
	Sets    []string // --set key=value, in command-line order
	Steps   int      // --steps: run.steps
	Ranks   int      // --ranks: parallel.ranks
	Threads int      // --threads: parallel.threads
	Dims    string   // --dims AxB[xC]: parallel.dims
	Out     string   // --out DIR: output.dir

	// WorldSize, when > 0, is the rank count fixed by the transport (the
	// MPI world): it becomes parallel.ranks, and a different rank count
	// given on the command line (--ranks, --set parallel.ranks) is an
	// error. A config file's parallel.ranks describes local runs and is
	// overridden. Not a flag; the caller sets it after parsing.
	WorldSize int

	fs *pflag.FlagSet
}

// AddFlags registers -c/--config, --set, --steps, --ranks, --threads, --dims
// and --out on fs and returns where their values land.
func AddFlags(fs *pflag.FlagSet) *Flags {
	f := &Flags{fs: fs}
	fs.StringVarP(&f.Config, "config", "c", "", "problem `FILE` (TOML); default: the built-in problem, configs/default.toml")
	fs.StringArrayVar(&f.Sets, "set", nil, "override any config `key=value` (TOML value, e.g. grid.shape=[512,512]); repeatable")
	fs.IntVar(&f.Steps, "steps", 0, "time steps (heat) or iteration cap (poisson): run.steps")
	fs.IntVar(&f.Ranks, "ranks", 0, "number of ranks: parallel.ranks")
	fs.IntVar(&f.Threads, "threads", 0, "worker goroutines per rank, 0 = cores / ranks: parallel.threads")
	fs.StringVar(&f.Dims, "dims", "", "process grid `AxB[xC]`, C order (4x2 = 4 ranks along y, 2 along x): parallel.dims")
	fs.StringVar(&f.Out, "out", "", "output `DIR`: output.dir")
	return f
}

// changed reports whether the user set flag name on the command line.
func (f *Flags) changed(name string) bool {
	return f.fs != nil && f.fs.Changed(name)
}

// Resolve builds the run's Config: Default < config file (or the built-in
// problem) < --set in order < the dedicated flags the user set, then fills
// derived defaults and validates. Errors are *Error values naming the
// source (file, "--set ...", "--steps"), the key and the bad value.
func (f *Flags) Resolve() (*Config, error) {
	c, src, err := layer(f.Config, f.Sets)
	if err != nil {
		return nil, err
	}
	if f.changed("steps") {
		c.Run.Steps = f.Steps
		src.set("run.steps", "--steps")
	}
	if f.changed("ranks") {
		c.Parallel.Ranks = f.Ranks
		src.set("parallel.ranks", "--ranks")
	}
	if f.changed("threads") {
		c.Parallel.Threads = f.Threads
		src.set("parallel.threads", "--threads")
	}
	if f.changed("dims") {
		d, err := ParseDims(f.Dims)
		if err != nil {
			err.(*Error).Source = "--dims"
			return nil, err
		}
		c.Parallel.Dims = d
		src.set("parallel.dims", "--dims")
	}
	if f.changed("out") {
		c.Output.Dir = f.Out
		src.set("output.dir", "--out")
	}
	if f.WorldSize > 0 {
		if s := src.of("parallel.ranks"); strings.HasPrefix(s, "--") && c.Parallel.Ranks != f.WorldSize {
			return nil, &Error{Source: s, Key: "parallel.ranks",
				Msg: fmt.Sprintf("%d conflicts with the %d ranks of the MPI world", c.Parallel.Ranks, f.WorldSize)}
		}
		c.Parallel.Ranks = f.WorldSize
		src.set("parallel.ranks", "the MPI world")
	}
	if err := finish(c, src); err != nil {
		return nil, err
	}
	return c, nil
}

// ParseDims parses a process grid as users type it, AxB or AxBxC in C order
// ("4x2": 4 ranks along y, 2 along x), into [4 2]. Each entry must be a
// positive integer. "" is the empty (automatic) process grid. Errors are
// *Error values for key parallel.dims.
func ParseDims(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return []int{}, nil
	}
	parts := strings.Split(strings.ToLower(s), "x")
	bad := &Error{Key: "parallel.dims", Msg: fmt.Sprintf("want AxB or AxBxC with positive integers, as in 4x2 (got %q)", s)}
	if len(parts) < 2 || len(parts) > 3 {
		return nil, bad
	}
	dims := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 {
			return nil, bad
		}
		dims[i] = n
	}
	return dims, nil
}
