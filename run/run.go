package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"heat/checkpoint"
	"heat/comm"
	"heat/comm/local"
	"heat/comm/mpi"
	"heat/decomp"
	"heat/internal/hugemem"
	"heat/internal/wait"
	"heat/io/config"
	"heat/io/report"
	"heat/multigrid"
	"heat/operator"
	"heat/solver"
	"heat/stencil"
)

// Options are one `heat run` as the command line gave it.
type Options struct {
	Flags   *config.Flags // the config: file, --set, dedicated flags
	Restart string        // --restart PATH|latest ("" = a fresh start)
	Report  string        // --report FILE ("" = only <out>/report.json)
	Quiet   bool          // -q: no progress, no summary
	NoNotes bool          // the config's notes (keys it ignores) are the caller's to print: a study prints them once
	// DryRun prints the resolved config, the decomposition and the memory
	// estimate, and runs nothing.
	DryRun bool
	// Overwrite lets a new run replace another run's results in its
	// output folder.
	Overwrite bool
	// AllowInputChanges lets a restart go on although a file the run reads
	// as it steps (a source field, a time table) changed since its
	// checkpoint was written; the report records the change.
	AllowInputChanges bool
	// Stdout gets the summary, Stderr progress, warnings and log lines.
	Stdout, Stderr io.Writer
	// World is this process's rank of an MPI job; nil runs every rank as a
	// goroutine of this process.
	World *World
	// Program is how the user started heat ("heat", "./heat", "go run
	// ./cmd/heat"), for the command that continues a stopped run.
	Program string
	// Args is the command line, for the report.
	Args []string

	started time.Time
}

// World is this process's place in an MPI job.
type World struct {
	Comm       comm.Comm
	LocalRanks int            // ranks of the job on this host
	Abort      func(code int) // ends the whole job (MPI_Abort)
}

// Run is one whole run: resolve the config, restart or start, solve with
// checkpoints and snapshots on schedule, write the report. Under MPI every
// rank calls it; rank 0 alone prints and writes the report.
func Run(ctx context.Context, opt Options) error {
	opt.started = time.Now().UTC().Truncate(time.Millisecond)
	var c comm.Comm
	stdout, stderr := opt.Stdout, opt.Stderr
	if opt.World != nil {
		c = opt.World.Comm
		if c.Rank() != 0 {
			stdout, stderr = io.Discard, io.Discard
		}
	}
	j, err := prepare(ctx, opt, stdout, stderr, c)
	if j != nil {
		defer j.held.release()
	}
	if c != nil {
		if j != nil {
			holdStart(c, j.cfg) // parallel.timeout (timeout.go)
		}
		err = agree(opt.World, err)
		stalled(ctx, opt, j, err)
	}
	if errors.Is(err, errDryRun) {
		return nil
	}
	if err != nil {
		return err
	}
	cfg, rep := j.cfg, j.rep
	var runErr error
	if c == nil {
		runErr = local.Run(cfg.Parallel.Ranks, func(c comm.Comm) error {
			return runRank(ctx, c, j)
		})
	} else {
		runErr = runRank(ctx, c, j)
	}
	j.log.done()
	if err := j.out.close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("output: %w", err)
	}
	if c != nil {
		abandon(ctx, opt, j) // a wait that gave up ends the job (timeout.go)
		runErr = agree(opt.World, runErr)
		stalled(ctx, opt, j, runErr)
	}
	stopped := errors.Is(runErr, solver.ErrStopped)
	final := runErr
	if runErr != nil && !stopped {
		var ue UsageError
		var ae AgreedError
		if !errors.As(runErr, &ue) && !errors.As(runErr, &ae) {
			final = fmt.Errorf("run failed: %w", runErr)
		}
	}
	if stopped {
		cause := context.Cause(ctx)
		if c != nil && c.Rank() != 0 {
			return AgreedError{Code: ExitCode(cause)}
		}
		var se SignalError
		where := "checkpoint " + j.stopped + "; continue with: " + continueCommand(opt, cfg)
		if j.stopped == "" {
			where = "no checkpoint written"
		}
		if errors.As(cause, &se) {
			final = fmt.Errorf("%w at step %d of %d; %s", se, rep.Steps, cfg.Run.Steps, where)
		} else {
			final = fmt.Errorf("stopped at step %d: %v; %s", rep.Steps, cause, where)
		}
	}
	if c != nil && c.Rank() != 0 {
		return final
	}
	// Every run leaves its report, however it ended.
	rep.Status, rep.StopReason = outcome(cfg, rep, runErr, final)
	rep.PeakRSS = peakRSS()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rep.GoSys = int64(ms.Sys) - hugemem.Padding()
	rep.ExitCode = ExitCode(final)
	paths := []string{filepath.Join(cfg.Output.Dir, "report.json")}
	if err := j.held.outHeld(); err != nil {
		// The folder is gone (or another's now): its report is not the
		// run's to write there.
		final = fmt.Errorf("%w; the report is not written there (last good checkpoint: %s)", err, j.lastGoodText())
		rep.Status, rep.StopReason, rep.ExitCode = "failed", final.Error(), 1
		paths = paths[:0]
		j.log.warn("%v", final)
	}
	if j.reportPath != "" {
		paths = append(paths, j.reportPath)
	}
	for _, p := range paths {
		if err := report.Write(p, rep); err != nil {
			if final == nil {
				return err
			}
			j.log.warn("%v", err)
		}
	}
	plots := j.endPlots()
	if !j.quiet && (final == nil || stopped) {
		printSummary(stdout, cfg, rep, j.load.CPUs, paths[0])
		if len(plots) > 0 {
			fmt.Fprintf(stdout, "plots: %s\n", strings.Join(plots, ", "))
		}
	}
	return final
}

// outcome is the report's status and stop reason for a run that ended
// with runErr (the ranks' agreed error) and returns final.
func outcome(cfg *config.Config, rep *report.Report, runErr, final error) (status, reason string) {
	var de *solver.DivergedError
	switch {
	case errors.Is(runErr, solver.ErrStopped):
		return "interrupted", final.Error()
	case errors.As(runErr, &de):
		return "diverged", de.Error()
	case final != nil:
		return "failed", final.Error()
	case rep.Converged != nil && *rep.Converged:
		return "converged", fmt.Sprintf("residual %.3g below run.tolerance %g after %d iterations", float64(rep.Residual), cfg.Run.Tolerance, rep.Steps)
	case rep.Converged != nil && rep.Solver != nil && rep.Solver.Stalled:
		return "completed", fmt.Sprintf("stalled at the rounding floor: residual %.3g above run.tolerance %g after %d cycles", float64(rep.Residual), cfg.Run.Tolerance, rep.Steps)
	case rep.Converged != nil:
		return "completed", fmt.Sprintf("iteration cap run.steps = %d reached; residual %.3g above run.tolerance %g", cfg.Run.Steps, float64(rep.Residual), cfg.Run.Tolerance)
	case cfg.EndsAtTEnd():
		return "completed", fmt.Sprintf("reached run.t_end = %g in %d steps", cfg.Run.TEnd, rep.Steps)
	case cfg.Run.TEnd > 0:
		return "completed", fmt.Sprintf("reached run.steps = %d (t = %g), before run.t_end = %g", cfg.Run.Steps, rep.SimTime, cfg.Run.TEnd)
	}
	return "completed", fmt.Sprintf("reached run.steps = %d (t = %g)", cfg.Run.Steps, rep.SimTime)
}

// continueCommand is the command line that continues a stopped run: its
// output folder names it when its checkpoints are in their usual place.
func continueCommand(opt Options, cfg *config.Config) string {
	target := shellQuote(cfg.Checkpoint.Dir)
	if filepath.Clean(cfg.Checkpoint.Dir) == filepath.Join(cfg.Output.Dir, "checkpoints") {
		target = shellQuote(cfg.Output.Dir)
	} else {
		// Checkpoints kept elsewhere: the restart would not know the
		// output folder to continue in (restartFolders).
		target += " --out " + shellQuote(cfg.Output.Dir)
	}
	prog := opt.Program
	if prog == "" {
		prog = "heat"
	}
	if opt.World != nil {
		prog = fmt.Sprintf("mpirun -np %d %s", opt.World.Comm.Size(), prog)
	}
	return prog + " run --restart " + target
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=+:,@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// prepare resolves the config and prepares the job: restart candidates,
// outputs, progress. c is this process's rank under MPI, nil when the
// ranks are in-process. Every input is opened and checked before anything
// is removed or written (inputs.go); a stop (ctx done) while the maps'
// values are read ends it there, with nothing written.
func prepare(ctx context.Context, opt Options, stdout, stderr io.Writer, c comm.Comm) (*job, error) {
	flags := opt.Flags
	transport := "local"
	if c != nil {
		// The launcher decides the ranks.
		flags.WorldSize = c.Size()
		transport = "mpi"
	}
	log := newLogger(stderr, opt.Quiet || (c != nil && c.Rank() != 0))
	warn := log.warn
	var (
		cfg      *config.Config
		restarts []*checkpoint.Checkpoint
		fallback bool
		err      error
	)
	if opt.Restart != "" {
		cfg, restarts, fallback, _, err = resolveRestart(flags, opt.Restart, warn)
		if err == nil {
			err = restartFolders(flags, opt.Restart, cfg, restarts[0])
		}
	} else if cfg, err = flags.Resolve(); err != nil {
		err = UsageError{err}
	}
	if err != nil {
		return nil, err
	}
	if !opt.NoNotes {
		for _, n := range flags.Notes {
			warn("%s", n)
		}
	}
	if err := resolveMaps(cfg); err != nil {
		return nil, err
	}
	// Checkpoints keep the config as given (a restart resolves it again,
	// on its own ranks); the report shows the time step and threads as
	// resolved.
	given := *cfg
	spec := specOf(cfg, opt.World)
	fields, err := setFields(&spec, cfg, restarts != nil)
	if err != nil {
		return nil, err
	}
	if err := setFaces(cfg, &spec); err != nil {
		return nil, err
	}
	var notes []string
	if spec.Adaptive, notes, err = adaptiveOf(cfg); err != nil {
		return nil, UsageError{err}
	}
	for _, n := range notes {
		warn("%s", n)
	}
	spec.Media = mediaOf(cfg)
	if restarts != nil {
		// A restart takes its media from the checkpoint: no map file
		// needed, and the same cells on any rank count.
		if mf := checkpointMedia(restarts[0]); mf != nil {
			spec.Media = mf
		}
	}
	if autoStep(cfg, spec) {
		// The solver picks dt from the media (and the steps to t_end).
		spec.DT = 0
		if spec.TEnd > 0 {
			spec.Steps = 0
		}
	}
	if !cfg.Adaptive() {
		cfg.Equation.DT = config.Step{V: spec.DT} // the report's: the step taken
	}
	cfg.Parallel.Threads = spec.Threads
	rank0 := c == nil || c.Rank() == 0
	// What the solver would refuse at its start (ghost layers against
	// faces and sources, …), refused now: before any work or folder.
	if err := spec.Check(); err != nil {
		return nil, Usagef("%s", strings.TrimPrefix(err.Error(), "solver: "))
	}

	// Fail before the work: the memory the run needs, the folders it
	// writes.
	g, err := decomp.New(spec.Shape, cfg.Parallel.Ranks, spec.Dims, spec.Periodic())
	if err != nil {
		return nil, UsageError{err}
	}
	mine, hostRanks := []int{}, 1
	if c == nil {
		for r := range cfg.Parallel.Ranks {
			mine = append(mine, r)
		}
	} else {
		mine, hostRanks = []int{c.Rank()}, max(1, opt.World.LocalRanks)
	}
	mem := estimateMemory(cfg, spec, g, mine)
	avail, availWhat := available()
	if opt.DryRun {
		if rank0 {
			if err := dryRun(stdout, cfg, spec, g, mem, avail, availWhat); err != nil {
				return nil, err
			}
		}
		return nil, errDryRun
	}
	if need := mem.Total() * int64(hostRanks); avail > 0 && need > avail {
		return nil, Usagef("the run needs about %s on this host, more than the %s available (%s): use more hosts, a smaller grid.shape or fewer outputs (--dry-run shows the estimate)",
			bytesText(need), bytesText(avail), availWhat)
	}
	// The maps' values, once the run is known to fit (a map is as large
	// as the grid); a restart's media are its checkpoint's.
	if restarts == nil {
		if err := checkMapValues(ctx, flags, cfg); err != nil {
			return nil, err
		}
	}
	// And the field files' values (rank 0's read; the ranks agree).
	if rank0 {
		if err := fields.checkValues(ctx, cfg); err != nil {
			return nil, err
		}
	}
	// The files it reads again at a restart, as they are now (and as its
	// checkpoint recorded them).
	inputs, changed, err := readInputs(cfg, restarts, opt.AllowInputChanges, rank0, warn)
	if err != nil {
		return nil, err
	}
	// This run's id (a restart keeps the one of the run it continues), in
	// its manifest, its checkpoints and its report; then its folders: the
	// output folder's lock and manifest, the checkpoint folder's lock.
	runID := newRunID()
	if restarts != nil {
		if id, _ := restarts[0].Meta().Extra["run_id"].(string); id != "" {
			runID = id
		}
	}
	held, err := claimFolders(cfg, opt.Report, opt.Overwrite, runID, opt.Restart != "", rank0, inputsOf(cfg, restarts), warn)
	if err != nil {
		return nil, err
	}

	j := &job{cfg: cfg, given: &given, spec: spec, fields: fields, reportPath: opt.Report, quiet: opt.Quiet || !rank0,
		restarts: restarts, fallback: fallback, runID: runID, held: held, files: held.files, inputs: inputs, changed: changed}
	from := 0
	if restarts != nil {
		from = restarts[0].Meta().Step
	}
	j.rep = &report.Report{
		Status:         "failed",
		StartedAt:      opt.started,
		Command:        opt.Args,
		PerRank:        []report.Rank{},
		Dims:           g.Dims,
		MemoryEstimate: mem.Total(),
		Version:        Version,
		GoVersion:      runtime.Version(),
		Build:          buildRecord(),
		Transport:      transport,
		MPILibrary:     mpi.LibraryVersion(),
		Config:         cfg,
		Ranks:          cfg.Parallel.Ranks,
		Threads:        spec.Threads,
		Checkpoints:    []report.Checkpoint{},
		RunID:          runID,
	}
	if c == nil {
		j.rep.MPILibrary = ""
	}
	j.out, err = openOutputs(cfg, held.files, opt.Restart != "", rank0)
	if err != nil {
		held.release()
		return nil, err
	}
	j.log = log
	j.prog = newProgress(log, spec.Equation == solver.Poisson, cfg.Run.Tolerance, from, cfg.Run.Steps,
		time.Duration(cfg.Output.ProgressEvery*float64(time.Second)))
	return j, nil
}

// job is what the ranks of one run share: the inputs, and the report that
// rank 0 fills.
type job struct {
	cfg        *config.Config  // as resolved (threads, time step)
	given      *config.Config  // as given: what checkpoints keep
	runID      string          // this run's id, in its checkpoints and report
	held       *folders        // the output and checkpoint folders' locks (rank 0)
	files      *manifest       // what the run wrote in its output folder
	named      map[string]bool // what pruning left alone, named once (rank 0)
	reportPath string          // --report
	quiet      bool            // no progress and no summary (-q, or not rank 0)
	spec       solver.Spec
	rep        *report.Report
	log        *logger
	prog       *progress
	restarts   []*checkpoint.Checkpoint // candidates, newest first; nil = fresh start
	fallback   bool                     // --restart latest: try older candidates if one is bad
	lastGood   string                   // newest checkpoint known complete
	stopped    string                   // checkpoint written on a signal
	out        *outputs                 // snapshots and diagnostics
	fields     *fields                  // the formulas of the initial field and source
	inputs     []stepInput              // the files read again at a restart, with their digests (rank 0)
	changed    []string                 // how they differ from the restart checkpoint's (--allow-input-changes)
	load       cpuLoad                  // the CPU account of rank 0's process over wall_s
	waits      wait.Counts              // what rank 0's process's waits did over wall_s
}

// rankRecord is what each rank sends rank 0 for the report.
type rankRecord struct {
	Rank report.Rank
	Host report.Host
}

// runRank is one rank's whole run: restore, solve with checkpoints and
// outputs on schedule, then gather the report's figures on rank 0.
func runRank(ctx context.Context, c comm.Comm, j *job) error {
	spec := j.spec
	if c.Rank() == 0 {
		spec.OnCheck = j.prog.check
	}
	s, err := solver.New(c, spec)
	if err == nil && c.Rank() == 0 && s.Adaptive() != nil {
		j.prog.timeOf, j.prog.tEnd = s.SimTime, spec.TEnd
	}
	var ie *multigrid.IncompatibleError
	if errors.As(err, &ie) {
		return Usagef("source: %v; balance the source and the fluxes, or make a face dirichlet or robin", ie)
	}
	var se *solver.StabilityError
	if errors.As(err, &se) {
		return Usagef("equation.dt: %v; use a smaller dt, or 0 for %g× the limit", se, operator.SafetyFactor)
	}
	var me *solver.MediaError
	if errors.As(err, &me) {
		return Usagef("media: %v", me)
	}
	if err != nil {
		return faceFailure(j.cfg, err)
	}
	defer s.Close()
	// A formula that is not finite somewhere fails the run before it steps.
	if err := j.fields.check(c, 0, s.DT(), j.fields.implicit); err != nil {
		return err
	}
	if c.Rank() == 0 && j.spec.Media != nil && j.spec.Adaptive == nil {
		// The step the media's limit gave (every rank has the same): the
		// report's and the progress's, before the barrier below lets the
		// other ranks read the config.
		j.cfg.Equation.DT, j.cfg.Run.Steps = config.Step{V: s.DT()}, s.Steps()
		j.prog.total = s.Steps()
	}
	if err := restore(c, s, j); err != nil {
		return err
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	writers, err := shardWriters(c, s.Grid())
	if err != nil {
		return err
	}
	r := &rankRun{c: c, s: s, j: j, writers: writers, start: time.Now(), from: s.Step(), lastDiag: -1, lastSnap: -1, lastProbe: -1}
	if c.Rank() == 0 {
		r.cpu = newCPUMeter()
		r.cpu0 = r.cpu.sample() // the process's, however many ranks it holds
		r.waits0 = wait.Stats()
		j.prog.restart() // the rate from the first step, not from the setup
	}
	runErr := r.loop(ctx)
	if c.Rank() == 0 {
		// The checkpoints pruned by the last commit, removed meanwhile.
		if err := checkpoint.Settle(j.cfg.Checkpoint.Dir); err != nil {
			j.log.warn("%v", err)
		}
	}
	if runErr != nil && !errors.Is(runErr, solver.ErrStopped) {
		if c.Rank() == 0 {
			// A failed run's report says how far the solver got and how
			// its residuals went.
			rep := j.rep
			rep.Steps, rep.SimTime, rep.Residual = s.Step(), report.Float(s.SimTime()), report.Float(s.Residual())
			rep.Solver = solverReport(s, c.Size(), nil)
		}
		return runErr
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	wall := time.Since(r.start)
	if c.Rank() == 0 {
		j.load = loadBetween(r.cpu0, r.cpu.sample(), wall)
		j.waits = wait.Stats().Sub(r.waits0)
	}
	if err := r.report(wall); err != nil {
		return err
	}
	return runErr
}

// rankRun is one rank's run in progress: what it has done and spent.
type rankRun struct {
	c                  comm.Comm
	s                  *solver.Solver
	j                  *job
	writers            []int // the process grid of the checkpoint writers (shardWriters)
	start              time.Time
	cpu                cpuMeter    // rank 0: the CPU account over the run (cpuload.go)
	cpu0               cpuSample   // at start
	waits0             wait.Counts // at start
	from               int         // the step it started from
	ckptTime, outTime  time.Duration
	lastDiag, lastSnap int // the steps of the last outputs
	lastProbe          int
	// pending is the checkpoint being written in the background (at most
	// one), of step pendingStep.
	pending     *checkpoint.Pending
	pendingStep int
}

// checkpoint saves the solver's state: the one in flight committed first,
// then this one begun, and with checkpoint.async = false (or now) finished
// at once. Collective.
func (r *rankRun) checkpoint(now bool) error {
	if err := r.settle(); err != nil {
		return err
	}
	t := time.Now()
	p, err := beginCheckpoint(r.c, r.s, r.j, r.writers)
	r.ckptTime += time.Since(t)
	if err != nil || p == nil {
		return err
	}
	r.pending, r.pendingStep = p, r.s.Step()
	if now || !r.j.cfg.Checkpoint.Async {
		return r.settle()
	}
	return nil
}

// settle commits the checkpoint in flight, if any. Collective.
func (r *rankRun) settle() error {
	if r.pending == nil {
		return nil
	}
	t := time.Now()
	defer func() { r.ckptTime += time.Since(t) }()
	p := r.pending
	r.pending = nil
	return finishCheckpoint(r.c, r.j, r.pendingStep, p)
}

// loop advances the solver from one scheduled event (a checkpoint, a
// snapshot, a diagnostics row) to the next until the run is done, stopped
// (solver.ErrStopped, after the stop's checkpoint) or failed.
func (r *rankRun) loop(ctx context.Context) error {
	c, s, j := r.c, r.s, r.j
	cp, out := j.cfg.Checkpoint, j.cfg.Output
	tm := watch(ctx, c, j.cfg, s, j.spec.CheckEvery) // parallel.timeout (timeout.go)
	defer tm.close()
	if j.restarts == nil {
		if err := r.output(false); err != nil {
			return err
		}
	}
	for {
		target := s.Steps() // the solver's: with an automatic step in media it picks them
		for _, every := range []int{cp.Every, out.SnapshotEvery, out.DiagnosticsEvery, probeEvery(j.cfg)} {
			if every > 0 {
				target = min(target, (s.Step()/every+1)*every)
			}
		}
		target = tm.begin(target)
		runErr := s.RunTo(ctx, target)
		tm.end(errors.Is(runErr, solver.ErrStopped))
		if c.Rank() == 0 {
			j.rep.Steps, j.rep.SimTime, j.rep.Residual = s.Step(), report.Float(s.SimTime()), report.Float(s.Residual())
		}
		stopped := errors.Is(runErr, solver.ErrStopped)
		var de *solver.DivergedError
		if errors.As(runErr, &de) {
			// Every rank found it at the same check: the report can still
			// show the field that diverged.
			if st, err := fieldStats(c, s); err == nil && c.Rank() == 0 {
				j.rep.Field = st.Field()
			}
		}
		if runErr != nil && !stopped {
			if err := j.fields.failed(c, s, runErr); err != nil {
				runErr = err // the formula, its point and step (agreed by every rank)
			}
			runErr = faceFailure(j.cfg, runErr)
			if de != nil {
				// Agreed by every rank: the checkpoint in flight, of a good
				// step, is still worth its commit.
				if err := r.settle(); err != nil {
					return err
				}
			}
			return fmt.Errorf("%w (last good checkpoint: %s)", runErr, j.lastGoodText())
		}
		end := stopped || s.Done()
		scheduled := (cp.Every > 0 && s.Step()%cp.Every == 0 || onSchedule(s.Paused(), s.SimTime(), cp.EveryTime)) && s.Step() > r.from
		if stopped || scheduled || (s.Done() && cp.Final) {
			// Begun before the outputs, so that the last checkpoint is
			// written while the end's are made; it commits at the next one
			// or at the end.
			if err := r.checkpoint(false); err != nil {
				return err
			}
		}
		if err := r.output(end); err != nil {
			// The checkpoint begun, of a good step, is still worth its commit.
			return errors.Join(err, r.settle())
		}
		if end {
			// A stop's checkpoint and the last are complete before the
			// run ends.
			if err := r.settle(); err != nil {
				return err
			}
			if stopped && c.Rank() == 0 {
				j.stopped = j.lastGood
			}
			if c.Rank() == 0 && !stopped && s.Adaptive() != nil && s.SimTime() < j.spec.TEnd {
				j.log.warn("run.steps = %d came before run.t_end = %g: the steps that choose themselves ended at t = %g", s.Steps(), j.spec.TEnd, s.SimTime())
			}
			return runErr
		}
	}
}

// output writes what is due at the current step (always at the end).
func (r *rankRun) output(end bool) error {
	t := time.Now()
	defer func() { r.outTime += time.Since(t) }()
	out, step := r.j.cfg.Output, r.s.Step()
	if out.DiagnosticsEvery > 0 && (step%out.DiagnosticsEvery == 0 || end) && step != r.lastDiag {
		r.lastDiag = step
		if err := r.j.out.diagnostics(r.c, r.s); err != nil {
			return fmt.Errorf("diagnostics at step %d: %w", step, err)
		}
	}
	every := probeEvery(r.j.cfg)
	due := every > 0 && (step%every == 0 || end)
	if dt := probeDT(r.j.cfg); dt > 0 {
		// Rows at t = 0, at each k × probe_dt (the steps land there and
		// pause), and at the end.
		due = step == r.from && r.j.restarts == nil || end || onSchedule(r.s.Paused(), r.s.SimTime(), dt)
	}
	if due && step != r.lastProbe {
		r.lastProbe = step
		if err := r.j.out.probes(r.c, r.s); err != nil {
			return fmt.Errorf("probes at step %d: %w", step, err)
		}
	}
	if (end || (out.SnapshotEvery > 0 && step%out.SnapshotEvery == 0) || onSchedule(r.s.Paused(), r.s.SimTime(), snapshotDT(r.j.cfg))) && step != r.lastSnap {
		r.lastSnap = step
		if err := r.j.out.snapshot(r.c, r.s); err != nil {
			return fmt.Errorf("snapshot at step %d: %w", step, err)
		}
	}
	return nil
}

// report gathers every rank's figures on rank 0 and fills the report: the
// field's summary, the solver's account, per-rank times, the straggler.
// Collective.
func (r *rankRun) report(wall time.Duration) error {
	c, s, j := r.c, r.s, r.j
	field, err := summarise(c, s, j.cfg.Output.Fingerprint)
	if err != nil {
		return err
	}
	var discErr *report.Float
	if p := exactOf(j.cfg, s.SimTime()); p != nil {
		e, err := s.MaxError(p)
		if err != nil {
			return err
		}
		f := report.Float(e)
		discErr = &f
	}
	st := s.Stats()
	lay := s.Layout()
	host, _ := os.Hostname()
	mine, err := json.Marshal(rankRecord{Rank: report.Rank{
		Rank: c.Rank(), Host: host, Coords: s.Grid().Coords(c.Rank()),
		Offset: lay.Box.Lo, Shape: lay.N, Threads: s.Threads(), CPUs: affinity(),
		ComputeS: st.Compute.Seconds(), HaloWaitS: st.HaloWait.Seconds(), ReduceS: st.Reduce.Seconds(),
		CheckpointS: r.ckptTime.Seconds(), OutputS: r.outTime.Seconds(),
		MessagesSent: st.Messages, BytesSent: st.Bytes, Collectives: st.Checks,
	}, Host: hostRecord()})
	if err != nil {
		return err
	}
	energy, err := energyReport(c, j.cfg, s)
	if err != nil {
		return err
	}
	flux, err := fluxReport(j.cfg, s)
	if err != nil {
		return err
	}
	parts, err := c.Gatherv(mine, 0)
	if err != nil || c.Rank() != 0 {
		return err
	}
	rep := j.rep
	rep.EnergyBalance, rep.Flux = energy, flux
	rep.Dims = s.Grid().Dims
	rep.Steps, rep.SimTime, rep.Residual = s.Step(), report.Float(s.SimTime()), report.Float(s.Residual())
	if j.spec.Equation == solver.Poisson {
		conv := s.Converged()
		rep.Converged = &conv
	}
	rep.WallS = wall.Seconds()
	w := report.Waits(j.waits)
	rep.Waits = &w
	if l := j.load; !math.IsNaN(l.CPUS) {
		rep.CPUS = &l.CPUS
		if !math.IsNaN(l.Others) {
			rep.Others = &l.Others
		}
	}
	cells := 1
	for _, n := range j.spec.Shape {
		cells *= n
	}
	if compute := (wall - r.ckptTime - r.outTime).Seconds(); compute > 0 {
		rep.MUpdatesPS = report.Float(float64(cells) * float64(s.Step()-r.from) / compute / 1e6)
	}
	rep.Field = field
	rep.Solver = solverReport(s, c.Size(), discErr)
	if a := rep.Solver.Adaptive; a != nil {
		a.ControlS = st.Control.Seconds()
		if rep.WallS > 0 {
			a.ControlShare = a.ControlS / rep.WallS
		}
	}
	rep.PerRank = make([]report.Rank, len(parts))
	hosts := make([]report.Host, len(parts))
	for i, p := range parts {
		var rec rankRecord
		if err := json.Unmarshal(p, &rec); err != nil {
			return fmt.Errorf("rank %d's report: %w", i, err)
		}
		rep.PerRank[i], hosts[i] = rec.Rank, rec.Host
	}
	rep.Hosts = mergeHosts(hosts)
	rep.Straggler = report.Slowest(rep.PerRank, wall.Seconds())
	if st := rep.Straggler; st != nil && st.ExcessPct > report.StragglerWarnPct && wall > time.Second {
		j.log.warn("rank %d was the slowest: the others waited %.2f s for it, %.0f%% of the run (%s); see per_rank in the report",
			st.Rank, st.ExcessS, st.ExcessPct, map[string]string{"compute": "its own compute", "waiting": "waiting for messages"}[st.Cause])
	}
	return nil
}

// lastGoodText names the run's last good checkpoint for an error, and
// what its checkpoint folder holds now when that checkpoint is gone (the
// folder deleted, or the checkpoint removed, under the run).
func (j *job) lastGoodText() string {
	if j.lastGood == "" {
		return "none"
	}
	if _, err := os.Stat(j.lastGood); err == nil {
		return j.lastGood
	}
	dir := j.cfg.Checkpoint.Dir
	names, err := checkpoint.List(dir)
	switch {
	case err != nil || len(names) == 0 && !exists(dir):
		return fmt.Sprintf("%s, since removed: the checkpoint folder %s no longer exists", j.lastGood, dir)
	case len(names) == 0:
		return fmt.Sprintf("%s, since removed: the checkpoint folder %s holds no checkpoint", j.lastGood, dir)
	}
	return fmt.Sprintf("%s, since removed: the newest in %s is %s", j.lastGood, dir, names[0])
}

// exists says whether path names anything (a link included).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// summarise is the final field's summary on rank 0. With the fingerprint
// the field is gathered and summarised in C order (split-independent bits);
// without, from the ranks' summaries (fieldStats).
func summarise(c comm.Comm, s *solver.Solver, fingerprint bool) (report.Field, error) {
	if fingerprint {
		k, err := s.GatherHoles() // the statistics leave the holes out
		if err != nil {
			return report.Field{}, err
		}
		g, err := s.Gather()
		if err != nil || c.Rank() != 0 {
			return report.Field{}, err
		}
		return report.SummariseOver(g, k, true), nil
	}
	st, err := fieldStats(c, s)
	return st.Field(), err
}

// fieldStats is the summary of the global field on every rank: each rank's
// own, combined in two Allreduces. The one reduction of the field the run's
// outputs share (the report, diagnostics.csv). Collective.
func fieldStats(c comm.Comm, s *solver.Solver) (report.Stats, error) {
	// Each part its own rows (vector kernels, the same bits on every
	// set), then the parts' summaries in order.
	part := make([]stencil.Moments, s.Parts())
	for w := range part {
		part[w] = stencil.NewMoments()
	}
	s.EachRow(func(w int, row []float64) { part[w].Add(row) })
	st := report.NewStats()
	for _, p := range part {
		lo, hi, sum, sq := p.Reduce()
		st.Min, st.Max = min(st.Min, lo), max(st.Max, hi)
		st.Sum += sum
		st.SumSq += sq
		st.N += p.N
	}
	var mx [2]float64
	sm := make([]float64, 3)
	if err := c.Allreduce(comm.Max, []float64{st.Max, -st.Min}, mx[:]); err != nil {
		return st, err
	}
	if err := c.Allreduce(comm.Sum, []float64{st.Sum, st.SumSq, float64(st.N)}, sm); err != nil {
		return st, err
	}
	return report.Stats{Min: -mx[1], Max: mx[0], Sum: sm[0], SumSq: sm[1], N: int(sm[2])}, nil
}

// printSummary prints the run's summary on stdout; cpus is the count of
// CPUs that rep.Others is a share of.
func printSummary(w io.Writer, cfg *config.Config, rep *report.Report, cpus int, path string) {
	threads := "threads"
	if rep.Threads == 1 {
		threads = "thread"
	}
	fmt.Fprintf(w, "%s %s on %d rank(s) (%s) × %d %s: %d steps", cfg.Equation.Kind, decomp.FormatDims(cfg.Grid.Shape),
		rep.Ranks, decomp.FormatDims(rep.Dims), rep.Threads, threads, rep.Steps)
	if rep.Converged != nil {
		state := "not converged"
		if *rep.Converged {
			state = "converged"
		}
		fmt.Fprintf(w, ", %s, residual %.3e", state, rep.Residual)
	} else {
		fmt.Fprintf(w, ", t = %.6g", rep.SimTime)
	}
	fmt.Fprintf(w, " in %.3f s (%.1f Mupdates/s)\n", rep.WallS, rep.MUpdatesPS)
	if line := busyLine(rep, cpus); line != "" {
		fmt.Fprintln(w, line)
	}
	if sv := rep.Solver; sv != nil && sv.Kind == "multigrid" {
		fmt.Fprintf(w, "multigrid: %s-cycles, %s smoother, %d levels: %d cycles", strings.ToUpper(sv.Cycle), sv.Smoother, len(sv.Levels), sv.Cycles)
		if sv.ConvergenceFactor != nil {
			fmt.Fprintf(w, ", %.3f per cycle", float64(*sv.ConvergenceFactor))
		}
		if sv.CyclesPerStep > 0 {
			fmt.Fprintf(w, ", %.1f per step", sv.CyclesPerStep)
		}
		if sv.KrylovSolves > 0 {
			fmt.Fprintf(w, " (mgcg iterations included: %d solves handed their cycles over to mgcg)", sv.KrylovSolves)
		}
		if sv.ComponentError != nil {
			last := "the last step's "
			if sv.CyclesPerStep == 0 {
				last = ""
			}
			fmt.Fprintf(w, "; %scomponentwise backward error %.3g", last, float64(*sv.ComponentError))
		}
		if a := sv.Adaptive; a != nil {
			fmt.Fprintf(w, "; steps chosen by their error (rtol %g, atol %g): %d kept, %d taken again shorter, dt %.3g … %.3g",
				float64(a.RTol), float64(a.ATol), a.Steps, a.Rejected, float64(a.DTMin), float64(a.DTMax))
		}
		if sv.Stalled {
			fmt.Fprintf(w, "; stalled at the rounding floor above run.tolerance %g", cfg.Run.Tolerance)
		}
		fmt.Fprintln(w)
	}
	if sv := rep.Solver; sv != nil && sv.Kind == "mgcg" && sv.ComponentError != nil {
		fmt.Fprintf(w, "mgcg: %s-cycle preconditioner, %s smoother, %d levels: %d iterations, componentwise backward error %.3g, normwise %.3g",
			strings.ToUpper(sv.Cycle), sv.Smoother, len(sv.Levels), sv.Cycles, float64(*sv.ComponentError), float64(*sv.BackwardError))
		if sv.KrylovFrom > 0 {
			fmt.Fprintf(w, "; the first %d of them plain cycles, which converged too slowly", sv.KrylovFrom)
		}
		if sv.Stalled {
			fmt.Fprintf(w, "; stalled at the rounding floor above run.tolerance %g", cfg.Run.Tolerance)
		}
		fmt.Fprintln(w)
	}
	if sv := rep.Solver; sv != nil && sv.DiscretisationError != nil {
		fmt.Fprintf(w, "error against the exact solution: max %.3e\n", float64(*sv.DiscretisationError))
	}
	if e := rep.EnergyBalance; e != nil {
		fmt.Fprintf(w, "energy: content %.6g → %.6g, in %.6g (faces, held cells, source), balance residual %.2g\n",
			float64(e.ContentStart), float64(e.ContentEnd), float64(e.Inflow), float64(e.RelativeResidual))
	}
	if f := rep.Flux; f != nil {
		fmt.Fprintf(w, "flux in: %s, held cells %.6g, source %.6g; net %.2g (relative %.2g)\n",
			faceFlows(cfg, f.Faces), float64(f.Held), float64(f.Source), float64(f.Net), float64(f.RelativeResidual))
	}
	fmt.Fprintf(w, "field: min %.6g max %.6g mean %.6g l2 %.6g\n", rep.Field.Min, rep.Field.Max, rep.Field.Mean, rep.Field.L2)
	if rep.Field.SHA256 != "" {
		fmt.Fprintf(w, "sha256 %s\n", rep.Field.SHA256)
	}
	fmt.Fprintf(w, "report: %s\n", path)
}

// solverReport is the report's account of how s solved the run on ranks
// ranks.
func solverReport(s *solver.Solver, ranks int, discErr *report.Float) *report.Solver {
	in := s.Info()
	r := &report.Solver{Kind: in.Kind, Scheme: in.Scheme, Smoother: in.Smoother, Cycle: in.Cycle,
		Cycles: in.Cycles, KrylovSolves: in.KrylovSolves, KrylovFrom: in.KrylovFrom, Stalled: s.Stalled(), DiscretisationError: discErr}
	for _, h := range in.History {
		r.ResidualHistory = append(r.ResidualHistory, report.Float(h))
	}
	for i, h := range in.StepHistory {
		r.StepHistory = append(r.StepHistory, report.Float(h))
		r.StepComponentHistory = append(r.StepComponentHistory, report.Float(in.StepComponentHistory[i]))
	}
	if in.FloorSolves > 0 {
		b := report.Float(in.FloorBackward)
		r.FloorSolves, r.FloorBackwardError = in.FloorSolves, &b
	}
	if in.Kind == "multigrid" || in.Kind == "mgcg" {
		b, cw := report.Float(in.BackwardError), report.Float(in.ComponentError)
		r.BackwardError, r.ComponentError = &b, &cw
		for i, h := range in.BackwardHistory {
			r.BackwardHistory = append(r.BackwardHistory, report.Float(h))
			r.ComponentHistory = append(r.ComponentHistory, report.Float(in.ComponentHistory[i]))
		}
	}
	if in.Kind != "multigrid" && in.Kind != "mgcg" {
		return r
	}
	if a := in.MG.Algebraic; a != nil {
		r.Algebraic = &report.Algebraic{Level: a.Level, From: in.AlgebraicFrom, Rows: a.Rows, Complexity: a.Complexity, Setups: a.Setups, Rescales: a.Rescales, SetupS: a.SetupTime.Seconds()}
	}
	for l, shape := range in.MG.Shapes {
		lv := report.Level{Shape: shape, Ranks: in.MG.Ranks[l], TimeS: in.MG.Level[l].Seconds()}
		r.Levels = append(r.Levels, lv)
	}
	if in.Scheme == "" {
		if n := len(in.History); n >= 2 {
			f := report.Float(math.Pow(in.History[n-1]/in.History[0], 1/float64(n-1)))
			r.ConvergenceFactor = &f
		}
	} else if s.Step() > 0 {
		r.CyclesPerStep = float64(in.Cycles) / float64(s.Step())
	}
	if c := s.Controller(); c != nil {
		a := s.Adaptive()
		r.Adaptive = &report.Adaptive{Steps: c.Accepted, Rejected: c.Rejects, DTMin: report.Float(c.DTMin), DTMax: report.Float(c.DTMax),
			RTol: report.Float(a.RTol), ATol: report.Float(a.ATol)}
		if c.Accepted == 0 {
			r.Adaptive.DTMin, r.Adaptive.DTMax = 0, 0
		}
	}
	return r
}

// faceFlows lists the flows through the faces in the grid's order (x_lo,
// x_hi, y_lo, …), "name v" each; a periodic face's is left out.
func faceFlows(cfg *config.Config, faces map[string]report.Float) string {
	var parts []string
	for a := cfg.NDim() - 1; a >= 0; a-- {
		for side := range 2 {
			name := cfg.FaceName(a, side)
			if kind, _ := cfg.FaceKind(a, side); kind == "periodic" {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %.6g", name, float64(faces[name])))
		}
	}
	return strings.Join(parts, ", ")
}
