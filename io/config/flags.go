package config

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
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

	// Notes, after Resolve, are what the user should be told about the
	// config: an empty config file, a hotspot outside the domain.
	Notes []string

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
	err = f.over(c, src)
	f.Notes = src.notes
	if err != nil {
		return nil, err
	}
	return c, nil
}

// over layers the dedicated flags the user set over c, then the MPI
// world's rank count, and finishes c.
func (f *Flags) over(c *Config, src *sources) error {
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
			return err
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
			return &Error{Source: s, Key: "parallel.ranks",
				Msg: fmt.Sprintf("%d conflicts with the %d ranks of the MPI world", c.Parallel.Ranks, f.WorldSize)}
		}
		c.Parallel.Ranks = f.WorldSize
		src.set("parallel.ranks", "the MPI world")
	}
	return finish(c, src)
}

// RestartMutable are the keys (or tables) a restart may change: how long
// to run, how the work is split, what is written where. Every other key is
// the problem itself, fixed by the checkpoint.
var RestartMutable = []string{"run.steps", "run.t_end", "run.tolerance", "run.check_every", "grid.ghost",
	"parallel", "output", "checkpoint"}

// restartFixed are the keys under RestartMutable's tables that a restart
// may not change: the times of output.probe_dt, snapshot_dt and
// checkpoint.every_time are steps' events, so others would take other
// steps than the straight run.
var restartFixed = []string{"output.probe_dt", "output.snapshot_dt", "checkpoint.every_time"}

// ResolveRestart builds the Config of a restart: base (the config the
// checkpoint was written with, named by source in messages) < the config
// file, if one is given < --set < the dedicated flags. A changed rank
// count without a process grid drops the checkpoint's grid; a new
// output.dir moves the checkpoints the base kept under the old one. Any
// key outside RestartMutable that differs from base is an *Error naming
// the key, both values and where the new one came from.
func (f *Flags) ResolveRestart(base *Config, source string) (*Config, error) {
	c := &Config{}
	data, err := json.Marshal(base)
	if err == nil {
		err = json.Unmarshal(data, c)
	}
	if err != nil {
		return nil, &Error{Source: source, Msg: fmt.Sprintf("its config cannot be read: %v", err)}
	}
	src := &sources{restart: true}
	if !base.EndsAtTEnd() {
		// The checkpoint's run.steps is a bound of its own (it came before
		// its run.t_end, or there is none); steps that only reach its t_end
		// follow a new one.
		src.set("run.steps", source)
	}
	if f.Config != "" {
		if err := decodeFile(c, src, f.Config); err != nil {
			return nil, err
		}
	}
	for _, s := range f.Sets {
		if err := applySet(c, src, s); err != nil {
			return nil, err
		}
	}
	err = f.overRestart(c, base, src, source)
	f.Notes = src.notes
	if err != nil {
		return nil, err
	}
	return c, nil
}

// overRestart is over, after carrying what the base derived from keys
// the restart changes: its process grid (for another rank count) and its
// checkpoint folder (under a new output folder).
func (f *Flags) overRestart(c, base *Config, src *sources, source string) error {
	// The problem first: a changed key is the mistake to report, not what
	// validation would say of the mix.
	if err := compareRestart(base, c, src, source); err != nil {
		return err
	}
	_, dims := src.exact("parallel.dims")
	_, ranks := src.exact("parallel.ranks")
	if !dims && !f.changed("dims") && (ranks || f.changed("ranks") || f.WorldSize > 0 && f.WorldSize != base.Parallel.Ranks) {
		c.Parallel.Dims = []int{}
	}
	_, ckdir := src.exact("checkpoint.dir")
	if !ckdir && base.Checkpoint.Dir == filepath.Join(base.Output.Dir, "checkpoints") {
		c.Checkpoint.Dir = ""
	}
	return f.over(c, src)
}

// compareRestart refuses a restart config that changes a key outside
// RestartMutable.
func compareRestart(base, c *Config, src *sources, source string) error {
	was, now := flatten(base), flatten(c)
	keys := make([]string, 0, len(now))
	for k := range now {
		keys = append(keys, k)
	}
	for k := range was {
		if _, ok := now[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if mutable(k) || reflect.DeepEqual(was[k], now[k]) {
			continue
		}
		from := src.of(k)
		if from == "" {
			from = "this run"
		}
		return &Error{Source: from, Key: k, Msg: fmt.Sprintf("is %s in %s but %s here: a restart continues the same problem, so it cannot change %s (it may change %s)",
			jsonText(was[k]), source, jsonText(now[k]), k, strings.Join(RestartMutable, ", "))}
	}
	return nil
}

func mutable(key string) bool {
	if slices.Contains(restartFixed, key) {
		return false
	}
	for _, m := range RestartMutable {
		if key == m || strings.HasPrefix(key, m+".") {
			return true
		}
	}
	return false
}

// flatten is c as dotted keys and their JSON values.
func flatten(c *Config) map[string]any {
	data, err := json.Marshal(c)
	if err != nil {
		panic(err) // a Config holds only numbers, strings and lists of them
	}
	var tree map[string]any
	if err := json.Unmarshal(data, &tree); err != nil {
		panic(err)
	}
	out := map[string]any{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok {
			for k, x := range m {
				walk(prefix+k+".", x)
			}
			return
		}
		out[strings.TrimSuffix(prefix, ".")] = v
	}
	walk("", tree)
	return out
}

func jsonText(v any) string {
	if v == nil {
		return "unset"
	}
	b, _ := json.Marshal(v)
	return string(b)
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
