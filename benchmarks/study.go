package benchmarks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"heat/decomp"
	"heat/io/report"
)

// StudyOptions describe a scaling study: one problem (the user's heat run
// arguments), a list of resource points, repetitions, and how to start heat.
type StudyOptions struct {
	Kind   Kind
	Points []Resources
	Reps   int // runs per point

	// Shape is the problem's grid (strong) or the base grid whose cells
	// every core gets (weak: each point solves WeakShape(Shape, cores)).
	// Periodic tells which axes wrap, for the process grids.
	Shape    []int
	Periodic []bool
	Steps    int      // the problem's run.steps, for the record
	RunArgs  []string // the user's -c/--set/--steps, given to every run

	// Transport is "local" (in-process ranks: --ranks R) or "mpi" (the
	// Launcher template, with {ranks} and {threads} replaced, goes before
	// Exec and decides the ranks).
	Transport string
	Launcher  string
	Exec      []string // heat's command line up to the subcommand: the executable
	Env       []string // added to this process's environment for every run

	Out      string    // the results folder
	Progress io.Writer // progress lines; nil: none

	// Model, when set, measures the network by ping-pong (`heat bench
	// pingpong --json` through the transport) and predicts the scaling up
	// to PredictMax ranks, also for Target when it is not nil (a negative
	// α or β there stands for the measured one).
	Model      bool
	Target     *Network
	PredictMax int

	// For the record.
	Command           []string
	Version, Revision string
}

// RunResult is one repetition of one point: how it was run, its figures and
// its whole report.
type RunResult struct {
	Point int `json:"point"` // 1-based
	Resources
	Rep     int             `json:"rep"` // 1-based
	Dir     string          `json:"dir"`
	Command []string        `json:"command"`
	Metrics RunMetrics      `json:"metrics"`
	Report  json.RawMessage `json:"report"`
}

// Study is everything a study measured and derived; runs.json holds it.
type Study struct {
	Record          Record         `json:"record"`
	Points          []PointSummary `json:"points"`
	Network         *NetworkResult `json:"network,omitempty"`
	Model           *Model         `json:"model,omitempty"`
	Predicted       []Prediction   `json:"predicted,omitempty"` // with the measured network
	Target          *Network       `json:"target_network,omitempty"`
	TargetPredicted []Prediction   `json:"target_predicted,omitempty"`
	Runs            []RunResult    `json:"runs"`
}

// Validate checks the options that do not depend on the problem.
func (o *StudyOptions) Validate() error {
	if o.Kind != Strong && o.Kind != Weak {
		return fmt.Errorf("study kind must be %q or %q, got %q", Strong, Weak, o.Kind)
	}
	if len(o.Points) == 0 {
		return errors.New("a study needs at least one point (ranks × threads)")
	}
	for _, p := range o.Points {
		if p.Ranks < 1 || p.Threads < 1 {
			return fmt.Errorf("point %s: ranks and threads must be at least 1", p)
		}
	}
	if o.Reps < 1 {
		return fmt.Errorf("repetitions must be at least 1, got %d", o.Reps)
	}
	if o.Transport != "local" && o.Transport != "mpi" {
		return fmt.Errorf("transport must be local or mpi, got %q", o.Transport)
	}
	if o.Transport == "mpi" && len(strings.Fields(o.Launcher)) == 0 {
		return errors.New("the mpi transport needs a launcher, such as \"mpirun -np {ranks}\"")
	}
	if len(o.Exec) == 0 || o.Out == "" {
		return errors.New("a study needs heat's executable and a results folder")
	}
	if len(o.Shape) == 0 {
		return errors.New("a study needs the problem's grid shape")
	}
	if o.Model && o.PredictMax < 1 {
		return fmt.Errorf("predictions need a positive maximum rank count, got %d", o.PredictMax)
	}
	return nil
}

// PointShape is the grid a point solves: the problem's (strong) or the base
// grown for the point's cores (weak). It also checks that the point's ranks
// can split that grid.
func (o *StudyOptions) PointShape(p Resources) ([]int, error) {
	shape := o.Shape
	if o.Kind == Weak {
		var err error
		if shape, err = WeakShape(o.Shape, p.Cores(), o.Periodic); err != nil {
			return nil, err
		}
	}
	if _, err := decomp.AutoDims(shape, p.Ranks, o.Periodic); err != nil {
		return nil, fmt.Errorf("point %s: %w", p, err)
	}
	return shape, nil
}

// RunStudy runs the study: every point Reps times, in rounds (each round runs
// every point once, so a drift of the machine spreads over all points),
// then the network measurement and model when asked for, then writes the
// results into o.Out. A failed run stops the study; the runs done so far
// are still written to runs.csv and runs.json.
func RunStudy(ctx context.Context, o StudyOptions) (*Study, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	shapes := make([][]int, len(o.Points))
	for i, p := range o.Points {
		s, err := o.PointShape(p)
		if err != nil {
			return nil, err
		}
		shapes[i] = s
	}
	if err := os.MkdirAll(filepath.Join(o.Out, "runs"), 0o755); err != nil {
		return nil, fmt.Errorf("results folder: %w", err)
	}
	st := &Study{Record: newRecord(o), Runs: []RunResult{}}
	prog := newProgress(o.Progress, o.Kind, o.Points, o.Reps)
	if o.Model {
		fmt.Fprintf(prog.w, "bench %s: measuring the network (ping-pong, %s transport)\n", o.Kind, o.Transport)
		net, err := o.measureNetwork(ctx)
		if err != nil {
			return nil, err
		}
		st.Network = net
	}
	for rep := 1; rep <= o.Reps; rep++ {
		for i, p := range o.Points {
			prog.start(i, rep)
			t0 := time.Now()
			r, err := o.runPoint(ctx, i, p, rep, shapes[i])
			if err != nil {
				st.Record.End = time.Now()
				if len(st.Runs) > 0 {
					err = errors.Join(err, writeRuns(o.Out, st))
				}
				return st, err
			}
			prog.done(i, time.Since(t0))
			st.Runs = append(st.Runs, r)
			st.Record.addHosts(r.Metrics.Hosts)
		}
	}
	st.Record.End = time.Now()
	if err := st.analyse(o); err != nil {
		return st, err
	}
	fmt.Fprintf(prog.w, "bench %s: %d runs in %s; results in %s\n", o.Kind, len(st.Runs), st.Record.End.Sub(st.Record.Start).Round(time.Second), o.Out)
	return st, WriteResults(o.Out, st)
}

// analyse summarises the points and, with a network, fits and runs the
// model.
func (st *Study) analyse(o StudyOptions) error {
	slices.SortStableFunc(st.Runs, func(a, b RunResult) int {
		if a.Point != b.Point {
			return a.Point - b.Point
		}
		return a.Rep - b.Rep
	})
	pts, err := Summarise(st.Runs)
	if err != nil {
		return err
	}
	st.Points = pts
	if st.Network == nil {
		return nil
	}
	base := slices.MinFunc(pts, func(a, b PointSummary) int { return a.Cores - b.Cores })
	m, err := FitModel(base, st.Network.Network, o.Periodic)
	if err != nil {
		return err
	}
	st.Model = &m
	var extra []int
	for _, p := range pts {
		if p.Cores%m.Threads == 0 {
			extra = append(extra, p.Cores/m.Threads)
		}
	}
	ranks := PredictRanks(base.Ranks, o.PredictMax, extra...)
	predict := func(m Model) []Prediction {
		if o.Kind == Weak {
			return m.Weak(o.Shape, ranks)
		}
		return m.Strong(o.Shape, ranks)
	}
	st.Predicted = predict(m)
	if o.Target != nil {
		tm := m
		if o.Target.Alpha >= 0 {
			tm.Alpha = o.Target.Alpha
		}
		if o.Target.Beta >= 0 {
			tm.Beta = o.Target.Beta
		}
		st.Target, st.TargetPredicted = &tm.Network, predict(tm)
	}
	return nil
}

// command is the command line that starts heat for point p with args.
func (o *StudyOptions) command(p Resources, args ...string) []string {
	var cmd []string
	if o.Transport == "mpi" {
		r := strings.NewReplacer("{ranks}", strconv.Itoa(p.Ranks), "{threads}", strconv.Itoa(p.Threads))
		for _, w := range strings.Fields(o.Launcher) {
			cmd = append(cmd, r.Replace(w))
		}
	}
	cmd = append(cmd, o.Exec...)
	return append(cmd, args...)
}

// runArgs are the arguments of `heat run` for point p into dir: outputs off
// unless the user's own --set turns them on (theirs come later and win),
// and the grown grid of a weak point last.
func (o *StudyOptions) runArgs(p Resources, dir string, shape []int) []string {
	args := []string{"run", "-q", "--out", dir}
	if o.Transport == "local" {
		args = append(args, "--ranks", strconv.Itoa(p.Ranks))
	}
	args = append(args, "--threads", strconv.Itoa(p.Threads),
		"--set", "output.formats=[]", "--set", "output.diagnostics_every=0")
	args = append(args, o.RunArgs...)
	if o.Kind == Weak {
		args = append(args, "--set", "grid.shape="+tomlInts(shape))
	}
	return args
}

// tomlInts writes a TOML array of integers: [64,32].
func tomlInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, ",") + "]"
}

// runPoint runs repetition rep of point i (0-based) and reads its report.
func (o *StudyOptions) runPoint(ctx context.Context, i int, p Resources, rep int, shape []int) (RunResult, error) {
	dir := filepath.Join(o.Out, "runs", fmt.Sprintf("%s-rep%d", p.Name(), rep))
	where := fmt.Sprintf("point %d/%d (%s) rep %d/%d", i+1, len(o.Points), p, rep, o.Reps)
	if err := os.RemoveAll(dir); err != nil {
		return RunResult{}, fmt.Errorf("%s: clearing %s: %w", where, dir, err)
	}
	cmd := o.command(p, o.runArgs(p, dir, shape)...)
	if _, err := o.execute(ctx, cmd); err != nil {
		return RunResult{}, fmt.Errorf("%s: %w", where, err)
	}
	path := filepath.Join(dir, "report.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return RunResult{}, fmt.Errorf("%s: the run succeeded but left no report: %w", where, err)
	}
	var rep1 report.Report
	if err := json.Unmarshal(raw, &rep1); err != nil {
		return RunResult{}, fmt.Errorf("%s: %s: %w", where, path, err)
	}
	if rep1.Ranks != p.Ranks || rep1.Threads != p.Threads {
		return RunResult{}, fmt.Errorf("%s: the run had %d ranks × %d threads instead (check the launcher %q)",
			where, rep1.Ranks, rep1.Threads, o.Launcher)
	}
	var cfg struct {
		Config struct {
			Grid struct {
				Shape []int `json:"shape"`
			} `json:"grid"`
		} `json:"config"`
	}
	if json.Unmarshal(raw, &cfg) == nil && len(cfg.Config.Grid.Shape) > 0 {
		shape = cfg.Config.Grid.Shape
	}
	m, err := Metrics(&rep1, shape)
	if err != nil {
		return RunResult{}, fmt.Errorf("%s: %s: %w", where, path, err)
	}
	return RunResult{Point: i + 1, Resources: p, Rep: rep, Dir: dir, Command: cmd, Metrics: m, Report: raw}, nil
}

// measureNetwork runs `heat bench pingpong --json` on 2 ranks of the study's
// transport and reads its samples and fit.
func (o *StudyOptions) measureNetwork(ctx context.Context) (*NetworkResult, error) {
	cmd := o.command(Resources{Ranks: 2, Threads: 1}, "bench", "pingpong", "--json")
	out, err := o.execute(ctx, cmd)
	if err != nil {
		return nil, fmt.Errorf("network measurement: %w", err)
	}
	var nr NetworkResult
	if err := json.Unmarshal(out, &nr); err != nil {
		return nil, fmt.Errorf("network measurement: %s printed no JSON result: %w (output: %q)", strings.Join(cmd, " "), err, tail(out, 300))
	}
	return &nr, nil
}

// tailBytes is how much of a failed run's output an error quotes.
const tailBytes = 2000

// execute runs cmd with the study's environment and returns its standard
// output; on failure the error quotes the end of its standard error. A
// cancelled context interrupts the child with SIGINT (so heat writes its
// checkpoint), then kills it after 30 s.
func (o *StudyOptions) execute(ctx context.Context, cmd []string) ([]byte, error) {
	c := exec.CommandContext(ctx, cmd[0], cmd[1:]...)
	c.Env = append(os.Environ(), o.Env...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	c.Cancel = func() error { return c.Process.Signal(os.Interrupt) }
	c.WaitDelay = 30 * time.Second
	err := c.Run()
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	if err != nil {
		msg := strings.TrimSpace(string(tail(stderr.Bytes(), tailBytes)))
		if msg == "" {
			msg = strings.TrimSpace(string(tail(stdout.Bytes(), tailBytes)))
		}
		return nil, fmt.Errorf("%s: %v; its output ends:\n%s", strings.Join(cmd, " "), err, msg)
	}
	return stdout.Bytes(), nil
}

// tail is the last n bytes of b, starting at a line when one starts there.
func tail(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	b = b[len(b)-n:]
	if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
		b = b[i+1:]
	}
	return b
}
